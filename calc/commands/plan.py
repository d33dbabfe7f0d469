"""Commands over a whole SPEC: ``plan``, ``search`` and ``device-memory`` (:mod:`calc.plan`,
:mod:`calc.search`), whose flat parameters are the SPEC.json fields; and ``hardware``, the GPU
profiles (:mod:`calc.hardware`)."""

from __future__ import annotations

from dataclasses import asdict, replace
from functools import lru_cache

from .. import compute as _compute
from .. import hardware as _hardware
from .. import memory as _memory
from .. import model as _model
from .. import plan as _plan
from .. import search as _search
from ..check import MAX_COUNT
from ..command import Command, Param, Result
from ..errors import CalcError
from ..pipeline import MAX_INTERLEAVE
from ..presets import PRESETS
from ..spec import AXES, spec_key
from .training import _MAX_DEGREE, RECOMPUTE_LAYERS

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
    Param("dropout", "flag", "Dropout (GPT-3 style: its masks kept for the backward pass; Llama has none)",
          default="true", section="model"),
    Param("experts", "count", "Experts per MoE layer (1: dense)", default="1", maximum=_model.MAX_EXPERTS,
          section="model"),
    Param("top_k", "count", "Experts per token", default="1", maximum=_model.MAX_EXPERTS, section="model"),
    Param("moe_layer_freq", "count", "Every k-th layer is MoE (1: all)", default="1", maximum=_model.MAX_LAYERS,
          section="model"),
    Param("attention", "choice", "Attention kernel (flash: FlashAttention-2; flash3: FlashAttention-3; triton: "
          "FlashAttention in Triton; standard: s² scores in memory)",
          default="flash", choices=_model.ATTENTION, section="model"),
    Param("kernels", "choice", "Element-wise kernels (fused: Megatron, Transformer Engine or torch.compile; "
          "eager: PyTorch, one kernel per operation)", default="fused", choices=_model.KERNELS, section="model"),
    Param("norm", "choice", "Layer norm (RMSNorm costs more than LayerNorm only in eager PyTorch)",
          default="layernorm", choices=_model.NORMS, section="model"),
)
_SPEC_BATCH = (
    Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
    Param("global_batch", "count", "Global batch (sequences per step)", required=True, section="batch"),
)
_SPEC_HARDWARE = (
    Param("profile", "choice", "GPU profile", help="Blank: give every figure by hand.",
          choices=tuple(_hardware.PROFILES), section="hardware"),
    Param("gpus", "count", "GPUs", required=True, maximum=float(_hardware.MAX_GPUS), section="hardware"),
    Param("gpus_per_node", "count", "GPUs per node (NVLink domain)", help="Blank: the profile's (8; 72 for NVL72).",
          maximum=_hardware.MAX_GPUS_PER_NODE, section="hardware"),
    Param("device_memory", "size", "Memory per GPU (e.g. 80GiB)", help="Blank: the profile's.", section="hardware"),
    Param("reserve", "size", "Memory kept back per GPU (CUDA context, NCCL, fragmentation)", default="2GiB",
          section="hardware"),
    Param("flops_per_gpu", "flop_rate", "Peak FLOP/s per GPU (e.g. 989TFLOP/s)",
          help="Blank: the profile's dense peak for the precision.", section="hardware"),
    Param("compute_efficiency", "number", "One efficiency for all compute (0 < x <= 1)",
          help="Blank: time every kernel (GEMMs by shape, memory-bound work, attention).",
          minimum=1e-3, maximum=1.0, section="hardware"),
    Param("hbm_bandwidth", "bandwidth", "HBM bandwidth per GPU (e.g. 3.35TB/s)", help="Blank: the profile's.",
          section="hardware"),
    Param("intra_node_bandwidth", "bandwidth", "Per-GPU NVLink bandwidth, one direction (e.g. 450GB/s)",
          help="Blank: the profile's.", section="hardware"),
    Param("inter_node_bandwidth", "bandwidth", "Per-GPU network bandwidth (e.g. 50GB/s)", help="Blank: the profile's.",
          section="hardware"),
    Param("intra_node_startup", "time", "Startup α per step inside a node (e.g. 1us)", help="Blank: the profile's.",
          section="hardware"),
    Param("inter_node_startup", "time", "Startup α per step across nodes (e.g. 6us)", help="Blank: the profile's.",
          section="hardware"),
)
_PARALLEL_DEGREES = tuple(
    Param(f"{axis}_parallel", "count", label, default="1", maximum=_MAX_DEGREE, section="parallel")
    for axis, label in zip(AXES, ("Data-parallel degree", "Tensor-parallel degree", "Pipeline-parallel degree (stages)",
                                  "Context-parallel degree", "Expert-parallel degree"))
) + (
    Param("zero", "count", "ZeRO stage (0-3)", default="0", minimum=0, maximum=3, section="parallel"),
    Param("zero_group", "count", "ZeRO shard group (data-parallel ranks)",
          help="Blank: all of them. Fewer (a divisor of the data-parallel degree, ZeRO 1-3): the model states are "
               "sharded inside groups of that many consecutive replicas and all-reduced across the groups, as "
               "PyTorch's HYBRID_SHARD does with a node.",
          maximum=_MAX_DEGREE, section="parallel"),
    Param("sequence_parallel", "flag", "Sequence parallelism", default="false", section="parallel"),
    Param("recompute", "choice", "Activation recomputation", default="none", choices=_memory.RECOMPUTE,
          section="parallel"),
    replace(RECOMPUTE_LAYERS, section="parallel"),
    Param("interleave", "count", "Model chunks per stage v", default="1", maximum=MAX_INTERLEAVE, section="parallel"),
    Param("stage_layers", "counts", "Layers per stage (e.g. 7,8,...,8,7)", help="Blank: as even as possible.",
          maximum=_model.MAX_LAYERS, section="parallel"),
)
_SCHEDULE = (
    Param("overlap_grad_reduce", "flag", "DP gradient reduction overlaps the backward pass", default="true",
          section="parallel"),
    Param("overlap_param_gather", "flag", "ZeRO 1-2 weight gather overlaps the next forward pass", default="false",
          section="parallel"),
    Param("tp_comm_overlap", "flag", "TP collectives overlap the GEMMs", default="false", section="parallel"),
    Param("zero3_gather", "choice", "ZeRO-3 gathers (layer: PyTorch FSDP; tensor: DeepSpeed; tensor-blocking: "
          "DeepSpeed of 2021)", default="layer",
          choices=_plan.ZERO3_GATHER, section="parallel"),
    Param("pipeline_engine", "choice", "Engine (sends and gradient accumulation)", default="megatron",
          choices=_plan.PIPELINE_ENGINES, section="parallel",
          help="megatron-2021: a gradient add per microbatch; deepspeed: also four blocking sends per microbatch, "
               "no interleaving, and with fp32 gradients (megatron-bf16) its BF16_Optimizer."),
    Param("rank_order", "choice", "Rank order, innermost first", default="tp-cp-ep-dp-pp",
          choices=tuple(_plan.RANK_ORDERS), section="parallel",
          help="tp-cp-ep-dp-pp: Megatron-LM's default, pipeline stages outermost; tp-cp-ep-pp-dp: replicas outermost "
               "(Megatron-LM's --use-tp-pp-dp-mapping, Llama 3's order)."),
)
_SPEC_PARALLEL = _PARALLEL_DEGREES + _SCHEDULE
_SPEC_TRAINING = (
    Param("precision", "choice", "Precision recipe", default="bf16-adam", choices=tuple(_model.PRECISIONS),
          section="training"),
    Param("tokens", "count", "Training tokens (for the training time)", maximum=_compute.MAX_TOKENS, section="training"),
    Param("fp8", "flag", "FP8 linear layers (Transformer Engine)", default="false", section="training",
          help="Projections and MLP in fp8 (E4M3/E5M2), weights gathered in fp8; attention, output layer and "
               "optimizer 16-bit. Needs fp8 tensor cores (a Hopper or Blackwell profile)."),
)


def _spec_model(v: dict) -> _model.Model:
    return _model.model(
        v["layers"], v["hidden"], v["heads"], v["vocab"], v["seq_len"], kv_heads=v["kv_heads"],
        ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"], tied_embeddings=v["tied_embeddings"],
        biases=v["biases"], learned_positions=v["learned_positions"], experts=v["experts"], top_k=v["top_k"],
        moe_layer_freq=v["moe_layer_freq"], attention=v["attention"], dropout=v["dropout"],
        kernels=v["kernels"], norm=v["norm"],
    )


def _spec_hardware(v: dict, gpus: int | None = None) -> _hardware.Hardware:
    """The cluster from ``hardware.profile`` and the fields given beside it (they override it)."""
    return _hardware.hardware(
        v["gpus"] if gpus is None else gpus, v.get("device_memory"), v.get("flops_per_gpu"),
        v.get("intra_node_bandwidth"),
        v.get("inter_node_bandwidth"), None, v.get("gpus_per_node"), v.get("compute_efficiency"),
        profile_name=v.get("profile"), hbm_bandwidth=v.get("hbm_bandwidth"), reserve=v.get("reserve"),
        dtype=_hardware.PRECISION_DTYPES[v["precision"]], intra_node_startup=v.get("intra_node_startup"),
        inter_node_startup=v.get("inter_node_startup"))


def _spec_parallel(v: dict) -> _plan.Parallel:
    return _plan.parallel(*(v[f"{a}_parallel"] for a in AXES), v["zero"],
                          v["sequence_parallel"], v["recompute"], v["interleave"], v["stage_layers"],
                          v["overlap_grad_reduce"], v["overlap_param_gather"], v["tp_comm_overlap"],
                          v["zero3_gather"], v["recompute_layers"], v["pipeline_engine"], v["rank_order"],
                          v["zero_group"])


def planned(v: dict, ranks: bool = True) -> tuple[_model.Model, _plan.Plan]:
    """(model, plan) of a ``plan``'s parsed inputs ``v``; with ``ranks``, the plan lists every rank
    (:func:`calc.plan.assemble`), which only the CLI prints.

    The last is kept (plans are frozen): the atlas's answer computes the plan, then its launch
    settings (:func:`calc.commands.export.launches`) from the same inputs, and planned it twice,
    a third of the atlas's time per input (issue 15). Both ask without the ranks, whose listing took
    a tenth of the rest at the atlas's 1024 GPUs.
    """
    return _planned(tuple(sorted(v.items())), ranks)


@lru_cache(maxsize=1)
def _planned(key: tuple, ranks: bool) -> tuple[_model.Model, _plan.Plan]:
    v = dict(key)
    m = _spec_model(v)
    return m, _plan.plan(m, v["micro_batch"], v["global_batch"], _spec_hardware(v), _spec_parallel(v),
                         v["precision"], v["tokens"], v["fp8"], list_ranks=ranks)


def _compute_plan(v: dict) -> dict:
    return planned(v)[1].as_dict()


def _page_plan(v: dict) -> dict:
    return planned(v, ranks=False)[1].as_dict()


#: Llama-3 8B's shape, from its preset (the one place it is written).
LLAMA3_8B_MODEL = {k: PRESETS["llama3-8b"].inputs[k]
                   for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab")}
_LLAMA3_8B = {**LLAMA3_8B_MODEL, "seq_len": "8192", "micro_batch": "1", "global_batch": "512", "gpus": "64",
              "profile": "h100-sxm5-80gb"}

PLAN = Command(
    name="plan",
    title="Execution plan",
    params=_SPEC_MODEL + _SPEC_BATCH + _SPEC_HARDWARE + _SPEC_PARALLEL + _SPEC_TRAINING,
    results=(
        Result("step_time_s", "Step time", "seconds"),
        Result("compute_time_s", "Compute", "seconds"),
        Result("bubble_time_s", "Pipeline bubble", "seconds"),
        Result("exposed_communication_s", "Exposed communication", "seconds"),
        Result("optimizer_time_s", "Optimizer step", "seconds"),
        Result("bubble_fraction", "Bubble / ideal compute (p−1)/(v·m)", "ratio"),
        Result("microbatches_per_step", "Microbatches per step m", "microbatches"),
        Result("tokens_per_s", "Throughput", "tokens_per_s"),
        Result("mfu", "MFU", "percent"),
        Result("hfu", "HFU", "percent"),
        Result("achieved_flops_per_gpu", "Model FLOP/s per GPU", "flop_rate"),
        Result("memory_per_device", "Memory per device (most loaded stage)", "json"),
        Result("communications", "Communication per step", "json"),
        Result("stages", "What each stage holds", "json"),
        Result("uneven_split", "Uneven layer split", "text"),
        Result("parallel", "Split", "json"),
        Result("hardware_profile", "GPU profile", "text"),
        Result("gpus", "GPUs", "GPUs"),
        Result("nodes", "Nodes", "count"),
        Result("rank_strides", "Rank strides (rank = Σ coordinate × stride)", "json"),
    ),
    compute=_compute_plan,
    page_compute=_page_plan,
    example={**_LLAMA3_8B, "data_parallel": "8", "tensor_parallel": "8", "pipeline_parallel": "1",
             "context_parallel": "1", "expert_parallel": "1", "zero": "1", "sequence_parallel": "true",
             "recompute": "none", "interleave": "1"},
)

#: In ``search``, a blank field of the ``parallel`` section is searched; a value fixes it.
_SEARCH_PARALLEL = tuple(replace(p, default=None, help="Blank: every layer (not searched; a value fixes recompute "
                                 "to full)." if p.name == "recompute_layers" else "Blank: searched.")
                         for p in _PARALLEL_DEGREES) + tuple(
    replace(p, default=None, help=f"Blank: {p.default}.") for p in _SCHEDULE)


def _compute_search(v: dict) -> dict:
    fixed = {spec_key(p.name, p.section): v[p.name] for p in _SEARCH_PARALLEL if v[p.name] is not None}
    r = _search.search(_spec_model(v), v["global_batch"], _spec_hardware(v), v["precision"], top=v["top"],
                       max_micro_batch=v["max_micro_batch"], micro_batch=v["micro_batch"], tokens=v["tokens"],
                       fixed=fixed, fp8=v["fp8"])
    return r.as_dict()


SEARCH = Command(
    name="search",
    title="Configuration search",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size (blank: searched)", section="batch"),
    ) + _SPEC_BATCH[1:] + _SPEC_HARDWARE + _SEARCH_PARALLEL + _SPEC_TRAINING + (
        Param("top", "count", "Plans to return (fastest first)", default="10", maximum=_search.MAX_TOP),
        Param("max_micro_batch", "count", "Largest microbatch tried", default="16", maximum=_search.MAX_MICRO_BATCH),
    ),
    results=(
        Result("plans", "Plans that fit, fastest first", "json"),
        Result("feasible", "Configurations that fit and were costed", "count"),
        Result("pruned", "Configurations whose compute alone is slower than the last plan kept", "count"),
        Result("refused_count", "Configurations refused", "count"),
        Result("refused_by_reason", "Refused, by reason", "json"),
        Result("refused_summary", "Refused, by rule (one example each)", "json"),
        Result("fixed", "Fixed by the SPEC", "json"),
        Result("capped", "Configuration cap", "text"),
    ),
    compute=_compute_search,
    example={k: x for k, x in _LLAMA3_8B.items() if k != "micro_batch"},
)


def _compute_device_memory(v: dict) -> dict:
    """Memory of the most loaded GPU (:func:`calc.plan.memory`) on a cluster of exactly the split's GPUs."""
    d, t, p, c, e = (v[f"{a}_parallel"] for a in AXES)
    gpus = d * t * p * c * e
    if gpus > _hardware.MAX_GPUS:
        raise CalcError("data_parallel", "such that data_parallel × tensor_parallel × pipeline_parallel × "
                        f"context_parallel × expert_parallel <= {_hardware.MAX_GPUS}", d)
    mbs = v["microbatches"] if v["microbatches"] is not None else p
    per_step = v["micro_batch"] * d * e
    if per_step * mbs > MAX_COUNT:
        raise CalcError("microbatches", "such that micro_batch × data_parallel × expert_parallel × microbatches "
                        f"<= {MAX_COUNT}", mbs)
    hw = _spec_hardware(v | {"gpus": gpus}, gpus)
    w = _plan.workload(_spec_model(v), per_step * mbs, hw, v["precision"], fp8=v["fp8"])
    par = _spec_parallel(v | {"overlap_grad_reduce": True, "overlap_param_gather": False, "tp_comm_overlap": False,
                              "zero3_gather": "layer", "pipeline_engine": "megatron",
                              "rank_order": "tp-cp-ep-dp-pp"})
    mem = asdict(_plan.memory(w, par, v["micro_batch"]))
    shape = w.arrangement(par).shape(mem["stage"])
    return {**mem, "gpus": gpus, "microbatches": mbs, "params_per_device": shape.dense_params + shape.expert_params,
            "layers_on_stage": shape.layers}


DEVICE_MEMORY = Command(
    name="device-memory",
    title="Memory per GPU (model states and activations)",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
        Param("microbatches", "count", "Microbatches per step m",
              help="Blank: = pipeline_parallel (enough to fill 1F1B).",
              section="batch"),
        Param("profile", "choice", "GPU profile", default="h100-sxm5-80gb", choices=tuple(_hardware.PROFILES),
              section="hardware"),
        Param("device_memory", "size", "Memory per GPU (e.g. 80GiB)", help="Blank: the profile's.",
              section="hardware"),
        Param("reserve", "size", "Memory kept back per GPU (CUDA context, NCCL, fragmentation)", default="2GiB",
              section="hardware"),
    ) + _PARALLEL_DEGREES + tuple(p for p in _SPEC_TRAINING if p.name != "tokens"),
    results=(
        Result("total_bytes", "Total per GPU (reserve included)", "bytes"),
        Result("fits", "Fits in the GPU's memory", "fits"),
        Result("binding_term", "Largest term", "text"),
        *(Result(f"{key}_bytes", _plan.term_title(name), "bytes") for key, name in _plan.MEMORY_TERMS),
        Result("headroom_bytes", "Headroom (negative: over)", "bytes"),
        Result("capacity_bytes", "GPU memory", "bytes"),
        Result("total_gb", "Total per GPU in GB (10^9 B)", "ratio"),
        Result("total_gib", "Total per GPU in GiB (2^30 B)", "ratio"),
        Result("stage", "Most loaded pipeline stage", "count"),
        Result("layers_on_stage", "Layers on that stage", "count"),
        Result("params_per_device", "Parameters per GPU before ZeRO", "count"),
        Result("gpus", "GPUs (the product of the five degrees)", "GPUs"),
        Result("microbatches", "Microbatches per step m", "microbatches"),
    ),
    compute=_compute_device_memory,
    example={k: x for k, x in _LLAMA3_8B.items() if k in {p.name for p in _SPEC_MODEL} | {"micro_batch"}}
    | {"data_parallel": "8", "zero": "1", "recompute": "selective", "profile": "h100-sxm5-80gb"},
)


# ---------------------------------------------------------------------------- hardware


def _compute_hardware(v: dict) -> dict:
    rows = []
    for prof in _hardware.PROFILES.values():
        rows.append({
            "name": prof.name, "memory_bytes": prof.memory_bytes,
            "bf16_flop_per_s": prof.peak_flops.get("bf16"), "fp8_flop_per_s": prof.peak_flops.get("fp8"),
            "hbm_bytes_per_s": prof.hbm_bandwidth, "nvlink_bytes_per_s": prof.intra_node_bandwidth,
            "gpus_per_node": prof.gpus_per_node, "nic_bytes_per_s": prof.inter_node_bandwidth,
        })
    chosen = _hardware.profile(v["profile"]).as_dict() if v["profile"] is not None else None
    return {"profiles": rows, "profile": chosen}


HARDWARE = Command(
    name="hardware",
    title="GPU profiles",
    params=(Param("profile", "choice", "Show one profile in full (its efficiencies and sources)",
                  help="Blank: list them all.", choices=tuple(_hardware.PROFILES)),),
    results=(
        Result("profiles", "Profiles (memory as nvidia-smi reports it; dense peaks; bandwidths per GPU, one "
                           "direction)", "json"),
        Result("profile", "The profile in full", "json"),
    ),
    compute=_compute_hardware,
    example={},
)
