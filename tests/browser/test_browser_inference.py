"""The inference calculator (tools/inference.md) in Chromium: CLI parity, presets, the chart, errors, no-JS, 375 px.

Same standards as the other tool pages (test_browser_tools.py); axe checks it in every state through
test_a11y.py, which finds every calculator of the built site, and the node parity test runs infer's
example in Pyodide.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

import pytest
from tests.browser.atlas_browser import Calculator, open_context, settled_url
from tests.browser.test_browser_tools import spec_json

from calc.api import evaluate
from calc.errors import CalcError
from calc.presets import INFERENCE_DEFAULT, INFERENCE_PRESETS

pytestmark = pytest.mark.browser

PATH = "/tools/inference/"


def open_inference(page, query: str = "") -> Calculator:
    page.goto(PATH + query)
    calc = Calculator(page, "infer")
    assert calc.wait_state("ready") == "ready", calc.status()
    return calc


def chart_points(calc: Calculator) -> int:
    return calc.root.locator("[data-view] svg g.sv-pt").count()


#: Inputs changed from the default preset: splits, precisions, lengths, batch, no CUDA graphs, a bound.
VECTORS = [{}, {"tensor_parallel": "1", "data_parallel": "8"}, {"tensor_parallel": "4", "data_parallel": "1", "pipeline_parallel": "2"},
           {"weight_precision": "fp8", "kv_precision": "fp8"}, {"weight_precision": "int4", "batch": "64"},
           {"prompt_tokens": "4096", "output_tokens": "1024", "prefill_chunk": "2048"},
           {"cuda_graphs": "false", "max_latency": "5ms"}, {"tensor_parallel": "2", "data_parallel": "2", "context_parallel": "2"}]


def test_every_value_equals_the_cli_and_the_chart_redraws(page, tmp_path):
    """For each vector, every data-value is `python -m calc infer SPEC --json`'s text, and the chart has one point
    per batch of the sweep table."""
    calc = open_inference(page)
    base = calc.inputs()
    mismatches = []
    for extra in VECTORS:
        inputs = {**base, **extra}
        assert calc.set_inputs(inputs) == "ready", (extra, calc.status())
        calc.drawn()
        expected = spec_json("infer", inputs, tmp_path)
        got = calc.values()
        wrong = {k: (got[k][:80], expected[k][:80]) for k in got if got[k] != expected[k]}
        if wrong:
            mismatches.append((extra, wrong))
        rows = calc.root.locator('[data-table="sweep"] tbody tr').count()
        assert rows >= 2 and chart_points(calc) == rows, extra
        crossings = calc.root.locator('[data-table="crossings"] tbody tr').count()
        assert crossings == len(json.loads(got["communications"])), extra
        assert calc.current()
    assert mismatches == []


def test_presets_load_and_keep_the_url(page):
    """Each serving preset fills the fields, redraws, and only non-default values reach the URL."""
    calc = open_inference(page)
    default = INFERENCE_PRESETS[INFERENCE_DEFAULT].inputs
    for name, preset in INFERENCE_PRESETS.items():
        calc.root.locator(f'[data-preset="{name}"]').click()
        assert calc.wait_state("ready", "error") == "ready", name
        inputs = calc.inputs()
        assert all(inputs[k] == v for k, v in preset.inputs.items()), name
        result = evaluate("infer", inputs)
        assert calc.values()["decode_time_per_token_s"] == json.dumps(result["decode_time_per_token_s"]), name
        assert calc.root.locator(f'[data-preset="{name}"]').get_attribute("aria-pressed") == "true"
        query = dict(parse_qsl(urlsplit(settled_url(page)).query, keep_blank_values=True))
        differs = {k: v for k, v in preset.inputs.items() if v != default.get(k, "")}
        assert {k: query[k] for k in differs if k in query} == differs, name
        assert (query == {}) == (name == INFERENCE_DEFAULT), name


def test_url_restores_the_inputs(page, tmp_path):
    """Opening the page with a query restores those inputs and their results."""
    calc = open_inference(page, "?batch=64&weight_precision=fp8")
    inputs = calc.inputs()
    assert inputs["batch"] == "64" and inputs["weight_precision"] == "fp8"
    assert calc.values()["tokens_per_s"] == spec_json("infer", inputs, tmp_path)["tokens_per_s"]


#: The issue's bad input, on the page: a split that does not divide the heads (or the GPUs), a batch that does not
#: fit, a precision the profile cannot run, an output past the context; and malformed values.
INVALID = [("tensor_parallel", "6", {"gpus": "48", "data_parallel": "8"}), ("pipeline_parallel", "64", {"gpus": "64", "data_parallel": "1", "tensor_parallel": "1"}),
           ("tensor_parallel", "3", {}), ("batch", "100000", {}), ("weight_precision", "fp8", {"profile": "a100-sxm4-80gb"}),
           ("output_tokens", "9000", {}), ("prompt_tokens", "abc", {}), ("batch", "0", {}), ("gpus", "1e309", {}),
           ("max_latency", "soon", {})]


def test_invalid_inputs_show_calc_message_next_to_the_field(page):
    """Each bad input shows CalcError's text next to the field it names; results and view are not current."""
    calc = open_inference(page)
    start = calc.inputs()
    for name, value, extra in INVALID:
        inputs = {**start, **extra, name: value}
        with pytest.raises(CalcError) as info:
            evaluate("infer", inputs)
        error = info.value
        assert calc.set_inputs(inputs) == "error", (name, value, calc.status())
        assert calc.field_error(error.param) == str(error), (name, value)
        assert not calc.current() and calc.root.locator(".calc__stale").is_visible()
        assert "Traceback" not in calc.root.text_content()
        assert calc.set_inputs(start) == "ready"
        assert calc.current() and calc.field_error(error.param) is None


def test_prerendered_without_javascript(browser, base_url, watch):
    """With JavaScript off the page shows calc's results for the default preset, the chart and the tables."""
    context = open_context(browser, base_url, watch, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(PATH)
        calc = Calculator(page, "infer")
        assert calc.state == "static"
        expected = {k: json.dumps(v) for k, v in evaluate("infer", calc.inputs()).items()}
        assert calc.values() == {k: expected[k] for k in calc.values()}
        assert chart_points(calc) == calc.root.locator('[data-table="sweep"] tbody tr').count() >= 2
        assert calc.root.locator("[data-view] .tool__table").count() == 6
        assert watch.offsite == [] and not watch.paths(".wasm")
    finally:
        context.close()


def test_readable_at_375_px(browser, base_url, watch):
    """At 375 px the page does not scroll sideways: the chart scales, the tables scroll in their box."""
    context = open_context(browser, base_url, watch, viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
        for path in (PATH, "/strategies/inference/"):
            page.goto(path)
            if path == PATH:
                Calculator(page, "infer").wait_state("ready")
                shown = page.locator("[data-view] svg.draw:visible")  # the narrow atlas, the chart, the bars
                assert shown.count() == 3
                assert all(shown.nth(i).bounding_box()["width"] <= 375 for i in range(3))
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
        assert watch.errors == [] and watch.offsite == []
    finally:
        context.close()
