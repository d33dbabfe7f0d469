"""calc.compute: FLOPs, training time, utilisation."""

import pytest

from calc.compute import megatron_flops, train_time, training_flops, utilization
from calc.errors import CalcError
from calc.model import model


@pytest.mark.parametrize("l,h,V,s,B", [(96, 12288, 51200, 2048, 1536), (24, 2304, 51200, 2048, 512), (4, 256, 1000, 128, 3)])
@pytest.mark.parametrize("recompute", ["full", "none"])
def test_general_form_equals_eq3(l, h, V, s, B, recompute):
    """For f = 4h, dense MHA, the general count equals Eq. 3 (96, full) and the 3-pass form (72, none)."""
    got = training_flops(model(l, h, 8 if h % 8 == 0 else 1, V, s), B, recompute).hardware_flops
    assert got == pytest.approx(megatron_flops(B, s, l, h, V, recompute), rel=1e-12)


def test_selective_adds_the_attention_core_once():
    """Selective recomputation adds 4·B·s²·h per layer; model FLOPs are the same for every mode."""
    m = model(2, 64, 4, 100, 32)
    none, sel, full = (training_flops(m, 3, r) for r in ("none", "selective", "full"))
    assert sel.hardware_flops - none.hardware_flops == 3 * 2 * 4 * 32 * 32 * 64
    assert none.model_flops == sel.model_flops == full.model_flops < sel.hardware_flops < full.hardware_flops


def test_model_flops_are_close_to_6nd():
    """Model FLOPs per token ≈ 6·N for a large model with short sequences (within 5 %)."""
    from calc.model import param_count

    m = model(96, 12288, 96, 51200, 2048)
    n = param_count(m).total
    assert training_flops(m, 1, "none").flops_per_token == pytest.approx(6 * n, rel=0.05)


def test_moe_counts_top_k_experts():
    """An MoE model costs the FLOPs of its active parameters: top_k experts' MLPs plus the router."""
    dense = training_flops(model(2, 64, 4, 100, 32), 1).forward_flops
    moe = training_flops(model(2, 64, 4, 100, 32, experts=8, top_k=2), 1).forward_flops
    assert moe - dense == 2 * 32 * 2 * (2 * 64 * 256 + 64 * 8)


def test_train_time_without_recompute_is_three_quarters():
    """6TP/(nX) is 3/4 of 8TP/(nX)."""
    assert train_time(175e9, 300e9, 1024, 140e12, "none").seconds == pytest.approx(
        0.75 * train_time(175e9, 300e9, 1024, 140e12).seconds)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: train_time(175e9, 300e9, 1024, 0), "flops_per_gpu must be a number > 0 FLOP/s, got 0"),
        (lambda: train_time(175e9, 300e9, 0, 1e12), "gpus must be a whole number >= 1, got 0"),
        (lambda: train_time(175e9, 1e17, 1, 1e12), "tokens must be a whole number <= 10000000000000000, got 1e+17"),
        (lambda: train_time(1, 1, 1, 1e12, "selective"),
         "recompute must be full or none (Eq. 4 has no selective form), got 'selective'"),
        (lambda: megatron_flops(1, 1, 1, 1, 1, "selective"),
         "recompute must be full or none (Eq. 3 has no selective form), got 'selective'"),
        (lambda: training_flops(model(1, 4, 1, 8, 2), 0), "global_batch must be a whole number >= 1, got 0"),
        (lambda: utilization(1.0, 0.0, 1, 1.0), "step_time_s must be a number > 0 s, got 0.0"),
    ],
)
def test_training_compute_refuses_bad_inputs_with_exact_messages(call, message):
    """Bad inputs are CalcErrors with exact messages."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message


def test_the_largest_documented_params_and_tokens_are_accepted():
    """The largest documented params and tokens are accepted."""
    assert train_time(1e15, 1e16, 1, 1e21).seconds == 8e31 / 1e21
