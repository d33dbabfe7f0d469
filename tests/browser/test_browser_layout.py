"""The atlas's layout in Chromium: its labels as rendered, and where the drawing sits on the first screen.

The font size a reader sees is the text's computed font size (in the drawing's user units) times the
drawing's scale on screen: ``getScreenCTM().a`` of the text, checked against the SVG's rendered width
over its viewBox width. calc.diagram draws the atlas twice (wide, and narrow with its stages stacked);
the build's page holds both and shows the one that fits (tools.css); a live answer draws only that one
(calc-view.mjs: fit). These tests measure the one shown.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from tests.browser.atlas_browser import Calculator, open_context, scrolled_to

from calc.api import evaluate
from calc.diagram import atlas_layout
from calc.presets import ATLAS_DEFAULT, presets_for

pytestmark = pytest.mark.browser

ATLAS = "/tools/atlas/"
PRESETS = presets_for("plan")

#: For each drawing the view shows: its layout, its scale two ways, its title, the rendered size of
#: every label, and the labels that run outside the drawing's box.
SHOWN = """(view) => [...view.querySelectorAll("svg.draw")]
  .filter((svg) => svg.getBoundingClientRect().width > 0 && svg.querySelector(".atlas-fit"))
  .map((svg) => {
    const texts = [...svg.querySelectorAll("text")];
    const width = svg.viewBox.baseVal.width;
    return {
      fit: svg.querySelector(".atlas-fit")?.getAttribute("class") ?? null,
      scale: svg.getBoundingClientRect().width / width,
      ctm: texts.map((t) => t.getScreenCTM().a),
      title: svg.querySelector("title").textContent,
      px: texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a),
      outside: texts.filter((t) => { const b = t.getBBox(); return b.x < 0 || b.x + b.width > width; })
        .map((t) => t.textContent),
    };
  })"""


def shown(calc: Calculator) -> dict:
    """The one atlas drawing the view shows, measured; every label inside its box."""
    drawings = calc.root.locator("[data-view]").evaluate(SHOWN)
    assert len(drawings) == 1, [d["fit"] for d in drawings]
    d = drawings[0]
    assert all(abs(a - d["scale"]) < 1e-3 for a in d["ctm"]), (d["scale"], set(d["ctm"]))
    assert d["outside"] == [], d["outside"]
    return d


def expected_title(name: str) -> str:
    return atlas_layout(evaluate("plan", dict(PRESETS[name].inputs)))["title"]


#: Every atlas drawing in the view (wide and narrow) carries the title: the preset's answer has been drawn.
DRAWN = """([view, title]) => [...view.querySelectorAll("svg.draw")].filter((svg) => svg.querySelector(".atlas-fit"))
  .every((svg) => svg.querySelector(":scope > title").textContent === title)"""


def every_preset_readable(browser, base_url, watch, path: str, command: str, uid: str | None, width: int,
                          fit: str) -> None:
    """Load each of ``command``'s presets in the tool at ``path``: the layout that fits ``width`` is the one
    shown, with the preset's title, every label at least 12 px and inside the drawing, and the page never
    scrolls sideways. Its own context: the viewport is set before the first paint."""
    context = open_context(browser, base_url, watch, viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto(path)
        calc = Calculator(page, command, uid)
        assert calc.wait_state("ready") == "ready", calc.status()
        for name, preset in presets_for(command).items():
            title = atlas_layout(evaluate(command, dict(preset.inputs)))["title"]
            calc.root.locator(f'[data-preset="{name}"]').click()
            page.wait_for_function(DRAWN, arg=[calc.root.locator("[data-view]").element_handle(), title])
            assert calc.wait_state("ready") == "ready", (name, calc.status())
            d = shown(calc)
            assert d["fit"] == f"atlas-fit atlas-fit--{fit}" and d["title"] == title, name
            assert 12 <= min(d["px"]) and max(d["px"]) < 60, (name, min(d["px"]), max(d["px"]))
            assert page.evaluate("document.documentElement.scrollWidth") <= width, name
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()


@pytest.mark.parametrize("width,fit", [(375, "narrow"), (1280, "wide")])
def test_atlas_labels_are_12px_or_more_for_every_preset(browser, base_url, watch, width, fit):
    """At 375 px the narrow atlas, at 1280 px the wide one, is shown for every preset, every label at
    least 12 px as rendered and inside the drawing, and the page never scrolls sideways."""
    every_preset_readable(browser, base_url, watch, ATLAS, "plan", None, width, fit)


def test_atlas_labels_are_12px_at_375_without_javascript(browser, base_url, watch):
    """The build's HTML holds both layouts and the style sheet picks, so a phone reads 12 px labels
    before Python starts, and with JavaScript off. Its own context: JavaScript disabled."""
    context = open_context(browser, base_url, watch, viewport={"width": 375, "height": 800}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(ATLAS)
        calc = Calculator(page, "plan")
        assert calc.state == "static"
        d = shown(calc)
        assert d["fit"] == "atlas-fit atlas-fit--narrow" and d["title"] == expected_title(ATLAS_DEFAULT)
        assert min(d["px"]) >= 12, min(d["px"])
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    finally:
        context.close()


@contextmanager
def live_atlas(browser, base_url, watch, width: int):
    """(page, calculator) of the atlas in a context of its own, ``width`` × 800 px, once Python is ready."""
    context = open_context(browser, base_url, watch, viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto(ATLAS)
        calc = Calculator(page, "plan")
        assert calc.wait_state("ready") == "ready", calc.status()
        yield page, calc
    finally:
        context.close()


def test_atlas_drawing_starts_on_the_first_screen_at_1280x800(browser, base_url, watch):
    """At 1280 × 800 the drawing's top is within the first 800 px, beside the split controls, which are
    on the first screen too; the model and hardware stay folded. Its own context: the viewport."""
    with live_atlas(browser, base_url, watch, 1280) as (page, calc):
        assert page.evaluate("scrollY") == 0
        svg = calc.root.locator("[data-view] svg.draw:visible")
        assert svg.count() == 1
        drawing = svg.bounding_box()
        assert drawing["y"] < 800, drawing
        split = calc.root.locator('.calc__form [name="data_parallel"]')
        assert split.is_visible() and split.bounding_box()["y"] < 800
        assert split.bounding_box()["x"] + split.bounding_box()["width"] < drawing["x"]  # beside it
        assert not calc.root.locator("details.calc__fold").evaluate("d => d.open")
        assert calc.root.locator('.calc__form [name="layers"]').is_hidden()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280


@pytest.mark.parametrize("path,uid", [(ATLAS + "?mode=inference", "atlas-serve"), ("/tools/inference/", "inference")])
@pytest.mark.parametrize("width,fit", [(375, "narrow"), (1280, "wide")])
def test_serving_atlas_labels_are_12px_or_more_for_every_preset(browser, base_url, watch, path, uid, width, fit):
    """The serving atlas (the atlas page in serving mode, the inference calculator) is drawn wide and
    narrow like the training one: at 375 px the narrow one, at 1280 px the wide one, labels >= 12 px."""
    every_preset_readable(browser, base_url, watch, path, "infer", uid, width, fit)


def test_atlas_on_a_phone_draws_after_the_split_and_before_the_results(browser, base_url, watch):
    """At 375 px the drawing follows the split (two fields to a row) and the pin panel; the results come after
    it, and hold nothing to focus, so the order of focus is still the order on screen."""
    context = open_context(browser, base_url, watch, viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.goto(ATLAS)
        calc = Calculator(page, "plan")
        assert calc.wait_state("ready") == "ready", calc.status()
        top = calc.root.evaluate("""(root) => Object.fromEntries(["calc__form", "pin", "tool__view", "calc__results"]
          .map((c) => [c, root.querySelector(":scope > ." + c).getBoundingClientRect().top + scrollY]))""")
        assert top["calc__form"] < top["pin"] < top["tool__view"] < top["calc__results"], top
        focusable = calc.root.locator(".calc__results").locator("a, button, input, select, textarea, [tabindex]")
        assert focusable.count() == 0
        xs = calc.root.locator('.calc__form [name="data_parallel"], .calc__form [name="tensor_parallel"]')
        left, right = (xs.nth(i).bounding_box() for i in range(2))
        assert left["y"] == right["y"] and left["x"] + left["width"] < right["x"]  # two fields to a row
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    finally:
        context.close()


#: The layouts of the atlas drawings in the view, in order.
FITS = """(view) => [...view.querySelectorAll(".atlas-fit")].map((g) => g.getAttribute("class")).join()"""


def test_the_live_atlas_draws_the_layout_that_fits_and_redraws_when_that_changes(browser, base_url, watch):
    """A live answer draws only the layout the view shows: at 1280 px the wide one alone; narrowing the window
    to 375 px asks Python again and draws the narrow one alone (same plan, labels >= 12 px), widening it draws
    the wide one. Its own context: the viewport changes. Measured scrolled to: at 375 px the drawing is far below,
    where the page does not lay it out (tools.css, content-visibility), and its measures would be none."""
    with live_atlas(browser, base_url, watch, 1280) as (page, calc):
        view = calc.root.locator("[data-view]")
        assert view.evaluate(FITS) == "atlas-fit atlas-fit--wide,atlas-fit atlas-fit--narrow"  # the build's
        assert calc.set_inputs({"interleave": "2"}, blank_others=False) == "ready"
        assert view.evaluate(FITS) == "atlas-fit atlas-fit--wide"
        title = shown(calc)["title"]
        for width, fit in ((375, "narrow"), (1280, "wide")):
            page.set_viewport_size({"width": width, "height": 800})
            page.wait_for_function(f"(view) => ({FITS})(view) === 'atlas-fit atlas-fit--{fit}'",
                                   arg=view.element_handle())
            assert calc.wait_state("ready") == "ready", calc.status()
            scrolled_to(calc.root.locator("[data-view] > .tool__figure").first)  # laid out on screen only
            d = shown(calc)
            assert d["fit"] == f"atlas-fit atlas-fit--{fit}" and d["title"] == title and min(d["px"]) >= 12, width
        assert watch.errors == [] and watch.offsite == []


#: What each evaluate request the page sends asks for: (command, fit), fit null when absent.
RECORD_FITS = """
const post = Worker.prototype.postMessage;
window.__fits = [];
Worker.prototype.postMessage = function (message, ...rest) {
  if (message?.request?.op === "evaluate") window.__fits.push([message.request.command, message.request.fit ?? null]);
  return post.call(this, message, ...rest);
};
"""


def test_only_a_view_with_an_atlas_asks_for_a_layout(browser, base_url, watch):
    """The atlas asks for the layout its view shows; the timeline, with no atlas, asks for none, so a resize
    never asks Python again for it (nor the planner for its search)."""
    context = open_context(browser, base_url, watch, viewport={"width": 1280, "height": 800})
    context.add_init_script(RECORD_FITS)
    try:
        page = context.new_page()
        for path, command, field, value, fit in (("/tools/timeline/", "bubble", "microbatches", "12", None),
                                                 (ATLAS, "plan", "interleave", "2", "wide")):
            page.goto(path)
            calc = Calculator(page, command)
            assert calc.wait_state("ready") == "ready", calc.status()
            assert calc.set_inputs({field: value}, blank_others=False) == "ready"
            asked = page.evaluate("window.__fits")
            assert asked and set(map(tuple, asked)) == {(command, fit)}, asked
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()
