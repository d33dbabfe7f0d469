"""calc.memory: ZeRO model states and Korthikanti activations."""

import pytest

from calc.errors import CalcError
from calc.memory import activations, layer_activation_bytes, model_states, shard_states

GPT3 = dict(seq_len=2048, micro_batch=1, hidden=12288, heads=96)


def per_layer(**kw):
    args = dict(GPT3)
    args.update(kw)
    return layer_activation_bytes(args.pop("seq_len"), args.pop("micro_batch"), args.pop("hidden"),
                                  args.pop("heads"), **args)


@pytest.mark.parametrize("dp", [1, 2, 64, 1024])
def test_model_states_fall_with_each_zero_stage(dp):
    """Per-device model states never rise from stage 0 to 3, and fall strictly when N_d > 1."""
    values = [model_states(7.5e9, dp, z).model_states_bytes for z in range(4)]
    assert values == sorted(values, reverse=True)
    if dp > 1:
        assert len(set(values)) == 4


def test_zero_stages_shard_model_states_by_the_papers_formulas():
    """Stage 0 (2+2+12)Ψ; 1: 4Ψ + 12Ψ/N; 2: 2Ψ + 14Ψ/N; 3: 16Ψ/N."""
    psi, n = 1e9, 8
    assert [shard_states(psi, "bf16-adam", z, n).model_states_bytes for z in range(4)] == [
        16 * psi, 4 * psi + 12 * psi / n, 2 * psi + 14 * psi / n, 16 * psi / n]


def test_megatron_distributed_optimizer_bytes():
    """Megatron's table: bf16 with fp32 grads 6 + 12/d, fp16 4 + 16/d, fp32 8 + 8/d bytes per parameter."""
    d = 8
    for recipe, expected in (("megatron-bf16", 6 + 12 / d), ("megatron-fp16", 4 + 16 / d), ("fp32-adam", 8 + 8 / d)):
        assert shard_states(1.0, recipe, 1, d).model_states_bytes == pytest.approx(expected)


def test_tp_and_pp_divide_model_states():
    """TP × PP divide the parameters each device holds."""
    assert model_states(8e9, tensor_parallel=4, pipeline_parallel=2).model_states_bytes == 16e9


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(zero=4), "zero must be a whole number <= 3, got 4"),
        (dict(zero=-1), "zero must be a whole number >= 0, got -1"),
        (dict(params=0), "params must be a whole number >= 1, got 0"),
        (dict(params=1e16), "params must be a whole number <= 1000000000000000, got 1e+16"),
        (dict(data_parallel=0), "data_parallel must be a whole number >= 1, got 0"),
        (dict(precision="fp8"), "precision must be one of bf16-adam, fp16-adam, megatron-bf16, megatron-fp16, "
                                "fp32-adam, bf16-states, got 'fp8'"),
    ],
)
def test_model_states_errors(kwargs, message):
    """Out-of-range inputs are CalcErrors with exact messages."""
    args = dict(params=1e9) | kwargs
    with pytest.raises(CalcError) as e:
        model_states(**args)
    assert str(e.value) == message


def test_model_states_bounds_accepted():
    """zero 0 and 3, params 1 and 1e15 are accepted."""
    model_states(1, zero=0)
    model_states(1e15, zero=3)


def test_tp_divides_what_the_formula_says():
    """TP divides 24·sbh and the score term; 10·sbh stays replicated unless SP is on."""
    sbh = 2048 * 12288
    scores = 5 * 96 * 2048 * 2048
    for t in (1, 2, 4, 8):
        assert per_layer(tensor_parallel=t) == pytest.approx(sbh * (10 + 24 / t) + scores / t)
        assert per_layer(tensor_parallel=t, sequence_parallel=True) == pytest.approx(sbh * 34 / t + scores / t)


def test_full_recompute_keeps_the_layer_input_divided_only_by_sp():
    """Full recomputation keeps 2·sbh (2·sbh/t with SP)."""
    assert per_layer(tensor_parallel=8, recompute="full") == 2 * 2048 * 12288
    assert per_layer(tensor_parallel=8, sequence_parallel=True, recompute="full") == 2 * 2048 * 12288 / 8


def test_gated_mlp_and_gqa_general_form():
    """SwiGLU keeps 6f/h instead of 4f/h; GQA shrinks K and V by h_kv/h."""
    base = per_layer(recompute="selective")
    sbh = 2048 * 12288
    assert per_layer(recompute="selective", gated_mlp=True) - base == pytest.approx(sbh * 2 * 4)
    assert base - per_layer(recompute="selective", kv_heads=12) == pytest.approx(sbh * 4 * (1 - 12 / 96))


def test_context_parallel_divides_tokens():
    """CP c holds s/c tokens: the s·b·h terms fall c-fold, the score term c-fold too (queries s/c, keys s)."""
    assert per_layer(context_parallel=4) == pytest.approx(per_layer() / 4)


def test_moe_multiplies_the_mlp_term_by_top_k():
    """An MoE layer keeps the MLP activations of its k experts per token."""
    sbh = 2048 * 12288
    assert per_layer(recompute="selective", moe_top_k=2) - per_layer(recompute="selective") == pytest.approx(sbh * 16)


def test_first_stage_holds_l_layers_worth_and_interleaving_factor():
    """1F1B: the first stage holds l layers' worth; interleaved: × (1 + (p−1)/(p·v))."""
    a = activations(2048, 1, 12288, 96, 96, tensor_parallel=8, pipeline_parallel=8)
    assert a.layers_in_flight == 96 and a.total_bytes == a.per_layer_bytes * 96
    b = activations(2048, 1, 12288, 96, 96, tensor_parallel=8, pipeline_parallel=8, interleave=3)
    assert b.in_flight_factor == pytest.approx(1 + 7 / 24)


def test_few_microbatches_hold_fewer():
    """With m < p the first stage holds m microbatches."""
    a = activations(2048, 1, 12288, 96, 96, pipeline_parallel=8, microbatches=2)
    assert a.layers_in_flight == 2 * 12


def test_full_recompute_adds_one_layer_working_set():
    """Full recomputation stores layer inputs plus one layer's activations while it is recomputed."""
    a = activations(2048, 1, 12288, 96, 96, tensor_parallel=8, recompute="full")
    assert a.recompute_working_bytes == per_layer(tensor_parallel=8)
    assert a.total_bytes == a.stored_bytes + a.recompute_working_bytes


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(interleave=2), "interleave must be 1 when pipeline_parallel is 1, got 2"),
        (dict(pipeline_parallel=5, interleave=2), "layers must be a multiple of pipeline_parallel × interleave = 10, "
                                                  "got 96"),
        (dict(pipeline_parallel=8, interleave=2, microbatches=12),
         "microbatches must be a multiple of pipeline_parallel (8) when interleave > 1, got 12"),
        (dict(recompute="some"), "recompute must be one of none, selective, full, got 'some'"),
        (dict(pipeline_parallel=97), "pipeline_parallel must be <= layers (96), got 97"),
    ],
)
def test_activations_refuse_impossible_pipeline_shapes_with_the_reason(kwargs, message):
    """Impossible pipeline shapes are CalcErrors with the reason."""
    with pytest.raises(CalcError) as e:
        activations(2048, 1, 12288, 96, 96, **kwargs)
    assert str(e.value) == message


def test_kv_heads_replicated_past_their_count_hold_one_head_per_rank():
    """With t above kv_heads each rank keeps one whole KV head (Megatron-LM), as many bytes as kv_heads = t."""
    common = dict(seq_len=8192, micro_batch=1, hidden=4096, heads=32, tensor_parallel=16, recompute="selective",
                  attention="flash")
    replicated = layer_activation_bytes(**common, kv_heads=8)
    assert replicated == layer_activation_bytes(**common, kv_heads=16)
    split = {**common, "tensor_parallel": 4}  # below kv_heads the heads are split and fewer of them are smaller
    assert layer_activation_bytes(**split, kv_heads=8) < layer_activation_bytes(**split, kv_heads=16)


def test_a_model_without_dropout_keeps_no_masks():
    """Without dropout the two s·b·h masks (the replicated 10 becomes 8) and, with standard attention, the
    probabilities' mask and dropped output (5 a·s/h becomes 2) are not kept; with dropout Korthikanti's form holds."""
    s, b, h, a = 2048, 1, 12288, 96
    sbh = s * b * h
    assert layer_activation_bytes(s, b, h, a) == sbh * (34 + 5 * a * s / h)
    assert layer_activation_bytes(s, b, h, a, dropout=False) == sbh * (32 + 2 * a * s / h)
    kw = dict(tensor_parallel=8, sequence_parallel=True, recompute="selective")
    assert layer_activation_bytes(s, b, h, a, **kw) - layer_activation_bytes(s, b, h, a, dropout=False, **kw) == \
        2 * sbh / 8


_BLOCKS = dict(tensor_parallel=8, sequence_parallel=True, pipeline_parallel=8)  # GPT-3: 12 layers per stage


def _figures(a) -> tuple:
    return a.per_layer_bytes, a.layers_in_flight, a.stored_bytes, a.recompute_working_bytes, a.total_bytes, \
        a.recomputed_layers


@pytest.mark.parametrize("interleave,chunk", [(1, 12), (2, 6), (3, 4)])
def test_recompute_layers_zero_is_none_and_every_layer_is_full(interleave, chunk):
    """Megatron's block method at its ends: recomputing 0 layers of each model chunk is recompute none, every
    layer of the chunk is full recomputation, figure for figure."""
    kw = dict(_BLOCKS, interleave=interleave)
    none = activations(2048, 1, 12288, 96, 96, recompute="none", **kw)
    full = activations(2048, 1, 12288, 96, 96, recompute="full", **kw)
    assert _figures(activations(2048, 1, 12288, 96, 96, recompute="full", recompute_layers=0, **kw)) == \
        _figures(none)
    assert _figures(activations(2048, 1, 12288, 96, 96, recompute="full", recompute_layers=chunk, **kw)) == \
        _figures(full)


def test_memory_falls_with_each_recomputed_layer():
    """Each layer recomputed keeps its input instead of everything: the first stage's activations fall strictly
    with N, by the difference of a kept layer and a recomputed one for each chunk in flight."""
    totals = [activations(2048, 1, 12288, 96, 96, recompute="full", recompute_layers=n, interleave=2,
                          **_BLOCKS).total_bytes for n in range(7)]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == 7
    everything = layer_activation_bytes(2048, 1, 12288, 96, tensor_parallel=8, sequence_parallel=True)
    kept = layer_activation_bytes(2048, 1, 12288, 96, tensor_parallel=8, sequence_parallel=True, recompute="full")
    chunks = activations(2048, 1, 12288, 96, 96, interleave=2, **_BLOCKS).layers_in_flight / 6
    assert totals[2] - totals[3] == pytest.approx(chunks * (everything - kept), rel=1e-12)


def test_recompute_layers_is_what_the_plan_keeps_on_the_first_stage():
    """The plan's most loaded stage (the first: it holds the embedding's dropout mask too) keeps what
    :func:`activations` computes for the same model and split, for every N."""
    from calc.hardware import hardware
    from calc.model import model
    from calc.plan import parallel, plan

    gpt3 = model(96, 12288, 96, 51200, 2048, tied_embeddings=True, biases=True, learned_positions=True,
                 attention="standard")
    hw = hardware(64, profile_name="a100-sxm4-80gb")
    for n in (0, 5, 12):
        mem = plan(gpt3, 1, 64, hw, parallel(tensor=8, pipeline=8, recompute="full", recompute_layers=n),
                   "megatron-fp16").memory_per_device
        a = activations(2048, 1, 12288, 96, 96, tensor_parallel=8, pipeline_parallel=8, microbatches=64,
                        recompute="full", recompute_layers=n)
        embedding_masks = 2048 * 12288 * a.layers_in_flight / 12  # one s·b·h byte mask per microbatch in flight
        assert mem.activations_bytes == pytest.approx(a.total_bytes + embedding_masks, rel=1e-12)


def test_flash_attention_without_dropout_is_what_the_plan_keeps_for_a_llama_model():
    """With FlashAttention and no dropout (a Llama-style model) the plan's first stage keeps exactly what
    :func:`activations` computes with ``attention="flash", dropout=False`` (no embedding mask either).
    Not with full recomputation here: the last stage's logits then outweigh the first stage's layers."""
    from calc.hardware import hardware
    from calc.model import model
    from calc.plan import parallel, plan

    llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True, dropout=False)
    hw = hardware(32, profile_name="h100-sxm5-80gb")
    for recompute in ("none", "selective"):
        mem = plan(llama, 1, 32, hw, parallel(tensor=8, pipeline=4, sequence_parallel=True, recompute=recompute),
                   "bf16-adam").memory_per_device
        a = activations(8192, 1, 4096, 32, 32, kv_heads=8, ffn_hidden=14336, gated_mlp=True, tensor_parallel=8,
                        sequence_parallel=True, pipeline_parallel=4, microbatches=32, recompute=recompute,
                        attention="flash", dropout=False)
        assert mem.activations_bytes == pytest.approx(a.total_bytes, rel=1e-12)


def test_the_recomputed_layer_keeps_no_scores_with_flash_attention():
    """Full recomputation's working set is one layer's activations with the layer's own kernel: the s² scores
    only with standard attention (the issue's 131K-token Llama 3 case needed more than selective)."""
    kw = dict(kv_heads=8, ffn_hidden=53248, gated_mlp=True, tensor_parallel=8, sequence_parallel=True,
              context_parallel=16, pipeline_parallel=16, microbatches=16)
    for attention in ("standard", "flash"):
        a = activations(131072, 1, 16384, 128, 126, recompute="full", attention=attention, **kw)
        one_layer = layer_activation_bytes(131072, 1, 16384, 128, attention=attention,
                                           **{k: kw[k] for k in kw if k not in ("pipeline_parallel", "microbatches")})
        assert a.recompute_working_bytes == one_layer
    flash = activations(131072, 1, 16384, 128, 126, recompute="full", attention="flash", **kw)
    selective = activations(131072, 1, 16384, 128, 126, recompute="selective", attention="flash", **kw)
    assert flash.total_bytes < selective.total_bytes


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(recompute="selective", recompute_layers=2),
         "recompute_layers must be blank unless recompute is full (recompute is selective: it applies to every "
         "layer), got 2"),
        (dict(recompute="full", recompute_layers=-1), "recompute_layers must be a whole number >= 0, got -1"),
        (dict(recompute="full", recompute_layers=1.5), "recompute_layers must be a whole number >= 0, got 1.5"),
        (dict(recompute="full", recompute_layers=10_001), "recompute_layers must be a whole number <= 10000, "
                                                          "got 10001"),
        (dict(recompute="full", recompute_layers=13), "recompute_layers must be at most 12, the layers of the "
                                                      "largest model chunk (layers per stage / interleave), got 13"),
        (dict(recompute="full", recompute_layers=7, interleave=2),
         "recompute_layers must be at most 6, the layers of the largest model chunk (layers per stage / "
         "interleave), got 7"),
    ],
)
def test_recompute_layers_refusals_name_the_rule(kwargs, message):
    """Only with full recomputation, a whole number from 0, at most the layers of the largest model chunk."""
    with pytest.raises(CalcError) as e:
        activations(2048, 1, 12288, 96, 96, **{**_BLOCKS, **kwargs})
    assert str(e.value) == message and e.value.param == "recompute_layers"


def test_fp8_keeps_the_linear_inputs_in_one_byte():
    """FP8 saves the QKV and MLP-up inputs (replicated, 2 → 1 each), the projection's and MLP-down inputs (sharded,
    2 → 1 and 2f/h → f/h) at one byte; full recomputation keeps only the layer's input either way."""
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    kw = dict(tensor_parallel=t, sequence_parallel=True, recompute="selective")
    saved = layer_activation_bytes(s, b, h, a, **kw) - layer_activation_bytes(s, b, h, a, fp8=True, **kw)
    assert saved == s * b * h * (2 / t + (1 + 4) / t)
    full = dict(kw, recompute="full")
    assert layer_activation_bytes(s, b, h, a, fp8=True, **full) == layer_activation_bytes(s, b, h, a, **full)
