"""calc/series.py: chart series, the ring replay, and the page's entry point."""

from __future__ import annotations

import json
import math

import pytest

from calc.check import MAX_COUNT
from calc.collectives import ring_allreduce
from calc.page import page_request
from calc.series import MAX_VIEW_RANKS, allreduce_chart, ring_view


def test_chart_contains_the_input_point_on_both_curves():
    c = allreduce_chart(48, 3e8, 1e11, 5e-6)
    assert any(p.x == 48 for p in c.by_ranks) and any(p.x == 3e8 for p in c.by_payload)
    assert c.current.time_s == ring_allreduce(48, 3e8, 1e11, 5e-6).time_s


def test_chart_ranks_axis_stops_at_the_count_limit():
    """10^9 ranks is valid input; the axis must not go past what calc accepts."""
    c = allreduce_chart(MAX_COUNT, 1e15, 1e11, 5e-6)
    assert max(p.x for p in c.by_ranks) == MAX_COUNT


@pytest.mark.parametrize(("payload", "startup"), [(0, 5e-6), (1e9, 0)])
def test_chart_without_crossover_ranks(payload, startup):
    assert allreduce_chart(8, payload, 1e11, startup).crossover_ranks is None


@pytest.mark.parametrize("p", range(1, MAX_VIEW_RANKS + 1))
def test_ring_view_reduces_then_gathers(p):
    """After reduce-scatter rank r holds all p contributions to chunk (r+1) mod p; at the end, all of all."""
    v = ring_view(p)
    assert len(v.held) == 2 * (p - 1) + 1
    after_rs = v.held[p - 1]
    assert all(after_rs[r][(r + 1) % p] == p for r in range(p))
    assert all(c == p for row in v.held[-1] for c in row)


def test_ring_view_caps_large_rings():
    v = ring_view(1024)
    assert (v.ranks, v.requested) == (MAX_VIEW_RANKS, 1024)


@pytest.mark.parametrize(
    ("request_json", "param"),
    [("nope", "request"), ("[1]", "request"), ('{"op": "x"}', "op"),
     ('{"op": "evaluate", "command": "rm"}', "command"), ('{"op": "evaluate", "command": "batch", "inputs": 3}', "inputs"),
     ('{"op": "ring", "ranks": "0"}', "ranks")],
)
def test_page_request_reports_errors_as_json(request_json, param):
    answer = json.loads(page_request(request_json))
    assert answer["ok"] is False and answer["param"] == param and answer["message"]


def test_page_request_output_is_strict_json():
    """JavaScript's JSON.parse rejects Infinity and NaN: they never appear."""
    text = page_request(json.dumps({"op": "evaluate", "command": "allreduce",
                                    "inputs": {"startup": "0", "payload": "1e18"}}))
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    chart = json.loads(text)["chart"]
    numbers = [v for d in chart["figures"] for item in d["items"] for v in item.values() if isinstance(v, float)]
    assert numbers and all(math.isfinite(x) for x in numbers)
