"""Keyboard only: Tab walks each calculator, each quiz and each folded answer in DOM order, visibly, and out again.

Calculators, quizzes (``[data-quiz]``) and questions (``<details>`` in a page's article) are
discovered from the built site. A walk starts on the last Tab stop before the widget (focused by
script), then presses Tab until focus leaves the widget: the stops inside must be the widget's
tabbable elements in DOM order, each with a visible focus indicator (an outline or a box-shadow),
and focus must leave (no trap). Answers open with Enter and with Space. A quiz's radio buttons are
one Tab stop; the arrow keys choose, Enter on the Check button reveals the fold with the reasoning.
"""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import calculators, open_widget, page_paths, visit

pytestmark = pytest.mark.browser

#: In-page helpers, installed once per document as ``window.__kbd``.
HELPERS = """() => {
  if (window.__kbd) return;
  const CANDIDATES = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]";
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const folded = (el) => {  // inside a closed <details>, except its own summary
    for (let d = el.parentElement?.closest("details"); d; d = d.parentElement?.closest("details")) {
      if (!d.open && el !== d.querySelector(":scope > summary")) return true;
    }
    return false;
  };
  const tabbable = (el) => el.tabIndex >= 0 && !el.disabled && !el.closest("[inert]") && shown(el) && !folded(el);
  const all = () => [...document.querySelectorAll(CANDIDATES)].filter(tabbable);
  window.__kbd = {
    /** Number the widget's Tab stops (data-kbd) and focus the last stop before it. */
    prepare(root) {
      document.querySelectorAll("[data-kbd]").forEach((el) => { delete el.dataset.kbd; });
      const stops = all();
      const inside = stops.filter((el) => root.contains(el));
      inside.forEach((el, i) => { el.dataset.kbd = String(i); });
      const before = stops.filter((el) => !root.contains(el) &&
        (root.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING));
      if (before.length) before.at(-1).focus(); else document.activeElement?.blur();
      return inside.length;
    },
    /** Where focus is now: its data-kbd number inside ``root`` (or null), and whether it shows. */
    where(root) {
      const el = document.activeElement;
      const style = getComputedStyle(el);
      const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
      const visible = outline || style.boxShadow !== "none";
      const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.name ? `[name=${el.name}]` : "");
      return { index: root.contains(el) ? Number(el.dataset.kbd ?? -1) : null, visible, name };
    },
  };
}"""


def walk(page, root) -> tuple[list[int], list[str], str]:
    """Tab from just before ``root`` until focus leaves it: (stops, stops without visible focus, exit)."""
    page.evaluate(HELPERS)
    count = root.evaluate("r => window.__kbd.prepare(r)")
    stops, invisible = [], []
    for _ in range(count + 5):
        page.keyboard.press("Tab")
        where = root.evaluate("r => window.__kbd.where(r)")
        if where["index"] is None:
            return stops, invisible, where["name"]
        stops.append(where["index"])
        if not where["visible"]:
            invisible.append(where["name"])
    return stops, invisible, "(still inside: a trap)"


def walk_problems(page, root, name: str, expected_js: str) -> list[str]:
    """Walk ``root``; compare the stops with the data-kbd numbers ``expected_js`` picks; say what is wrong."""
    stops, invisible, exit_ = walk(page, root)
    expected = root.evaluate(expected_js)
    problems = [f"{name}: Tab stops {stops}, expected {expected}"] if stops != expected else []
    if invisible:
        problems.append(f"{name}: focus not visible on {invisible}")
    if exit_.startswith("(still"):
        problems.append(f"{name}: {exit_}")
    return problems


#: Whether an element sits in a tool that a mode switch (hooks/modes.py) does not show by default.
NOT_SHOWN = """(el) => {
  const tool = el.closest("[data-calc]");
  const radio = tool && document.querySelector(`[data-modes] input[data-panel="${CSS.escape(tool.id)}"]`);
  return radio !== null && !radio.defaultChecked;
}"""

#: Every numbered stop, in order.
ALL_STOPS = "r => [...r.querySelectorAll('[data-kbd]')].map((el) => Number(el.dataset.kbd))"


@pytest.fixture(scope="module")
def widgets(site):
    found = calculators(site)
    assert found, "no [data-calc] on any built page: the discovery is broken"
    return found


def test_calculators_walk_in_order_with_visible_focus(page, widgets):
    """Every control of every calculator, in DOM order, focus visible, and Tab leaves the widget."""
    problems = []
    for widget in widgets:
        calc = open_widget(page, widget)
        calc.wait_state("ready")
        # the tool pages fold the model and hardware away (test_browser_launch.py walks the fold): open
        # it, so every field is walked here
        calc.root.evaluate("r => r.querySelectorAll('details.calc__fold').forEach((d) => { d.open = true; })")
        disabled = calc.root.evaluate("r => [...r.querySelectorAll('.calc__form [name]')].filter(f => f.disabled).map(f => f.name)")
        if disabled:
            problems.append(f"{widget}: fields still disabled when live: {disabled}")
        count = calc.root.evaluate("r => r.querySelectorAll('.calc__form [name]').length")
        stops, invisible, exit_ = walk(page, calc.root)
        expected = list(range(calc.root.evaluate("r => r.querySelectorAll('[data-kbd]').length")))
        if stops != expected or len(stops) < count:
            problems.append(f"{widget}: Tab stops {stops}, expected {expected} (>= {count} fields)")
        if invisible:
            problems.append(f"{widget}: focus not visible on {invisible}")
        if exit_.startswith("(still"):
            problems.append(f"{widget}: {exit_}")
    assert problems == [], "\n".join(problems)


def test_every_question_opens_from_the_keyboard(page, site):
    """Each folded answer: Tab reaches its summary visibly, Enter and Space open it, Tab walks out."""
    problems = []
    questions = 0
    for path in page_paths(site):
        visit(page, path)
        folds = "article details:not([data-quiz-answer])"  # a quiz's fold is walked with its quiz
        total = page.locator(folds).count()
        for i in range(total):
            details = page.locator(folds).nth(i)
            if details.evaluate("d => d.parentElement.closest('details') !== null"):
                continue  # a fold inside a fold is walked with its parent
            if details.evaluate(NOT_SHOWN):
                continue  # a tool of a mode not shown at first: walked in its mode (test_calculators_walk_in_order...)
            questions += 1
            details.evaluate("d => { d.open = false; }")
            page.evaluate(HELPERS)
            details.evaluate("d => window.__kbd.prepare(d.querySelector(':scope > summary'))")
            page.keyboard.press("Tab")
            summary = details.evaluate("d => { const s = d.querySelector(':scope > summary'); return document.activeElement === s; }")
            where = details.evaluate("d => window.__kbd.where(d)")
            if not summary:
                problems.append(f"{path} question {i}: Tab went to {where['name']}, not the summary")
                continue
            if not where["visible"]:
                problems.append(f"{path} question {i}: focus on the summary is not visible")
            opened = []
            for key in ("Enter", "Enter", "Space"):
                page.keyboard.press(key)
                opened.append(details.evaluate("d => d.open"))
            if opened != [True, False, True]:
                problems.append(f"{path} question {i}: open after Enter, Enter, Space: {opened}")
                continue
            # now open: a walk from before the summary passes the summary, the answer's links, then out
            problems += walk_problems(page, details, f"{path} question {i}", ALL_STOPS)
    assert questions > 0, "no folded answer on any built page: the discovery is broken"
    assert problems == [], "\n".join(problems)


def focus_problems(root, selector: str, what: str, name: str) -> list[str]:
    """Whether focus is on ``root``'s first ``selector`` element, visibly; an empty list if so."""
    at = root.evaluate("(r, sel) => ({on: document.activeElement === r.querySelector(sel), "
                       "show: window.__kbd.where(r).visible})", selector)
    if not at["on"]:
        return [f"{name}: Tab did not reach {what}"]
    return [] if at["show"] else [f"{name}: focus on {what} is not visible"]


def test_every_quiz_walks_by_keyboard(page, site):
    """Each quiz: one Tab stop for its options, arrows choose, Tab to Check, Enter reveals the fold, Tab walks out."""
    problems = []
    quizzes = 0
    for path in page_paths(site):
        visit(page, path)
        for i in range(page.locator("[data-quiz]").count()):
            quizzes += 1
            root = page.locator("[data-quiz]").nth(i)
            root.locator("[data-quiz-check]").wait_for(state="visible")
            name = f"{path} quiz {i}"
            page.evaluate(HELPERS)
            root.evaluate("r => window.__kbd.prepare(r)")
            page.keyboard.press("Tab")
            found = focus_problems(root, "input[type=radio]", "the first option", name)
            page.keyboard.press("ArrowDown")
            chosen = root.evaluate("r => r.querySelector('input[type=radio]:checked')?.value ?? null")
            if chosen != "1":
                found.append(f"{name}: ArrowDown chose {chosen!r}, not the second option")
            page.keyboard.press("Tab")
            found += focus_problems(root, "[data-quiz-check]", "the Check button", name)
            if any("did not reach" in f for f in found):
                problems += found
                continue
            page.keyboard.press("Enter")
            verdict = root.evaluate("r => r.querySelector('[data-quiz-verdict]').textContent")
            if not verdict.startswith(("Right: ", "Not right: ")):
                found.append(f"{name}: Enter on Check said {verdict!r}")
            # checked: the group (one stop, the chosen radio), the button, the fold's summary, its links, out
            problems += found + walk_problems(page, root, name, """(r) => [...r.querySelectorAll('[data-kbd]')]
                .filter((el) => el.type !== 'radio' || el.checked).map((el) => Number(el.dataset.kbd))""")
    assert quizzes > 0, "no quiz on any built page: the discovery is broken"
    assert problems == [], "\n".join(problems)
