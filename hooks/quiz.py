"""Questions with options become quizzes: choose, check, then read why.

Authors write a question as they always have, a Material ``??? question`` fold holding a list of
options and a paragraph that starts with the answer::

    ??? question "Which strategy splits work inside an individual layer?"
        - Pipeline parallelism only
        - Data replication only
        - Tensor parallelism

        **Answer: Tensor parallelism.** It divides a layer's tensor computations ...

The build (``on_page_content``, before the math is rendered) turns each such fold into

- a ``<fieldset>`` whose ``<legend>`` is the question, with one radio button per option, lettered
  A, B, C ... — outside the fold, so the reader sees the options and picks one before seeing any
  answer;
- a *Check* button, rendered ``hidden`` (``quiz.mjs`` shows it), and a polite status line
  (``role="status"``) where the verdict is announced;
- the fold itself, now holding only the answer and its reasoning: without JavaScript that is how
  the answer is read; with it, ``quiz.mjs`` keeps the fold hidden until the reader checks.

DOM contract (``quiz.mjs`` and the tests rely on it): the root has ``data-quiz``, an ``id`` made
from the question's text (stable when questions move) and ``data-answer``, the index of the right
option; radios have ``value`` = their index; ``[data-quiz-check]``, ``[data-quiz-verdict]`` and
``[data-quiz-answer]`` mark the button, the status line and the fold.

A fold whose answer names none of its options, or several, fails the build with the page and the
question. A question without a list of options stays a plain fold.
"""

from __future__ import annotations

import hashlib
import html
import re

from . import templates

#: A ``??? question`` fold as pymdownx.details renders it: summary, a list, then the rest.
QUESTION_RE = re.compile(
    r'<details class="question">\s*<summary>(?P<question>.*?)</summary>\s*'
    r"(?P<body>.*?)</details>",
    re.S,
)
_OPTIONS_RE = re.compile(r"\A<ul>\s*(?P<items>(?:<li>.*?</li>\s*)+)</ul>\s*(?P<rest>.*)\Z", re.S)
_ITEM_RE = re.compile(r"<li>(.*?)</li>", re.S)
_ANSWER_RE = re.compile(r"\A<p><strong>Answer:\s*(?P<answer>.*?)</strong>", re.S)


#: Options are lettered, so a verdict can name one whose text is a formula.
LETTERS = "ABCDEFGH"


class QuizError(Exception):
    """A question whose options and answer do not fit together; the hook fails the build."""


def plain(fragment: str) -> str:
    """The text of an HTML fragment, for comparing an answer with an option.

    >>> plain("<em>The</em> tokens' hidden vectors.")
    "the tokens' hidden vectors"
    """
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    return " ".join(text.split()).rstrip(".").strip().lower()


def quiz_id(question: str, taken: set[str]) -> str:
    """``q-`` and 8 hex digits of the question's text; a repeat on the same page gets a suffix."""
    base = "q-" + hashlib.sha1(plain(question).encode("utf-8")).hexdigest()[:8]
    uid, n = base, 2
    while uid in taken:
        uid, n = f"{base}-{n}", n + 1
    taken.add(uid)
    return uid


def render_quiz(uid: str, question: str, options: list[str], answer: int, rest: str) -> str:
    """The quiz markup for one question (``quiz.html``; the module docstring gives the contract)."""
    if len(options) > len(LETTERS):
        raise QuizError(f"question {plain(question)!r} has {len(options)} options; at most {len(LETTERS)}")
    return templates.render("quiz.html", uid=uid, question=question, options=options, answer=answer, rest=rest,
                            letters=LETTERS)


def render_page(page_html: str, page: str) -> str:
    """Turn every question fold with options into a quiz; leave the others as they are."""
    taken: set[str] = set()

    def one(m: re.Match[str]) -> str:
        listed = _OPTIONS_RE.match(m["body"].strip())
        if listed is None:
            return m.group(0)
        question = m["question"].strip()
        options = [item.strip() for item in _ITEM_RE.findall(listed["items"])]
        rest = listed["rest"].strip()
        said = _ANSWER_RE.match(rest)
        if said is None:
            raise QuizError(f"{page}: question {plain(question)!r} lists options but its fold does not start "
                            f"with **Answer: <option>.**")
        named = [i for i, option in enumerate(options) if plain(option) == plain(said["answer"])]
        if len(named) != 1:
            raise QuizError(f"{page}: question {plain(question)!r}: the answer {plain(said['answer'])!r} must be "
                            f"exactly one of its options {[plain(o) for o in options]}")
        return render_quiz(quiz_id(question, taken), question, options, named[0], rest)

    return QUESTION_RE.sub(one, page_html)
