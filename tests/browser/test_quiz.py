"""The quizzes in Chromium (hooks/quiz.py, docs/assets/js/quiz.mjs): choose, check, read why.

Covered: a wrong and then a right choice, by mouse and by keyboard, with what the status line
announces; checking with nothing chosen; the choice kept for the tab across a reload and instant
navigation, and not in another tab; the answer still readable with JavaScript off; axe (WCAG 2.2
AA, both palettes) on the quizzes unanswered, answered wrongly and answered rightly.
"""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import Watch, open_context
from tests.browser.test_a11y import axe, in_both_palettes
from tests.browser.test_keyboard import HELPERS

pytestmark = pytest.mark.browser

#: The first question of the quiz page: its options and which one is right (C).
FIRST = {"path": "/quiz/", "wrong": "0", "right": "2",
         "wrong_text": "A, “Pipeline parallelism only”", "right_text": "C, “Tensor parallelism”"}


@pytest.fixture
def page(context):
    """A tab of its own: a quiz keeps its choices per tab (sessionStorage), and the suite's shared
    page carries the last test's choices into the next."""
    return context.new_page()


class Quiz:
    """One quiz on a page, through its DOM contract (hooks/quiz.py)."""

    def __init__(self, page, index: int = 0):
        self.page = page
        self.root = page.locator("[data-quiz]").nth(index)

    def wait_mounted(self) -> "Quiz":
        self.root.locator("[data-quiz-check]").wait_for(state="visible")
        return self

    def radio(self, value: str):
        return self.root.locator(f'input[type="radio"][value="{value}"]')

    def verdict(self) -> str:
        return self.root.get_by_role("status").text_content()

    def fold(self):
        return self.root.locator("[data-quiz-answer]")

    def marks(self) -> dict[str, str]:
        return self.root.evaluate("""r => Object.fromEntries([...r.querySelectorAll('.quiz__option')].map(o =>
            [o.querySelector('input').value, (o.className.match(/is-(right|wrong)/)?.[1] ?? '') + ':' +
             (o.querySelector('.quiz__mark')?.textContent ?? '')]))""")

    def checked(self) -> str | None:
        return self.root.evaluate("r => r.querySelector('input[type=radio]:checked')?.value ?? null")


def test_wrong_then_right_by_mouse(page):
    """A wrong pick is announced as such with the right answer; changing it clears the verdict; the right one is confirmed."""
    page.goto(FIRST["path"])
    quiz = Quiz(page).wait_mounted()
    assert quiz.fold().is_hidden(), "the answer is hidden until the reader checks"
    assert quiz.verdict() == ""
    quiz.root.locator(f'label[for$="-{FIRST["wrong"]}"]').click()
    assert quiz.fold().is_hidden() and quiz.verdict() == "", "choosing alone reveals nothing"
    quiz.root.get_by_role("button", name="Check my answer").click()
    assert quiz.verdict() == (f"Not right: you chose {FIRST['wrong_text']}; the answer is {FIRST['right_text']}. "
                              "The reasoning is below.")
    assert quiz.marks() == {"0": "wrong:your choice", "1": ":", "2": "right:right answer"}
    assert quiz.fold().is_visible() and quiz.fold().evaluate("d => d.open")
    assert "Answer: Tensor parallelism." in quiz.fold().text_content()

    quiz.root.locator(f'label[for$="-{FIRST["right"]}"]').click()
    assert quiz.verdict() == "" and quiz.marks() == {"0": ":", "1": ":", "2": ":"}, "a new choice is unchecked"
    quiz.root.get_by_role("button", name="Check my answer").click()
    assert quiz.verdict() == f"Right: {FIRST['right_text']}. The reasoning is below."
    assert quiz.marks()["2"] == "right:right answer"


def _focus_before(page, root) -> None:
    page.evaluate(HELPERS)
    root.evaluate("r => window.__kbd.prepare(r)")


def test_wrong_then_right_by_keyboard(page):
    """Tab into the group, arrows to choose, Tab to the button, Enter or Space to check, Tab to the reasoning."""
    page.goto(FIRST["path"])
    quiz = Quiz(page).wait_mounted()
    _focus_before(page, quiz.root)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.type") == "radio"
    assert page.evaluate("document.activeElement.value") == "0" and quiz.checked() is None
    page.keyboard.press("ArrowDown")  # moves to B and chooses it: a wrong answer
    assert quiz.checked() == "1"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.quizCheck") == ""
    page.keyboard.press("Enter")
    assert quiz.verdict().startswith("Not right: you chose B, “Data replication only”; the answer is C")
    page.keyboard.press("Shift+Tab")  # back to the group, on the chosen radio
    assert page.evaluate("document.activeElement.value") == "1"
    page.keyboard.press("ArrowDown")
    assert quiz.checked() == "2" and quiz.verdict() == ""
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert quiz.verdict() == f"Right: {FIRST['right_text']}. The reasoning is below."
    page.keyboard.press("Tab")  # the reasoning's fold, now shown, is the next stop
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    assert quiz.root.evaluate("(r) => r.querySelector('[data-quiz-answer] > summary') === document.activeElement")


def test_checking_without_a_choice_asks_for_one(page):
    """Check with nothing chosen: the status asks for a choice and nothing is revealed."""
    page.goto(FIRST["path"])
    quiz = Quiz(page).wait_mounted()
    quiz.root.get_by_role("button", name="Check my answer").click()
    assert quiz.verdict() == "Choose an option first."
    assert quiz.fold().is_hidden()


def _navigate(page, path: str) -> None:
    """Follow the nav link to ``path`` by instant navigation and wait until the new page's quizzes are
    in the DOM: the URL changes before the content is swapped, and the old quizzes are mounted too."""
    page.evaluate("document.querySelectorAll('[data-quiz]').forEach(q => q.dataset.stale = '')")
    page.locator(f'nav a[href$="{path}"]').first.click()
    page.wait_for_url(f"**/{path}")
    page.locator("[data-quiz]:not([data-stale])").first.wait_for(state="attached")
    page.wait_for_function("document.querySelectorAll('[data-quiz][data-stale]').length === 0")


def test_the_choice_is_kept_for_the_tab(page, browser, base_url, watch):
    """A checked choice survives a reload and instant navigation away and back; another tab starts afresh."""
    page.goto(FIRST["path"])
    quiz = Quiz(page).wait_mounted()
    quiz.radio(FIRST["wrong"]).check()
    quiz.root.get_by_role("button", name="Check my answer").click()
    second = Quiz(page, 1)
    second.radio("1").check()  # chosen, not checked
    page.reload()
    quiz, second = Quiz(page).wait_mounted(), Quiz(page, 1)
    assert quiz.checked() == FIRST["wrong"] and quiz.verdict().startswith("Not right: you chose A")
    assert quiz.fold().is_visible()
    assert second.checked() == "1" and second.verdict() == "" and second.fold().is_hidden()

    page.evaluate("window.__sameDocument = true")
    _navigate(page, "strategies/tensor/")
    assert Quiz(page).wait_mounted().checked() is None, "choices are kept per page"
    _navigate(page, "quiz/")
    assert page.evaluate("window.__sameDocument") is True  # instant navigation, not a reload
    assert Quiz(page).wait_mounted().checked() == FIRST["wrong"]
    assert Quiz(page, 1).checked() == "1"

    other = open_context(browser, base_url, watch)  # a new tab session: its own sessionStorage
    try:
        fresh = other.new_page()
        fresh.goto("/quiz/")
        assert Quiz(fresh).wait_mounted().checked() is None, "another tab has its own choices"
    finally:
        other.close()


def test_without_javascript_the_fold_holds_the_answer(browser, base_url):
    """JavaScript off: the options show, the Check button does not, and the fold opens on the answer."""
    watch = Watch(base_url)
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(FIRST["path"])
        quiz = Quiz(page)
        assert quiz.root.locator('input[type="radio"]').count() == 3
        assert quiz.root.locator("[data-quiz-check]").is_hidden()
        fold = quiz.fold()
        assert fold.is_visible() and not fold.evaluate("d => d.open")
        fold.locator("summary").click()
        assert fold.evaluate("d => d.open") and "Answer: Tensor parallelism." in fold.inner_text()
    finally:
        context.close()
    assert watch.offsite == []


def _answer_all(page, pick: str) -> int:
    """Choose each quiz's wrong (first non-answer) or right option and check it; return how many."""
    return page.evaluate("""(pick) => {
        const quizzes = [...document.querySelectorAll("[data-quiz]")];
        for (const q of quizzes) {
            const answer = q.dataset.answer;
            const radios = [...q.querySelectorAll("input[type=radio]")];
            const radio = pick === "right" ? radios.find((r) => r.value === answer)
                                           : radios.find((r) => r.value !== answer);
            radio.click();
            q.querySelector("[data-quiz-check]").click();
        }
        return quizzes.length;
    }""", pick)


@pytest.mark.parametrize("path", ["/quiz/", "/strategies/pipeline/"])
def test_quizzes_have_no_axe_violations_unanswered_wrong_and_right(page, path):
    """axe finds nothing on the quizzes before an answer, after a wrong one and after a right one."""
    page.goto(path)
    Quiz(page).wait_mounted()
    problems = [f"unanswered: {p}" for p in in_both_palettes(page, lambda: axe(page, ["[data-quiz]"]))]
    for pick in ("wrong", "right"):
        count = _answer_all(page, pick)
        assert count >= 3
        verdicts = page.evaluate("[...document.querySelectorAll('[data-quiz-verdict]')].map((v) => v.textContent)")
        prefix = "Right: " if pick == "right" else "Not right: "
        assert all(v.startswith(prefix) for v in verdicts), verdicts
        problems += [f"{pick}: {p}" for p in in_both_palettes(page, lambda: axe(page, ["[data-quiz]"]))]
    assert problems == [], "\n".join(problems)
