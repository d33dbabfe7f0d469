"""Collective commands: ``allreduce`` (ideal ring), the other collectives, algorithms compared,
the two-level all-reduce, and Megatron's per-layer ``traffic`` (:mod:`calc.collectives`, :mod:`calc.traffic`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

from .. import collectives as _coll
from .. import hardware as _hardware
from .. import traffic as _traffic
from ..command import Command, Param, Result

# ---------------------------------------------------------------------------- allreduce


def _compute_allreduce(v: dict) -> dict:
    return asdict(_coll.ring_allreduce(v["ranks"], v["payload"], v["bandwidth"], v["startup"]))


ALLREDUCE = Command(
    name="allreduce",
    title="Ideal ring all-reduce",
    params=(
        Param("ranks", "count", "Ranks p", default="64"),
        Param("payload", "size", "Payload n per rank (e.g. 1GiB, 512MB; bare = bytes)", default="1GiB"),
        Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 100GB/s, 400Gbit/s)", default="100GB/s"),
        Param("startup", "time", "Per-step startup α (e.g. 5us; bare = seconds)", default="5us"),
    ),
    results=(
        Result("time_s", "Time", "seconds"),
        Result("latency_s", "Startup term 2(p−1)α", "seconds"),
        Result("bandwidth_s", "Bandwidth term 2(p−1)/p · n/β", "seconds"),
        Result("regime", "Regime", "text"),
        Result("steps", "Steps 2(p−1)", "steps"),
        Result("bytes_sent_per_rank", "Bytes sent per rank", "bytes"),
        Result("algbw_bytes_per_s", "Algorithm bandwidth n/T", "bytes_per_s"),
        Result("busbw_bytes_per_s", "Bus bandwidth (nccl-tests)", "bytes_per_s"),
        Result("crossover_payload_bytes", "Crossover payload p·α·β", "bytes"),
    ),
    compute=_compute_allreduce,
    example={"ranks": "64", "payload": "1GiB", "bandwidth": "100GB/s", "startup": "5us"},
)


# ---------------------------------------------------------------------------- collectives


def _collective_dict(r: _coll.Collective) -> dict:
    return {
        "time_s": r.time_s,
        "latency_s": r.latency_s,
        "bandwidth_s": r.bandwidth_s,
        "steps": r.steps,
        "bytes_sent_per_rank": r.bytes_sent_per_rank,
        "algbw_bytes_per_s": r.algbw_bytes_per_s,
        "busbw_bytes_per_s": r.busbw_bytes_per_s,
        "operation": r.operation,
        "algorithm": r.algorithm,
        "ranks": r.ranks,
        "payload_bytes": r.payload_bytes,
    }


_LINK = (
    Param("ranks", "count", "Ranks p", default="8"),
    Param("payload", "size", "Payload S (nccl-tests size: the full array; e.g. 512MiB)", default="512MiB"),
    Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 450GB/s)", default="450GB/s"),
    Param("startup", "time", "Per-step startup α (e.g. 1us)", default="1us"),
)
_COLLECTIVE_RESULTS = (
    Result("time_s", "Time", "seconds"),
    Result("latency_s", "Startup term", "seconds"),
    Result("bandwidth_s", "Bandwidth term", "seconds"),
    Result("bytes_sent_per_rank", "Bytes sent per rank", "bytes"),
    Result("algbw_bytes_per_s", "Algorithm bandwidth S/T", "bytes_per_s"),
    Result("busbw_bytes_per_s", "Bus bandwidth (nccl-tests)", "bytes_per_s"),
    Result("algorithm", "Algorithm", "text"),
)


def _gather_like_command(name: str, title: str, fn: Callable) -> Command:
    def compute(v: dict) -> dict:
        return _collective_dict(fn(v["ranks"], v["payload"], v["bandwidth"], v["startup"]))

    return Command(name=name, title=title, params=_LINK, results=_COLLECTIVE_RESULTS, compute=compute,
                   example={"ranks": "8", "payload": "512MiB", "bandwidth": "450GB/s", "startup": "1us"})


GATHER_LIKE = (
    _gather_like_command("allgather", "Ring all-gather", _coll.allgather),
    _gather_like_command("reducescatter", "Ring reduce-scatter", _coll.reducescatter),
    _gather_like_command("alltoall", "Pairwise all-to-all", _coll.alltoall),
    _gather_like_command("broadcast", "Pipelined-ring broadcast", _coll.broadcast),
)


def _compute_allreduce_algorithms(v: dict) -> dict:
    args = (v["ranks"], v["payload"], v["bandwidth"], v["startup"])
    ring = _coll.ring_allreduce(*args).time_s
    pow2 = v["ranks"] & (v["ranks"] - 1) == 0
    rab = _coll.rabenseifner_allreduce(*args).time_s if pow2 else None
    rd = _coll.recursive_doubling_allreduce(*args).time_s if pow2 else None
    times = {"ring": ring, "Rabenseifner": rab, "recursive doubling": rd}
    return {"ring_time_s": ring, "rabenseifner_time_s": rab, "recursive_doubling_time_s": rd,
            "fastest": min((t, k) for k, t in times.items() if t is not None)[1]}


ALLREDUCE_ALGORITHMS = Command(
    name="allreduce-algorithms",
    title="All-reduce algorithms compared (ring, Rabenseifner, recursive doubling)",
    params=_LINK,
    results=(
        Result("ring_time_s", "Ring", "seconds"),
        Result("rabenseifner_time_s", "Rabenseifner (p a power of two)", "seconds"),
        Result("recursive_doubling_time_s", "Recursive doubling (p a power of two)", "seconds"),
        Result("fastest", "Fastest", "text"),
    ),
    compute=_compute_allreduce_algorithms,
    example={"ranks": "8", "payload": "1GB", "bandwidth": "100GB/s", "startup": "5us"},
)


def _compute_two_level(v: dict) -> dict:
    r = _coll.two_level_allreduce(v["ranks"], v["gpus_per_node"], v["payload"], v["intra_node_bandwidth"],
                                  v["inter_node_bandwidth"], v["intra_node_startup"], v["inter_node_startup"])
    flat = _coll.ring_allreduce(v["ranks"], v["payload"], v["inter_node_bandwidth"], v["inter_node_startup"])
    return {"time_s": r.time_s, "intra_node_s": r.intra_node_s, "inter_node_s": r.inter_node_s,
            "flat_ring_time_s": flat.time_s, "nodes": r.nodes,
            "bytes_sent_intra_per_rank": r.bytes_sent_intra_per_rank,
            "bytes_sent_inter_per_rank": r.bytes_sent_inter_per_rank,
            "algbw_bytes_per_s": r.algbw_bytes_per_s, "busbw_bytes_per_s": r.busbw_bytes_per_s}


TWO_LEVEL = Command(
    name="allreduce-two-level",
    title="Two-level all-reduce (inside nodes, then across)",
    params=(
        Param("ranks", "count", "Ranks p", default="64"),
        Param("gpus_per_node", "count", "GPUs per node g", default="8", maximum=_hardware.MAX_GPUS_PER_NODE),
        Param("payload", "size", "Payload n per rank", default="1GB"),
        Param("intra_node_bandwidth", "bandwidth", "Bandwidth inside a node", default="450GB/s"),
        Param("inter_node_bandwidth", "bandwidth", "Bandwidth across nodes (per GPU)", default="50GB/s"),
        Param("intra_node_startup", "time", "Startup inside a node", default="1us"),
        Param("inter_node_startup", "time", "Startup across nodes", default="5us"),
    ),
    results=(
        Result("time_s", "Two-level time", "seconds"),
        Result("intra_node_s", "Inside nodes (reduce-scatter + all-gather)", "seconds"),
        Result("inter_node_s", "Across nodes (ring of n/g)", "seconds"),
        Result("flat_ring_time_s", "Flat ring at the inter-node bandwidth", "seconds"),
    ),
    compute=_compute_two_level,
    example={"ranks": "64", "gpus_per_node": "8", "payload": "1GB"},
)


# ---------------------------------------------------------------------------- traffic


def _compute_traffic(v: dict) -> dict:
    return asdict(_traffic.layer_traffic(v["micro_batch"], v["seq_len"], v["hidden"], v["tensor_parallel"],
                                         v["bytes_per_element"]))


TRAFFIC = Command(
    name="traffic",
    title="Tensor- and pipeline-parallel traffic per layer and microbatch",
    params=(
        Param("micro_batch", "count", "Microbatch b (sequences)", default="1"),
        Param("seq_len", "count", "Sequence length s (tokens)", default="2048"),
        Param("hidden", "count", "Hidden size h", default="12288"),
        Param("tensor_parallel", "count", "Tensor-parallel degree t", default="8"),
        Param("bytes_per_element", "count", "Bytes per activation element (2 = bf16)", default="2"),
    ),
    results=(
        Result("activation_elements", "Activations b·s·h", "count"),
        Result("tp_elements_per_layer", "TP elements sent per device per layer, 8bsh(t−1)/t", "count"),
        Result("tp_bytes_per_layer", "TP bytes sent per device per layer", "bytes"),
        Result("pp_elements_per_boundary", "PP elements per stage boundary, each direction", "count"),
        Result("pp_bytes_per_boundary", "PP bytes per stage boundary, each direction", "bytes"),
    ),
    compute=_compute_traffic,
    example={"micro_batch": "1", "seq_len": "2048", "hidden": "12288", "tensor_parallel": "8"},
)
