"""calc.collectives beyond the ring: all-gather, reduce-scatter, all-to-all, broadcast, tree-like and two-level."""

import pytest

from calc.collectives import (allgather, alltoall, broadcast, rabenseifner_allreduce, recursive_doubling_allreduce,
                              reducescatter, ring_allreduce, two_level_allreduce)
from calc.errors import CalcError


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
def test_errors(call, message):
    """Bad inputs are CalcErrors with exact messages."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message


def test_bounds_accepted():
    """Zero payload, zero startup and p = 1 for the power-of-two algorithms are accepted."""
    assert rabenseifner_allreduce(1, 0, 1, 0).time_s == 0
    assert broadcast(2, 0, 1, 0).time_s == 0
