"""calc.inference: memory per device, prefill, decode, the split's rules and the transfers per token."""

from dataclasses import replace

import pytest

from calc.errors import CalcError
from calc.hardware import hardware
from calc.inference import (SERVING_PRECISIONS, check_serving_split, decode_points, decode_roofline,
                            gemm_hardware, infer, model_weights,
                            serving, serving_precision, split)
from calc.kvcache import kv_bytes_per_token
from calc.model import model

LLAMA8 = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
LLAMA70 = model(80, 8192, 64, 128256, 8192, kv_heads=8, ffn_hidden=28672, gated_mlp=True)
MIXTRAL = model(32, 4096, 32, 32000, 32768, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
H100 = hardware(8, profile_name="h100-sxm5-80gb")
A100 = hardware(8, profile_name="a100-sxm4-80gb")
SV = serving(16, 1024, 256)


def run(sv=SV, *, m=LLAMA8, hw=H100, **degrees):
    return infer(m, sv, hw, split(**(degrees or {"data": 8})))


# ---------------------------------------------------------------------------- memory


def test_weights_per_device_split_over_tensor_and_pipeline():
    """The weights of a device are the model's over t (K/V replicated past the KV heads) and over the stages."""
    whole, _ = model_weights(LLAMA70, serving_precision("bf16"))
    tp8 = run(m=LLAMA70, tensor=8)
    assert tp8.memory_per_device.params_bytes == pytest.approx(whole / 8, rel=0.002)
    pp = run(m=LLAMA70, tensor=4, pipeline=2)
    assert pp.memory_per_device.params_bytes == pytest.approx(whole / 8, rel=0.02)


def test_quantized_weights_keep_embeddings_and_head_in_16_bits():
    """fp8 halves the layers' matrices only; int4 stores 4 bits and a 16-bit scale per 128 weights."""
    bf16, _ = model_weights(LLAMA8, serving_precision("bf16"))
    fp8, _ = model_weights(LLAMA8, serving_precision("fp8"))
    ends = 2 * 2 * 128256 * 4096  # embedding and head, 16-bit
    assert fp8 - ends / 2 == pytest.approx((bf16 - ends) / 2 + ends / 2, rel=1e-3)
    assert serving_precision("int4").weight_bytes == 0.5 + 2 / 128


def test_memory_adds_weights_kv_cache_activations_and_reserve():
    """Total = weights + batch × KV per sequence at full context + prefill activations + reserve."""
    r = run(tensor=1, data=8)
    mem = r.memory_per_device
    assert mem.kv_cache_bytes == 16 * kv_bytes_per_token(LLAMA8) * (1024 + 256)
    assert mem.total_bytes == pytest.approx(mem.params_bytes + mem.kv_cache_bytes + mem.activations_bytes
                                            + mem.reserve_bytes)
    assert mem.reserve_bytes == 2 * 2**30 and mem.fits


def test_max_concurrent_sequences_is_the_largest_batch_that_fits():
    """The batch reported as the most that fits does fit, and one more (or e more) does not."""
    r = run(tensor=2, data=4)
    most = r.max_concurrent_sequences
    assert run(serving(most, 1024, 256), tensor=2, data=4).memory_per_device.fits
    with pytest.raises(CalcError) as info:
        run(serving(most + 1, 1024, 256), tensor=2, data=4)
    assert info.value.param == "batch" and f"at most {most} " in str(info.value)


def test_a_prefill_chunk_bounds_the_activations():
    """With chunked prefill the activations stop growing with the batch, so more sequences fit."""
    whole = run(tensor=2, data=4)
    chunked = run(serving(16, 1024, 256, prefill_chunk=4096), tensor=2, data=4)
    assert chunked.memory_per_device.activations_bytes < whole.memory_per_device.activations_bytes / 3
    assert chunked.max_concurrent_sequences > whole.max_concurrent_sequences


def test_a_batch_that_does_not_fit_says_by_how_much_and_what_binds():
    """One message: the most that fit, the GiB needed and over, and the binding term."""
    with pytest.raises(CalcError) as info:
        run(serving(4000, 4096, 4096, max_context=8192), tensor=1, data=8)
    text = str(info.value)
    assert text.startswith("batch must be at most ") and "GiB over its 79.65 GiB (kv cache binds" in text
    assert text.endswith("got 4000")


def test_weights_that_cannot_fit_name_the_split():
    """When even the weights exceed the GPU, the error is on tensor and says to split or quantize."""
    with pytest.raises(CalcError) as info:
        run(m=LLAMA70, tensor=1, data=8)
    assert info.value.param == "tensor_parallel" and "of weights per GPU" in str(info.value)


# ---------------------------------------------------------------------------- time


def test_decode_is_memory_bound_at_small_batch_and_the_floor_holds():
    """At batch 16 the step is bound by memory bandwidth and never beats the roofline floor."""
    r = run(tensor=2, data=4)
    assert r.decode_bound == "memory bandwidth"
    assert r.decode_floor_s < r.decode_time_per_token_s < 2 * r.decode_floor_s


@pytest.mark.parametrize("degrees", [{"tensor": 8}, {"tensor": 2, "pipeline": 4}, {"pipeline": 8},
                                     {"tensor": 4, "context": 2}])
def test_no_split_beats_the_roofline_floor(degrees):
    """Every split's step is at least the floor of its replica's bandwidth and FLOP/s."""
    r = infer(LLAMA70, serving(32, 2048, 512), H100, split(**degrees))
    assert r.decode_time_per_token_s >= r.decode_floor_s


def test_tensor_parallelism_cuts_latency_and_pipeline_parallelism_does_not():
    """TP 8 reads an eighth of the weights per GPU per step; PP 8 reads them stage after stage."""
    sv = serving(8, 2048, 512)
    tp = infer(LLAMA70, sv, H100, split(tensor=8))
    pp = infer(LLAMA70, sv, H100, split(pipeline=8))
    assert tp.decode_time_per_token_s < 0.5 * pp.decode_time_per_token_s
    assert pp.decode_microbatches == 8


def test_pipeline_decode_runs_microbatches_through_the_stages():
    """With p stages the batch decodes as min(p, B) microbatches; the step is at least m × the slowest stage."""
    r = infer(LLAMA70, serving(8, 2048, 512), H100, split(pipeline=4, tensor=2))
    assert r.decode_microbatches == 4
    slowest = max(s["time_per_microbatch_s"] for s in r.as_dict()["stages"])
    assert r.decode_time_per_token_s >= 4 * slowest
    one = infer(LLAMA70, serving(2, 2048, 512), H100, split(pipeline=4, tensor=2))
    assert one.decode_microbatches == 2


def test_tensor_parallel_all_reduces_are_latency_bound_at_decode():
    """Per token: 2 all-reduces per layer of batch × h × 2 bytes, far below the bandwidth they could reach."""
    r = run(tensor=8, data=1)
    row = next(c for c in r.communications if c.what.startswith("layer outputs"))
    assert row.calls_per_step == 2 * 32 and row.bytes_per_call == 16 * 4096 * 2 and row.group_size == 8
    assert row.bandwidth_bytes_per_s < 0.2 * H100.intra_node_bandwidth
    assert row.exposed_time_s == row.time_s


def test_decode_communications_name_every_strategy_of_the_split():
    """TP rows, EP all-to-alls, CP merges and PP hand-offs appear when those axes are split."""
    r = infer(MIXTRAL, serving(32, 2048, 512), H100, split(tensor=2, expert=4))
    assert {c.strategy for c in r.communications} == {"tensor", "expert"}
    ep = next(c for c in r.communications if c.strategy == "expert")
    assert ep.collective == "all-to-all" and ep.calls_per_step == 2 * 32 and ep.bytes_per_call == 8 * 2 * 4096 * 2
    cp = infer(LLAMA70, serving(8, 8192, 512), H100, split(tensor=4, context=2))
    assert {c.strategy for c in cp.communications} == {"tensor", "context"}
    assert any(c.strategy == "context" and c.collective == "send-recv" for c in cp.prefill_communications)
    pp = infer(LLAMA70, serving(8, 2048, 512), H100, split(tensor=2, pipeline=4))
    assert [c.what for c in pp.communications if c.strategy == "pipeline"] == [
        "hidden states to the next stage", "sampled token ids back to the first stage"]


def test_expert_ranks_split_the_batch_and_hold_their_experts():
    """EP 4 of 8 experts: two experts per GPU; each rank decodes batch/4 sequences."""
    r = infer(MIXTRAL, serving(32, 2048, 512), H100, split(tensor=2, expert=4))
    assert r.stages[0].experts_per_device == 2 and r.memory_per_device.sequences == 8


def test_longer_context_and_bigger_batches_cost_more():
    """The last token (full context) is slower than the mean; a bigger batch raises latency and throughput."""
    r = run(tensor=2, data=4)
    assert r.decode_time_last_token_s > r.decode_time_per_token_s
    big = run(serving(128, 1024, 256), tensor=2, data=4)
    assert big.decode_time_per_token_s > r.decode_time_per_token_s and big.tokens_per_s > 4 * r.tokens_per_s


def test_throughput_and_latency_relations():
    """tokens/s = data × batch / step; per GPU divides by the GPUs; a request is the first token plus the rest."""
    r = run(tensor=2, data=4)
    assert r.tokens_per_s == pytest.approx(4 * 16 / r.decode_time_per_token_s)
    assert r.tokens_per_s_per_device == pytest.approx(r.tokens_per_s / 8)
    assert r.request_latency_s == pytest.approx(r.time_to_first_token_s + 255 * r.decode_time_per_token_s)
    assert 0 < r.mfu < r.prefill_mfu < 1 and 0 < r.mbu < 1


def test_prefill_is_compute_bound_and_grows_with_the_prompt():
    """Doubling the prompt more than doubles nothing but the attention: prefill time about doubles."""
    short = run(serving(8, 2048, 16), tensor=2, data=4)
    long = run(serving(8, 4096, 16), tensor=2, data=4)
    assert 1.9 < long.prefill_time_s / short.prefill_time_s < 2.5
    assert short.prefill_mfu > 0.3


def test_cuda_graphs_off_makes_small_steps_launch_bound():
    """Without CUDA graphs a small model's decode step is much slower: every kernel waits for the CPU."""
    tiny = model(24, 2048, 16, 50000, 2048)
    graphs = infer(tiny, serving(1, 128, 32), H100, split(data=8))
    eager = infer(tiny, serving(1, 128, 32, cuda_graphs=False), H100, split(data=8))
    assert eager.decode_time_per_token_s > 1.5 * graphs.decode_time_per_token_s


# ---------------------------------------------------------------------------- precisions and rules


def test_fp8_needs_a_profile_with_an_fp8_peak():
    """fp8 GEMMs run at the H100's fp8 peak; on the A100 the error names the profile's peak_flops."""
    assert gemm_hardware(H100, serving_precision("fp8")).flops_per_gpu == 1979e12
    assert gemm_hardware(A100, serving_precision("int8")).flops_per_gpu == 624e12
    assert gemm_hardware(A100, serving_precision("int4")).flops_per_gpu == 312e12
    with pytest.raises(CalcError) as info:
        infer(LLAMA8, serving(4, 512, 64, "fp8"), A100, split(data=8))
    assert info.value.param == "weight_precision" and "peak_flops has fp32, tf32, bf16, fp16, int8 and no fp8" in \
        str(info.value)
    assert gemm_hardware(A100, serving_precision("fp8"), 600e12).flops_per_gpu == 600e12


def test_fp8_is_faster_than_bf16_where_it_matters():
    """fp8 weights halve the bytes a memory-bound step reads."""
    bf16 = run(serving(8, 1024, 256), tensor=1, data=8)
    fp8 = run(serving(8, 1024, 256, "fp8", "fp8"), tensor=1, data=8)
    assert fp8.decode_time_per_token_s < 0.7 * bf16.decode_time_per_token_s


@pytest.mark.parametrize("degrees,param,message", [
    ({"tensor": 3, "data": 1}, "gpus", "gpus must be a multiple of tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = 3, got 8"),
    ({"tensor": 2, "data": 2}, "data_parallel", "data_parallel must be gpus / (tensor_parallel × pipeline_parallel × context_parallel × expert_parallel) = 4, got 2"),
    ({"expert": 2, "data": 4}, "expert_parallel", "expert_parallel must be a divisor of experts (1), got 2"),
])
def test_a_split_that_does_not_multiply_or_divide_is_refused_naming_the_rule(degrees, param, message):
    """The split must multiply to the GPUs and divide the model; the message names the rule and the value."""
    with pytest.raises(CalcError) as info:
        run(**degrees)
    assert (info.value.param, str(info.value)) == (param, message)


def test_tensor_must_divide_the_heads():
    """t = 16 on a 24-head model is refused on tensor."""
    m = model(24, 3072, 24, 32000, 4096)
    with pytest.raises(CalcError, match=r"^tensor_parallel must be a divisor of heads \(24\)"):
        infer(m, SV, hardware(16, profile_name="h100-sxm5-80gb"), split(tensor=16))


def test_pipeline_must_not_exceed_the_layers():
    """More stages than layers is refused on pipeline."""
    m = model(4, 1024, 8, 32000, 2048)
    with pytest.raises(CalcError, match=r"^pipeline_parallel must be <= layers \(4\), got 8$"):
        infer(m, SV, H100, split(pipeline=8))


def test_batch_must_be_a_multiple_of_expert():
    """The expert ranks split the batch, so it must divide."""
    with pytest.raises(CalcError, match=r"^batch must be a multiple of expert_parallel \(4\)"):
        infer(MIXTRAL, serving(30, 512, 64), H100, split(tensor=2, expert=4))


def test_context_parallelism_needs_an_evenly_split_prompt():
    """2c must divide the prompt for the load-balanced causal split."""
    with pytest.raises(CalcError, match="^context_parallel must be such that 2 × context_parallel divides prompt_tokens"):
        infer(LLAMA70, serving(8, 1001, 64), H100, split(tensor=4, context=2))


@pytest.mark.parametrize("kwargs,message", [
    ({"batch": 0}, "batch must be a whole number >= 1, got 0"),
    ({"prompt_tokens": 8192, "max_context": 8192}, "prompt_tokens must be < max_context (8192) to leave room for an "
                                                   "output token, got 8192"),
    ({"output_tokens": 9000, "max_context": 8192}, "output_tokens must be <= max_context − prompt_tokens = 7168, got "
                                                   "9000"),
    ({"weight_precision": "int2"}, "weight_precision must be one of " + ", ".join(SERVING_PRECISIONS) +
     ", got 'int2'"),
    ({"prefill_chunk": 0}, "prefill_chunk must be a whole number >= 1, got 0"),
    ({"cuda_graphs": "yes"}, "cuda_graphs must be true or false, got 'yes'"),
])
def test_serving_section_rules(kwargs, message):
    """Each field of the serving section is checked with its name, its rule and the value."""
    args = {"batch": 8, "prompt_tokens": 1024, "output_tokens": 256} | kwargs
    with pytest.raises(CalcError) as info:
        serving(**args)
    assert str(info.value) == message


def test_one_efficiency_model_is_refused():
    """compute_efficiency would hide the memory-bound decode: refused by name."""
    hw = hardware(8, profile_name="h100-sxm5-80gb", compute_efficiency=0.5)
    with pytest.raises(CalcError, match="^compute_efficiency must be blank when serving"):
        infer(LLAMA8, SV, hw, split(data=8))


def test_check_split_accepts_kv_replication():
    """t = 16 > 8 KV heads is a valid split: each KV head is replicated twice."""
    check_serving_split(LLAMA70, serving(8, 512, 64), hardware(16, profile_name="h100-sxm5-80gb"), split(tensor=16))
    r = infer(LLAMA70, serving(8, 512, 64), hardware(16, profile_name="h100-sxm5-80gb"), split(tensor=16))
    assert r.kv_replicated and r.kv_heads_per_device == 1


# ---------------------------------------------------------------------------- the roofline and the atlas shape


def test_roofline_memory_and_compute_terms():
    """Small batch: (B·KV + W)/bandwidth; large batch: the FLOP term takes over the weights' read."""
    small = decode_roofline(1, 1e6, 1e9, 1e9, 1e12, 1e15)
    assert small.memory_s == small.time_s == pytest.approx((1e6 + 1e9) / 1e12)
    big = decode_roofline(10_000, 0.0, 1e9, 1e9, 1e12, 1e15)
    assert big.time_s == pytest.approx(2 * 10_000 * 1e9 / 1e15) and big.tokens_per_s == pytest.approx(1e4 / 0.02)
    with pytest.raises(CalcError, match="^bandwidth must be"):
        decode_roofline(1, 1, 1, 1, 0, 1)


def test_the_result_has_what_the_atlas_draws():
    """infer's dict carries the plan-shaped parallel, gpus, nodes, strides, stages, communications and memory."""
    from calc.diagram import atlas_layout

    d = infer(LLAMA70, serving(8, 2048, 512), hardware(16, profile_name="h100-sxm5-80gb"),
              split(tensor=8, pipeline=2)).as_dict()
    drawing = atlas_layout(d | {"step_time_s": d["decode_time_per_token_s"]})
    crossings = [i for i in drawing["items"] if i["t"] == "g" and i["cls"].startswith("atlas-crossing")]
    assert len(crossings) == len(d["communications"]) and d["nodes"] == 2
    assert d["rank_strides"] == {"data": 16, "pipeline": 8, "context": 8, "expert": 8, "tensor": 1}


def test_memo_shared_across_calls_gives_the_same_answer():
    """The search's shared cache changes nothing: a second call with the memo equals a fresh one."""
    memo: dict = {}
    a = infer(LLAMA8, SV, H100, split(data=4, tensor=2), memo=memo)
    infer(LLAMA8, replace(SV, batch=32), H100, split(data=8), memo=memo)
    b = infer(LLAMA8, SV, H100, split(data=4, tensor=2), memo=memo)
    assert a == b == infer(LLAMA8, SV, H100, split(data=4, tensor=2))


def test_a_sweep_makes_the_setup_once_and_still_checks_each_batch():
    """decode_points (the inference chart's sweep) gives infer's decode figures at each batch, with the split's
    setup made once, and refuses a batch the expert ranks cannot split, as infer does."""
    sp = split(tensor=2, expert=4)
    sv = serving(32, 2048, 512)
    for d, b in zip(decode_points(MIXTRAL, sv, H100, sp, [8, 64]), (8, 64)):
        r = infer(MIXTRAL, replace(sv, batch=b), H100, sp)
        assert (d.batch, d.decode_time_per_token_s, d.decode_floor_s, d.memory_bytes) == (
            b, r.decode_time_per_token_s, r.decode_floor_s, r.memory_per_device.total_bytes)
    with pytest.raises(CalcError, match=r"^batch must be a multiple of expert_parallel \(4\)"):
        decode_points(MIXTRAL, sv, H100, sp, [8, 30])
