"""Commands for serving a model: ``infer`` (:mod:`calc.inference`) and ``infer-search``
(:mod:`calc.infer_search`), whose flat parameters are the SPEC.json fields of the sections
``model``, ``serving``, ``hardware`` and ``parallel``."""

from __future__ import annotations

from dataclasses import replace

from .. import hardware as _hardware
from .. import infer_search as _search
from .. import inference as _inference
from .. import model as _model
from ..check import count
from ..command import Command, Param, Result
from ..kvcache import KV_PRECISIONS
from ..spec import AXES
from .plan import _PARALLEL_DEGREES, _SPEC_HARDWARE, _SPEC_MODEL, LLAMA3_8B_MODEL, _spec_hardware

# Serving runs no dropout, and its engines fuse their element-wise kernels.
_MODEL = tuple(p for p in _SPEC_MODEL if p.name not in ("seq_len", "dropout", "kernels", "norm")) + (
    Param("max_context", "count", "Context window (tokens; prompt + output must fit)", help="Blank: no limit.",
          maximum=_model.MAX_SEQ_LEN, section="model"),
)
_SERVING = (
    Param("batch", "count", "Sequences decoded together per replica", default="1", section="serving"),
    Param("prompt_tokens", "count", "Prompt tokens per sequence", required=True, maximum=_model.MAX_SEQ_LEN,
          section="serving"),
    Param("output_tokens", "count", "Output tokens per sequence", required=True, maximum=_model.MAX_SEQ_LEN,
          section="serving"),
    Param("weight_precision", "choice", "Weight precision (int4: weight-only)", default="bf16",
          choices=tuple(_inference.SERVING_PRECISIONS), section="serving"),
    Param("kv_precision", "choice", "KV-cache precision", default="bf16", choices=tuple(KV_PRECISIONS),
          section="serving"),
    Param("prefill_chunk", "count", "Most prompt tokens per prefill pass (chunked prefill)",
          help="Blank: the batch's prompts in one pass.", maximum=_model.MAX_SEQ_LEN, section="serving"),
    Param("cuda_graphs", "flag", "Decode steps replayed as CUDA graphs (false: every kernel launched by the CPU)",
          default="true", section="serving"),
    Param("max_latency", "time", "Inter-token latency bound (e.g. 50ms)",
          help="Blank: none. infer-search then ranks by latency at the batch.", section="serving"),
)
_HARDWARE = tuple(
    replace(p, label="Peak FLOP/s per GPU of the weights' compute type (e.g. 989TFLOP/s)",
            help="Blank: the profile's dense peak (fp8 and int8 GEMMs run at its fp8 or int8 peak).")
    if p.name == "flops_per_gpu" else p
    for p in _SPEC_HARDWARE if p.name != "compute_efficiency")
#: The five degrees: serving has no ZeRO, recomputation, sequence parallelism or pipeline layout to choose.
_PARALLEL = tuple(p for p in _PARALLEL_DEGREES if p.name in {f"{a}_parallel" for a in AXES})


def _spec_serving(v: dict) -> tuple[_model.Model, _inference.Serving, _hardware.Hardware, float | None]:
    """Model, serving section, the cluster at its 16-bit peak, and the peak of fp8/int8 GEMMs when given."""
    context = v["prompt_tokens"] + v["output_tokens"]
    m = _model.model(
        v["layers"], v["hidden"], v["heads"], v["vocab"], v["max_context"] or min(context, _model.MAX_SEQ_LEN),
        kv_heads=v["kv_heads"], ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"],
        tied_embeddings=v["tied_embeddings"], biases=v["biases"], learned_positions=v["learned_positions"],
        experts=v["experts"], top_k=v["top_k"], moe_layer_freq=v["moe_layer_freq"], attention=v["attention"])
    sv = _inference.serving(v["batch"], v["prompt_tokens"], v["output_tokens"], v["weight_precision"],
                            v["kv_precision"], v["max_context"], v["prefill_chunk"], v["cuda_graphs"])
    narrow = sv.weight_precision.compute_dtype not in ("bf16", "fp16")
    flops = v.get("flops_per_gpu")
    attention_peak = None if narrow and v.get("profile") is not None else flops
    hw = _spec_hardware(v | {"precision": "bf16" if narrow else sv.weight_precision.compute_dtype,
                             "flops_per_gpu": attention_peak})
    return m, sv, hw, flops if narrow else None


def _split(v: dict) -> _inference.Split:
    return _inference.split(*(v[f"{a}_parallel"] for a in AXES))


def decode_points(v: dict, batches) -> list[_inference.DecodePoint]:
    """``infer``'s decode figures on the parsed inputs ``v`` at each batch size of ``batches``
    (sequences per replica): what ``infer`` gives for ``{**v, "batch": b}``, with the model, hardware
    and split built once (:func:`calc.inference.decode_points`), and no prefill. The
    inference calculator's chart asks for about ten batch sizes on every input (issue 15). Each batch
    must fit; one that does not is refused as ``infer`` refuses it.
    """
    m, sv, hw, gemm_flops = _spec_serving(v)
    return _inference.decode_points(m, sv, hw, _split(v), [count("batch", b) for b in batches], gemm_flops)


def _compute_infer(v: dict) -> dict:
    m, sv, hw, gemm_flops = _spec_serving(v)
    return _inference.infer(m, sv, hw, _split(v), gemm_flops, v["max_latency"]).as_dict()


_LLAMA3_8B = {
    **LLAMA3_8B_MODEL, "max_context": "8192", "batch": "16", "prompt_tokens": "1024", "output_tokens": "256",
    "profile": "h100-sxm5-80gb", "gpus": "8", "data_parallel": "4", "tensor_parallel": "2",
}

INFER = Command(
    name="infer",
    title="Serving plan (inference)",
    params=_MODEL + _SERVING + _HARDWARE + _PARALLEL,
    results=(
        Result("decode_time_per_token_s", "Inter-token latency (mean over the output)", "seconds"),
        Result("time_to_first_token_s", "Time to first token (prefill of the batch)", "seconds"),
        Result("request_latency_s", "Request latency (first token, then the rest)", "seconds"),
        Result("tokens_per_s", "Generated tokens per second (all replicas)", "tokens_per_s"),
        Result("tokens_per_s_per_replica", "Generated tokens per second per replica", "tokens_per_s"),
        Result("tokens_per_s_per_device", "Generated tokens per second per GPU", "tokens_per_s"),
        Result("batch", "Sequences per replica", "sequences"),
        Result("max_concurrent_sequences", "Most concurrent sequences per replica (at prompt + output)",
               "sequences"),
        Result("kv_cache_bytes_per_token", "KV cache per token (whole model)", "bytes"),
        Result("kv_cache_bytes_per_token_per_device", "KV cache per token on one GPU", "bytes"),
        Result("kv_cache_bytes_per_sequence", "KV cache per sequence (whole model)", "bytes"),
        Result("kv_heads_per_device", "KV heads per GPU per layer", "count"),
        Result("weights_bytes", "Weights (whole model at the precision)", "bytes"),
        Result("prefill_time_s", "Prefill time", "seconds"),
        Result("decode_time_last_token_s", "Inter-token latency at full context", "seconds"),
        Result("decode_floor_s", "Roofline floor of a decode step (no split beats it)", "seconds"),
        Result("decode_communication_s", "Collectives and hand-offs per decode step", "seconds"),
        Result("decode_bound", "A decode step is bound by", "text"),
        Result("decode_microbatches", "Decode microbatches (pipeline)", "microbatches"),
        Result("decode_bytes_per_device", "Bytes one GPU reads per decode step", "bytes"),
        Result("mbu", "Memory-bandwidth utilisation (decode)", "percent"),
        Result("mfu", "Model FLOPs utilisation (decode)", "percent"),
        Result("prefill_mfu", "Model FLOPs utilisation (prefill)", "percent"),
        Result("max_latency_s", "Inter-token latency bound", "seconds"),
        Result("latency_bound_met", "Within the latency bound (none when no bound is given)", "json"),
        Result("memory_per_device", "Memory per GPU (most loaded stage)", "json"),
        Result("communications", "Transfers per generated token", "json"),
        Result("prefill_communications", "Transfers per prefill", "json"),
        Result("stages", "What each stage holds", "json"),
        Result("parallel", "Split", "json"),
        Result("hardware_profile", "GPU profile", "text"),
        Result("gpus", "GPUs", "GPUs"),
        Result("gpus_per_replica", "GPUs per replica", "GPUs"),
        Result("nodes", "Nodes", "count"),
        Result("rank_strides", "Rank strides (rank = Σ coordinate × stride)", "json"),
    ),
    compute=_compute_infer,
    example=_LLAMA3_8B,
)


def _compute_infer_search(v: dict) -> dict:
    m, sv, hw, gemm_flops = _spec_serving(v)
    fixed = {a: v[f"{a}_parallel"] for a in AXES if v[f"{a}_parallel"] is not None}
    return _search.infer_search(m, sv, hw, v["top"], v["max_latency"], fixed, gemm_flops).as_dict()


#: In ``infer-search`` a blank degree is searched; a value fixes it.
_SEARCH_PARALLEL = tuple(replace(p, default=None, help="Blank: searched.") for p in _PARALLEL)

INFER_SEARCH = Command(
    name="infer-search",
    title="Serving split search",
    params=_MODEL + _SERVING + _HARDWARE + _SEARCH_PARALLEL + (
        Param("top", "count", "Plans to return (best first)", default="10", maximum=_search.MAX_TOP),
    ),
    results=(
        Result("objective", "Ranked by", "text"),
        Result("plans", "Splits that serve, best first", "json"),
        Result("feasible", "Splits that serve", "count"),
        Result("refused_count", "Splits refused", "count"),
        Result("refused_summary", "Refused, by rule (one example each)", "json"),
        Result("fixed", "Fixed by the SPEC", "json"),
    ),
    compute=_compute_infer_search,
    example={k: x for k, x in _LLAMA3_8B.items() if not k.endswith("_parallel")} | {"max_latency": "20ms"},
)
