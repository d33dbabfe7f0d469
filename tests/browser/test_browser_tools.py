"""The tool pages in Chromium: the atlas, memory per GPU, the pipeline timeline and the planner.

Same standards as the live calculators (test_browser_calculators.py): the page's data-value is the
JSON text the CLI prints, errors sit next to their field, nothing stale looks current, and the
`page` fixture fails a test on any request to another host or any console error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qsl, urlsplit

import pytest
from tests.browser.atlas_browser import HUNG_MS, ROOT, Calculator, cli_json, open_context, scrolled_to, settled_url, visit
from tests.browser.vectors import ATLAS_VECTORS, atlas_inputs

from calc.api import COMMANDS, evaluate
from calc.errors import CalcError
from calc.presets import ATLAS_DEFAULT, PRESETS
from calc.spec import spec_key

pytestmark = pytest.mark.browser

PAGES = {"plan": "/tools/atlas/", "device-memory": "/tools/memory/", "bubble": "/tools/timeline/",
         "search": "/tools/planner/"}

def spec_json(command: str, inputs: dict[str, str], tmp_path) -> dict[str, str]:
    """``python -m calc COMMAND SPEC.json --json`` for flat inputs: each key's JSON text as printed."""
    sections: dict[str, dict] = {}
    for p in COMMANDS[command].params:
        value = inputs.get(p.name, "")
        if p.section and value.strip() != "":
            sections.setdefault(p.section, {})[spec_key(p.name, p.section)] = value
    path = tmp_path / "SPEC.json"
    path.write_text(json.dumps(sections))
    proc = subprocess.run([sys.executable, "-m", "calc", command, str(path), "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    out = {key: json.dumps(value) for key, value in json.loads(proc.stdout).items()}
    for key, text in out.items():
        assert f'"{key}": {text}' in proc.stdout, key  # as printed, not re-encoded
    return out


def open_tool(page, command: str, query: str = "") -> Calculator:
    visit(page, PAGES[command] + query)
    calc = Calculator(page, command)
    assert calc.wait_state("ready") == "ready", calc.status()
    return calc


def crossings_drawn(calc: Calculator) -> int:
    """Crossings of the atlas drawing shown. The build's drawing holds both layouts (the other one hidden, with as
    many crossings); a live answer draws only the layout shown (calc-view.mjs: fit)."""
    shown = calc.root.locator("[data-view] svg g.atlas-crossing:visible").count()
    drawings = calc.root.locator("[data-view] svg.draw:has(.atlas-fit)").count()
    assert drawings in (1, 2) and calc.root.locator("[data-view] svg g.atlas-crossing").count() == drawings * shown
    return shown


def test_atlas_table_parity_with_the_cli(page, tmp_path):
    """For each configuration, every data-value equals `python -m calc plan SPEC --json`, and the redrawn
    diagram has one crossing per communication."""
    calc = open_tool(page, "plan")
    mismatches = []
    for extra in ATLAS_VECTORS:
        inputs = atlas_inputs(extra)
        assert calc.set_inputs(inputs) == "ready", (extra, calc.status())
        expected = spec_json("plan", inputs, tmp_path)
        got = calc.values()
        wrong = {k: (got[k][:80], expected[k][:80]) for k in got if got[k] != expected[k]}
        if wrong:
            mismatches.append((extra, wrong))
        assert crossings_drawn(calc) == len(json.loads(got["communications"])), extra
        rows = calc.root.locator('[data-table="crossings"] tbody tr').count()
        assert rows == len(json.loads(got["communications"])), extra
        assert calc.current()
    assert len(ATLAS_VECTORS) >= 10
    assert mismatches == []


def test_prerendered_tools_without_javascript(browser, base_url, watch):
    """With JavaScript off each tool page shows calc's default results and a drawn view."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        for command, path in PAGES.items():
            page.goto(path)
            calc = Calculator(page, command)
            assert calc.state == "static"
            expected = {k: json.dumps(v) for k, v in evaluate(command, calc.inputs()).items()}
            assert calc.values() == {k: expected[k] for k in calc.values()}, command
            assert calc.root.locator("[data-view] .tool__table").count() >= 1
            if command != "search":
                assert calc.root.locator("[data-view] svg.draw").count() >= 1
        assert watch.offsite == [] and not watch.paths(".wasm")
    finally:
        context.close()


def test_presets_load_and_render(page):
    """Each preset button fills the fields, keeps them in the URL and redraws the atlas."""
    calc = open_tool(page, "plan")
    for name, preset in PRESETS.items():
        calc.root.locator(f'[data-preset="{name}"]').click()
        assert calc.wait_state("ready", "error") == "ready", name
        inputs = calc.inputs()
        assert all(inputs[k] == v for k, v in preset.inputs.items()), name
        plan = evaluate("plan", inputs)
        assert calc.values()["step_time_s"] == json.dumps(plan["step_time_s"]), name
        assert crossings_drawn(calc) == len(plan["communications"]), name
        assert calc.root.locator(f'[data-preset="{name}"]').get_attribute("aria-pressed") == "true"
        query = dict(parse_qsl(urlsplit(settled_url(page)).query, keep_blank_values=True))
        if name != ATLAS_DEFAULT:
            assert query.get("layers") == preset.inputs["layers"], name
        else:
            assert query == {}, name  # only non-default values are kept


#: Counts, per tool view, the times it was redrawn (calc-view.mjs sets the calculator's data-draw-ms at each redraw);
#: installed once per document, which instant navigation keeps.
COUNT_REDRAWS = """() => {
  window.__redraws = {};
  new MutationObserver((records) => {
    for (const r of records) {
      const id = r.target.querySelector("[data-view]").id;
      window.__redraws[id] = (window.__redraws[id] ?? 0) + 1;
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-draw-ms"] });
}"""


def test_the_builds_drawing_stays_for_the_default_inputs(page):
    """Python's answer for the default inputs is what the build drew with the same calc: the build's drawing stays
    (no nodes to style and lay out when Python becomes ready); other inputs redraw it, and from then on a return
    to the defaults redraws too."""
    visit(page, "/")
    page.evaluate(COUNT_REDRAWS)
    calc = open_tool(page, "plan")
    assert calc.current() and calc.root.get_attribute("data-draw-ms") is None
    assert page.evaluate("window.__redraws") == {}
    defaults = calc.inputs()
    assert calc.set_inputs({"interleave": "2"}, blank_others=False) == "ready"
    assert page.evaluate("window.__redraws") == {"atlas-view": 1}
    assert same_as_the_build(calc, "plan", calc.inputs(), "wide") == ""  # the layout 1280 px shows, crossings, legend
    assert calc.set_inputs(defaults, blank_others=False) == "ready"
    assert page.evaluate("window.__redraws") == {"atlas-view": 2}
    assert crossings_drawn(calc) == len(evaluate("plan", defaults)["communications"])


#: The view's parts (figures, tables) as (the same element as before the last mark?, rendering skipped?, height px).
VIEW_PARTS = """(root, mark) => [...root.querySelector("[data-view]").children].map((el, i) => {
  const same = window.__parts?.[i] === el;
  if (mark) (window.__parts ??= [])[i] = el;
  return [same, !el.firstElementChild.checkVisibility({ contentVisibilityAuto: true }), el.getBoundingClientRect().height];
})"""

#: Whether each table of the view reads as the build's HTML ``html`` of the same answer does.
SAME_TABLES = """(root, html) => {
  const built = document.createElement("div");
  built.innerHTML = html;
  const text = (scope) => [...scope.querySelectorAll(".tool__table")].map((t) => [t.dataset.table, t.textContent]);
  return JSON.stringify(text(root.querySelector("[data-view]"))) === JSON.stringify(text(built));
}"""


def test_parts_off_screen_keep_their_elements_and_stay_unrendered(page):
    """The inference calculator's view is five screens long at 1280 x 720: its parts far off screen are not rendered
    (tools.css, content-visibility: auto), and an answer keeps each part and fills it anew (calc-view.mjs refill), so
    they stay unrendered: a new element would be styled and laid out once first. What they hold is the new answer, and
    a figure skipped is as tall as it is once shown."""
    calc = Calculator(page, "infer")
    visit(page, "/tools/inference/")
    assert calc.wait_state("ready") == "ready", calc.status()
    assert calc.set_inputs({"batch": "12"}, blank_others=False) == "ready"  # the build's two atlas layouts -> the one shown
    before = calc.root.evaluate(VIEW_PARTS, True)
    assert any(skipped for _, skipped, _ in before[1:]) and not before[0][1]  # the first figure is near the form
    inputs = {**calc.inputs(), "batch": "24"}
    assert calc.set_inputs(inputs) == "ready"
    after = calc.root.evaluate(VIEW_PARTS, False)
    assert [same for same, _, _ in after] == [True] * len(before)
    assert [skipped for _, skipped, _ in after] == [skipped for _, skipped, _ in before]
    parts = calc.root.locator("[data-view] > *")
    for i, (_, skipped, _) in enumerate(after):  # a figure skipped is far off screen: redrawn once it comes near
        if skipped and parts.nth(i).evaluate("el => el.localName") == "figure":
            assert parts.nth(i).get_attribute("data-stale") == "", i
    built = the_builds_view(calc, "infer", inputs, "wide")
    assert calc.root.evaluate(SAME_TABLES, built)
    calc.drawn()
    assert calc.root.evaluate(SAME_DRAWINGS, built) == ""
    figure = max(i for i, (_, skipped, _) in enumerate(after) if skipped
                 and calc.root.locator("[data-view] > *").nth(i).evaluate("el => el.localName") == "figure")
    scrolled_to(calc.root.locator("[data-view] > *").nth(figure))
    shown = calc.root.evaluate(VIEW_PARTS, False)[figure]
    assert not shown[1] and abs(shown[2] - after[figure][2]) < 1, (shown, after[figure])


#: Each drawing's title and description (its name and description to a screen reader: role img), in the view shown
#: (no argument) or in the build's HTML of the view.
NAMES = """(root, html) => {
  const scope = html == null ? root.querySelector("[data-view]") : Object.assign(document.createElement("div"),
    { innerHTML: html });
  return [...scope.querySelectorAll("svg.draw")].map((svg) => [svg.querySelector(":scope > title").textContent,
    svg.querySelector(":scope > desc").textContent]);
}"""


def test_a_figure_far_off_screen_is_redrawn_when_it_comes_near(page):
    """At 1280 x 720 the timeline's first schedule is by the form and the interleaved one two screens down. An answer
    draws the first at once; Python names the far one only, and it keeps its elements, dimmed and marked stale, its
    title and description (its name to a screen reader) already the answer's, until it is scrolled near: then Python
    is asked again and it is the build's drawing of the answer. Printing draws every figure."""
    calc = open_tool(page, "bubble")
    page.evaluate("() => window.scrollTo(0, 0)")  # instant navigation from a page scrolled down can keep it scrolled
    inputs = {"pipeline_parallel": "4", "microbatches": "16", "interleave": "2"}
    assert calc.set_inputs(inputs) == "ready"
    figures = calc.root.locator("[data-view] > .tool__figure")
    first, far = figures.first, figures.nth(2)
    # near the screen, so drawn: by the first answer, or by a second if the observer had not yet seen the scroll
    page.wait_for_function("(el) => !el.hasAttribute('data-stale')", arg=first.element_handle(), timeout=HUNG_MS)
    assert far.get_attribute("data-stale") == ""
    assert far.locator("rect.tl-op").count() == 2 * 4 * 8 * 2  # the build's: m = 8
    assert far.locator("svg").evaluate("(svg) => getComputedStyle(svg).opacity") == "0.35"
    built = the_builds_view(calc, "bubble", inputs)
    assert calc.root.evaluate(NAMES) == calc.root.evaluate(NAMES, built)
    far.scroll_into_view_if_needed()
    page.wait_for_function("(el) => !el.hasAttribute('data-stale')", arg=far.element_handle())
    assert far.locator("rect.tl-op").count() == 2 * 4 * 16 * 2
    assert far.locator("svg").evaluate("(svg) => getComputedStyle(svg).opacity") == "1"
    inputs = {**inputs, "microbatches": "12"}
    assert calc.set_inputs(inputs) == "ready"
    assert first.get_attribute("data-stale") == "" and far.get_attribute("data-stale") is None  # now far above
    calc.drawn()  # beforeprint
    assert same_as_the_build(calc, "bubble", inputs) == ""


def test_url_restores_the_atlas(page, tmp_path):
    """Opening the atlas with a query restores those inputs and their results."""
    calc = open_tool(page, "plan", "?data_parallel=32&pipeline_parallel=4&interleave=2")
    inputs = atlas_inputs({"data_parallel": "32", "pipeline_parallel": "4", "interleave": "2"})
    assert calc.inputs() == inputs
    assert calc.values()["step_time_s"] == spec_json("plan", inputs, tmp_path)["step_time_s"]


def test_planner_link_opens_the_configuration_in_the_atlas(page):
    """The planner ranks configurations; following a link gives the atlas that configuration's plan."""
    calc = open_tool(page, "search")
    values = calc.values()
    plans = json.loads(values["plans"])
    assert plans and json.loads(values["refused_summary"]) is not None
    link = calc.root.locator('[data-table="plans"] tbody tr').nth(1).locator("a")
    href = link.get_attribute("href")
    link.click()
    page.wait_for_url("**/tools/atlas/**")
    atlas = Calculator(page, "plan")
    assert atlas.wait_state("ready") == "ready"
    query = dict(parse_qsl(urlsplit(href).query, keep_blank_values=True))
    assert all(atlas.inputs()[k] == v for k, v in query.items())
    assert json.loads(atlas.values()["step_time_s"]) == plans[1]["step_time_s"]
    par = json.loads(atlas.values()["parallel"])
    assert {k: par[k] for k in ("data", "tensor", "pipeline", "zero")} == \
        {k: plans[1]["parallel"][k] for k in ("data", "tensor", "pipeline", "zero")}


def test_planner_search_for_1024_gpus(page):
    """The GPT-3 preset (1024 GPUs) is searched in the page; the ranking is the CLI's."""
    calc = open_tool(page, "search")
    calc.root.locator('[data-preset="gpt3-175b"]').click()
    assert calc.wait_state("ready", "error") == "ready"
    expected = evaluate("search", calc.inputs())
    assert calc.values()["plans"] == json.dumps(expected["plans"])
    assert calc.values()["refused_count"] == json.dumps(expected["refused_count"])
    assert calc.root.locator('[data-table="refusals"] tbody tr').count() == len(expected["refused_summary"])
    rules = calc.root.locator('[data-table="refusals"] tbody tr td:nth-child(2)').all_text_contents()
    assert rules == [g["rule"] for g in expected["refused_summary"]]


def test_memory_updates_live(page, tmp_path):
    """Changing ZeRO or recomputation updates the stacked bar and the values, equal to the CLI's."""
    calc = open_tool(page, "device-memory")
    base = calc.inputs()
    for extra in ({"zero": "3"}, {"recompute": "full"}, {"tensor_parallel": "4", "data_parallel": "2"}, {"seq_len": "32768"},
                  {"fp8": "true"}):
        inputs = {**base, **extra}
        assert calc.set_inputs(inputs) == "ready", extra
        calc.drawn()
        expected = spec_json("device-memory", inputs, tmp_path)
        assert calc.values() == {k: expected[k] for k in calc.values()}, extra
        title = calc.root.locator("[data-view] svg title").first.text_content()
        assert ("does not fit" in title) == (expected["fits"] == "false"), extra
        assert same_as_the_build(calc, "device-memory", inputs) == "", extra


def test_fp8_plans_in_the_atlas_and_is_refused_at_its_field_on_the_a100(page, tmp_path):
    """training.fp8 in the page: the plan is the CLI's and faster than the 16-bit one; on an A100 the fp8 field
    carries calc's refusal and the result is marked not current."""
    calc = open_tool(page, "plan")
    base = {**calc.inputs(), "profile": "h100-sxm5-80gb", "precision": "bf16-adam"}  # the atlas opens on A100s
    assert calc.set_inputs(base) == "ready"
    bf16 = json.loads(calc.values()["step_time_s"])
    inputs = {**base, "fp8": "true"}
    assert calc.set_inputs(inputs) == "ready"
    expected = spec_json("plan", inputs, tmp_path)
    assert calc.values() == {k: expected[k] for k in calc.values()}
    assert json.loads(calc.values()["step_time_s"]) < bf16
    bad = {**inputs, "profile": "a100-sxm4-80gb"}
    with pytest.raises(CalcError) as info:
        evaluate("plan", bad)
    assert info.value.param == "fp8"
    assert calc.set_inputs(bad) == "error"
    assert calc.field_error("fp8") == str(info.value) and not calc.current()


#: Each hatch overlay of a view: is it painted (computed fill) by a pattern of its own drawing, whose id is
#: the only one of its kind on the page? Counts the overlays that are; throws naming the first that is not.
HATCHES = """(root) => {
  const overlays = [...root.querySelectorAll("[data-view] svg path.tl-hatch")];
  for (const path of overlays) {
    const id = /^url\\(["']?#([^"')]+)["']?\\)$/.exec(getComputedStyle(path).fill)?.[1];
    const pattern = id && document.getElementById(id);
    if (!pattern || pattern.tagName !== "pattern" || pattern.closest("svg") !== path.closest("svg")
        || document.querySelectorAll(`[id="${id}"]`).length !== 1) throw new Error(`hatch not painted: ${id}`);
  }
  return overlays.length;
}"""


def hatches_resolve(root) -> int:
    return root.evaluate(HATCHES)


#: Is each drawing of a view, as the page drew it (calc-view.mjs), the same DOM as the build's renderer writes for
#: the same answer (hooks/views.py, given as HTML)? Whitespace between elements aside. "" or the first difference.
SAME_DRAWINGS = """(root, html) => {
  const strip = (node) => {
    for (const child of [...node.childNodes]) {
      if (child.nodeType === Node.TEXT_NODE && !child.data.trim()) child.remove();
      else if (child.nodeType === Node.ELEMENT_NODE) strip(child);
    }
    return node;
  };
  const built = document.createElement("div");
  built.innerHTML = html;
  const want = [...built.querySelectorAll("svg")].map(strip);
  for (const svg of want) svg.removeAttribute("xmlns"); // the build declares the namespace the page creates in
  const got = [...root.querySelectorAll("[data-view] svg")].map((svg) => strip(svg.cloneNode(true)));
  if (want.length !== got.length) return `${got.length} drawings, the build's ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (want[i].isEqualNode(got[i])) continue;
    const a = [...want[i].querySelectorAll("*")], b = [...got[i].querySelectorAll("*")];
    const own = (el) => [...el.childNodes].filter((c) => c.nodeType === Node.TEXT_NODE).map((c) => c.data).join("");
    const k = a.findIndex((el, j) => !b[j] || !el.cloneNode(false).isEqualNode(b[j].cloneNode(false))
                                    || own(el) !== own(b[j]) || el.childElementCount !== b[j].childElementCount);
    if (k < 0) return `drawing ${i}: ${want[i].cloneNode(false).outerHTML} / ${got[i].cloneNode(false).outerHTML}`;
    return `drawing ${i}, element ${k}: ${a[k].outerHTML.slice(0, 200)} / ${b[k]?.outerHTML.slice(0, 200)}`;
  }
  return "";
}"""


def the_builds_view(calc: Calculator, command: str, inputs: dict[str, str], fit: str | None = None) -> str:
    """The view's HTML as the build writes it for ``inputs``, rendered here with the hook and the same calc (``fit``:
    the one atlas layout, as the live page asks for it)."""
    from hooks.views import render_view

    from calc.views import page_view
    view = page_view(command, inputs, COMMANDS[command].parse(inputs), evaluate(command, inputs), fit)
    return render_view(view, calc.root.get_attribute("id"))


def same_as_the_build(calc: Calculator, command: str, inputs: dict[str, str], fit: str | None = None) -> str:
    """:data:`SAME_DRAWINGS` for ``inputs`` against :func:`the_builds_view`."""
    return calc.root.evaluate(SAME_DRAWINGS, the_builds_view(calc, command, inputs, fit))


def test_timeline_updates_live(page):
    """More stages redraw more rows; the bubble results equal the CLI's; invalid interleaving is an error."""
    calc = open_tool(page, "bubble")
    assert hatches_resolve(calc.root) == 3  # the build's drawing (v = 2: three schedules)
    for inputs in ({"pipeline_parallel": "8", "microbatches": "16", "interleave": "2"},
                   {"pipeline_parallel": "2", "microbatches": "4", "interleave": "1"}):
        assert calc.set_inputs(inputs) == "ready", inputs
        calc.drawn()
        assert calc.values() == {k: v for k, v in cli_json("bubble", inputs).items() if k in calc.values()}
        ops = calc.root.locator("[data-view] svg rect.tl-op").count()
        p, m, v = (int(inputs[k]) for k in ("pipeline_parallel", "microbatches", "interleave"))
        assert ops == 2 * p * m * 2 + (2 * p * m * v if v > 1 else 0), inputs
        assert hatches_resolve(calc.root) == 2 + (v > 1), inputs
        assert same_as_the_build(calc, "bubble", inputs) == "", inputs  # boxes, hatch, labels: as the build draws
    assert calc.set_inputs({"pipeline_parallel": "4", "microbatches": "6", "interleave": "2"}) == "error"
    assert calc.field_error("microbatches") and not calc.current()


@pytest.mark.parametrize("command,name,value", [("plan", "tensor_parallel", "3"), ("plan", "data_parallel", "abc"),
                                                ("plan", "zero", "4"), ("device-memory", "micro_batch", "0"),
                                                ("search", "gpus", "12")])
def test_invalid_input_shows_field_error_and_no_current_result(page, command, name, value):
    """An invalid input shows calc's message next to its field; results and view are marked not current."""
    calc = open_tool(page, command)
    inputs = {**calc.inputs(), name: value}
    with pytest.raises(CalcError) as info:
        evaluate(command, inputs)
    assert calc.set_inputs(inputs) == "error"
    assert calc.field_error(info.value.param) == str(info.value)
    assert not calc.current() and calc.root.locator(".calc__stale").is_visible()
    # marked, not faded (fading would fail contrast): a dashed frame around the stale view
    outline = calc.root.locator("[data-view]").evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline == "dashed"
    assert "Traceback" not in calc.root.text_content()


def test_readable_at_375_px(browser, base_url, watch):
    """At 375 px wide no tool page scrolls sideways: the SVG scales, the tables scroll in their box.

    Its own context: a phone-sized viewport from the first paint (Python boots once in it)."""
    context = open_context(browser, base_url, watch, viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
        for command, path in PAGES.items():
            visit(page, path)
            Calculator(page, command).wait_state("ready")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 375, (path, width)
            if command != "search":  # the planner draws nothing; the atlas shows its narrow drawing
                box = page.locator("[data-view] svg.draw:visible").first.bounding_box()
                assert box is not None and box["width"] <= 375, path
            assert len(page.screenshot(full_page=True)) > 10_000  # something was painted
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()


#: The issue's invalid inputs on each tool: empty, letters, -1, 0, 1e309, NaN, a fraction where a
#: count is needed, and combinations the plan refuses (degrees that do not multiply to the GPUs,
#: TP not dividing the heads). The timeline's fields all have defaults, so blank is not an error there.
INVALID_TOOLS = {
    "plan": [("layers", ""), ("layers", "abc"), ("tensor_parallel", "-1"), ("tensor_parallel", "0"), ("gpus", "1e309"),
             ("device_memory", "NaN"), ("data_parallel", "2.5"), ("data_parallel", "3"), ("tensor_parallel", "7", {"data_parallel": "16"})],
    "device-memory": [("hidden", ""), ("zero", "x"), ("data_parallel", "-1"), ("pipeline_parallel", "0"), ("layers", "1e309"),
                      ("device_memory", "NaN"), ("micro_batch", "1.5")],
    "bubble": [("pipeline_parallel", "abc"), ("microbatches", "-1"), ("pipeline_parallel", "0"), ("pipeline_parallel", "1e309"),
               ("interleave", "NaN"), ("microbatches", "2.5")],
    "search": [("gpus", ""), ("gpus", "many"), ("gpus", "-1"), ("gpus", "0"), ("device_memory", "1e309"),
               ("flops_per_gpu", "NaN"), ("global_batch", "2.5")],
}


@pytest.mark.parametrize("command", INVALID_TOOLS)
def test_invalid_tool_inputs_show_calc_message_and_no_current_result(page, command):
    """Each invalid input shows CalcError's text next to its field and marks the results not current."""
    calc = open_tool(page, command)
    start = calc.inputs()
    for case in INVALID_TOOLS[command]:
        name, value, *extra = case
        inputs = {**start, **(extra[0] if extra else {}), name: value}
        with pytest.raises(CalcError) as info:
            evaluate(command, inputs)
        error = info.value
        assert calc.set_inputs(inputs) == "error", (case, calc.status())
        assert calc.field_error(error.param) == str(error), case
        assert not calc.current(), case
        assert "Traceback" not in calc.root.text_content()
        assert calc.set_inputs(start) == "ready", case
        assert calc.current() and calc.field_error(error.param) is None
