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

from .check import MAX_BYTES, MAX_RATE, MAX_SECONDS, MIN_BANDWIDTH, count, real
from .errors import CalcError

__all__ = [
    "RingAllReduce",
    "ring_allreduce",
    "Transfer",
    "RingStep",
    "ring_allreduce_schedule",
    "MAX_SCHEDULE_RANKS",
    "Collective",
    "allgather",
    "reducescatter",
    "alltoall",
    "broadcast",
    "rabenseifner_allreduce",
    "recursive_doubling_allreduce",
    "TwoLevelAllReduce",
    "two_level_allreduce",
]

#: Largest ring whose step-by-step schedule is generated (2(p-1) steps of p transfers).
MAX_SCHEDULE_RANKS = 64


def _link(payload: object, bandwidth: object, startup: object) -> tuple[float, float, float]:
    n = real("payload", payload, maximum=MAX_BYTES, allow_minimum=True, unit="bytes")
    beta = real("bandwidth", bandwidth, maximum=MAX_RATE, unit="bytes/s", smallest=MIN_BANDWIDTH)
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


# ---------------------------------------------------------------------------- beyond the ring


@dataclass(frozen=True, slots=True)
class Collective:
    """Cost of one collective in the alpha-beta model.

    ``payload_bytes`` is ``S`` as nccl-tests counts it: the whole array each rank
    holds (all-reduce, broadcast, all-to-all), the gathered output (all-gather) or
    the input each rank reduces (reduce-scatter). ``algbw = S/T``,
    ``busbw = algbw × factor`` with nccl-tests' factor for the operation.
    """

    operation: str  #: all-gather | reduce-scatter | all-to-all | broadcast | all-reduce
    algorithm: str  #: ring | pairwise exchange | pipelined ring | Rabenseifner | recursive doubling
    ranks: int  #: p
    payload_bytes: float  #: S (bytes)
    steps: int  #: startups paid on the critical path
    latency_s: float  #: steps · alpha
    bandwidth_s: float  #: bytes on the critical path / beta
    time_s: float  #: latency_s + bandwidth_s
    bytes_sent_per_rank: float
    algbw_bytes_per_s: float | None  #: S / T (None when T = 0)
    busbw_bytes_per_s: float | None  #: algbw × nccl-tests factor


def _alpha_beta(operation: str, algorithm: str, p: int, n: float, steps: int, alpha: float,
                sent: float, beta: float, bus_factor: float) -> Collective:
    """``T = steps·alpha + sent/beta`` (the sender's bytes are on the critical path)."""
    latency = steps * alpha
    band = sent / beta
    time = latency + band
    algbw = n / time if time > 0 else None
    busbw = algbw * bus_factor if algbw is not None else None
    return Collective(operation, algorithm, p, n, steps, latency, band, time, sent, algbw, busbw)


def _gather_like(operation: str, algorithm: str, ranks: int, payload: float, bandwidth: float,
                 startup: float) -> Collective:
    p = count("ranks", ranks)
    n, beta, alpha = _link(payload, bandwidth, startup)
    factor = (p - 1) / p
    return _alpha_beta(operation, algorithm, p, n, p - 1, alpha, factor * n, beta, factor)


def allgather(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Ring all-gather: ``T = (p−1)·α + (p−1)/p · S/β``; ``S`` = the gathered array.

    Each rank starts with ``S/p`` and forwards ``p − 1`` chunks. busbw factor ``(p−1)/p``.
    Sources: Thakur et al. 2005 §4 (ring); nccl-tests PERFORMANCE.md.

    >>> r = allgather(8, 2**29, 450e9, 1e-6)
    >>> round(r.time_s * 1e6, 3), r.bytes_sent_per_rank / 2**20
    (1050.916, 448.0)
    """
    return _gather_like("all-gather", "ring", ranks, payload, bandwidth, startup)


def reducescatter(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Ring reduce-scatter: ``T = (p−1)·α + (p−1)/p · S/β``; ``S`` = each rank's input array.

    The mirror image of the all-gather (reduction compute not counted).
    Sources: Thakur et al. 2005 §4; nccl-tests PERFORMANCE.md.

    >>> round(reducescatter(8, 1e9, 100e9, 5e-6).time_s, 12)
    0.008785
    """
    return _gather_like("reduce-scatter", "ring", ranks, payload, bandwidth, startup)


def alltoall(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Pairwise-exchange all-to-all: ``T = (p−1)·α + (p−1)/p · S/β``; rank sends ``S/p`` to each peer.

    Sources: Thakur et al. 2005 §3.4 (pairwise exchange); nccl-tests PERFORMANCE.md.

    >>> alltoall(4, 4e9, 1e9, 0).time_s
    3.0
    """
    return _gather_like("all-to-all", "pairwise exchange", ranks, payload, bandwidth, startup)


def broadcast(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Pipelined-ring broadcast: ``T = (p−1)·α + S/β`` in the limit of fine chunks; busbw factor 1.

    Every rank but the last forwards all ``S`` bytes. Sources: Thakur et al. 2005
    §3.1; NCCL's ring broadcast; nccl-tests PERFORMANCE.md.

    >>> broadcast(8, 1e9, 100e9, 5e-6).time_s
    0.010035
    """
    p = count("ranks", ranks)
    n, beta, alpha = _link(payload, bandwidth, startup)
    return _alpha_beta("broadcast", "pipelined ring", p, n, p - 1, alpha, n if p > 1 else 0.0, beta, 1.0)


def _power_of_two(p: int) -> int:
    k = p.bit_length() - 1
    if p != 1 << k:
        raise CalcError("ranks", "a power of two for this algorithm", p)
    return k


def rabenseifner_allreduce(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Recursive-halving reduce-scatter + recursive-doubling all-gather: ``2·lg p·α + 2(p−1)/p · n/β``.

    ``p`` a power of two; the reduction term ``(p−1)/p·n·γ`` is not counted.
    Source: Thakur et al. 2005 §4.4 (MPICH's cost comments); Rabenseifner 2004.

    >>> round(rabenseifner_allreduce(8, 1e9, 100e9, 5e-6).time_s, 9)
    0.01753
    """
    p = count("ranks", ranks)
    k = _power_of_two(p)
    n, beta, alpha = _link(payload, bandwidth, startup)
    factor = 2 * (p - 1) / p
    return _alpha_beta("all-reduce", "Rabenseifner", p, n, 2 * k, alpha, factor * n, beta, factor)


def recursive_doubling_allreduce(ranks: int, payload: float, bandwidth: float, startup: float) -> Collective:
    """Recursive doubling: ``lg p·α + lg p · n/β`` (latency-optimal, sends the whole array each step).

    ``p`` a power of two; reduction compute not counted. Source: Thakur et al. 2005 §4.4.

    >>> round(recursive_doubling_allreduce(8, 1e9, 100e9, 5e-6).time_s, 9)
    0.030015
    """
    p = count("ranks", ranks)
    k = _power_of_two(p)
    n, beta, alpha = _link(payload, bandwidth, startup)
    return _alpha_beta("all-reduce", "recursive doubling", p, n, k, alpha, k * n, beta, 2 * (p - 1) / p)


@dataclass(frozen=True, slots=True)
class TwoLevelAllReduce:
    """Hierarchical all-reduce: reduce-scatter in each node, all-reduce across nodes, all-gather in each node."""

    ranks: int  #: p = g · N
    gpus_per_node: int  #: g
    nodes: int  #: N
    payload_bytes: float  #: n, the array every rank holds
    intra_node_s: float  #: reduce-scatter + all-gather inside the node
    inter_node_s: float  #: ring all-reduce of n/g across the N nodes
    time_s: float
    bytes_sent_intra_per_rank: float  #: 2(g−1)/g · n
    bytes_sent_inter_per_rank: float  #: 2(N−1)/N · n/g
    algbw_bytes_per_s: float | None
    busbw_bytes_per_s: float | None  #: algbw · 2(p−1)/p


def two_level_allreduce(ranks: int, gpus_per_node: int, payload: float, intra_bandwidth: float,
                        inter_bandwidth: float, intra_startup: float, inter_startup: float) -> TwoLevelAllReduce:
    """``T = 2[(g−1)α_i + (g−1)/g·n/β_i] + 2(N−1)α_e + 2(N−1)/N·(n/g)/β_e``.

    Each node first reduce-scatters (its ``g`` GPUs then hold ``1/g`` each), the
    ``g`` parallel rings across nodes all-reduce ``n/g`` bytes, and the node
    all-gathers. ``g`` must divide ``p``. Source: Thakur et al. 2005 cost model
    applied per level; the scheme of NCCL's tree/ring hierarchy and Horovod's
    hierarchical all-reduce (Sergeev & Del Balso 2018).

    >>> r = two_level_allreduce(64, 8, 1e9, 450e9, 50e9, 1e-6, 5e-6)
    >>> round(r.intra_node_s * 1e3, 4), round(r.inter_node_s * 1e3, 4)
    (3.9029, 4.445)
    """
    p = count("ranks", ranks)
    g = count("gpus_per_node", gpus_per_node)
    if p % g:
        raise CalcError("gpus_per_node", f"a divisor of ranks ({p})", g)
    n, beta_i, alpha_i = _link(payload, intra_bandwidth, intra_startup)
    beta_e = real("inter_bandwidth", inter_bandwidth, maximum=MAX_RATE, unit="bytes/s", smallest=MIN_BANDWIDTH)
    alpha_e = real("inter_startup", inter_startup, maximum=MAX_SECONDS, allow_minimum=True, unit="s")
    nodes = p // g
    sent_i = 2 * (g - 1) / g * n
    sent_e = 2 * (nodes - 1) / nodes * n / g
    intra = 2 * (g - 1) * alpha_i + sent_i / beta_i
    inter = 2 * (nodes - 1) * alpha_e + sent_e / beta_e
    time = intra + inter
    algbw = n / time if time > 0 else None
    busbw = algbw * 2 * (p - 1) / p if algbw is not None else None
    return TwoLevelAllReduce(p, g, nodes, n, intra, inter, time, sent_i, sent_e, algbw, busbw)
