"""docs/assets/js/palette.mjs: switching between light and dark fades nothing, and the page loads without
the theme's switching rule (hooks/theme_css.py)."""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import visit

pytestmark = pytest.mark.browser

#: Clicks the toggle's other option and reports, in the same task (before any frame), the CSS colour
#: transitions the switch started, then again two frames later, and whether <html> is still marked then.
SWITCH = """async () => {
  const now = document.body.dataset.mdColorScheme;
  const other = document.querySelector(`input[name="__palette"]:not([data-md-color-scheme="${now}"])`);
  const scheme = other.dataset.mdColorScheme;
  other.click();
  // colour transitions only: the theme's progress bar may still be sliding (transform) from the page load
  const colour = /color|background|border|fill|stroke|shadow|outline|^all$/;
  const running = () => document.getAnimations()
    .filter((a) => a instanceof CSSTransition && colour.test(a.transitionProperty))
    .map((a) => `${a.effect.target.tagName.toLowerCase()}.${a.effect.target.className} ${a.transitionProperty}`);
  getComputedStyle(document.querySelector(".md-header")).backgroundColor;  // the style as the next frame has it
  const started = running();
  for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
  return [now, scheme, document.body.dataset.mdColorScheme, started, running(),
          document.documentElement.hasAttribute("data-atlas-switching")];
}"""


def test_switching_palettes_starts_no_colour_transition(page):
    """On a page with buttons, links and the header (the theme gives each a colour transition), both ways: the
    body takes the chosen scheme, no CSS colour transition runs, and the mark is gone a few frames later."""
    visit(page, "/tools/atlas/")
    page.locator(".md-header").hover()  # away from anything with a hover transition
    for _ in range(2):
        before, chosen, shown, started, later, marked = page.evaluate(SWITCH)
        assert shown == chosen != before
        assert started == [] and later == [], started + later
        assert not marked


def test_a_page_load_does_not_mark_the_page(page):
    """The mark is set only by the reader's switch; the theme's own attribute no longer names a rule."""
    visit(page, "/")
    assert not page.evaluate("document.documentElement.hasAttribute('data-atlas-switching')")
    rules = page.evaluate("""() => [...document.styleSheets].flatMap((s) => [...s.cssRules])
        .map((r) => r.cssText).filter((t) => t.includes('data-md-color-switching'))""")
    assert rules == []


def test_the_root_takes_the_palettes_colour_scheme_without_the_themes_meta_element(page):
    """hooks/theme_js.py keeps the theme's colour-scheme meta element out of the head; atlas.css gives the root the
    body's scheme instead, so the page's scrollbars and canvas still follow the palette, both ways."""
    visit(page, "/strategies/sharding/")
    page.locator(".md-header").hover()
    assert page.locator('meta[name="color-scheme"]').count() == 0
    scheme = {"default": "light", "slate": "dark"}
    for _ in range(2):
        body, root = page.evaluate("""() => [document.body.dataset.mdColorScheme,
            getComputedStyle(document.documentElement).colorScheme]""")
        assert root == scheme[body], (body, root)
        page.evaluate("""() => document.querySelector(
            `input[name="__palette"]:not([data-md-color-scheme="${document.body.dataset.mdColorScheme}"])`).click()""")
        page.wait_for_function("(before) => document.body.dataset.mdColorScheme !== before", arg=body)
    assert page.locator('meta[name="color-scheme"]').count() == 0
