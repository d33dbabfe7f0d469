"""calc.diagram and calc.views: draw lists carry calc's numbers; the build's SVG is valid and deterministic."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from calc import units
from calc.api import COMMANDS, evaluate, run
from calc.diagram import atlas_layout, crossing_text, memory_bars, timeline_layout
from calc.presets import ATLAS_DEFAULT, PRESETS
from calc.page import page_request
from calc.views import atlas_query, atlas_defaults, page_view
from hooks.views import render_marker, svg, table_html
from hooks.markers import MARKER_RE, parse

SVG_NS = "{http://www.w3.org/2000/svg}"
SPLITS = [
    {},
    {"interleave": "4"},
    {"data_parallel": "32", "pipeline_parallel": "4"},
    {"data_parallel": "8", "pipeline_parallel": "16"},
    {"data_parallel": "128", "pipeline_parallel": "1", "zero": "3", "sequence_parallel": "true", "recompute": "selective"},
    {"data_parallel": "8", "context_parallel": "2", "sequence_parallel": "true"},
    {"data_parallel": "64", "tensor_parallel": "2", "zero": "1"},
]


def plan_for(preset: str, **split: str) -> dict:
    return evaluate("plan", {**PRESETS[preset].inputs, **split})


def crossings(drawing: dict) -> list[dict]:
    return [i for i in drawing["items"] if i["t"] == "g" and "atlas-crossing" in i["cls"].split()]


def texts(items: list[dict]) -> list[str]:
    out = []
    for i in items:
        if i["t"] == "text":
            out.append(i["s"])
        elif i["t"] == "g":
            out += texts(i["items"])
    return out


@pytest.mark.parametrize("preset,split", [("gpt3-175b", s) for s in SPLITS] + [("llama3-8b", {}),
                                                                                ("mixtral-8x7b", {})])
def test_one_crossing_per_communication(preset, split):
    """The atlas draws exactly one numbered crossing per communication of the plan, in order."""
    plan = plan_for(preset, **split)
    found = crossings(atlas_layout(plan))
    assert len(found) == len(plan["communications"]) > 0
    assert [g["data"]["crossing"] for g in found] == [str(n) for n in range(1, len(found) + 1)]
    assert [g["data"]["strategy"] for g in found] == [c["strategy"] for c in plan["communications"]]


def test_crossing_labels_carry_calcs_bytes_and_times():
    """Each crossing's legend and tooltip give the bytes per step, place and time calc computed."""
    plan = plan_for(ATLAS_DEFAULT)
    drawing = atlas_layout(plan)
    words = texts(drawing["items"])
    for g, comm in zip(crossings(drawing), plan["communications"]):
        line1, line2 = crossing_text(comm)
        assert units.format_bytes(comm["bytes_per_step"]) in line2 and units.format_time(comm["time_s"]) in line2
        assert ("inside a node" if comm["intra_node"] else "across nodes") in line2
        assert line1 in words and line2 in words and line2 in g["title"]


def test_every_strategy_gets_its_own_crossing_kind():
    """TP, PP, DP, CP and EP transfers are each drawn (MoE preset with context parallelism added)."""
    plan = evaluate("plan", {**PRESETS["mixtral-8x7b"].inputs, "data_parallel": "1", "context_parallel": "2"})
    kinds = {g["data"]["strategy"] for g in crossings(atlas_layout(plan))}
    assert kinds == {"tensor", "pipeline", "data", "context", "expert"}


def test_single_gpu_has_no_crossing():
    """One GPU: nothing crosses a boundary, and the drawing says so."""
    plan = evaluate("plan", {**PRESETS["llama3-8b"].inputs, "gpus": "1", "data_parallel": "1", "tensor_parallel": "1",
                             "device_memory": "1TB", "global_batch": "4"})
    drawing = atlas_layout(plan)
    assert crossings(drawing) == [] and any("Nothing crosses" in t for t in texts(drawing["items"]))


def _parse_svg(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == SVG_NS + "svg"
    return root


@pytest.mark.parametrize("split", SPLITS)
def test_svg_is_valid_xml_and_deterministic(split):
    """The build's SVG parses as XML, has a title and description, and is byte-identical on a rebuild."""
    plan = plan_for(ATLAS_DEFAULT, **split)
    first, second = svg(atlas_layout(plan), "x"), svg(atlas_layout(plan_for(ATLAS_DEFAULT, **split)), "x")
    assert first == second
    root = _parse_svg(first)
    assert root.find(SVG_NS + "title").text and root.find(SVG_NS + "desc").text
    groups = [g for g in root.iter(SVG_NS + "g") if "atlas-crossing" in g.get("class", "")]
    assert len(groups) == len(plan["communications"])


def test_svg_escapes_text():
    """Text from a drawing is escaped, never markup."""
    drawing = {"w": 10, "h": 10, "title": "<b>", "desc": "&", "items": [
        {"t": "text", "x": 1, "y": 1, "s": "<script>alert(1)</script>", "cls": "a", "anchor": "start"}]}
    out = svg(drawing, "u")
    assert "<script>" not in out and _parse_svg(out).find(SVG_NS + "text").text == "<script>alert(1)</script>"


def test_timeline_draws_every_op_and_the_bubbles():
    """Each forward and backward of a schedule is one box; idle slots are drawn; backward is hatched."""
    s = evaluate("schedule", {"kind": "1f1b", "pipeline_parallel": "4", "microbatches": "8"})
    d = timeline_layout(s, "1f1b", 4, 8, 1)
    ops = [i for i in d["items"] if i["t"] == "rect" and "tl-op" in i["cls"].split()]
    assert len(ops) == len(s["ops"]) == 64
    assert sum("tl-op--bwd" in i["cls"] for i in ops) == 32
    assert sum(1 for i in d["items"] if i["t"] == "path" and i["cls"] == "tl-hatch") == 32
    idle = [i for i in d["items"] if i["t"] == "rect" and i["cls"] == "tl-idle"]
    assert idle and "bubble 37.5% of the ideal time" in d["desc"]


def test_bubble_view_has_three_schedules_and_measured_fractions():
    """GPipe, 1F1B and interleaved are drawn; the table gives the measured fraction and share."""
    inputs = {"pipeline_parallel": "4", "microbatches": "8", "interleave": "2"}
    view = page_view("bubble", inputs, *run("bubble", inputs))
    assert len(view["figures"]) == 3
    rows = view["tables"]["schedules"]["rows"]
    assert [r[0] for r in rows] == ["GPipe", "1F1B", "Interleaved 1F1B"]
    assert rows[2][4] == "0.1875" and rows[0][4] == "0.375"


def test_memory_bars_stack_to_the_total():
    """The memory segments' widths add up to the total on the bar's scale; the binding term is marked."""
    mem = evaluate("device-memory", COMMANDS["device-memory"].example)
    d = memory_bars(mem)
    segs = [i for i in d["items"] if i["t"] == "rect" and i["cls"].startswith("mem-seg ") and i["h"] == 40]
    track = next(i for i in d["items"] if i["cls"] == "mem-track")
    scale = track["w"] / (max(mem["total_bytes"], mem["capacity_bytes"]) * 1.04)
    assert sum(s["w"] for s in segs) == pytest.approx(mem["total_bytes"] * scale, abs=0.5)
    assert sum("mem-seg--binding" in s["cls"] for s in segs) == 1


def test_device_memory_is_the_plans_memory():
    """device-memory reports what plan reports for the same model and split."""
    inputs = dict(PRESETS["mixtral-8x7b"].inputs)
    plan = evaluate("plan", inputs)["memory_per_device"]
    keys = {p.name for p in COMMANDS["device-memory"].params}
    mem = evaluate("device-memory", {k: x for k, x in inputs.items() if k in keys})
    for key in ("params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes", "binding_term"):
        assert mem[key] == plan[key], key


def test_search_summary_is_small_and_counts_every_refusal():
    """The refusal summary adds up to refused_count; the page's answer for 1024 GPUs stays under 64 kB."""
    split = {p.name for p in COMMANDS["search"].params if p.section == "parallel"}
    inputs = {k: x for k, x in PRESETS["gpt3-175b"].inputs.items() if k in {p.name for p in COMMANDS["search"].params}
              and k != "micro_batch" and k not in split}
    full = evaluate("search", inputs)
    assert sum(g["count"] for g in full["refused_summary"]) == full["refused_count"] > 0
    answer = page_request(json.dumps({"op": "evaluate", "command": "search", "inputs": inputs}))
    assert len(answer) < 64_000


def test_planner_links_restore_the_plan_in_the_atlas():
    """A planner link's query, read over the atlas's defaults, gives the same plan as the search found."""
    inputs = dict(PRESETS["llama3-8b"].inputs)
    search_inputs = {k: x for k, x in inputs.items() if k in {p.name for p in COMMANDS["search"].params}
                     and k != "micro_batch"}
    values, result = run("search", search_inputs)
    view = page_view("search", search_inputs, values, result)
    from urllib.parse import parse_qsl, urlsplit

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


def test_tool_marker_renders_the_dom_contract():
    """The tool marker gives data-calc, named fields, data-result values equal to the CLI's JSON, and the view."""
    html = render_marker(parse(MARKER_RE.search("<!-- calc:tool plan id=atlas preset=gpt3-175b presets=all -->")))
    result = evaluate("plan", dict(PRESETS["gpt3-175b"].inputs))
    assert 'data-calc="plan"' in html and 'data-state="static"' in html and "data-view" in html
    for p in COMMANDS["plan"].params:
        assert f'name="{p.name}"' in html
    from html import escape

    for key in ("step_time_s", "communications", "memory_per_device"):
        assert f'data-result="{key}" data-value="{escape(json.dumps(result[key]), quote=True)}"' in html
    assert html.count("data-preset=") == len(PRESETS)
    assert "\n\n" not in html.strip()  # one raw-HTML block for Markdown


def test_table_html_links_are_attributes():
    """A link cell becomes an <a href>, its text escaped."""
    out = table_html("t", {"caption": "c", "head": ["a"], "rows": [[{"text": "<x>", "href": "../atlas/?a=1&b=2"}]],
                           "align": "l"})
    assert '<a href="../atlas/?a=1&amp;b=2">&lt;x&gt;</a>' in out


def test_serving_chart_places_points_on_a_log_batch_axis():
    """Doubling the batch moves a point a constant distance; latency points rise with the latency."""
    from calc.diagram import serving_chart

    pts = [{"batch": b, "decode_time_per_token_s": 0.004 + b * 1e-5, "decode_floor_s": 0.003,
            "tokens_per_s_per_replica": b / (0.004 + b * 1e-5)} for b in (1, 2, 4, 8, 16)]
    d = serving_chart(pts, 4, 16)
    dots = [i["items"][0] for i in d["items"] if i["t"] == "g" and i["cls"].startswith("sv-pt")]
    xs = [c["cx"] for c in dots]
    steps = {round(b - a, 1) for a, b in zip(xs, xs[1:])}
    assert len(steps) == 1 and all(a > b for a, b in zip([c["cy"] for c in dots], [c["cy"] for c in dots][1:]))
    assert "largest batch that fits: 16" in d["title"]
