"""Time of one kernel on one GPU: matrix multiplies, memory-bound element-wise work, attention.

**Matrix multiply** ``C[M×N] = A[M×K]·B[K×N]`` (``batch`` independent copies), ``2·M·N·K``
FLOPs per copy, in a roofline with the losses a GPU really has::

    t = max(FLOPs / (peak · η · q_tile · q_wave · K/(K + K_½)),  bytes / (HBM · η_HBM)) + t_launch

- ``η`` (``gemm_efficiency``): the best share of the peak a large GEMM reaches;
- tile quantization ``q_tile = M·N / (⌈M/T_m⌉·T_m · ⌈N/T_n⌉·T_n)``: partial output tiles
  still cost a whole tile;
- wave quantization ``q_wave = tiles / (⌈tiles/SMs⌉ · SMs)``: the last wave of tiles
  leaves SMs idle;
- ``K/(K + K_½)``: a short inner dimension cannot hide each tile's prologue and
  epilogue (``K_½``: the profile's ``gemm_k_half``, fitted to measured cuBLAS GEMMs on the H100,
  where a tile's fixed time is about 2.2 µs);
- bytes: ``A``, ``B`` read and ``C`` written once (``element_bytes`` each; the weights ``B``
  at ``weight_bytes`` when they are stored narrower than they are computed, as int4
  weight-only quantization stores them);
- split-K: when the output tiles do not fill the SMs, the K dimension is split across
  them (1, 2, 4, 8 or 16 ways, at least 256 deep each), as cuBLAS's heuristics do, at the
  cost of writing and reducing fp32 partial sums; the fastest split is taken.

Source: NVIDIA, "Matrix Multiplication Background User's Guide" (Deep Learning
Performance documentation): arithmetic intensity, tile and wave quantization.

**Element-wise work** (norms, activations, dropout, residual adds, softmax, optimizer
step) is memory-bound: ``t = bytes / (HBM · η_HBM)`` (Williams, Waterman & Patterson
2009, the roofline model).

**FlashAttention** (Dao et al. 2022; Dao 2023) computes ``softmax(QKᵀ)V`` in tiles without
writing the ``s²`` scores: ``4·s_q·s_k·d`` FLOPs per head forward (two GEMMs) and
``10·s_q·s_k·d`` backward (it recomputes ``QKᵀ``: five GEMMs), halved for a causal mask;
timed at ``attention_efficiency`` of the peak (forward) and ``attention_backward_ratio``
of that (backward). FlashAttention in Triton (flash-attn's ``flash_attn_triton.py``, which
llm-foundry runs as ``attn_impl: triton``) does the same work at FlashAttention-2's rate
over :data:`TRITON_FORWARD_SLOWDOWN` forward and :data:`TRITON_BACKWARD_SLOWDOWN` backward.

With ``compute_efficiency`` set (:class:`~calc.hardware.Hardware`), every kernel is
instead ``FLOPs / (peak · compute_efficiency)`` (the one-efficiency model).
"""

from __future__ import annotations

import math
from functools import lru_cache

from .hardware import Hardware

__all__ = ["gemm_time", "memory_time", "flash_attention_time", "ATTENTION_L_HALF", "TRITON_FORWARD_SLOWDOWN",
           "TRITON_BACKWARD_SLOWDOWN"]

#: Key length at which a FlashAttention kernel reaches half its long-sequence throughput (fitted to
#: the causal, head-dim-128 curves of FlashAttention-2's Figure 4).
ATTENTION_L_HALF = 256
#: FlashAttention in Triton against FlashAttention-2 on the same GPU: "FlashAttention-2 is around 1.3-1.5× faster
#: than FlashAttention in Triton in the forward pass and around 2× faster in the backward pass" (Dao 2023 §4.1,
#: measured on the A100; the Triton kernel has no Hopper-specific path either). The middle of the forward's range,
#: and the backward's figure.
TRITON_FORWARD_SLOWDOWN = 1.4
TRITON_BACKWARD_SLOWDOWN = 2.0
#: Output tiles cuBLAS chooses among, with the share of the large-tile throughput each reaches
#: (a smaller tile re-reads its inputs more often per FLOP). The relative figures are this
#: project's reading of NVIDIA's Matrix Multiplication Background guide (tile-size comparison):
#: an assumption, checked only through ``python -m calc validate``.
_TILES = (((256, 128), 1.0), ((128, 256), 1.0), ((128, 128), 0.9), ((128, 64), 0.75), ((64, 128), 0.75),
          ((64, 64), 0.55))
#: Split-K factors tried when the output tiles do not fill the SMs, and the least K per split.
_SPLIT_K = (1, 2, 4, 8, 16)
_MIN_SPLIT_K = 256


def gemm_time(hw: Hardware, m: int, n: int, k: int, batch: int = 1, element_bytes: float = 2.0,
              weight_bytes: float | None = None) -> float:
    """Seconds for ``batch`` GEMMs of ``M×K`` by ``K×N`` (formula in the module docstring).

    ``weight_bytes`` (default ``element_bytes``) is the size of one element of ``B``, the
    ``K×N`` operand that holds a layer's weights.

    >>> from calc.hardware import hardware
    >>> a100 = hardware(8, profile_name="a100-sxm4-80gb")
    >>> round(2 * 8192**3 / gemm_time(a100, 8192, 8192, 8192) / 1e12)  # TFLOP/s of a large GEMM
    234
    >>> round(2 * 2048 * 64 * 12288 / gemm_time(a100, 2048, 64, 12288) / 1e12)  # a skinny one
    90
    >>> h100 = hardware(8, profile_name="h100-sxm5-80gb")  # a short K: measured (H800) 386 of 766 TFLOP/s
    >>> [round(2 * 8192**2 * k / gemm_time(h100, 8192, 8192, k) / 1e12) for k in (256, 16384)]
    [348, 625]
    """
    if m <= 0 or n <= 0 or k <= 0 or batch <= 0:
        return 0.0
    if hw.compute_efficiency is not None:
        return 2.0 * m * n * k * batch / (hw.flops_per_gpu * hw.compute_efficiency)
    gpu = hw.gpu
    return _gemm_seconds(hw.flops_per_gpu * gpu.gemm_efficiency, hw.hbm_bandwidth * gpu.hbm_efficiency,
                         gpu.gemm_k_half, gpu.sms, gpu.kernel_overhead_s, m, n, k, batch, element_bytes,
                         element_bytes if weight_bytes is None else weight_bytes)


@lru_cache(maxsize=4096)
def _gemm_seconds(peak: float, hbm: float, k_half: float, sms: int, overhead: float, m: int, n: int, k: int,
                  batch: int, element_bytes: float, weight_bytes: float) -> float:
    """:func:`gemm_time` from the figures of the GPU it uses: ``peak`` = peak·η (FLOP/s), ``hbm`` = HBM·η_HBM
    (bytes/s). Kept between calls: a page's answer to one input times the same few dozen shapes its previous
    answer timed (the atlas's per-layer GEMMs do not change with the interleaving, the pipeline or the data
    degree; the inference chart's batch sizes recur), at tens of microseconds each in the browser (issue 15)."""
    flops = 2.0 * m * n * k * batch
    # What each split-K factor tried adds, whatever the tile: its K-depth factor and its fp32 partial sums.
    splits = [(split, (k / split) / (k / split + k_half), split * m * n * batch * 8.0 / hbm if split > 1 else 0.0)
              for split in _SPLIT_K if split == 1 or k // split >= _MIN_SPLIT_K]
    compute = math.inf
    for (tm, tn), tile_eff in _TILES:  # cuBLAS picks the tile (and split) that finishes first
        rows, cols = -(-m // tm), -(-n // tn)
        rate = peak * tile_eff * ((m * n) / (rows * tm * cols * tn))  # tile quantization
        for split, q_k, partial_sums in splits:  # split-K: too few output tiles share the K dimension across SMs
            tiles = rows * cols * batch * split
            q_wave = tiles / (-(-tiles // sms) * sms)
            t = flops / (rate * q_wave * q_k) + partial_sums  # the partial sums (fp32) are written and reduced
            if t < compute:
                compute = t
    traffic = batch * (element_bytes * (m * k + m * n) + weight_bytes * k * n) / hbm
    return max(compute, traffic) + overhead


def memory_time(hw: Hardware, nbytes: float, kernels: int = 1) -> float:
    """Seconds to stream ``nbytes`` through HBM in ``kernels`` launches: ``bytes/(HBM·η) + kernels·t_launch``.

    >>> from calc.hardware import hardware
    >>> round(memory_time(hardware(8, profile_name="h100-sxm5-80gb"), 1e9, 0) * 1e3, 3)
    0.332
    """
    if nbytes <= 0:
        return 0.0
    if hw.compute_efficiency is not None:
        return 0.0  # the one-efficiency model folds all of this into compute_efficiency
    return nbytes / (hw.hbm_bandwidth * hw.gpu.hbm_efficiency) + kernels * hw.gpu.kernel_overhead_s


def flash_attention_time(hw: Hardware, heads: int, q_len: int, k_len: int, head_dim: int, causal: bool = True,
                         backward: bool = False, steps: int = 1, kernel: str = "flash") -> float:
    """Seconds for FlashAttention over ``heads`` (sequence × head) pairs: ``4·s_q·s_k·d`` FLOPs each forward.

    Backward does ``10·s_q·s_k·d`` (2.5× the forward's work, FlashAttention recomputes the
    scores) at ``attention_backward_ratio`` of the forward throughput. Causal: half the work.
    ``kernel`` ``"flash"`` is FlashAttention-2 (``attention_efficiency``), ``"flash3"`` FlashAttention-3 or
    cuDNN's fused attention on Hopper and Blackwell (``flash3_efficiency``, ``flash3_backward_ratio``),
    ``"triton"`` FlashAttention in Triton (FlashAttention-2's rate over :data:`TRITON_FORWARD_SLOWDOWN`, or
    :data:`TRITON_BACKWARD_SLOWDOWN` backward).
    Throughput grows with the key length a kernel sweeps, ``L/(L + L_½)`` with
    :data:`ATTENTION_L_HALF` (FlashAttention-2's Figure 4: on the A100 forward throughput at
    512 keys is about two thirds of that at 16K). ``steps > 1`` (ring attention over context
    parallelism) runs ``steps`` kernels, each over ``k_len/steps`` keys.
    Source: Dao 2023 (FlashAttention-2) §3 and §4.1.

    >>> from calc.hardware import hardware
    >>> h100 = hardware(8, profile_name="h100-sxm5-80gb")
    >>> f = flash_attention_time(h100, 32, 8192, 8192, 128, kernel="flash3")
    >>> round(2 * 32 * 8192**2 * 128 / f / 1e12)  # causal forward TFLOP/s as FlashAttention counts
    717
    >>> [round(flash_attention_time(h100, 32, 8192, 8192, 128, backward=b, kernel="triton")
    ...        / flash_attention_time(h100, 32, 8192, 8192, 128, backward=b), 2) for b in (False, True)]
    [1.4, 2.0]
    """
    if heads <= 0 or q_len <= 0 or k_len <= 0:
        return 0.0
    if hw.compute_efficiency is not None:  # the model FLOPs: full s², backward twice the forward
        return (8.0 if backward else 4.0) * q_len * k_len * head_dim * heads / (hw.flops_per_gpu * hw.compute_efficiency)
    work = (10.0 if backward else 4.0) * q_len * k_len * head_dim * heads * (0.5 if causal else 1.0)
    gpu = hw.gpu
    if kernel == "flash3":
        rate = hw.flops_per_gpu * gpu.flash3_efficiency * (gpu.flash3_backward_ratio if backward else 1.0)
    else:
        rate = hw.flops_per_gpu * gpu.attention_efficiency * (gpu.attention_backward_ratio if backward else 1.0)
        if kernel == "triton":
            rate /= TRITON_BACKWARD_SLOWDOWN if backward else TRITON_FORWARD_SLOWDOWN
    swept = k_len / steps
    # Short sequences leave the kernel's 128-row query blocks partly idle, as tile quantization does.
    q_tile = q_len / (math.ceil(q_len / 128) * 128)
    return work / (rate * q_tile * swept / (swept + ATTENTION_L_HALF)) + steps * gpu.kernel_overhead_s
