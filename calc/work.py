"""Compute time of one transformer layer, the output head and the optimizer step, on one device.

A layer's forward pass on one device, for a microbatch of ``b`` sequences of which the
device holds ``s_c = s/c`` tokens each (context parallelism ``c``), with tensor
parallelism ``t`` (Megatron's column/row split) runs these kernels (``T = b·s_c``
tokens, ``h_kv`` the K/V width this rank holds, ``f`` the MLP width)::

    QKV projection     GEMM  T × (h + 2·h_kv)/t × h
    attention core     FlashAttention over b·a/t heads (s_c queries, s keys), or, "standard":
                       QKᵀ (batched s_c × s × d), softmax, dropout, PV (batched s_c × d × s)
    output projection  GEMM  T × h × h/t
    MLP                GEMM  T × f/t × h (× 2 when gated), GEMM T × h × f/t
    element-wise       two norms, two bias-dropout-residual adds (÷ t with sequence
                       parallelism), the activation (GeLU or SwiGLU), rotary embeddings

An MoE layer runs the router (``T × E × h``) and, per local expert, the MLP GEMMs on
the ``e·T·k/E`` tokens routed to it (perfect balance, capacity factor 1).

The backward pass runs, for each forward GEMM ``M×N×K``, the two GEMMs ``M×K×N``
(input gradient) and ``K×N×M`` (weight gradient); element-wise kernels move
:data:`BACKWARD_MEMORY_RATIO` times their forward bytes. Recomputation adds, inside
the backward pass, the whole forward (``full``) or the attention core (``selective``;
with FlashAttention nothing: its backward already recomputes the scores).

Element-wise bytes per token (``eb`` bytes per element, masks one byte), forward::

    norms 2 × 2h  ·  bias-dropout-residual 2 × (3·eb + 1)·h  ·  GeLU 2·f/t, SwiGLU 3·f/t
    rotary 2·(h + h_kv)/t  ·  standard attention: softmax 2·eb and dropout (2·eb + 1) per score
    (a model without dropout writes no masks: residual adds 2 × 3·eb·h, and no dropout of the scores)

Sources: Shoeybi et al. 2019 (Megatron-LM, the layer split); Korthikanti et al. 2022 §4
(which tensors each operator keeps); Narayanan et al. 2021 §4 (fused operators);
Dao 2023 (FlashAttention-2); Lepikhin et al. 2021 (GShard, expert routing).
"""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import Hardware
from .kernels import flash_attention_time, gemm_time, memory_time
from .model import ATTENTION, FLASH, Model

__all__ = ["LayerWork", "layer_work", "layer_kernels", "recomputed", "elementwise_bytes", "head_work", "optimizer_time",
           "ATTENTION", "BACKWARD_MEMORY_RATIO", "kv_hidden_per_rank", "fp8_cast_bytes"]

#: Backward element-wise kernels read the saved input and the output gradient and write the input
#: gradient: about twice the forward's bytes (Korthikanti et al. 2022 §4 lists what each keeps).
BACKWARD_MEMORY_RATIO = 2.0
#: Element-wise kernels launched per layer in a forward pass (norms, residual adds, activation,
#: rotary, softmax, dropout), for the launch overhead.
_EW_KERNELS = 8
#: HBM bytes per logit of Megatron-LM's unfused vocabulary-parallel cross-entropy, forward and backward: the
#: 16-bit logits cast to fp32 (read 2, write 4), the max (read 4), the max subtracted in place (8), ``exp`` in place
#: (8), the sum (4), the division into the softmax (8); backward, the softmax scaled by the loss gradient in place
#: (8) and cast back to 16 bits for the logits GEMM (6): 52 B. (The target's entry is a gather, negligible.)
#: Source: NVIDIA/Megatron-LM ``megatron/core/tensor_parallel/cross_entropy.py`` (``_VocabParallelCrossEntropy``,
#: 2024) and ``megatron/mpu/cross_entropy.py`` (2021), called on ``output.float()``.
LOSS_BYTES_PER_LOGIT = 52
#: The kernels of that loss over the logits, with the final norm's.
LOSS_KERNELS = 10


@dataclass(frozen=True, slots=True)
class LayerWork:
    """Seconds of compute of one layer for one microbatch on one device."""

    forward_s: float  #: the forward pass
    backward_s: float  #: the backward pass
    recompute_s: float  #: forward work redone during the backward pass (recomputation)
    attention_forward_s: float  #: the attention core's share of ``forward_s`` (CP hides its K/V exchange there)
    attention_backward_s: float  #: the attention core's share of ``backward_s``
    gemm_s: float  #: matrix multiplies of the three passes and the recomputation
    memory_bound_s: float  #: element-wise kernels of the three passes and the recomputation

    @property
    def total_s(self) -> float:
        """Forward + backward + recomputation."""
        return self.forward_s + self.backward_s + self.recompute_s


def kv_hidden_per_rank(m: Model, t: int) -> int:
    """Width of K (and of V) on one TP rank: ``h_kv/t``, or one head ``d`` when ``t`` exceeds the KV heads.

    With more TP ranks than KV heads each KV head is replicated ``t/a_kv`` times (Megatron-LM).

    >>> from calc.model import model
    >>> m = model(32, 4096, 32, 128256, 8192, kv_heads=8)
    >>> kv_hidden_per_rank(m, 4), kv_hidden_per_rank(m, 16)
    (256, 128)
    """
    return m.kv_hidden // t if t <= m.kv_heads else m.head_dim


def _gemms(hw: Hardware, shapes: list[tuple[int, int, int, int]], eb: float,
           memo: dict | None = None) -> tuple[float, float]:
    """(forward, backward) seconds of GEMMs given as (M, N, K, batch); ``memo`` caches shapes seen."""
    memo = {} if memo is None else memo

    def one(M: int, N: int, K: int, batch: int) -> float:
        key = (M, N, K, batch, eb)
        if key not in memo:
            memo[key] = gemm_time(hw, M, N, K, batch, eb)
        return memo[key]

    fwd = bwd = 0.0
    for M, N, K, batch in shapes:
        fwd += one(M, N, K, batch)
        bwd += one(M, K, N, batch) + one(K, N, M, batch)
    return fwd, bwd


def _attention_times(hw: Hardware, attention: str, heads: int, s_c: int, s: int, d: int, c: int, q_elements: int,
                     eb: float, memo: dict | None, dropout: bool = True) -> tuple[float, float, float]:
    """(forward, backward, selective recompute) seconds of the attention core of one layer.

    Fused (flash) kernels recompute nothing extra under selective recomputation; with context
    parallelism, ``c`` ring steps over ``s/c`` keys each, and each step rescales the partial output
    (fp32) and its statistics. Standard attention materialises the ``s_c × s`` scores: two batched
    GEMMs plus softmax and dropout, all redone under selective recomputation.
    """
    if attention in FLASH:
        a_fwd = flash_attention_time(hw, heads, s_c, s, d, causal=True, steps=c, kernel=attention)
        a_bwd = flash_attention_time(hw, heads, s_c, s, d, causal=True, backward=True, steps=c, kernel=attention)
        if c > 1:
            a_fwd += memory_time(hw, (c - 1) * 3 * q_elements * 4, c - 1)
            a_bwd += memory_time(hw, (c - 1) * 3 * q_elements * 4, c - 1)
        return a_fwd, a_bwd, 0.0
    scores = heads * s_c * s
    # softmax, then dropout with its mask
    sm = memory_time(hw, scores * (2 * eb + 2 * eb + 1), 2) if dropout else memory_time(hw, scores * 2 * eb, 1)
    sq_f, sq_b = _gemms(hw, [(s_c, s, d, heads), (s_c, d, s, heads)], eb, memo)
    return sq_f + sm, sq_b + BACKWARD_MEMORY_RATIO * sm, sq_f + sm


def elementwise_bytes(m: Model, tokens: int, t: int = 1, sequence_parallel: bool = False, act: int = 1,
                      eb: float = 2.0) -> tuple[float, int]:
    """(HBM bytes, kernels) of one layer's element-wise work in a forward pass over ``tokens`` tokens on one rank.

    Fused (``m.kernels == "fused"``), each of the layer's element-wise steps is one kernel that reads
    its inputs and writes its output once (the bytes in the module docstring). Eager PyTorch runs each
    operation of the model's code as its own kernel, bytes per element of its tensor:

    ==================  =============================  ==========================================
    step                eager (``eb`` = 2)             the operations
    ==================  =============================  ==========================================
    LayerNorm           ``2·eb`` = 4, 1 kernel         ``F.layer_norm`` (one kernel, as fused)
    RMSNorm             ``28 + 4·eb`` = 36, 6 kernels  fp32 cast, ``pow``, ``mean``, product with
                                                       ``rsqrt``, cast back, product with the weight
    residual add        ``3·eb`` = 6 (+ dropout        ``x + residual``; dropout its own kernel
                        ``2·eb + 1``)                  (a bias rides in the GEMM: ``addmm``)
    GeLU / SwiGLU       ``2·eb`` = 4 / ``5·eb`` = 10   ``gelu``; ``silu`` then the product
    rotary (Q and K)    ``32 + 2·eb`` = 36, 4 kernels  fp32 cast, product with the cos/sin pairs
                                                       (two fp32 outputs per input), sum, cast back
    ==================  =============================  ==========================================

    Sources: the code of the eager runs :mod:`calc.runs` validates: foundation-model-stack
    ``fms/modules/layernorm.py`` (``LayerNormParameterized`` with ``use_high_precision_pow``, the Llama
    reference code's RMSNorm) and ``fms/modules/positions.py`` (``RotaryEmbedding.adjusted_qk``),
    ``fms/modules/feedforward.py`` (``GatedLinearUnit``), March 2024; meta-llama/llama ``model.py``
    computes rotary in complex64 (20 B per element at ``eb = 2``). Measured: ``torch.compile``, which
    fuses these, raised the same code's training throughput by 10-23 % (IBM and Meta, PyTorch blog,
    "Maximizing training throughput using PyTorch FSDP and Torch.compile", 2024).

    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True, dropout=False)
    >>> fused, _ = elementwise_bytes(llama, 1)
    >>> eager, k = elementwise_bytes(model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True,
    ...                                    dropout=False, kernels="eager", norm="rmsnorm"), 1)
    >>> fused, eager, k
    (180736.0, 749056.0, 24)
    """
    h, f_t = m.hidden, m.ffn_hidden // t
    qk = h // t + kv_hidden_per_rank(m, t)  # Q and K elements one rank rotates per token
    rep = t if sequence_parallel else 1  # norms and residual adds run on 1/t of the tokens with SP
    drop = 1 if m.dropout else 0
    if m.kernels == "fused":
        ew = h * (2 * 2 * eb + 2 * (3 * eb + drop)) / rep  # norms, bias-dropout-residual adds
        ew += act * (3 if m.gated_mlp else 2) * f_t * eb  # activation function
        if not m.learned_positions:
            ew += 2 * qk * eb  # rotary embeddings on Q and K
        return tokens * ew, _EW_KERNELS
    rms = m.norm == "rmsnorm"
    norm, norm_k = (28 + 4 * eb, 6) if rms else (2 * eb, 1)
    ew = 2 * h * (norm + 3 * eb + drop * (2 * eb + 1)) / rep
    ew += act * (5 if m.gated_mlp else 2) * f_t * eb
    kernels = 2 * (norm_k + 1 + drop) + (2 if m.gated_mlp else 1)
    if not m.learned_positions:
        ew += (32 + 2 * eb) * qk
        kernels += 8
    return tokens * ew, kernels


def layer_work(m: Model, hw: Hardware, micro: int, t: int = 1, c: int = 1, e: int = 1,
               sequence_parallel: bool = False, recompute: str = "none", attention: str = "flash",
               moe: bool = False, element_bytes: float = 2.0, memo: dict | None = None) -> LayerWork:
    """Forward, backward and recomputation seconds of one layer (kernels in the module docstring).

    ``memo`` (a dict) caches GEMM times by shape across calls.

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> gpt3 = model(96, 12288, 96, 51200, 2048, biases=True, learned_positions=True)
    >>> w = layer_work(gpt3, hardware(8, profile_name="a100-sxm4-80gb", dtype="fp16"), 1, t=8,
    ...                recompute="full", attention="standard")
    >>> round(w.forward_s * 1e3, 2), round(w.backward_s / w.forward_s, 2), w.recompute_s == w.forward_s
    (5.28, 1.94, True)
    """
    return recomputed(layer_kernels(m, hw, micro, t, c, e, sequence_parallel, attention, moe, element_bytes, memo),
                      recompute)


def layer_kernels(m: Model, hw: Hardware, micro: int, t: int = 1, c: int = 1, e: int = 1,
                  sequence_parallel: bool = False, attention: str = "flash", moe: bool = False,
                  element_bytes: float = 2.0, memo: dict | None = None,
                  fp8: tuple[Hardware, dict] | None = None) -> tuple[float, ...]:
    """:func:`layer_work`'s kernel times, the same whatever the recomputation (a search asks for each layer under
    every mode): ``(GEMMs forward, backward, attention forward, backward, attention redone under selective
    recomputation, element-wise forward, backward)`` seconds.

    ``fp8`` (:func:`calc.hardware.fp8_hardware`'s GPU and a memo of its GEMM times) runs the linear GEMMs (the
    projections, the MLP, the experts) in FP8 as Transformer Engine does, one byte per operand element, and adds
    its casts (:func:`fp8_cast_bytes`); the router, attention and element-wise work stay at ``element_bytes``."""
    eb = element_bytes
    h, s, a, d = m.hidden, m.seq_len, m.heads, m.head_dim
    s_c = s // c
    T = micro * s_c
    kv = kv_hidden_per_rank(m, t)
    heads = micro * a // t
    f_t = m.ffn_hidden // t
    up = 2 * f_t if m.gated_mlp else f_t
    linear = [(T, h // t + 2 * kv, h, 1), (T, h, h // t, 1)]
    if moe:
        local = m.experts // e
        routed = max(1, e * T * m.top_k // m.experts)
        other = [(T, m.experts, h, 1)]  # the router
        linear += [(routed, up, h, local), (routed, h, f_t, local)]
        act = m.top_k
    else:
        other = []
        linear += [(T, up, h, 1), (T, h, f_t, 1)]
        act = 1
    if fp8 is None:
        g_fwd, g_bwd = _gemms(hw, other + linear, eb, memo)
    else:
        o_fwd, o_bwd = _gemms(hw, other, eb, memo)
        g_fwd, g_bwd = _gemms(fp8[0], linear, 1.0, fp8[1])
        g_fwd, g_bwd = g_fwd + o_fwd, g_bwd + o_bwd

    ew, kernels = elementwise_bytes(m, T, t, sequence_parallel, act, eb)
    a_fwd, a_bwd, a_rec = _attention_times(hw, attention, heads, s_c, s, d, c, T * (h // t), eb, memo, m.dropout)
    ew_fwd = memory_time(hw, ew, kernels)
    ew_bwd = memory_time(hw, BACKWARD_MEMORY_RATIO * ew, 2 * kernels)
    if fp8 is not None:
        cast_fwd, cast_bwd = fp8_cast_bytes(linear, eb)
        ew_fwd += memory_time(hw, cast_fwd, len(linear))
        ew_bwd += memory_time(hw, cast_bwd, len(linear))
    return g_fwd, g_bwd, a_fwd, a_bwd, a_rec, ew_fwd, ew_bwd


def fp8_cast_bytes(linear: list[tuple[int, int, int, int]], eb: float = 2.0) -> tuple[float, float]:
    """(forward, backward) HBM bytes of Transformer Engine's FP8 casts around a layer's linear GEMMs ``(M, N, K,
    batch)``, in its order (QKV, output projection, MLP up, MLP down).

    Forward, each GEMM's input ``M × K`` in fp8 and transposed for the weight gradient: after a norm or the
    activation function (QKV, MLP up and down) the cast rides in that kernel and the transpose reads and writes one
    byte per element; the attention output (into the projection) is cast and transposed in one kernel that reads
    ``eb`` bytes and writes two. Backward, each GEMM's output gradient ``M × N`` is cast and transposed
    (``eb + 2`` bytes per element). The weights' casts, once per step, are left out (with fp8 weights the optimizer
    writes them). Source: NVIDIA/TransformerEngine ``transformer_engine/pytorch/module/`` (``layernorm_linear.py``:
    ``fp8_transpose`` of ``ln_out``; ``linear.py``: ``fp8_cast_transpose_fused``; ``grad_output_preprocess`` in
    ``base.py``: ``fp8_cast_transpose_bgrad_fused``), TE 1.x as NeMo 24.09 ships it.

    >>> fp8_cast_bytes([(10, 3, 2, 1), (10, 2, 1, 1), (10, 4, 2, 1), (10, 2, 4, 1)])
    (200.0, 440.0)
    """
    fwd = bwd = 0.0
    for i, (M, N, K, batch) in enumerate(linear):
        fwd += (eb + 2 if i == 1 else 2) * M * K * batch
        bwd += (eb + 2) * M * N * batch
    return fwd, bwd


def recomputed(kernels: tuple[float, ...], recompute: str) -> LayerWork:
    """:func:`layer_work` from :func:`layer_kernels`'s times, with what ``recompute`` redoes in the backward pass."""
    g_fwd, g_bwd, a_fwd, a_bwd, a_rec, ew_fwd, ew_bwd = kernels
    forward = g_fwd + a_fwd + ew_fwd
    backward = g_bwd + a_bwd + ew_bwd
    if recompute == "full":
        redo, redo_gemm, redo_ew = forward, g_fwd, ew_fwd
    elif recompute == "selective":
        redo, redo_gemm, redo_ew = a_rec, 0.0, 0.0
    else:
        redo = redo_gemm = redo_ew = 0.0
    return LayerWork(forward, backward, redo, a_fwd, a_bwd, g_fwd + g_bwd + redo_gemm, ew_fwd + ew_bwd + redo_ew)


def head_work(m: Model, hw: Hardware, micro: int, t: int = 1, c: int = 1, element_bytes: float = 2.0) -> float:
    """Seconds of the output layer for one microbatch: the logits GEMM ``T × V/t × h`` (three passes),
    the final norm and the vocabulary-parallel cross-entropy, :data:`LOSS_BYTES_PER_LOGIT` of HBM traffic
    per logit in :data:`LOSS_KERNELS` kernels.

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> gpt3 = model(96, 12288, 96, 51200, 2048)
    >>> round(head_work(gpt3, hardware(8, profile_name="a100-sxm4-80gb"), 1, t=8) * 1e3, 2)
    5.1
    """
    T = micro * (m.seq_len // c)
    fwd, bwd = _gemms(hw, [(T, -(-m.vocab // t), m.hidden, 1)], element_bytes)
    loss = memory_time(hw, LOSS_BYTES_PER_LOGIT * T * (m.vocab / t) + 6 * T * m.hidden * element_bytes, LOSS_KERNELS)
    return fwd + bwd + loss


def optimizer_time(hw: Hardware, params: float, param_bytes: float, grad_bytes: float,
                   optimizer_bytes: float) -> float:
    """Seconds of one optimizer step over ``params`` parameters held by this device (its shard).

    Memory-bound: the fused Adam reads and writes every optimizer state, reads the
    gradients (and zeroes them) and writes the new weights:
    ``bytes = params · (2·optimizer + 2·grad + param)``; for the 16-byte mixed-precision
    recipe 30 B per parameter. Source: NVIDIA Apex ``FusedAdam`` / PyTorch
    ``torch.optim.Adam(fused=True)`` (multi-tensor apply: one pass over each state).

    >>> from calc.hardware import hardware
    >>> round(optimizer_time(hardware(8, profile_name="h100-sxm5-80gb"), 1e9, 2, 2, 12) * 1e3, 1)
    10.0
    """
    return memory_time(hw, params * (2 * optimizer_bytes + 2 * grad_bytes + param_bytes), 4)
