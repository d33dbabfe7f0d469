"""Tests for calc.collectives: the ideal ring all-reduce and its schedule, then the other collectives.

A numpy reference simulation runs the schedule on p arrays and checks both the
result (every rank ends with the full sum) and the bytes each rank sends against
calc's closed form.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.collectives import (
    MAX_SCHEDULE_RANKS,
    allgather,
    alltoall,
    broadcast,
    rabenseifner_allreduce,
    recursive_doubling_allreduce,
    reducescatter,
    ring_allreduce,
    ring_allreduce_schedule,
    two_level_allreduce,
)
from calc.errors import CalcError


def simulate_ring(p: int, elements: int, seed: int = 0):
    """Run calc's schedule on p random arrays; return (final arrays, bytes sent per rank, expected sum)."""
    rng = np.random.default_rng(seed)
    data = [rng.integers(-1000, 1000, size=elements).astype(np.int64) for _ in range(p)]
    expected = np.sum(data, axis=0)
    chunks = np.array_split(np.arange(elements), p)
    sent = [0] * p
    for step in ring_allreduce_schedule(p):
        # all sends of a step happen at once: read every outgoing chunk before writing
        outgoing = [(t, data[t.src][chunks[t.chunk]].copy()) for t in step.transfers]
        assert sorted(t.src for t, _ in outgoing) == list(range(p)), "each rank sends exactly once per step"
        for t, payload in outgoing:
            assert t.dst == (t.src + 1) % p, "a ring only talks to its right neighbour"
            if t.reduce:
                data[t.dst][chunks[t.chunk]] += payload
            else:
                data[t.dst][chunks[t.chunk]] = payload
            sent[t.src] += payload.nbytes
    return data, sent, expected


@pytest.mark.parametrize("p", [1, 2, 3, 4, 7, 8, 16])
def test_schedule_reduces_correctly_on_numpy_arrays(p):
    """After reduce-scatter then all-gather, every rank holds the full sum."""
    data, _, expected = simulate_ring(p, elements=p * 64)
    for rank in range(p):
        np.testing.assert_array_equal(data[rank], expected)


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_simulated_bytes_match_closed_form(p):
    """Bytes each rank sends in the simulation equal calc's 2(p-1)/p · n."""
    elements = p * 1024
    _, sent, _ = simulate_ring(p, elements)
    n = elements * 8  # int64
    expected = ring_allreduce(p, n, 1e9, 0).bytes_sent_per_rank
    assert sent == [expected] * p


def test_ring_schedule_is_p_minus_1_reduce_scatter_then_p_minus_1_all_gather_steps():
    """2(p-1) steps: p-1 reduce-scatter steps, then p-1 all-gather steps, p transfers each."""
    steps = ring_allreduce_schedule(5)
    assert len(steps) == 8
    assert [s.phase for s in steps] == ["reduce-scatter"] * 4 + ["all-gather"] * 4
    assert all(len(s.transfers) == 5 for s in steps)
    assert [s.step for s in steps] == list(range(8))


def test_schedule_rank_limit_both_sides():
    """The step-by-step schedule is generated up to 64 ranks."""
    assert len(ring_allreduce_schedule(MAX_SCHEDULE_RANKS)) == 2 * (MAX_SCHEDULE_RANKS - 1)
    with pytest.raises(CalcError, match="ranks must be <= 64 for a step-by-step schedule, got 65"):
        ring_allreduce_schedule(MAX_SCHEDULE_RANKS + 1)


def test_ring_time_is_alpha_beta_with_2_p_minus_1_steps():
    """R1: p 8, n 1e9 B, alpha 5 us, beta 100 GB/s → T = 0.01757 s (rel. 1e-9)."""
    r = ring_allreduce(8, 1e9, 100e9, 5e-6)
    assert r.time_s == pytest.approx(0.01757, rel=1e-9)
    assert r.latency_s == pytest.approx(2 * 7 * 5e-6, rel=1e-12)
    assert r.bandwidth_s == pytest.approx(2 * 7 / 8 * 1e9 / 1e11, rel=1e-12)
    assert r.steps == 14


def test_single_rank_costs_nothing():
    """p = 1: no steps, no time, no bytes; bandwidth figures are undefined (None)."""
    r = ring_allreduce(1, 1e9, 1e11, 5e-6)
    assert (r.steps, r.time_s, r.bytes_sent_per_rank) == (0, 0.0, 0.0)
    assert r.algbw_bytes_per_s is None and r.busbw_bytes_per_s is None
    assert r.crossover_payload_bytes is None and r.regime == "none"


def test_crossover_terms_are_equal():
    """At n = p·α·β the startup and bandwidth terms are equal; either side, one dominates."""
    p, a, b = 64, 5e-6, 100e9
    n = ring_allreduce(p, 1, b, a).crossover_payload_bytes
    assert n == pytest.approx(p * a * b)
    at = ring_allreduce(p, n, b, a)
    assert at.latency_s == pytest.approx(at.bandwidth_s, rel=1e-12)
    assert ring_allreduce(p, n / 2, b, a).regime == "latency-bound"
    assert ring_allreduce(p, n * 2, b, a).regime == "bandwidth-bound"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ranks": 0}, "ranks must be a whole number >= 1, got 0"),
        ({"payload": -1.0}, "payload must be a number >= 0 bytes, got -1.0"),
        ({"bandwidth": 0}, "bandwidth must be a number > 0 bytes/s, got 0"),
        ({"startup": -1e-6}, "startup must be a number >= 0 s, got -1e-06"),
        ({"startup": float("nan")}, "startup must be a number >= 0 s, got nan"),
        ({"bandwidth": float("inf")}, "bandwidth must be a number > 0 bytes/s, got inf"),
    ],
)
def test_ring_allreduce_refuses_each_bad_parameter_with_its_rule(kwargs, message):
    """Each parameter's rule is enforced with an exact message."""
    args = {"ranks": 8, "payload": 1e9, "bandwidth": 1e11, "startup": 5e-6, **kwargs}
    with pytest.raises(CalcError) as info:
        ring_allreduce(**args)
    assert str(info.value) == message


def test_zero_payload_and_zero_startup_are_allowed():
    """Both lower bounds are inclusive: an empty payload costs only startup; alpha = 0 is ideal."""
    assert ring_allreduce(8, 0, 1e11, 5e-6).time_s == pytest.approx(14 * 5e-6)
    assert ring_allreduce(8, 1e9, 1e11, 0).latency_s == 0.0


ranks = st.integers(2, 4096)
payloads = st.floats(1.0, 1e13)
bandwidths = st.floats(1e6, 1e13)
startups = st.floats(0, 1e-3)


@given(ranks, payloads, bandwidths, startups, st.floats(1.001, 10))
def test_time_grows_with_payload_and_startup(p, n, b, a, k):
    """Ring time never falls as payload or startup grow; the term each one drives strictly rises."""
    base = ring_allreduce(p, n, b, a)
    more_payload = ring_allreduce(p, n * k, b, a)
    more_startup = ring_allreduce(p, n, b, a * k + 1e-9)
    assert more_payload.time_s >= base.time_s and more_payload.bandwidth_s > base.bandwidth_s
    assert more_startup.time_s >= base.time_s and more_startup.latency_s > base.latency_s


@given(ranks, payloads)
def test_bytes_per_rank_bound(p, n):
    """Bytes per rank are 2(p-1)/p · n: never below n (p >= 2), always below 2n, approaching it."""
    sent = ring_allreduce(p, n, 1e9, 0).bytes_sent_per_rank
    assert n <= sent * (1 + 1e-12)
    assert sent < 2 * n
    assert sent == pytest.approx(2 * n * (p - 1) / p, rel=1e-12)


def test_bytes_per_rank_approach_2n():
    """As p grows the per-rank volume tends to 2n from below."""
    vols = [ring_allreduce(p, 1.0, 1e9, 0).bytes_sent_per_rank for p in (2, 4, 16, 256, 4096)]
    assert vols == sorted(vols) and vols[0] == 1.0 and 2 - vols[-1] < 1e-3


@given(ranks, payloads, bandwidths, startups)
def test_busbw_is_algbw_times_factor(p, n, b, a):
    """busbw = algbw · 2(p-1)/p (nccl-tests), and busbw never exceeds the link bandwidth."""
    r = ring_allreduce(p, n, b, a)
    assert r.busbw_bytes_per_s == pytest.approx(r.algbw_bytes_per_s * 2 * (p - 1) / p, rel=1e-12)
    assert r.busbw_bytes_per_s <= b * (1 + 1e-9)


# ---------------------------------------------------------------- beyond the ring


@pytest.mark.parametrize("fn,factor", [(allgather, 7 / 8), (reducescatter, 7 / 8), (alltoall, 7 / 8),
                                       (broadcast, 1.0), (rabenseifner_allreduce, 1.75),
                                       (recursive_doubling_allreduce, 1.75)])
def test_busbw_factors_of_nccl_tests(fn, factor):
    """R2: busbw / algbw is nccl-tests' factor for each operation (8 ranks)."""
    r = fn(8, 2**29, 450e9, 1e-6)
    assert r.busbw_bytes_per_s / r.algbw_bytes_per_s == pytest.approx(factor)


def test_reduce_scatter_plus_all_gather_is_a_ring_all_reduce():
    """A ring all-reduce is a reduce-scatter then an all-gather of the same array."""
    args = (16, 3e9, 100e9, 5e-6)
    assert reducescatter(*args).time_s + allgather(*args).time_s == pytest.approx(ring_allreduce(*args).time_s)


def test_rabenseifner_beats_ring_latency_and_recursive_doubling_bandwidth():
    """Rabenseifner pays 2·lg p startups (ring 2(p−1)) and the ring's bandwidth term."""
    r = rabenseifner_allreduce(64, 1e3, 100e9, 5e-6)
    assert r.steps == 12 and r.time_s < ring_allreduce(64, 1e3, 100e9, 5e-6).time_s
    assert recursive_doubling_allreduce(64, 1e9, 100e9, 0).time_s == 6 * 1e9 / 100e9


def test_two_level_reduces_to_the_ring_on_one_node():
    """One node: the two-level all-reduce is the intra-node ring."""
    r = two_level_allreduce(8, 8, 1e9, 450e9, 50e9, 1e-6, 5e-6)
    assert r.inter_node_s == 0 and r.time_s == pytest.approx(ring_allreduce(8, 1e9, 450e9, 1e-6).time_s)


def test_two_level_beats_a_flat_ring_across_nodes():
    """With 8 GPUs per node, crossing nodes with n/8 beats a flat ring at the inter-node bandwidth."""
    r = two_level_allreduce(64, 8, 1e9, 450e9, 50e9, 1e-6, 5e-6)
    assert r.time_s < ring_allreduce(64, 1e9, 50e9, 5e-6).time_s
    assert r.bytes_sent_inter_per_rank == pytest.approx(2 * 7 / 8 * 1e9 / 8)


def test_one_rank_costs_nothing():
    """p = 1: no time and no bus bandwidth."""
    r = allgather(1, 1e9, 1e9, 1e-6)
    assert (r.time_s, r.algbw_bytes_per_s, r.busbw_bytes_per_s) == (0.0, None, None)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: rabenseifner_allreduce(6, 1, 1, 0), "ranks must be a power of two for this algorithm, got 6"),
        (lambda: recursive_doubling_allreduce(12, 1, 1, 0), "ranks must be a power of two for this algorithm, got 12"),
        (lambda: two_level_allreduce(12, 8, 1, 1, 1, 0, 0), "gpus_per_node must be a divisor of ranks (12), got 8"),
        (lambda: allgather(8, -1, 1, 0), "payload must be a number >= 0 bytes, got -1"),
        (lambda: alltoall(8, 1, 0, 0), "bandwidth must be a number > 0 bytes/s, got 0"),
        (lambda: broadcast(0, 1, 1, 0), "ranks must be a whole number >= 1, got 0"),
        (lambda: two_level_allreduce(16, 8, 1, 1, 1, 0, -1), "inter_startup must be a number >= 0 s, got -1"),
    ],
)
def test_other_collectives_refuse_bad_inputs_with_exact_messages(call, message):
    """Bad inputs are CalcErrors with exact messages."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message


def test_zero_payload_zero_startup_and_one_rank_are_accepted():
    """Zero payload, zero startup and p = 1 for the power-of-two algorithms are accepted."""
    assert rabenseifner_allreduce(1, 0, 1, 0).time_s == 0
    assert broadcast(2, 0, 1, 0).time_s == 0
