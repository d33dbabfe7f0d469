"""Commands over a whole SPEC: ``plan``, ``search`` and ``device-memory`` (:mod:`calc.plan`,
:mod:`calc.search`); their flat parameters are the SPEC.json fields."""

from __future__ import annotations

import math
from dataclasses import asdict

from .. import memory as _memory
from .. import model as _model
from .. import plan as _plan
from .. import search as _search
from ..command import Command, Param, Result
from ..errors import CalcError
from .training import _MAX_DEGREE

# ---------------------------------------------------------------------------- plan and search

_SPEC_MODEL = (
    Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS, section="model"),
    Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN, section="model"),
    Param("heads", "count", "Attention heads a", required=True, maximum=_model.MAX_HIDDEN, section="model"),
    Param("kv_heads", "count", "Key/value heads (grouped-query attention)", help="Blank: = heads.",
          maximum=_model.MAX_HIDDEN, section="model"),
    Param("ffn_hidden", "count", "MLP width f (per expert)", help="Blank: 4 × hidden.",
          maximum=16 * _model.MAX_HIDDEN, section="model"),
    Param("gated_mlp", "flag", "Gated MLP (SwiGLU: three matrices)", default="false", section="model"),
    Param("vocab", "count", "Vocabulary V", required=True, maximum=_model.MAX_VOCAB, section="model"),
    Param("seq_len", "count", "Sequence length s (tokens)", required=True, maximum=_model.MAX_SEQ_LEN,
          section="model"),
    Param("tied_embeddings", "flag", "Output head tied to the embedding", default="false", section="model"),
    Param("biases", "flag", "Biases in linear layers and norms (GPT-3 style)", default="false", section="model"),
    Param("learned_positions", "flag", "Learned position embeddings (GPT-3 style; else rotary)", default="false",
          section="model"),
    Param("experts", "count", "Experts per MoE layer (1: dense)", default="1", maximum=_model.MAX_EXPERTS,
          section="model"),
    Param("top_k", "count", "Experts per token", default="1", maximum=_model.MAX_EXPERTS, section="model"),
    Param("moe_layer_freq", "count", "Every k-th layer is MoE (1: all)", default="1", maximum=_model.MAX_LAYERS,
          section="model"),
)
_SPEC_BATCH = (
    Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
    Param("global_batch", "count", "Global batch (sequences per step)", required=True, section="batch"),
)
_SPEC_HARDWARE = (
    Param("gpus", "count", "GPUs", required=True, maximum=float(_plan.MAX_GPUS), section="hardware"),
    Param("gpus_per_node", "count", "GPUs per node", default="8", maximum=1024, section="hardware"),
    Param("memory", "size", "Memory per GPU (e.g. 80GB)", required=True, section="hardware"),
    Param("flops_per_gpu", "flop_rate", "Peak FLOP/s per GPU (e.g. 989TFLOP/s)", required=True,
          section="hardware"),
    Param("compute_efficiency", "number", "Achieved / peak FLOP/s of the compute (0 < x <= 1)", default="1",
          minimum=0, maximum=1.0, section="hardware"),
    Param("intra_node_bandwidth", "bandwidth", "Per-GPU bandwidth inside a node (e.g. 450GB/s)", required=True,
          section="hardware"),
    Param("inter_node_bandwidth", "bandwidth", "Per-GPU bandwidth across nodes (e.g. 50GB/s)", required=True,
          section="hardware"),
    Param("startup", "time", "Per-message startup α (e.g. 5us)", default="5us", section="hardware"),
)
_SPEC_PARALLEL = tuple(
    Param(name, "count", label, default="1", maximum=_MAX_DEGREE, section="parallel")
    for name, label in (("data", "Data-parallel degree"), ("tensor", "Tensor-parallel degree"),
                        ("pipeline", "Pipeline stages"), ("context", "Context-parallel degree"),
                        ("expert", "Expert-parallel degree"))
) + (
    Param("zero", "count", "ZeRO stage (0-3)", default="0", minimum=0, maximum=3, section="parallel"),
    Param("sequence_parallel", "flag", "Sequence parallelism", default="false", section="parallel"),
    Param("recompute", "choice", "Activation recomputation", default="none", choices=_memory.RECOMPUTE,
          section="parallel"),
    Param("interleave", "count", "Model chunks per stage v", default="1", maximum=1024, section="parallel"),
)
_SPEC_TRAINING = (
    Param("precision", "choice", "Precision recipe", default="bf16-adam", choices=tuple(_model.PRECISIONS),
          section="training"),
    Param("tokens", "count", "Training tokens (for the training time)", maximum=1e16, section="training"),
)


def _spec_model(v: dict) -> _model.Model:
    return _model.model(
        v["layers"], v["hidden"], v["heads"], v["vocab"], v["seq_len"], kv_heads=v["kv_heads"],
        ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"], tied_embeddings=v["tied_embeddings"],
        biases=v["biases"], learned_positions=v["learned_positions"], experts=v["experts"], top_k=v["top_k"],
        moe_layer_freq=v["moe_layer_freq"],
    )


def _spec_hardware(v: dict) -> _plan.Hardware:
    if v["compute_efficiency"] == 0:
        raise CalcError("compute_efficiency", "a number > 0 and <= 1", 0)
    return _plan.hardware(v["gpus"], v["memory"], v["flops_per_gpu"], v["intra_node_bandwidth"],
                          v["inter_node_bandwidth"], v["startup"], v["gpus_per_node"], v["compute_efficiency"])


def _compute_plan(v: dict) -> dict:
    par = _plan.parallel(v["data"], v["tensor"], v["pipeline"], v["context"], v["expert"], v["zero"],
                         v["sequence_parallel"], v["recompute"], v["interleave"])
    p = _plan.plan(_spec_model(v), v["micro_batch"], v["global_batch"], _spec_hardware(v), par, v["precision"],
                   v["tokens"])
    return p.as_dict()


_LLAMA3_8B = {
    "layers": "32", "hidden": "4096", "heads": "32", "kv_heads": "8", "ffn_hidden": "14336", "gated_mlp": "true",
    "vocab": "128256", "seq_len": "8192", "micro_batch": "1", "global_batch": "512", "gpus": "64",
    "gpus_per_node": "8", "memory": "80GB", "flops_per_gpu": "989TFLOP/s", "intra_node_bandwidth": "450GB/s",
    "inter_node_bandwidth": "50GB/s", "startup": "5us",
}

PLAN = Command(
    name="plan",
    title="Execution plan",
    params=_SPEC_MODEL + _SPEC_BATCH + _SPEC_HARDWARE + _SPEC_PARALLEL + _SPEC_TRAINING,
    results=(
        Result("step_time_s", "Step time", "seconds"),
        Result("compute_time_s", "Compute", "seconds"),
        Result("bubble_time_s", "Pipeline bubble", "seconds"),
        Result("exposed_communication_s", "Exposed communication", "seconds"),
        Result("bubble_fraction", "Bubble / ideal compute (p−1)/(v·m)", "ratio"),
        Result("microbatches_per_step", "Microbatches per step m", "microbatches"),
        Result("tokens_per_s", "Throughput", "tokens_per_s"),
        Result("mfu", "MFU", "percent"),
        Result("hfu", "HFU", "percent"),
        Result("memory_per_device", "Memory per device (most loaded stage)", "json"),
        Result("communications", "Communication per step", "json"),
        Result("stages", "What each stage holds", "json"),
        Result("uneven_split", "Uneven layer split", "text"),
        Result("parallel", "Split", "json"),
        Result("gpus", "GPUs", "GPUs"),
        Result("nodes", "Nodes", "count"),
        Result("rank_strides", "Rank strides (rank = Σ coordinate × stride)", "json"),
    ),
    compute=_compute_plan,
    example={**_LLAMA3_8B, "data": "8", "tensor": "8", "pipeline": "1", "context": "1", "expert": "1", "zero": "1",
             "sequence_parallel": "true", "recompute": "selective", "interleave": "1"},
)


def _compute_search(v: dict) -> dict:
    r = _search.search(_spec_model(v), v["global_batch"], _spec_hardware(v), v["precision"], top=v["top"],
                       max_micro_batch=v["max_micro_batch"], micro_batch=v["micro_batch"], tokens=v["tokens"])
    out = r.as_dict()
    out["refused_summary"] = _search.refusal_summary(r.refused)
    return out


SEARCH = Command(
    name="search",
    title="Configuration search",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size (blank: searched)", section="batch"),
    ) + _SPEC_BATCH[1:] + _SPEC_HARDWARE + _SPEC_TRAINING + (
        Param("top", "count", "Plans to return (fastest first)", default="10", maximum=_search.MAX_TOP),
        Param("max_micro_batch", "count", "Largest microbatch tried", default="16", maximum=1024),
    ),
    results=(
        Result("plans", "Plans that fit, fastest first", "json"),
        Result("feasible", "Configurations that fit", "count"),
        Result("refused_count", "Configurations refused", "count"),
        Result("refused_by_reason", "Refused, by reason", "json"),
        Result("refused_summary", "Refused, by rule (with examples)", "json"),
    ),
    compute=_compute_search,
    example={k: x for k, x in _LLAMA3_8B.items() if k != "micro_batch"},
)


def _compute_device_memory(v: dict) -> dict:
    """Memory of the most loaded GPU from :func:`calc.plan.plan` with a cluster of exactly the split's GPUs."""
    d, t, p, c, e = v["data"], v["tensor"], v["pipeline"], v["context"], v["expert"]
    gpus = d * t * p * c * e
    if gpus > _plan.MAX_GPUS:
        raise CalcError("data", f"such that data × tensor × pipeline × context × expert <= {_plan.MAX_GPUS}", d)
    mbs = v["microbatches"] if v["microbatches"] is not None else p
    # Only memory is reported: FLOP/s and bandwidths do not change it (placeholders); nodes of up to 8.
    hw = _plan.hardware(gpus, v["memory"], 1e15, 1e11, 1e11, 0.0, math.gcd(gpus, 8))
    par = _plan.parallel(d, t, p, c, e, v["zero"], v["sequence_parallel"], v["recompute"], v["interleave"])
    pl = _plan.plan(_spec_model(v), v["micro_batch"], v["micro_batch"] * d * e * mbs, hw, par, v["precision"])
    mem = asdict(pl.memory_per_device)
    stage = next(s for s in pl.stages if s.stage == mem["stage"])
    return {**mem, "gpus": gpus, "microbatches": mbs, "params_per_device": stage.params_per_device,
            "layers_on_stage": len(stage.layers)}


DEVICE_MEMORY = Command(
    name="device-memory",
    title="Memory per GPU (model states and activations)",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
        Param("microbatches", "count", "Microbatches per step m", help="Blank: = pipeline (enough to fill 1F1B).",
              section="batch"),
        Param("memory", "size", "Memory per GPU (e.g. 80GB)", default="80GB", section="hardware"),
    ) + _SPEC_PARALLEL + _SPEC_TRAINING[:1],
    results=(
        Result("total_bytes", "Total per GPU", "bytes"),
        Result("fits", "Fits in the GPU's memory", "text"),
        Result("binding_term", "Largest term", "text"),
        Result("params_bytes", "Weights", "bytes"),
        Result("grads_bytes", "Gradients", "bytes"),
        Result("optimizer_bytes", "Optimizer states", "bytes"),
        Result("activations_bytes", "Activations", "bytes"),
        Result("buffers_bytes", "ZeRO-3 gathered layers", "bytes"),
        Result("headroom_bytes", "Headroom (negative: over)", "bytes"),
        Result("capacity_bytes", "GPU memory", "bytes"),
        Result("total_gb", "Total per GPU in GB (10^9 B)", "ratio"),
        Result("total_gib", "Total per GPU in GiB (2^30 B)", "ratio"),
        Result("stage", "Most loaded pipeline stage", "count"),
        Result("layers_on_stage", "Layers on that stage", "count"),
        Result("params_per_device", "Parameters per GPU before ZeRO", "count"),
        Result("gpus", "GPUs (data × tensor × pipeline × context × expert)", "GPUs"),
        Result("microbatches", "Microbatches per step m", "microbatches"),
    ),
    compute=_compute_device_memory,
    example={k: x for k, x in _LLAMA3_8B.items() if k in {p.name for p in _SPEC_MODEL} | {"micro_batch", "memory"}}
    | {"data": "8", "zero": "1", "recompute": "selective"},
)
