"""What one training step costs: ``memory``, ``activations``, ``flops``, ``train-time``,
``bubble`` and ``schedule`` (:mod:`calc.memory`, :mod:`calc.compute`, :mod:`calc.pipeline`)."""

from __future__ import annotations


from .. import compute as _compute
from .. import memory as _memory
from .. import model as _model
from .. import pipeline as _pipeline
from ..command import Command, Param, Result
from ..errors import CalcError

# ---------------------------------------------------------------------------- memory, compute, pipeline

_PRECISION = Param("precision", "choice", "Precision recipe (bytes per parameter: weights, grads, optimizer)",
                   help="bf16-adam = 2 + 2 + 12 = 16 B (ZeRO); megatron-bf16 = 18 B; megatron-fp16 = 20 B.",
                   default="bf16-adam", choices=tuple(_model.PRECISIONS))
_RECOMPUTE = Param("recompute", "choice", "Activation recomputation", default="none",
                   choices=_memory.RECOMPUTE)
#: Megatron's block method (:func:`calc.memory.check_recompute_layers`); ``plan`` takes it in its ``parallel`` section.
RECOMPUTE_LAYERS = Param("recompute_layers", "count", "Layers recomputed per model chunk (with full)",
                         help="Blank: every layer. Megatron's --recompute-method block --recompute-num-layers.",
                         minimum=0, maximum=_model.MAX_LAYERS)
_MAX_PARAMS = float(_memory.MAX_PARAMS)
_MAX_DEGREE = float(_memory.MAX_DEGREE)


def _compute_memory(v: dict) -> dict:
    s = _memory.model_states(v["params"], v["data_parallel"], v["zero"], v["precision"], v["tensor_parallel"],
                             v["pipeline_parallel"])
    return {
        "params_bytes": s.params_bytes,
        "grads_bytes": s.grads_bytes,
        "optimizer_bytes": s.optimizer_bytes,
        "model_states_bytes": s.model_states_bytes,
        "model_states_gb": s.model_states_bytes / 1e9,
        "model_states_gib": s.model_states_bytes / 2**30,
        "bytes_per_param": s.model_states_bytes / (v["params"] / (v["tensor_parallel"] * v["pipeline_parallel"])),
    }


MEMORY = Command(
    name="memory",
    title="Model states per device (ZeRO)",
    params=(
        Param("params", "count", "Parameters Ψ", required=True, maximum=_MAX_PARAMS,
              help=f"Whole model, up to {_memory.MAX_PARAMS:.0e}; e.g. 7.5e9."),
        Param("data_parallel", "count", "Data-parallel degree N_d (ZeRO shards over it)", default="1",
              maximum=_MAX_DEGREE),
        Param("zero", "count", "ZeRO stage (0-3)", default="0", minimum=0, maximum=3,
              help="1 shards the optimizer states; with a megatron-* recipe that is Megatron's distributed "
                   "optimizer, whose sharded state includes the fp32 main gradients."),
        Param("tensor_parallel", "count", "Tensor-parallel degree TP", default="1", maximum=_MAX_DEGREE),
        Param("pipeline_parallel", "count", "Pipeline-parallel degree PP", default="1", maximum=_MAX_DEGREE),
        _PRECISION,
    ),
    results=(
        Result("params_bytes", "Weights per device", "bytes"),
        Result("grads_bytes", "Gradients per device", "bytes"),
        Result("optimizer_bytes", "Optimizer states per device", "bytes"),
        Result("model_states_bytes", "Model states per device", "bytes"),
        Result("bytes_per_param", "Bytes per local parameter", "ratio"),
    ),
    compute=_compute_memory,
    example={"params": "7.5e9", "data_parallel": "64", "zero": "1"},
)

_MODEL_SHAPE = (
    Param("seq_len", "count", "Sequence length s (tokens)", required=True, maximum=_model.MAX_SEQ_LEN),
    Param("micro_batch", "count", "Microbatch size b (sequences)", default="1"),
    Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN),
    Param("heads", "count", "Attention heads a", required=True, maximum=_model.MAX_HIDDEN),
    Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS),
)


def _compute_activations(v: dict) -> dict:
    a = _memory.activations(
        v["seq_len"], v["micro_batch"], v["hidden"], v["heads"], v["layers"],
        tensor_parallel=v["tensor_parallel"], sequence_parallel=v["sequence_parallel"], recompute=v["recompute"],
        pipeline_parallel=v["pipeline_parallel"], interleave=v["interleave"], microbatches=v["microbatches"],
        kv_heads=v["kv_heads"], ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"],
        context_parallel=v["context_parallel"], recompute_layers=v["recompute_layers"],
        attention=v["attention"], dropout=not v["no_dropout"],
    )
    return {
        "per_layer_bytes": a.per_layer_bytes,
        "total_bytes": a.total_bytes,
        "layers_in_flight": a.layers_in_flight,
        "in_flight_factor": a.in_flight_factor,
        "stored_bytes": a.stored_bytes,
        "recompute_working_bytes": a.recompute_working_bytes,
        "recomputed_layers": a.recomputed_layers,
    }


ACTIVATIONS = Command(
    name="activations",
    title="Activation memory per device (Korthikanti et al. 2022)",
    params=_MODEL_SHAPE + (
        Param("tensor_parallel", "count", "Tensor-parallel degree t", default="1", maximum=_MAX_DEGREE),
        Param("sequence_parallel", "flag", "Sequence parallelism", default="false"),
        _RECOMPUTE,
        RECOMPUTE_LAYERS,
        Param("pipeline_parallel", "count", "Pipeline stages p", default="1", maximum=_MAX_DEGREE),
        Param("interleave", "count", "Model chunks per stage v", default="1", maximum=_pipeline.MAX_INTERLEAVE),
        Param("microbatches", "count", "Microbatches per step m", help="Blank: enough to fill the warm-up (2p)."),
        Param("context_parallel", "count", "Context-parallel degree c", default="1", maximum=_MAX_DEGREE),
        Param("kv_heads", "count", "Key/value heads", help="Blank: = heads.", maximum=_model.MAX_HIDDEN),
        Param("ffn_hidden", "count", "MLP width f", help="Blank: 4h.", maximum=16 * _model.MAX_HIDDEN),
        Param("gated_mlp", "flag", "Gated MLP (SwiGLU)", default="false"),
        Param("attention", "choice", "Attention kernel (standard: the paper's s² scores kept; flash: none)",
              default="standard", choices=_model.ATTENTION),
        Param("no_dropout", "flag", "No dropout, so no masks kept (Llama; the paper's GPT-3 layer has dropout)",
              default="false"),
    ),
    results=(
        Result("per_layer_bytes", "Per layer, per microbatch (a model chunk's average with recompute_layers)",
               "bytes"),
        Result("total_bytes", "First pipeline stage under 1F1B", "bytes"),
        Result("layers_in_flight", "Layer-microbatches held", "count"),
        Result("in_flight_factor", "Held / l (1 + (p−1)/(p·v))", "ratio"),
        Result("recompute_working_bytes", "Recomputation working set", "bytes"),
        Result("recomputed_layers", "Layers recomputed per model chunk (first stage)", "count"),
    ),
    compute=_compute_activations,
    example={"seq_len": "2048", "micro_batch": "1", "hidden": "12288", "heads": "96", "layers": "96",
             "tensor_parallel": "8", "sequence_parallel": "true", "recompute": "selective",
             "pipeline_parallel": "8"},
)


def _compute_flops(v: dict) -> dict:
    heads = v["heads"] if v["heads"] is not None else 1
    if v["kv_heads"] is not None and v["heads"] is None:
        raise CalcError("heads", "given when kv_heads is given", "")
    m = _model.model(v["layers"], v["hidden"], heads, v["vocab"], v["seq_len"], kv_heads=v["kv_heads"],
                     ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"])
    f = _compute.training_flops(m, v["global_batch"], v["recompute"])
    return {
        "flops_per_iteration": f.hardware_flops,
        "model_flops_per_iteration": f.model_flops,
        "forward_flops": f.forward_flops,
        "recompute_flops": f.recompute_flops,
        "flops_per_token": f.flops_per_token,
    }


FLOPS = Command(
    name="flops",
    title="FLOPs per iteration (Narayanan et al. 2021, Eq. 3)",
    params=(
        Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS),
        Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN),
        Param("seq_len", "count", "Sequence length s", required=True, maximum=_model.MAX_SEQ_LEN),
        Param("vocab", "count", "Vocabulary V", required=True, maximum=_model.MAX_VOCAB),
        Param("global_batch", "count", "Global batch B (sequences)", required=True),
        Param("recompute", "choice", "Recomputation (full: Eq. 3's 4 passes)", default="full",
              choices=_memory.RECOMPUTE),
        Param("heads", "count", "Heads (only with kv_heads)", maximum=_model.MAX_HIDDEN),
        Param("kv_heads", "count", "Key/value heads", help="Blank: = heads.", maximum=_model.MAX_HIDDEN),
        Param("ffn_hidden", "count", "MLP width f", help="Blank: 4h.", maximum=16 * _model.MAX_HIDDEN),
        Param("gated_mlp", "flag", "Gated MLP (SwiGLU)", default="false"),
    ),
    results=(
        Result("flops_per_iteration", "Hardware FLOPs per iteration", "flops"),
        Result("model_flops_per_iteration", "Model FLOPs per iteration (3 passes)", "flops"),
        Result("flops_per_token", "Model FLOPs per token", "flops"),
    ),
    compute=_compute_flops,
    example={"layers": "96", "hidden": "12288", "seq_len": "2048", "vocab": "51200", "global_batch": "1536"},
)


def _compute_train_time(v: dict) -> dict:
    r = _compute.train_time(v["params"], v["tokens"], v["gpus"], v["flops_per_gpu"], v["recompute"])
    return {"seconds": r.seconds, "days": r.days, "total_flops": r.total_flops}


TRAIN_TIME = Command(
    name="train-time",
    title="End-to-end training time (Narayanan et al. 2021, Eq. 4)",
    params=(
        Param("params", "count", "Parameters P", required=True, maximum=_MAX_PARAMS),
        Param("tokens", "count", "Training tokens T", required=True, maximum=float(_compute.MAX_TOKENS)),
        Param("gpus", "count", "GPUs n", required=True, maximum=_MAX_DEGREE),
        Param("flops_per_gpu", "flop_rate", "Achieved FLOP/s per GPU X (e.g. 140TFLOP/s)", required=True),
        Param("recompute", "choice", "Recomputation (full: 8TP/(nX); none: 6TP/(nX))", default="full",
              choices=("full", "none")),
    ),
    results=(
        Result("days", "Training time", "days"),
        Result("seconds", "Training time", "seconds"),
        Result("total_flops", "Total FLOPs", "flops"),
    ),
    compute=_compute_train_time,
    example={"params": "175e9", "tokens": "300e9", "gpus": "1024", "flops_per_gpu": "140TFLOP/s"},
)


def _compute_bubble(v: dict) -> dict:
    b = _pipeline.bubble(v["pipeline_parallel"], v["microbatches"], v["interleave"])
    return {"bubble_fraction": b.bubble_fraction, "bubble_share": b.bubble_share}


_STAGES = (
    Param("pipeline_parallel", "count", "Pipeline-parallel degree (stages) p", default="8", maximum=_MAX_DEGREE),
    Param("microbatches", "count", "Microbatches per step m", default="32"),
    Param("interleave", "count", "Model chunks per stage v", default="1", maximum=_pipeline.MAX_INTERLEAVE),
)

BUBBLE = Command(
    name="bubble",
    title="Pipeline bubble",
    params=_STAGES,
    results=(
        Result("bubble_fraction", "Bubble / ideal compute time (p−1)/(v·m) (Narayanan et al.)", "ratio"),
        Result("bubble_share", "Bubble / total time (p−1)/(v·m + p−1) (GPipe's, generalised to v by this site)",
               "ratio"),
    ),
    compute=_compute_bubble,
    example={"pipeline_parallel": "8", "microbatches": "32"},
)


def _compute_schedule(v: dict) -> dict:
    s = _pipeline.schedule(v["kind"], v["pipeline_parallel"], v["microbatches"], v["interleave"], v["backward_slots"])
    return {
        "ops": [{"stage": o.stage, "chunk": o.chunk, "microbatch": o.microbatch, "kind": o.kind,
                 "start": o.start, "duration": o.duration} for o in s.ops],
        "makespan_slots": s.makespan_slots,
        "ideal_slots": s.ideal_slots,
        "bubble_fraction": s.bubble_fraction,
        "bubble_share": s.bubble_share,
        "peak_in_flight": list(s.peak_in_flight),
    }


SCHEDULE = Command(
    name="schedule",
    title="Pipeline schedule (GPipe, 1F1B, interleaved 1F1B)",
    params=(
        Param("kind", "choice", "Schedule", default="1f1b", choices=_pipeline.SCHEDULES),
        Param("pipeline_parallel", "count", "Pipeline-parallel degree (stages) p", default="4", maximum=_MAX_DEGREE),
        Param("microbatches", "count", "Microbatches per step m", default="8"),
        Param("interleave", "count", "Model chunks per stage v", default="1", maximum=_pipeline.MAX_INTERLEAVE),
        Param("backward_slots", "count", "Slots per backward (a forward is 1)", default="2", maximum=16),
    ),
    results=(
        Result("makespan_slots", "Makespan (slots)", "count"),
        Result("ideal_slots", "Ideal (slots of work per stage)", "count"),
        Result("bubble_fraction", "Measured bubble / ideal", "ratio"),
        Result("bubble_share", "Measured bubble / total", "ratio"),
        Result("peak_in_flight", "Peak chunks in flight per stage", "json"),
        Result("ops", "Operations", "json"),
    ),
    compute=_compute_schedule,
    example={"kind": "1f1b", "pipeline_parallel": "4", "microbatches": "8"},
)
