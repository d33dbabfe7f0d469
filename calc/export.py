"""Launch settings: a plan written the way Megatron-LM, torchtitan or DeepSpeed take it.

Each exporter targets one version of its framework (:data:`TARGETS`), and every flag or
key it writes was read from that version's own argument parser or config schema; the
lists, each name with the source path and line that defines it, are kept in
``tests/frameworks/`` and a test holds every exporter to them, so a renamed flag fails
a test rather than a reader's job.

What is written (only the split, the batch and the schedule: the model's own flags, the
data, the optimizer's hyper-parameters and the launcher stay the reader's):

- **Megatron-LM** (:func:`megatron`): command-line arguments. Tensor, pipeline, context
  and expert-parallel sizes (Megatron's data-parallel size is what the world size leaves,
  ``gpus / (tensor × pipeline × context)``, which is ``data × expert`` here); the layer
  layout (``--num-virtual-stages-per-pipeline-rank`` when every stage and chunk holds as
  many layers, ``--decoder-first/last-pipeline-num-layers`` when only the end stages
  differ, else ``--pipeline-model-parallel-layout``, which places every layer exactly);
  ``--use-tp-pp-dp-mapping`` when the replicas are outermost (``rank_order``);
  ``--sequence-parallel``; recomputation (selective: the attention core; full:
  ``uniform`` over one layer, so each layer's input is kept; ``recompute_layers`` N:
  ``--recompute-method block --recompute-num-layers N``, the first N layers of each model
  chunk); micro and global batch;
  ZeRO-1 as the distributed optimizer and ZeRO-2/3 as Megatron-FSDP
  (``--data-parallel-sharding-strategy optim_grads`` / ``optim_grads_params``); the
  overlap switches; the precision and the attention kernel (eager element-wise kernels refused:
  Megatron's layers fuse them); ``training.fp8`` as ``--fp8-format hybrid`` with delayed scaling
  (and ``--fp8-param-gather`` with the distributed optimizer).
- **torchtitan** (:func:`torchtitan`): the TOML tables ``[parallelism]``,
  ``[activation_checkpoint]`` (``recompute_layers`` as its every-k-th-block option ``"k"`` when
  some ``k`` recomputes as many layers per stage, else refused), ``[training]`` and ``[compile]``
  (enabled for the plan's fused element-wise kernels: torchtitan fuses them by compiling; eager
  kernels leave it off and refuse async TP, which runs only compiled). Data
  parallelism is DDP (ZeRO 0, only when nothing else is split: torchtitan's DDP "has not
  supported > 1D parallelism") or FSDP2 resharding after every forward pass (ZeRO-3);
  the pipeline's layers are listed by module name, chunk by chunk
  (``module_fqns_per_model_part``, torchtitan's names for its language models); ``training.fp8``
  as the ``quantize.linear.float8`` converter on every linear layer but the output, with fp8
  gathers under FSDP.
- **DeepSpeed** (:func:`deepspeed`): the JSON config (batch, ZeRO stage, precision) and
  the Megatron-DeepSpeed arguments for tensor and pipeline parallelism, recomputation (with
  Megatron's block method for ``recompute_layers``) and sequence parallelism; ``training.fp8``
  as Megatron-DeepSpeed's Transformer Engine layers, without ZeRO only.

Refused, with one :class:`~calc.errors.CalcError` naming the setting and the framework:
what the framework cannot run as planned (a ZeRO stage or a pipeline layout it lacks,
ring context parallelism where it has none, an overlap it always or never does), and a
plan that does not fit in memory. Settings that change nothing in the plan (an overlap
switch when there is nothing to overlap) are not written.

Approximations: torchtitan's selective checkpointing is per operator (``op``: it keeps
the matmul outputs), not Korthikanti et al.'s recomputation of the attention core that
the plan counts; precision recipes are written by their data types (the recipes differ in
how they count the fp32 copies a framework keeps); torchtitan's float8 scales each tensor from its
current maximum (torchao's tensorwise recipe) where the plan's casts are Transformer Engine's.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field

from .errors import CalcError
from .model import Model
from .plan import Plan, chunk_ranges, recomputed_layers, replicas, shard_degree
from .units import format_bytes

__all__ = ["Target", "TARGETS", "FRAMEWORKS", "Launch", "export", "megatron", "torchtitan", "deepspeed"]


@dataclass(frozen=True, slots=True)
class Target:
    """A framework at the version an exporter writes for."""

    framework: str
    version: str  #: a release tag, or a commit where the project has no releases
    repository: str  #: on GitHub
    source: str  #: where the flags or keys are defined

    @property
    def name(self) -> str:
        return f"{self.framework} {self.version}"


#: The versions the exporters target, by ``--to`` name (Megatron-DeepSpeed has no release since 2021:
#: its last commit, and the DeepSpeed release that followed it).
TARGETS = {
    "megatron": (Target("Megatron-LM", "core_v0.15.3", "NVIDIA/Megatron-LM", "megatron/training/arguments.py"),),
    "torchtitan": (Target("torchtitan", "v0.2.2", "pytorch/torchtitan", "torchtitan/config/job_config.py"),),
    "deepspeed": (Target("DeepSpeed", "v0.17.4", "deepspeedai/DeepSpeed", "deepspeed/runtime/constants.py"),
                  Target("Megatron-DeepSpeed", "4efb479", "deepspeedai/Megatron-DeepSpeed", "megatron/arguments.py")),
}
FRAMEWORKS = tuple(TARGETS)


@dataclass(frozen=True, slots=True)
class Launch:
    """A plan as one framework takes it."""

    framework: str  #: megatron | torchtitan | deepspeed
    targets: tuple[str, ...]  #: "Megatron-LM core_v0.15.3", ...
    arguments: tuple[str, ...]  #: command-line arguments, one token each (as ``sys.argv`` holds them)
    config: dict = field(default_factory=dict)  #: the config file (TOML tables or JSON); empty for Megatron-LM
    config_file: str = ""  #: the name the arguments give the config file, if any
    text: str = ""  #: what ``python -m calc export`` prints: comments, the config file, the arguments

    def as_dict(self) -> dict:
        return {"framework": self.framework, "targets": list(self.targets), "arguments": list(self.arguments),
                "config": self.config, "config_file": self.config_file, "text": self.text}


# ---------------------------------------------------------------------------- shared


def _refuse(param: str, rule: str, target: Target, why: str, value: object) -> CalcError:
    """``parallel.zero must be 0 or 1 for DeepSpeed v0.17.4 (why), got 3``."""
    return CalcError(param, f"{rule} for {target.name} ({why})", value)


def _check_fits(plan: Plan) -> None:
    mem = plan.memory_per_device
    if not mem.fits:
        raise CalcError("parallel", f"a split whose most loaded GPU fits in its memory "
                        f"({format_bytes(mem.capacity_bytes, 'iec')}): an export is a plan to run",
                        f"{format_bytes(mem.total_bytes, 'iec')} per GPU on pipeline stage {mem.stage}")


def _pipeline_outermost(plan: Plan, target: Target) -> None:
    """torchtitan's device mesh and DeepSpeed's topology put the pipeline stages outermost, always."""
    if plan.parallel.rank_order != "tp-cp-ep-dp-pp":
        raise _refuse("rank_order", "tp-cp-ep-dp-pp", target, "its ranks always put the pipeline stages outermost",
                      plan.parallel.rank_order)


def _current_engine(plan: Plan, target: Target) -> None:
    """Megatron-LM and torchtitan of today run neither Megatron-LM 2021's gradient add per microbatch nor
    DeepSpeed's engine: a plan timed for those is not theirs to run."""
    engine = plan.parallel.pipeline_engine
    if engine != "megatron":
        raise _refuse("pipeline_engine", "megatron", target, "the plan is timed for another engine's sends and "
                      "gradient accumulation", engine)


def _argv(pairs: list[tuple[str, object]]) -> tuple[str, ...]:
    """``[("--a", 8), ("--b", None)]`` → ``("--a", "8", "--b")``."""
    out: list[str] = []
    for flag, value in pairs:
        out.append(flag)
        if value is not None:
            out.append(str(value))
    return tuple(out)


def _argument_lines(pairs: list[tuple[str, object]]) -> list[str]:
    """One ``--flag value`` per line, quoted for a shell."""
    return [flag if value is None else f"{flag} {shlex.quote(str(value))}" for flag, value in pairs]


def _launch_line(plan: Plan) -> str:
    """``# launch on 64 GPUs (8 nodes of 8)``: what the launcher's world size must be."""
    nodes = f"{plan.nodes} node" + ("s" if plan.nodes > 1 else "")
    if plan.gpus % plan.nodes == 0:
        nodes += f" of {plan.gpus // plan.nodes}"
    return f"# launch on {plan.gpus} GPUs ({nodes})"


#: Recomputation as Megatron-LM and Megatron-DeepSpeed take it: selective recomputes the attention
#: core (``--recompute-modules`` defaults to core_attn); full keeps each layer's input (one layer per
#: uniform group), as the plan counts it.
_RECOMPUTE_ARGS = {
    "none": [],
    "selective": [("--recompute-granularity", "selective")],
    "full": [("--recompute-granularity", "full"), ("--recompute-method", "uniform"), ("--recompute-num-layers", 1)],
}


def _recompute_args(plan: Plan) -> list[tuple[str, object]]:
    """Megatron's recomputation flags; ``recompute_layers`` N is its block method, which recomputes the first
    ``--recompute-num-layers`` layers of each model chunk (0: no recomputation; a whole chunk: uniform)."""
    par = plan.parallel
    n = par.recompute_layers
    if n is None or par.recompute != "full":
        return _RECOMPUTE_ARGS[par.recompute]
    chunks = [k for s in chunk_ranges(plan.layers_per_stage, par.interleave) for a, b in s for k in [b - a]]
    if n == 0:
        return []
    if n >= max(chunks):
        return _RECOMPUTE_ARGS["full"]
    return [("--recompute-granularity", "full"), ("--recompute-method", "block"), ("--recompute-num-layers", n)]


def _data_group(plan: Plan) -> int:
    """Ranks a dense weight's gradient is reduced over: data × context × expert."""
    par = plan.parallel
    return par.data * par.context * par.expert


# ---------------------------------------------------------------------------- Megatron-LM

#: Precision recipes as Megatron-LM flags. bf16 keeps fp32 main gradients unless
#: ``--grad-reduce-in-bf16`` (arguments.py, validate_args); fp16 keeps fp16 gradients.
_MEGATRON_PRECISION = {"bf16-adam": ["--bf16", "--grad-reduce-in-bf16"], "megatron-bf16": ["--bf16"],
                       "fp16-adam": ["--fp16"], "megatron-fp16": ["--fp16"], "fp32-adam": []}
#: ``training.fp8`` as NVIDIA's NeMo recipes run it: Transformer Engine's hybrid format (E4M3 forward, E5M2
#: gradients) with delayed scaling over a 1024-step amax history; with the distributed optimizer the weights are
#: kept and gathered in fp8 too (``--fp8-param-gather``, which Megatron allows only with it).
_MEGATRON_FP8 = [("--fp8-format", "hybrid"), ("--fp8-recipe", "delayed"), ("--fp8-amax-history-len", 1024),
                 ("--fp8-amax-compute-algo", "max")]
#: The same in Megatron-DeepSpeed, whose Transformer Engine layers (``--transformer-impl``) take the format as a flag.
_MEGATRON_DEEPSPEED_FP8 = [("--transformer-impl", "transformer_engine"), ("--fp8-hybrid", None),
                           ("--fp8-amax-history-len", 1024), ("--fp8-amax-compute-algo", "max")]
#: The plan's attention kernels as Megatron-LM's backends (flash3: cuDNN's fused attention through TE).
_MEGATRON_ATTENTION = {"flash": "flash", "flash3": "fused", "standard": "unfused"}


def _layout_string(layers: tuple[int, ...], v: int) -> str:
    """Megatron's ``--pipeline-model-parallel-layout``: virtual stages in order, ``|`` between them.

    ``E`` is the embedding, ``t*n`` n transformer layers, ``L`` the loss (output layer).

    >>> _layout_string((3, 4, 4, 3), 1)
    'Et*3|t*4|t*4|t*3L'
    >>> _layout_string((3, 4), 2)
    'Et|t*2|t*2|t*2L'
    """
    p, chunks = len(layers), chunk_ranges(layers, v)
    parts = []
    for k in range(v):
        for s in range(p):
            a, b = chunks[s][k]
            n = b - a
            body = "" if n == 0 else "t" if n == 1 else f"t*{n}"
            parts.append(("E" if (k, s) == (0, 0) else "") + body + ("L" if (k, s) == (v - 1, p - 1) else ""))
    return "|".join(parts)


def _megatron_layout(layers: tuple[int, ...], v: int) -> list[tuple[str, object]]:
    """The flags that place the plan's layers: none when Megatron's even split is the plan's."""
    p = len(layers)
    if p == 1:
        return []
    if len(set(layers)) == 1 and layers[0] % v == 0:
        return [] if v == 1 else [("--num-virtual-stages-per-pipeline-rank", v)]
    if v == 1 and len(set(layers[1:-1])) <= 1:
        return [("--decoder-first-pipeline-num-layers", layers[0]), ("--decoder-last-pipeline-num-layers", layers[-1])]
    return [("--pipeline-model-parallel-layout", _layout_string(layers, v))]


def _megatron_data_parallel(plan: Plan, target: Target) -> list[tuple[str, object]]:
    """ZeRO as the distributed optimizer (1) or Megatron-FSDP (2, 3), and the overlap switches."""
    par, z = plan.parallel, plan.parallel.zero
    out: list[tuple[str, object]] = []
    if z == 1:
        out.append(("--use-distributed-optimizer", None))
    elif z >= 2:
        if z == 3 and par.zero3_gather != "layer":
            raise _refuse("zero3_gather", "layer", target, "Megatron-FSDP gathers a layer's weights at once, "
                          "not each tensor as DeepSpeed does", par.zero3_gather)
        out += [("--use-megatron-fsdp", None),
                ("--data-parallel-sharding-strategy", "optim_grads" if z == 2 else "optim_grads_params"),
                ("--use-distributed-optimizer", None), ("--no-gradient-accumulation-fusion", None),
                ("--ckpt-format", "fsdp_dtensor")]
    if replicas(par) > 1:  # hybrid sharding: copies of the sharded state across the groups
        out.append(("--num-distributed-optimizer-instances", replicas(par)))
    if _data_group(plan) == 1:
        return out
    # ZeRO-2/3 reduce-scatter every microbatch behind the backward pass and ZeRO-3 prefetches its
    # gathers: Megatron-FSDP overlaps them only with these flags
    grad = par.overlap_grad_reduce if z <= 1 else True
    gather = par.overlap_param_gather if z in (1, 2) else z == 3
    if gather and not grad:
        raise _refuse("overlap_param_gather", "false while overlap_grad_reduce is false", target,
                      "it overlaps the weight gather only together with the gradient reduction", True)
    out += [("--overlap-grad-reduce", None)] if grad else []
    out += [("--overlap-param-gather", None)] if gather else []
    return out


def megatron(plan: Plan, m: Model, precision: str) -> Launch:
    """Megatron-LM's command-line arguments for ``plan`` (``pretrain_gpt.py`` and the like)."""
    (target,) = TARGETS["megatron"]
    par = plan.parallel
    _current_engine(plan, target)
    t, p, c = par.tensor, par.pipeline, par.context
    sp = par.sequence_parallel and t > 1
    pairs: list[tuple[str, object]] = [("--tensor-model-parallel-size", t), ("--pipeline-model-parallel-size", p),
                                       ("--context-parallel-size", c), ("--expert-model-parallel-size", par.expert)]
    pairs += _megatron_layout(plan.layers_per_stage, par.interleave)
    pairs += [("--use-tp-pp-dp-mapping", None)] if par.rank_order == "tp-cp-ep-pp-dp" else []
    pairs += [("--sequence-parallel", None)] if sp else []
    if par.tp_comm_overlap and t > 1:
        if not sp:
            raise _refuse("tp_comm_overlap", "false without sequence parallelism", target,
                          "its TP overlap needs --sequence-parallel", True)
        pairs.append(("--tp-comm-overlap", None))
    pairs += _recompute_args(plan)
    pairs += [("--micro-batch-size", plan.micro_batch), ("--global-batch-size", plan.global_batch),
              ("--seq-length", m.seq_len)]
    pairs += _megatron_data_parallel(plan, target)
    if precision not in _MEGATRON_PRECISION:
        raise _refuse("precision", "one of " + ", ".join(_MEGATRON_PRECISION), target,
                      "its optimizer keeps fp32 or fp16 main parameters (--main-params-dtype)", precision)
    pairs += [(flag, None) for flag in _MEGATRON_PRECISION[precision]]
    if plan.fp8:
        if precision not in ("bf16-adam", "megatron-bf16"):
            raise _refuse("precision", "bf16-adam or megatron-bf16 with fp8", target, "its FP8 layers are "
                          "written for bf16 activations here, as NVIDIA's recipes run them", precision)
        pairs += _MEGATRON_FP8 + ([("--fp8-param-gather", None)] if par.zero >= 1 else [])
    if m.attention not in _MEGATRON_ATTENTION:
        raise _refuse("attention", "flash, flash3 or standard", target, "its --attention-backend has no "
                      "FlashAttention in Triton", m.attention)
    pairs.append(("--attention-backend", _MEGATRON_ATTENTION[m.attention]))
    if m.kernels == "eager":
        raise _refuse("kernels", "fused", target, "its layers run fused kernels (Transformer Engine, fused "
                      "bias-GeLU, bias-dropout-add and norms)", m.kernels)
    dp = plan.gpus // (t * p * c)
    head = [f"# {target.name} ({target.repository}, {target.source})", _launch_line(plan),
            f"# Megatron's data-parallel size {dp} = {plan.gpus} GPUs / (tensor {t} × pipeline {p} × context {c})"]
    return Launch("megatron", (target.name,), _argv(pairs), text="\n".join(head + _argument_lines(pairs)))


# ---------------------------------------------------------------------------- torchtitan

#: The recipes torchtitan's mixed precision takes (``training.mixed_precision_param``: bfloat16 or float32).
_TORCHTITAN_PRECISION = {"bf16-adam": "bfloat16", "megatron-bf16": "bfloat16", "fp32-adam": "float32"}
_TORCHTITAN_RECOMPUTE = {"none": {"mode": "none"}, "selective": {"mode": "selective", "selective_ac_option": "op"},
                         "full": {"mode": "full"}}


def _torchtitan_recompute(plan: Plan, target: Target) -> dict:
    """``[activation_checkpoint]``: ``recompute_layers`` as torchtitan's every-k-th-block option
    (``selective_ac_option = "k"``: one process-wide count of blocks, each k-th checkpointed in full,
    ``torchtitan/distributed/activation_checkpoint.py``), when some k recomputes as many layers on every
    stage as the plan does; else refused."""
    par = plan.parallel
    n = par.recompute_layers
    if n is None or par.recompute != "full":
        return dict(_TORCHTITAN_RECOMPUTE[par.recompute])
    per_stage = [recomputed_layers(par, k, s == 0) for s, k in enumerate(plan.layers_per_stage)]
    if not any(per_stage):
        return dict(_TORCHTITAN_RECOMPUTE["none"])
    if per_stage == list(plan.layers_per_stage):
        return dict(_TORCHTITAN_RECOMPUTE["full"])
    for k in range(2, max(plan.layers_per_stage) + 1):
        if per_stage == [layers // k for layers in plan.layers_per_stage]:
            return {"mode": "selective", "selective_ac_option": str(k)}
    raise _refuse("recompute_layers", "⌊layers per stage / k⌋ for some k (every k-th block)", target,
                  "it checkpoints every k-th block, not the first N of each chunk", n)


def _module_names(plan: Plan, m: Model) -> list[list[str]]:
    """Per model chunk, in virtual-stage order, the modules it holds (torchtitan's names for its LLMs)."""
    p, v = plan.parallel.pipeline, plan.parallel.interleave
    chunks = chunk_ranges(plan.layers_per_stage, v)
    parts = []
    for k in range(v):
        for s in range(p):
            a, b = chunks[s][k]
            names = [f"layers.{i}" for i in range(a, b)]
            parts.append((["tok_embeddings"] if (k, s) == (0, 0) else []) + names +
                         (["norm", "output"] if (k, s) == (v - 1, p - 1) else []))
    return parts


def _torchtitan_check(plan: Plan, m: Model, precision: str, target: Target) -> None:
    par = plan.parallel
    t, p, c, e, z = par.tensor, par.pipeline, par.context, par.expert, par.zero
    _pipeline_outermost(plan, target)
    if precision not in _TORCHTITAN_PRECISION:
        raise _refuse("precision", "bf16-adam, megatron-bf16 or fp32-adam", target,
                      "its mixed precision runs in bfloat16 or float32", precision)
    if m.attention in ("standard", "triton"):
        raise _refuse("attention", "flash or flash3", target, "its attention runs through SDPA or FlexAttention, "
                      "which keep no s² scores and run their own kernels", m.attention)
    if z in (1, 2):
        raise _refuse("zero", "0 or 3", target, "FSDP2 shards the weights as well; without resharding after the "
                      "forward pass it gathers them again every microbatch, not once a step", z)
    if z == 0 and t * p * c * e > 1:
        raise _refuse("zero", "3 when another axis is split", target, "its DDP runs alone", z)
    if z == 3 and par.zero3_gather != "layer":
        raise _refuse("zero3_gather", "layer", target, "FSDP2 gathers a layer's weights at once", par.zero3_gather)
    if z == 0 and par.data > 1 and not par.overlap_grad_reduce:
        raise _refuse("overlap_grad_reduce", "true", target, "PyTorch DDP always overlaps the gradient all-reduce "
                      "with the backward pass", False)
    if m.kernels == "eager" and par.tp_comm_overlap and t > 1:
        raise _refuse("kernels", "fused with tp_comm_overlap", target, "its async TP runs only in compiled code "
                      "(torchtitan/distributed/tensor_parallel.py)", m.kernels)
    if t > 1 and not par.sequence_parallel:
        raise _refuse("sequence_parallel", "true with tensor parallelism", target,
                      "its tensor parallelism always splits the norms' sequence", False)
    if m.seq_len % (t * 2 * c):
        raise _refuse("seq_len", f"a multiple of tensor_parallel × 2 × context_parallel = {t * 2 * c}", target,
                      "its sequence and context split", m.seq_len)
    if m.tied_embeddings and p > 1:
        raise _refuse("tied_embeddings", "false with pipeline parallelism", target,
                      "its pipeline split keeps no tied copy of the embedding in step", True)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: the same escapes as JSON's for these names
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return "[\n" + "".join(f"  {_toml_value(row)},\n" for row in value) + "]"
        return "[" + ", ".join(_toml_value(x) for x in value) + "]"
    return str(value)


def _toml(config: dict, prefix: str = "") -> str:
    """Tables of plain keys, a table inside one under its dotted name, as ``tomllib`` reads them back.

    >>> print(_toml({"a": {"x": 1, "b": {"y": True}}, "c": {"d": {"z": "s"}}}))
    [a]
    x = 1
    <BLANKLINE>
    [a.b]
    y = true
    <BLANKLINE>
    [c.d]
    z = "s"
    """
    blocks = []
    for table, keys in config.items():
        plain = {k: x for k, x in keys.items() if not isinstance(x, dict)}
        inner = {k: x for k, x in keys.items() if isinstance(x, dict)}
        if plain or not inner:
            blocks.append(f"[{prefix}{table}]\n" + "\n".join(f"{k} = {_toml_value(x)}" for k, x in plain.items()))
        if inner:
            blocks.append(_toml(inner, f"{prefix}{table}."))
    return "\n\n".join(blocks)


def torchtitan(plan: Plan, m: Model, precision: str) -> Launch:
    """torchtitan's TOML tables for ``plan`` (merge them into the job's ``--job.config_file``)."""
    (target,) = TARGETS["torchtitan"]
    _current_engine(plan, target)
    _torchtitan_check(plan, m, precision, target)
    par = plan.parallel
    t, p, e, z = par.tensor, par.pipeline, par.expert, par.zero
    parallelism: dict = {"data_parallel_replicate_degree": par.data if z == 0 else replicas(par),
                         "data_parallel_shard_degree": 1 if z == 0 else shard_degree(par) * e}
    parallelism |= {"fsdp_reshard_after_forward": "always"} if z == 3 else {}
    parallelism |= {"tensor_parallel_degree": t}
    async_tp = par.tp_comm_overlap and t > 1
    parallelism |= {"enable_async_tensor_parallel": True} if async_tp else {}
    parallelism |= {"pipeline_parallel_degree": p}
    if p > 1:
        parallelism |= {"pipeline_parallel_schedule": "1F1B" if par.interleave == 1 else "Interleaved1F1B",
                        "pipeline_parallel_microbatch_size": plan.micro_batch,
                        "module_fqns_per_model_part": _module_names(plan, m)}
    parallelism |= {"context_parallel_degree": par.context}
    if e > 1:
        parallelism |= {"expert_parallel_degree": e, "expert_tensor_parallel_degree": t}
    local = plan.micro_batch * (plan.microbatches_per_step if p > 1 else 1)
    config = {"parallelism": parallelism, "activation_checkpoint": _torchtitan_recompute(plan, target),
              "training": {"local_batch_size": local, "global_batch_size": plan.global_batch, "seq_len": m.seq_len,
                           "mixed_precision_param": _TORCHTITAN_PRECISION[precision],
                           "mixed_precision_reduce": "float32"}}
    if plan.fp8:  # torchao's Float8Linear on every linear layer but the output, fp8 gathers under FSDP
        config["model"] = {"converters": ["quantize.linear.float8"]}
        config["quantize"] = {"linear": {"float8": {"enable_fsdp_float8_all_gather": z == 3,
                                                    "precompute_float8_dynamic_scale_for_fsdp": z == 3,
                                                    "filter_fqns": ["output"]}}}
    if m.kernels == "fused":  # the plan's fused element-wise kernels are torchtitan's compiled model
        config["compile"] = {"enable": True}
    head = [f"# {target.name} ({target.repository}, {target.source})", _launch_line(plan)]
    return Launch("torchtitan", (target.name,), (), config, "", "\n".join(head) + "\n" + _toml(config))


# ---------------------------------------------------------------------------- DeepSpeed

#: Precision recipes as DeepSpeed config sections: the weights' data type and the gradients'
#: (``data_types.grad_accum_dtype``; bf16 with fp32 gradients is DeepSpeed's BF16 optimizer).
_DEEPSPEED_PRECISION = {"bf16-adam": ("bf16", "bf16"), "megatron-bf16": ("bf16", "fp32"), "fp16-adam": ("fp16", None),
                        "megatron-fp16": ("fp16", None), "fp32-adam": (None, None)}


def _deepspeed_structure(plan: Plan, m: Model, ds: Target, mds: Target) -> None:
    """Refuse the splits Megatron-DeepSpeed and DeepSpeed's engines do not run."""
    par = plan.parallel
    t, p, z = par.tensor, par.pipeline, par.zero
    _pipeline_outermost(plan, ds)
    if par.context > 1:
        raise _refuse("context_parallel", "1", mds, "its sequence parallelism is Ulysses' all-to-all of heads, "
                      "not ring attention", par.context)
    if par.interleave > 1:
        raise _refuse("interleave", "1", ds, "its pipeline engine runs 1F1B without model chunks", par.interleave)
    if len(set(plan.layers_per_stage)) > 1:
        name, value = ("stage_layers", list(plan.layers_per_stage)) if par.stage_layers else ("pipeline_parallel", p)
        rule = "as many layers on every stage" if par.stage_layers else f"a divisor of layers ({m.layers})"
        raise _refuse(name, rule, mds, "its pipeline balances the transformer layers itself", value)
    if p > 1 and z >= 2:
        raise _refuse("zero", "0 or 1 with pipeline parallelism", ds, "its pipeline engine refuses ZeRO-2 and "
                      "ZeRO-3", z)
    if z == 3 and par.zero3_gather != "tensor":
        raise _refuse("zero3_gather", "tensor", ds, "ZeRO-3 gathers each weight tensor, and since v0.6.0 without a "
                      "device synchronize before each (tensor-blocking is DeepSpeed of 2021)", par.zero3_gather)
    if par.zero_group is not None and par.zero_group < par.data:
        raise _refuse("zero_group", "blank (every data-parallel rank)", ds, "it shards over the whole data-parallel "
                      "group; its hpZ and MiCS keep other copies than the plan counts", par.zero_group)
    if m.experts > 1 and p > 1 and t > 1:
        raise _refuse("pipeline_parallel", "1 for a mixture of experts with tensor parallelism", mds,
                      "it turns off the "
                      "partitioned pipeline sends, 1/tensor of each activation, that the plan counts", p)
    if par.tp_comm_overlap and t > 1:
        raise _refuse("tp_comm_overlap", "false", mds, "it has no overlap of TP collectives with the GEMMs", True)
    if m.attention in ("flash3", "triton"):
        raise _refuse("attention", "flash or standard", mds, "it offers FlashAttention 1 and 2", m.attention)
    if m.kernels == "eager":
        raise _refuse("kernels", "fused", mds, "its layers run Megatron's fused kernels (bias-GeLU, "
                      "bias-dropout-add, layer norm)", m.kernels)


def _deepspeed_schedule(plan: Plan, precision: str, ds: Target) -> None:
    """Refuse the overlaps and precisions DeepSpeed's engines cannot run as planned."""
    par = plan.parallel
    p, z = par.pipeline, par.zero
    if _data_group(plan) > 1 and z <= 1 and par.overlap_grad_reduce and (p > 1 or z == 0):
        why = "its pipeline engine reduces the gradients after the last microbatch" if p > 1 else \
            "without ZeRO the engine all-reduces the gradients after the backward pass"
        raise _refuse("overlap_grad_reduce", "false", ds, why, True)
    if _data_group(plan) > 1 and z in (1, 2) and par.overlap_param_gather:
        raise _refuse("overlap_param_gather", "false", ds, "ZeRO-1 and ZeRO-2 gather the updated weights inside "
                      "the optimizer step", True)
    if precision not in _DEEPSPEED_PRECISION:
        raise _refuse("precision", "one of " + ", ".join(_DEEPSPEED_PRECISION), ds,
                      "its optimizers keep fp32 master weights and Adam states", precision)
    if precision == "bf16-adam" and z == 0 and p == 1:
        raise _refuse("precision", "megatron-bf16 without ZeRO or pipelining (fp32 gradients)", ds,
                      "bf16 gradient accumulation needs ZeRO", precision)
    if precision == "megatron-bf16" and z >= 2:
        raise _refuse("precision", "bf16-adam with ZeRO-2 or ZeRO-3", ds, "they keep the gradients in the weights' "
                      "bf16, not fp32", precision)


def _deepspeed_config(plan: Plan, precision: str) -> dict:
    par = plan.parallel
    z = par.zero
    zero: dict = {"stage": z}
    if z >= 1:
        zero["overlap_comm"] = z == 3 or (par.overlap_grad_reduce and par.pipeline == 1)
    config: dict = {"train_batch_size": plan.global_batch, "train_micro_batch_size_per_gpu": plan.micro_batch,
                    "gradient_accumulation_steps": plan.microbatches_per_step, "zero_optimization": zero}
    dtype, grads = _DEEPSPEED_PRECISION[precision]
    if dtype:
        config[dtype] = {"enabled": True}
    if grads:
        config["data_types"] = {"grad_accum_dtype": grads}
    return config


def _megatron_deepspeed_args(plan: Plan, m: Model, precision: str) -> list[tuple[str, object]]:
    par = plan.parallel
    t, p, e = par.tensor, par.pipeline, par.expert
    pairs: list[tuple[str, object]] = [("--tensor-model-parallel-size", t), ("--pipeline-model-parallel-size", p)]
    pairs += [("--no-pipeline-parallel", None)] if p == 1 else []
    pairs += [("--moe-expert-parallel-size", e)] if e > 1 else []
    pairs += [("--enable-expert-tensor-parallelism", None)] if m.experts > 1 and t > 1 else []
    pairs += [("--sequence-parallel", None)] if par.sequence_parallel and t > 1 else []
    pairs += _recompute_args(plan)
    pairs += [("--micro-batch-size", plan.micro_batch), ("--global-batch-size", plan.global_batch),
              ("--seq-length", m.seq_len)]
    dtype = _DEEPSPEED_PRECISION[precision][0]
    pairs += [(f"--{dtype}", None)] if dtype else []
    pairs += _MEGATRON_DEEPSPEED_FP8 if plan.fp8 else []
    pairs += [("--use-flash-attn-v2", None)] if m.attention == "flash" else []
    pairs += [("--zero-stage", par.zero), ("--deepspeed", None), ("--deepspeed_config", "ds_config.json")]
    return pairs


def deepspeed(plan: Plan, m: Model, precision: str) -> Launch:
    """DeepSpeed's JSON config and the Megatron-DeepSpeed arguments for ``plan``."""
    ds, mds = TARGETS["deepspeed"]
    if plan.fp8 and plan.parallel.zero >= 1:
        raise _refuse("zero", "0 with fp8", ds, "its ZeRO gathers the 16-bit weights where the plan gathers fp8 "
                      "ones, as Megatron-Core's --fp8-param-gather does", plan.parallel.zero)
    _deepspeed_structure(plan, m, ds, mds)
    _deepspeed_schedule(plan, precision, ds)
    config = _deepspeed_config(plan, precision)
    pairs = _megatron_deepspeed_args(plan, m, precision)
    text = "\n".join([f"# {ds.name} ({ds.repository}): ds_config.json", _launch_line(plan),
                      json.dumps(config, indent=2),
                      f"# {mds.name} ({mds.repository}, {mds.source}): arguments", *_argument_lines(pairs)])
    return Launch("deepspeed", (ds.name, mds.name), _argv(pairs), config, "ds_config.json", text)


# ---------------------------------------------------------------------------- dispatch

_EXPORTERS = {"megatron": megatron, "torchtitan": torchtitan, "deepspeed": deepspeed}


def export(framework: str, plan: Plan, m: Model, precision: str) -> Launch:
    """``plan`` as ``framework`` takes it, or a :class:`CalcError` saying why it cannot be.

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> from calc.plan import parallel, plan as make_plan
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> p = make_plan(llama, 1, 64, hardware(8, profile_name="h100-sxm5-80gb"),
    ...               parallel(data=4, tensor=2, zero=1, sequence_parallel=True, recompute="selective"))
    >>> export("megatron", p, llama, "bf16-adam").arguments[:4]
    ('--tensor-model-parallel-size', '2', '--pipeline-model-parallel-size', '1')
    """
    if framework not in _EXPORTERS:
        raise CalcError("to", "one of " + ", ".join(FRAMEWORKS), framework)
    _check_fits(plan)
    return _EXPORTERS[framework](plan, m, precision)
