"""calc.model: architectures, parameter counts and precision recipes."""

import pytest

from calc.errors import CalcError
from calc.model import PRECISIONS, layer_params, megatron_params, model, param_count, precision


def llama(layers, hidden, heads, kv, ffn, vocab, seq, **kw):
    return model(layers, hidden, heads, vocab, seq, kv_heads=kv, ffn_hidden=ffn, gated_mlp=True, **kw)


@pytest.mark.parametrize(
    "m,expected",
    [
        (llama(32, 4096, 32, 32, 11008, 32000, 4096), 6_738_415_616),  # Llama 2 7B
        (llama(80, 8192, 64, 8, 28672, 32000, 4096), 68_976_648_192),  # Llama 2 70B
        (llama(32, 4096, 32, 8, 14336, 128256, 8192), 8_030_261_248),  # Llama 3 8B
        (llama(80, 8192, 64, 8, 28672, 128256, 8192), 70_553_706_496),  # Llama 3 70B
        (llama(32, 4096, 32, 8, 14336, 32000, 32768, experts=8, top_k=2), 46_702_792_704),  # Mixtral 8x7B
    ],
    ids=["llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "mixtral-8x7b"],
)
def test_published_architectures_count_exactly(m, expected):
    """Parameter counts equal the published totals of Llama 2, Llama 3 and Mixtral to the parameter."""
    assert param_count(m).total == expected


def test_mixtral_active_parameters():
    """Mixtral 8x7B passes each token through 2 of 8 experts: 12.9B active parameters."""
    c = param_count(llama(32, 4096, 32, 8, 14336, 32000, 32768, experts=8, top_k=2))
    assert c.active_per_token == 12_879_925_248 and c.moe_layers == 32


def test_gpt3_is_175b():
    """GPT-3 (96 × 12288, V = 50257, learned positions, biases, tied) has 175B parameters (0.3 %)."""
    c = param_count(model(96, 12288, 96, 50257, 2048, biases=True, learned_positions=True, tied_embeddings=True))
    assert c.total == pytest.approx(175e9, rel=3e-3)


@pytest.mark.parametrize("l,h", [(24, 2304), (48, 8192), (128, 25600)])
def test_general_count_is_eq2_plus_final_norm(l, h):
    """With GPT conventions the general count is Megatron's Eq. 2 plus the final LayerNorm's 2h."""
    m = model(l, h, 16, 51200, 2048, biases=True, learned_positions=True, tied_embeddings=True)
    assert param_count(m).total == pytest.approx(megatron_params(l, h) + 2 * h, rel=1e-12)


def test_gqa_shrinks_only_k_and_v():
    """Grouped-query attention removes 2·h·(h − h_kv) weights per layer."""
    full = layer_params(model(1, 4096, 32, 10, 8))
    gqa = layer_params(model(1, 4096, 32, 10, 8, kv_heads=8))
    assert full.attention_sharded - gqa.attention_sharded == 2 * 4096 * (4096 - 1024)


def test_untied_head_adds_v_h():
    """An untied output head adds V·h parameters."""
    tied = param_count(model(2, 64, 4, 1000, 16, tied_embeddings=True)).total
    assert param_count(model(2, 64, 4, 1000, 16)).total - tied == 1000 * 64


def test_moe_layer_freq_counts_every_kth_layer():
    """moe_layer_freq = 2 makes layers 0, 2, 4, ... MoE layers."""
    m = model(5, 64, 4, 100, 16, experts=4, top_k=1, moe_layer_freq=2)
    assert param_count(m).moe_layers == 3 and m.moe_layers_in(1, 5) == 2


def test_unset_shape_fields_give_mha_a_4h_ffn_dense_untied():
    """kv_heads = heads, ffn_hidden = 4h, dense, untied."""
    m = model(2, 64, 4, 100, 16)
    assert (m.kv_heads, m.ffn_hidden, m.experts, m.tied_embeddings, m.gated_mlp) == (4, 256, 1, False, False)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(layers=0), "layers must be a whole number >= 1, got 0"),
        (dict(layers=10_001), "layers must be a whole number <= 10000, got 10001"),
        (dict(layers=10_000), None),
        (dict(heads=3), "heads must be a divisor of hidden (64), got 3"),
        (dict(kv_heads=3), "kv_heads must be a divisor of heads (4), got 3"),
        (dict(kv_heads=True), "kv_heads must be a whole number >= 1, got True"),
        (dict(hidden=float("nan")), "hidden must be a whole number >= 1, got nan"),
        (dict(vocab=1.5), "vocab must be a whole number >= 1, got 1.5"),
        (dict(experts=2, top_k=3), "top_k must be <= experts (2), got 3"),
        (dict(experts=2, top_k=2), None),
        (dict(gated_mlp=1), "gated_mlp must be true or false, got 1"),
        (dict(kernels="compiled"), "kernels must be one of fused, eager, got 'compiled'"),
        (dict(norm="rms"), "norm must be one of layernorm, rmsnorm, got 'rms'"),
    ],
)
def test_model_validation_messages(kwargs, message):
    """Each rule of model() on both sides, with its exact message."""
    args = dict(layers=2, hidden=64, heads=4, vocab=100, seq_len=16) | kwargs
    if message is None:
        model(**args)
        return
    with pytest.raises(CalcError) as e:
        model(**args)
    assert str(e.value) == message


def test_each_precision_recipe_has_its_bytes_per_parameter_and_unknown_is_refused():
    """16 bytes for the ZeRO recipes, 18 and 20 for Megatron's, 16 for fp32, 10 for bf16 optimizer states; unknown
    names rejected."""
    assert {n: p.total_bytes for n, p in PRECISIONS.items()} == {
        "bf16-adam": 16, "fp16-adam": 16, "megatron-bf16": 18, "megatron-fp16": 20, "fp32-adam": 16, "bf16-states": 10}
    with pytest.raises(CalcError, match="^precision must be one of bf16-adam"):
        precision("int8")
