"""calc.diagram: the drawings carry calc's numbers (crossings, timelines, memory bars, the serving chart)."""

from __future__ import annotations

import re

import pytest

from calc import units
from calc.api import COMMANDS, evaluate
from calc.diagram import (NARROW_W, _wrap, allreduce_panels, atlas_layout, clip_polyline, crossing_text, memory_bars,
                          timeline_layout)
from calc.series import allreduce_chart, chart_json
from calc.pipeline import schedule
from calc.presets import ATLAS_DEFAULT, PRESETS

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
@pytest.mark.parametrize("narrow", [False, True])
def test_one_crossing_per_communication(preset, split, narrow):
    """The atlas draws exactly one numbered crossing per communication of the plan, in order, in both layouts."""
    plan = plan_for(preset, **split)
    found = crossings(atlas_layout(plan, narrow=narrow))
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


def test_timeline_draws_every_op_and_the_bubbles():
    """Each forward and backward of a schedule is one box; idle slots are drawn; backward is hatched."""
    s = evaluate("schedule", {"kind": "1f1b", "pipeline_parallel": "4", "microbatches": "8"})
    d = timeline_layout(schedule("1f1b", 4, 8))
    (boxes,) = [i for i in d["items"] if i["t"] == "boxes"]
    assert all(isinstance(n, int) for r in boxes["rows"] for n in r[:3])  # whole tenths (calc.diagram)
    ops = [{"x": x / 10, "y": y / 10, "w": w / 10, "h": boxes["h"], "cls": boxes["cls"][k], "title": title}
           for x, y, w, k, title in boxes["rows"]]
    assert len(ops) == len(s["ops"]) == 64 and all("tl-op" in o["cls"].split() for o in ops)
    assert sum("tl-op--bwd" in i["cls"] for i in ops) == 32
    for box, op in zip(ops, s["ops"]):  # each box is its operation: kind, microbatch, stage and slots
        assert box["title"] == (f"{op['kind']} of microbatch {op['microbatch'] + 1} on stage {op['stage']}, "
                                f"slots {op['start']}–{op['start'] + op['duration']}")
        assert f"tl-mb{op['microbatch'] % 8}" in box["cls"].split()
    (hatch,) = [i for i in d["items"] if i["t"] == "path" and i["cls"] == "tl-hatch"]
    # one closed outline per backward box, at its place and of its size
    outlined = re.findall(r"M([\d.]+) ([\d.]+)H([\d.]+)V([\d.]+)H([\d.]+)Z", hatch["d"])
    assert "".join(f"M{x} {y}H{right}V{bottom}H{back}Z" for x, y, right, bottom, back in outlined) == hatch["d"]
    assert all(x == back for x, _, _, _, back in outlined)
    corners = {(float(x), float(y)): (float(right), float(bottom)) for x, y, right, bottom, _ in outlined}
    backward = [i for i in ops if "tl-op--bwd" in i["cls"]]
    assert len(corners) == len(outlined) == len(backward)  # exactly the backward boxes, each once
    for i in backward:
        assert corners[i["x"], i["y"]] == (pytest.approx(i["x"] + i["w"], abs=0.051),
                                           pytest.approx(i["y"] + i["h"], abs=0.051))
    patterns = {i["id"] for i in d["items"] if i["t"] == "pattern"}
    assert hatch["fill"] in patterns
    labels = [n for n, i in enumerate(d["items"]) if i.get("cls") == "tl-op__label"]
    assert labels and min(labels) > d["items"].index(hatch)  # the labels are drawn over the hatch
    idle = [i for i in d["items"] if i["t"] == "rect" and i["cls"] == "tl-idle"]
    assert idle and "bubble 37.5% of the ideal time" in d["desc"]


def test_memory_bars_stack_to_the_total():
    """The memory segments' widths add up to the total on the bar's scale; the binding term is marked."""
    mem = evaluate("device-memory", COMMANDS["device-memory"].example)
    d = memory_bars(mem)
    segs = [i for i in d["items"] if i["t"] == "rect" and i["cls"].startswith("mem-seg ") and i["h"] == 40]
    track = next(i for i in d["items"] if i["cls"] == "mem-track")
    scale = track["w"] / (max(mem["total_bytes"], mem["capacity_bytes"]) * 1.04)
    assert sum(s["w"] for s in segs) == pytest.approx(mem["total_bytes"] * scale, abs=0.5)
    assert sum("mem-seg--binding" in s["cls"] for s in segs) == 1


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


def points(items: list[dict]):
    """Every coordinate pair an item places (rect corners, line ends, circle and text anchors, path points)."""
    import re

    for i in items:
        if i["t"] == "g":
            yield from points(i["items"])
        elif i["t"] == "rect":
            yield from ((i["x"], i["y"]), (i["x"] + i["w"], i["y"] + i["h"]))
        elif i["t"] == "boxes":
            for x, y, w, _, _ in i["rows"]:  # in tenths
                yield from ((x / 10, y / 10), ((x + w) / 10, y / 10 + i["h"]))
        elif i["t"] == "line":
            yield from ((i["x1"], i["y1"]), (i["x2"], i["y2"]))
        elif i["t"] == "circle":
            yield from ((i["cx"] - i["r"], i["cy"] - i["r"]), (i["cx"] + i["r"], i["cy"] + i["r"]))
        elif i["t"] == "text":
            yield i["x"], i["y"]
        else:  # a path: M, L and Q take points, H an x, V a y (calc.diagram's module docstring)
            x = y = 0.0
            for command, args in re.findall(r"([MLHVQZ])([^MLHVQZ]*)", i["d"]):
                numbers = [float(n) for n in args.split()]
                if command == "H":
                    x = numbers[0]
                elif command == "V":
                    y = numbers[0]
                elif command != "Z":
                    x, y = numbers[-2:]
                    yield from zip(numbers[::2], numbers[1::2])
                yield x, y


@pytest.mark.parametrize("preset,split", [("gpt3-175b", s) for s in SPLITS] + [("llama3-8b", {}),
                                                                                ("mixtral-8x7b", {})])
def test_narrow_layout_stacks_the_stages_inside_its_width(preset, split):
    """The narrow atlas is NARROW_W wide, draws everything inside its box, stacks at most three stages
    (the first, an ellipsis, the last) top to bottom, and says what the wide one says, wrapped."""
    plan = plan_for(preset, **split)
    wide, narrow = atlas_layout(plan), atlas_layout(plan, narrow=True)
    assert narrow["w"] == NARROW_W and wide["w"] == 720
    assert wide["items"][0]["cls"] == "atlas-fit atlas-fit--wide" and wide["items"][0]["items"] == []
    assert narrow["items"][0]["cls"] == "atlas-fit atlas-fit--narrow" and narrow["items"][0]["items"] == []
    for x, y in points(narrow["items"]):
        assert 0 <= x <= NARROW_W and 0 <= y <= narrow["h"], (x, y)
    labels = [i for i in narrow["items"] if i["t"] == "text" and i["s"].startswith(("Stage ", "Every GPU"))]
    p = plan["parallel"]["pipeline"]
    assert [i["s"] for i in labels] == ([f"Stage {s}" for s in range(p)] if 1 < p <= 3 else
                                        ["Stage 0", f"Stage {p - 1}"] if p > 3 else ["Every GPU of the replica"])
    assert len({i["x"] for i in labels}) == 1 and [i["y"] for i in labels] == sorted({i["y"] for i in labels})
    said = " ".join(texts(narrow["items"]))
    for comm in plan["communications"]:
        line1, line2 = crossing_text(comm)
        assert f"{line1} {line2}" in said
    assert narrow["title"] == wide["title"] and narrow["title"].removeprefix("Atlas: ") in said


@pytest.mark.parametrize("text,size,width", [("8 GPUs · 1 GB (953.7 MiB) per GPU per step · inside a node · 10 ms",
                                              11, 234), ("Attention", 12, 10), ("a b c d e f g h i j", 12, 60)])
def test_wrap_breaks_between_words_within_the_width(text, size, width):
    """Wrapped lines rejoin to the text, keep a separator at a line's end, and stay within the width
    (a word longer than the width stands alone)."""
    lines = _wrap(text, size, width)
    most = max(8, int(width / (size * 0.56)))
    assert " ".join(lines) == text
    assert all(len(line) <= most or " " not in line for line in lines)
    assert not any(line.startswith("·") for line in lines)
    assert _wrap(text, size, None) == [text]


# ---------------------------------------------------------------------------- the all-reduce chart


def _coords(d: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r"(-?[0-9.]+),(-?[0-9.]+)", d)]


@pytest.mark.parametrize("ranks, payload, startup", [(64, 2**30, 5e-6), (2, 1e3, 1e-3), (4096, 1e12, 0.0),
                                                     (1, 1e9, 5e-6), (8, 0.0, 5e-6)])
def test_allreduce_panels_stay_inside_their_plotting_area(ranks, payload, startup):
    """Every curve point, grid line and marker is inside the 300 x 180 area at (62, 14): a term far below the
    time is cut at the frame, not drawn over the tick labels."""
    chart = chart_json(allreduce_chart(ranks, payload, 1e11, startup))
    for panel in allreduce_panels(chart, "t", "r"):
        assert (panel["w"], panel["h"]) == (380.0, 250.0)
        for item in panel["items"]:
            if item["t"] == "path":
                assert item["d"].startswith("M")
                for x, y in _coords(item["d"]):
                    assert 61.9 <= x <= 362.1 and 13.9 <= y <= 194.1, (item["cls"], x, y)
            if item["t"] == "circle":
                assert 62 <= item["cx"] <= 362 and 14 <= item["cy"] <= 194


def test_allreduce_panels_mark_the_inputs_and_the_crossovers():
    """The current point sits on the time curve's x; the crossover line and note appear only on the axis."""
    chart = chart_json(allreduce_chart(64, 2**30, 1e11, 5e-6))  # p·α·β = 32 MB; n/(α·β) ≈ 2,147 ranks
    by_ranks, by_payload = allreduce_panels(chart, "21.77 ms", "bandwidth-bound")
    assert [i["cls"] for i in by_ranks["items"]].count("chart__crossover") == 1
    assert "bandwidth-bound" in by_payload["title"] and "crossover payload 32 MB" in by_payload["title"]
    far = chart_json(allreduce_chart(64, 1e3, 1e11, 5e-6))  # n/(α·β) = 0.002 ranks: off the axis
    by_ranks, _ = allreduce_panels(far, "t", "latency-bound")
    assert not [i for i in by_ranks["items"] if i["cls"] in ("chart__crossover", "chart__note")]
    none = chart_json(allreduce_chart(64, 2**30, 1e11, 0.0))  # no startup: no crossover, no clause naming one
    a, _ = allreduce_panels(none, "t", "bandwidth-bound")
    assert "dominates" not in a["title"] and "None" not in a["title"]


def test_allreduce_panels_put_larger_values_higher_and_further_right():
    """Log axes: the time grows with the payload, so the time curve of the payload panel rises left to right."""
    _, by_payload = allreduce_panels(chart_json(allreduce_chart(16, 2**30, 1e11, 5e-6)), "t", "r")
    time = next(i for i in by_payload["items"] if i["t"] == "path" and i["cls"] == "chart__time")
    pts = _coords(time["d"])
    assert all(b[0] > a[0] and b[1] <= a[1] for a, b in zip(pts, pts[1:]))


@pytest.mark.parametrize("points, lo, hi, expected", [
    ([(0, 5), (10, 5)], 0, 10, [[(0, 5), (10, 5)]]),  # inside: unchanged
    ([(0, 20), (10, 20)], 0, 10, []),  # outside
    ([(0, -10), (10, 20)], 0, 10, [[(10 / 3, 0.0), (20 / 3, 10.0)]]),  # through the whole area in one segment
    ([(0, 5), (10, 15), (20, 5)], 0, 10, [[(0, 5), (5.0, 10.0)], [(15.0, 10.0), (20, 5)]]),  # out and back
])
def test_clip_polyline(points, lo, hi, expected):
    got = clip_polyline(points, lo, hi)
    assert len(got) == len(expected)
    for part, want in zip(got, expected):
        assert [c for q in part for c in q] == pytest.approx([c for q in want for c in q])
