"""The execution plan: model, batch and hardware in; partitions, memory, communication and time out.

Ranks are laid out ``data, pipeline, context, expert, tensor`` from outermost to
innermost (TP innermost, so a TP group of at most ``gpus_per_node`` stays in a
node). ``gpus = data × pipeline × context × expert × tensor``.

Expert parallelism is its own axis of the grid: the ``expert`` ranks of a group
hold different experts of an MoE layer *and different examples*, so for the
dense weights (attention, embeddings, dense layers) they are data-parallel
replicas. Dense gradients are reduced over ``data × context × expert`` ranks,
expert gradients over ``data × context``, and the global batch is
``micro_batch × microbatches × data × expert``. (Megatron-Core's
``--expert-model-parallel-size E`` with data-parallel size ``D`` is ``expert = E,
data = D/E`` here.)

Model of a step (the assumptions, stated once; every one is an idealisation):

- **Placement.** Layers split evenly over the stages; an uneven remainder goes
  one layer each to the last stages. The word embedding (and learned position
  embeddings) sit on the first stage, the final norm and output head on the last;
  with tied embeddings and more than one stage the last stage keeps a copy and
  the two copies' gradients are all-reduced each step (as Megatron does). The
  vocabulary is split over TP (padding of ``V`` to a multiple of TP ignored);
  norms, row-parallel biases, routers and learned positions are replicated.
- **Memory** is that of the most loaded stage, computed for every stage: model
  states (ZeRO over the data-parallel group of each weight), activations of the
  microbatches in flight under 1F1B (Korthikanti et al. 2022; the first stage
  keeps ``p`` of them), the input-embedding dropout mask on the first stage and
  the output layer's ``4·s·b·h/t·(1 + V/h)`` on the last, one layer's full
  activations while it is recomputed (full recomputation), and with ZeRO-3 two
  gathered layers (the current one and the prefetched one). Not counted: the CUDA
  context, allocator fragmentation, communication buckets, temporary buffers.
- **Compute time** = hardware FLOPs (with recomputation) of a microbatch on a
  stage ÷ (``flops_per_gpu × compute_efficiency``); attention core split over CP,
  everything over TP; MoE routing perfectly balanced.
- **Communication** in the alpha-beta model with ring algorithms; a group inside
  one node uses ``intra_node_bandwidth``, any other ``inter_node_bandwidth``;
  one ``startup`` for all. One call per collective (bucketing ignored).
- **Overlap.** TP, EP and PP transfers are on the critical path (not
  overlapped). CP's K/V exchange overlaps the attention core of the same layer.
  Data-parallel gradient reduction (ZeRO 0-1) overlaps the backward pass of the
  last microbatch; the parameter all-gather after the optimizer step (ZeRO 1-2)
  is exposed; ZeRO-2 reduce-scatters and ZeRO-3 gathers overlap the compute of
  the microbatch they belong to.
- **Step time** = ``(m + (p−1)/v) × t_mb + t_tail``, ``t_mb`` the slowest
  stage's time per microbatch (compute + exposed per-microbatch communication) and
  ``t_tail`` the exposed data-parallel tail. The bubble is ``(p−1)/v × t_mb``.

Sources: Narayanan et al. 2021 (PTD-P, §2-3); Korthikanti et al. 2022;
Rajbhandari et al. 2020 (ZeRO); Liu et al. 2023 (ring attention) and
Megatron-Core's context parallelism; Lepikhin et al. 2021 (GShard all-to-all).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .check import MAX_BYTES, MAX_RATE, MAX_SECONDS, count, real
from .compute import layer_forward_flops, training_flops
from .errors import CalcError
from .memory import MAX_DEGREE, RECOMPUTE, layer_activation_bytes
from .model import Model, Precision, layer_params, precision as _precision
from .pipeline import in_flight_chunks, stage_layers

__all__ = [
    "Hardware",
    "hardware",
    "Parallel",
    "parallel",
    "Communication",
    "DeviceMemory",
    "StagePlacement",
    "Plan",
    "plan",
    "RANK_ORDER",
    "MAX_LISTED_RANKS",
    "MAX_GPUS",
]

#: Outermost to innermost.
RANK_ORDER = ("data", "pipeline", "context", "expert", "tensor")
#: Plans list every rank's coordinates up to this many GPUs (beyond, ``ranks`` is None).
MAX_LISTED_RANKS = 1024
#: Largest cluster accepted.
MAX_GPUS = MAX_DEGREE
GB = 1e9
GIB = 2.0**30


@dataclass(frozen=True, slots=True)
class Hardware:
    """The cluster."""

    gpus: int
    gpus_per_node: int
    memory_bytes: float  #: per GPU
    flops_per_gpu: float  #: peak FLOP/s per GPU (the MFU denominator)
    intra_node_bandwidth: float  #: bytes/s per GPU inside a node
    inter_node_bandwidth: float  #: bytes/s per GPU across nodes
    startup_s: float  #: alpha, per message step
    compute_efficiency: float  #: achieved / peak FLOP/s of the compute itself (1: ideal)


def hardware(gpus: int, memory: float, flops_per_gpu: float, intra_node_bandwidth: float,
             inter_node_bandwidth: float, startup: float = 5e-6, gpus_per_node: int = 8,
             compute_efficiency: float = 1.0) -> Hardware:
    """Check a cluster description; ``gpus_per_node`` divides ``gpus`` (or ``gpus`` fits in one node).

    >>> hardware(64, 80e9, 989e12, 450e9, 50e9).gpus_per_node
    8
    >>> hardware(12, 80e9, 989e12, 450e9, 50e9)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: gpus must be a multiple of gpus_per_node (8) or at most one node, got 12
    """
    g = count("gpus", gpus, maximum=MAX_GPUS)
    gpn = count("gpus_per_node", gpus_per_node, maximum=1024)
    if g > gpn and g % gpn:
        raise CalcError("gpus", f"a multiple of gpus_per_node ({gpn}) or at most one node", g)
    return Hardware(
        g, gpn,
        real("memory", memory, maximum=MAX_BYTES, unit="bytes"),
        real("flops_per_gpu", flops_per_gpu, maximum=MAX_RATE, unit="FLOP/s"),
        real("intra_node_bandwidth", intra_node_bandwidth, maximum=MAX_RATE, unit="bytes/s"),
        real("inter_node_bandwidth", inter_node_bandwidth, maximum=MAX_RATE, unit="bytes/s"),
        real("startup", startup, maximum=MAX_SECONDS, allow_minimum=True, unit="s"),
        real("compute_efficiency", compute_efficiency, maximum=1.0),
    )


@dataclass(frozen=True, slots=True)
class Parallel:
    """How the work is split."""

    data: int = 1
    tensor: int = 1
    pipeline: int = 1
    context: int = 1
    expert: int = 1
    zero: int = 0  #: 0-3; 1 with a Megatron precision recipe is Megatron's distributed optimizer
    sequence_parallel: bool = False
    recompute: str = "none"  #: none | selective | full
    interleave: int = 1  #: v, model chunks per pipeline stage


def parallel(data: int = 1, tensor: int = 1, pipeline: int = 1, context: int = 1, expert: int = 1,
             zero: int = 0, sequence_parallel: bool = False, recompute: str = "none",
             interleave: int = 1) -> Parallel:
    """Check each value on its own (combinations are checked by :func:`plan`).

    >>> parallel(data=8, tensor=8, zero=1).zero
    1
    """
    degrees = [count(n, x, maximum=MAX_DEGREE) for n, x in
               (("data", data), ("tensor", tensor), ("pipeline", pipeline), ("context", context),
                ("expert", expert))]
    z = count("zero", zero, minimum=0, maximum=3)
    if not isinstance(sequence_parallel, bool):
        raise CalcError("sequence_parallel", "true or false", sequence_parallel)
    if recompute not in RECOMPUTE:
        raise CalcError("recompute", "one of " + ", ".join(RECOMPUTE), recompute)
    v = count("interleave", interleave, maximum=1024)
    return Parallel(*degrees, z, sequence_parallel, recompute, v)


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
    intra_node: bool  #: the group stays inside one node
    time_s: float  #: calls × alpha-beta time of one call
    exposed_time_s: float  #: the part of time_s not hidden behind compute (see the overlap rules)
    stage: int  #: the pipeline stage this row describes (the busiest for this strategy)


@dataclass(frozen=True, slots=True)
class DeviceMemory:
    """Memory of one device of the most loaded stage (bytes; GB = 1e9 B, GiB = 2^30 B)."""

    params_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    model_states_bytes: float
    activations_bytes: float
    buffers_bytes: float  #: ZeRO-3's two gathered layers
    total_bytes: float
    total_gb: float  #: total_bytes / 1e9
    total_gib: float  #: total_bytes / 2^30
    capacity_bytes: float
    capacity_gib: float
    headroom_bytes: float  #: capacity − total (negative: does not fit)
    fits: bool
    binding_term: str  #: the largest term: params | grads | optimizer | activations | buffers
    stage: int  #: the most loaded stage


@dataclass(frozen=True, slots=True)
class StagePlacement:
    """What each device of one pipeline stage holds."""

    stage: int
    layers: tuple[int, ...]  #: global indices of the layers held (all chunks)
    moe_layers: int
    embedding: bool  #: word (and position) embedding
    output_head: bool  #: final norm and output head (a tied copy when tied and pipeline > 1)
    experts_per_device: int  #: of each MoE layer
    params_per_device: float  #: after TP, PP and EP, before ZeRO
    memory_total_bytes: float
    time_per_microbatch_s: float


@dataclass(frozen=True, slots=True)
class Plan:
    """A distributed execution plan and its estimated cost."""

    parallel: Parallel
    micro_batch: int
    global_batch: int
    microbatches_per_step: int  #: m = global / (micro × data × expert)
    gpus: int
    nodes: int
    layers_per_stage: tuple[int, ...]
    uneven_split: str  #: "" when even, else how the layers are split
    stages: tuple[StagePlacement, ...]
    memory_per_device: DeviceMemory
    communications: tuple[Communication, ...]
    compute_time_s: float  #: m × compute of the slowest stage per microbatch
    exposed_communication_s: float
    bubble_time_s: float
    step_time_s: float
    bubble_fraction: float  #: (p−1)/(v·m), relative to ideal compute time
    bubble_share: float  #: bubble_time / step_time
    tokens_per_s: float
    model_flops_per_step: float
    hardware_flops_per_step: float
    mfu: float  #: model FLOPs / (step × gpus × peak)
    hfu: float  #: hardware FLOPs (with recomputation) / (step × gpus × peak)
    training_days: float | None  #: for ``tokens`` training tokens, when given
    rank_order: tuple[str, ...]
    rank_strides: dict[str, int]
    ranks: tuple[tuple[int, ...], ...] | None  #: (rank, data, pipeline, context, expert, tensor, node)

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc plan --json`` prints."""
        return asdict(self)


# ---------------------------------------------------------------------------- checks


def check_combination(m: Model, micro_batch: int, global_batch: int, hw: Hardware, par: Parallel) -> int:
    """Reject impossible combinations with the reason; return the microbatches per step ``m``.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8)
    >>> hw = hardware(64, 80e9, 989e12, 450e9, 50e9)
    >>> check_combination(llama, 1, 512, hw, parallel(data=8, tensor=8))
    64
    >>> check_combination(llama, 1, 512, hw, parallel(data=4, tensor=16))
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: tensor must be a divisor of heads (32) and kv_heads (8), got 16
    """
    t, p, c, e, d, v = par.tensor, par.pipeline, par.context, par.expert, par.data, par.interleave
    model_ranks = t * p * c * e
    if hw.gpus % model_ranks:
        raise CalcError("gpus", f"a multiple of tensor × pipeline × context × expert = {model_ranks}", hw.gpus)
    if d * model_ranks != hw.gpus:
        raise CalcError("data", f"gpus / (tensor × pipeline × context × expert) = {hw.gpus // model_ranks}", d)
    if m.heads % t or m.kv_heads % t:
        raise CalcError("tensor", f"a divisor of heads ({m.heads}) and kv_heads ({m.kv_heads})", t)
    if m.ffn_hidden % t:
        raise CalcError("tensor", f"a divisor of ffn_hidden ({m.ffn_hidden})", t)
    if p > m.layers:
        raise CalcError("pipeline", f"<= layers ({m.layers})", p)
    if m.experts % e:
        raise CalcError("expert", f"a divisor of experts ({m.experts})", e)
    b = count("micro_batch", micro_batch)
    gb = count("global_batch", global_batch)
    per_step = b * d * e
    if gb % per_step:
        raise CalcError("global_batch", f"a multiple of micro_batch × data × expert = {per_step}", gb)
    mbs = gb // per_step
    if v > 1:
        if p == 1:
            raise CalcError("interleave", "1 when pipeline is 1", v)
        if m.layers % (p * v):
            raise CalcError("interleave", f"such that pipeline × interleave divides layers ({m.layers})", v)
        if mbs % p:
            raise CalcError("interleave",
                            f"1, or the microbatches per step ({mbs}) must be a multiple of pipeline ({p})", v)
    if c > 1 and m.seq_len % (2 * c):
        raise CalcError("context", f"such that 2 × context divides seq_len ({m.seq_len}) (load-balanced causal split)",
                        c)
    if par.sequence_parallel and t > 1 and (m.seq_len // c) % t:
        raise CalcError("sequence_parallel",
                        f"false, or seq_len / context ({m.seq_len // c}) must be a multiple of tensor ({t})", True)
    if par.zero >= 2 and p > 1:
        raise CalcError("zero", "0 or 1 with pipeline > 1 (ZeRO-2/3 would re-communicate gradients or weights "
                        "every microbatch; DeepSpeed refuses it)", par.zero)
    return mbs


# ---------------------------------------------------------------------------- cost model


def _ring(op: str, g: int, n: float, alpha: float, beta: float) -> tuple[float, float]:
    """(time of one call, bytes sent per rank) of a ring collective of nccl-tests size ``n``."""
    if g == 1 or n == 0:
        return 0.0, 0.0
    if op == "all-reduce":
        sent = 2 * (g - 1) / g * n
        return 2 * (g - 1) * alpha + sent / beta, sent
    if op == "send-recv":
        return alpha + n / beta, n
    sent = (g - 1) / g * n  # all-gather, reduce-scatter, all-to-all (pairwise exchange)
    return (g - 1) * alpha + sent / beta, sent


class _Ctx:
    """What stays fixed while the parallel configuration changes (built once per search)."""

    __slots__ = ("m", "hw", "prec", "global_batch", "lp", "lpm", "mm_dense", "mm_moe", "core", "logits",
                 "model_flops", "hardware_flops", "peak_rate", "rate", "tokens", "final_norm", "act_cache")

    def __init__(self, m: Model, hw: Hardware, prec: Precision, global_batch: int, tokens: float | None) -> None:
        self.m, self.hw, self.prec, self.global_batch, self.tokens = m, hw, prec, global_batch, tokens
        self.lp = layer_params(m)
        self.lpm = layer_params(m, moe=True)
        self.mm_dense, self.core = layer_forward_flops(m)
        self.mm_moe = layer_forward_flops(m, moe=True)[0]
        self.logits = 2 * m.seq_len * m.hidden * m.vocab
        self.model_flops = training_flops(m, global_batch, "none").model_flops
        self.hardware_flops = {r: training_flops(m, global_batch, r).hardware_flops for r in RECOMPUTE}
        self.peak_rate = hw.flops_per_gpu
        self.rate = hw.flops_per_gpu * hw.compute_efficiency
        self.final_norm = m.hidden * (2 if m.biases else 1)
        self.act_cache: dict[tuple, tuple[float, float, float]] = {}

    def layer_activations(self, micro: int, t: int, sp: bool, c: int, recompute: str) -> tuple[float, float, float]:
        """(dense layer, MoE layer, full-recompute working set) activation bytes, cached."""
        key = (micro, t, sp, c, recompute)
        if key not in self.act_cache:
            m = self.m
            kw = dict(tensor_parallel=t, sequence_parallel=sp, kv_heads=m.kv_heads, ffn_hidden=m.ffn_hidden,
                      gated_mlp=m.gated_mlp, context_parallel=c, activation_bytes=self.prec.activation_bytes)
            moe_k = m.top_k if m.experts > 1 else 0
            dense = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute=recompute, **kw)
            moe = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute=recompute,
                                         moe_top_k=moe_k, **kw) if moe_k else 0.0
            working = 0.0
            if recompute == "full":
                working = layer_activation_bytes(m.seq_len, micro, m.hidden, m.heads, recompute="none",
                                                 moe_top_k=moe_k, **kw)
            self.act_cache[key] = (dense, moe, working)
        return self.act_cache[key]


def _intra(hw: Hardware, stride: int, degree: int) -> bool:
    """A group whose outermost axis has ``stride`` and ``degree`` stays in a node in *every* copy."""
    return degree == 1 or hw.gpus <= hw.gpus_per_node or hw.gpus_per_node % (stride * degree) == 0


def _stage_layer_ranges(l: int, p: int, v: int) -> list[list[tuple[int, int]]]:
    if v == 1:
        out, start = [], 0
        for n in stage_layers(l, p):
            out.append([(start, start + n)])
            start += n
        return out
    chunk = l // (p * v)
    return [[((c * p + s) * chunk, (c * p + s + 1) * chunk) for c in range(v)] for s in range(p)]


def _evaluate(ctx: _Ctx, par: Parallel, micro: int, mbs: int, detail: bool):
    """Memory per stage, per-microbatch time per stage, communications, step time."""
    m, hw, prec = ctx.m, ctx.hw, ctx.prec
    t, p, c, e, d, v, z = par.tensor, par.pipeline, par.context, par.expert, par.data, par.interleave, par.zero
    sp = par.sequence_parallel and t > 1
    alpha = hw.startup_s
    s_local = m.seq_len // c
    ab = prec.activation_bytes
    n_dense_dp, n_exp_dp = d * c * e, d * c
    s_tp, s_ep, s_cp, s_pp, s_dp = 1, t, t * e, t * e * c, t * e * c * p
    bw = {True: hw.intra_node_bandwidth, False: hw.inter_node_bandwidth}
    intra = {
        "tensor": _intra(hw, s_tp, t), "expert": _intra(hw, s_ep, e), "context": _intra(hw, s_cp, c),
        "pipeline": _intra(hw, s_pp, p),
        "data": _intra(hw, s_dp, d) if d > 1 else (_intra(hw, s_cp, c) if c > 1 else _intra(hw, s_ep, e)),
        "expert_data": _intra(hw, s_dp, d) if d > 1 else _intra(hw, s_cp, c),
    }
    lp, lpm = ctx.lp, ctx.lpm
    attn_dense = lp.attention_sharded / t + lp.replicated
    mlp_dense = lp.mlp_sharded / t + lp.mlp_replicated
    attn_moe = lpm.attention_sharded / t + lpm.replicated
    expert_mlp = lpm.mlp_sharded / t + lpm.mlp_replicated
    experts_local = m.experts // e
    emb = m.vocab * m.hidden / t + (m.seq_len * m.hidden if m.learned_positions else 0)
    head = m.vocab * m.hidden / t if (not m.tied_embeddings or p > 1) else 0.0

    act_dense, act_moe, working = ctx.layer_activations(micro, t, sp, c, par.recompute)
    emb_mask = s_local * micro * m.hidden / (t if sp else 1)
    out_layer = ab / 2 * 4 * s_local * micro * m.hidden / t * (1 + m.vocab / m.hidden)
    pb, gb, ob = prec.param_bytes, prec.grad_bytes, prec.optimizer_bytes
    zd_p = n_dense_dp if z >= 3 else 1
    zd_g = n_dense_dp if z >= 2 else 1
    zd_o = n_dense_dp if z >= 1 else 1
    ze_p = n_exp_dp if z >= 3 else 1
    ze_g = n_exp_dp if z >= 2 else 1
    ze_o = n_exp_dp if z >= 1 else 1
    biggest_layer = max(attn_dense + mlp_dense, attn_moe + experts_local * expert_mlp if m.experts > 1 else 0.0)
    buffers = 2 * biggest_layer * pb if z >= 3 else 0.0

    # per-microbatch compute and communication on a stage, per layer
    denom = t * c * ctx.rate
    passes = 4 if par.recompute == "full" else 3
    f_dense = micro * (passes * (ctx.mm_dense + ctx.core) + (ctx.core if par.recompute == "selective" else 0)) / denom
    f_moe = micro * (passes * (ctx.mm_moe + ctx.core) + (ctx.core if par.recompute == "selective" else 0)) / denom
    f_logits = micro * 3 * ctx.logits / denom
    core_time = micro * 3 * ctx.core / denom
    tp_calls_layer = 6 if par.recompute == "full" else 4
    tp_payload = micro * s_local * m.hidden * ab
    tp_call, tp_sent = _ring("all-reduce", t, tp_payload, alpha, bw[intra["tensor"]])
    cp_calls_layer = 4 if par.recompute == "full" else 3
    cp_payload = 2 * micro * m.seq_len * m.kv_hidden / t * ab
    cp_call, cp_sent = _ring("all-gather", c, cp_payload, alpha, bw[intra["context"]])
    ep_calls_layer = 6 if par.recompute == "full" else 4
    ep_payload = micro * s_local * m.hidden * m.top_k * ab / (t if sp else 1)
    ep_call, ep_sent = _ring("all-to-all", e, ep_payload, alpha, bw[intra["expert"]])
    pp_calls = 2 * v
    pp_payload = micro * s_local * m.hidden * ab / t
    pp_call, pp_sent = _ring("send-recv", p, pp_payload, alpha, bw[intra["pipeline"]])
    bw_dp, bw_edp = bw[intra["data"]], bw[intra["expert_data"]]

    ranges = _stage_layer_ranges(m.layers, p, v)
    best_mem = None
    stage_rows = []
    t_mb_max, slow = -1.0, 0
    tail_max, tail_stage = -1.0, 0
    uniform = m.layers % p == 0 and (m.experts == 1 or m.moe_layer_freq == 1)
    # Stages 1 .. p-2 of a uniform split differ only in their in-flight microbatches, which fall
    # with the stage index: stage 1 stands for them all unless every stage is wanted.
    visit = range(p) if detail or not uniform else sorted({0, min(1, p - 1), p - 1})
    for s in visit:
        n_s = sum(b - a for a, b in ranges[s])
        n_moe = sum(m.moe_layers_in(a, b) for a, b in ranges[s])
        n_den = n_s - n_moe
        dense_params = n_den * (attn_dense + mlp_dense) + n_moe * attn_moe
        expert_params = n_moe * experts_local * expert_mlp
        if s == 0:
            dense_params += emb
        if s == p - 1:
            dense_params += ctx.final_norm + head
        params_b = pb * (dense_params / zd_p + expert_params / ze_p)
        grads_b = gb * (dense_params / zd_g + expert_params / ze_g)
        opt_b = ob * (dense_params / zd_o + expert_params / ze_o)
        chunks = in_flight_chunks(s, p, mbs, v)
        acts = chunks / v * (n_den * act_dense + n_moe * act_moe) + working
        if s == 0:
            acts += emb_mask * -(-chunks // v)
        if s == p - 1:
            acts += out_layer
        total = params_b + grads_b + opt_b + acts + buffers
        if best_mem is None or total > best_mem[6]:
            best_mem = (s, params_b, grads_b, opt_b, acts, buffers, total)

        compute = n_den * f_dense + n_moe * f_moe + (f_logits if s == p - 1 else 0.0)
        tp_t = n_s * tp_calls_layer * tp_call
        cp_t = max(0.0, n_s * cp_calls_layer * cp_call - n_s * core_time)
        ep_t = n_moe * ep_calls_layer * ep_call
        pp_t = pp_calls * pp_call
        # ZeRO-2/3: per-microbatch reduce-scatter (and gathers) overlapping this microbatch's compute
        z_t = 0.0
        if z >= 2:
            rs = _ring("reduce-scatter", n_dense_dp, gb * dense_params, alpha, bw_dp)[0] + \
                _ring("reduce-scatter", n_exp_dp, gb * expert_params, alpha, bw_edp)[0]
            ag = 0.0
            if z == 3:
                gathers = 3 if par.recompute == "full" else 2
                ag = gathers * (_ring("all-gather", n_dense_dp, pb * dense_params, alpha, bw_dp)[0]
                                + _ring("all-gather", n_exp_dp, pb * expert_params, alpha, bw_edp)[0])
            window = compute if z == 3 else compute * 2 / 3
            z_t = max(0.0, rs + ag - window)
        t_mb = compute + tp_t + cp_t + ep_t + pp_t + z_t
        if t_mb > t_mb_max:
            t_mb_max, slow = t_mb, s
        # data-parallel tail after the last microbatch
        tail = 0.0
        if z <= 1:
            op = "all-reduce" if z == 0 else "reduce-scatter"
            grad_t = _ring(op, n_dense_dp, gb * dense_params, alpha, bw_dp)[0] + \
                _ring(op, n_exp_dp, gb * expert_params, alpha, bw_edp)[0]
            tail += max(0.0, grad_t - compute * (3 / 4 if par.recompute == "full" else 2 / 3))
        if z in (1, 2):
            tail += _ring("all-gather", n_dense_dp, pb * dense_params, alpha, bw_dp)[0] + \
                _ring("all-gather", n_exp_dp, pb * expert_params, alpha, bw_edp)[0]
        if tail > tail_max:
            tail_max, tail_stage = tail, s
        stage_rows.append((s, n_s, n_moe, dense_params, expert_params, total, t_mb, compute, tp_t, cp_t, ep_t,
                           pp_t, z_t, ranges[s]))

    emb_t = 0.0
    if m.tied_embeddings and p > 1:
        emb_t = _ring("all-reduce", 2, gb * m.vocab * m.hidden / t, alpha, bw[intra["pipeline"]])[0]
    tail_total = tail_max + emb_t
    step = (mbs + (p - 1) / v) * t_mb_max + tail_total
    mem_total = best_mem[6]
    fits = mem_total <= hw.memory_bytes
    if not detail:
        return step, mem_total, fits, best_mem

    # ------------------------------------------------------------- the full plan
    rows = {r[0]: r for r in stage_rows}
    slow_row, dp_row = rows[slow], rows[tail_stage]
    n_slow, moe_slow = slow_row[1], slow_row[2]
    comms: list[Communication] = []

    def add(strategy: str, op: str, what: str, g: int, n: float, calls: int, key: str, stage: int,
            exposed: float | None = None) -> None:
        if g == 1 or calls == 0 or n == 0:
            return
        one, sent = _ring(op, g, n, alpha, bw[intra[key]])
        total_t = calls * one
        comms.append(Communication(strategy, op, what, g, n, calls, calls * sent, intra[key], total_t,
                                   total_t if exposed is None else exposed, stage))

    if sp:
        for op in ("all-gather", "reduce-scatter"):  # each replaces one of the all-reduces' two halves
            add("tensor", op, "layer activations (sequence parallel)", t, tp_payload,
                n_slow * tp_calls_layer * mbs, "tensor", slow)
    else:
        add("tensor", "all-reduce", "layer activations", t, tp_payload, n_slow * tp_calls_layer * mbs, "tensor",
            slow)
    if c > 1:
        fwd_calls = cp_calls_layer - 1
        cp_exposed = slow_row[9] * mbs
        cp_total = n_slow * cp_calls_layer * cp_call * mbs
        share = cp_exposed / cp_total if cp_total else 0.0
        ag_t = n_slow * fwd_calls * cp_call * mbs
        add("context", "all-gather", "keys and values", c, cp_payload, n_slow * fwd_calls * mbs, "context", slow,
            ag_t * share)
        add("context", "reduce-scatter", "key and value gradients", c, cp_payload, n_slow * mbs, "context", slow,
            (cp_total - ag_t) * share)
    add("expert", "all-to-all", "routed tokens (dispatch and combine)", e, ep_payload,
        moe_slow * ep_calls_layer * mbs, "expert", slow)
    add("pipeline", "send-recv", "activations and their gradients at stage boundaries", p, pp_payload,
        pp_calls * mbs, "pipeline", slow)
    if m.tied_embeddings and p > 1:
        add("pipeline", "all-reduce", "tied embedding gradients (first and last stage)", 2,
            gb * m.vocab * m.hidden / t, 1, "pipeline", p - 1)
    dense_p, expert_p = dp_row[3], dp_row[4]
    z_exposed_total = dp_row[12] * mbs
    dp_entries = []
    for label, g, params, key in (("", n_dense_dp, dense_p, "data"), ("expert ", n_exp_dp, expert_p, "expert_data")):
        if z == 0:
            dp_entries.append(("all-reduce", label + "gradients", g, gb * params, 1, key))
        elif z == 1:
            dp_entries.append(("reduce-scatter", label + "gradients", g, gb * params, 1, key))
            dp_entries.append(("all-gather", label + "updated weights", g, pb * params, 1, key))
        elif z == 2:
            dp_entries.append(("reduce-scatter", label + "gradients (every microbatch)", g, gb * params, mbs, key))
            dp_entries.append(("all-gather", label + "updated weights", g, pb * params, 1, key))
        else:
            gathers = 3 if par.recompute == "full" else 2
            dp_entries.append(("all-gather", label + "weights (forward and backward, every microbatch)", g,
                               pb * params, gathers * mbs, key))
            dp_entries.append(("reduce-scatter", label + "gradients (every microbatch)", g, gb * params, mbs, key))
    raw = [(op, what, g, n, calls, key, calls * _ring(op, g, n, alpha, bw[intra[key]])[0])
           for op, what, g, n, calls, key in dp_entries if g > 1 and n > 0]
    overlapped = sum(x[6] for x in raw if not (z in (1, 2) and x[0] == "all-gather"))
    exposed_overlapped = tail_max - sum(x[6] for x in raw if z in (1, 2) and x[0] == "all-gather")
    if z >= 2:
        exposed_overlapped += z_exposed_total
    for op, what, g, n, calls, key, total_t in raw:
        if z in (1, 2) and op == "all-gather":
            exposed = total_t
        else:
            exposed = total_t * max(0.0, exposed_overlapped) / overlapped if overlapped else 0.0
        add("data", op, what, g, n, calls, key, tail_stage, exposed)

    compute_time = mbs * slow_row[7]
    bubble_time = (p - 1) / v * t_mb_max
    exposed_comm = step - compute_time - bubble_time
    tokens_per_s = ctx.global_batch * m.seq_len / step if step > 0 else 0.0
    hw_flops = ctx.hardware_flops[par.recompute]
    util = step * hw.gpus * ctx.peak_rate
    mem = DeviceMemory(best_mem[1], best_mem[2], best_mem[3], best_mem[1] + best_mem[2] + best_mem[3],
                       best_mem[4], best_mem[5], mem_total, mem_total / GB, mem_total / GIB, hw.memory_bytes,
                       hw.memory_bytes / GIB, hw.memory_bytes - mem_total, fits,
                       max(zip(best_mem[1:6], ("params", "grads", "optimizer", "activations", "buffers")))[1],
                       best_mem[0])
    stages = tuple(
        StagePlacement(r[0], tuple(i for a, b in r[13] for i in range(a, b)), r[2], r[0] == 0, r[0] == p - 1,
                       experts_local if m.experts > 1 else 0, r[3] + r[4], r[5], r[6])
        for r in stage_rows
    )
    per_stage = tuple(r[1] for r in stage_rows)
    uneven = ""
    if v == 1 and len(set(per_stage)) > 1:
        uneven = (f"{m.layers} layers do not divide into {p} stages: the last {m.layers % p} stages hold "
                  f"{m.layers // p + 1} layers, the others {m.layers // p}")
    strides = dict(zip(RANK_ORDER, (s_dp, s_pp, s_cp, s_ep, s_tp)))
    ranks = None
    if hw.gpus <= MAX_LISTED_RANKS:
        ranks = tuple((r, r // s_dp, r // s_pp % p, r // s_cp % c, r // s_ep % e, r % t, r // hw.gpus_per_node)
                      for r in range(hw.gpus))
    days = None
    if ctx.tokens is not None:
        days = ctx.tokens / (ctx.global_batch * m.seq_len) * step / 86400
    return Plan(
        par, micro, ctx.global_batch, mbs, hw.gpus, -(-hw.gpus // hw.gpus_per_node), per_stage, uneven, stages, mem,
        tuple(comms), compute_time, exposed_comm, bubble_time, step, (p - 1) / (v * mbs),
        bubble_time / step if step > 0 else 0.0, tokens_per_s, ctx.model_flops, hw_flops,
        ctx.model_flops / util if util > 0 else 0.0, hw_flops / util if util > 0 else 0.0, days, RANK_ORDER,
        strides, ranks,
    )


def plan(m: Model, micro_batch: int, global_batch: int, hw: Hardware, par: Parallel,
         precision: str = "bf16-adam", tokens: float | None = None) -> Plan:
    """Partition, memory per device, communications and step time of one configuration.

    ``step = (m + (p−1)/v)·t_mb + t_tail`` seconds (the assumptions are in the
    module docstring). Raises :class:`CalcError` for impossible combinations
    (see :func:`check_combination`); a plan that does not fit in memory is
    returned with ``memory_per_device.fits`` False and the binding term named.

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> hw = hardware(64, 80e9, 989e12, 450e9, 50e9)
    >>> p = plan(llama, 1, 512, hw, parallel(data=8, tensor=8, zero=1, sequence_parallel=True,
    ...                                      recompute="selective"))
    >>> p.microbatches_per_step, p.memory_per_device.fits, [c.strategy for c in p.communications][:2]
    (64, True, ['tensor', 'tensor'])
    """
    rec = _precision(precision)
    mbs = check_combination(m, micro_batch, global_batch, hw, par)
    tok = None if tokens is None else real("tokens", tokens, maximum=1e16, unit="tokens")
    ctx = _Ctx(m, hw, rec, global_batch, tok)
    return _evaluate(ctx, par, micro_batch, mbs, True)
