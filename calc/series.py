"""Series and step-by-step views that the page draws, computed here so the page only draws.

The all-reduce chart plots the ideal ring time (see :mod:`calc.collectives`)
against the number of ranks and against the payload; the ring view replays
:func:`~calc.collectives.ring_allreduce_schedule` and records, after each step,
how many ranks' contributions every rank holds of every chunk.

The page receives both through :func:`calc.page.page_request`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import collectives as _coll
from . import units
from .check import MAX_COUNT, count

__all__ = [
    "ChartPoint",
    "AllReduceChart",
    "allreduce_chart",
    "RingView",
    "ring_view",
    "MAX_VIEW_RANKS",
    "chart_json",
    "ring_json",
]

#: Largest ring the step-through view draws; bigger rings are shown at this size.
MAX_VIEW_RANKS = 8
#: Payload axis: 1 kB to 1 TB, four points per decade.
_PAYLOADS = tuple(10 ** (3 + k / 4) for k in range(9 * 4 + 1))


@dataclass(frozen=True, slots=True)
class ChartPoint:
    """One point of a curve: ``x`` in ranks or bytes, times in seconds."""

    x: float
    time_s: float
    latency_s: float
    bandwidth_s: float


@dataclass(frozen=True, slots=True)
class AllReduceChart:
    """Ring all-reduce time against ranks (payload fixed) and against payload (ranks fixed)."""

    by_ranks: tuple[ChartPoint, ...]  #: p = 2, 4, 8, ... and the current p, payload fixed
    by_payload: tuple[ChartPoint, ...]  #: n from 1 kB to 1 TB and the current n, ranks fixed
    current: ChartPoint  #: the inputs themselves (x = ranks)
    payload_bytes: float
    ranks: int
    crossover_payload_bytes: float | None  #: n = p·α·β (None for p = 1)
    crossover_ranks: float | None  #: p = n/(α·β): the startup term wins beyond it (None if α·β = 0)


def _point(x: float, r: _coll.RingAllReduce) -> ChartPoint:
    return ChartPoint(x, r.time_s, r.latency_s, r.bandwidth_s)


def allreduce_chart(ranks: int, payload: float, bandwidth: float, startup: float) -> AllReduceChart:
    """Sample ``T(p) = 2(p−1)α + 2(p−1)/p · n/β`` over ranks and over payloads.

    Ranks run over powers of two from 2 to at least 4096 (and twice the input, at most
    :data:`~calc.check.MAX_COUNT`);
    payloads over 1 kB to 1 TB. The input point is always one of the samples.

    >>> c = allreduce_chart(8, 1e9, 100e9, 5e-6)
    >>> round(c.current.time_s, 9), round(c.crossover_payload_bytes), round(c.crossover_ranks)
    (0.01757, 4000000, 2000)
    >>> [p.x for p in c.by_ranks][:4]
    [2, 4, 8, 16]
    """
    here = _coll.ring_allreduce(ranks, payload, bandwidth, startup)
    p, n = here.ranks, here.payload_bytes
    beta, alpha = float(bandwidth), float(startup)
    top = min(max(4096, 2 * p), MAX_COUNT)
    xs = sorted({2**k for k in range(1, top.bit_length())} | ({p} if p > 1 else set()))
    by_ranks = tuple(_point(x, _coll.ring_allreduce(x, n, beta, alpha)) for x in xs)
    sizes = sorted(set(_PAYLOADS) | ({n} if n > 0 else set()))
    by_payload = tuple(_point(x, _coll.ring_allreduce(p, x, beta, alpha)) for x in sizes)
    crossover_ranks = n / (alpha * beta) if alpha * beta > 0 and n > 0 else None
    return AllReduceChart(by_ranks, by_payload, _point(p, here), n, p,
                          here.crossover_payload_bytes, crossover_ranks)


@dataclass(frozen=True, slots=True)
class RingView:
    """The ring schedule with the state after each step, for a ring of ``ranks`` ranks."""

    ranks: int  #: ranks drawn (at most :data:`MAX_VIEW_RANKS`)
    requested: int  #: ranks asked for
    steps: tuple[_coll.RingStep, ...]
    #: ``held[s][r][c]``: contributions to chunk ``c`` that rank ``r`` holds after step ``s``
    #: (index 0 is before the first step, so there are ``len(steps) + 1`` entries)
    held: tuple[tuple[tuple[int, ...], ...], ...]


def ring_view(ranks: int) -> RingView:
    """Replay the ring all-reduce of ``min(ranks, MAX_VIEW_RANKS)`` ranks, step by step.

    Before the first step every rank holds its own contribution to every chunk (1);
    after reduce-scatter rank ``r`` holds all ``p`` of chunk ``(r + 1) mod p``; after
    all-gather every rank holds all ``p`` of every chunk.

    >>> v = ring_view(3)
    >>> v.held[0], v.held[2], v.held[-1]
    (((1, 1, 1), (1, 1, 1), (1, 1, 1)), ((1, 3, 2), (2, 1, 3), (3, 2, 1)), ((3, 3, 3), (3, 3, 3), (3, 3, 3)))
    """
    requested = count("ranks", ranks)
    p = min(requested, MAX_VIEW_RANKS)
    steps = _coll.ring_allreduce_schedule(p)
    state = [[1] * p for _ in range(p)]
    held = [tuple(tuple(row) for row in state)]
    for step in steps:
        sent = [(t.dst, t.chunk, state[t.src][t.chunk], t.reduce) for t in step.transfers]
        for dst, chunk, amount, reduce in sent:  # every rank sends at once: read, then write
            state[dst][chunk] = state[dst][chunk] + amount if reduce else amount
        held.append(tuple(tuple(row) for row in state))
    return RingView(p, requested, steps, tuple(held))


def _time_ticks(points: tuple[ChartPoint, ...]) -> list[list]:
    """Decades of seconds spanning the curve's times, labelled (``[1e-3, "1 ms"]``)."""
    times = [q.time_s for q in points if q.time_s > 0]
    if not times:
        return []
    lo, hi = math.floor(math.log10(min(times))), math.ceil(math.log10(max(times)))
    hi = max(hi, lo + 1)
    stride = 1 + (hi - lo) // 6
    return [[10.0**k, units.format_time(10.0**k)] for k in range(lo, hi + 1, stride)]


def chart_json(c: AllReduceChart) -> dict:
    """What the page draws: the curves as [x, time, latency, bandwidth] rows, the ticks, the crossovers
    as numbers and as text."""
    def pts(points: tuple[ChartPoint, ...]) -> list[list[float]]:
        return [[q.x, q.time_s, q.latency_s, q.bandwidth_s] for q in points]

    top = c.by_ranks[-1].x
    return {
        "ticks": {
            "ranks": [[2**k, units.format_count(2**k)] for k in range(1, int(top).bit_length(), 2)],
            "payload": [[10.0**k, units.format_bytes(10.0**k)] for k in range(3, 13, 3)],
            "time_by_ranks": _time_ticks(c.by_ranks),
            "time_by_payload": _time_ticks(c.by_payload),
        },
        "crossover_ranks_text": None if c.crossover_ranks is None or not math.isfinite(c.crossover_ranks)
        else units.format_count(round(c.crossover_ranks)),
        "crossover_payload_text": None if c.crossover_payload_bytes is None
        else units.format_bytes(c.crossover_payload_bytes),
        "by_ranks": pts(c.by_ranks),
        "by_payload": pts(c.by_payload),
        "ranks": c.ranks,
        "payload_bytes": c.payload_bytes,
        "time_s": c.current.time_s,
        "crossover_payload_bytes": c.crossover_payload_bytes,
        "crossover_ranks": c.crossover_ranks if c.crossover_ranks is None or math.isfinite(c.crossover_ranks) else None,
    }


def ring_json(v: RingView) -> dict:
    """The ring view for the page: the steps' transfers as [src, dst, chunk, reduce] and what each rank holds."""
    return {
        "ranks": v.ranks,
        "requested": v.requested,
        "steps": [
            {"phase": s.phase, "transfers": [[t.src, t.dst, t.chunk, t.reduce] for t in s.transfers]}
            for s in v.steps
        ],
        "held": [[list(row) for row in h] for h in v.held],
    }
