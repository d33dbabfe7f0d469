"""From plan to launch in Chromium: the launch panels, pin and compare in the atlas, the tool layout.

Parity is with the command line: a panel's text is what ``python -m calc export SPEC.json --to NAME``
prints, a refusal the line it prints after ``error:``; the comparison's values are what
``python -m calc compare A.json B.json --json`` prints. SPECs are written here from the flat inputs
(each field in its section, blanks left out), as a reader would write them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from tests.browser.atlas_browser import ROOT, Calculator, open_context, settled_url, visit

from calc.api import COMMANDS, evaluate
from calc.export import FRAMEWORKS
from calc.presets import PRESETS
from calc.spec import spec_key
from calc.views import MAX_PIN_CHARS, plan_inputs

pytestmark = pytest.mark.browser

ATLAS, PLANNER = "/tools/atlas/", "/tools/planner/"
TOOLS = ("/tools/atlas/", "/tools/memory/", "/tools/timeline/", "/tools/planner/", "/tools/inference/")
#: The panel of the atlas (or planner) answered for the inputs now in the form.
PANEL_CURRENT = """root => root.querySelector("[data-launch]").dataset.current === "true" """
#: The pin panel answered (a comparison or its error) for the inputs now in the form.
PIN_CURRENT = """root => root.querySelector("[data-pin]").dataset.current === "true" """


def write_spec(inputs: dict[str, str], path) -> str:
    spec: dict[str, dict] = {}
    for p in COMMANDS["plan"].params:
        value = inputs.get(p.name, "")
        if p.section and value.strip() != "":
            spec.setdefault(p.section, {})[spec_key(p.name, p.section)] = value
    path.write_text(json.dumps(spec))
    return str(path)


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "calc", *argv], cwd=ROOT, capture_output=True, text=True)


def cli_export(inputs: dict[str, str], framework: str, tmp_path) -> tuple[str | None, str | None]:
    """(text, None) as ``calc export`` prints it, or (None, the one line after ``error:``) with exit 2."""
    proc = cli("export", write_spec(inputs, tmp_path / "SPEC.json"), "--to", framework)
    if proc.returncode == 0:
        return proc.stdout.removesuffix("\n"), None
    assert proc.returncode == 2 and proc.stdout == "", proc
    prefix = "python -m calc export: error: "
    assert proc.stderr.startswith(prefix) and proc.stderr.count("\n") == 1, proc.stderr
    return None, proc.stderr[len(prefix):-1]


def open_tool(page, command: str, path: str) -> Calculator:
    visit(page, path)
    calc = Calculator(page, command)
    assert calc.wait_state("ready") == "ready", calc.status()
    return calc


def wait(calc: Calculator, js: str) -> None:
    calc.page.wait_for_function(js, arg=calc.root.element_handle())


def shown_launch(calc: Calculator, framework: str) -> tuple[str | None, str | None]:
    """Choose ``framework``; (its text, None) or (None, its error line), checking only one is shown."""
    calc.root.locator("[data-launch-to]").select_option(framework)
    wait(calc, PANEL_CURRENT)
    panel = calc.root.locator(f'[data-launch-panel="{framework}"]')
    assert panel.is_visible()
    assert calc.root.locator("[data-launch-panel]:visible").count() == 1
    text, error = panel.locator("[data-launch-text]"), panel.locator("[data-launch-error]")
    if error.is_visible():
        assert not text.is_visible() and text.text_content() == "", "stale text beside a refusal"
        assert calc.root.locator("[data-launch-copy]").is_disabled()
        return None, error.text_content()
    assert text.is_visible() and error.get_attribute("hidden") is not None
    return text.text_content(), None


#: Atlas inputs over the default (GPT-3 175B) whose exports cover text and refusals for every framework.
LAUNCH_VECTORS = [
    {},
    {"precision": "bf16-adam", "overlap_grad_reduce": "false"},
    {"zero": "3", "interleave": "2"},
    {"device_memory": "24GiB"},  # does not fit: every framework refuses
    {"preset": "llama3-8b"},
    {"preset": "mixtral-8x7b"},
]


def vector_inputs(calc: Calculator, start: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    if "preset" in extra:
        return {**start, **COMMANDS["plan"].fields(PRESETS[extra["preset"]].inputs)}
    return {**start, **extra}


def test_atlas_launch_panel_is_the_cli_export(page, tmp_path):
    """For each vector and framework the panel shows exactly `calc export`'s text, or its one-line refusal."""
    calc = open_tool(page, "plan", ATLAS)
    start = calc.inputs()
    seen = {"text": 0, "refused": 0}
    for extra in LAUNCH_VECTORS:
        inputs = vector_inputs(calc, start, extra)
        assert calc.set_inputs(inputs) == "ready", (extra, calc.status())
        for framework in FRAMEWORKS:
            expected = cli_export(inputs, framework, tmp_path)
            assert shown_launch(calc, framework) == expected, (extra, framework)
            seen["text" if expected[0] is not None else "refused"] += 1
    assert seen["text"] >= 6 and seen["refused"] >= 6, seen


def test_atlas_launch_prerendered_for_the_default_inputs(browser, base_url, watch, tmp_path):
    """With JavaScript off the panel holds the build's export of the default inputs, the same as the CLI's."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(ATLAS)
        root = page.locator("#atlas")
        inputs = root.evaluate(
            "r => Object.fromEntries([...r.querySelectorAll('.calc__form [name]')].map(f => [f.name, f.value]))")
        for framework in FRAMEWORKS:
            text, error = cli_export(inputs, framework, tmp_path)
            panel = root.locator(f'[data-launch-panel="{framework}"]')
            if text is not None:
                assert panel.locator("[data-launch-text]").text_content() == text, framework
            else:
                assert panel.locator("[data-launch-error]").text_content() == error, framework
                assert panel.locator("[data-launch-text]").text_content() == ""
    finally:
        context.close()


def test_unexportable_plan_shows_the_reason_and_no_stale_text(page, tmp_path):
    """DeepSpeed takes the plan; then the overlap it cannot do is asked for: one line, the old text gone;
    then the inputs are wrong: the panel is marked not current and nothing can be copied."""
    calc = open_tool(page, "plan", ATLAS)
    start = calc.inputs()
    good = {**start, "precision": "bf16-adam", "overlap_grad_reduce": "false"}
    assert calc.set_inputs(good) == "ready"
    text, _ = shown_launch(calc, "deepspeed")
    assert text == cli_export(good, "deepspeed", tmp_path)[0] and "train_micro_batch_size_per_gpu" in text
    bad = {**good, "overlap_grad_reduce": "true"}
    assert calc.set_inputs(bad) == "ready"
    _, error = shown_launch(calc, "deepspeed")
    assert error == cli_export(bad, "deepspeed", tmp_path)[1]
    assert error.startswith("parallel.overlap_grad_reduce must be false for DeepSpeed")
    assert calc.set_inputs({**good, "layers": "abc"}) == "error"
    assert calc.root.locator("[data-launch]").get_attribute("data-current") == "false"
    assert calc.root.locator("[data-launch-copy]").is_disabled()
    outline = calc.root.locator("[data-launch]").evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline == "dashed"
    assert calc.root.locator("details.calc__fold").evaluate("d => d.open"), "the wrong field is folded away"
    assert calc.set_inputs(start) == "ready"


def test_planner_rows_launch_as_the_cli_exports_them(page, tmp_path):
    """Each row chosen in the planner's panel shows `calc export` of that row's plan."""
    calc = open_tool(page, "search", PLANNER)
    inputs = calc.inputs()
    plans = evaluate("search", inputs)["plans"]
    options = calc.root.locator("[data-launch-row] option")
    assert options.count() == len(plans) >= 3
    assert [options.nth(i).text_content() for i in range(len(plans))] == [f"#{p['rank']}" for p in plans]
    for i in (0, 2, len(plans) - 1):
        calc.root.locator("[data-launch-row]").select_option(str(i))
        row = plan_inputs(inputs, plans[i]["parallel"])
        for framework in FRAMEWORKS:
            assert shown_launch(calc, framework) == cli_export(row, framework, tmp_path), (i, framework)


@pytest.mark.parametrize("clipboard_api", [True, False], ids=["clipboard-api", "fallback"])
def test_copy_puts_the_shown_text_on_the_clipboard(browser, base_url, watch, clipboard_api):
    """Copy writes the shown text to the clipboard and says "Copied" politely; without the Clipboard API
    (here made to refuse) the fallback copies the same text. Its own context: clipboard permissions."""
    context = open_context(browser, base_url, watch, permissions=["clipboard-read", "clipboard-write"])
    try:
        if not clipboard_api:
            context.add_init_script("navigator.clipboard.writeText = () => Promise.reject(new Error('refused'))")
        page = context.new_page()
        page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
        page.goto(ATLAS)
        calc = Calculator(page, "plan")
        assert calc.wait_state("ready") == "ready"
        wait(calc, PANEL_CURRENT)
        copied = calc.root.locator("[data-launch-copied]")
        assert copied.get_attribute("role") == "status"
        calc.root.locator("[data-launch-copy]").click()
        page.wait_for_function("el => el.textContent === 'Copied'", arg=copied.element_handle())
        shown = calc.root.locator('[data-launch-panel="megatron"] [data-launch-text]').text_content()
        assert page.evaluate("navigator.clipboard.readText()") == shown and "--tensor-model-parallel-size" in shown
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()


def compare_values(calc: Calculator) -> dict[str, str]:
    return calc.root.evaluate(
        "r => Object.fromEntries([...r.querySelectorAll('[data-pin-view] [data-compare]')]"
        ".map(s => [s.dataset.compare, s.dataset.value]))")


def cli_compare(a: dict[str, str], b: dict[str, str], tmp_path) -> dict[str, str]:
    proc = cli("compare", write_spec(a, tmp_path / "A.json"), write_spec(b, tmp_path / "B.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = {key: json.dumps(value) for key, value in json.loads(proc.stdout).items()}
    for key, text in out.items():
        assert f'"{key}": {text}' in proc.stdout, key  # as printed, not re-encoded
    return out


def test_pin_change_compare_reload_unpin(page, tmp_path):
    """Pin, change the split: the comparison is `calc compare` of the two SPECs, differing rows marked;
    the pin is in the URL and survives a reload; Unpin removes it and the comparison."""
    calc = open_tool(page, "plan", ATLAS)
    pinned = calc.inputs()
    calc.root.locator("[data-pin-set]").click()
    assert "pin" in dict(parse_qsl(urlsplit(page.url).query, keep_blank_values=True))
    current = {**pinned, "tensor_parallel": "4", "pipeline_parallel": "16", "recompute": "selective"}
    assert calc.set_inputs(current) == "ready"
    wait(calc, PIN_CURRENT)
    expected = cli_compare(pinned, current, tmp_path)
    got = compare_values(calc)
    assert got == expected
    reason = calc.root.locator("[data-pin-reason]")
    assert reason.is_visible() and reason.text_content() == json.loads(expected["reason"])
    result = {k: json.loads(v) for k, v in expected.items()}
    step = calc.root.locator('[data-table="compare-step"] tbody tr')
    assert step.count() == len(result["step_time"])
    marked = calc.root.locator('[data-table="compare-step"] tbody tr.is-changed').count()
    assert marked == sum(r["a_s"] != r["b_s"] for r in result["step_time"]) > 0
    comms = calc.root.locator('[data-table="compare-communications"] tbody tr')
    assert comms.count() == len(result["communications"])
    settings = calc.root.locator('[data-table="compare-settings"] tbody tr')
    assert settings.count() == len(result["settings"]) == 3

    settled_url(page)
    page.reload()
    calc = Calculator(page, "plan")
    assert calc.wait_state("ready") == "ready"
    wait(calc, PIN_CURRENT)
    assert calc.inputs() == current
    assert compare_values(calc) == expected

    calc.root.locator("[data-pin-clear]").click()
    assert "pin" not in dict(parse_qsl(urlsplit(page.url).query, keep_blank_values=True))
    assert calc.root.locator("[data-pin-view] > *").count() == 0
    assert calc.root.locator("[data-pin-clear]").is_hidden()
    assert calc.root.locator("[data-pin-status]").text_content() == "Unpinned."
    assert calc.set_inputs(pinned) == "ready"
    assert calc.root.locator("[data-pin-view] > *").count() == 0


@pytest.mark.parametrize("pin,message", [
    ('"><img src=x onerror="window.__pwned=1">', "Cannot compare: pin must be the atlas's query string"),
    ("layers=<script>window.__pwned=1</script>", "Cannot compare: a.model.layers must be"),
    ("layers=12", "Cannot compare: model.layers must be the same in A and B"),
    ("zero=1&" * (MAX_PIN_CHARS // 7 + 1), f"Cannot compare: pin must be the atlas's query string, at most {MAX_PIN_CHARS}"),
], ids=["markup", "script", "other-model", "too-long"])
def test_a_hostile_or_wrong_pin_is_one_line_and_runs_nothing(page, pin, message):
    """A pin from a link is checked by calc like any input: one line beside the panel, nothing executed."""
    calc = open_tool(page, "plan", ATLAS + "?" + urlencode({"pin": pin}))
    wait(calc, PIN_CURRENT)
    error = calc.root.locator("[data-pin-error]")
    assert error.is_visible() and error.text_content().startswith(message), error.text_content()
    assert "\n" not in error.text_content()
    assert calc.root.locator("[data-pin-view] > *").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert calc.root.locator("[data-pin] img, [data-pin] script").count() == 0


def test_tool_pages_use_the_width_fold_the_model_and_draw_12px_labels(browser, base_url, watch):
    """At 1280 px: no navigation or contents sidebar, the split visible (above or beside the drawing) and
    the model folded, and every label of every drawing shown at least 12 px as rendered. Its own context:
    the 1280 px viewport."""
    context = open_context(browser, base_url, watch, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        for path in TOOLS:
            page.goto(path)
            # a page with a mode switch (the atlas) shows one tool once calc-mode.mjs has run: wait for it
            page.wait_for_function("() => !document.querySelector('[data-modes]')?.hidden")
            root = page.locator("[data-calc]:not([hidden])")  # the atlas: the mode shown (calc-mode.mjs)
            assert page.locator(".md-sidebar--primary").is_hidden(), path
            assert page.locator(".md-sidebar--secondary").is_hidden(), path
            fold = root.locator("details.calc__fold")
            if path == "/tools/timeline/":  # three fields, all of the schedule: nothing to fold
                assert fold.count() == 0 and root.locator(".calc__form [name]").first.is_visible()
            else:
                assert fold.count() == 1 and not fold.evaluate("d => d.open"), path
                assert fold.locator("summary").text_content() == "Edit the model and hardware"
                assert root.locator('.calc__form [name="layers"]').is_hidden(), path
            # the drawings shown (the atlas is drawn wide and narrow; the page shows the one that fits; a mode
            # switch hides the other tool)
            smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll("[data-calc]:not([hidden]) svg.draw")]
              .filter((svg) => svg.getBoundingClientRect().width > 0).flatMap((svg) => {
                const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                return [...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
            }))""")
            if path != PLANNER:  # the planner draws no diagram
                assert 12 <= smallest < 100, (path, smallest)
        page.goto(ATLAS + "?layers=48")  # a shared link that changes a folded field opens the fold
        assert Calculator(page, "plan").wait_state("ready") == "ready"  # mounted: the link has been read
        atlas = page.locator("#atlas")
        assert atlas.locator("details.calc__fold").evaluate("d => d.open")
        split, drawing = atlas.locator('.calc__form [name="tensor_parallel"]'), atlas.locator("svg.draw:visible")
        assert split.is_visible()  # beside the drawing at 1280 px (tests/browser/test_browser_layout.py)
        box, figure = split.bounding_box(), drawing.bounding_box()
        assert box["y"] < figure["y"] or box["x"] + box["width"] < figure["x"]
    finally:
        context.close()


def test_the_fold_opens_from_the_keyboard_and_its_fields_follow(page):
    """Tab from the last preset reaches "Edit the model and hardware"; Enter opens it; Tab goes on to its
    first field; Enter again folds it."""
    calc = open_tool(page, "plan", ATLAS)
    calc.root.locator("[data-preset]").last.focus()
    page.keyboard.press("Tab")
    summary = calc.root.locator("details.calc__fold > summary")
    assert summary.evaluate("el => el === document.activeElement")
    page.keyboard.press("Enter")
    page.wait_for_function("d => d.open", arg=calc.root.locator("details.calc__fold").element_handle())
    page.keyboard.press("Tab")
    first = calc.root.locator("details.calc__fold [name]").first
    assert first.evaluate("el => el === document.activeElement") and first.is_visible()
    summary.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("d => !d.open", arg=calc.root.locator("details.calc__fold").element_handle())
    assert first.is_hidden()


def rgb(css: str) -> tuple[float, float, float, float]:
    """A computed colour (``rgb(r, g, b)`` or ``rgba(r, g, b, a)``) as four numbers."""
    parts = [float(x) for x in css[css.index("(") + 1:-1].replace("/", ",").replace(" ", ",").split(",") if x]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def over(c: tuple, page: tuple) -> tuple:
    """Colour ``c`` (with its alpha) as seen over the opaque ``page``."""
    return (*(x * c[3] + y * (1 - c[3]) for x, y in zip(c[:3], page[:3])), 1.0)


def contrast(a: tuple, b: tuple) -> float:
    """WCAG 2 contrast ratio of two opaque colours."""
    def lum(c):
        ch = [x / 255 for x in c[:3]]
        ch = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in ch]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


#: The Copy button's look once its colour transitions (the theme's) have finished, and the page's
#: background behind it.
LOOK = """async (button) => {
  await Promise.all(button.getAnimations().map((a) => a.finished));
  const s = getComputedStyle(button);
  return {background: s.backgroundColor, color: s.color, border: s.borderTopStyle, borderColor: s.borderTopColor,
          cursor: s.cursor, page: getComputedStyle(document.body).backgroundColor};
}"""


def test_disabled_copy_looks_disabled_in_both_palettes(page):
    """Copy is filled while it can copy and outlined, dashed and grey while it cannot (a refusal is
    shown); the fill stands 3:1 or more against the page in the light and the dark palette."""
    calc = open_tool(page, "plan", ATLAS)
    start = calc.inputs()
    copy = calc.root.locator("[data-launch-copy]")
    framework = FRAMEWORKS[0]
    looks = {}
    try:
        for scheme in ("default", "slate"):
            page.evaluate("s => document.body.setAttribute('data-md-color-scheme', s)", scheme)
            assert calc.set_inputs(start) == "ready"
            assert shown_launch(calc, framework)[0] is not None and copy.is_enabled()
            enabled = copy.evaluate(LOOK)
            assert calc.set_inputs({**start, "device_memory": "24GiB"}) == "ready"
            assert shown_launch(calc, framework)[1] is not None and copy.is_disabled()
            disabled = copy.evaluate(LOOK)
            looks[scheme] = enabled, disabled
            assert (enabled["border"], disabled["border"]) == ("solid", "dashed"), scheme
            assert enabled["cursor"] != disabled["cursor"] == "not-allowed"
            assert enabled["color"] != disabled["color"] and rgb(disabled["background"])[3] == 0, looks
            assert contrast(rgb(enabled["background"]), rgb(enabled["page"])) >= 3, looks
            page_colour = rgb(disabled["page"])
            assert contrast(over(rgb(disabled["color"]), page_colour), page_colour) >= 3, looks
    finally:
        page.evaluate("() => document.body.setAttribute('data-md-color-scheme', 'default')")
        calc.set_inputs(start)
    assert looks["default"] != looks["slate"]
