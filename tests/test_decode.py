"""calc.decode: one layer of a decode step and of a prefill on one device."""

import pytest

from calc.decode import (DECODE_ELEMENTWISE_KERNELS, EAGER_LAUNCH_S, decode_layer, embedding_time, experts_touched,
                         head, prefill_layer)
from calc.hardware import hardware
from calc.model import model

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
MIXTRAL = model(32, 4096, 32, 32000, 4096, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
H100 = hardware(8, profile_name="h100-sxm5-80gb")
H100_FP8 = hardware(8, profile_name="h100-sxm5-80gb", dtype="fp8")
LAYER_WEIGHTS = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336  # Q, O, K, V and the SwiGLU MLP


def test_small_batch_reads_every_weight_once():
    """At batch 1 the GEMMs take the weights' bytes over the achievable bandwidth (plus launches)."""
    d = decode_layer(LLAMA, H100, H100, 1, 512)
    assert d.weight_bytes == 2 * LAYER_WEIGHTS
    read = d.weight_bytes / (H100.hbm_bandwidth * H100.gpu.hbm_efficiency)
    assert read < d.gemm_s < read * 1.1


def test_gemm_time_is_flat_until_the_roofline_then_grows():
    """From batch 1 to 64 the GEMMs barely slow down (memory-bound); by 1024 they are compute-bound."""
    t = {b: decode_layer(LLAMA, H100, H100, b, 512).gemm_s for b in (1, 64, 1024)}
    assert t[64] < 1.05 * t[1] and t[1024] > 3 * t[1]


def test_attention_reads_the_kv_cache_and_grows_with_the_context():
    """The attention kernel's bytes are the batch's KV cache at the context (and the new token's K and V)."""
    short, long = (decode_layer(LLAMA, H100, H100, 16, n) for n in (1000, 8000))
    per_token = 2 * 8 * 128 * 2  # one layer, bf16
    assert short.kv_bytes == 16 * (1000 + 1) * per_token
    assert long.attention_s == pytest.approx(8000 / 1000 * (short.attention_s - H100.gpu.kernel_overhead_s)
                                             + H100.gpu.kernel_overhead_s, rel=0.01)


def test_tensor_and_context_parallelism_divide_the_reads():
    """t ranks read 1/t of the weights; c ranks 1/c of the cache."""
    one = decode_layer(LLAMA, H100, H100, 8, 4096)
    tp = decode_layer(LLAMA, H100, H100, 8, 4096, t=4)
    cp = decode_layer(LLAMA, H100, H100, 8, 4096, c=4)
    assert tp.weight_bytes == one.weight_bytes / 4 and tp.kv_bytes == one.kv_bytes / 4
    assert cp.kv_bytes < one.kv_bytes / 3.9 and cp.weight_bytes == one.weight_bytes


def test_quantized_weights_read_fewer_bytes_and_fp8_computes_faster():
    """int4-sized weights cut the read at small batch; fp8's peak speeds the compute-bound GEMMs."""
    bf16 = decode_layer(LLAMA, H100, H100, 1, 512)
    int4 = decode_layer(LLAMA, H100, H100, 1, 512, weight_bytes=0.515625)
    assert int4.weight_bytes == pytest.approx(bf16.weight_bytes * 0.515625 / 2)
    assert int4.gemm_s < 0.3 * bf16.gemm_s
    big = decode_layer(LLAMA, H100, H100, 2048, 512)
    big8 = decode_layer(LLAMA, H100_FP8, H100, 2048, 512, weight_bytes=1.0)
    assert big8.gemm_s < 0.6 * big.gemm_s and big8.attention_s == big.attention_s


def test_experts_touched_by_uniform_routing():
    """E(1 − (1 − k/E)^T): k experts for one token, all of them for many; a dense model has one."""
    assert experts_touched(1, 8, 2) == pytest.approx(2.0)
    assert experts_touched(1000, 8, 2) == pytest.approx(8.0)
    assert experts_touched(5, 1, 1) == 1.0
    assert experts_touched(2, 8, 2) == pytest.approx(8 * (1 - 0.75**2))


def test_moe_decode_reads_only_the_experts_its_tokens_reach():
    """At batch 1 (top-2 of 8) a step reads two experts' weights; at batch 64 all eight."""
    expert = 3 * 4096 * 14336 * 2
    attention = 2 * (2 * 4096 * 4096 + 2 * 4096 * 1024) + 2 * 4096 * 8  # and the router
    assert decode_layer(MIXTRAL, H100, H100, 1, 512, moe=True).weight_bytes == attention + 2 * expert
    assert decode_layer(MIXTRAL, H100, H100, 64, 512, moe=True).weight_bytes == attention + 8 * expert
    assert decode_layer(MIXTRAL, H100, H100, 16, 512, e=4, moe=True).weight_bytes == attention + 2 * expert


def test_without_cuda_graphs_every_kernel_waits_for_the_cpu():
    """With a launch floor, a small model's layer costs at least its kernels times the launch time."""
    tiny = model(2, 256, 4, 1000, 512)
    d = decode_layer(tiny, H100, H100, 1, 64, launch_s=EAGER_LAUNCH_S)
    graphs = decode_layer(tiny, H100, H100, 1, 64)
    assert d.time_s >= (4 + 1 + DECODE_ELEMENTWISE_KERNELS) * EAGER_LAUNCH_S > 2 * graphs.time_s


def test_head_and_embedding():
    """The head reads V/t × h 16-bit weights; the embedding moves 2·tokens·h elements."""
    assert head(LLAMA, H100, 1, t=2).weight_bytes == 2 * 64128 * 4096
    assert head(LLAMA, H100, 1).flops == 2 * 128256 * 4096
    assert embedding_time(LLAMA, H100, 1000) > embedding_time(LLAMA, H100, 10)


def test_prefill_is_compute_bound_and_attention_runs_in_16_bits():
    """Prefill scales with the tokens; fp8 GEMMs speed it but attention keeps the bf16 peak."""
    one = prefill_layer(LLAMA, H100, H100, 1, 4096)
    two = prefill_layer(LLAMA, H100, H100, 2, 4096)
    assert two.time_s == pytest.approx(2 * one.time_s, rel=0.1)
    fp8 = prefill_layer(LLAMA, H100_FP8, H100, 1, 4096)
    assert fp8.attention_s == one.attention_s and fp8.time_s < 0.8 * one.time_s
