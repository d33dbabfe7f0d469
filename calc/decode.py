"""Time of one transformer layer on one device while serving: a decode step and a prefill.

**Decode.** One step generates one token for each of the ``B`` sequences a device holds,
whose KV caches hold ``L`` tokens (``L/c`` of them on this rank under context
parallelism ``c``). With tensor parallelism ``t``, the kernels of one layer are::

    QKV projection     GEMM  B × (h/t + 2·h_kv,t) × h        (h_kv,t: K width this rank keeps)
    attention          reads the rank's KV cache, B·(L/c)·2·h_kv,t elements, and does
                       4·B·(a/t)·(L/c)·d FLOPs: memory-bound (FlashDecoding, PagedAttention)
    output projection  GEMM  B × h × h/t
    MLP                GEMM  B × f/t × h (× 2 when gated), GEMM B × h × f/t
    element-wise       norms, residual adds, activation, rotary, KV-cache append

Each GEMM is timed by :func:`calc.kernels.gemm_time` with ``M = B``: at small ``B`` it is
bound by reading its weights (``K·N`` elements at the weights' precision), at large ``B`` by
compute. Below 64 rows (the kernel model's smallest tile) decode kernels use 16-row tensor-core
tiles instead (:data:`SKINNY_ROWS`), so 4-bit weights stay memory-bound at small batches. The
attention kernel takes ``max(FLOPs/(peak·η_attn), bytes/(HBM·η_HBM))``.

An MoE layer routes the ``B·e`` tokens of its expert group (``e`` ranks) to ``k`` of ``E``
experts each. With routing spread uniformly, an expert receives no token with probability
``(1 − k/E)^{B·e}``, so a step reads the weights of ``E·(1 − (1 − k/E)^{B·e})`` experts, each
running one GEMM over the tokens it received (:func:`experts_touched`).

**Prefill** is a training forward pass over the prompt: :func:`calc.work.layer_work` with the
prompt as the sequence (FlashAttention over the causal prompt; ring attention under ``c``),
with attention timed at the 16-bit peak when the GEMMs run at fp8 or int8.

Sources: Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102
(decode is memory-bound at small batch); Dao et al. 2023, "Flash-Decoding for long-context
inference" (attention over a long KV cache split across the GPU); Kwon et al. 2023 (vLLM,
PagedAttention); Fedus et al. 2022 and Lepikhin et al. 2021 (top-k routing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .hardware import Hardware
from .kernels import gemm_time, memory_time
from .kvcache import kv_heads_per_rank
from .model import Model
from .work import layer_work

__all__ = ["DecodeLayer", "decode_layer", "experts_touched", "Head", "head", "PrefillLayer", "prefill_layer",
           "embedding_time", "DECODE_ELEMENTWISE_KERNELS", "EAGER_LAUNCH_S"]

#: Element-wise kernels of one layer of a decode step: two norms, two residual adds, the
#: activation, rotary embedding of Q and K, and the KV-cache append (what vLLM's fused Llama
#: layer launches outside its GEMMs and attention), for the launch overhead.
DECODE_ELEMENTWISE_KERNELS = 7
#: CPU time to launch one kernel when a decode step is not captured in a CUDA graph: the GPU
#: waits for the CPU whenever a kernel is shorter. Meta's HolisticTraceAnalysis documentation
#: gives 5-20 us per launch; 12 us, within that range, is what FasterTransformer's measured GPT
#: latencies on A100s imply (its decode launches every kernel from the CPU): an assumption
#: checked against those tables (tests/test_published_cases_inference.py).
EAGER_LAUNCH_S = 12e-6
#: Below this many rows (the smallest output tile of :mod:`calc.kernels`) a decode GEMM runs as a
#: skinny kernel on 16-row tensor-core tiles (``mma.m16n8k16``): its compute is padded to a multiple
#: of :data:`MMA_ROWS` rows, not of 64. MARLIN (Frantar et al. 2024, PPoPP 2025) keeps 4-bit GEMMs at
#: the memory roof up to batches of 16-32 this way, with gains fading towards 64-128.
SKINNY_ROWS = 64
MMA_ROWS = 16


@dataclass(frozen=True, slots=True)
class DecodeLayer:
    """One layer of one decode step on one device (seconds, bytes, FLOPs)."""

    time_s: float  #: GEMMs + attention + element-wise
    gemm_s: float
    attention_s: float
    elementwise_s: float
    weight_bytes: float  #: weights read by the GEMMs
    kv_bytes: float  #: KV cache read, and the new token's keys and values written
    flops: float  #: GEMMs and attention


def experts_touched(tokens: float, experts: int, top_k: int) -> float:
    """``E·(1 − (1 − k/E)^T)``: experts that receive at least one of ``T`` tokens, each routed to ``k``.

    With uniform routing a token misses a given expert with probability ``1 − k/E``. Eight
    experts, top-2 (Mixtral): one token reaches 2, eight tokens about 7.2, 64 all of them.

    >>> round(experts_touched(1, 8, 2), 3), round(experts_touched(8, 8, 2), 2), round(experts_touched(64, 8, 2), 3)
    (2.0, 7.2, 8.0)
    """
    if experts <= 1:
        return float(experts)
    miss, n, power = 1.0 - top_k / experts, int(tokens), 1.0
    while n:  # (1 − k/E)^T by squaring: IEEE products, the same in CPython and in Pyodide (pow is libm's)
        if n & 1:
            power *= miss
        miss *= miss
        n >>= 1
    return experts * (1.0 - power)


def _kernels(seconds: float, kernels: int, launch_s: float) -> float:
    """``kernels`` equal kernels of ``seconds`` in all, each taking at least the CPU's ``launch_s``."""
    return kernels * max(seconds / kernels, launch_s) if kernels else 0.0


def _skinny_gemm_time(hw: Hardware, m: int, n: int, k: int, batch: int, act_bytes: float, wb: float) -> float:
    """``max(2MNK / (peak·η·M/(16⌈M/16⌉)), bytes / (HBM·η)) + t_launch``: ``batch`` GEMMs of ``M < 64`` rows.

    >>> from calc.hardware import hardware
    >>> h100 = hardware(8, profile_name="h100-sxm5-80gb")
    >>> t = _skinny_gemm_time(h100, 1, 8192, 8192, 1, 2.0, 0.5)  # int4 weights at batch 1: the read binds
    >>> round((t - h100.gpu.kernel_overhead_s) * h100.hbm_bandwidth * h100.gpu.hbm_efficiency / (0.5 * 8192**2), 3)
    1.001
    """
    gpu = hw.gpu
    padded = m / (MMA_ROWS * -(-m // MMA_ROWS))
    compute = 2.0 * m * n * k * batch / (hw.flops_per_gpu * gpu.gemm_efficiency * padded)
    traffic = batch * (act_bytes * (m * k + m * n) + wb * k * n) / (hw.hbm_bandwidth * gpu.hbm_efficiency)
    return max(compute, traffic) + gpu.kernel_overhead_s


def _gemms(hw: Hardware, shapes, act_bytes: float, memo: dict | None,
           launch_s: float = 0.0) -> tuple[float, float, float]:
    """(seconds, weight bytes, FLOPs) of GEMMs given as (M, N, K, count, weight bytes per element)."""
    memo = {} if memo is None else memo
    gpu = hw.gpu
    machine = (hw.flops_per_gpu, hw.hbm_bandwidth, gpu.sms, gpu.gemm_tile, gpu.gemm_efficiency, gpu.hbm_efficiency,
               gpu.kernel_overhead_s, act_bytes)  # launch_s is applied after the cache
    time = nbytes = flops = 0.0
    for m_, n_, k_, batch, wb in shapes:
        key = (machine, m_, n_, k_, batch, wb)
        if key not in memo:
            memo[key] = _skinny_gemm_time(hw, m_, n_, k_, batch, act_bytes, wb) if m_ < SKINNY_ROWS else \
                gemm_time(hw, m_, n_, k_, batch, act_bytes, wb)
        time += max(memo[key], launch_s)
        nbytes += wb * k_ * n_ * batch
        flops += 2.0 * m_ * n_ * k_ * batch
    return time, nbytes, flops


def decode_layer(m: Model, hw: Hardware, attn_hw: Hardware, batch: int, context: int, t: int = 1, c: int = 1,
                 e: int = 1, moe: bool = False, weight_bytes: float = 2.0, kv_bytes: float = 2.0,
                 act_bytes: float = 2.0, memo: dict | None = None, launch_s: float = 0.0) -> DecodeLayer:
    """One layer of a decode step for ``batch`` sequences of ``context`` cached tokens (kernels above).

    ``hw`` times the GEMMs (its peak is the weights' compute data type's), ``attn_hw`` the
    attention (16-bit). ``launch_s``: each kernel takes at least this long (the CPU's launch
    time, :data:`EAGER_LAUNCH_S`, when the step is not a CUDA graph; 0 with CUDA graphs).

    Llama-3 8B on one H100 at batch 1 reads its 436 MB of layer weights (bf16) in about a sixth
    of a millisecond; at batch 512 the GEMMs are compute-bound and take
    well over twice that, and reading 512 caches of 1024 tokens takes longer still:

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> h100 = hardware(8, profile_name="h100-sxm5-80gb")
    >>> one = decode_layer(llama, h100, h100, 1, 1024)
    >>> round(one.weight_bytes / 1e6), round(one.gemm_s * 1e6)
    (436, 153)
    >>> big = decode_layer(llama, h100, h100, 512, 1024)
    >>> big.gemm_s > 2 * one.gemm_s, big.attention_s > big.gemm_s
    (True, True)
    """
    h, a, d = m.hidden, m.heads, m.head_dim
    kv_w = kv_heads_per_rank(m, t) * d
    f_t = m.ffn_hidden // t
    up = 2 * f_t if m.gated_mlp else f_t
    wb = weight_bytes
    shapes = [(batch, h // t + 2 * kv_w, h, 1, wb), (batch, h, h // t, 1, wb)]
    act = 1.0
    if moe:
        tokens = batch * e
        touched = experts_touched(tokens, m.experts, m.top_k)
        local = m.experts // e
        n_touched = max(1, math.ceil(local * touched / m.experts - 1e-9))
        per_expert = max(1, math.ceil(tokens * m.top_k / touched - 1e-9))
        shapes += [(batch, m.experts, h, 1, 2.0), (per_expert, up, h, n_touched, wb),
                   (per_expert, h, f_t, n_touched, wb)]
        act = float(m.top_k)  # tokens routed to this device's experts, per token it holds (balanced)
    else:
        shapes += [(batch, up, h, 1, wb), (batch, h, f_t, 1, wb)]
    g_time, g_bytes, g_flops = _gemms(hw, shapes, act_bytes, memo, launch_s)

    length = -(-context // c)
    kv_read = batch * length * 2 * kv_w * kv_bytes + batch * 2 * kv_w * kv_bytes  # read the cache, append one
    a_flops = 4.0 * batch * (a // t) * length * d
    gpu = attn_hw.gpu
    attention = max(a_flops / (attn_hw.flops_per_gpu * gpu.attention_efficiency),
                    kv_read / (attn_hw.hbm_bandwidth * gpu.hbm_efficiency)) + gpu.kernel_overhead_s
    attention = max(attention, launch_s)
    ew_bytes = batch * (h * 10 * act_bytes + act * (3 if m.gated_mlp else 2) * f_t * act_bytes
                        + 2 * (h // t + kv_w) * act_bytes)
    ew = _kernels(memory_time(hw, ew_bytes, DECODE_ELEMENTWISE_KERNELS), DECODE_ELEMENTWISE_KERNELS, launch_s)
    return DecodeLayer(g_time + attention + ew, g_time, attention, ew, g_bytes, kv_read, g_flops + a_flops)


@dataclass(frozen=True, slots=True)
class Head:
    """The output layer for ``tokens`` tokens on one device: final norm, logits GEMM, sampling."""

    time_s: float
    weight_bytes: float
    flops: float


def head(m: Model, hw: Hardware, tokens: int, t: int = 1, act_bytes: float = 2.0, launch_s: float = 0.0) -> Head:
    """Final norm, the logits GEMM ``tokens × ⌈V/t⌉ × h`` (16-bit weights: serving frameworks leave
    the output head unquantized) and sampling (fp32 logits read twice: softmax, then top-k/top-p).

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> round(head(llama, hardware(8, profile_name="h100-sxm5-80gb"), 1).weight_bytes / 1e9, 2)
    1.05
    """
    vocab_t = -(-m.vocab // t)
    time, nbytes, flops = _gemms(hw, [(tokens, vocab_t, m.hidden, 1, 2.0)], act_bytes, None, launch_s)
    time += _kernels(memory_time(hw, tokens * (2 * m.hidden * act_bytes + 2 * 4 * vocab_t), 3), 3, launch_s)
    return Head(time, nbytes, flops)


def embedding_time(m: Model, hw: Hardware, tokens: int, act_bytes: float = 2.0, launch_s: float = 0.0) -> float:
    """Looking up ``tokens`` rows of the embedding (read and written once): memory-bound."""
    return max(memory_time(hw, 2 * tokens * m.hidden * act_bytes, 1), launch_s)


@dataclass(frozen=True, slots=True)
class PrefillLayer:
    """One layer of a prefill on one device (seconds)."""

    time_s: float
    attention_s: float  #: the attention core's share (ring attention hides its K/V exchange there)


def prefill_layer(m: Model, hw: Hardware, attn_hw: Hardware, batch: int, prompt: int, t: int = 1, c: int = 1,
                  e: int = 1, moe: bool = False, memo: dict | None = None) -> PrefillLayer:
    """The forward pass of one layer over ``batch`` prompts of ``prompt`` tokens (:func:`calc.work.layer_work`).

    Compute-bound like training: Llama-3 8B on one H100, 8 prompts of 2048 tokens:

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> h100 = hardware(8, profile_name="h100-sxm5-80gb")
    >>> p = prefill_layer(llama, h100, h100, 8, 2048)
    >>> flops = 2 * 8 * 2048 * 218_103_808 + 2 * 8 * 32 * 2048**2 * 128
    >>> round(flops / p.time_s / 1e12)  # TFLOP/s: compute-bound
    548
    """
    mp = replace(m, seq_len=prompt)
    w = layer_work(mp, hw, batch, t, c, e, False, "none", m.attention, moe, 2.0, memo)
    if attn_hw is hw:
        return PrefillLayer(w.forward_s, w.attention_forward_s)
    wa = layer_work(mp, attn_hw, batch, t, c, e, False, "none", m.attention, moe, 2.0)
    return PrefillLayer(w.forward_s - w.attention_forward_s + wa.attention_forward_s, wa.attention_forward_s)
