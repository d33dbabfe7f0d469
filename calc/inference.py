"""Serving a model: memory per device, prefill, decode, and what crosses devices per token.

A *replica* serves ``batch`` sequences at once on ``t·p·c·e`` GPUs; ``data`` replicas
serve independent batches (``gpus = data·pipeline·context·expert·tensor``, ranks laid out
as :data:`calc.plan.SERVING_RANK_ORDER`, replicas outermost, tensor innermost). Inside a replica:

- tensor parallelism ``t`` splits every layer's weights and KV heads (Megatron's layout:
  two all-reduces of the layer's output per layer per step, one more after the
  vocabulary-parallel embedding, and the logits gathered after the head);
- pipeline parallelism ``p`` gives each stage its layers; a decode step runs the batch as
  ``m = min(p, B)`` microbatches so that every stage has work, and hands each one's hidden
  state to the next stage (and the sampled tokens back to the first);
- context parallelism ``c`` splits each sequence's KV cache (``L/c`` tokens per rank):
  prefill runs ring attention; a decode step runs the new token's query against each rank's
  part and all-gathers the partial outputs and their softmax statistics to merge them;
- expert parallelism ``e`` spreads the experts of MoE layers; its ranks run attention
  data-parallel, each on ``B/e`` of the sequences, and exchange routed tokens by
  all-to-all (dispatch and combine) in every MoE layer.

**Memory per device** (the most loaded stage): the weights at the serving precision, the
KV cache of its sequences at full context (prompt and output), the prefill's activation
working set and a stated reserve (``hardware.reserve``). The largest number of concurrent
sequences fills what the weights and reserve leave::

    max sequences per replica = e · ⌊(capacity − reserve − weights) / (KV + activations per sequence)⌋

**Time.** Prefill runs the prompts through every stage once (:func:`calc.decode.prefill_layer`,
compute-bound); its logits give the first output token, so time to first token = prefill.
A decode step (:func:`calc.decode.decode_layer`, memory-bound at small batch) takes::

    t_step = max(Σ_s t_s(B/m) + (p − 1)·t_send + t_loop,  m · max_s t_s(B/m))

with ``t_s`` a stage's compute and exposed collectives for one microbatch (nothing overlaps
in decode). ``t_step`` is the inter-token latency; the mean over the output is the step at
the mean context ``prompt + output/2`` (attention grows linearly with the context). A
replica generates ``B/t_step`` tokens per second.

**Serving precisions** (:data:`SERVING_PRECISIONS`): the layers' weight matrices are stored at
the precision; embeddings, the output head, norms, biases and routers stay 16-bit, as GPTQ,
AWQ and vLLM's fp8 checkpoints leave them. fp8 and int8 run their GEMMs on fp8/int8 tensor
cores (W8A8: the profile's fp8 or int8 peak); int4 is weight-only (4 bits and a 16-bit scale
per group of 128 weights, dequantized into bf16 GEMMs). Attention runs in 16 bits.

Not modelled: queueing and request arrival (continuous batching keeps the batch full; the
model sees a steady batch), chunked prefill and prefill interleaved with decode steps,
speculative decoding, prefix caching, paged-allocation waste (PagedAttention keeps it under
one block per sequence), CUDA-graph launch savings beyond the profile's launch overhead, and
load imbalance between experts.

Sources: Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102;
Shoeybi et al. 2019 (Megatron layout); Kwon et al. 2023 (vLLM); Yu et al. 2022 (Orca,
iteration-level batching); the JAX scaling book, "All About Transformer Inference" (roofline
bounds, :func:`decode_roofline`); Frantar et al. 2022 (GPTQ), Lin et al. 2023 (AWQ), Xiao et al.
2022 (SmoothQuant, W8A8).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import fsum
from types import MappingProxyType

from .check import count, real
from .decode import EAGER_LAUNCH_S, decode_layer, embedding_time, experts_touched, head, PrefillLayer, prefill_layer
from .errors import CalcError
from .hardware import GIB, Hardware
from .jsontext import plain
from .kvcache import kv_bytes_per_token, kv_element_bytes, kv_heads_per_rank
from .memory import MAX_DEGREE
from .model import FLASH, MAX_SEQ_LEN, Model, layer_params
from .network import collective_time, group_link
from .plan import SERVING_RANK_ORDER, Communication, StagePlacement, check_degrees, chunk_ranges, layout, parallel

__all__ = ["ServingPrecision", "SERVING_PRECISIONS", "serving_precision", "Serving", "serving", "Split", "split",
           "check_serving_split", "gemm_hardware", "ServingMemory", "Inference", "infer", "decode_roofline",
           "DecodeRoofline", "ACTIVATION_BYTES", "model_weights", "DecodePoint", "decode_points",
           "check_batch"]

#: Bytes of one activation element while serving (bf16).
ACTIVATION_BYTES = 2.0
GB = 1e9


@dataclass(frozen=True, slots=True)
class ServingPrecision:
    """How the layers' weight matrices are stored and multiplied."""

    name: str
    weight_bytes: float  #: bytes per weight of the layers' matrices
    compute_dtype: str  #: the profile peak the GEMMs run at (``Profile.peak_flops`` key)
    description: str


#: The serving precisions. Sources: Micikevicius et al. 2022, "FP8 Formats for Deep Learning"
#: (fp8 E4M3 inference); Xiao et al. 2022, SmoothQuant (W8A8 int8); Frantar et al. 2022, GPTQ, and
#: Lin et al. 2023, AWQ (4-bit weight-only, group size 128).
SERVING_PRECISIONS = MappingProxyType({p.name: p for p in (
    ServingPrecision("bf16", 2.0, "bf16", "bf16 weights and GEMMs"),
    ServingPrecision("fp16", 2.0, "fp16", "fp16 weights and GEMMs"),
    ServingPrecision("fp8", 1.0, "fp8", "fp8 weights and activations (W8A8) on fp8 tensor cores"),
    ServingPrecision("int8", 1.0, "int8", "int8 weights and activations (W8A8, SmoothQuant) on int8 tensor cores"),
    ServingPrecision("int4", 0.5 + 2.0 / 128, "bf16",
                     "int4 weight-only (GPTQ, AWQ): 4 bits and a 16-bit scale per 128 weights, bf16 GEMMs"),
)})


def serving_precision(name: str) -> ServingPrecision:
    """The serving precision ``name``.

    >>> serving_precision("int4").weight_bytes, serving_precision("fp8").compute_dtype
    (0.515625, 'fp8')
    """
    if name not in SERVING_PRECISIONS:
        raise CalcError("weight_precision", "one of " + ", ".join(SERVING_PRECISIONS), name)
    return SERVING_PRECISIONS[name]


# ---------------------------------------------------------------------------- what is served, on what split


@dataclass(frozen=True, slots=True)
class Serving:
    """The workload of one replica: a steady batch of sequences."""

    batch: int  #: sequences decoded together by one replica
    prompt_tokens: int
    output_tokens: int
    weight_precision: ServingPrecision
    kv_precision: str
    kv_bytes: float  #: bytes per cached element
    max_context: int | None  #: the model's context window, when given
    prefill_chunk: int | None = None  #: most prompt tokens one prefill pass holds (None: the batch's prompts)
    cuda_graphs: bool = True  #: decode steps replayed as CUDA graphs; False: every kernel launched by the CPU

    @property
    def launch_s(self) -> float:
        """The least time a decode kernel takes: the CPU's launch time without CUDA graphs, else 0."""
        return 0.0 if self.cuda_graphs else EAGER_LAUNCH_S

    @property
    def context(self) -> int:
        """Tokens a sequence holds at the end: prompt and output."""
        return self.prompt_tokens + self.output_tokens

    @property
    def mean_context(self) -> float:
        """Mean cached tokens over the decode steps: ``prompt + output/2``."""
        return self.prompt_tokens + self.output_tokens / 2


def serving(batch: int, prompt_tokens: int, output_tokens: int, weight_precision: str = "bf16",
            kv_precision: str = "bf16", max_context: int | None = None, prefill_chunk: int | None = None,
            cuda_graphs: bool = True) -> Serving:
    """Check the serving section; prompt and output must fit in ``max_context`` when given.

    ``prefill_chunk`` bounds the prompt tokens one prefill pass holds (vLLM's
    ``max_num_batched_tokens`` with chunked prefill), and so the activations it keeps; the
    prefill's time is that of all the batch's prompts either way. ``cuda_graphs`` false launches every
    decode kernel from the CPU (:data:`calc.decode.EAGER_LAUNCH_S` each, at least), as engines
    without CUDA graphs do (FasterTransformer; vLLM's ``--enforce-eager``).

    >>> serving(8, 1024, 256).context
    1280
    >>> serving(8, 8000, 500, max_context=8192)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: output_tokens must be <= max_context − prompt_tokens = 192, got 500
    """
    b = count("batch", batch)
    prompt = count("prompt_tokens", prompt_tokens, maximum=MAX_SEQ_LEN)
    out = count("output_tokens", output_tokens, maximum=MAX_SEQ_LEN)
    prec = serving_precision(weight_precision)
    kv_b = kv_element_bytes(kv_precision)
    if max_context is not None:
        ctx = count("max_context", max_context, maximum=MAX_SEQ_LEN)
        if prompt >= ctx:
            raise CalcError("prompt_tokens", f"< max_context ({ctx}) to leave room for an output token", prompt)
        if prompt + out > ctx:
            raise CalcError("output_tokens", f"<= max_context − prompt_tokens = {ctx - prompt}", out)
    chunk = None if prefill_chunk is None else count("prefill_chunk", prefill_chunk, maximum=MAX_SEQ_LEN)
    if not isinstance(cuda_graphs, bool):
        raise CalcError("cuda_graphs", "true or false", cuda_graphs)
    return Serving(b, prompt, out, prec, kv_precision, kv_b, max_context, chunk, cuda_graphs)


@dataclass(frozen=True, slots=True)
class Split:
    """Degrees of a serving split."""

    data: int = 1  #: independent replicas
    tensor: int = 1
    pipeline: int = 1
    context: int = 1
    expert: int = 1

    @property
    def per_replica(self) -> int:
        """GPUs of one replica: ``t·p·c·e``."""
        return self.tensor * self.pipeline * self.context * self.expert


def split(data: int = 1, tensor: int = 1, pipeline: int = 1, context: int = 1, expert: int = 1) -> Split:
    """Check each degree on its own (:func:`check_serving_split` checks them against the model, with
    :func:`calc.split.check_split`, the rule training uses).

    >>> split(data=2, tensor=4).per_replica
    4
    """
    return Split(*(count(n, x, maximum=MAX_DEGREE) for n, x in
                   (("data_parallel", data), ("tensor_parallel", tensor), ("pipeline_parallel", pipeline),
                    ("context_parallel", context), ("expert_parallel", expert))))


def check_serving_split(m: Model, sv: Serving, hw: Hardware, sp: Split) -> None:
    """Reject a split the model or the cluster cannot run, with the rule it breaks.

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8)
    >>> check_serving_split(llama, serving(8, 512, 128), hardware(8, profile_name="h100-sxm5-80gb"), split(tensor=3))
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: gpus must be a multiple of tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = 3, got 8
    """
    c, e = sp.context, sp.expert
    check_degrees(m, hw.gpus, parallel(sp.data, sp.tensor, sp.pipeline, c, e))
    check_batch(sv, sp)
    if c > 1 and m.attention not in FLASH:
        raise CalcError("context_parallel", "1 with standard attention (ring attention needs a fused, flash kernel)",
                        c)
    if c > 1 and sv.prompt_tokens % (2 * c):
        raise CalcError("context_parallel",
                        f"such that 2 × context_parallel divides prompt_tokens ({sv.prompt_tokens}) "
                        "(load-balanced causal split)", c)


def check_batch(sv: Serving, sp: Split) -> None:
    """The batch's one rule with the split: the expert ranks split it for attention."""
    if sv.batch % sp.expert:
        raise CalcError("batch", f"a multiple of expert_parallel ({sp.expert}): the expert ranks split the batch for "
                        "attention", sv.batch)


def gemm_hardware(hw: Hardware, prec: ServingPrecision, flops_per_gpu: float | None = None) -> Hardware:
    """``hw`` (16-bit) with the peak its GEMMs run at for ``prec``: the profile's fp8 or int8 peak.

    >>> from calc.hardware import hardware
    >>> gemm_hardware(hardware(8, profile_name="h100-sxm5-80gb"), serving_precision("fp8")).flops_per_gpu
    1979000000000000.0
    >>> gemm_hardware(hardware(8, profile_name="a100-sxm4-80gb"), serving_precision("fp8"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: weight_precision must be a precision the a100-sxm4-80gb profile has a peak for (...no fp8...'
    """
    dtype = prec.compute_dtype
    if flops_per_gpu is not None:
        return replace(hw, flops_per_gpu=real("flops_per_gpu", flops_per_gpu, minimum=1e6, maximum=1e21))
    if dtype in ("bf16", "fp16"):
        return hw
    peaks = hw.gpu.peak_flops
    if hw.gpu.name == "custom" or dtype not in peaks:
        have = ", ".join(peaks) if hw.gpu.name != "custom" else "only what is given by hand"
        raise CalcError("weight_precision", f"a precision the {hw.gpu.name} profile has a peak for (its peak_flops "
                        f"has {have} and no {dtype}; or give hardware.flops_per_gpu)", prec.name)
    return replace(hw, flops_per_gpu=peaks[dtype])


# ---------------------------------------------------------------------------- what each stage holds


@dataclass(frozen=True, slots=True)
class StageShape:
    """What one device of a pipeline stage holds."""

    stage: int
    first_layer: int
    layers: int
    moe_layers: int
    first: bool  #: holds the embedding
    last: bool  #: holds the final norm and the output head
    params: float  #: weights on one device
    weight_bytes: float  #: at the serving precision
    kv_bytes_per_sequence: float  #: one sequence at full context, this device's layers, heads and tokens
    activation_bytes_per_token: float  #: the prefill's working set per prompt token on this device
    logit_bytes_per_sequence: float  #: the last token's fp32 logits (last stage)


def _layer_parts(m: Model, prec: ServingPrecision, t: int,
                 moe: bool) -> tuple[tuple[float, float], tuple[float, float]]:
    """((parameters, bytes) of a layer's attention, norms and router; (parameters, bytes) of one MLP, one
    expert's in an MoE layer) on one tensor-parallel rank: matrices at the precision, the rest 16-bit."""
    h, f_t = m.hidden, m.ffn_hidden // t
    b = 1 if m.biases else 0
    kv_w = kv_heads_per_rank(m, t) * m.head_dim
    lp = layer_params(m, moe)
    attn_mat = 2 * h * (h // t) + 2 * h * kv_w
    attn_rest = b * (h // t + 2 * kv_w) + lp.replicated
    mlp_mat = (3 if m.gated_mlp else 2) * h * f_t
    mlp_rest = b * (2 * f_t if m.gated_mlp else f_t) + lp.mlp_replicated
    w = prec.weight_bytes
    return (attn_mat + attn_rest, w * attn_mat + 2.0 * attn_rest), (mlp_mat + mlp_rest, w * mlp_mat + 2.0 * mlp_rest)


def _ends(m: Model, t: int, p: int) -> tuple[float, float]:
    """Parameters (16-bit) of the first stage's embedding and of the last stage's norm and head."""
    vocab_t = -(-m.vocab // t)
    emb = vocab_t * m.hidden + (m.seq_len * m.hidden if m.learned_positions else 0)
    out = m.hidden * (2 if m.biases else 1) + (vocab_t * m.hidden if not m.tied_embeddings or p > 1 else 0)
    return emb, out


def _shapes(m: Model, sv: Serving, sp: Split, stage_layers: tuple[int, ...]) -> tuple[StageShape, ...]:
    t, p, c, e = sp.tensor, sp.pipeline, sp.context, sp.expert
    (a_n, a_b), (f_n, f_b) = _layer_parts(m, sv.weight_precision, t, False)
    (am_n, am_b), (fm_n, fm_b) = _layer_parts(m, sv.weight_precision, t, True)
    local = m.experts // e
    emb, out = _ends(m, t, p)
    kv_w = kv_heads_per_rank(m, t) * m.head_dim
    f_up = (2 if m.gated_mlp else 1) * (m.ffn_hidden // t) * (m.top_k if m.experts > 1 else 1)
    act_token = ACTIVATION_BYTES * (2 * m.hidden + m.hidden // t + 2 * kv_w + f_up)
    vocab_t = -(-m.vocab // t)
    shapes, start = [], 0
    for s, n in enumerate(stage_layers):
        n_moe = m.moe_layers_in(start, start + n)
        ends = (emb if s == 0 else 0) + (out if s == p - 1 else 0)
        params = (n - n_moe) * (a_n + f_n) + n_moe * (am_n + local * fm_n) + ends
        nbytes = (n - n_moe) * (a_b + f_b) + n_moe * (am_b + local * fm_b) + 2.0 * ends
        shapes.append(StageShape(s, start, n, n_moe, s == 0, s == p - 1, params, nbytes,
                                 2.0 * n * kv_w * sv.kv_bytes * -(-sv.context // c), act_token,
                                 4.0 * vocab_t if s == p - 1 else 0.0))
        start += n
    return tuple(shapes)


def model_weights(m: Model, prec: ServingPrecision, tokens: float | None = None) -> tuple[float, float]:
    """(bytes of the whole model at ``prec``, parameters a token passes through).

    With ``tokens``, the bytes a decode step over that many tokens reads: every dense weight and,
    of each MoE layer, the experts some token is routed to (:func:`calc.decode.experts_touched`).

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> [round(x / 1e9, 2) for x in model_weights(llama, serving_precision("bf16"))]
    [16.06, 8.03]
    """
    (a_n, a_b), (f_n, f_b) = _layer_parts(m, prec, 1, False)
    (am_n, am_b), (fm_n, fm_b) = _layer_parts(m, prec, 1, True)
    emb, out = _ends(m, 1, 1)
    n_moe = m.moe_layers_in(0, m.layers)
    n_dense = m.layers - n_moe
    read = m.experts if tokens is None else experts_touched(tokens, m.experts, m.top_k)
    nbytes = n_dense * (a_b + f_b) + n_moe * (am_b + read * fm_b) + 2.0 * (emb + out)
    active = n_dense * (a_n + f_n) + n_moe * (am_n + m.top_k * fm_n) + emb + out
    return nbytes, active


# ---------------------------------------------------------------------------- memory per device


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """Memory of one device of the most loaded stage (bytes; GB = 1e9 B, GiB = 2^30 B)."""

    params_bytes: float  #: weights at the serving precision
    kv_cache_bytes: float  #: the KV cache of the device's sequences at full context
    activations_bytes: float  #: the prefill's working set (one layer at a time; no backward pass)
    reserve_bytes: float  #: CUDA context, NCCL buffers, allocator fragmentation (``hardware.reserve``)
    total_bytes: float
    total_gb: float
    total_gib: float
    capacity_bytes: float
    capacity_gib: float
    headroom_bytes: float  #: capacity − total (negative: does not fit)
    fits: bool
    binding_term: str  #: the largest term: params | kv_cache | activations
    stage: int
    sequences: int  #: sequences this device holds (batch / expert)
    max_sequences: int  #: the most that fit on this stage's devices


_TERMS = ("params", "kv_cache", "activations")


def _activations(sh: StageShape, sv: Serving, c: int, sequences: int) -> float:
    """The prefill working set of ``sequences`` prompts: ``min(n·⌈P/c⌉, chunk)`` tokens and their logits."""
    tokens = sequences * -(-sv.prompt_tokens // c)
    if sv.prefill_chunk is not None:
        tokens = min(tokens, sv.prefill_chunk)
    return tokens * sh.activation_bytes_per_token + sequences * sh.logit_bytes_per_sequence


def _max_sequences(sh: StageShape, hw: Hardware, sv: Serving, c: int) -> int:
    """The most sequences whose KV cache and prefill fit beside the weights and the reserve."""
    free = hw.memory_bytes - hw.reserve_bytes - sh.weight_bytes
    per_token = -(-sv.prompt_tokens // c) * sh.activation_bytes_per_token
    best = max(0, int(free // (sh.kv_bytes_per_sequence + per_token + sh.logit_bytes_per_sequence)))
    if sv.prefill_chunk is not None:  # past the chunk, activations stop growing with the sequences
        capped = (free - sv.prefill_chunk * sh.activation_bytes_per_token) // (sh.kv_bytes_per_sequence
                                                                                + sh.logit_bytes_per_sequence)
        best = max(best, int(capped))
    return best


def _memory(shapes: tuple[StageShape, ...], hw: Hardware, sv: Serving, c: int, sequences: int) -> ServingMemory:
    """The most loaded stage's device with ``sequences`` sequences on it."""
    def terms(sh: StageShape) -> tuple[float, float, float]:
        return sh.weight_bytes, sequences * sh.kv_bytes_per_sequence, _activations(sh, sv, c, sequences)

    heavy = max(shapes, key=lambda sh: fsum(terms(sh)))
    params, kv, acts = terms(heavy)
    total = fsum((params, kv, acts, hw.reserve_bytes))
    fit = min(_max_sequences(sh, hw, sv, c) for sh in shapes)
    return ServingMemory(params, kv, acts, hw.reserve_bytes, total, total / GB, total / GIB, hw.memory_bytes,
                         hw.memory_bytes / GIB, hw.memory_bytes - total, total <= hw.memory_bytes,
                         max(zip((params, kv, acts), _TERMS))[1], heavy.stage, sequences, fit)


def _refuse_unfit(mem: ServingMemory, sv: Serving, sp: Split, hw: Hardware) -> None:
    """One line saying how much a batch that does not fit is over, and what binds."""
    gib = 2.0**30
    over = -mem.headroom_bytes / gib
    if mem.max_sequences == 0 and mem.params_bytes + mem.reserve_bytes >= mem.capacity_bytes:
        raise CalcError("tensor_parallel", f"large enough for the weights to fit: stage {mem.stage} holds "
                        f"{mem.params_bytes / gib:.4g} GiB of weights per GPU, with the "
                        f"{mem.reserve_bytes / gib:.4g} GiB reserve over the GPU's {mem.capacity_gib:.4g} GiB "
                        "(raise tensor_parallel or pipeline_parallel, or quantize the weights)", sp.tensor)
    most = mem.max_sequences * sp.expert
    raise CalcError("batch", f"at most {most} to fit in device memory: {sv.batch} sequences of {sv.context} "
                    f"tokens need {mem.total_gib:.4g} GiB per GPU on stage {mem.stage}, {over:.4g} GiB over its "
                    f"{mem.capacity_gib:.4g} GiB ({mem.binding_term.replace('_', ' ')} binds: "
                    f"{max(mem.params_bytes, mem.kv_cache_bytes, mem.activations_bytes) / gib:.4g} GiB)", sv.batch)


# ---------------------------------------------------------------------------- time of a step


@dataclass(frozen=True, slots=True)
class _Setup:
    """What stays fixed while a batch is timed: model, serving, split, hardware, stages, caches."""

    m: Model
    sv: Serving
    sp: Split
    hw: Hardware  #: 16-bit peak (attention, element-wise)
    gemm_hw: Hardware  #: the peak the weights' GEMMs run at
    shapes: tuple[StageShape, ...]
    strides: dict
    memo: dict

    def collective(self, op: str, axes: tuple[tuple[int, int], ...], n: float) -> float:
        """Seconds of one ``op`` of ``n`` bytes over the group spanned by ``axes`` (cached)."""
        key = ("c", op, axes, n)
        if key not in self.memo:
            self.memo[key] = collective_time(op, group_link(self.hw, axes), n)[0]
        return self.memo[key]


@dataclass(frozen=True, slots=True)
class _Transfer:
    """One kind of collective of one stage: ``calls`` of ``op`` over ``axes``, ``n`` bytes each."""

    strategy: str
    op: str
    what: str
    axes: tuple[tuple[int, int], ...]
    n: float
    calls: int
    stage: int


def _transfers(su: _Setup, sh: StageShape, tokens: int, sequences: int) -> list[_Transfer]:
    """The collectives of one forward pass of stage ``sh`` over ``tokens`` tokens of ``sequences`` sequences.

    A decode step has one token per sequence; a prefill ``⌈prompt/c⌉``.
    """
    m, sp = su.m, su.sp
    t, c, e, h, ab = sp.tensor, sp.context, sp.expert, m.hidden, ACTIVATION_BYTES
    out: list[_Transfer] = []
    if t > 1:
        tp = ((1, t),)
        out.append(_Transfer("tensor", "all-reduce", "layer outputs (after attention and after the MLP)", tp,
                             tokens * h * ab, 2 * sh.layers, sh.stage))
        if sh.first:
            out.append(_Transfer("tensor", "all-reduce", "embedding output (vocabulary-parallel)", tp,
                                 tokens * h * ab, 1, sh.stage))
        if sh.last:
            out.append(_Transfer("tensor", "all-gather", "logits of the last token (vocabulary-parallel head)", tp,
                                 sequences * -(-m.vocab // t) * t * ab, 1, sh.stage))
    if e > 1 and sh.moe_layers:
        out.append(_Transfer("expert", "all-to-all", "routed tokens (dispatch and combine)",
                             ((su.strides["expert"], e),), tokens * m.top_k * h * ab, 2 * sh.moe_layers, sh.stage))
    if c > 1 and tokens == sequences:  # decode: merge each rank's part of the attention
        out.append(_Transfer("context", "all-gather", "partial attention outputs and softmax statistics",
                             ((su.strides["context"], c),), c * sequences * (h // t + m.heads // t) * 4.0,
                             sh.layers, sh.stage))
    return out


def _transfer_time(su: _Setup, xs: list[_Transfer], launch_s: float = 0.0) -> float:
    return fsum(x.calls * max(su.collective(x.op, x.axes, x.n), launch_s) for x in xs)


@dataclass(frozen=True, slots=True)
class StageStep:
    """One decode microbatch on one device of a stage (seconds, bytes, FLOPs); stages holding the same layers share
    one."""

    compute_s: float
    communication_s: float  #: its collectives (nothing overlaps in decode)
    weight_bytes: float
    kv_bytes: float
    flops: float

    @property
    def time_s(self) -> float:
        """Compute and collectives."""
        return self.compute_s + self.communication_s


def _stage_steps(su: _Setup, sequences: int, context: int) -> tuple[StageStep, ...]:
    """One decode microbatch of ``sequences`` on each stage, in order. Stages holding the same layers are costed once,
    and again only for another split, serving or batch (``su.memo``): a search of thousands of stages per split spent
    most of its time rebuilding the same step per stage (issue 11's bounded search, 5.6 -> 2.4 s with the prefill's
    layers also costed once)."""
    steps, same = [], {}
    for sh in su.shapes:
        shape = (sh.layers, sh.moe_layers, sh.first, sh.last)
        if shape not in same:
            key = ("step", su.sp, su.sv, *shape, sequences, context)
            if key not in su.memo:
                su.memo[key] = _stage_step_once(su, sh, sequences, context)
            same[shape] = su.memo[key]
        steps.append(same[shape])
    return tuple(steps)


def _stage_step_once(su: _Setup, sh: StageShape, sequences: int, context: int) -> StageStep:
    m, sv, sp = su.m, su.sv, su.sp
    launch = sv.launch_s
    kw = dict(t=sp.tensor, c=sp.context, e=sp.expert, weight_bytes=sv.weight_precision.weight_bytes,
              kv_bytes=sv.kv_bytes, act_bytes=ACTIVATION_BYTES, memo=su.memo, launch_s=launch)
    parts = []
    if sh.layers - sh.moe_layers:
        parts.append((sh.layers - sh.moe_layers, decode_layer(m, su.gemm_hw, su.hw, sequences, context, **kw)))
    if sh.moe_layers:
        parts.append((sh.moe_layers, decode_layer(m, su.gemm_hw, su.hw, sequences, context, moe=True, **kw)))
    compute = fsum(n * d.time_s for n, d in parts)
    wbytes = fsum(n * d.weight_bytes for n, d in parts)
    flops = fsum(n * d.flops for n, d in parts)
    if sh.first:
        compute += embedding_time(m, su.hw, sequences, launch_s=launch)
    if sh.last:
        hd = head(m, su.hw, sequences, sp.tensor, launch_s=launch)
        compute, wbytes, flops = compute + hd.time_s, wbytes + hd.weight_bytes, flops + hd.flops
    comm = _transfer_time(su, _transfers(su, sh, sequences, sequences), launch)
    return StageStep(compute, comm, wbytes, fsum(n * d.kv_bytes for n, d in parts), flops)


@dataclass(frozen=True, slots=True)
class _Step:
    """A decode step of the replica's batch: its time and what each stage does in one microbatch."""

    time_s: float
    without_communication_s: float
    microbatches: int
    micro_sequences: int
    send_s: float
    loop_s: float
    stages: tuple[StageStep, ...]


def _pipeline_links(su: _Setup) -> tuple[tuple, tuple]:
    p, s_pp = su.sp.pipeline, su.strides["pipeline"]
    return ((s_pp, p),), ((s_pp * (p - 1), 2),)


def _decode_step(su: _Setup, context: int) -> _Step:
    """``max(Σ_s t_s + (p−1)·t_send + t_loop, m·max_s t_s)`` for ``m = min(p, B/e)`` microbatches."""
    sp = su.sp
    per_device = su.sv.batch // sp.expert
    mbs = min(sp.pipeline, per_device)
    b = -(-per_device // mbs)
    steps = _stage_steps(su, b, context)
    send = loop = 0.0
    if sp.pipeline > 1:
        link, back = _pipeline_links(su)
        send = su.collective("send-recv", link, b * su.m.hidden * ACTIVATION_BYTES / sp.tensor)
        loop = su.collective("send-recv", back, b * 4.0)  # the sampled token ids, back to the first stage

    def period(times: list[float], hops: float) -> float:
        return max(fsum(times) + hops, mbs * max(times))

    time = period([st.time_s for st in steps], (sp.pipeline - 1) * send + loop)
    return _Step(time, period([st.compute_s for st in steps], 0.0), mbs, b, send, loop, steps)


def _prefill(su: _Setup) -> tuple[float, list[_Transfer], float]:
    """(seconds, transfers, exposed ring-attention seconds) of prefilling the batch's prompts, stage after stage."""
    m, sv, sp = su.m, su.sv, su.sp
    seqs = sv.batch // sp.expert
    tokens = seqs * -(-sv.prompt_tokens // sp.context)
    kw = dict(t=sp.tensor, c=sp.context, e=sp.expert, memo=su.memo)
    total, rows, ring = 0.0, [], 0.0
    layers: dict[bool, PrefillLayer] = {}  # a dense and an MoE layer, the same on every stage: costed once each

    def layer(moe: bool) -> PrefillLayer:
        if moe not in layers:
            layers[moe] = prefill_layer(m, su.gemm_hw, su.hw, seqs, sv.prompt_tokens, moe=moe, **kw)
        return layers[moe]

    for sh in su.shapes:
        parts = []
        if sh.layers - sh.moe_layers:
            parts.append((sh.layers - sh.moe_layers, layer(False)))
        if sh.moe_layers:
            parts.append((sh.moe_layers, layer(True)))
        total += fsum(n * pl.time_s for n, pl in parts)
        total += embedding_time(m, su.hw, tokens) if sh.first else 0.0
        total += head(m, su.hw, seqs, sp.tensor).time_s if sh.last else 0.0
        xs = _transfers(su, sh, tokens, seqs)
        if sp.context > 1:  # ring attention: c − 1 K/V hand-offs per layer, hidden behind the attention steps
            kv = 2.0 * tokens * kv_heads_per_rank(m, sp.tensor) * m.head_dim * ACTIVATION_BYTES
            cp = ((su.strides["context"], sp.context),)
            one = su.collective("send-recv", cp, kv)
            ring += fsum(n * (sp.context - 1) * max(0.0, one - pl.attention_s / sp.context) for n, pl in parts)
            xs.append(_Transfer("context", "send-recv", "keys and values around the ring", cp, kv,
                                sh.layers * (sp.context - 1), sh.stage))
            total -= _transfer_time(su, xs[-1:])  # counted below through its exposed part only
        total += _transfer_time(su, xs)
        rows += xs
    total += ring
    if sp.pipeline > 1:
        link, _ = _pipeline_links(su)
        n = tokens * m.hidden * ACTIVATION_BYTES / sp.tensor
        total += (sp.pipeline - 1) * su.collective("send-recv", link, n)
        rows.append(_Transfer("pipeline", "send-recv", "prompt hidden states to the next stage", link, n, 1, 0))
    return total, rows, ring


def _rows(su: _Setup, xs: list[_Transfer], repeat: int, exposed: dict | None = None) -> tuple[Communication, ...]:
    """One :class:`~calc.plan.Communication` per kind of transfer, on the stage where it costs most.

    ``repeat``: how often each stage runs its transfers per step (the decode microbatches);
    ``exposed``: per (strategy, op) the exposed seconds when less than the time (ring attention).
    """
    best: dict[tuple, tuple[float, _Transfer]] = {}
    for x in xs:
        cost = x.calls * su.collective(x.op, x.axes, x.n)
        key = (x.strategy, x.op, x.what)
        if key not in best or cost > best[key][0]:
            best[key] = (cost, x)
    rows = []
    for cost, x in best.values():
        link = group_link(su.hw, x.axes)
        one, sent = collective_time(x.op, link, x.n)
        calls = x.calls * repeat
        time = calls * one
        hidden = (exposed or {}).get((x.strategy, x.op))
        rows.append(Communication(x.strategy, x.op, x.what, link.size, x.n, calls, calls * sent, link.intra_node,
                                  time, time if hidden is None else min(time, hidden), x.stage,
                                  sent / one if one > 0 else 0.0))
    return tuple(rows)


def _decode_rows(su: _Setup, step: _Step) -> tuple[Communication, ...]:
    xs = [x for sh in su.shapes for x in _transfers(su, sh, step.micro_sequences, step.micro_sequences)]
    p = su.sp.pipeline
    if p > 1:
        link, back = _pipeline_links(su)
        xs.append(_Transfer("pipeline", "send-recv", "hidden states to the next stage", link,
                            step.micro_sequences * su.m.hidden * ACTIVATION_BYTES / su.sp.tensor, 1, 0))
        xs.append(_Transfer("pipeline", "send-recv", "sampled token ids back to the first stage", back,
                            step.micro_sequences * 4.0, 1, p - 1))
    return _rows(su, xs, step.microbatches)


# ---------------------------------------------------------------------------- the bound and the whole answer


@dataclass(frozen=True, slots=True)
class DecodeRoofline:
    """The JAX scaling book's bounds of one decode step (seconds; tokens/s)."""

    memory_s: float  #: (B·KV + weight bytes) / bandwidth: everything read once
    time_s: float  #: B·KV / bandwidth + max(2·B·P / FLOP/s, weight bytes / bandwidth)
    tokens_per_s: float  #: B / time_s


def decode_roofline(batch: float, kv_bytes_per_sequence: float, weight_bytes: float, params: float,
                    bandwidth: float, flops: float) -> DecodeRoofline:
    """A decode step can be no faster than reading every weight and cache once, nor than its GEMMs at peak.

    ``T ≥ B·KV/W_HBM + max(2·B·P/F, W_params/W_HBM)`` with ``W_HBM`` and ``F`` the bandwidth
    and FLOP/s of all the chips together (attention is always memory-bound). Source: the JAX
    scaling book, "All About Transformer Inference", "Theoretical estimates for LLM latency and
    throughput". Its pop quiz, a 30B model in int8 with 100 kB per token of KV cache at 8192
    context on 16 TPU v5e (8.1e11 B/s and 1.97e14 bf16 FLOP/s each), batch 4 and 256:

    >>> round(decode_roofline(4, 100e3 * 8192, 30e9, 30e9, 16 * 8.1e11, 16 * 1.97e14).memory_s * 1e3, 1)
    2.6
    >>> round(decode_roofline(256, 100e3 * 8192, 30e9, 30e9, 16 * 8.1e11, 16 * 1.97e14).time_s * 1e3)
    21
    """
    b = real("batch", batch, maximum=1e12)
    bw = real("bandwidth", bandwidth, minimum=1.0, maximum=1e24)
    f = real("flops", flops, minimum=1.0, maximum=1e27)
    kv = batch * kv_bytes_per_sequence / bw
    time = kv + max(2.0 * b * params / f, weight_bytes / bw)
    return DecodeRoofline(kv + weight_bytes / bw, time, b / time)


@dataclass(frozen=True, slots=True)
class Inference:
    """A serving plan and its estimated memory, latency and throughput."""

    parallel: dict  #: data, tensor, pipeline, context, expert (and interleave 1, as in ``plan``)
    batch: int  #: sequences per replica
    prompt_tokens: int
    output_tokens: int
    weight_precision: str
    kv_precision: str
    gpus: int
    nodes: int
    gpus_per_replica: int
    hardware_profile: str
    weights_bytes: float  #: the whole model at the serving precision
    kv_cache_bytes_per_token: float  #: the whole model, one token
    kv_cache_bytes_per_token_per_device: float  #: the most loaded stage's device, one token
    kv_cache_bytes_per_sequence: float  #: the whole model, one sequence of prompt + output tokens
    kv_heads_per_device: int
    kv_replicated: bool  #: tensor > kv_heads: each KV head is kept on several ranks
    memory_per_device: ServingMemory
    max_concurrent_sequences: int  #: per replica, each at prompt + output tokens
    prefill_time_s: float  #: the batch's prompts through every stage
    time_to_first_token_s: float  #: = prefill_time_s (its logits give the first token; no queueing)
    decode_time_per_token_s: float  #: the inter-token latency at the mean context, prompt + output/2
    decode_time_last_token_s: float  #: the same at the full context
    decode_floor_s: float  #: :func:`decode_roofline` for the replica: what no split can beat
    decode_microbatches: int  #: min(pipeline, batch/expert)
    decode_communication_s: float  #: what collectives and pipeline hand-offs add to a step
    decode_bound: str  #: what dominates the slowest stage's step: memory bandwidth, compute or communication
    request_latency_s: float  #: first token + (output − 1) decode steps
    tokens_per_s: float  #: generated tokens per second, all replicas
    tokens_per_s_per_replica: float
    tokens_per_s_per_device: float
    decode_bytes_per_device: float  #: read from HBM per step by one device of the slowest stage
    mbu: float  #: those bytes / (step × HBM bandwidth): memory-bandwidth utilisation
    mfu: float  #: decode model FLOPs / (step × replica GPUs × peak)
    prefill_mfu: float
    max_latency_s: float | None
    latency_bound_met: bool | None  #: decode_time_per_token_s <= max_latency_s, when given
    layers_per_stage: tuple[int, ...]
    stages: tuple[StagePlacement, ...]
    communications: tuple[Communication, ...]  #: per generated token (one decode step of the batch)
    prefill_communications: tuple[Communication, ...]  #: per prefill of the batch's prompts
    rank_order: tuple[str, ...]
    rank_strides: dict

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc infer --json`` prints (:func:`calc.jsontext.plain`: what
        ``dataclasses.asdict`` gives, in two thirds of its time; the inference calculator asks at every input)."""
        return plain(self)


def _setup(m: Model, sv: Serving, hw: Hardware, sp: Split, gemm_flops: float | None, memo: dict | None) -> _Setup:
    if hw.compute_efficiency is not None:
        raise CalcError("compute_efficiency", "blank when serving (a decode step is bound by memory, which the "
                        "one-efficiency model leaves out)", hw.compute_efficiency)
    if m.attention == "flash3" and hw.gpu.flash3_efficiency is None:
        raise CalcError("attention", f"flash or standard on {hw.gpu.name} (FlashAttention-3 needs a Hopper or "
                        "Blackwell GPU)", m.attention)
    check_serving_split(m, sv, hw, sp)
    gemm_hw = gemm_hardware(hw, sv.weight_precision, gemm_flops)
    lay = layout(m, parallel(sp.data, sp.tensor, sp.pipeline, sp.context, sp.expert), SERVING_RANK_ORDER)
    return _Setup(m, sv, sp, hw, gemm_hw, _shapes(m, sv, sp, lay.stage_layers), dict(lay.strides),
                  {} if memo is None else memo)


def _placements(su: _Setup, step: _Step, mem: ServingMemory) -> tuple[StagePlacement, ...]:
    m, sp = su.m, su.sp
    chunks = chunk_ranges(tuple(sh.layers for sh in su.shapes), 1)
    seqs = mem.sequences
    return tuple(
        StagePlacement(sh.stage, tuple(range(*chunks[sh.stage][0])), sh.moe_layers, sh.first, sh.last,
                       m.experts // sp.expert if m.experts > 1 else 0, sh.params,
                       fsum((sh.weight_bytes, seqs * sh.kv_bytes_per_sequence,
                             _activations(sh, su.sv, sp.context, seqs), su.hw.reserve_bytes)), st.time_s, st.compute_s)
        for sh, st in zip(su.shapes, step.stages))


def _bound(su: _Setup, st: StageStep) -> str:
    gpu = su.hw.gpu
    memory = (st.weight_bytes + st.kv_bytes) / (su.hw.hbm_bandwidth * gpu.hbm_efficiency)
    compute = st.flops / (su.gemm_hw.flops_per_gpu * gpu.gemm_efficiency)
    return max(zip((memory, compute, st.communication_s), ("memory bandwidth", "compute", "communication")))[1]


def _decode(m: Model, sv: Serving, hw: Hardware, sp: Split, gemm_flops: float | None, refuse: bool,
            memo: dict | None) -> tuple[_Setup, ServingMemory, _Step, float]:
    """The setup, the memory, the decode step at the mean context and the replica's roofline floor (s)."""
    return _decode_set_up(_setup(m, sv, hw, sp, gemm_flops, memo), refuse)


def _decode_set_up(su: _Setup, refuse: bool) -> tuple[_Setup, ServingMemory, _Step, float]:
    """:func:`_decode` of a setup already made."""
    m, sv, hw, sp = su.m, su.sv, su.hw, su.sp
    mem = _memory(su.shapes, hw, sv, sp.context, sv.batch // sp.expert)
    if not mem.fits and refuse:
        _refuse_unfit(mem, sv, sp, hw)
    mean = _decode_step(su, round(sv.mean_context))
    n = sp.per_replica
    weights_read, active = model_weights(m, sv.weight_precision, sv.batch)
    emb, _ = _ends(m, 1, 1)
    floor = decode_roofline(sv.batch, kv_bytes_per_token(m, sv.kv_bytes) * sv.mean_context, weights_read, active - emb,
                            n * hw.hbm_bandwidth, n * su.gemm_hw.flops_per_gpu).time_s
    return su, mem, mean, floor


@dataclass(frozen=True, slots=True)
class DecodePoint:
    """What a serving plan's decode gives at one batch size: the figures of :class:`Inference` with these
    names, computed as :func:`infer` computes them, without the prefill and the full-context step."""

    batch: int
    decode_time_per_token_s: float
    decode_floor_s: float
    tokens_per_s_per_replica: float
    memory_bytes: float  #: ``memory_per_device.total_bytes``


def decode_points(m: Model, sv: Serving, hw: Hardware, sp: Split, batches: list[int],
                  gemm_flops: float | None = None) -> list[DecodePoint]:
    """:func:`infer`'s decode figures for ``sv`` at each batch size of ``batches`` (the inference calculator's
    chart, about ten batch sizes at every input); a batch that does not fit is refused as :func:`infer` refuses it.
    The split is checked and its stages made once: they do not depend on the batch but for one rule
    (:func:`check_batch`, checked for each). Not in :func:`infer` itself: a search's splits are each costed once,
    and a setup kept per split only cost it time (issue 15).

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> hw, sv, sp = hardware(8, profile_name="h100-sxm5-80gb"), serving(16, 1024, 256), split(data=4, tensor=2)
    >>> (d,), r = decode_points(llama, sv, hw, sp, [16]), infer(llama, sv, hw, sp)
    >>> (d.decode_time_per_token_s, d.decode_floor_s, d.memory_bytes) == (
    ...     r.decode_time_per_token_s, r.decode_floor_s, r.memory_per_device.total_bytes)
    True
    """
    su = _setup(m, replace(sv, batch=sp.expert), hw, sp, gemm_flops, {})
    points = []
    for b in batches:
        sv_b = replace(sv, batch=b)
        check_batch(sv_b, sp)
        _, mem, mean, floor = _decode_set_up(replace(su, sv=sv_b), True)
        points.append(DecodePoint(b, mean.time_s, floor, b / mean.time_s, mem.total_bytes))
    return points


def infer(m: Model, sv: Serving, hw: Hardware, sp: Split, gemm_flops: float | None = None,
          max_latency: float | None = None, refuse: bool = True, memo: dict | None = None) -> Inference:
    """Memory, prefill, decode and the transfers of serving ``sv`` on ``sp`` (the model: module docstring).

    ``hw`` is the cluster at its 16-bit peak; the GEMMs run at :func:`gemm_hardware`'s (``gemm_flops``
    overrides it). A batch that does not fit is refused naming what binds (``refuse=False``
    returns it with ``memory_per_device.fits`` false, for :mod:`calc.infer_search`). ``memo`` is a
    cache that calls on the same model, hardware and precision may share (the search does).

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> r = infer(llama, serving(16, 1024, 256, prefill_chunk=8192), hardware(8, profile_name="h100-sxm5-80gb"),
    ...           split(data=4, tensor=2))
    >>> r.kv_cache_bytes_per_token, r.decode_bound, r.memory_per_device.fits
    (131072.0, 'memory bandwidth', True)
    >>> round(r.decode_time_per_token_s * 1e3, 2), round(r.decode_floor_s * 1e3, 2), r.max_concurrent_sequences
    (3.86, 2.76, 890)
    """
    su, mem, mean, floor = _decode(m, sv, hw, sp, gemm_flops, refuse, memo)
    last = _decode_step(su, sv.context)
    prefill, prefill_xs, ring = _prefill(su)
    itl = mean.time_s
    n = sp.per_replica
    active = model_weights(m, sv.weight_precision, sv.batch)[1]
    emb, _ = _ends(m, 1, 1)
    kv_token = kv_bytes_per_token(m, sv.kv_bytes)
    attn = 4.0 * m.layers * m.heads * m.head_dim
    decode_flops = 2.0 * sv.batch * (active - emb) + sv.batch * attn * sv.mean_context
    prefill_flops = sv.batch * sv.prompt_tokens * (2.0 * (active - emb) + attn * sv.prompt_tokens / 2)
    peak = n * su.gemm_hw.flops_per_gpu
    slow = max(mean.stages, key=lambda st: st.time_s)
    read = max(mean.microbatches * (st.weight_bytes + st.kv_bytes) for st in mean.stages)
    heavy = su.shapes[mem.stage]
    return Inference(
        {"data": sp.data, "tensor": sp.tensor, "pipeline": sp.pipeline, "context": sp.context, "expert": sp.expert,
         "interleave": 1}, sv.batch, sv.prompt_tokens, sv.output_tokens, sv.weight_precision.name, sv.kv_precision,
        hw.gpus, -(-hw.gpus // hw.gpus_per_node), n, hw.gpu.name, model_weights(m, sv.weight_precision)[0], kv_token,
        heavy.kv_bytes_per_sequence / -(-sv.context // sp.context), kv_token * sv.context,
        kv_heads_per_rank(m, sp.tensor), sp.tensor > m.kv_heads, mem, mem.max_sequences * sp.expert, prefill, prefill,
        itl, last.time_s, floor, mean.microbatches, itl - mean.without_communication_s, _bound(su, slow),
        prefill + (sv.output_tokens - 1) * itl, sp.data * sv.batch / itl, sv.batch / itl,
        sp.data * sv.batch / itl / hw.gpus,
        read, read / (itl * hw.hbm_bandwidth), decode_flops / (itl * peak), prefill_flops / (prefill * peak),
        max_latency, None if max_latency is None else itl <= max_latency, tuple(sh.layers for sh in su.shapes),
        _placements(su, mean, mem), _decode_rows(su, mean),
        _rows(su, prefill_xs, 1, {("context", "send-recv"): ring}), SERVING_RANK_ORDER, su.strides)
