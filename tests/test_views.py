"""calc.views: what each tool page shows beside its results (schedules, the planner's links, the serving sweep)."""

import json
from urllib.parse import parse_qsl, urlsplit

import pytest

from calc.api import COMMANDS, evaluate, run
from calc.page import page_request
from calc.presets import ATLAS_DEFAULT, INFERENCE_PRESETS, PRESETS
from calc.views import atlas_defaults, atlas_query, page_view, serving_sweep

def test_bubble_view_has_three_schedules_and_measured_fractions():
    """GPipe, 1F1B and interleaved are drawn; the table gives the measured fraction and share."""
    inputs = {"pipeline_parallel": "4", "microbatches": "8", "interleave": "2"}
    view = page_view("bubble", inputs, *run("bubble", inputs))
    assert len(view["figures"]) == 3
    rows = view["tables"]["schedules"]["rows"]
    assert [r[0] for r in rows] == ["GPipe", "1F1B", "Interleaved 1F1B"]
    assert rows[2][4] == "0.1875" and rows[0][4] == "0.375"


def test_planner_links_restore_the_plan_in_the_atlas():
    """A planner link's query, read over the atlas's defaults, gives the same plan as the search found."""
    inputs = dict(PRESETS["llama3-8b"].inputs)
    search_inputs = {k: x for k, x in inputs.items() if k in {p.name for p in COMMANDS["search"].params}
                     and k != "micro_batch"}
    values, result = run("search", search_inputs)
    view = page_view("search", search_inputs, values, result)
    for row, summary in zip(view["tables"]["plans"]["rows"], result["plans"]):
        link = row[-1]["href"]
        assert link.startswith("../atlas/?")
        atlas = {**atlas_defaults(), **dict(parse_qsl(urlsplit(link).query, keep_blank_values=True))}
        plan = evaluate("plan", atlas)
        assert plan["step_time_s"] == summary["step_time_s"]


def test_atlas_query_names_only_non_defaults():
    """The atlas's own default configuration gives an empty query."""
    par = {k: PRESETS[ATLAS_DEFAULT].inputs[k] for k in ("data_parallel", "tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel", "zero",
                                                         "recompute", "interleave", "micro_batch")}
    par["sequence_parallel"] = False
    assert atlas_query(dict(PRESETS[ATLAS_DEFAULT].inputs), par) == ""


def test_sweep_doubles_from_the_expert_degree_to_the_largest_batch_that_fits():
    """Batches e, 2e, 4e, ... below the most that fit, that most, and the current batch; each is infer's answer."""
    inputs = dict(INFERENCE_PRESETS["mixtral-8x7b-serve"].inputs)
    values, result = run("infer", inputs)
    points = serving_sweep(values, result)
    batches = [p["batch"] for p in points]
    most = result["max_concurrent_sequences"]
    assert batches[0] == 4 and batches[-1] == most and int(inputs["batch"]) in batches
    assert batches == sorted(set(batches))
    for p in points:  # computed with one shared memo (infer_at_batches): each equals infer's own answer
        again = evaluate("infer", {**inputs, "batch": str(p["batch"])})
        assert p == {"batch": p["batch"], "decode_time_per_token_s": again["decode_time_per_token_s"],
                     "decode_floor_s": again["decode_floor_s"],
                     "tokens_per_s_per_replica": again["tokens_per_s_per_replica"],
                     "memory_bytes": again["memory_per_device"]["total_bytes"]}
    assert [p["decode_time_per_token_s"] for p in points] == sorted(p["decode_time_per_token_s"] for p in points)


def test_sweep_points_are_kept_for_inputs_that_differ_only_in_the_batch(monkeypatch):
    """Another batch reuses the points of the last inputs (computing only the size that was the batch before), and they
    equal the points computed afresh; any other change computes them all; at most _SWEEP_POINTS_KEPT are kept."""
    from calc import views  # the module the test patches, whichever copy doctest collection left in sys.modules
    inputs = dict(INFERENCE_PRESETS["llama3-8b-serve"].inputs)
    monkeypatch.setattr(views, "_SWEEP_POINTS", {})
    views.serving_sweep(*run("infer", {**inputs, "batch": "8"}))
    asked, real = [], views.decode_points
    monkeypatch.setattr(views, "decode_points", lambda values, batches: asked.append(batches) or real(values, batches))
    kept = views.serving_sweep(*run("infer", {**inputs, "batch": "24"}))
    assert asked == [[8]]
    views._SWEEP_POINTS.clear()
    assert kept == views.serving_sweep(*run("infer", {**inputs, "batch": "24"}))
    asked.clear()
    fp8 = views.serving_sweep(*run("infer", {**inputs, "batch": "24", "kv_precision": "fp8"}))
    assert asked == [[p["batch"] for p in fp8 if p["batch"] != 24]] and fp8 != kept
    monkeypatch.setattr(views, "_SWEEP_POINTS_KEPT", 3)
    views.serving_sweep(*run("infer", {**inputs, "batch": "24", "kv_precision": "fp8", "output_tokens": "512"}))
    assert len(views._SWEEP_POINTS) == 3


def test_infer_view_has_the_atlas_the_chart_the_memory_bars_and_the_tables():
    """Four drawings (the serving atlas wide and narrow, the chart with a point per sweep batch, the memory bars)
    and six tables."""
    inputs = dict(COMMANDS["infer"].example)
    values, result = run("infer", inputs)
    view = page_view("infer", inputs, values, result)
    atlas, narrow, chart, bars = view["figures"]
    assert atlas["title"].startswith("Serving atlas: ") and narrow["title"] == atlas["title"]
    assert (atlas["items"][0]["cls"], narrow["items"][0]["cls"]) == ("atlas-fit atlas-fit--wide",
                                                                    "atlas-fit atlas-fit--narrow")
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


def test_every_serving_preset_evaluates():
    """Each preset is a complete, valid set of infer inputs."""
    for name, preset in INFERENCE_PRESETS.items():
        assert evaluate("infer", dict(preset.inputs))["max_concurrent_sequences"] >= int(preset.inputs["batch"]), name


@pytest.mark.parametrize("name", sorted(INFERENCE_PRESETS))
def test_the_serving_atlas_draws_every_crossing_per_generated_token(name):
    """Each communication of a serving plan is one numbered crossing, its legend per generated token;
    a replica on one GPU says nothing crosses."""
    result = evaluate("infer", dict(INFERENCE_PRESETS[name].inputs))
    wide, narrow = page_view("infer", {}, *run("infer", dict(INFERENCE_PRESETS[name].inputs)))["figures"][:2]
    for drawing in (wide, narrow):
        crossings = [i for i in drawing["items"] if i["t"] == "g" and i["cls"].startswith("atlas-crossing")]
        assert [c["data"]["strategy"] for c in crossings] == [c["strategy"] for c in result["communications"]]
        assert all("per GPU per generated token" in c["title"] for c in crossings)
    atlas = wide
    texts = [i["s"] for i in atlas["items"] if i["t"] == "text"]
    assert any(str(t).startswith("Decode step (one token for each of the batch's sequences) ") for t in texts)
    if not crossings:
        assert "Nothing crosses a device boundary: one GPU holds the whole model." in texts


@pytest.mark.parametrize("preset", sorted(INFERENCE_PRESETS))
def test_decode_points_equal_infer_at_each_batch(preset):
    """Sharing the model, hardware and memo across batch sizes, and leaving the prefill out, changes no
    decode figure of any batch."""
    from calc.commands.inference import decode_points

    values, result = run("infer", dict(INFERENCE_PRESETS[preset].inputs))
    batches = sorted({1, 2, 5, result["batch"], result["max_concurrent_sequences"]})
    batches = [b for b in batches if b % result["parallel"]["expert"] == 0]
    for b, d in zip(batches, decode_points(dict(values), batches), strict=True):
        r = COMMANDS["infer"].compute({**values, "batch": b})
        assert (d.batch, d.decode_time_per_token_s, d.decode_floor_s, d.tokens_per_s_per_replica, d.memory_bytes) == (
            b, r["decode_time_per_token_s"], r["decode_floor_s"], r["tokens_per_s_per_replica"],
            r["memory_per_device"]["total_bytes"]), b
