"""calc.work: a layer's forward, backward and recomputation on one device; the head; the optimizer step."""

import pytest

from calc.hardware import fp8_hardware, hardware
from calc.model import model
from calc.work import (elementwise_bytes, fp8_cast_bytes, head_work, kv_hidden_per_rank, layer_kernels, layer_work,
                       optimizer_time)

A100 = hardware(8, profile_name="a100-sxm4-80gb")
GPT3 = model(96, 12288, 96, 51200, 2048, biases=True, learned_positions=True)
LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)


def test_backward_is_about_twice_the_forward():
    """Two GEMMs per forward GEMM in the backward pass."""
    w = layer_work(GPT3, A100, 1, t=8)
    assert 1.8 < w.backward_s / w.forward_s < 2.6


@pytest.mark.parametrize("attention", ["standard", "flash"])
def test_recompute_full_redoes_the_forward_selective_the_attention_core(attention):
    """full redoes the forward; selective redoes the attention core (nothing with FlashAttention); none nothing."""
    none = layer_work(GPT3, A100, 1, t=8, attention=attention)
    full = layer_work(GPT3, A100, 1, t=8, recompute="full", attention=attention)
    selective = layer_work(GPT3, A100, 1, t=8, recompute="selective", attention=attention)
    assert none.recompute_s == 0 and full.recompute_s == pytest.approx(full.forward_s)
    if attention == "flash":
        assert selective.recompute_s == 0
    else:
        assert selective.recompute_s == pytest.approx(selective.attention_forward_s)


def test_tensor_parallelism_splits_the_work():
    """t = 8 takes much less than the whole layer, but more than an eighth (smaller, less efficient GEMMs)."""
    one = layer_work(GPT3, A100, 1).total_s
    eight = layer_work(GPT3, A100, 1, t=8).total_s
    assert one / 8 < eight < one / 4


def test_sequence_parallelism_divides_the_replicated_element_wise_work():
    """With SP the norms and residual adds run on s/t tokens."""
    assert layer_work(LLAMA, A100, 1, t=8, sequence_parallel=True).memory_bound_s < \
        layer_work(LLAMA, A100, 1, t=8).memory_bound_s


def test_standard_attention_at_long_context_is_slower_than_flash():
    """The s² scores written and read: standard attention loses at long sequences."""
    assert layer_work(LLAMA, A100, 1, t=8, attention="standard").forward_s > \
        layer_work(LLAMA, A100, 1, t=8, attention="flash").forward_s


def test_moe_layers_route_top_k_tokens_to_local_experts():
    """An MoE layer with top-2 of 8 experts costs more than a dense one, less than 8 of them."""
    mixtral = model(32, 4096, 32, 32000, 4096, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
    dense = layer_work(mixtral, A100, 1, e=8).total_s
    moe = layer_work(mixtral, A100, 1, e=8, moe=True).total_s
    assert dense < moe < 4 * dense


def test_kv_heads_per_rank():
    """h_kv/t until t passes the KV heads, then one head per rank."""
    assert [kv_hidden_per_rank(LLAMA, t) for t in (1, 2, 8, 16, 32)] == [1024, 512, 128, 128, 128]


def test_the_head_and_the_optimizer():
    """The logits GEMM grows with V/t; the optimizer streams 30 B per parameter for bf16 Adam."""
    assert head_work(GPT3, A100, 1, t=1) > head_work(GPT3, A100, 1, t=8)
    t = optimizer_time(A100, 1e9, 2, 2, 12)
    assert t == pytest.approx(30e9 / (2.039e12 * A100.gpu.hbm_efficiency) + 4 * A100.gpu.kernel_overhead_s)


def test_a_model_without_dropout_moves_fewer_bytes():
    """No dropout: no masks written by the residual adds and no dropout of the scores; the GEMMs are the same."""
    hw = hardware(8, profile_name="a100-sxm4-80gb", dtype="fp16")
    for attention in ("standard", "flash"):
        with_, without = (layer_work(model(96, 12288, 96, 51200, 2048, dropout=d, attention=attention), hw, 1, t=8,
                                     attention=attention) for d in (True, False))
        assert without.memory_bound_s < with_.memory_bound_s and without.total_s < with_.total_s
        assert without.gemm_s == with_.gemm_s


def test_eager_kernels_cost_what_the_model_code_runs():
    """Eager PyTorch: RMSNorm and rotary in fp32 move several times the fused bytes in more kernels, and only
    the element-wise work changes; LayerNorm and GeLU are one kernel each, so a GPT-style layer costs as fused."""
    hw = hardware(8, profile_name="h100-sxm5-80gb")
    kw = dict(kv_heads=8, ffn_hidden=14336, gated_mlp=True, dropout=False)
    fused, eager = (model(32, 4096, 32, 128256, 8192, kernels=k, norm="rmsnorm", **kw) for k in ("fused", "eager"))
    (fb, fk), (eb, ek) = elementwise_bytes(fused, 8192), elementwise_bytes(eager, 8192)
    assert eb > 3 * fb and ek > fk
    wf, we = layer_work(fused, hw, 1), layer_work(eager, hw, 1)
    assert we.gemm_s == wf.gemm_s and we.memory_bound_s > 3 * wf.memory_bound_s
    # RMSNorm is dearer than LayerNorm only in eager code
    ln = model(32, 4096, 32, 128256, 8192, kernels="eager", norm="layernorm", **kw)
    assert elementwise_bytes(ln, 8192)[0] < eb
    assert elementwise_bytes(model(32, 4096, 32, 128256, 8192, norm="layernorm", **kw), 8192)[0] == fb
    gpt_eager = model(24, 2048, 16, 50368, 2048, learned_positions=True, dropout=False, kernels="eager")
    gpt_fused = model(24, 2048, 16, 50368, 2048, learned_positions=True, dropout=False)
    assert elementwise_bytes(gpt_eager, 4096)[0] == elementwise_bytes(gpt_fused, 4096)[0]


def test_eager_sequence_parallelism_and_tensor_parallelism_divide_their_parts():
    """With t ranks the MLP and rotary bytes split t ways; with SP the norms and adds too."""
    m = model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True, kernels="eager", norm="rmsnorm")
    one, tp, sp = elementwise_bytes(m, 4096), elementwise_bytes(m, 4096, t=4), elementwise_bytes(m, 4096, 4, True)
    assert sp[0] < tp[0] < one[0] and sp[1] == tp[1] == one[1]


H100 = hardware(8, profile_name="h100-sxm5-80gb")


def test_fp8_runs_the_linear_gemms_on_the_fp8_peak_and_adds_transformer_engine_s_casts():
    """FP8: the projections and MLP at the fp8 peak × fp8_gemm_efficiency, the same attention, and cast-transpose
    traffic added to the element-wise work (forward and backward)."""
    bf16 = layer_kernels(LLAMA, H100, 1, t=2)
    fp8 = layer_kernels(LLAMA, H100, 1, t=2, fp8=(fp8_hardware(H100), {}))
    g_fwd, g_bwd, a_fwd, a_bwd, a_rec, ew_fwd, ew_bwd = fp8
    assert (a_fwd, a_bwd, a_rec) == bf16[2:5]
    assert 0.4 * bf16[0] < g_fwd < 0.7 * bf16[0] and 0.4 * bf16[1] < g_bwd < 0.7 * bf16[1]
    assert ew_fwd > bf16[5] and ew_bwd > bf16[6]
    T, h, kv, f = 8192, 4096, 512, 14336 // 2
    linear = [(T, h // 2 + 2 * kv, h, 1), (T, h, h // 2, 1), (T, 2 * f, h, 1), (T, h, f, 1)]
    fwd, bwd = fp8_cast_bytes(linear)
    assert fwd == 2 * T * h + 4 * T * h // 2 + 2 * T * h + 2 * T * f  # transposes; the projection's cast too
    assert bwd == 4 * T * (h // 2 + 2 * kv + h + 2 * f + h)


def test_fp8_keeps_the_router_at_sixteen_bits():
    """An MoE layer's router GEMM stays at the 16-bit element size; its experts run in fp8."""
    moe = model(8, 4096, 32, 32000, 4096, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
    memo: dict = {}
    layer_kernels(moe, H100, 1, moe=True, memo=memo, fp8=(fp8_hardware(H100), {}))
    assert memo and all(key[4] == 2.0 and 8 in key[:3] for key in memo)  # (T, E, h) and its backward shapes
