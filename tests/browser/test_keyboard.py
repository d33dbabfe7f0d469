"""Keyboard only: Tab walks each calculator and each folded answer in DOM order, visibly, and out again.

Calculators and questions (``<details>`` in a page's article) are discovered from the built site.
A walk starts on the last Tab stop before the widget (focused by script), then presses Tab
until focus leaves the widget: the stops inside must be the widget's tabbable elements in DOM
order, each with a visible focus indicator (an outline or a box-shadow), and focus must leave
(no trap). Answers open with Enter and with Space.
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
        total = page.locator("article details").count()
        for i in range(total):
            details = page.locator("article details").nth(i)
            if details.evaluate("d => d.parentElement.closest('details') !== null"):
                continue  # a fold inside a fold is walked with its parent
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
            stops, invisible, exit_ = walk(page, details)
            expected = list(range(details.evaluate("d => d.querySelectorAll('[data-kbd]').length")))
            if stops != expected:
                problems.append(f"{path} question {i}: Tab stops {stops}, expected {expected}")
            if invisible:
                problems.append(f"{path} question {i}: focus not visible on {invisible}")
            if exit_.startswith("(still"):
                problems.append(f"{path} question {i}: {exit_}")
    assert questions > 0, "no folded answer on any built page: the discovery is broken"
    assert problems == [], "\n".join(problems)
