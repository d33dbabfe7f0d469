"""The execution plan: model, batch and hardware in; partitions, memory, communication and time out.

Ranks are laid out ``pipeline, data, expert, context, tensor`` from outermost to
innermost, as Megatron-LM, DeepSpeed and torchtitan lay them out (:data:`RANK_ORDER`: TP
innermost, so a TP group of at most ``gpus_per_node`` stays in a node).
``gpus = data × pipeline × context × expert × tensor``.

Expert parallelism is its own axis of the grid: the ``expert`` ranks of a group
hold different experts of an MoE layer *and different examples*, so for the
dense weights (attention, embeddings, dense layers) they are data-parallel
replicas. Dense gradients are reduced over ``data × context × expert`` ranks,
expert gradients over ``data × context``, and the global batch is
``micro_batch × microbatches × data × expert``. (Megatron-Core's
``--expert-model-parallel-size E`` with data-parallel size ``D`` is ``expert = E,
data = D/E`` here.)

The plan is assembled from four pieces, each a function of this module:

1. :func:`layout`: which layers each pipeline stage holds (even, or
   ``parallel.stage_layers``), split into ``v`` model chunks when interleaving; the
   word embedding on the first stage, the final norm and output head on the last
   (a tied copy there when tied and ``p > 1``, its gradient all-reduced with the
   first stage's each step, as Megatron does); the vocabulary split over TP; K/V
   heads replicated when ``t`` exceeds them.
2. :func:`stage_cost`: per stage, a frozen :class:`StageCost`: memory (model states
   under ZeRO over each weight's data-parallel group, or its shard group; activations of the
   microbatches in flight under 1F1B, Korthikanti et al. 2022, with FlashAttention
   keeping no scores; a fully recomputed layer keeps only its input, and
   ``parallel.recompute_layers`` recomputes only the first N layers of each model chunk,
   Megatron-LM's block method; ZeRO-3's gathered layers; the memory reserve) and time per
   microbatch: compute from the kernels (:mod:`calc.work`) plus the exposed
   communication of that microbatch, and the tail after the last microbatch
   (gradient reduction, optimizer step, weight gather).
3. :func:`communications`: every transfer of a step with its collective, bytes,
   calls, time and exposed time, on the two-tier network of :mod:`calc.network`.
4. :func:`estimate` (what :mod:`calc.search` and ``device-memory`` use) and
   :func:`plan` (the full plan): ``step = m·t_max + (Σ_s t_s − t_max)/v + tail``
   with ``t_s`` stage ``s``'s time per microbatch; for equal stages the middle term is
   the bubble ``(p−1)/v · t_mb`` of Narayanan et al. 2021 §2.2.

Overlap (what hides behind compute; every rule a constant below with its source):
TP collectives are exposed unless ``parallel.tp_comm_overlap``, except that Megatron's engine
hides the column-parallel layers' input-gradient reduction behind their weight gradient
(:data:`TP_ASYNC_CALLS`); EP all-to-alls and
pipeline sends are exposed; CP's K/V exchange overlaps the attention core of the
same layer; the data-parallel gradient reduction overlaps the last microbatch's
backward pass when ``parallel.overlap_grad_reduce`` (default true; the 2021-2022
Megatron-LM runs had it off); the weight all-gather after the optimizer step (ZeRO
1-2) is exposed unless ``parallel.overlap_param_gather``; ZeRO-2's per-microbatch
reduce-scatter overlaps that microbatch's backward; ZeRO-3's gathers are prefetched
one layer ahead. With hybrid sharding (``parallel.zero_group``) the ZeRO transfers stay in the
shard group and each gradient shard is all-reduced across its copies once a step, after the last
microbatch, overlapping its backward pass behind that pass's own ZeRO transfers.

The pipeline engine (``parallel.pipeline_engine``): Megatron-LM's batched sends (the default) or DeepSpeed's
``PipelineEngine``, whose sends run one at a time and which, with fp32 gradients, accumulates and all-reduces
them in fp32 (its ``BF16_Optimizer``): :data:`PIPELINE_SENDS`, :func:`fp32_accumulation`. Gradients accumulate
inside the weight-gradient GEMMs except under ``megatron-2021`` (Megatron-LM before 2022) and ``deepspeed``:
:func:`accumulation_bytes`.

Floats are added with :func:`math.fsum` (exactly rounded), so CPython 3.11 and Pyodide's
3.14, whose built-in ``sum`` of floats differ in the last digit, print the same numbers.

Not modelled: load imbalance of MoE routing, stragglers, NIC contention between
groups, NCCL's algorithm choice (tree, NVLS, SHARP), the optimizer's gradient-norm
all-reduce, data loading, checkpointing, and the time-varying clock of a
power-limited GPU beyond what the profile's efficiencies average.

Sources: Narayanan et al. 2021 (PTD-P, §2-3); Korthikanti et al. 2022;
Rajbhandari et al. 2020 (ZeRO); Zhao et al. 2023 (PyTorch FSDP); Liu et al. 2023
(ring attention) and Megatron-Core's context parallelism; Lepikhin et al. 2021
(GShard all-to-all); Dubey et al. 2024 (Llama 3, §3.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from math import fsum
from types import MappingProxyType

from .check import count, real
from .compute import MAX_TOKENS, training_flops
from .errors import CalcError
from .hardware import GIB, MAX_GPUS, Hardware, fp8_hardware, hardware
from .memory import MAX_DEGREE, RECOMPUTE, check_recompute_fits, check_recompute_layers, layer_activation_bytes
from .model import FLASH, Model, Precision, layer_params, precision as _precision
from .network import Link, collective_time, group_link
from .pipeline import MAX_INTERLEAVE, check_interleave, in_flight_chunks, stage_layers as _even_stage_layers
from .jsontext import plain
from .spec import AXES
from .split import check_split
from .kernels import memory_time
from .work import LayerWork, head_work, kv_hidden_per_rank, layer_kernels, optimizer_time, recomputed

__all__ = [
    "Hardware",
    "hardware",
    "Parallel",
    "parallel",
    "Workload",
    "workload",
    "Layout",
    "layout",
    "chunk_ranges",
    "StageCost",
    "stage_cost",
    "Estimate",
    "estimate",
    "memory",
    "memory_total",
    "binding_term",
    "step_floor",
    "step_bound",
    "shared_by_interleavings",
    "memory_parts",
    "heaviest_stage",
    "time_parts",
    "bound_from_parts",
    "StageShape",
    "Arrangement",
    "Communication",
    "communications",
    "DeviceMemory",
    "StagePlacement",
    "Plan",
    "plan",
    "check_combination",
    "check_degrees",
    "engine_layout_rule",
    "interleave_room",
    "RANK_ORDER",
    "RANK_ORDERS",
    "SERVING_RANK_ORDER",
    "MAX_LISTED_RANKS",
    "MAX_GPUS",
    "TP_CALLS",
    "EP_CALLS",
    "CP_GATHERS",
    "ZERO3_GATHERS",
    "ZERO3_GATHER",
    "PIPELINE_ENGINES",
    "PIPELINE_SENDS",
    "DS_BF16_ACCUMULATE_BYTES",
    "fp32_accumulation",
    "accumulation_bytes",
    "layer_tensors",
    "shard_degree",
    "replicas",
]

#: How a training step's ranks are laid out, outermost to innermost: Megatron-Core's default ``tp-cp-ep-dp-pp``
#: (innermost first), which is also Megatron-LM's of 2021 (``mpu/initialize.py``: pipeline groups of stride
#: ``world/p``, data groups of stride ``t`` inside a stage), DeepSpeed's ``PipeModelDataParallelTopology`` (axes
#: ``pipe, data, model``) and torchtitan's device mesh (``pp, dp, cp, tp``). TP stays in a node; a data-parallel group
#: holds as many GPUs of a node as the node has replicas of the TP group, so the gradient reduction uses that many
#: NICs per node; consecutive pipeline stages sit ``d·e·c·t`` ranks apart, across nodes once that reaches a node.
#: Sources: NVIDIA/Megatron-LM ``megatron/core/parallel_state.py`` (``initialize_model_parallel``, ``order``) and
#: commit cb5e611d74 ``megatron/mpu/initialize.py``; microsoft/DeepSpeed ``runtime/pipe/topology.py``;
#: pytorch/torchtitan ``torchtitan/distributed/parallel_dims.py``.
RANK_ORDER = ("pipeline", "data", "expert", "context", "tensor")
#: ``parallel.rank_order``, in Megatron-Core's notation (innermost first), and the axes it gives, outermost first:
#: its default, and ``--use-tp-pp-dp-mapping`` (data-parallel replicas outermost), which is also Llama 3's
#: ``[TP, CP, PP, DP]`` (Dubey et al. 2024 §3.3.2). Source: NVIDIA/Megatron-LM ``megatron/training/initialize.py``
#: (``order='tp-cp-ep-dp-pp' if not args.use_tp_pp_dp_mapping else 'tp-cp-ep-pp-dp'``).
RANK_ORDERS = MappingProxyType({"tp-cp-ep-dp-pp": RANK_ORDER,
                                "tp-cp-ep-pp-dp": ("data", "pipeline", "expert", "context", "tensor")})
#: Serving replicas are independent deployments, outermost (a vLLM or TensorRT-LLM instance puts its pipeline
#: stages outside its tensor groups); :mod:`calc.inference` lays its ranks out so.
SERVING_RANK_ORDER = ("data", "pipeline", "context", "expert", "tensor")
#: The degrees whose ranks hold one model replica, as rules name them.
_MODEL_RANKS = "tensor_parallel × pipeline_parallel × context_parallel × expert_parallel"
#: Plans list every rank's coordinates up to this many GPUs (beyond, ``ranks`` is None).
MAX_LISTED_RANKS = 1024
GB = 1e9

#: TP collectives per layer per microbatch by recomputation mode: Megatron's ``f`` and ``g``
#: operators all-reduce twice in the forward pass (after the attention and MLP row-parallel
#: GEMMs) and twice in the backward pass; full recomputation runs the forward's two again.
#: With sequence parallelism each all-reduce becomes an all-gather plus a reduce-scatter
#: (Korthikanti et al. 2022 §4.2.2). Source: Shoeybi et al. 2019 §3; Narayanan et al. 2021 §3.2.
TP_CALLS = {"none": 4, "selective": 4, "full": 6}
#: Of those, the backward pass's (per layer, whatever the recomputation). With FP8 and sequence parallelism the
#: forward's all-gathers carry the norms' fp8 outputs (Transformer Engine's ``LayerNormLinear`` and
#: ``LayerNormMLP`` gather ``ln_out`` after the cast), one byte per element; the reduce-scatters and the backward's
#: all-gathers of gradients stay 16-bit.
TP_BACKWARD_CALLS = 2
#: Of the backward's, those Megatron's engine (``pipeline_engine`` megatron) overlaps without ``tp_comm_overlap``: the
#: column-parallel linears (QKV, MLP up) launch their input gradient's reduction (a reduce-scatter with sequence
#: parallelism, else an all-reduce) asynchronously and compute their weight gradient meanwhile. Sources:
#: NVIDIA/TransformerEngine ``module/layernorm_linear.py`` and ``layernorm_mlp.py`` backward ("Overlap dgrad-RS/AR
#: with wgrad", TE 1.x); Megatron-LM ``core/tensor_parallel/layers.py``
#: (``LinearWithGradAccumulationAndAsyncCommunication``, 2022 on). The 2021 engine and DeepSpeed's ran them in order.
TP_ASYNC_CALLS = 2
#: The share of a layer's GEMM time those reductions can hide behind: the weight-gradient GEMMs of the
#: column-parallel linears, a third of each linear's three passes for about half the layer's linear FLOPs (7/12 of
#: GPT's, 0.5-0.6 of Llama's): 1/6.
WGRAD_COLUMN_SHARE = 1 / 6
#: MoE all-to-alls per MoE layer per microbatch: dispatch and combine, forward and backward;
#: full recomputation repeats the forward's two. Source: Lepikhin et al. 2021 (GShard) §2.2.
EP_CALLS = {"none": 4, "selective": 4, "full": 6}
#: Context parallelism per layer per microbatch: K/V passed around the ring (c − 1 sends) in the
#: forward pass (again when the forward is recomputed) and in the backward pass, which also passes
#: dK/dV back: the all-gathers of K/V and reduce-scatter of dK/dV they amount to, per layer.
#: Source: Liu et al. 2023 (ring attention); Megatron-Core ``context_parallel`` (P2P ring).
CP_GATHERS = {"none": 2, "selective": 2, "full": 3}
#: ZeRO-3 / FSDP all-gathers of a layer's weights per microbatch: before its forward and before its
#: backward (FSDP recomputes a checkpointed forward inside the backward, with the weights already
#: gathered). Source: Zhao et al. 2023 (PyTorch FSDP) §3.2; Rajbhandari et al. 2020 §5.3.
ZERO3_GATHERS = 2
#: How ZeRO-3 gathers weights: a whole layer per call (PyTorch FSDP's flat parameter per transformer
#: block) or each weight tensor on its own (DeepSpeed's ZeRO-3, which partitions every parameter and,
#: with activation checkpointing, gathers again in the recomputed forward: its hooks run there too).
#: Sources: Zhao et al. 2023 §3.1 (FlatParameter); Rajbhandari et al. 2020 §5.3 and DeepSpeed's
#: ``deepspeed/runtime/zero/partition_parameters.py``.
#:
#: ``tensor-blocking`` is DeepSpeed's ZeRO-3 before v0.6 (2021): ``_allgather_param`` calls
#: ``torch.cuda.synchronize()`` before each tensor's gather and ``fetch_sub_module`` waits for the gathers
#: (``_synchronize_communication``), so no gather overlaps compute; each gather zeroes the whole tensor first,
#: and it and the gradients' ``_reduce_scatter_gradient`` pass PyTorch's list collectives one chunk per rank,
#: which ``ProcessGroupNCCL`` copies to or from a flat buffer in one kernel per rank
#: (:data:`CPU_LAUNCH_S` each, launched one after another by the CPU). DeepSpeed v0.6.0 gathers coalesced
#: (``all_gather_coalesced``), without the synchronize. Sources: DeepSpeed v0.3.16
#: ``deepspeed/runtime/zero/partition_parameters.py`` and ``stage3.py``; PyTorch 1.8
#: ``torch/lib/c10d/ProcessGroupNCCL.cpp`` (``allgather``, ``reduce_scatter``: ``flatten_for_scatter_gather``).
ZERO3_GATHER = ("layer", "tensor", "tensor-blocking")
#: CPU time to launch one small kernel (s): the low end of the 5-20 us that Meta's HolisticTraceAnalysis
#: documentation gives for a kernel launch on the CPU (the GPU profile's ``kernel_overhead_s`` source).
CPU_LAUNCH_S = 5e-6
#: ZeRO-3 keeps the current layer's gathered weights and prefetches the next: two layers of
#: unsharded weights are live. Source: Zhao et al. 2023 §3.3 (forward/backward prefetch).
ZERO3_LIVE_LAYERS = 2
#: DeepSpeed's ZeRO-3 (``zero3_gather`` tensor) releases gathered weights once more than this many parameters
#: are resident (``stage3_max_live_parameters``, default 1e9, the same since ZeRO-3's release), though a tensor
#: larger than that is still gathered whole. Source: DeepSpeed ``deepspeed/runtime/zero/config.py``
#: ("The maximum number of parameters resident per GPU before releasing").
DS_MAX_LIVE_PARAMETERS = 10**9
#: The pipeline engines (``parallel.pipeline_engine``) and the blocking transfers each runs at a stage boundary per
#: microbatch per model chunk. Megatron-LM's 1F1B sends the activation on and takes the gradient back in one batched
#: exchange after a forward pass (``send_forward_recv_backward``) and one after a backward pass
#: (``send_backward_recv_forward``), each a ``torch.distributed.batch_isend_irecv``: two. DeepSpeed's
#: ``PipelineEngine`` runs ``TrainSchedule``'s commands one after the other, each a blocking ``dist.send`` or
#: ``dist.recv`` (``p2p.send``/``p2p.recv`` refuse ``async_op``): a forward step receives the activation, then sends the
#: previous backward's gradient; a backward step sends the previous forward's activation, then receives the
#: gradient: four. DeepSpeed's schedule has no model chunks (no interleaving). Sources: NVIDIA/Megatron-LM
#: ``megatron/p2p_communication.py`` and ``schedules.py`` (2021); microsoft/DeepSpeed v0.5-v0.6
#: ``deepspeed/runtime/pipe/schedule.py`` (``TrainSchedule.steps``), ``engine.py`` and ``p2p.py``.
PIPELINE_SENDS = MappingProxyType({"megatron": 2, "megatron-2021": 2, "deepspeed": 4})
PIPELINE_ENGINES = tuple(PIPELINE_SENDS)
#: DeepSpeed's pipeline engine with 16-bit weights and fp32 gradients (``megatron-bf16``'s bytes: DeepSpeed's
#: ``BF16_Optimizer``, BLOOM's) adds each microbatch's bf16 gradients into fp32 accumulators after its backward pass
#: (``update_hp_grads``: ``hp_grad.add_(lp.grad.to(float32))``): it reads the 2 B gradient, writes a 4 B fp32 copy,
#: reads that and the 4 B accumulator and writes the accumulator back: 18 B per weight per microbatch, two kernels per
#: weight tensor. Source: microsoft/DeepSpeed v0.6.5 ``deepspeed/runtime/bf16_optimizer.py`` and
#: ``pipe/engine.py`` (``_exec_backward_pass``).
DS_BF16_ACCUMULATE_BYTES = 18
_TERMS = ("params", "grads", "optimizer", "activations", "buffers")


# ---------------------------------------------------------------------------- the split


@dataclass(frozen=True, slots=True)
class Parallel:
    """How the work is split and scheduled."""

    data: int = 1
    tensor: int = 1
    pipeline: int = 1
    context: int = 1
    expert: int = 1
    zero: int = 0  #: 0-3; 1 with a Megatron precision recipe is Megatron's distributed optimizer
    sequence_parallel: bool = False
    recompute: str = "none"  #: none | selective | full
    interleave: int = 1  #: v, model chunks per pipeline stage
    stage_layers: tuple[int, ...] | None = None  #: layers per stage; None: as even as possible
    overlap_grad_reduce: bool = True  #: the DP gradient reduction overlaps the last backward pass
    overlap_param_gather: bool = False  #: ZeRO 1-2's weight all-gather overlaps the next forward pass
    tp_comm_overlap: bool = False  #: TP collectives overlap the GEMMs around them
    zero3_gather: str = "layer"  #: ZeRO-3 gathers a layer at once (FSDP) or each weight tensor (DeepSpeed)
    #: with ``recompute`` full: the first N layers of every model chunk recomputed, the others keeping all their
    #: activations (:func:`recomputed_layers`); None: every layer
    recompute_layers: int | None = None
    #: the engine that runs the microbatches: ``megatron`` (batched sends, interleaving, gradients accumulated inside
    #: the GEMMs), ``megatron-2021`` (the same, gradients added in a pass of their own) or ``deepspeed``
    #: (:data:`PIPELINE_SENDS`, :func:`accumulation_bytes`)
    pipeline_engine: str = "megatron"
    #: how ranks are laid out (:data:`RANK_ORDERS`): pipeline stages outermost (the default) or replicas outermost
    rank_order: str = "tp-cp-ep-dp-pp"
    #: hybrid sharding: the data-parallel ranks each ZeRO shard group spans (consecutive ones; with the context and
    #: expert ranks that share its weights), the groups holding replicas of each other's shards
    #: (:func:`shard_degree`); None: every data-parallel rank, one group
    zero_group: int | None = None


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise CalcError(name, "true or false", value)
    return value


def parallel(data: int = 1, tensor: int = 1, pipeline: int = 1, context: int = 1, expert: int = 1,
             zero: int = 0, sequence_parallel: bool = False, recompute: str = "none",
             interleave: int = 1, stage_layers: tuple[int, ...] | list[int] | None = None,
             overlap_grad_reduce: bool = True, overlap_param_gather: bool = False,
             tp_comm_overlap: bool = False, zero3_gather: str = "layer",
             recompute_layers: int | None = None, pipeline_engine: str = "megatron",
             rank_order: str = "tp-cp-ep-dp-pp", zero_group: int | None = None) -> Parallel:
    """Check each value on its own (combinations are checked by :func:`check_combination`).

    ``recompute_layers`` (only with ``recompute`` full) is Megatron-LM's block method,
    ``--recompute-method block --recompute-num-layers N``: the first N layers of every model chunk
    (of every stage without interleaving) are recomputed, the others keep all their activations
    (:func:`recomputed_layers`).

    ``zero_group`` G (ZeRO 1-3) is hybrid sharding: the model states are sharded over groups of G consecutive
    data-parallel ranks and replicated across the ``data / G`` groups (PyTorch FSDP's ``HYBRID_SHARD``, whose shard
    group is a node; torchtitan's ``data_parallel_shard_degree``; Megatron-LM's
    ``--num-distributed-optimizer-instances data/G``). Its rules with the other degrees are
    :func:`check_combination`'s.

    >>> parallel(data=8, tensor=8, zero=1).zero
    1
    >>> parallel(data=16, zero=3, zero_group=8).zero_group
    8
    """
    degrees = [count(f"{axis}_parallel", x, maximum=MAX_DEGREE)
               for axis, x in zip(AXES, (data, tensor, pipeline, context, expert))]
    z = count("zero", zero, minimum=0, maximum=3)
    if recompute not in RECOMPUTE:
        raise CalcError("recompute", "one of " + ", ".join(RECOMPUTE), recompute)
    v = count("interleave", interleave, maximum=MAX_INTERLEAVE)
    layers = None
    if stage_layers is not None:
        if not isinstance(stage_layers, (list, tuple)) or not stage_layers or len(stage_layers) > MAX_DEGREE:
            raise CalcError("stage_layers", "a list of layer counts, one per pipeline stage", stage_layers)
        layers = tuple(count("stage_layers", n, maximum=10**6) for n in stage_layers)
    if zero3_gather not in ZERO3_GATHER:
        raise CalcError("zero3_gather", "one of " + ", ".join(ZERO3_GATHER), zero3_gather)
    recompute_layers = check_recompute_layers(recompute_layers, recompute, maximum=10**6)
    if pipeline_engine not in PIPELINE_ENGINES:
        raise CalcError("pipeline_engine", "one of " + ", ".join(PIPELINE_ENGINES), pipeline_engine)
    if rank_order not in RANK_ORDERS:
        raise CalcError("rank_order", "one of " + ", ".join(RANK_ORDERS), rank_order)
    group = None if zero_group is None else count("zero_group", zero_group, maximum=MAX_DEGREE)
    return Parallel(*degrees, z, _flag("sequence_parallel", sequence_parallel), recompute, v, layers,
                    _flag("overlap_grad_reduce", overlap_grad_reduce),
                    _flag("overlap_param_gather", overlap_param_gather), _flag("tp_comm_overlap", tp_comm_overlap),
                    zero3_gather, recompute_layers, pipeline_engine, rank_order, group)


def shard_degree(par: Parallel) -> int:
    """The data-parallel ranks one ZeRO shard group spans: ``zero_group``, or all ``data`` of them.

    >>> shard_degree(parallel(data=16, zero=3)), shard_degree(parallel(data=16, zero=3, zero_group=8))
    (16, 8)
    """
    return par.zero_group or par.data


def replicas(par: Parallel) -> int:
    """Copies of each ZeRO shard across the shard groups: ``data / zero_group`` with hybrid sharding, else 1.

    >>> replicas(parallel(data=16, zero=3)), replicas(parallel(data=16, zero=3, zero_group=4))
    (1, 4)
    """
    return par.data // shard_degree(par) if par.zero else 1


def recomputed_layers(par: Parallel, n_s: int, first: bool) -> int:
    """Layers of a stage of ``n_s`` layers that run ``par.recompute``'s mode; the others run without recomputation.

    Every layer unless ``recompute_layers`` is given; then ``Σ min(N, chunk)`` over the stage's ``v`` model
    chunks: Megatron-LM's block method recomputes the first ``--recompute-num-layers`` layers of each
    ``TransformerBlock``, and with interleaving each model chunk is one (NeMo's activation recomputation
    guide: "When using virtual pipelining, recompute_num_layers specifies the number of layers per virtual
    pipeline stage"). PyTorch FSDP's "every k-th block" (fms-fsdp ``selective_checkpointing`` = 1/k,
    torchtitan ``selective_ac_option`` = "k") recomputes ``⌊n/k⌋`` of ``n`` blocks: ``recompute_layers``
    ``⌊n/k⌋`` costs the same, since without a pipeline which blocks they are does not matter.

    >>> recomputed_layers(parallel(pipeline=2, recompute="full", recompute_layers=3), 8, True)
    3
    >>> recomputed_layers(parallel(pipeline=2, interleave=2, recompute="full", recompute_layers=3), 8, True)
    6
    >>> recomputed_layers(parallel(recompute="full"), 8, True), recomputed_layers(parallel(), 8, True)
    (8, 8)
    """
    n = par.recompute_layers
    if n is None:
        return n_s
    return sum(min(n, k) for k in _chunk_sizes(n_s, par.interleave, first))


def _layer_counts(par: Parallel, n_s: int, n_rec: int) -> tuple[tuple[str, float], ...]:
    """``(mode, share of the stage's layers)``: ``par.recompute`` for all, or split with ``none``."""
    if n_rec == n_s:
        return ((par.recompute, 1.0),)
    if n_rec == 0:
        return (("none", 1.0),)
    return ((par.recompute, n_rec / n_s), ("none", (n_s - n_rec) / n_s))


def _calls(table: dict, par: Parallel, n: float, n_s: int, n_rec: int) -> float:
    """Per-layer calls of ``table`` (by recomputation mode) for ``n`` of a stage's layers, recomputed or not."""
    if n_rec == n_s:
        return n * table[par.recompute]
    return fsum(n * share * table[mode] for mode, share in _layer_counts(par, n_s, n_rec))


def check_degrees(m: Model, gpus: int, par: Parallel) -> None:
    """The rules every split obeys, training or serving: the degrees multiply to ``gpus``, tensor
    divides the heads (the KV heads dividing it or it dividing them) and the MLP width, pipeline is
    at most the layers, expert divides the experts.

    >>> from calc.model import model
    >>> check_degrees(model(32, 4096, 32, 128256, 8192, kv_heads=8), 8, parallel(data=2, tensor=3))
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: gpus must be a multiple of tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = 3, got 8
    """
    t, p, c, e, d = par.tensor, par.pipeline, par.context, par.expert, par.data
    model_ranks = t * p * c * e
    if gpus % model_ranks:
        raise CalcError("gpus", f"a multiple of {_MODEL_RANKS} = {model_ranks}", gpus)
    if d * model_ranks != gpus:
        raise CalcError("data_parallel", f"gpus / ({_MODEL_RANKS}) = {gpus // model_ranks}", d)
    check_split(tensor=t, pipeline=p, heads=m.heads, kv_heads=m.kv_heads, ffn_hidden=m.ffn_hidden,
                hidden=m.hidden, layers=m.layers)
    if m.experts % e:
        raise CalcError("expert_parallel", f"a divisor of experts ({m.experts})", e)


def check_combination(m: Model, micro_batch: int, global_batch: int, hw: Hardware, par: Parallel) -> int:
    """Reject impossible combinations with the reason; return the microbatches per step ``m``.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8)
    >>> hw = hardware(64, profile_name="h100-sxm5-80gb")
    >>> check_combination(llama, 1, 512, hw, parallel(data=8, tensor=8))
    64
    >>> check_combination(llama, 1, 512, hw, parallel(data=2, tensor=32))  # 8 KV heads, each on 4 ranks
    256
    >>> check_combination(llama, 1, 512, hw, parallel(data=16, tensor=4, pipeline=1, context=1, expert=1,
    ...                                              interleave=2))
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: interleave must be 1 when pipeline_parallel is 1, got 2
    """
    t, p, c, e, d, v = par.tensor, par.pipeline, par.context, par.expert, par.data, par.interleave
    check_degrees(m, hw.gpus, par)
    b = count("micro_batch", micro_batch)
    gb = count("global_batch", global_batch)
    per_step = b * d * e
    if gb % per_step:
        raise CalcError("global_batch", f"a multiple of micro_batch × data_parallel × expert_parallel = {per_step}",
                        gb)
    mbs = gb // per_step
    if par.stage_layers is not None:
        if len(par.stage_layers) != p:
            raise CalcError("stage_layers", f"{p} layer counts, one per pipeline stage", list(par.stage_layers))
        if sum(par.stage_layers) != m.layers:
            raise CalcError("stage_layers", f"layer counts that add up to layers ({m.layers})",
                            list(par.stage_layers))
    if v > 1 and par.pipeline_engine == "deepspeed":
        raise CalcError("interleave", "1 with pipeline_engine deepspeed (its TrainSchedule has no model chunks)", v)
    check_interleave(p, mbs, v, microbatches_given=False)
    per_stage = par.stage_layers or _even_stage_layers(m.layers, p)
    broken = engine_layout_rule(par.pipeline_engine, per_stage, v)
    if broken:
        raise broken
    if par.recompute_layers is not None:
        check_recompute_fits(par.recompute_layers, -(-max(per_stage) // v))
    if v > 1:
        room = interleave_room(per_stage)
        if room < v:
            raise CalcError("interleave", f"at most {room}: every model chunk needs a layer "
                            "(the first and the last stage may give one chunk to the embedding or the output layer)",
                            v)
    if c > 1 and m.attention not in FLASH:
        raise CalcError("context_parallel", "1 with standard attention (ring attention needs a fused, flash kernel)",
                        c)
    check_split(tensor=t, context=c, sequence_parallel=par.sequence_parallel, seq_len=m.seq_len)
    if par.zero_group is not None:
        if par.zero == 0:
            raise CalcError("zero_group", "unset with zero 0 (hybrid sharding shards with ZeRO 1-3)", par.zero_group)
        if d % par.zero_group:
            raise CalcError("zero_group", f"a divisor of data_parallel ({d})", par.zero_group)
    return mbs


def engine_layout_rule(engine: str, stage_layers: tuple[int, ...], interleave: int) -> CalcError | None:
    """The rule of ``engine`` that layers per stage ``stage_layers`` with ``interleave`` model chunks per stage break,
    as the :class:`CalcError` to raise; None when the engine can build that layout.

    ``megatron-2021`` (Megatron-LM of 2021, the SC21 runs) builds only even layouts: ``ParallelTransformer``
    asserts that the layers divide by the pipeline stages, gives every chunk ``l/(p·v)`` layers, and
    ``validate_args`` admits the interleaved schedule only with more than two stages. (The current engine takes any
    layout through ``--pipeline-model-parallel-layout``, and two stages when the sends overlap; DeepSpeed has no
    chunks, which :func:`check_combination` refuses on its own.) Source: NVIDIA/Megatron-LM commit cb5e611d74
    (August 2021), ``megatron/arguments.py`` (``validate_args``) and ``megatron/model/transformer.py``
    (``ParallelTransformer.__init__``).

    >>> str(engine_layout_rule("megatron-2021", (18, 18), 2))
    'interleave must be 1 with pipeline_engine megatron-2021 unless pipeline_parallel > 2, got 2'
    >>> str(engine_layout_rule("megatron-2021", (9, 9, 9, 9), 2))
    'interleave must be a divisor of the layers per stage (9) with pipeline_engine megatron-2021, got 2'
    >>> str(engine_layout_rule("megatron-2021", (7, 8, 8, 7), 1)), engine_layout_rule("megatron", (7, 8, 8, 7), 2)
    ('stage_layers must be the same layers on every stage with pipeline_engine megatron-2021, got [7, 8, 8, 7]', None)
    """
    if engine != "megatron-2021":
        return None
    p, n = len(stage_layers), stage_layers[0]
    if any(k != n for k in stage_layers):
        return CalcError("stage_layers", "the same layers on every stage with pipeline_engine megatron-2021",
                         list(stage_layers))
    if interleave > 1 and p <= 2:
        return CalcError("interleave", "1 with pipeline_engine megatron-2021 unless pipeline_parallel > 2", interleave)
    if n % interleave:
        return CalcError("interleave", f"a divisor of the layers per stage ({n}) with pipeline_engine megatron-2021",
                         interleave)
    return None


@lru_cache(maxsize=1024)
def interleave_room(stage_layers: tuple[int, ...]) -> int:
    """The most model chunks per stage that these layers per stage admit.

    Every chunk holds a layer, except that the first stage's first chunk may hold only the embedding
    and the last stage's last chunk only the output layer (Dubey et al. 2024 §3.3.2).

    >>> interleave_room((7, 8, 8, 7)), interleave_room((12,))
    (8, 13)
    """
    p = len(stage_layers)
    return min(n + (1 if s in (0, p - 1) else 0) for s, n in enumerate(stage_layers))


# ---------------------------------------------------------------------------- the workload


class Workload:
    """What stays fixed while the split changes: model, batch, cluster, precision; with caches.

    Build it with :func:`workload`; :func:`estimate` and :func:`plan` take it with a
    :class:`Parallel` and a microbatch size.
    """

    __slots__ = ("m", "hw", "prec", "global_batch", "tokens", "fp8", "peak", "gather_bytes", "lp", "lpm", "model_flops",
                 "hardware_flops", "_fp8", "_contended_fp8",
                 "final_norm", "_layers", "_kernels", "_heads", "_acts", "_links", "_arrangements", "_collectives",
                 "_gemms", "_contended", "_contended_gemms", "_slowdowns", "_works", "_model_parallel",
                 "_data_parallel", "_states", "_stage_acts", "_floors", "_most_layers")

    def __init__(self, m: Model, hw: Hardware, prec: Precision, global_batch: int, tokens: float | None,
                 fp8: bool = False) -> None:
        self.m, self.hw, self.prec, self.global_batch, self.tokens, self.fp8 = m, hw, prec, global_batch, tokens, fp8
        self.lp = layer_params(m)
        self.lpm = layer_params(m, moe=True)
        self.model_flops = training_flops(m, global_batch, "none").model_flops
        self.hardware_flops = {r: training_flops(m, global_batch, r).hardware_flops for r in RECOMPUTE}
        self.final_norm = m.hidden * (2 if m.biases else 1)
        self._layers: dict[tuple, LayerWork] = {}
        self._kernels: dict[tuple, tuple[float, ...]] = {}  # a layer's kernel times, whatever its recomputation
        self._heads: dict[tuple, float] = {}
        self._acts: dict[tuple, tuple[float, float, float]] = {}
        self._links: dict[tuple, Link] = {}
        self._arrangements: dict[tuple, Arrangement] = {}
        self._collectives: dict[tuple, float] = {}
        self._gemms: dict[tuple, float] = {}
        gpu = hw.gpu
        # The same GPU while a collective runs beside the compute: NCCL holds comm_sms SMs and streams its
        # data through HBM (read and written once per byte on the wire).
        free = gpu.sms - gpu.comm_sms
        self._contended = replace(hw, gpu=replace(gpu, sms=free), flops_per_gpu=hw.flops_per_gpu * free / gpu.sms,
                                  hbm_bandwidth=hw.hbm_bandwidth - 2 * hw.inter_node_bandwidth)
        self._contended_gemms: dict[tuple, float] = {}  # GEMM times by shape on the contended GPU
        # FP8 (Transformer Engine): the linear GEMMs on the fp8 tensor cores, alone and beside a collective, each
        # with its memo; the MFU against the fp8 peak (as NVIDIA reports it); the weights gathered in fp8 (fp8_params)
        self._fp8 = self._contended_fp8 = None
        self.peak, self.gather_bytes = hw.flops_per_gpu, prec.param_bytes
        if fp8:
            self._fp8, self._contended_fp8 = (fp8_hardware(hw), {}), (fp8_hardware(self._contended), {})
            self.peak, self.gather_bytes = self._fp8[0].flops_per_gpu, FP8_PARAM_BYTES
        self._slowdowns: dict[tuple, float] = {}
        # Parts of a stage's cost that do not change with every axis of the split (the search varies ZeRO,
        # interleaving and the microbatch size around them): what a stage's layers compute per microbatch,
        # its model-parallel transfers, and its data-parallel transfers and optimizer step.
        self._works: dict[tuple, _MicrobatchWork] = {}
        self._model_parallel: dict[tuple, tuple] = {}
        self._data_parallel: dict[tuple, _DataParallel] = {}
        self._states: dict[tuple, tuple[float, float, float, float]] = {}
        self._stage_acts: dict[tuple, tuple[float, float, float, float]] = {}
        self._floors: dict[tuple, float] = {}  # step_floor's per-layer seconds
        self._most_layers: dict[tuple, int] = {}  # step_floor's most layers a stage holds, by (stages, stage split)

    def layer(self, micro: int, t: int, c: int, e: int, sp: bool, recompute: str, moe: bool) -> LayerWork:
        """Compute of one layer for one microbatch on one device (cached)."""
        key = (micro, t, c, e, sp, recompute, moe)
        if key not in self._layers:
            self._layers[key] = recomputed(self.kernels(False, micro, t, c, e, sp, moe), recompute)
        return self._layers[key]

    def kernels(self, contended: bool, micro: int, t: int, c: int, e: int, sp: bool, moe: bool) -> tuple[float, ...]:
        """:func:`calc.work.layer_kernels` of one layer, on this GPU or (``contended``) on the one a collective
        shares (cached: the same whatever the recomputation)."""
        key = (contended, micro, t, c, e, sp, moe)
        got = self._kernels.get(key)
        if got is None:
            hw, memo = (self._contended, self._contended_gemms) if contended else (self.hw, self._gemms)
            got = self._kernels[key] = layer_kernels(self.m, hw, micro, t, c, e, sp, self.m.attention, moe,
                                                     self.prec.activation_bytes, memo,
                                                     self._contended_fp8 if contended else self._fp8)
        return got

    def slowdown(self, micro: int, t: int, c: int, e: int, sp: bool, recompute: str, moe: bool) -> float:
        """How much longer a layer's compute takes while a collective overlaps it (a fraction; cached).

        The layer is timed again on the GPU with ``comm_sms`` fewer SMs and the HBM bandwidth the
        transfer takes (:mod:`calc.kernels` re-does the tile and wave quantization, so a GEMM that
        filled one wave exactly may need two, as Nsight shows). 0 with ``compute_efficiency``.
        """
        key = (micro, t, c, e, sp, recompute, moe)
        if key not in self._slowdowns:
            if self.hw.compute_efficiency is not None:
                self._slowdowns[key] = 0.0
            else:
                busy = recomputed(self.kernels(True, micro, t, c, e, sp, moe), recompute)
                alone = self.layer(micro, t, c, e, sp, recompute, moe).total_s
                self._slowdowns[key] = max(0.0, busy.total_s / alone - 1)
        return self._slowdowns[key]

    def head(self, micro: int, t: int, c: int) -> float:
        """Output layer and loss for one microbatch (cached)."""
        key = (micro, t, c)
        if key not in self._heads:
            self._heads[key] = head_work(self.m, self.hw, micro, t, c, self.prec.activation_bytes)
        return self._heads[key]

    def activations(self, micro: int, t: int, sp: bool, c: int, recompute: str) -> tuple[float, float, float]:
        """(dense layer, MoE layer, full-recompute working set) activation bytes (cached)."""
        key = (micro, t, sp, c, recompute)
        if key not in self._acts:
            m = self.m
            kw = dict(tensor_parallel=t, sequence_parallel=sp, kv_heads=max(m.kv_heads, t), ffn_hidden=m.ffn_hidden,
                      gated_mlp=m.gated_mlp, context_parallel=c, activation_bytes=self.prec.activation_bytes,
                      attention=m.attention, dropout=m.dropout, fp8=self.fp8)
            moe_k = m.top_k if m.experts > 1 else 0
            dense = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute=recompute, **kw)
            moe = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute=recompute,
                                         moe_top_k=moe_k, **kw) if moe_k else 0.0
            working = 0.0
            if recompute == "full":
                working = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute="none",
                                                 moe_top_k=moe_k, **kw)
            self._acts[key] = (dense, moe, working)
        return self._acts[key]

    def stage_activations(self, par: Parallel, micro: int, sh: "StageShape") -> tuple[float, float, float, float]:
        """A stage's activation bytes before the microbatches in flight multiply them (:func:`_stage_activations`;
        cached: the same whatever the data-parallel degree, ZeRO stage, interleaving and microbatches per step)."""
        n_rec = recomputed_layers(par, sh.layers, sh.stage == 0)
        key = (micro, par.tensor, par.sequence_parallel and par.tensor > 1, par.context, par.recompute, n_rec,
               sh.layers, sh.moe_layers)
        got = self._stage_acts.get(key)
        if got is None:
            got = self._stage_acts[key] = _stage_activations(self, par, micro, sh, n_rec)
        return got

    def link(self, axes: tuple[tuple[int, int], ...]) -> Link:
        """The network link of the group spanned by ``axes`` ((stride, size) pairs; cached)."""
        if axes not in self._links:
            self._links[axes] = group_link(self.hw, axes)
        return self._links[axes]

    def collective(self, op: str, axes: tuple[tuple[int, int], ...], n: float) -> float:
        """Seconds of one ``op`` of ``n`` bytes over the group spanned by ``axes`` (cached)."""
        key = (op, axes, n)
        if key not in self._collectives:
            self._collectives[key] = collective_time(op, self.link(axes), n)[0]
        return self._collectives[key]

    def arrangement(self, par: Parallel) -> "Arrangement":
        """The layout of ``par`` and what each kind of stage holds (cached per layout; the interleaving
        changes it only when which layers are MoE depends on where each chunk starts)."""
        v = par.interleave if self.m.experts > 1 and self.m.moe_layer_freq > 1 else 1
        key = (par.tensor, par.expert, par.context, par.pipeline, v, par.stage_layers, par.rank_order)
        if key not in self._arrangements:
            self._arrangements[key] = _arrange(self, par)
        return self._arrangements[key]

    def most_layers(self, par: Parallel) -> int:
        """The most layers one stage of ``par`` holds (cached by stages and layer split, a cheaper key than
        :meth:`arrangement`'s: :func:`step_floor` asks it for every split a search weighs)."""
        key = (par.pipeline, par.stage_layers)
        most = self._most_layers.get(key)
        if most is None:
            most = self._most_layers[key] = self.arrangement(par).most_layers
        return most

    def microbatch_work(self, par: Parallel, micro: int, n_den: int, n_moe: int, last: bool,
                        n_rec: int) -> "_MicrobatchWork":
        """A stage's compute for one microbatch (:func:`_microbatch_work`; cached: the same whatever the
        data-parallel degree, ZeRO stage, interleaving and schedule switches)."""
        key = (micro, par.tensor, par.context, par.expert, par.sequence_parallel and par.tensor > 1, par.recompute,
               n_den, n_moe, last, n_rec)
        got = self._works.get(key)
        if got is None:
            got = self._works[key] = _microbatch_work(self, par, micro, n_den, n_moe, last, n_rec)
        return got

    def model_parallel(self, par: Parallel, micro: int, lay: "Layout", n_s: int, n_moe: int,
                       last: bool, n_rec: int) -> tuple:
        """A stage's compute and (TP, CP, EP) seconds per microbatch (:func:`_microbatch_work`,
        :func:`_model_parallel_times`): ``(work, tp, cp, ep)``. Cached: the same whatever the data-parallel degree,
        ZeRO stage, pipeline degree and interleaving (the rank strides they use follow from the other degrees)."""
        sp = par.sequence_parallel and par.tensor > 1
        key = (micro, par.tensor, par.context, par.expert, sp, par.recompute, par.tp_comm_overlap, n_s, n_moe, last,
               n_rec)
        got = self._model_parallel.get(key)
        if got is None:
            mw = self.microbatch_work(par, micro, n_s - n_moe, n_moe, last, n_rec)
            got = self._model_parallel[key] = (mw, *_model_parallel_times(self, par, micro, lay, n_s, n_moe, mw, n_rec))
        return got

    def model_states(self, par: Parallel, sh: "StageShape") -> tuple[float, float, float, float]:
        """A stage's weights, gradients, optimizer states and ZeRO-3 buffers, bytes (:func:`_model_states`;
        cached: the same whatever the microbatch, interleaving, recomputation and sequence parallelism)."""
        key = (par.zero, par.data, par.zero_group, par.context, par.expert, sh.dense_params, sh.expert_params,
               sh.largest_layer_params, par.zero3_gather, par.tensor, sh.stage in (0, par.pipeline - 1),
               par.pipeline_engine)
        got = self._states.get(key)
        if got is None:
            got = self._states[key] = _model_states(self, par, sh)
        return got

    def data_parallel(self, par: Parallel, lay: "Layout", sh: "StageShape") -> "_DataParallel":
        """A stage's data-parallel transfers and optimizer step (:func:`_data_parallel`; cached: the same
        whatever the microbatch, interleaving and sequence parallelism)."""
        n_rec = recomputed_layers(par, sh.layers, sh.stage == 0) if par.recompute == "full" else 0
        key = (par.zero, par.zero3_gather, n_rec, par.data, par.zero_group, par.tensor, par.pipeline, par.context,
               par.expert, sh.layers, sh.dense_params, sh.expert_params, par.pipeline_engine, par.rank_order,
               whole_buffer(par))
        got = self._data_parallel.get(key)
        if got is None:
            got = self._data_parallel[key] = _data_parallel(self, par, lay, sh, n_rec)
        return got


#: Bytes of one weight element gathered with FP8 weights (NeMo's ``fp8_params``, Megatron-Core's
#: ``--fp8-param-gather``, which needs the distributed optimizer): ZeRO 1-3 all-gather the fp8 copy. On the device the
#: fp8 weight and the transpose Transformer Engine caches for the backward GEMMs take the 16-bit weight's two bytes.
FP8_PARAM_BYTES = 1
#: Without ZeRO the weights stay 16-bit and Transformer Engine keeps an fp8 copy and its transpose beside them
#: (``weight_fp8``, ``weight_t_fp8``, made once per step): two more bytes per weight. Source: NVIDIA/
#: TransformerEngine ``pytorch/module/base.py`` (``get_fp8_workspace``), TE 1.x.
FP8_WEIGHT_COPY_BYTES = 2


def workload(m: Model, global_batch: int, hw: Hardware, precision: str = "bf16-adam",
             tokens: float | None = None, fp8: bool = False) -> Workload:
    """Check the batch, precision and token count once for every split that follows.

    ``fp8``: the linear layers' GEMMs in FP8 as Transformer Engine runs them (:func:`calc.work.layer_kernels`),
    their saved inputs in fp8 (:func:`calc.memory.layer_activation_bytes`), the weights gathered in fp8
    (:data:`FP8_PARAM_BYTES`); needs a 16-bit recipe and a profile with fp8 tensor cores.

    >>> from calc.model import model
    >>> w = workload(model(32, 4096, 32, 128256, 8192), 512, hardware(64, profile_name="h100-sxm5-80gb"))
    >>> w.global_batch, w.prec.name
    (512, 'bf16-adam')
    """
    rec = _precision(precision)
    gb = count("global_batch", global_batch)
    tok = None if tokens is None else real("tokens", tokens, maximum=MAX_TOKENS, unit="tokens")
    if m.attention == "flash3" and hw.gpu.flash3_efficiency is None:
        raise CalcError("attention", f"flash or standard on {hw.gpu.name} (FlashAttention-3 needs a Hopper or "
                        "Blackwell GPU)", m.attention)
    if fp8 and rec.activation_bytes != 2:
        raise CalcError("fp8", f"false with precision {rec.name} (FP8 training casts 16-bit activations)", True)
    return Workload(m, hw, rec, gb, tok, bool(fp8))


# ---------------------------------------------------------------------------- 1. layout


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the layers and the ranks go."""

    stage_layers: tuple[int, ...]  #: layers per stage
    strides: dict  #: axis → rank stride (rank = Σ coordinate × stride)
    uneven: str  #: "" when every stage holds as many layers, else a sentence


def _chunk_sizes(n: int, v: int, first: bool) -> list[int]:
    """``n`` layers in ``v`` chunks differing by at most one; the first stage's small chunks come first."""
    base, extra = divmod(n, v)
    sizes = [base + 1] * extra + [base] * (v - extra)
    return sizes[::-1] if first else sizes


def layout(m: Model, par: Parallel, order: tuple[str, ...] | None = None) -> Layout:
    """Layers per stage and rank strides (``order``, outermost first; by default ``par.rank_order``'s).

    Without ``stage_layers`` the split is :func:`calc.pipeline.stage_layers`'s.

    >>> from calc.model import model
    >>> layout(model(30, 64, 4, 100, 16), parallel(pipeline=4)).stage_layers
    (7, 7, 8, 8)
    """
    p = par.pipeline
    per_stage = par.stage_layers or _even_stage_layers(m.layers, p)
    t, e, c = par.tensor, par.expert, par.context
    sizes = {"tensor": t, "context": c, "expert": e, "data": par.data, "pipeline": p}
    strides, stride = {}, 1
    for axis in reversed(order or RANK_ORDERS[par.rank_order]):  # innermost first: each axis strides over every axis inside it
        strides[axis] = stride
        stride *= sizes[axis]
    uneven = ""
    if len(set(per_stage)) > 1:
        uneven = "layers per stage: " + ", ".join(str(n) for n in per_stage)
    return Layout(tuple(per_stage), strides, uneven)


def chunk_ranges(stage_layers: tuple[int, ...], v: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per stage, the (start, stop) layer range of each of its ``v`` model chunks.

    Layers go to chunks in virtual-stage order (chunk ``k`` of stage ``s`` is virtual stage
    ``k·p + s``), so with ``v = 1`` stage ``s`` holds a contiguous range.

    >>> chunk_ranges((4, 4), 2)
    (((0, 2), (4, 6)), ((2, 4), (6, 8)))
    """
    p = len(stage_layers)
    sizes = [_chunk_sizes(n, v, s == 0) for s, n in enumerate(stage_layers)]
    chunks: list[list[tuple[int, int]]] = [[] for _ in range(p)]
    start = 0
    for k in range(v):
        for s in range(p):
            chunks[s].append((start, start + sizes[s][k]))
            start += sizes[s][k]
    return tuple(tuple(x) for x in chunks)


@dataclass(frozen=True, slots=True)
class StageShape:
    """What one device of a stage holds, whatever the batch, ZeRO stage or recomputation."""

    stage: int
    layers: int
    moe_layers: int
    dense_params: float  #: weights outside the experts, after TP and PP, before ZeRO
    expert_params: float  #: this device's experts' weights
    largest_layer_params: float  #: the largest layer's weights on this device (what ZeRO-3 gathers at once)


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A layout, what each kind of stage holds, and the stages that stand for the others."""

    layout: Layout
    moe_layers: tuple[int, ...]  #: per stage
    representative: tuple[int, ...]  #: per stage, the earliest stage of the same kind (same time; more in flight)
    per_layer: tuple[float, float, float, float]  #: dense layer, MoE layer's attention, its experts, largest layer
    ends: tuple[float, float]  #: weights of the first stage's embedding and of the last stage's norm and head
    kinds: tuple[int, ...]  #: the representative stages, ascending: the stages an estimate costs
    most_layers: int  #: the most layers a stage holds
    #: the kinds whose memory can be the largest, ascending: a middle stage with the first stage's layers and MoE
    #: layers never needs more than the first, which holds the same and the embedding, with at least as many
    #: microbatches in flight (term by term, so its sum too; a tie goes to the earlier stage)
    memory_kinds: tuple[int, ...]
    _shapes: dict  #: stage → StageShape, made when first asked for

    def shape(self, s: int) -> StageShape:
        """What stage ``s`` holds."""
        if s not in self._shapes:
            self._shapes[s] = self._make(s)
        return self._shapes[s]

    def _make(self, s: int) -> StageShape:
        dense_layer, attn_moe, expert, largest = self.per_layer
        n_s, n_moe, p = self.layout.stage_layers[s], self.moe_layers[s], len(self.moe_layers)
        dense = (n_s - n_moe) * dense_layer + n_moe * attn_moe + (self.ends[0] if s == 0 else 0.0) + \
            (self.ends[1] if s == p - 1 else 0.0)
        return StageShape(s, n_s, n_moe, dense, n_moe * expert, largest)


def _arrange(w: Workload, par: Parallel) -> Arrangement:
    m, lp, lpm = w.m, w.lp, w.lpm
    t, e, p = par.tensor, par.expert, par.pipeline
    lay = layout(m, par)
    kv_extra = 0.0
    if t > m.kv_heads:  # K and V of one head replicated on every rank instead of h_kv/t
        kv_extra = 2 * m.hidden * (kv_hidden_per_rank(m, t) - m.kv_hidden / t)
    attn_dense = lp.attention_sharded / t + kv_extra + lp.replicated
    mlp_dense = lp.mlp_sharded / t + lp.mlp_replicated
    attn_moe = lpm.attention_sharded / t + kv_extra + lpm.replicated
    expert_mlp = lpm.mlp_sharded / t + lpm.mlp_replicated
    local = m.experts // e
    largest = max(attn_dense + mlp_dense, attn_moe + local * expert_mlp if m.experts > 1 else 0.0)
    vocab_t = -(-m.vocab // t)
    first = vocab_t * m.hidden + (m.seq_len * m.hidden if m.learned_positions else 0)
    last = w.final_norm + (vocab_t * m.hidden if (not m.tied_embeddings or p > 1) else 0)
    if m.experts == 1:
        moe = (0,) * p
    elif m.moe_layer_freq == 1:
        moe = lay.stage_layers
    else:  # which layers are MoE depends on where each chunk starts
        moe = tuple(sum(m.moe_layers_in(a, b) for a, b in ranges)
                    for ranges in chunk_ranges(lay.stage_layers, par.interleave))
    first_of: dict[tuple, int] = {}
    rep = tuple(first_of.setdefault((lay.stage_layers[s], moe[s], s == 0, s == p - 1), s) for s in range(p))
    kinds = tuple(sorted(set(rep)))
    heavy = tuple(s for s in kinds if s in (0, p - 1) or (lay.stage_layers[s], moe[s]) != (lay.stage_layers[0], moe[0]))
    return Arrangement(lay, moe, rep, (attn_dense + mlp_dense, attn_moe, local * expert_mlp, largest),
                       (first, last), kinds, max(lay.stage_layers), heavy, {})


# ---------------------------------------------------------------------------- 2. stage cost


@dataclass(frozen=True, slots=True)
class StageCost:
    """Memory and time of one device of one pipeline stage (bytes; seconds)."""

    stage: int
    layers: int
    moe_layers: int
    dense_params: float  #: weights held before ZeRO (after TP, PP, EP), outside the experts
    expert_params: float
    params_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    buffers_bytes: float  #: ZeRO-3's gathered layers
    #: one microbatch: forward, backward, recomputation, the head on the last stage, and the gradients' accumulation
    #: outside the GEMMs (:func:`accumulation_bytes`)
    compute_s: float
    tensor_s: float  #: exposed TP communication, one microbatch
    context_s: float  #: exposed CP communication, one microbatch
    expert_s: float  #: EP all-to-alls, one microbatch
    pipeline_s: float  #: sends to and from the neighbouring stages, one microbatch
    zero_s: float  #: exposed ZeRO-2/3 per-microbatch communication
    time_per_microbatch_s: float
    grad_reduce_s: float  #: data-parallel gradient reduction after the last microbatch (whole)
    grad_reduce_exposed_s: float
    optimizer_s: float
    param_gather_exposed_s: float  #: ZeRO 1-2's all-gather of the updated weights, exposed part
    tail_s: float  #: after the pipeline drains: exposed reduction + optimizer + exposed gather

    @property
    def memory_bytes(self) -> float:
        """Everything but the reserve."""
        return self.params_bytes + self.grads_bytes + self.optimizer_bytes + self.activations_bytes + \
            self.buffers_bytes


def _overlapped(comm: float, window: float, slowdown: float) -> float:
    """Seconds a transfer adds when it overlaps ``window`` seconds of compute.

    ``max(0, comm − window)`` is exposed, and while it overlaps, the compute runs slower:
    the collective's kernels hold ``comm_sms`` of the GPU's SMs (NCCL runs one thread block
    per channel) and stream its data through HBM, so ``min(comm, window) × slowdown`` is
    added (:meth:`Workload.slowdown`). Source: NCCL's channels (``NCCL_MAX_NCHANNELS``) and the
    tail effect measured with Nsight Systems on an H100 (NVIDIA developer forum, "Compute-
    Communication Overlap Causes Severe GEMM Performance Degradation", 2025).

    >>> _overlapped(1.0, 3.0, 0.2), _overlapped(3.0, 1.0, 0.2)
    (0.2, 2.2)
    """
    return max(0.0, comm - window) + min(comm, window) * slowdown


#: Gradients are reduced in buckets of at least this many parameters (or 10^6 × the DP size),
#: Megatron-Core's ``DistributedDataParallelConfig.bucket_size`` default; each bucket is one call.
DP_BUCKET_PARAMS = 40_000_000


def whole_buffer(par: Parallel) -> bool:
    """Megatron-LM moves the whole gradient buffer in one call (and, with the distributed optimizer, gathers the
    updated weights in one) when the reduction does not overlap the backward pass: buckets exist only to overlap.
    Source: NVIDIA/Megatron-LM ``megatron/core/distributed/distributed_data_parallel.py`` ("Set bucket_size to
    infinity if overlap_grad_reduce is False", since 2023); before Megatron-Core, ``megatron/model/distributed.py``
    (2021: ``allreduce_gradients`` all-reduces each contiguous gradient buffer, one per data type, in one call).
    DeepSpeed and PyTorch FSDP bucket by their own sizes (the default buckets here)."""
    return par.pipeline_engine in ("megatron", "megatron-2021") and not par.overlap_grad_reduce and par.zero <= 1


def dp_calls(params: float, axes: tuple[tuple[int, int], ...], layers: int = 0, whole: bool = False) -> int:
    """Calls that move a stage's weights or gradients over a DP group: one per layer (ZeRO-2/3,
    ``layers > 0``); one for the whole buffer (``whole``: :func:`whole_buffer`); else one per bucket of
    ``max(40M, 10^6·g)`` parameters.

    >>> dp_calls(7e9, ((1, 8),)), dp_calls(7e9, ((1, 8),), layers=32), dp_calls(7e9, ((1, 8),), whole=True)
    (175, 32, 1)
    """
    if layers:
        return layers
    if whole:
        return 1
    g = 1
    for _, n in axes:
        g *= n
    return max(1, -(-int(params) // max(DP_BUCKET_PARAMS, 1_000_000 * g)))


def layer_tensors(m: Model) -> int:
    """Weight tensors of one layer: Q/K/V (one fused tensor), output, the MLP's two (three gated) matrices and
    two norms, each with its bias when the model has biases.

    >>> from calc.model import model
    >>> layer_tensors(model(2, 64, 4, 100, 16, biases=True)), layer_tensors(model(2, 64, 4, 100, 16, gated_mlp=True))
    (12, 7)
    """
    return (4 + (1 if m.gated_mlp else 0) + 2) * (2 if m.biases else 1)


def _dp_axes(lay: Layout, par: Parallel, expert: bool, part: str = "all") -> tuple[tuple[int, int], ...]:
    """The (stride, size) axes of a weight's data-parallel group: ``all`` the ranks its gradients are reduced over,
    data × context (× expert for a dense weight); the ``shard`` group its ZeRO states are sharded over, G consecutive
    data ranks (:func:`shard_degree`) × context (× expert); the ``replicate`` ranks holding the same shard, ``data/G``
    of them, ``G`` data ranks apart. Without hybrid sharding the shard group is all of them and nothing replicates.

    >>> from calc.model import model
    >>> par = parallel(data=16, tensor=2, zero=3, zero_group=4)
    >>> [_dp_axes(layout(model(4, 64, 4, 100, 16), par), par, False, k) for k in ("all", "shard", "replicate")]
    [((2, 16),), ((2, 4),), ((8, 4),)]
    """
    s_d, g = lay.strides["data"], shard_degree(par)
    if part == "replicate":
        axes = [(s_d * g, par.data // g)]
    else:
        axes = [(s_d, par.data if part == "all" else g), (lay.strides["context"], par.context)]
        if not expert:
            axes.append((lay.strides["expert"], par.expert))
    return tuple(a for a in axes if a[1] > 1) or ((1, 1),)


def _model_states(w: Workload, par: Parallel, sh: StageShape) -> tuple[float, float, float, float]:
    """(params, grads, optimizer, ZeRO-3 buffers) bytes of one device of stage ``sh``: each weight's states
    sharded over its data-parallel group from the ZeRO stage that shards them."""
    prec, c, e, z = w.prec, par.context, par.expert, par.zero
    n_dp, n_edp = shard_degree(par) * c * e, shard_degree(par) * c
    dense, experts = sh.dense_params, sh.expert_params
    pb = prec.param_bytes
    params_b = pb * (dense / (n_dp if z >= 3 else 1) + experts / (n_edp if z >= 3 else 1))
    grads_b = prec.grad_bytes * (dense / (n_dp if z >= 2 else 1) + experts / (n_edp if z >= 2 else 1))
    if fp32_accumulation(w, par):  # the bf16 gradients the backward pass writes stay beside the fp32 accumulators
        grads_b += pb * (dense + experts)
    if w.fp8 and z == 0:
        params_b += FP8_WEIGHT_COPY_BYTES * (dense + experts)
    opt_b = prec.optimizer_bytes * (dense / (n_dp if z >= 1 else 1) + experts / (n_edp if z >= 1 else 1))
    buffers = 0.0
    if z >= 3:
        live = ZERO3_LIVE_LAYERS * sh.largest_layer_params
        if par.zero3_gather != "layer":  # DeepSpeed: at most max_live_parameters, or the largest tensor
            live = min(live, max(DS_MAX_LIVE_PARAMETERS, _largest_tensor(w.m, par, sh.stage)))
        buffers = live * pb
    return params_b, grads_b, opt_b, buffers


def _largest_tensor(m: Model, par: Parallel, stage: int) -> float:
    """Parameters of the largest weight tensor stage ``stage`` gathers under ZeRO-3 (after TP): the fused QKV, an
    MLP matrix, or the embedding and output head on the end stages."""
    t, h = par.tensor, m.hidden
    largest = max((h + 2 * m.kv_hidden) * h / t, m.ffn_hidden * h / t)
    if stage in (0, par.pipeline - 1):
        largest = max(largest, -(-m.vocab // t) * h)
    return largest


def _stage_activations(w: Workload, par: Parallel, micro: int, sh: StageShape,
                       n_rec: int) -> tuple[float, float, float, float]:
    """What :func:`_stage_memory` needs of a stage's activations that is the same however many microbatches are in
    flight: ``(one chunk of every layer, the working set of a recomputed layer, the embedding's dropout mask and the
    output layer's input and logits, each per microbatch in flight)``, bytes."""
    m, prec = w.m, w.prec
    t, c = par.tensor, par.context
    sp = par.sequence_parallel and t > 1
    # a recomputed layer keeps its input, the others everything (in proportion over dense and MoE layers);
    # one recomputed layer's whole activations live while it is recomputed
    acts = working = 0.0
    for mode, share in _layer_counts(par, sh.layers, n_rec):
        act_dense, act_moe, work = w.activations(micro, t, sp, c, mode)
        acts += share * ((sh.layers - sh.moe_layers) * act_dense + sh.moe_layers * act_moe)
        working = max(working, work)
    s_local = m.seq_len // c
    mask = s_local * micro * m.hidden / (t if sp else 1)  # the embedding's dropout mask
    head = prec.activation_bytes / 2 * 4 * s_local * micro * m.hidden / t * (1 + m.vocab / m.hidden)
    return acts, working, mask, head


def _stage_memory(w: Workload, par: Parallel, micro: int, mbs: int, sh: StageShape) -> tuple[float, ...]:
    """(params, grads, optimizer, activations, ZeRO-3 buffers) bytes of one device of stage ``sh``."""
    return _stage_terms(w, par.pipeline, par.interleave, mbs,
                        (sh, w.model_states(par, sh), w.stage_activations(par, micro, sh)))


#: :func:`calc.pipeline.in_flight_chunks`, cached: a search asks for the same few stages, microbatch counts and
#: interleavings for each of its thousands of configurations.
_in_flight_chunks = lru_cache(maxsize=4096)(in_flight_chunks)


def _stage_terms(w: Workload, p: int, v: int, mbs: int, part: tuple) -> tuple[float, ...]:
    """:func:`_stage_memory` of one of :func:`memory_parts`'s ``(shape, model states, activations)`` for ``p`` stages
    of ``v`` model chunks and ``mbs`` microbatches per step."""
    sh, (params_b, grads_b, opt_b, buffers), (layers, working, mask, head) = part
    chunks = _in_flight_chunks(sh.stage, p, mbs, v)
    acts = chunks / v * layers + working
    if sh.stage == 0 and w.m.dropout:  # the embedding's dropout mask, one per microbatch in flight
        acts += mask * -(-chunks // v)
    if sh.stage == p - 1:  # the output layer: its input and the logits (Korthikanti et al. 2022 §4.3)
        acts += head
    return params_b, grads_b, opt_b, acts, buffers


@dataclass(frozen=True, slots=True)
class _MicrobatchWork:
    """One stage's compute for one microbatch (seconds), as the communication terms need it."""

    compute: float  #: forward + backward + recompute (+ the output head on the last stage)
    backward: float  #: backward + recompute: what gradient reductions hide behind
    gemm: float  #: the GEMMs: what TP communication overlap hides behind
    attention_forward: float
    attention_backward: float
    slowdown: float  #: how much overlapped communication slows the kernels it runs beside


def _microbatch_work(w: Workload, par: Parallel, micro: int, n_den: int, n_moe: int, last: bool,
                     n_rec: int) -> _MicrobatchWork:
    """Sum the dense and MoE layers' :func:`calc.work.layer_work` of one stage for one microbatch; ``n_rec`` of
    its layers run ``par.recompute``'s mode, the others none (:func:`recomputed_layers`)."""
    t, c, e = par.tensor, par.context, par.expert
    sp = par.sequence_parallel and t > 1
    modes = _layer_counts(par, n_den + n_moe, n_rec)
    works = [(n * share, w.layer(micro, t, c, e, sp, mode, moe)) for mode, share in modes
             for n, moe in ((n_den, False), (n_moe, True)) if n]

    def total(f) -> float:
        return sum(n * f(lw) for n, lw in works)

    compute = total(lambda lw: lw.total_s) + (w.head(micro, t, c) if last else 0.0)
    if len(modes) == 1:
        slowdown = w.slowdown(micro, t, c, e, sp, modes[0][0], n_den == 0)
    else:  # each mode's slowdown, weighted by the time its layers take
        busy = [(n * lw.total_s, w.slowdown(micro, t, c, e, sp, mode, n_den == 0))
                for (mode, _), (n, lw) in zip([m for m in modes for k in (n_den, n_moe) if k], works)]
        slowdown = fsum(x * sd for x, sd in busy) / fsum(x for x, _ in busy)
    return _MicrobatchWork(compute, total(lambda lw: lw.backward_s + lw.recompute_s), total(lambda lw: lw.gemm_s),
                           total(lambda lw: lw.attention_forward_s), total(lambda lw: lw.attention_backward_s),
                           slowdown)


def _model_parallel_times(w: Workload, par: Parallel, micro: int, lay, n_s: int, n_moe: int,
                          mw: _MicrobatchWork, n_rec: int) -> tuple[float, float, float]:
    """(TP, CP, EP) seconds of one stage for one microbatch, what overlap leaves exposed included (the same
    whatever the pipeline degree and interleaving: :func:`_pipeline_time` adds the pipeline's)."""
    m, ab = w.m, w.prec.activation_bytes
    t, c, e = par.tensor, par.context, par.expert
    sp = par.sequence_parallel and t > 1
    strides = lay.strides
    s_local = m.seq_len // c
    act_payload = micro * s_local * m.hidden * ab
    tp_s = cp_s = ep_s = 0.0
    if t > 1:
        tp = ((1, t),)
        one = (w.collective("all-gather", tp, act_payload) + w.collective("reduce-scatter", tp, act_payload)) \
            if sp else w.collective("all-reduce", tp, act_payload)
        calls = _calls(TP_CALLS, par, n_s, n_s, n_rec)
        tp_s = calls * one
        if sp and w.fp8:  # the forward's all-gathers of the norms' outputs carry fp8 (Transformer Engine)
            forward = calls - TP_BACKWARD_CALLS * n_s
            tp_s -= forward * (w.collective("all-gather", tp, act_payload) - w.collective("all-gather", tp,
                                                                                        act_payload / ab))
        if par.tp_comm_overlap:
            tp_s = _overlapped(tp_s, mw.gemm, mw.slowdown)
        elif par.pipeline_engine == "megatron":  # :data:`TP_ASYNC_CALLS` behind the weight-gradient GEMMs
            hidden = TP_ASYNC_CALLS * n_s * (w.collective("reduce-scatter", tp, act_payload) if sp
                                             else w.collective("all-reduce", tp, act_payload))
            tp_s += _overlapped(hidden, mw.gemm * WGRAD_COLUMN_SHARE, mw.slowdown) - hidden
    if c > 1:  # ring attention: c − 1 exchanges per pass, each overlapping one step's attention kernel
        chunk = 2 * micro * s_local * kv_hidden_per_rank(m, t) * ab  # one rank's K and V
        step = w.collective("send-recv", ((strides["context"], c),), chunk)
        forwards = n_s + (n_rec if par.recompute == "full" else 0)
        cp_s = (c - 1) * (forwards * _overlapped(step, mw.attention_forward / n_s / c, mw.slowdown)
                          + n_s * _overlapped(2 * step, mw.attention_backward / n_s / c, mw.slowdown))  # dK/dV back
    if e > 1 and n_moe:
        payload = micro * s_local * m.hidden * m.top_k * ab / (t if sp else 1)
        ep_s = _calls(EP_CALLS, par, n_moe, n_s, n_rec) * w.collective("all-to-all", ((strides["expert"], e),),
                                                                          payload)
    return tp_s, cp_s, ep_s


def _pipeline_time(w: Workload, par: Parallel, micro: int, lay) -> float:
    """PP seconds of one stage for one microbatch: per model chunk, the activation goes on (received from the
    stage before) and its gradient comes back, in the engine's blocking transfers (:data:`PIPELINE_SENDS`); each
    rank sends its 1/t (Megatron's scatter/gather, §4.1; DeepSpeed's ``PartitionedTensor``)."""
    return PIPELINE_SENDS[par.pipeline_engine] * par.interleave * _pipeline_send(w, par, micro, lay)


def _pipeline_send(w: Workload, par: Parallel, micro: int, lay) -> float:
    """Seconds of one of :func:`_pipeline_time`'s transfers (0 without pipelining)."""
    p = par.pipeline
    if p == 1:
        return 0.0
    act_payload = micro * (w.m.seq_len // par.context) * w.m.hidden * w.prec.activation_bytes
    return w.collective("send-recv", ((lay.strides["pipeline"], p),), act_payload / par.tensor)


def fp32_accumulation(w: Workload, par: Parallel) -> bool:
    """True when the plan runs DeepSpeed's ``BF16_Optimizer``: DeepSpeed's engine, 16-bit weights with fp32
    gradients, and no ZeRO stage of DeepSpeed's own (0 or 1 here: the optimizer shards its fp32 master and Adam
    states itself). It accumulates each microbatch's gradients in fp32 (:data:`DS_BF16_ACCUMULATE_BYTES`), keeps the
    bf16 gradients beside them and all-reduces the fp32 gradients (``_bf16_reduce_grads``). Source: microsoft/DeepSpeed
    v0.6.5 ``runtime/engine.py`` (bf16 takes ``BF16_Optimizer`` without ZeRO), ``runtime/pipe/engine.py``
    (``_exec_reduce_grads``), ``runtime/bf16_optimizer.py``; BigScience tr11-176B-ml.slurm ("bf16 must use z0! it
    implements its own zero stage 1 equivalent")."""
    return par.pipeline_engine == "deepspeed" and par.zero <= 1 and w.prec.grad_bytes > w.prec.param_bytes


def _gradient_reduction(w: Workload, par: Parallel) -> str:
    """The collective that reduces the gradients at ZeRO 0-1: an all-reduce without ZeRO and under DeepSpeed's
    ``BF16_Optimizer`` (:func:`fp32_accumulation`), which shards its optimizer states itself; else a
    reduce-scatter onto each rank's shard."""
    return "all-reduce" if par.zero == 0 or fp32_accumulation(w, par) else "reduce-scatter"


def accumulation_bytes(w: Workload, par: Parallel) -> tuple[int, int]:
    """(HBM bytes per weight, kernels per weight tensor) each microbatch takes to add its gradients into the
    buffer the data-parallel reduction reads, outside the backward pass's own GEMMs.

    ``megatron``: Megatron-LM's gradient accumulation fusion (since February 2022), the weight-gradient GEMM
    accumulating in place: nothing. ``megatron-2021`` and ``deepspeed`` (at ZeRO 0-1): one ``add_`` per weight reads
    the new 16-bit gradient and reads and writes the accumulator, ``param_bytes + 2·grad_bytes``: Megatron-LM's
    ``LocalDDP`` hook ``param.main_grad.add_(param.grad.data)`` of 2021, PyTorch autograd's ``AccumulateGrad`` into
    ``param.grad`` under DeepSpeed's engine (the first microbatch of a step only stores its gradient there; the
    model counts every microbatch, one pass too many per step). DeepSpeed's ``BF16_Optimizer``
    (:func:`fp32_accumulation`): :data:`DS_BF16_ACCUMULATE_BYTES` in two kernels instead. ZeRO-2/3 reduce every
    microbatch and are costed there. Sources: NVIDIA/Megatron-LM ``megatron/model/distributed.py`` (2021) and commit
    83b1e42 ("gradient accumulation fusion", 2022-02-13); microsoft/DeepSpeed v0.5 ``runtime/pipe/engine.py``
    (``_exec_backward_pass``: ``torch.autograd.backward``, gradients zeroed only by the optimizer step).

    >>> from calc.model import model
    >>> w = workload(model(2, 64, 4, 100, 16), 8, hardware(8, profile_name="a100-sxm4-80gb"), "megatron-fp16")
    >>> accumulation_bytes(w, parallel(8)), accumulation_bytes(w, parallel(8, pipeline_engine="megatron-2021"))
    ((0, 0), (6, 1))
    """
    if fp32_accumulation(w, par):
        return DS_BF16_ACCUMULATE_BYTES, 2
    if par.pipeline_engine == "megatron" or par.zero >= 2:
        return 0, 0
    return w.prec.param_bytes + 2 * w.prec.grad_bytes, 1


def _accumulate_time(w: Workload, par: Parallel, sh: "StageShape") -> float:
    """Seconds per microbatch the stage takes to add its gradients into the accumulator (:func:`accumulation_bytes`)."""
    per_weight, kernels = accumulation_bytes(w, par)
    if not per_weight:
        return 0.0
    tensors = sh.layers * layer_tensors(w.m) + (1 if sh.stage in (0, par.pipeline - 1) else 0)
    return memory_time(w.hw, per_weight * (sh.dense_params + sh.expert_params), kernels * tensors)


def _over_dp(w: Workload, par: Parallel, lay, n_s: int) -> Callable[..., float]:
    """``over_dp(op, dense_bytes, expert_bytes, per_layer=False, part="shard")``: an ``op`` over part of each weight's
    DP group (:func:`_dp_axes`), in per-layer calls (ZeRO-2/3) or in gradient buckets (:func:`dp_calls`). Over the
    ``replicate`` ranks each call carries one shard of a call over the shard group: the shard group's calls, each of
    ``bytes / shard ranks``."""
    per_layer_calls = n_s * (layer_tensors(w.m) if par.zero3_gather != "layer" else 1)

    def over_dp(op: str, n_dense: float, n_expert: float, per_layer: bool = False, part: str = "shard",
                element_bytes: float | None = None) -> float:
        total = 0.0
        for expert, n in ((False, n_dense), (True, n_expert)):
            if n <= 0:
                continue
            axes = _dp_axes(lay, par, expert, "shard" if part == "replicate" else part)
            calls = dp_calls(n / (element_bytes or max(1, w.prec.param_bytes)) if not per_layer else 0, axes,
                             per_layer_calls if per_layer else 0, whole=whole_buffer(par))
            if part == "replicate":
                n, axes = n / w.link(axes).size, _dp_axes(lay, par, expert, part)
            one = w.collective(op, axes, n / calls)
            if per_layer and part == "shard":
                one += _blocking_copies(w, par, op, w.link(axes).size, n / calls)
            total += calls * one
        return total

    return over_dp


def list_copies(hw: Hardware, op: str, ranks: int, n: float) -> float:
    """Seconds one of DeepSpeed 2021's list collectives (``zero3_gather`` ``tensor-blocking``, :data:`ZERO3_GATHER`)
    adds to the NCCL call of ``n`` bytes over ``ranks`` ranks: one copy kernel per rank, launched one after another
    by the CPU (:data:`CPU_LAUNCH_S` each), or the copies' HBM traffic if that takes longer: an all-gather zeroes
    its ``n``-byte buffer and copies every chunk out (``3n``), a reduce-scatter copies every chunk in (``2n``).

    Added to the transfer, though PyTorch 1.8 launches an all-gather's copies after the collective (a reduce-scatter's
    before it), so the CPU could launch them while the transfer runs. Timed that way (``max(transfer + ranks ·
    kernel_overhead_s, ranks · CPU_LAUNCH_S)`` for an all-gather), ``python -m calc validate`` on 2026-12-06, 144
    runs: mean error 6.00 % -> 6.04 %; DeepSpeed's ZeRO-3 175B on 1536 GPUs +22.7 % -> +1.6 %, but on 768 GPUs
    -5.4 % -> -14.6 % and the 530B rows -15 to -17 % -> -18 to -26 %. The measured steps grow with the GPUs by
    more than that and less than the sum, so the sum stays.

    >>> from calc.hardware import hardware
    >>> hw = hardware(1536, profile_name="a100-sxm4-80gb")
    >>> round(list_copies(hw, "all-gather", 1536, 3e8) * 1e3, 2)  # 1536 launches of 5 us
    7.68
    """
    traffic = memory_time(hw, (3 if op == "all-gather" else 2) * n, 0)
    return max(ranks * CPU_LAUNCH_S, traffic)


def _blocking_copies(w: Workload, par: Parallel, op: str, ranks: int, n: float) -> float:
    """:func:`list_copies` of one ZeRO-3 call under ``zero3_gather`` ``tensor-blocking``; 0 otherwise."""
    blocking = par.zero == 3 and par.zero3_gather == "tensor-blocking"
    return list_copies(w.hw, op, ranks, n) if blocking else 0.0


@dataclass(frozen=True, slots=True)
class _DataParallel:
    """One stage's data-parallel transfers, whole (before any overlap), and its optimizer step (seconds)."""

    #: after the last microbatch: ZeRO 0-1's gradient all-reduce (reduce-scatter), with hybrid sharding (ZeRO 1-3) the
    #: all-reduce of each shard across the replicas too
    grad_reduce: float
    param_gather: float  #: ZeRO 1-2: the all-gather of the updated weights
    zero_reduce: float  #: ZeRO 2-3: the per-microbatch reduce-scatter of the gradients, by layer
    zero_gather: float  #: ZeRO-3: the per-microbatch all-gather of the weights, by layer
    zero_regather: float  #: ZeRO-3 gathering each tensor again in a recomputed forward
    optimizer: float


def _data_parallel(w: Workload, par: Parallel, lay, sh: StageShape, n_rec: int) -> _DataParallel:
    """What :func:`stage_cost` needs of a stage's DP group: each transfer over each weight's DP group, whole."""
    z, n_s, dense, experts = par.zero, sh.layers, sh.dense_params, sh.expert_params
    pb, gb = w.prec.param_bytes, w.prec.grad_bytes
    over_dp = _over_dp(w, par, lay, n_s)
    rs = ag = regather = reduce_s = gather = 0.0
    if z >= 2:
        rs = over_dp("reduce-scatter", gb * dense, gb * experts, per_layer=True)
    if z == 3:
        ag = over_dp("all-gather", w.gather_bytes * dense, w.gather_bytes * experts, per_layer=True)
        # DeepSpeed gathers again in each recomputed forward: the recomputed layers' share of the gathers
        regather = (ag if n_rec == n_s else ag * n_rec / n_s) if par.zero3_gather != "layer" else 0.0
    op = _gradient_reduction(w, par)
    if op == "all-reduce":  # ZeRO-0, or fp32 accumulators all-reduced whole
        reduce_s = over_dp(op, gb * dense, gb * experts, part="all")
    elif z == 1:
        reduce_s = over_dp(op, gb * dense, gb * experts)
    if replicas(par) > 1:  # hybrid: each shard all-reduced across the replicas, once a step
        reduce_s += over_dp("all-reduce", gb * dense, gb * experts, per_layer=z >= 2, part="replicate")
    if z in (1, 2):
        gather = over_dp("all-gather", w.gather_bytes * dense, w.gather_bytes * experts, element_bytes=w.gather_bytes)
    n_dp, n_edp = shard_degree(par) * par.context * par.expert, shard_degree(par) * par.context
    shard = dense / (n_dp if z >= 1 else 1) + experts / (n_edp if z >= 1 else 1)
    opt_s = optimizer_time(w.hw, shard, pb, gb, w.prec.optimizer_bytes)
    return _DataParallel(reduce_s, gather, rs, ag, regather, opt_s)


def _zero_time(par: Parallel, dp: _DataParallel, n_s: int, mw: _MicrobatchWork) -> float:
    """ZeRO-2/3's per-microbatch gradient reduce-scatter (and ZeRO-3's parameter gathers), exposed part."""
    z = par.zero
    if z < 2:
        return 0.0
    rs = dp.zero_reduce
    if z == 2:
        return _overlapped(rs, mw.backward, mw.slowdown)
    ag = dp.zero_gather
    if par.zero3_gather == "tensor-blocking":  # every gather waits for the device, and the compute for the gathers:
        # :data:`ZERO3_GATHER`
        return ZERO3_GATHERS * ag + dp.zero_regather + _overlapped(rs, mw.backward, mw.slowdown)
    # prefetched one layer ahead: the first layer's gather is exposed, the rest hide behind compute
    return ag / max(1, n_s) + _overlapped(ag, mw.compute - mw.backward, mw.slowdown) \
        + _overlapped(ag + dp.zero_regather + rs, mw.backward, mw.slowdown)


def _stage_pieces(w: Workload, par: Parallel, micro: int, arr: Arrangement, s: int) -> tuple:
    """(shape, work, TP, CP, EP, ZeRO, fp32 accumulation) of stage ``s`` for one microbatch (seconds): all of
    :func:`_microbatch_time` but the pipeline's sends."""
    sh = arr.shape(s)
    n_rec = recomputed_layers(par, sh.layers, s == 0)
    mw, tp_s, cp_s, ep_s = w.model_parallel(par, micro, arr.layout, sh.layers, sh.moe_layers, s == par.pipeline - 1,
                                            n_rec)
    z_s = _zero_time(par, w.data_parallel(par, arr.layout, sh), sh.layers, mw) if par.zero >= 2 else 0.0
    acc_s = _accumulate_time(w, par, sh)
    return sh, mw, tp_s, cp_s, ep_s, z_s, acc_s


def _microbatch_time(w: Workload, par: Parallel, micro: int, arr: Arrangement, s: int) -> tuple:
    """(shape, work, TP, CP, EP, PP, ZeRO, fp32 accumulation, total) of stage ``s`` for one microbatch (seconds)."""
    sh, mw, tp_s, cp_s, ep_s, z_s, acc_s = _stage_pieces(w, par, micro, arr, s)
    pp_s = _pipeline_time(w, par, micro, arr.layout)
    return sh, mw, tp_s, cp_s, ep_s, pp_s, z_s, acc_s, mw.compute + tp_s + cp_s + ep_s + pp_s + z_s + acc_s


def _stage_time_parts(w: Workload, par: Parallel, micro: int, arr: Arrangement, s: int) -> tuple:
    """What :func:`_microbatch_time`'s total is made of, apart from the interleaving: ``(compute + TP + CP + EP,
    ZeRO, fp32 accumulation, one pipeline transfer)`` seconds; the total is
    ``((first + sends·v·transfer) + ZeRO) + accumulation``, added in the order :func:`_microbatch_time` adds them."""
    _, mw, tp_s, cp_s, ep_s, z_s, acc_s = _stage_pieces(w, par, micro, arr, s)
    return mw.compute + tp_s + cp_s + ep_s, z_s, acc_s, _pipeline_send(w, par, micro, arr.layout)


def stage_cost(w: Workload, par: Parallel, micro: int, mbs: int, arr: Arrangement, s: int) -> StageCost:
    """Memory and time of stage ``s`` (the model's assumptions are in the module docstring).

    Per microbatch: compute, then each axis's exposed communication (:func:`_model_parallel_times`,
    :func:`_zero_time`); after the last microbatch: the gradient reduction, the optimizer step and
    ZeRO-1/2's parameter gather (the *tail*).
    """
    z = par.zero
    sh, mw, tp_s, cp_s, ep_s, pp_s, z_s, acc_s, t_mb = _microbatch_time(w, par, micro, arr, s)
    dp = w.data_parallel(par, arr.layout, sh)
    params_b, grads_b, opt_b, acts, buffers = _stage_memory(w, par, micro, mbs, sh)

    # after the last microbatch
    reduce_s = dp.grad_reduce
    reduce_exposed = gather_exposed = 0.0
    if reduce_s and not par.overlap_grad_reduce:
        reduce_exposed = reduce_s
    elif reduce_s and z >= 2:  # hybrid: the replicas' all-reduce queues behind the last backward's ZeRO transfers
        busy = dp.zero_reduce + (dp.zero_gather + dp.zero_regather if z == 3 else 0.0)
        reduce_exposed = max(0.0, _overlapped(busy + reduce_s, mw.backward, mw.slowdown)
                             - _overlapped(busy, mw.backward, mw.slowdown))
    elif reduce_s:
        reduce_exposed = _overlapped(reduce_s, mw.backward, mw.slowdown)
    if z in (1, 2):
        gather = dp.param_gather
        gather_exposed = _overlapped(gather, mw.compute - mw.backward, mw.slowdown) if par.overlap_param_gather \
            else gather
    opt_s = dp.optimizer
    tail = reduce_exposed + opt_s + gather_exposed
    return StageCost(s, sh.layers, sh.moe_layers, sh.dense_params, sh.expert_params, params_b, grads_b, opt_b, acts,
                     buffers, mw.compute + acc_s, tp_s, cp_s, ep_s, pp_s, z_s, t_mb, reduce_s, reduce_exposed, opt_s,
                     gather_exposed, tail)


# ---------------------------------------------------------------------------- 4. estimate


#: The terms of a training GPU's memory, ``(key, name)`` with ``DeviceMemory.<key>_bytes`` each: the one list
#: the device-memory results, the atlas's table and bars, and compare's rows are made from.
MEMORY_TERMS = (("params", "weights"), ("grads", "gradients"), ("optimizer", "optimizer states"),
                ("activations", "activations"), ("buffers", "ZeRO-3 gathered layers"),
                ("reserve", "reserve (CUDA context, NCCL, fragmentation)"))


def term_title(name: str) -> str:
    """A term's name as a heading: ``weights`` → ``Weights`` (``ZeRO-3 ...`` kept as it is)."""
    return name[:1].upper() + name[1:]


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Memory of one device of the most loaded stage (bytes; GB = 1e9 B, GiB = 2^30 B)."""

    params_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    model_states_bytes: float
    activations_bytes: float
    buffers_bytes: float  #: ZeRO-3's gathered weights (two layers; DeepSpeed: at most its live parameters)
    reserve_bytes: float  #: CUDA context, NCCL buffers, allocator fragmentation (``hardware.reserve``)
    total_bytes: float  #: every term, the reserve included
    total_gb: float  #: total_bytes / 1e9
    total_gib: float  #: total_bytes / 2^30
    capacity_bytes: float
    capacity_gib: float
    headroom_bytes: float  #: capacity − total (negative: does not fit)
    fits: bool
    binding_term: str  #: the largest term: params | grads | optimizer | activations | buffers
    stage: int  #: the most loaded stage


def binding_term(terms: tuple[float, ...]) -> str:
    """The largest of a stage's (params, grads, optimizer, activations, buffers) bytes, by name.

    >>> binding_term((1.0, 1.0, 6.0, 9.0, 0.0))
    'activations'
    """
    return max(zip(terms, _TERMS))[1]


def _device_memory(stage: int, terms: tuple[float, ...], hw: Hardware) -> DeviceMemory:
    params, grads, opt, acts, buffers = terms
    total = fsum(terms) + hw.reserve_bytes
    return DeviceMemory(params, grads, opt, params + grads + opt, acts, buffers, hw.reserve_bytes, total, total / GB,
                        total / GIB, hw.memory_bytes, hw.memory_bytes / GIB, hw.memory_bytes - total,
                        total <= hw.memory_bytes, binding_term(terms), stage)


@dataclass(frozen=True, slots=True)
class Estimate:
    """Step time and memory of one configuration: what a search ranks by."""

    micro_batch: int
    microbatches_per_step: int
    step_time_s: float
    compute_time_s: float  #: m × compute of the slowest stage per microbatch
    bubble_time_s: float  #: (Σ_s t_s − t_max)/v
    exposed_communication_s: float  #: m × exposed per-microbatch communication + exposed tail communication
    optimizer_time_s: float
    memory: DeviceMemory  #: the most loaded stage
    slowest_stage: int
    tail_stage: int  #: the stage whose tail (reduction, optimizer, gather) is longest
    stages: tuple[StageCost, ...]  #: the stages costed (every stage with ``every_stage``, else one per kind)


def memory(w: Workload, par: Parallel, micro_batch: int, microbatches: int | None = None) -> DeviceMemory:
    """Memory of the most loaded device of a split (the reserve included), without timing it.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> w = workload(llama, 512, hardware(64, profile_name="h100-sxm5-80gb"))
    >>> round(memory(w, parallel(data=8, tensor=8, zero=1, sequence_parallel=True), 1).total_gib, 2)
    12.16
    """
    _, stage, terms = memory_total(w, par, micro_batch, microbatches)
    return _device_memory(stage, terms, w.hw)


def memory_total(w: Workload, par: Parallel, micro_batch: int,
                 microbatches: int | None = None) -> tuple[float, int, tuple[float, ...]]:
    """``(total bytes, stage, terms)`` of :func:`memory`'s most loaded device, without the rest of its
    result: what a search that refuses most splits for memory needs. ``total`` is ``memory().total_bytes``
    (the reserve included); ``terms`` are its (params, grads, optimizer, activations, buffers) bytes.

    >>> from calc.model import model
    >>> w = workload(model(32, 4096, 32, 128256, 8192), 512, hardware(64, profile_name="h100-sxm5-80gb"))
    >>> par = parallel(data=8, tensor=8, zero=1)
    >>> memory_total(w, par, 1)[0] == memory(w, par, 1).total_bytes
    True
    """
    mbs = microbatches or check_combination(w.m, micro_batch, w.global_batch, w.hw, par)
    return heaviest_stage(w, par.pipeline, par.interleave, mbs, memory_parts(w, par, micro_batch))


def shared_by_interleavings(w: Workload, par: Parallel) -> bool:
    """True when :func:`memory_parts` and :func:`time_parts` of ``par`` are those of every interleaving of its split:
    they depend on the interleaving only through which layers each stage holds as MoE layers (when every k-th layer is
    MoE, :meth:`Workload.arrangement`) and recomputes (``recompute_layers``, :func:`recomputed_layers`)."""
    return par.recompute_layers is None and not (w.m.experts > 1 and w.m.moe_layer_freq > 1)


def memory_parts(w: Workload, par: Parallel, micro_batch: int) -> tuple[tuple, ...]:
    """Per stage that can need the most memory (:attr:`Arrangement.memory_kinds`): ``(shape, model states,
    activations before the microbatches in flight multiply them)`` (:meth:`Workload.model_states`,
    :meth:`Workload.stage_activations`), what :func:`heaviest_stage` weighs for any number of microbatches (and,
    :func:`shared_by_interleavings`, of model chunks)."""
    arr = w.arrangement(par)
    return tuple((sh, w.model_states(par, sh), w.stage_activations(par, micro_batch, sh))
                 for sh in map(arr.shape, arr.memory_kinds))


def heaviest_stage(w: Workload, p: int, v: int, mbs: int, parts: tuple[tuple, ...]) -> tuple[float, int, tuple]:
    """:func:`memory_total` from :func:`memory_parts`, for ``p`` stages of ``v`` model chunks and ``mbs``
    microbatches per step."""
    best, heaviest = -1.0, None
    for part in parts:
        terms = _stage_terms(w, p, v, mbs, part)
        total = fsum(terms)
        if total > best:
            best, heaviest = total, (part[0].stage, terms)
    return best + w.hw.reserve_bytes, heaviest[0], heaviest[1]


def step_floor(w: Workload, par: Parallel, micro_batch: int, microbatches: int) -> float:
    """A lower bound of the step time, for pruning a search: ``m × n_max × (layer compute + TP)``.

    ``n_max`` is the most layers a stage holds; the per-layer figure is the smaller of a
    dense and an MoE layer's compute, plus the TP collectives unless they overlap. The
    step also has the bubble, the other exposed communication and the tail, so it is
    never below this.
    """
    t, c, e = par.tensor, par.context, par.expert
    sp = par.sequence_parallel and t > 1
    mode = par.recompute if par.recompute_layers is None else "none"  # some layers may run without recomputing
    key = (micro_batch, t, c, e, sp, mode, par.tp_comm_overlap)
    per_layer = w._floors.get(key)  # the same for every ZeRO stage, data degree, interleaving and stage split
    if per_layer is None:
        per_layer = w.layer(micro_batch, t, c, e, sp, mode, w.m.experts > 1 and w.m.moe_layer_freq == 1).total_s
        if t > 1 and not par.tp_comm_overlap:
            n = micro_batch * (w.m.seq_len // c) * w.m.hidden * w.prec.activation_bytes
            tp = ((1, t),)
            one = (w.collective("all-gather", tp, n) + w.collective("reduce-scatter", tp, n)) if sp else \
                w.collective("all-reduce", tp, n)
            per_layer += TP_CALLS[mode] * one
        w._floors[key] = per_layer
    return microbatches * w.most_layers(par) * per_layer


def step_bound(w: Workload, par: Parallel, micro_batch: int, microbatches: int, above: float | None = None) -> float:
    """``m·t_max + (Σ_s t_s − t_max)/v``, the first two terms of :func:`estimate`'s step (compute and exposed
    communication of every microbatch on the slowest stage, and the bubble): a lower bound of the step time (s)
    for a search.

    It is computed by the same operations as in :func:`estimate`, which adds to it only terms that are
    never negative (the tail, the tied embedding's gradients), so the step is never below it, in floating
    point too (a rounded sum never falls when a term grows). It costs neither memory nor the tail, so a search
    that already holds enough faster plans can skip the rest of a split this bound shows slower than all of them.

    With ``above`` (what a search's slowest kept plan takes), the stages are timed the last first (it holds the
    output layer), then the first, and as soon as ``m × t`` of one exceeds ``above`` that is returned: still a
    lower bound of the step (the bubble is never negative), and above ``above`` exactly when the whole bound is,
    for a fraction of the work.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> w = workload(llama, 512, hardware(64, profile_name="h100-sxm5-80gb"))
    >>> par = parallel(data=2, tensor=8, pipeline=4, zero=1)
    >>> step_bound(w, par, 1, 256) <= estimate(w, par, 1).step_time_s
    True
    """
    return bound_from_parts(par.pipeline_engine, par.interleave, microbatches, time_parts(w, par, micro_batch), above)


def time_parts(w: Workload, par: Parallel, micro_batch: int) -> tuple:
    """``(stages in the order step_bound times them, the stage each stands for, stage → parts)``: a stage's parts
    (:func:`_stage_time_parts`) are made when first asked for and kept, and are those of every interleaving of the
    split (:func:`shared_by_interleavings`), which only scales the pipeline's sends."""
    arr = w.arrangement(par)
    kinds = arr.kinds
    known: dict[int, tuple] = {}

    def parts(s: int) -> tuple:
        got = known.get(s)
        if got is None:
            got = known[s] = _stage_time_parts(w, par, micro_batch, arr, s)
        return got

    return (kinds[-1], kinds[0], *kinds[1:-1]) if len(kinds) > 1 else kinds, arr.representative, parts


def bound_from_parts(engine: str, v: int, microbatches: int, parts: tuple, above: float | None = None) -> float:
    """:func:`step_bound` from :func:`time_parts`, for ``v`` model chunks and the pipeline engine ``engine``."""
    order, representative, part = parts
    sends = PIPELINE_SENDS[engine] * v
    times: dict[int, float] = {}
    t_max = 0.0
    for s in order:
        t = times[s] = _part_total(part(s), sends)
        t_max = max(t_max, t)
        if above is not None and microbatches * t_max > above:
            return microbatches * t_max
    return microbatches * t_max + (fsum([times[r] for r in representative]) - t_max) / v


def first_stage_bound(engine: str, v: int, microbatches: int, parts: tuple) -> float:
    """``m ×`` the time per microbatch (s) of the first stage :func:`bound_from_parts` times, with ``v`` model chunks:
    never above that bound, and never smaller for a larger ``v`` (each chunk adds the stage's pipeline sends; the sum
    is :func:`bound_from_parts`'s, to the bit). So once it exceeds what a search's slowest kept plan takes, the bound
    of every larger interleaving of the split does too."""
    order, _, part = parts
    return microbatches * max(0.0, _part_total(part(order[0]), PIPELINE_SENDS[engine] * v))


def _part_total(stage_part: tuple, sends: float) -> float:
    """A stage's seconds per microbatch from one of :func:`time_parts`'s parts, with ``sends`` pipeline transfers:
    :func:`_microbatch_time`'s total, added in its order (so the same to the bit)."""
    first, zero_s, accumulate_s, send_s = stage_part
    return first + sends * send_s + zero_s + accumulate_s


def estimate(w: Workload, par: Parallel, micro_batch: int, every_stage: bool = False,
             microbatches: int | None = None) -> Estimate:
    """Cost one split: ``step = m·t_max + (Σ_s t_s − t_max)/v + tail`` seconds.

    Stages of the same kind (layers, MoE layers, first, last) take the same time; the
    earliest of a kind keeps the most microbatches in flight, so it stands for the
    others unless ``every_stage``. Raises :class:`CalcError` for impossible
    combinations (:func:`check_combination`); a split that does not fit is returned with
    ``memory.fits`` False. ``microbatches``, when given, is the ``m`` a caller already
    checked (the search), and the combination is not checked again.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> w = workload(llama, 512, hardware(64, profile_name="h100-sxm5-80gb"))
    >>> e = estimate(w, parallel(data=8, tensor=8, zero=1, sequence_parallel=True), 1)
    >>> e.memory.fits, round(e.step_time_s, 2)
    (True, 9.94)
    """
    mbs = microbatches or check_combination(w.m, micro_batch, w.global_batch, w.hw, par)
    p, v = par.pipeline, par.interleave
    arr = w.arrangement(par)
    visit = range(p) if every_stage else arr.kinds
    costed = {s: stage_cost(w, par, micro_batch, mbs, arr, s) for s in visit}
    times = [costed[s if every_stage else arr.representative[s]].time_per_microbatch_s for s in range(p)]
    slow = max(costed.values(), key=lambda sc: sc.time_per_microbatch_s)
    heavy = max(costed.values(), key=lambda sc: sc.memory_bytes)
    tail = max(costed.values(), key=lambda sc: sc.tail_s)
    t_max = slow.time_per_microbatch_s
    bubble = (fsum(times) - t_max) / v
    tied = 0.0
    if w.m.tied_embeddings and p > 1:
        tied = w.collective("all-reduce", ((arr.layout.strides["pipeline"] * (p - 1), 2),),
                            w.prec.grad_bytes * -(-w.m.vocab // par.tensor) * w.m.hidden)
    step = mbs * t_max + bubble + tail.tail_s + tied
    compute = mbs * slow.compute_s
    exposed = mbs * (t_max - slow.compute_s) + tail.grad_reduce_exposed_s + tail.param_gather_exposed_s + tied
    terms = (heavy.params_bytes, heavy.grads_bytes, heavy.optimizer_bytes, heavy.activations_bytes,
             heavy.buffers_bytes)
    return Estimate(micro_batch, mbs, step, compute, bubble, exposed, tail.optimizer_s,
                    _device_memory(heavy.stage, terms, w.hw), slow.stage, tail.stage,
                    tuple(costed[s] for s in sorted(costed)))


# ---------------------------------------------------------------------------- 3. communications


@dataclass(frozen=True, slots=True)
class Communication:
    """One kind of transfer of one strategy, per device, per optimizer step."""

    strategy: str  #: data | tensor | pipeline | context | expert
    collective: str  #: all-reduce | all-gather | reduce-scatter | all-to-all | send-recv
    what: str  #: the tensor moved
    group_size: int
    bytes_per_call: float  #: S as nccl-tests counts it (the full array; a send's message)
    calls_per_step: int
    bytes_per_step: float  #: bytes this device sends per step: calls × S × algorithm factor
    intra_node: bool  #: the group stays inside one node (NVLink)
    time_s: float  #: calls × the time of one call on this group's link
    exposed_time_s: float  #: the part of time_s not hidden behind compute (see the overlap rules)
    stage: int  #: the pipeline stage this row describes (the busiest for this strategy)
    bandwidth_bytes_per_s: float  #: bytes_per_call × algorithm factor / time of one call: what a call achieves


def _row(strategy: str, op: str, what: str, link: Link, n: float, calls: int, stage: int,
         exposed: float | None = None, extra: float = 0.0) -> Communication | None:
    """One row: ``calls`` of ``op`` of ``n`` bytes on ``link``, each taking ``extra`` seconds more than NCCL's call
    (:func:`list_copies`), which the row's bandwidth does not count."""
    if link.size == 1 or calls == 0 or n <= 0:
        return None
    one, sent = collective_time(op, link, n)
    total = calls * (one + extra)
    return Communication(strategy, op, what, link.size, n, calls, calls * sent, link.intra_node, total,
                         total if exposed is None else min(total, exposed), stage, sent / one if one > 0 else 0.0)


def _shared(new: list, exposed_total: float) -> list[Communication]:
    """The rows of ``new`` (None dropped) with ``exposed_total`` spread over them in proportion to their times."""
    made = [r for r in new if r is not None]
    total = fsum(r.time_s for r in made)
    share = exposed_total / total if total > 0 else 0.0
    return [Communication(*(asdict(r) | {"exposed_time_s": r.time_s * share}).values()) for r in made]


def _model_parallel_rows(w: Workload, par: Parallel, est: Estimate, lay: Layout, slow: StageCost) -> list:
    """The TP, CP, EP and PP transfers of one step on the slowest stage."""
    m, ab, gb = w.m, w.prec.activation_bytes, w.prec.grad_bytes
    t, p, c, e, v = par.tensor, par.pipeline, par.context, par.expert, par.interleave
    sp = par.sequence_parallel and t > 1
    mbs, micro, s_local, n_s = est.microbatches_per_step, est.micro_batch, m.seq_len // c, slow.layers
    n_rec = recomputed_layers(par, n_s, slow.stage == 0)
    act = micro * s_local * m.hidden * ab
    rows: list = []
    if t > 1:
        link = w.link(((1, t),))
        calls = round(_calls(TP_CALLS, par, n_s, n_s, n_rec)) * mbs
        ops = [("all-gather", "layer activations (sequence parallel)", act, calls),
               ("reduce-scatter", "layer activations (sequence parallel)", act, calls)] if sp else \
            [("all-reduce", "layer activations", act, calls)]
        if sp and w.fp8:  # the forward's all-gathers carry the norms' fp8 outputs (:data:`TP_BACKWARD_CALLS`)
            backward = TP_BACKWARD_CALLS * n_s * mbs
            ops[:1] = [("all-gather", "norm outputs in fp8 (forward, sequence parallel)", act // ab, calls - backward),
                       ("all-gather", "output gradients (backward, sequence parallel)", act, backward)]
        rows += _shared([_row("tensor", op, what, link, n, k, slow.stage) for op, what, n, k in ops],
                        slow.tensor_s * mbs)
    if c > 1:  # ring attention: c − 1 sends of one rank's K and V per pass, and of dK, dV in the backward
        link = w.link(((lay.strides["context"], c),))
        chunk = 2 * micro * s_local * kv_hidden_per_rank(m, t) * ab
        forwards = n_s + (n_rec if par.recompute == "full" else 0)
        rows += _shared([_row("context", "send-recv", "keys and values around the ring", link, chunk,
                              (forwards + n_s) * (c - 1) * mbs, slow.stage),
                         _row("context", "send-recv", "key and value gradients around the ring", link, chunk,
                              n_s * (c - 1) * mbs, slow.stage)], slow.context_s * mbs)
    if e > 1 and slow.moe_layers:
        link = w.link(((lay.strides["expert"], e),))
        payload = act * m.top_k / (t if sp else 1)
        rows.append(_row("expert", "all-to-all", "routed tokens (dispatch and combine)", link, payload,
                         round(_calls(EP_CALLS, par, slow.moe_layers, n_s, n_rec)) * mbs, slow.stage))
    if p > 1:
        link = w.link(((lay.strides["pipeline"], p),))
        rows.append(_row("pipeline", "send-recv", "activations and their gradients at stage boundaries", link,
                         act / t, PIPELINE_SENDS[par.pipeline_engine] * v * mbs, slow.stage))
        if m.tied_embeddings:
            link2 = w.link(((lay.strides["pipeline"] * (p - 1), 2),))
            rows.append(_row("pipeline", "all-reduce", "tied embedding gradients (first and last stage)", link2,
                             gb * -(-m.vocab // t) * m.hidden, 1, p - 1))
    return rows


def _data_parallel_rows(w: Workload, par: Parallel, est: Estimate, lay: Layout, slow: StageCost,
                        tail: StageCost) -> list:
    """The DP/ZeRO transfers: gradient reduction and weight gathers, dense and expert weights apart."""
    m, gb, z, mbs = w.m, w.prec.grad_bytes, par.zero, est.microbatches_per_step
    dp_rows: list = []
    for label, expert in (("", False), ("expert ", True)):
        axes = _dp_axes(lay, par, expert, "shard")
        link = w.link(axes)
        tensors = layer_tensors(m) if par.zero3_gather != "layer" else 1
        if z <= 2:  # after the last microbatch, on the stage whose tail is longest
            params = tail.expert_params if expert else tail.dense_params
            op = _gradient_reduction(w, par)
            all_axes = _dp_axes(lay, par, expert, "all") if op == "all-reduce" else axes
            buckets = dp_calls(params, all_axes, whole=whole_buffer(par))
            if z <= 1:
                dp_rows.append(("reduce", _row("data", op, label + "gradients", w.link(all_axes),
                                               gb * params / buckets, buckets, tail.stage)))
            gathers = dp_calls(params, axes, whole=whole_buffer(par))
            dp_rows.append(("gather", _row("data", "all-gather", label + "updated weights", link,
                                           w.gather_bytes * params / gathers, gathers, tail.stage))
                           if z else ("gather", None))
        if replicas(par) > 1:  # each shard across the replicas, after the last microbatch, in the shard group's calls
            params = tail.expert_params if expert else tail.dense_params
            calls = tail.layers * tensors if z >= 2 else dp_calls(params, axes)
            dp_rows.append(("reduce", _row("data", "all-reduce", label + "gradient shards across the replicas",
                                           w.link(_dp_axes(lay, par, expert, "replicate")),
                                           gb * params / link.size / calls, calls, tail.stage)))
        if z >= 2:  # every microbatch, by layer, on the slowest stage
            params = slow.expert_params if expert else slow.dense_params
            per_layer = slow.layers * tensors
            n = gb * params / per_layer
            dp_rows.append(("zero", _row("data", "reduce-scatter", label + "gradients (every microbatch, by layer)",
                                         link, n, per_layer * mbs, slow.stage,
                                         extra=_blocking_copies(w, par, "reduce-scatter", link.size, n))))
            if z == 3:
                regathers = recomputed_layers(par, slow.layers, slow.stage == 0) * tensors \
                    if par.zero3_gather != "layer" and par.recompute == "full" else 0
                n = w.gather_bytes * params / per_layer
                dp_rows.append(("zero", _row("data", "all-gather",
                                             label + "weights (before each forward and backward, by layer)", link, n,
                                             (per_layer * ZERO3_GATHERS + regathers) * mbs, slow.stage,
                                             extra=_blocking_copies(w, par, "all-gather", link.size, n))))
    rows: list = []
    for kind, exposed in (("reduce", tail.grad_reduce_exposed_s), ("gather", tail.param_gather_exposed_s),
                          ("zero", slow.zero_s * mbs)):
        rows += _shared([r for k, r in dp_rows if k == kind], exposed)
    return rows


def communications(w: Workload, par: Parallel, est: Estimate, lay: Layout) -> tuple[Communication, ...]:
    """Every transfer of one step on the slowest stage (per-microbatch ones) or the tail stage (the rest).

    Exposed times are those :func:`stage_cost` charged, spread over a strategy's rows in
    proportion to their times.
    """
    slow = next(sc for sc in est.stages if sc.stage == est.slowest_stage)
    tail = next(sc for sc in est.stages if sc.stage == est.tail_stage)
    rows = _model_parallel_rows(w, par, est, lay, slow) + _data_parallel_rows(w, par, est, lay, slow, tail)
    return tuple(r for r in rows if r is not None)


# ---------------------------------------------------------------------------- the full plan


@dataclass(frozen=True, slots=True)
class StagePlacement:
    """What each device of one pipeline stage holds, and its time per microbatch."""

    stage: int
    layers: tuple[int, ...]  #: global indices of the layers held (all chunks)
    moe_layers: int
    embedding: bool  #: word (and position) embedding
    output_head: bool  #: final norm and output head (a tied copy when tied and pipeline > 1)
    experts_per_device: int  #: of each MoE layer
    params_per_device: float  #: after TP, PP and EP, before ZeRO
    memory_total_bytes: float  #: the reserve included
    time_per_microbatch_s: float
    compute_per_microbatch_s: float


@dataclass(frozen=True, slots=True)
class Plan:
    """A distributed execution plan and its estimated cost."""

    parallel: Parallel
    micro_batch: int
    global_batch: int
    microbatches_per_step: int  #: m = global / (micro × data × expert)
    gpus: int
    nodes: int
    hardware_profile: str  #: the GPU profile (``custom`` when given by hand)
    layers_per_stage: tuple[int, ...]
    uneven_split: str  #: "" when even, else the layers per stage
    stages: tuple[StagePlacement, ...]
    memory_per_device: DeviceMemory
    communications: tuple[Communication, ...]
    compute_time_s: float  #: m × compute of the slowest stage per microbatch
    exposed_communication_s: float
    bubble_time_s: float
    optimizer_time_s: float  #: the optimizer step after the last microbatch (memory-bound)
    step_time_s: float
    bubble_fraction: float  #: (p−1)/(v·m), relative to ideal compute time
    bubble_share: float  #: bubble_time / step_time
    tokens_per_s: float
    model_flops_per_step: float
    hardware_flops_per_step: float
    mfu: float  #: model FLOPs / (step × gpus × peak)
    hfu: float  #: hardware FLOPs (with recomputation) / (step × gpus × peak)
    achieved_flops_per_gpu: float  #: model FLOPs / (step × gpus): the "TFLOP/s per GPU" papers print
    training_days: float | None  #: for ``tokens`` training tokens, when given
    rank_order: tuple[str, ...]
    rank_strides: dict[str, int]
    #: (rank, data, pipeline, context, expert, tensor, node); None above :data:`MAX_LISTED_RANKS` GPUs or unasked
    ranks: tuple[tuple[int, ...], ...] | None
    fp8: bool = False  #: the linear layers in FP8 (``training.fp8``; MFU is then against the fp8 peak)

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc plan --json`` prints."""
        # the per-rank listing is immutable tuples of ints: shared, not copied (up to 7168 numbers)
        out = {f.name: self.ranks if f.name == "ranks" else plain(getattr(self, f.name)) for f in fields(self)}
        out["parallel"]["stage_layers"] = list(self.layers_per_stage)
        return out


def plan(m: Model, micro_batch: int, global_batch: int, hw: Hardware, par: Parallel,
         precision: str = "bf16-adam", tokens: float | None = None, fp8: bool = False, list_ranks: bool = True) -> Plan:
    """Partition, memory per device, communications and step time of one configuration.

    ``step = m·t_max + (Σ_s t_s − t_max)/v + tail`` seconds (the assumptions are in the
    module docstring). Raises :class:`CalcError` for impossible combinations (see
    :func:`check_combination`); a plan that does not fit in memory is returned with
    ``memory_per_device.fits`` False and the binding term named.
    ``list_ranks``: list every rank's coordinates (:func:`assemble`).

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> hw = hardware(64, profile_name="h100-sxm5-80gb")
    >>> p = plan(llama, 1, 512, hw, parallel(data=8, tensor=8, zero=1, sequence_parallel=True,
    ...                                      recompute="selective"))
    >>> p.microbatches_per_step, p.memory_per_device.fits, [c.strategy for c in p.communications][:2]
    (64, True, ['tensor', 'tensor'])
    """
    w = workload(m, global_batch, hw, precision, tokens, fp8)
    return assemble(w, par, micro_batch, list_ranks)


def assemble(w: Workload, par: Parallel, micro_batch: int, list_ranks: bool = True) -> Plan:
    """The full plan of one split: every stage costed, every transfer listed; with ``list_ranks`` (up to
    :data:`MAX_LISTED_RANKS` GPUs) every rank's coordinates, which a search's summaries do not show."""
    m, hw = w.m, w.hw
    est = estimate(w, par, micro_batch, every_stage=True)
    lay = w.arrangement(par).layout
    chunks = chunk_ranges(lay.stage_layers, par.interleave)
    p, v, mbs = par.pipeline, par.interleave, est.microbatches_per_step
    step = est.step_time_s
    stages = tuple(
        StagePlacement(sc.stage, tuple(i for a, b in chunks[sc.stage] for i in range(a, b)), sc.moe_layers,
                       sc.stage == 0, sc.stage == p - 1, m.experts // par.expert if m.experts > 1 else 0,
                       sc.dense_params + sc.expert_params, sc.memory_bytes + hw.reserve_bytes,
                       sc.time_per_microbatch_s, sc.compute_s)
        for sc in est.stages)
    s_tp, s_ep, s_cp, s_pp, s_dp = (lay.strides[a] for a in ("tensor", "expert", "context", "pipeline", "data"))
    t, c, e = par.tensor, par.context, par.expert
    ranks = None
    if list_ranks and hw.gpus <= MAX_LISTED_RANKS:
        ranks = tuple((r, r // s_dp % par.data, r // s_pp % p, r // s_cp % c, r // s_ep % e, r % t, r // hw.gpus_per_node)
                      for r in range(hw.gpus))
    hw_flops = w.hardware_flops[par.recompute]
    if par.recompute_layers is not None:  # the recomputed layers' share of what recomputing every layer adds
        none = w.hardware_flops["none"]
        share = fsum(recomputed_layers(par, n, s == 0) for s, n in enumerate(lay.stage_layers)) / m.layers
        hw_flops = none + (hw_flops - none) * share
    util = step * hw.gpus * w.peak
    days = None
    if w.tokens is not None:
        days = w.tokens / (w.global_batch * m.seq_len) * step / 86400
    return Plan(
        par, micro_batch, w.global_batch, mbs, hw.gpus, -(-hw.gpus // hw.gpus_per_node), hw.gpu.name,
        lay.stage_layers, lay.uneven, stages, est.memory, communications(w, par, est, lay), est.compute_time_s,
        est.exposed_communication_s, est.bubble_time_s, est.optimizer_time_s, step, (p - 1) / (v * mbs),
        est.bubble_time_s / step, w.global_batch * m.seq_len / step, w.model_flops, hw_flops, w.model_flops / util,
        hw_flops / util, w.model_flops / (step * hw.gpus), days, RANK_ORDERS[par.rank_order], dict(lay.strides), ranks,
        w.fp8,
    )
