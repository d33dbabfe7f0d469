"""Collectives in the alpha-beta (latency-bandwidth) cost model.

A message of ``n`` bytes between two ranks costs ``alpha + n / beta``: ``alpha``
is the per-step startup (s), ``beta`` the effective per-rank bandwidth (bytes/s).
This is an *ideal* model: it knows nothing of the topology (NVLink vs. PCIe vs.
fat tree vs. rail), of contention, of NCCL's choice of algorithm or protocol, or
of reduction compute. It is a lower bound and a way to reason about scaling, not
a traffic simulator.

Sources: Thakur, Rabenseifner & Gropp 2005, "Optimization of Collective
Communication Operations in MPICH" (cost model); Patarasuk & Yuan 2009,
"Bandwidth optimal all-reduce algorithms for clusters of workstations" (the
``2(p-1)/p · n`` bound); NVIDIA nccl-tests ``doc/PERFORMANCE.md`` (algbw, busbw).
"""

from __future__ import annotations

from dataclasses import dataclass

from .check import MAX_BYTES, MAX_RATE, MAX_SECONDS, count, real
from .errors import CalcError

__all__ = [
    "RingAllReduce",
    "ring_allreduce",
    "Transfer",
    "RingStep",
    "ring_allreduce_schedule",
    "MAX_SCHEDULE_RANKS",
]

#: Largest ring whose step-by-step schedule is generated (2(p-1) steps of p transfers).
MAX_SCHEDULE_RANKS = 64


def _link(payload: object, bandwidth: object, startup: object) -> tuple[float, float, float]:
    n = real("payload", payload, maximum=MAX_BYTES, allow_minimum=True, unit="bytes")
    beta = real("bandwidth", bandwidth, maximum=MAX_RATE, unit="bytes/s")
    alpha = real("startup", startup, maximum=MAX_SECONDS, allow_minimum=True, unit="s")
    return n, beta, alpha


@dataclass(frozen=True, slots=True)
class RingAllReduce:
    """Cost of one ideal ring all-reduce of ``payload`` bytes on every rank."""

    ranks: int  #: p
    payload_bytes: float  #: n, the array every rank holds (bytes)
    steps: int  #: 2(p − 1): p − 1 reduce-scatter steps, then p − 1 all-gather steps
    latency_s: float  #: 2(p − 1)·alpha, the startup term
    bandwidth_s: float  #: 2(p − 1)/p · n/beta, the bandwidth term
    time_s: float  #: latency_s + bandwidth_s
    bytes_sent_per_rank: float  #: 2(p − 1)/p · n, the bandwidth-optimal lower bound
    algbw_bytes_per_s: float | None  #: n / time (None when time is 0)
    busbw_bytes_per_s: float | None  #: algbw · 2(p − 1)/p (nccl-tests' convention)
    crossover_payload_bytes: float | None  #: n where both terms are equal: p·alpha·beta (None for p = 1)
    regime: str  #: "latency-bound", "bandwidth-bound" or "none" (p = 1 or nothing to send)


def ring_allreduce(ranks: int, payload: float, bandwidth: float, startup: float) -> RingAllReduce:
    """``T = 2(p−1)·α + 2(p−1)/p · n/β`` seconds; ``2(p−1)/p · n`` bytes sent per rank.

    ``p`` ranks, ``n`` bytes per rank, ``β`` bytes/s per rank, ``α`` seconds per
    step. ``p = 1`` costs nothing. The two terms are equal at ``n = p·α·β``.
    Sources: Thakur et al. 2005; Patarasuk & Yuan 2009; nccl-tests PERFORMANCE.md.

    >>> r = ring_allreduce(8, 1e9, 100e9, 5e-6)
    >>> round(r.time_s, 9), r.steps, r.bytes_sent_per_rank, round(r.busbw_bytes_per_s / r.algbw_bytes_per_s, 12)
    (0.01757, 14, 1750000000.0, 1.75)
    """
    p = count("ranks", ranks)
    n, beta, alpha = _link(payload, bandwidth, startup)
    steps = 2 * (p - 1)
    factor = steps / p
    latency = steps * alpha
    band = factor * n / beta
    time = latency + band
    algbw = n / time if time > 0 else None
    busbw = algbw * factor if algbw is not None else None
    crossover = p * alpha * beta if p > 1 else None
    if p == 1 or time == 0:
        regime = "none"
    elif latency > band:
        regime = "latency-bound"
    else:
        regime = "bandwidth-bound"
    return RingAllReduce(p, n, steps, latency, band, time, factor * n, algbw, busbw, crossover, regime)


@dataclass(frozen=True, slots=True)
class Transfer:
    """One chunk crossing one device boundary: ``src`` sends chunk ``chunk`` to ``dst``."""

    src: int
    dst: int
    chunk: int  #: index of the 1/p slice of the payload
    reduce: bool  #: True: the receiver adds it to its copy; False: it overwrites


@dataclass(frozen=True, slots=True)
class RingStep:
    """All transfers of one step; every rank sends one chunk of ``n/p`` bytes at once."""

    phase: str  #: "reduce-scatter" or "all-gather"
    step: int  #: 0-based index over all 2(p − 1) steps
    transfers: tuple[Transfer, ...]


def ring_allreduce_schedule(ranks: int) -> tuple[RingStep, ...]:
    """The ring all-reduce as reduce-scatter then all-gather, chunk by chunk.

    Reduce-scatter step ``k`` (0 ≤ k < p−1): rank ``r`` sends chunk ``(r − k) mod p``
    to ``(r + 1) mod p``, which adds it. Afterwards rank ``r`` owns the full sum of
    chunk ``(r + 1) mod p``. All-gather step ``k``: rank ``r`` sends chunk
    ``(r + 1 − k) mod p`` to ``(r + 1) mod p``, which keeps it.
    Source: Patarasuk & Yuan 2009, §3.

    >>> [(t.src, t.dst, t.chunk) for t in ring_allreduce_schedule(3)[0].transfers]
    [(0, 1, 0), (1, 2, 1), (2, 0, 2)]
    """
    p = count("ranks", ranks)
    if p > MAX_SCHEDULE_RANKS:
        raise CalcError("ranks", f"<= {MAX_SCHEDULE_RANKS} for a step-by-step schedule", p)
    steps = []
    for k in range(p - 1):
        moves = tuple(Transfer(r, (r + 1) % p, (r - k) % p, True) for r in range(p))
        steps.append(RingStep("reduce-scatter", k, moves))
    for k in range(p - 1):
        moves = tuple(Transfer(r, (r + 1) % p, (r + 1 - k) % p, False) for r in range(p))
        steps.append(RingStep("all-gather", p - 1 + k, moves))
    return tuple(steps)
