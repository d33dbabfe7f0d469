"""The atlas's training / serving switch (hooks/modes.py, calc-mode.mjs) in Chromium.

The switch shows the serving atlas, whose crossings are `python -m calc infer --json`'s; the mode is
in the address (reload, Back and Forward keep it; a bad one is refused in the switch's note); the
hidden tool computes nothing; the radios work from the keyboard; axe passes in both modes; nothing
scrolls sideways at 375 px; without JavaScript both tools are there, computed at build time.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest
from tests.browser.atlas_browser import Calculator, Hold, Watch, open_context, settled_url, visit
from tests.browser.test_a11y import axe, in_both_palettes
from tests.browser.test_browser_tools import spec_json

from calc.api import evaluate
from calc.diagram import crossing_text
from calc.errors import CalcError

pytestmark = pytest.mark.browser

PATH = "/tools/atlas/"
TRAINING, SERVING = "Training step", "Serving (per generated token)"

#: Counts the page's requests to calc by command (calc-runtime.mjs posts {id, request: {op, command, inputs}}).
COUNT_REQUESTS = """
const post = Worker.prototype.postMessage;
window.__asked = [];
Worker.prototype.postMessage = function (message, ...rest) {
  if (message?.request?.op === "evaluate") window.__asked.push(message.request.command);
  return post.call(this, message, ...rest);
};
"""


class Atlas:
    """The atlas page: the switch, the training tool (plan) and the serving tool (infer)."""

    def __init__(self, page):
        self.page = page
        self.switch = page.locator("[data-modes]")
        self.training = Calculator(page, "plan", "atlas")
        self.serving = Calculator(page, "infer", "atlas-serve")

    def radio(self, label: str):
        return self.page.get_by_role("radio", name=label)

    def wait_shown(self, mode: str) -> Calculator:
        """Wait until ``mode``'s tool is the one shown, the other hidden, and it has its answer."""
        shown, hidden = (self.serving, self.training) if mode == "inference" else (self.training, self.serving)
        self.page.wait_for_function("([s, h]) => !s.hidden && h.hidden",
                                    arg=[shown.root.element_handle(), hidden.root.element_handle()])
        assert shown.wait_state("ready", "error") in ("ready", "error")
        return shown

    def query(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(settled_url(self.page)).query, keep_blank_values=True))

    def note(self) -> str:
        return self.switch.locator("[data-modes-note]").text_content()


def open_atlas(page, query: str = "") -> Atlas:
    visit(page, PATH + query)
    atlas = Atlas(page)
    atlas.switch.wait_for(state="visible")
    return atlas


def drawn_crossings(calc: Calculator) -> list[str]:
    """The titles of the crossings the first figure (the atlas) draws, in order."""
    return calc.root.locator("[data-view] figure").first.evaluate(
        "f => [...f.querySelectorAll('g.atlas-crossing')].map((g) => g.querySelector(':scope > title').textContent)")


def test_the_switch_draws_the_serving_atlas_with_the_cli_crossings(page, tmp_path):
    """Choosing serving shows the infer tool: its values are `python -m calc infer SPEC --json`'s, and its first
    drawing is the serving atlas with one crossing per communication, labelled per generated token, as the CLI's."""
    atlas = open_atlas(page)
    assert atlas.wait_shown("training") is atlas.training
    assert atlas.radio(TRAINING).is_checked() and not atlas.radio(SERVING).is_checked()
    atlas.radio(SERVING).check()
    serving = atlas.wait_shown("inference")
    assert atlas.query().get("mode") == "inference"
    for extra in ({}, {"tensor_parallel": "4", "data_parallel": "2"}, {"tensor_parallel": "2", "pipeline_parallel": "2", "data_parallel": "2"}):
        inputs = {**serving.inputs(), **extra}
        assert serving.set_inputs(inputs) == "ready", (extra, serving.status())
        serving.drawn()
        expected = spec_json("infer", inputs, tmp_path)
        assert serving.values() == {k: expected[k] for k in serving.values()}, extra
        comms = json.loads(expected["communications"])
        assert comms, "the serving split has crossings to draw"
        titles = [f"{n}. {'; '.join(crossing_text(c, 'generated token'))}" for n, c in enumerate(comms, start=1)]
        assert drawn_crossings(serving) == titles, extra
        figure = serving.root.locator("[data-view] svg.draw").first
        assert figure.locator(":scope > title").text_content().startswith("Serving atlas: ")
    assert atlas.training.root.is_hidden() and serving.root.is_visible()


def test_the_hidden_mode_does_not_compute(browser, base_url):
    """On the atlas in training mode only plan is asked for, however the training inputs change; after the switch
    only infer; the hidden tool is not in the accessibility tree (the hidden attribute)."""
    watch = Watch(base_url)
    context = open_context(browser, base_url, watch)
    try:
        page = context.new_page()
        page.add_init_script(COUNT_REQUESTS)
        page.goto(PATH)
        atlas = Atlas(page)
        atlas.wait_shown("training")
        assert atlas.training.set_inputs({"interleave": "2"}, blank_others=False) == "ready"
        assert set(page.evaluate("window.__asked")) == {"plan"}
        assert atlas.serving.root.get_attribute("hidden") is not None and atlas.serving.state != "ready"
        assert atlas.serving.root.is_hidden() and atlas.training.root.is_visible()
        page.evaluate("window.__asked = []")
        atlas.radio(SERVING).check()
        atlas.wait_shown("inference")
        assert atlas.serving.set_inputs({"batch": "4"}, blank_others=False) == "ready"
        assert set(page.evaluate("window.__asked")) == {"infer"}
        assert atlas.training.root.get_attribute("hidden") is not None
    finally:
        context.close()
    assert watch.offsite == []


def test_the_address_holds_the_mode_and_reload_back_and_forward_keep_it(page):
    """The mode and the shown tool's non-default inputs are in the address; a reload keeps both; each choice is a
    history entry, so Back and Forward switch modes, each with the inputs it had."""
    atlas = open_atlas(page)
    atlas.wait_shown("training")
    assert atlas.training.set_inputs({"interleave": "2"}, blank_others=False) == "ready"
    assert atlas.query() == {"interleave": "2"}
    atlas.radio(SERVING).check()
    serving = atlas.wait_shown("inference")
    assert atlas.query() == {"mode": "inference"}  # the training inputs are not the serving tool's
    assert serving.set_inputs({"batch": "4"}, blank_others=False) == "ready"
    assert atlas.query() == {"mode": "inference", "batch": "4"}
    page.reload()
    atlas = Atlas(page)
    serving = atlas.wait_shown("inference")
    assert atlas.radio(SERVING).is_checked() and serving.inputs()["batch"] == "4"
    assert serving.values()["batch"] == json.dumps(evaluate("infer", serving.inputs())["batch"])
    atlas.radio(TRAINING).check()
    training = atlas.wait_shown("training")
    assert atlas.query() == {}  # the reload started the training tool at its defaults
    assert training.set_inputs({"interleave": "3"}, blank_others=False) == "ready"
    settled_url(page)  # the edit is written into this entry after its frame: Back in that frame would not keep it
    page.go_back()
    serving = atlas.wait_shown("inference")
    assert atlas.query() == {"mode": "inference", "batch": "4"} and atlas.radio(SERVING).is_checked()
    assert serving.inputs()["batch"] == "4" and serving.current()
    page.go_forward()
    training = atlas.wait_shown("training")
    assert atlas.query() == {"interleave": "3"} and atlas.radio(TRAINING).is_checked()
    assert training.inputs()["interleave"] == "3" and training.current()


@pytest.mark.parametrize("bad", ["serving", "Inference", ""])
def test_a_bad_mode_is_refused_in_the_note_and_the_default_shown(page, bad):
    """`mode=` with a value the page does not have: the switch's polite note names the key, the rule and the
    value; the training step is shown; the address no longer holds it."""
    page.goto(f"{PATH}?mode={bad}")  # a load, not visit(): the address changes as it is refused
    atlas = Atlas(page)
    atlas.wait_shown("training")
    note = atlas.switch.locator("[data-modes-note]")
    assert note.get_attribute("role") == "status" and note.is_visible()
    assert atlas.note() == f"mode must be one of training, inference, got {json.dumps(bad)}: showing {TRAINING}."
    assert atlas.radio(TRAINING).is_checked() and "mode" not in atlas.query()
    atlas.radio(SERVING).check()
    atlas.wait_shown("inference")
    assert atlas.note() == ""


def test_errors_in_serving_mode_sit_beside_the_field(page):
    """In serving mode a bad input shows CalcError's text next to the field, the status says results are not
    current (a polite live region), the results are marked stale; a good value clears it."""
    atlas = open_atlas(page, "?mode=inference")
    serving = atlas.wait_shown("inference")
    start = serving.inputs()
    for name, value in (("batch", "0"), ("tensor_parallel", "3"), ("output_tokens", "9000")):
        inputs = {**start, name: value}
        with pytest.raises(CalcError) as info:
            evaluate("infer", inputs)
        assert serving.set_inputs(inputs) == "error", (name, serving.status())
        assert serving.field_error(info.value.param) == str(info.value)
        assert serving.root.locator(f"#atlas-serve-{info.value.param}-error").is_visible()
        assert serving.status().startswith("Results not current")
        assert serving.root.locator(".calc__status").get_attribute("role") == "status"
        assert not serving.current() and serving.root.locator(".calc__stale").is_visible()
        assert serving.set_inputs(start) == "ready"
        assert serving.current() and serving.field_error(info.value.param) is None


def test_the_switch_is_one_labelled_radio_group_worked_by_the_keyboard(page):
    """The switch is a group named by its legend; Tab reaches the checked radio, the arrow keys choose the other
    mode (shown at once), and focus is visible."""
    atlas = open_atlas(page)
    atlas.wait_shown("training")
    group = page.get_by_role("group", name="Show the atlas of")
    assert group.count() == 1 and group.get_by_role("radio").count() == 2
    before = page.locator("h1").first
    before.evaluate("h => { h.tabIndex = -1; h.focus(); }")
    for _ in range(20):  # Tab from the heading until the switch (the intro's links come first)
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name === 'atlas-mode'"):
            break
    assert atlas.radio(TRAINING).evaluate("r => r === document.activeElement")
    outline = atlas.radio(TRAINING).evaluate("r => getComputedStyle(r).outlineStyle")
    assert outline != "none"
    page.keyboard.press("ArrowRight")
    atlas.wait_shown("inference")
    assert atlas.radio(SERVING).evaluate("r => r === document.activeElement && r.checked")
    assert atlas.query().get("mode") == "inference"
    page.keyboard.press("ArrowLeft")
    atlas.wait_shown("training")
    assert "mode" not in atlas.query()
    page.keyboard.press("Tab")  # one stop for the group: Tab leaves it
    assert not page.evaluate("document.activeElement.name === 'atlas-mode'")


def test_axe_finds_nothing_in_either_mode(page):
    """axe (WCAG 2.2 AA) over the whole atlas page, in each mode and each palette, once the shown tool is live."""
    problems = []
    for query, mode in (("", "training"), ("?mode=inference", "inference")):
        atlas = open_atlas(page, query)
        assert atlas.wait_shown(mode).state == "ready"
        problems += [f"{mode}: {p}" for p in in_both_palettes(page, lambda: axe(page))]
    assert problems == []


def test_no_sideways_scroll_at_375_px_in_either_mode(browser, base_url, watch):
    """At 375 px neither mode scrolls the page sideways, the switch's options included."""
    context = open_context(browser, base_url, watch, viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
        for query, mode in (("", "training"), ("?mode=inference", "inference")):
            page.goto(PATH + query)
            atlas = Atlas(page)
            atlas.wait_shown(mode)
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, mode
            assert atlas.switch.bounding_box()["width"] <= 375
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()


def test_with_scripts_the_serving_tool_is_not_laid_out_until_the_switch_is_live(browser, base_url, watch):
    """While the page's scripts load (calc-mount.mjs held back), the serving tool, second after the hidden switch,
    is not rendered (atlas.css: no style or layout for it at load) though it has no hidden attribute yet; once
    the switch is live the tool the address names is shown, the other hidden by its attribute."""
    hold = Hold("/calc-mount.mjs")
    context = open_context(browser, base_url, watch, fault=hold)
    try:
        page = context.new_page()
        with page.expect_request(lambda request: request.url.endswith("/calc-mount.mjs")):
            page.goto(PATH + "?mode=inference")
        atlas = Atlas(page)
        assert atlas.switch.is_hidden() and atlas.serving.root.get_attribute("hidden") is None
        assert page.evaluate("getComputedStyle(document.getElementById('atlas-serve')).display") == "none"
        assert atlas.training.root.is_visible()
        hold.release()
        atlas.wait_shown("inference")
        assert atlas.switch.is_visible() and atlas.serving.root.is_visible() and atlas.training.root.is_hidden()
    finally:
        context.close()
    assert watch.offsite == []


#: Layout shifts that moved the atlas (its training tool), recorded from the first paint.
ATLAS_SHIFTS = """window.__atlasShifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.sources.some((s) => s.node?.id === "atlas")) window.__atlasShifts.push(entry.value);
  }
}).observe({ type: "layout-shift", buffered: true });"""


def test_showing_the_switch_moves_nothing_below_it(browser, base_url, watch):
    """With scripts the hidden switch holds its place, unseen, from the first paint (atlas.css), so showing it
    moves nothing: the atlas is where it was while the page's scripts loaded, and Chromium records no layout
    shift of it (appearing ~1 s into the load, the switch pushed it down 118 px at 412 px: a shift of 0.034)."""
    hold = Hold("/calc-mount.mjs")
    context = open_context(browser, base_url, watch, fault=hold, viewport={"width": 412, "height": 823})
    context.add_init_script(ATLAS_SHIFTS)
    try:
        page = context.new_page()
        with page.expect_request(lambda request: request.url.endswith("/calc-mount.mjs")):
            page.goto(PATH)
        atlas = Atlas(page)
        assert atlas.switch.is_hidden()
        top = atlas.training.root.bounding_box()["y"]
        hold.release()
        atlas.wait_shown("training")
        assert atlas.switch.is_visible() and atlas.training.root.bounding_box()["y"] == top
        assert page.evaluate("window.__atlasShifts") == []
    finally:
        context.close()
    assert watch.offsite == []


def test_both_modes_are_prerendered_without_javascript(browser, base_url, watch):
    """With JavaScript off both tools are on the page with calc's results for their default inputs, one after the
    other; the switch, which needs the script, is hidden."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(PATH + "?mode=inference")
        atlas = Atlas(page)
        assert atlas.switch.is_hidden()
        for calc, command in ((atlas.training, "plan"), (atlas.serving, "infer")):
            assert calc.state == "static" and calc.root.is_visible()
            expected = {k: json.dumps(v) for k, v in evaluate(command, calc.inputs()).items()}
            assert calc.values() == {k: expected[k] for k in calc.values()}, command
        assert drawn_crossings(atlas.serving)[0].endswith(
            crossing_text(json.loads(atlas.serving.values()["communications"])[0], "generated token")[1])
        assert watch.offsite == [] and not watch.paths(".wasm")
    finally:
        context.close()
