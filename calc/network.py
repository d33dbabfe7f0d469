"""Collectives on a two-tier cluster: NVLink inside a node, the network between nodes.

A parallel group of ``g`` ranks whose members are ``stride`` ranks apart (ranks are
numbered node by node, ``gpus_per_node`` to a node) has ``g_in`` members in each node
it touches and spans ``N = g/g_in`` nodes:

- ``N = 1``: every transfer is on NVLink, at ``intra_node_bandwidth × intra_node_efficiency``
  per GPU (an all-reduce at ``intra_node_allreduce_efficiency``, which NVLink SHARP lifts above
  the ring's on Hopper and Blackwell), ``intra_node_startup`` per step;
- ``N > 1``, ``g_in = 1``: a ring through one GPU per node, each on its own NIC, at
  ``inter_node_bandwidth × inter_node_efficiency``, ``inter_node_startup`` per step;
- ``N > 1``, ``g_in > 1``: hierarchical (NCCL's rings use the node's NICs, Horovod's
  hierarchical all-reduce): the node reduce-scatters over NVLink, up to ``g_in`` GPUs run
  parallel rings of ``n/g_in`` bytes across the nodes, the node all-gathers; a message too
  small to fill a channel on every NIC uses fewer (:func:`rails`). The startup is the ring's:
  ``g − 1`` steps (twice for an all-reduce) of ``inter_node_startup``, since every step waits for
  the network hop (NCCL runs all-gather and reduce-scatter as rings only)
  (:func:`calc.collectives.two_level_allreduce`'s cost). All-gather and reduce-scatter are
  the two halves; an all-to-all sends ``(g − g_in)/g`` of its data through the NIC and
  ``(g_in − 1)/g`` over NVLink, concurrently.

``n`` is the array as nccl-tests counts it (the full buffer of an all-reduce, the
gathered result of an all-gather, the input of a reduce-scatter, each rank's buffer of
an all-to-all; a send's message). Not modelled: contention between concurrent groups
on a NIC, switch topology and oversubscription, NCCL's tree and NVLS algorithms,
SHARP in-network reduction, message splitting into channels.

The hierarchical form adds its NVLink and network phases. NCCL runs flat rings instead,
one channel per NIC, whose NVLink hops overlap the network ones, so a group with all 8 GPUs
of each node is bound by the node's NICs alone: NCCL's developers measure 192 GB/s all-reduce
bus bandwidth across DGX A100 nodes with eight 200 Gb/s NICs (NVIDIA/nccl#812, quoted in
#1576), more than the added phases give. Timed that way (``max`` of the two phases instead of
their sum), every measured FSDP and ZeRO-3 run is predicted further below its measured step
(``python -m calc validate`` on 2026-12-04, 93 runs: mean error 6.3 % → 6.9 %, DeepSpeed's
ZeRO-3 530B rows −15 to −17 % → −22 to −24 %), and ZeRO-3 further ahead of PTD-P at 175B on
384 GPUs, the opposite of Table 2. (That trial also put Narayanan et al.'s Figure 15 at batch
32 in its measured order; Megatron-LM's one-call gradient reduction, :func:`calc.plan.whole_buffer`,
now does, with the sum.) Whatever sharded runs lose that the model does not time is, for now, absorbed here;
the sum is kept until it is found.

The startup likewise charges every one of the ring's ``g − 1`` steps at the network's ``α``. NCCL's own
tuner charges only the steps that cross a node at the network's latency and the rest at NVLink's
(``latencies += (nsteps − nInterSteps)·intraLat + nInterSteps·interLat``, ``nInterSteps`` counting nodes;
NCCL ``src/graph/tuning.cc``). Timed that way (``(g − N)·α_in + (N − 1)·α_out`` per pass), the sharded
runs on the most GPUs come closer and the rest fall further below their measured steps (``python -m calc
validate`` on 2026-12-06, 144 runs: mean error 6.0 % → 6.15 %, largest 22.7 % → 23.6 %; DeepSpeed's ZeRO-3
175B on 1536 GPUs +22.7 % → +13.4 %, its 530B rows −15 to −17 % → −18 to −21 %, MosaicML's MPT-1B on 512
H100s −21.7 % → −23.6 %), so the step-synchronous ring stays.

Sources: Thakur, Rabenseifner & Gropp 2005 (ring costs); NVIDIA nccl-tests
``doc/PERFORMANCE.md`` (bus bandwidth); Sergeev & Del Balso 2018 (Horovod, hierarchical
all-reduce); Jeaugey 2019, "Massively Scale Your Deep Learning Training with NCCL 2.4"
(rings across the node's NICs).
"""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import Hardware

__all__ = ["Link", "group_link", "collective_time", "rails", "COLLECTIVES", "RAIL_MIN_BYTES"]

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv")


@dataclass(frozen=True, slots=True)
class Link:
    """Where a group's transfers run."""

    size: int  #: g, ranks in the group
    per_node: int  #: g_in, members in each node the group touches
    nodes: int  #: N = g/g_in
    intra_bandwidth: float  #: achievable NVLink bytes/s per GPU (ring bus bandwidth)
    intra_allreduce_bandwidth: float  #: achievable all-reduce bus bandwidth inside a node (NVLS where there is)
    inter_bandwidth: float  #: achievable NIC bytes/s per GPU
    intra_startup: float
    inter_startup: float

    @property
    def intra_node(self) -> bool:
        """The group stays inside one node (every copy of it)."""
        return self.nodes == 1


def group_link(hw: Hardware, axes: tuple[tuple[int, int], ...]) -> Link:
    """The link of the group spanned by ``axes``, each ``(stride, size)`` in the rank grid.

    ``g_in`` counts the group's members among the first node's ranks (the layout repeats
    node by node).

    >>> from calc.hardware import hardware
    >>> hw = hardware(64, profile_name="h100-sxm5-80gb")
    >>> group_link(hw, ((1, 8),)).nodes, group_link(hw, ((8, 8),)).per_node, group_link(hw, ((2, 8),)).per_node
    (1, 1, 4)
    """
    size = 1
    for _, n in axes:
        size *= n
    gpn = min(hw.gpus_per_node, hw.gpus)
    per_node = 1
    for stride, n in axes:  # members whose offset from rank 0 stays below one node
        if n > 1 and stride < gpn:
            per_node *= min(n, -(-gpn // stride))
    per_node = max(1, min(per_node, size, gpn))
    nodes = max(1, size // per_node)
    return Link(size, per_node, nodes, hw.intra_node_effective,
                hw.intra_node_bandwidth * hw.gpu.intra_node_allreduce_efficiency, hw.inter_node_effective,
                hw.intra_node_startup, hw.inter_node_startup)


def collective_time(op: str, link: Link, n: float) -> tuple[float, float]:
    """(seconds, bytes each rank sends) of one ``op`` of ``n`` bytes on ``link``.

    Ring all-reduce in one node: ``2(g−1)·α + 2(g−1)/g · n/β``; across nodes, the
    hierarchical form above (NVLink and network phases added, as in
    :func:`calc.collectives.two_level_allreduce`). All-gather and reduce-scatter cost half the
    all-reduce; a send ``α + n/β``.

    >>> from calc.hardware import hardware
    >>> hw = hardware(64, profile_name="a100-sxm4-80gb", startup=5e-6)
    >>> t, sent = collective_time("all-reduce", group_link(hw, ((1, 8),)), 1e9)
    >>> round(t * 1e3, 3), sent
    (7.646, 1750000000.0)
    """
    g = link.size
    if g == 1 or n <= 0:
        return 0.0, 0.0
    if op == "send-recv":
        if link.nodes == 1:
            return link.intra_startup + n / link.intra_bandwidth, n
        return link.inter_startup + n / link.inter_bandwidth, n
    steps = 2 if op == "all-reduce" else 1  # an all-reduce is a reduce-scatter then an all-gather
    if op == "all-to-all":
        inside = (link.per_node - 1) / g * n / link.intra_bandwidth
        outside = (g - link.per_node) / g * n / link.inter_bandwidth if link.nodes > 1 else 0.0
        alpha = link.intra_startup if link.nodes == 1 else link.inter_startup
        return (g - 1) * alpha + max(inside, outside), (g - 1) / g * n
    sent = steps * (g - 1) / g * n
    if link.nodes == 1:
        beta = link.intra_allreduce_bandwidth if op == "all-reduce" else link.intra_bandwidth
        return steps * (g - 1) * link.intra_startup + sent / beta, sent
    # NCCL's ring visits every rank: each of its g − 1 steps waits for the slowest hop, a network one.
    gi, nodes = link.per_node, link.nodes
    inside = steps * (gi - 1) / gi * n / link.intra_bandwidth if gi > 1 else 0.0
    outside = steps * (nodes - 1) / nodes * (n / rails(n, gi)) / link.inter_bandwidth
    return steps * (g - 1) * link.inter_startup + inside + outside, sent


#: Bytes of a collective per NCCL channel below which NCCL opens fewer channels: ``nBytes < nc·nt·threadThreshold``
#: with the simple protocol's 64 bytes per thread (``NCCL_SIMPLE_THREAD_THRESHOLD``) and 512 threads
#: (``NCCL_SIMPLE_MAX_NTHREADS``, the ring's default on NVLink systems); ``nBytes`` is the whole collective's (for an
#: all-gather or reduce-scatter, the per-rank count times the ranks). Each channel runs its own ring through one
#: NIC, so a collective smaller than a channel per NIC crosses the network on fewer NICs than the node has.
#: Source: NCCL v2.9.9 ``src/enqueue.cc`` (``getAlgoInfo``), ``src/graph/tuning.cc``, ``src/include/comm.h``,
#: ``src/include/devcomm.h``, ``src/misc/argcheck.cc``; unchanged in NCCL's master of 2026.
RAIL_MIN_BYTES = 64 * 512


def rails(n: float, per_node: int) -> int:
    """How many of a node's NICs a collective of ``n`` bytes (the whole collective's, as nccl-tests counts it, however
    many ranks share it) uses: one per NCCL channel, at most one per member in the node.

    >>> rails(8e9, 8), rails(64e3, 8), rails(1e3, 8)
    (8, 1, 1)
    """
    return max(1, min(per_node, int(n // RAIL_MIN_BYTES)))
