"""calc.network: groups on NVLink or the NICs, ring collectives with their startup, rails."""

import pytest

from calc.collectives import ring_allreduce
from calc.hardware import hardware
from calc.network import RAIL_MIN_BYTES, collective_time, group_link, rails

HW = hardware(64, profile_name="a100-sxm4-80gb")


def test_a_group_inside_a_node_uses_nvlink():
    """TP of 8 innermost: one node, NVLink; the ring all-reduce formula at the all-reduce bus bandwidth."""
    link = group_link(HW, ((1, 8),))
    assert link.intra_node and link.per_node == 8
    t, sent = collective_time("all-reduce", link, 1e9)
    expect = ring_allreduce(8, 1e9, 300e9 * HW.gpu.intra_node_allreduce_efficiency, HW.intra_node_startup)
    assert t == pytest.approx(expect.time_s) and sent == pytest.approx(2 * 7 / 8 * 1e9)


def test_one_gpu_per_node_uses_its_nic():
    """DP with TP = 8 inside each node: one member per node, each ring hop on a NIC."""
    link = group_link(HW, ((8, 8),))
    assert (link.per_node, link.nodes) == (1, 8)
    t, _ = collective_time("all-gather", link, 8e9)
    assert t == pytest.approx(7 * HW.inter_node_startup + 7 / 8 * 8e9 / (25e9 * HW.gpu.inter_node_efficiency))


def test_a_whole_node_group_spreads_large_messages_over_its_nics():
    """With 8 members per node a large collective crosses the network on 8 NICs at once."""
    spread = collective_time("all-reduce", group_link(HW, ((1, 64),)), 8e9)[0]
    alone = collective_time("all-reduce", group_link(HW, ((8, 8),)), 8e9)[0]
    assert spread < alone / 3


def test_small_messages_use_fewer_nics():
    """A message too small to fill a channel per NIC uses fewer NICs: NCCL counts the whole collective's bytes,
    however many ranks share them."""
    assert rails(8 * RAIL_MIN_BYTES, 8) == 8 and rails(3 * RAIL_MIN_BYTES + 1, 8) == 3
    assert rails(RAIL_MIN_BYTES - 1, 8) == 1 and rails(1, 8) == 1
    assert rails(3e8, 8) == 8


def test_ring_startup_grows_with_the_ranks():
    """A latency-bound collective costs (g − 1) startups: NCCL's rings visit every rank."""
    small = hardware(1024, profile_name="a100-sxm4-80gb")
    t64 = collective_time("all-gather", group_link(small, ((8, 64),)), 1024)[0]
    t128 = collective_time("all-gather", group_link(small, ((8, 128),)), 1024)[0]
    assert t128 == pytest.approx(127 / 63 * t64, rel=0.01)


def test_sends_and_all_to_all():
    """A send is α + n/β on its link; an all-to-all across nodes is bound by one NIC."""
    t, sent = collective_time("send-recv", group_link(HW, ((8, 8),)), 1e8)
    assert sent == 1e8 and t == pytest.approx(HW.inter_node_startup + 1e8 / HW.inter_node_effective)
    a2a, _ = collective_time("all-to-all", group_link(HW, ((1, 64),)), 64e8)
    assert a2a > 56 / 64 * 64e8 / HW.inter_node_effective


def test_nothing_to_send_costs_nothing():
    """A group of one, or no bytes, takes no time."""
    assert collective_time("all-reduce", group_link(HW, ((1, 1),)), 1e9) == (0.0, 0.0)
    assert collective_time("all-reduce", group_link(HW, ((1, 8),)), 0) == (0.0, 0.0)
