"""calc.views for the inference calculator: the latency/throughput sweep and the tables the page shows."""

import json

from calc.api import COMMANDS, evaluate, run
from calc.presets import INFERENCE_DEFAULT, INFERENCE_PRESETS
from calc.page import page_request
from calc.views import page_view, serving_sweep
from hooks.markers import MARKER_RE, parse
from hooks.views import render_marker


def test_sweep_doubles_from_the_expert_degree_to_the_largest_batch_that_fits():
    """Batches e, 2e, 4e, ... below the most that fit, that most, and the current batch; each is infer's answer."""
    inputs = dict(INFERENCE_PRESETS["mixtral-8x7b-serve"].inputs)
    values, result = run("infer", inputs)
    points = serving_sweep(values, result)
    batches = [p["batch"] for p in points]
    most = result["max_concurrent_sequences"]
    assert batches[0] == 4 and batches[-1] == most and int(inputs["batch"]) in batches
    assert batches == sorted(set(batches))
    for p in points[:3]:
        again = evaluate("infer", {**inputs, "batch": str(p["batch"])})
        assert p["decode_time_per_token_s"] == again["decode_time_per_token_s"]
    assert [p["decode_time_per_token_s"] for p in points] == sorted(p["decode_time_per_token_s"] for p in points)


def test_infer_view_has_the_chart_the_memory_bars_and_the_tables():
    """Two drawings (the chart with a point per sweep batch, the memory bars) and six tables."""
    inputs = dict(COMMANDS["infer"].example)
    values, result = run("infer", inputs)
    view = page_view("infer", inputs, values, result)
    chart, bars = view["figures"]
    points = [i for i in chart["items"] if i["t"] == "g" and i["cls"].startswith("sv-pt")]
    assert len(points) == len(view["tables"]["sweep"]["rows"])
    assert sum("sv-pt--current" in p["cls"] for p in points) == 1
    assert any("mem-seg--kv_cache" in i.get("cls", "") for i in bars["items"])
    assert set(view["tables"]) == {"time", "sweep", "memory", "crossings", "prefill", "stages"}
    assert len(view["tables"]["crossings"]["rows"]) == len(result["communications"])
    assert "per generated token" in view["tables"]["crossings"]["caption"]


def test_the_worker_answers_with_the_same_view():
    """page_request gives the page the view the build draws, from the same inputs."""
    inputs = dict(COMMANDS["infer"].example)
    answer = json.loads(page_request(json.dumps({"op": "evaluate", "command": "infer", "inputs": inputs})))
    assert answer["ok"] and answer["view"] == json.loads(json.dumps(page_view("infer", inputs, *run("infer", inputs))))


def test_tool_marker_offers_the_serving_presets_and_groups_the_serving_fields():
    """calc:tool infer with presets=all: one button per serving preset, a Serving group, no training presets."""
    html = render_marker(parse(MARKER_RE.search(f"<!-- calc:tool infer id=inf preset={INFERENCE_DEFAULT} "
                                                "presets=all -->")))
    assert html.count("data-preset=") == len(INFERENCE_PRESETS) and 'data-preset="gpt3-175b"' not in html
    assert ">Serving<" in html and 'name="weight_precision"' in html


def test_every_serving_preset_evaluates():
    """Each preset is a complete, valid set of infer inputs."""
    for name, preset in INFERENCE_PRESETS.items():
        assert evaluate("infer", dict(preset.inputs))["max_concurrent_sequences"] >= int(preset.inputs["batch"]), name
