"""The live calculators in Chromium: same numbers as the CLI, errors next to the field, never stale."""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import Calculator, cli_json, open_context, settled_url, visit
from tests.browser.vectors import ALLREDUCE, BATCH

from calc.api import COMMANDS, evaluate, format_result
from calc.errors import CalcError
from calc.series import MAX_VIEW_RANKS

pytestmark = pytest.mark.browser

PAGES = {"batch": "/calculators/batch/", "allreduce": "/calculators/allreduce/"}
VECTORS = {"batch": BATCH, "allreduce": ALLREDUCE}


def open_calculator(page, command: str) -> Calculator:
    visit(page, PAGES[command])
    calc = Calculator(page, command)
    assert calc.wait_state("ready") == "ready", calc.status()
    return calc


@pytest.mark.parametrize("command", PAGES)
def test_prerendered_results_are_the_cli_defaults(browser, base_url, watch, command):
    """With JavaScript off, the page shows the CLI's results and formatted text for the default inputs."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(PAGES[command])
        calc = Calculator(page, command)
        assert calc.state == "static"
        example = COMMANDS[command].example
        assert calc.values() == {k: v for k, v in cli_json(command, example).items() if k in calc.values()}
        assert calc.texts() == expected_texts(command, example)
        assert calc.inputs() == COMMANDS[command].fields(example)
        assert watch.offsite == [] and not watch.paths(".wasm")
    finally:
        context.close()


def expected_texts(command: str, inputs: dict[str, str]) -> dict[str, str]:
    result = evaluate(command, inputs)
    return {r.key: format_result(r.unit, result[r.key]) for r in COMMANDS[command].results}


@pytest.mark.parametrize("command", PAGES)
def test_live_defaults_equal_cpython(page, command):
    """Once Python has run in the page, the default results are still exactly the CLI's."""
    calc = open_calculator(page, command)
    expected = cli_json(command, COMMANDS[command].example)
    assert calc.values() == {k: expected[k] for k in calc.values()}
    assert calc.current()
    assert "in your browser" in calc.status()


@pytest.mark.parametrize("command", PAGES)
def test_parity_with_the_cli(page, command):
    """For every vector, each data-value is the JSON text `python -m calc ... --json` prints."""
    calc = open_calculator(page, command)
    mismatches = []
    for vector in VECTORS[command]:
        assert calc.set_inputs(vector) == "ready", (vector, calc.status())
        expected = cli_json(command, vector)
        got = calc.values()
        wrong = {k: (got[k], expected[k]) for k in got if got[k] != expected[k]}
        if wrong:
            mismatches.append((vector, wrong))
        assert calc.current()
    assert len(VECTORS[command]) >= 20
    assert mismatches == []


INVALID = {
    "batch": [
        ("micro_batch", ""), ("micro_batch", "abc"), ("micro_batch", "-1"), ("micro_batch", "0"),
        ("micro_batch", "1e309"), ("micro_batch", "NaN"), ("micro_batch", "2.5"), ("accumulation", "1.5"),
        ("data_parallel", "eight"), ("seq_len", "-4096"), ("padding_fraction", "1"),
        ("gpus", "100", {"tensor_parallel": "8"}), ("gpus", "64", {"tensor_parallel": "3", "data_parallel": ""}),
        ("microbatch_sizes", "8,8;x"), ("microbatch_sizes", "10"),  # the second names microbatch_sizes[0][0]
    ],
    "allreduce": [
        ("ranks", "abc"), ("ranks", "-1"), ("ranks", "0"), ("ranks", "1e309"), ("ranks", "NaN"),
        ("ranks", "2.5"), ("payload", "abc"), ("payload", "-1"), ("payload", "1e309"), ("payload", "NaN B"),
        ("bandwidth", "0"), ("bandwidth", "10 parsecs"), ("startup", "-5us"), ("startup", "1e309"),
    ],
}


def expected_error(command: str, inputs: dict[str, str]) -> CalcError:
    with pytest.raises(CalcError) as info:
        evaluate(command, inputs)
    return info.value


@pytest.mark.parametrize("command", PAGES)
def test_invalid_inputs_show_calc_message_and_no_current_result(page, command):
    """Each invalid input shows CalcError's text next to its field; results are marked not current."""
    calc = open_calculator(page, command)
    example = dict(COMMANDS[command].example)
    for case in INVALID[command]:
        name, value, *extra = case
        inputs = {**example, **(extra[0] if extra else {}), name: value}
        error = expected_error(command, inputs)
        field = error.param.split("[")[0]  # an element of a list is shown at the list's field
        assert calc.set_inputs(inputs) == "error", (case, calc.status())
        assert calc.field_error(field) == str(error), case
        assert not calc.current(), case
        assert calc.root.locator(".calc__stale").is_visible(), case
        assert "Traceback" not in calc.root.text_content()
        others = [p.name for p in COMMANDS[command].params if p.name != field]
        assert all(calc.field_error(n) is None for n in others), case
        # fixing the input brings back current results and clears the message
        assert calc.set_inputs(example) == "ready"
        assert calc.current() and calc.field_error(field) is None


def test_unit_syntax_in_text_fields(page):
    """Size, bandwidth and time fields take the CLI's unit syntax."""
    calc = open_calculator(page, "allreduce")
    inputs = {"ranks": "8", "payload": "1GiB", "bandwidth": "100GB/s", "startup": "5us"}
    for payload in ("1GiB", "1 GiB", "1073741824", "1.073741824GB", "1024MiB"):
        assert calc.set_inputs({**inputs, "payload": payload}) == "ready", payload
        assert calc.texts() == expected_texts("allreduce", inputs), payload
    assert calc.set_inputs({**inputs, "bandwidth": "800Gbit/s", "startup": "0.005ms"}) == "ready"
    assert calc.values() == {k: v for k, v in cli_json("allreduce", inputs).items() if k in calc.values()}


def test_an_older_answer_never_overwrites_a_newer_one(page):
    """Many quick edits: what stays on screen belongs to the last input."""
    calc = open_calculator(page, "allreduce")
    calc.root.evaluate(
        """root => {
            const field = root.querySelector('[name="ranks"]');
            for (let p = 2; p <= 300; p++) {
                field.value = String(p);
                field.dispatchEvent(new Event("input", {bubbles: true}));
            }
        }"""
    )
    calc.wait_state("ready")
    assert calc.values()["steps"] == cli_json("allreduce", {"ranks": "300"})["steps"] == "598"


def test_typing_updates_the_result(page):
    """Real key presses in a field update the result and say nothing is wrong."""
    calc = open_calculator(page, "batch")
    field = calc.root.locator('[name="accumulation"]')
    field.fill("")
    field.press_sequentially("32")
    calc.wait_state("ready")
    assert calc.values()["global_batch"] == "16384"
    assert settled_url(page).endswith("?accumulation=32")


def test_allreduce_chart_marks_current_point_and_crossover(page):
    """The chart follows the inputs: one marked point per panel and a crossover line where it is in range."""
    calc = open_calculator(page, "allreduce")
    chart = calc.root.locator("[data-chart]")
    assert chart.locator("svg").count() == 2
    assert chart.locator(".chart__current").count() == 2
    assert chart.locator(".chart__crossover").count() == 2  # p·α·β = 32 MB and p = n/(α·β) ≈ 2,147
    before = chart.locator(".chart__current").first.get_attribute("cx")
    calc.set_inputs({"ranks": "8", "payload": "100kB"})
    assert chart.locator(".chart__current").first.get_attribute("cx") != before
    assert chart.locator(".chart__crossover").count() == 1  # p = n/(α·β) = 0.2: off the ranks axis
    assert "crossover 4 MB" in chart.text_content()


#: Each panel of the chart as [tag, attributes sorted, own text] per element, to compare two drawings of it (the
#: build's inline SVG declares its namespace with an attribute, createElementNS does not).
DRAWN = """figure => [...figure.querySelectorAll("svg")].map(svg => [svg, ...svg.querySelectorAll("*")].map(el => [
    el.tagName.toLowerCase(), el.getAttributeNames().filter(n => n !== "xmlns").sort().map(n => [n, el.getAttribute(n)]),
    el.children.length ? "" : el.textContent]))"""


def test_allreduce_chart_is_drawn_without_javascript(browser, base_url, watch):
    """With JavaScript off, the chart is there for the default inputs: two titled panels, each marking them."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(PAGES["allreduce"])
        chart = page.locator("[data-chart]")
        assert chart.locator("svg[role=img]").count() == 2 and chart.locator(".chart__current").count() == 2
        time_text = expected_texts("allreduce", COMMANDS["allreduce"].example)["time_s"]
        assert f"{time_text} at 64 ranks" in chart.locator("svg title").first.text_content()
    finally:
        context.close()


def test_allreduce_chart_of_the_build_stays_at_the_defaults_and_matches_the_page_drawing(page):
    """Python's first answer (the defaults) keeps the build's panels (no new nodes at load); other inputs redraw
    them, and going back to the defaults draws, in the page, what the build drew."""
    calc = open_calculator(page, "allreduce")
    chart = calc.root.locator("[data-chart]")
    assert calc.root.get_attribute("data-ms") is not None
    assert chart.get_attribute("data-built") == ""
    built = chart.evaluate(DRAWN)
    calc.set_inputs({"ranks": "8", "payload": "100kB"})
    assert chart.get_attribute("data-built") is None and chart.evaluate(DRAWN) != built
    calc.set_inputs(COMMANDS["allreduce"].fields(COMMANDS["allreduce"].example))
    assert chart.evaluate(DRAWN) == built


def test_ring_step_through_with_the_keyboard(page):
    """The step-through follows calc's schedule and is operable with Tab, Enter and arrow keys."""
    calc = open_calculator(page, "allreduce")
    calc.set_inputs({"ranks": "3"})
    ring = calc.root.locator("[data-ring]")
    ring.scroll_into_view_if_needed()  # drawn when it comes near the screen
    page.wait_for_function("r => r.querySelector('.ring__table') && r.querySelectorAll('tbody tr').length === 3",
                           arg=ring.element_handle())
    slider = ring.locator('input[type="range"]')
    assert slider.get_attribute("max") == "4"
    slider.focus()
    page.keyboard.press("ArrowRight")
    assert "Step 1 of 4, reduce-scatter" in ring.locator(".ring__caption").text_content()
    moves = ring.locator(".ring__moves li").all_text_contents()
    assert moves == ["rank 0 → rank 1: chunk 0, added", "rank 1 → rank 2: chunk 1, added",
                     "rank 2 → rank 0: chunk 2, added"]
    next_button = ring.get_by_role("button", name="Next step")
    next_button.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    assert "Step 3 of 4, all-gather" in ring.locator(".ring__caption").text_content()
    page.keyboard.press("Enter")
    assert "Done" in ring.locator(".ring__caption").text_content()
    assert set(ring.locator("tbody td").all_text_contents()) == {"3/3"} | {f"3/3 ← {r}" for r in range(3)}
    assert next_button.is_disabled()


def test_ring_larger_than_drawn_keeps_the_drawing_and_the_step(page):
    """Rings larger than calc draws are drawn at calc's size: going from one to another changes only the note (with
    calc's step count), the reader's step stays; a ring within that size is drawn again, from its start."""
    calc = open_calculator(page, "allreduce")
    ring = calc.root.locator("[data-ring]")
    ring.scroll_into_view_if_needed()  # drawn when it comes near the screen
    note, slider = ring.locator(".ring__note"), ring.locator('input[type="range"]')
    drawn = min(20, MAX_VIEW_RANKS)
    calc.set_inputs({"ranks": "20"})
    page.wait_for_function("([r, n]) => r.querySelectorAll('tbody tr').length === n && "
                           "r.querySelector('.ring__note').textContent.includes('ring of 20')",
                           arg=[ring.element_handle(), drawn])
    ring.get_by_role("button", name="Next step").click()
    ring.get_by_role("button", name="Next step").click()
    assert slider.input_value() == "2"
    table = ring.locator(".ring__table").element_handle()
    calc.set_inputs({"ranks": "50"})
    page.wait_for_function("r => r.querySelector('.ring__note').textContent.includes('ring of 50')",
                           arg=ring.element_handle())
    assert note.text_content() == (f"Drawn for {drawn} ranks; a ring of 50 follows the same pattern in "
                                   f"{calc.values()['steps']} steps.")
    assert slider.input_value() == "2" and "Step 2 of" in ring.locator(".ring__caption").text_content()
    assert table.evaluate("t => t.isConnected")  # the same drawing, not a new one
    calc.set_inputs({"ranks": "3"})
    page.wait_for_function("r => r.querySelectorAll('tbody tr').length === 3", arg=ring.element_handle())
    assert slider.input_value() == "0" and note.text_content() == "Drawn for the 3 ranks above."


def test_ring_far_off_screen_is_drawn_when_it_comes_near(page):
    """Far below the screen the ring is neither asked for nor drawn when the inputs change (data-due holds the
    ranks it waits for, and what it shows is dimmed); scrolled near, it is drawn for the newest ranks."""
    calc = open_calculator(page, "allreduce")
    page.evaluate("window.scrollTo(0, 0)")
    ring = calc.root.locator("[data-ring]")
    far = ring.evaluate("r => r.getBoundingClientRect().top > innerHeight * 1.2")
    assert far, "the test needs the ring more than a tenth of a screen below the viewport"
    calc.set_inputs({"ranks": "3"})
    calc.set_inputs({"ranks": "5"})
    assert ring.get_attribute("data-due") == "5"  # what it holds (nothing, or an earlier page's ring) is dimmed
    assert ring.evaluate("r => r.querySelectorAll('.ring__table tbody tr').length") != 5
    assert ring.locator(".ring__view").evaluate("v => getComputedStyle(v).opacity") == "0.35"
    ring.scroll_into_view_if_needed()
    page.wait_for_function("r => r.querySelectorAll('.ring__table tbody tr').length === 5 && !('due' in r.dataset)",
                           arg=ring.element_handle())
    assert ring.locator(".ring__note").text_content() == "Drawn for the 5 ranks above."
    assert ring.locator(".ring__view").evaluate("v => getComputedStyle(v).opacity") == "1"


@pytest.mark.parametrize("command", PAGES)
def test_a_1_mb_value_is_a_field_error(page, command):
    """A 1 MB value in a field of each kind: calc's message next to that field, results not current."""
    calc = open_calculator(page, command)
    example = dict(COMMANDS[command].example)
    one_per_kind = {p.kind: p for p in reversed(COMMANDS[command].params)}.values()
    for p in one_per_kind:
        inputs = {**example, p.name: "9" * 1_000_000 + "x"}
        error = expected_error(command, inputs)
        assert error.param == p.name
        assert calc.set_inputs(inputs) == "error", (p.name, calc.status())
        assert calc.field_error(p.name) == str(error)
        assert not calc.current()
    assert calc.set_inputs(example) == "ready"
