"""hooks/quiz.py: question folds with options become quizzes; the built pages hold them."""

from __future__ import annotations

import re

import pytest

from hooks.quiz import LETTERS, QuizError, plain, quiz_id, render_page
from tests.test_pages import NAV, STRATEGIES, _article, _html, _source

FOLD = """<details class="question">
<summary>Which strategy splits work inside an individual layer?</summary>
<ul>
<li>Pipeline parallelism only</li>
<li>Data replication <em>only</em></li>
<li>Tensor parallelism</li>
</ul>
<p><strong>Answer: tensor parallelism.</strong> It divides a layer's matrices. See <a href="t/">Tensor</a>.</p>
</details>"""

OPEN_QUESTION = """<details class="question">
<summary>Why is A split by columns?</summary>
<p>So that GeLU applies locally.</p>
</details>"""


def test_a_fold_with_options_becomes_a_quiz():
    """Legend = question, one lettered radio per option, answer index, hidden check, status, the fold."""
    out = render_page(FOLD, "p.md")
    uid = quiz_id("Which strategy splits work inside an individual layer?", set())
    assert out.startswith(f'<div class="quiz" id="{uid}" data-quiz data-answer="2">')
    assert '<legend class="quiz__legend">Which strategy splits work inside an individual layer?</legend>' in out
    radios = re.findall(r'<input type="radio" id="([^"]+)" name="([^"]+)" value="(\d)">\s*<label for="([^"]+)">'
                        r'<span class="quiz__letter">(\w)\.</span> (.*?)</label>', out)
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in radios] == [
        (f"{uid}-{i}", uid, str(i), f"{uid}-{i}", LETTERS[i]) for i in range(3)]
    assert [r[5] for r in radios] == ["Pipeline parallelism only", "Data replication <em>only</em>", "Tensor parallelism"]
    assert '<p class="quiz__actions" hidden><button type="button"' in out  # shown by quiz.mjs only
    assert '<p class="quiz__verdict" role="status" data-quiz-verdict></p>' in out
    fold = re.search(r"<details class=\"question quiz__answer\" data-quiz-answer>(.*)</details>", out, re.S).group(1)
    assert fold.startswith("<summary>Answer and reasoning</summary><p><strong>Answer: tensor parallelism.</strong>")
    assert "<ul>" not in fold  # the options moved out of the fold


def test_the_options_are_outside_the_fold_and_the_answer_inside():
    """Before the fold opens, a reader sees every option and no answer."""
    out = render_page(FOLD, "p.md")
    before_fold = out.split("<details", 1)[0]
    assert "Tensor parallelism" in before_fold and "Answer:" not in before_fold
    assert "Answer: tensor parallelism" in out.split("<details", 1)[1]


def test_a_fold_without_options_stays_a_fold():
    """Open questions (no list of options) are left exactly as they were."""
    assert render_page(OPEN_QUESTION, "p.md") == OPEN_QUESTION


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("<strong>Answer: model parallelism.</strong>", "must be exactly one of its options"),
        ("<strong>Answer:</strong> tensor parallelism.", "must be exactly one of its options"),
        ("Tensor parallelism, because ...", "does not start with **Answer: <option>.**"),
    ],
)
def test_an_answer_that_names_no_option_fails_the_build(answer, message):
    """An answer that is not one of the options (or is missing) is an error naming page and question."""
    bad = FOLD.replace("<strong>Answer: tensor parallelism.</strong>", answer)
    with pytest.raises(QuizError) as e:
        render_page(bad, "quiz.md")
    assert str(e.value).startswith("quiz.md: question 'which strategy splits work inside an individual layer?'")
    assert message in str(e.value)


def test_an_answer_matching_two_options_fails():
    """Two options with the same text make the answer ambiguous."""
    bad = FOLD.replace("<li>Pipeline parallelism only</li>", "<li>Tensor parallelism.</li>")
    with pytest.raises(QuizError, match="exactly one"):
        render_page(bad, "p.md")


def test_too_many_options_fail():
    """More options than letters is refused rather than mislabelled."""
    items = "".join(f"<li>Option {i}</li>\n" for i in range(len(LETTERS) + 1))
    bad = re.sub(r"<ul>.*</ul>", f"<ul>\n{items}</ul>", FOLD, flags=re.S).replace(
        "Answer: tensor parallelism.", "Answer: Option 1.")
    with pytest.raises(QuizError, match="at most"):
        render_page(bad, "p.md")


def test_ids_are_stable_and_unique_on_a_page():
    """The id follows the question's text (so stored choices survive reordering); a repeat gets a suffix."""
    taken: set[str] = set()
    first = quiz_id("Why?", taken)
    assert first == quiz_id("<em>Why</em>?", set()) and re.fullmatch(r"q-[0-9a-f]{8}", first)
    assert quiz_id("Why?", taken) == first + "-2"
    out = render_page(FOLD + "\n" + FOLD, "p.md")
    ids = re.findall(r'<div class="quiz" id="([^"]+)"', out)
    assert len(ids) == 2 and len(set(ids)) == 2


def test_plain_compares_text_not_markup():
    """Case, tags, entities, white space and a final full stop do not matter."""
    assert plain("<em>The</em>  tokens&#x27; hidden vectors.") == "the tokens' hidden vectors"


# ---------------------------------------------------------------------------- the pages


@pytest.mark.parametrize("page", ["quiz.md"] + [f"strategies/{s}.md" for s in STRATEGIES])
def test_every_question_on_the_quiz_and_strategy_pages_has_options_and_an_answer(page):
    """Each ??? question there lists options and starts its answer with **Answer: <option>.**"""
    blocks = re.split(r"^\?\?\? question ", _source(page), flags=re.M)[1:]
    assert blocks, page
    for block in blocks:
        body = block.split("\n\n**Sources", 1)[0]
        assert re.search(r"^    - ", body, flags=re.M), (page, block[:80])
        assert re.search(r"^    \*\*Answer: ", body, flags=re.M), (page, block[:80])


@pytest.fixture(scope="module")
def site(built_site):
    return built_site


@pytest.mark.build
@pytest.mark.parametrize("page", ["quiz.md"] + [f"strategies/{s}.md" for s in STRATEGIES])
def test_built_quizzes_keep_the_answer_in_a_closed_fold(site, page):
    """Each quiz: radios outside, the answer inside a closed <details> (no-JS readers open it)."""
    body = _article(_html(site, page))
    quizzes = re.findall(r'<div class="quiz" id="(q-[0-9a-f]{8}(?:-\d+)?)" data-quiz data-answer="(\d)">(.*?)'
                         r"</details></div>", body, flags=re.S)
    assert len(quizzes) == len(re.findall(r"^\?\?\? question ", _source(page), flags=re.M))
    for uid, answer, inner in quizzes:
        options, fold = inner.split("<details", 1)
        assert f'value="{answer}"' in options
        assert "Answer:" not in options and "Answer:" in fold
        assert not fold.startswith(" open") and ' class="question quiz__answer" data-quiz-answer>' in fold


@pytest.mark.build
def test_pages_without_options_keep_plain_folds(site):
    """Worked problems on the other pages stay native folds, closed, with their answer inside."""
    plain_pages = [p for p in NAV if "??? question" in _source(p) and p != "quiz.md" and not p.startswith("strategies/")]
    assert plain_pages
    for page in plain_pages:
        body = _article(_html(site, page))
        assert re.search(r'<details class="question">\s*<summary>', body), page
        assert "data-quiz" not in body, page
