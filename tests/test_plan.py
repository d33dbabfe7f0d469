"""calc.plan: placement, memory, communication volumes and times, step time, refusals."""

import json
from math import fsum

import pytest

from calc.api import COMMANDS, evaluate
from calc.errors import CalcError
from calc.hardware import hardware
from calc.model import model, param_count
from calc.network import collective_time, group_link
from calc.presets import PRESETS
from calc.plan import (
    FP8_WEIGHT_COPY_BYTES,
    TP_ASYNC_CALLS,
    TP_CALLS,
    check_combination,
    chunk_ranges,
    dp_calls,
    bound_from_parts,
    estimate,
    first_stage_bound,
    layout,
    memory,
    memory_parts,
    memory_total,
    parallel,
    plan,
    step_bound,
    step_floor,
    shared_by_interleavings,
    time_parts,
    workload,
)

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
HW = hardware(64, profile_name="h100-sxm5-80gb")
GPT3 = model(96, 12288, 96, 51200, 2048, tied_embeddings=True, biases=True, learned_positions=True)


def rows(pl, strategy):
    return [c for c in pl.communications if c.strategy == strategy]


def test_the_issue_example():
    """The issue's Llama-3-8B spec: 64 microbatches, fits, TP all-gathers and reduce-scatters inside a node."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 8, zero=1, sequence_parallel=True, recompute="selective"))
    assert pl.microbatches_per_step == 64 and pl.memory_per_device.fits
    assert {(c.collective, c.intra_node) for c in rows(pl, "tensor")} == {("all-gather", True),
                                                                           ("reduce-scatter", True)}
    assert {(c.collective, c.intra_node) for c in rows(pl, "data")} == {("reduce-scatter", False),
                                                                         ("all-gather", False)}
    assert pl.hardware_profile == "h100-sxm5-80gb"
    json.dumps(pl.as_dict())


@pytest.mark.parametrize("par", [
    parallel(2, 8, 4, zero=1, sequence_parallel=True, interleave=2), parallel(8, 2, 2, 2, recompute="full"),
    parallel(64, zero=3), parallel(64, zero=2), parallel(4, 4, 4, zero=3), parallel(8, 8, tp_comm_overlap=True),
    parallel(64, zero=3, zero_group=8), parallel(16, 4, zero=1, zero_group=2), parallel(64, zero=2, zero_group=8),
    parallel(64, zero=3, recompute="full", zero3_gather="tensor-blocking"),
])
def test_step_time_adds_up(par):
    """step = compute + bubble + exposed communication + optimizer; the rows' exposed times sum to the third."""
    pl = plan(LLAMA, 1, 512, HW, par)
    parts = pl.compute_time_s + pl.bubble_time_s + pl.exposed_communication_s + pl.optimizer_time_s
    assert parts == pytest.approx(pl.step_time_s)
    assert sum(c.exposed_time_s for c in pl.communications) == pytest.approx(pl.exposed_communication_s)
    assert all(0 <= c.exposed_time_s <= c.time_s * (1 + 1e-12) for c in pl.communications)


def test_bubble_fraction_and_time():
    """bubble_fraction = (p−1)/(v·m); with equal middle stages the bubble is about (p−1)/v microbatches."""
    pl = plan(LLAMA, 1, 512, HW, parallel(2, 8, 4, interleave=2, sequence_parallel=True))
    assert pl.bubble_fraction == 3 / (2 * 256)
    times = [s.time_per_microbatch_s for s in pl.stages]
    assert pl.bubble_time_s == pytest.approx((sum(times) - max(times)) / 2)


def test_dp_all_reduce_is_bucketed_rings_on_the_network():
    """ZeRO-0: the gradients all-reduced in buckets of max(40M, 10^6·d) parameters, each a ring on the NICs."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True))
    (dp,) = rows(pl, "data")
    params = pl.stages[0].params_per_device
    assert params == pytest.approx(param_count(LLAMA).total / 8, rel=1e-3)
    buckets = dp_calls(params, ((8, 8),))
    assert dp.calls_per_step == buckets == -(-int(params) // 40_000_000)
    assert dp.collective == "all-reduce" and dp.bytes_per_call * buckets == pytest.approx(2 * params)
    assert dp.bytes_per_step == pytest.approx(2 * 7 / 8 * 2 * params)
    one = collective_time("all-reduce", group_link(HW, ((8, 8),)), dp.bytes_per_call)[0]
    assert dp.time_s == pytest.approx(buckets * one) and not dp.intra_node


def test_overlapping_the_gradient_reduction_hides_it():
    """overlap_grad_reduce: only what outlasts the last backward pass is exposed; without it, all of it."""
    on = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)), "data")[0]
    off = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True, overlap_grad_reduce=False)), "data")[0]
    assert off.exposed_time_s == pytest.approx(off.time_s) and on.exposed_time_s < on.time_s


def test_zero3_moves_one_and_a_half_times_the_dp_volume():
    """ZeRO paper §7: P_os+g+p moves 3Ψ against 2Ψ (one microbatch per step)."""
    def volume(z):
        return sum(c.bytes_per_step for c in rows(plan(LLAMA, 8, 512, HW, parallel(64, zero=z)), "data"))

    assert volume(3) == pytest.approx(1.5 * volume(0)) and volume(1) == pytest.approx(volume(0))


def test_zero3_gathers_by_layer_or_by_tensor():
    """FSDP gathers a layer per call; DeepSpeed each weight tensor, and again in a recomputed forward."""
    fsdp = plan(LLAMA, 1, 512, HW, parallel(64, zero=3, recompute="full"))
    ds = plan(LLAMA, 1, 512, HW, parallel(64, zero=3, recompute="full", zero3_gather="tensor"))
    ag_f = next(c for c in rows(fsdp, "data") if c.collective == "all-gather")
    ag_d = next(c for c in rows(ds, "data") if c.collective == "all-gather")
    assert ag_f.calls_per_step == 32 * 2 * 8 and ag_d.calls_per_step == 32 * 7 * 3 * 8
    assert ds.step_time_s > fsdp.step_time_s


def test_sequence_parallel_moves_the_same_bytes_as_all_reduces():
    """SP: 4 all-gathers and 4 reduce-scatters per layer per microbatch carry the bytes of 4 all-reduces."""
    sp = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)), "tensor")
    (ar,) = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8)), "tensor")
    assert [c.calls_per_step for c in sp] == [32 * 4 * 64] * 2
    assert sum(c.bytes_per_step for c in sp) == pytest.approx(ar.bytes_per_step)


def test_tp_volume_and_times():
    """TP without SP: 4 all-reduces of b·s·h per layer per microbatch (6 with full recomputation), all exposed in
    the 2021 engine; Megatron's engine hides part of the backward's two behind the weight gradients."""
    one = collective_time("all-reduce", group_link(HW, ((1, 8),)), 8192 * 4096 * 2)[0]
    exposed = {}
    for engine in ("megatron-2021", "megatron"):
        pl = plan(LLAMA, 1, 512, HW, parallel(8, 8, recompute="full", pipeline_engine=engine))
        (tp,) = rows(pl, "tensor")
        assert tp.bytes_per_call == 8192 * 4096 * 2 and tp.calls_per_step == 32 * TP_CALLS["full"] * 64 == 32 * 6 * 64
        assert tp.time_s == pytest.approx(tp.calls_per_step * one)
        exposed[engine] = tp.exposed_time_s
    assert exposed["megatron-2021"] == pytest.approx(tp.time_s)
    hideable = 32 * TP_ASYNC_CALLS * 64 * one
    assert tp.time_s - hideable < exposed["megatron"] < tp.time_s


def test_tp_comm_overlap_hides_tp_behind_gemms():
    """With tp_comm_overlap the TP collectives mostly hide behind the GEMMs around them."""
    off = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True))
    on = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True, tp_comm_overlap=True))
    assert sum(c.exposed_time_s for c in rows(on, "tensor")) < 0.5 * sum(c.exposed_time_s for c in rows(off, "tensor"))
    assert on.step_time_s < off.step_time_s


def test_pp_volume():
    """PP: each device sends its 1/t of b·s·h forward and backward for every microbatch and chunk."""
    pl = plan(LLAMA, 2, 512, HW, parallel(2, 4, 8, interleave=2, sequence_parallel=True))
    (pp,) = [c for c in rows(pl, "pipeline") if c.collective == "send-recv"]
    assert pp.bytes_per_call == 2 * 8192 * 4096 * 2 / 4 and pp.calls_per_step == 2 * 2 * pl.microbatches_per_step
    assert pp.bytes_per_step == pp.bytes_per_call * pp.calls_per_step


def test_deepspeed_engine_sends_one_transfer_at_a_time():
    """DeepSpeed's pipeline engine: four blocking sends per microbatch where Megatron batches them into two; the
    step grows by those two sends on every microbatch of the slowest stage and the bubble. (Both add each
    microbatch's gradients in a pass of their own: Megatron-LM 2021 is the engine to compare with.)"""
    m, ds = (plan(GPT3, 1, 512, HW, parallel(2, 8, 4, recompute="full", pipeline_engine=e))
             for e in ("megatron-2021", "deepspeed"))
    (pm,), (pd,) = ([c for c in rows(pl, "pipeline") if c.collective == "send-recv"] for pl in (m, ds))
    assert pd.calls_per_step == 2 * pm.calls_per_step == 4 * ds.microbatches_per_step
    one = pm.time_s / pm.calls_per_step
    assert ds.step_time_s - m.step_time_s == pytest.approx(2 * one * (ds.microbatches_per_step + 4 - 1))
    assert ds.memory_per_device == m.memory_per_device
    assert ds.parallel.pipeline_engine == "deepspeed" and ds.as_dict()["parallel"]["pipeline_engine"] == "deepspeed"


def _deepspeed_train_schedule(m: int, p: int, stage: int) -> list[tuple[str, int, int]]:
    """DeepSpeed's ``TrainSchedule`` for one stage, as its commands run: ``(op, peer stage, microbatch)``,
    transcribed from microsoft/DeepSpeed ``deepspeed/runtime/pipe/schedule.py`` (v0.5 to today: ``steps``,
    ``_step_to_micro_batch`` and the four ``_*_id`` helpers)."""
    def micro_batch(step: int) -> tuple[int, bool]:
        if step % 2 == stage % 2:  # even step on an even stage, odd on odd: a forward pass
            return (step if step % 2 == 0 else step - 1) // 2 - stage // 2, True
        if step % 2 == 0:
            return step // 2 - p + (stage + 1) // 2, False
        return (step - 1) // 2 - p + 1 + stage // 2, False

    valid = range(m).__contains__
    ops, prev = [], -1
    for step in range(2 * (m + p - 1)):
        mb, forward = micro_batch(step)
        if forward and stage > 0:
            ops += [("act", stage - 1, mb)] * valid(mb) + [("grad", stage - 1, prev)] * valid(prev)
        elif not forward and stage < p - 1:
            ops += [("act", stage + 1, prev)] * valid(prev) + [("grad", stage + 1, mb)] * valid(mb)
        if valid(mb):
            ops.append(("F" if forward else "B", -1, mb))
        prev = mb
    return ops


def _simulate_deepspeed(m: int, p: int, f: float, b: float, x: float) -> float:
    """The step of DeepSpeed's pipeline: each stage runs its commands in order; a send and its receive are one
    blocking transfer of ``x`` seconds that starts when both stages reach it; a forward pass takes ``f``, a backward
    pass ``b``."""
    programs = [_deepspeed_train_schedule(m, p, s) for s in range(p)]
    at, clock, waiting = [0] * p, [0.0] * p, {}
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while at[s] < len(programs[s]):
                op, peer, mb = programs[s][at[s]]
                if op in ("F", "B"):
                    clock[s] += f if op == "F" else b
                else:
                    key = (op, min(s, peer), mb)
                    if waiting.setdefault(key, s) == s:  # the peer has not reached it yet
                        break
                    other = waiting.pop(key)
                    clock[s] = clock[other] = max(clock[s], clock[other]) + x
                    at[other] += 1
                at[s] += 1
                moved = True
    assert at == [len(prog) for prog in programs], "the schedule deadlocked"
    return max(clock)


@pytest.mark.parametrize(("m", "p"), [(8, 4), (32, 8), (240, 35), (128, 12)])
def test_deepspeed_engine_time_is_what_its_schedule_gives(m, p):
    """The plan's DeepSpeed step, ``(m + p − 1)·(f + b + 4x)`` for equal stages (:data:`PIPELINE_SENDS`), against an
    event simulation of DeepSpeed's own ``TrainSchedule``: with instant transfers its alternating forward and
    backward steps cost exactly 1F1B's ``(m + p − 1)(f + b)`` (no lock-step penalty), and each microbatch slot adds
    its four blocking transfers (the plan charges the p − 1 slots of the bubble four too, where the schedule's first
    and last slots have fewer: slow by at most that)."""
    from calc.plan import PIPELINE_SENDS

    f, b = 1.0, 3.0  # a forward pass, and the backward with full recomputation
    assert _simulate_deepspeed(m, p, f, b, 0.0) == (m + p - 1) * (f + b)
    for x in (0.02, 0.1):
        simulated = _simulate_deepspeed(m, p, f, b, x)
        planned = (m + p - 1) * (f + b + PIPELINE_SENDS["deepspeed"] * x)
        assert simulated <= planned <= simulated + PIPELINE_SENDS["deepspeed"] * x * (p - 1)


def test_deepspeed_bf16_optimizer_accumulates_and_all_reduces_in_fp32():
    """With fp32 gradients (megatron-bf16) DeepSpeed's engine runs its BF16_Optimizer: 18 B per weight per microbatch
    to add the bf16 gradients into fp32, the fp32 gradients all-reduced (not reduce-scattered), the bf16 gradients
    kept beside them. Megatron's engine (bf16 or fp32 gradients) has none of it."""
    from calc.kernels import memory_time
    from calc.plan import DS_BF16_ACCUMULATE_BYTES, layer_tensors

    def run(engine, precision):
        return plan(GPT3, 1, 512, HW, parallel(2, 8, 4, zero=1, recompute="full", pipeline_engine=engine),
                    precision)

    ds, mg, bf = run("deepspeed", "megatron-bf16"), run("megatron", "megatron-bf16"), run("megatron", "bf16-adam")
    (red,) = [c for c in rows(ds, "data") if c.what == "gradients"]
    assert red.collective == "all-reduce" and red.bytes_per_call * red.calls_per_step == pytest.approx(
        4 * ds.stages[0].params_per_device)
    assert {c.collective for c in rows(mg, "data") + rows(bf, "data") if c.what == "gradients"} == {"reduce-scatter"}
    for a, b in ((ds, mg), (ds, bf)):
        assert [x.compute_per_microbatch_s > y.compute_per_microbatch_s for x, y in zip(a.stages, b.stages)] == \
            [True] * 4
    s0, m0 = ds.stages[0], mg.stages[0]
    acc = memory_time(HW, DS_BF16_ACCUMULATE_BYTES * s0.params_per_device, 2 * (24 * layer_tensors(GPT3) + 1))
    assert s0.compute_per_microbatch_s - m0.compute_per_microbatch_s == pytest.approx(acc)
    assert ds.memory_per_device.grads_bytes - mg.memory_per_device.grads_bytes == pytest.approx(
        2 * ds.stages[ds.memory_per_device.stage].params_per_device)
    assert bf.memory_per_device.grads_bytes == pytest.approx(mg.memory_per_device.grads_bytes / 2)


@pytest.mark.parametrize("precision,per_weight", [("megatron-fp16", 6), ("bf16-adam", 6), ("megatron-bf16", 10)])
def test_unfused_gradient_accumulation_adds_a_pass_per_microbatch(precision, per_weight):
    """Megatron-LM 2021 (no gradient accumulation fusion) adds each microbatch's 16-bit gradients into the
    accumulator: param_bytes + 2·grad_bytes per weight on every stage's compute, m times a step; ZeRO-2/3 untouched."""
    from calc.kernels import memory_time
    from calc.plan import layer_tensors

    def run(engine, zero=0):  # without TP, whose backward the two engines overlap differently
        return plan(GPT3, 1, 512, HW, parallel(16, 1, 4, zero=zero, recompute="full", pipeline_engine=engine),
                    precision)

    unfused, fused = run("megatron-2021"), run("megatron")
    for a, b in zip(unfused.stages, fused.stages):
        tensors = len(a.layers) * layer_tensors(GPT3) + (1 if a.stage in (0, 3) else 0)
        assert a.compute_per_microbatch_s - b.compute_per_microbatch_s == pytest.approx(
            memory_time(HW, per_weight * a.params_per_device, tensors))
    assert unfused.step_time_s > fused.step_time_s and unfused.memory_per_device == fused.memory_per_device
    z3 = [run(e, zero=3) for e in ("megatron-2021", "megatron")]
    assert z3[0].step_time_s == z3[1].step_time_s


def test_cp_passes_keys_and_values_around_the_ring():
    """CP: c − 1 sends of this rank's K and V per pass (twice: forward and backward), and of dK, dV."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 2, 1, 4, sequence_parallel=True))
    kv, grads = rows(pl, "context")
    chunk = 2 * 1 * (8192 / 4) * (8 * 128 / 2) * 2
    assert kv.collective == grads.collective == "send-recv" and kv.bytes_per_call == chunk
    assert kv.calls_per_step == 32 * 3 * 2 * pl.microbatches_per_step
    assert grads.calls_per_step == 32 * 3 * pl.microbatches_per_step


def test_context_parallelism_needs_a_flash_kernel():
    """Ring attention is built on a fused attention kernel; with the standard kernels CP is refused."""
    std = model(32, 4096, 32, 128256, 8192, kv_heads=8, attention="standard")
    with pytest.raises(CalcError, match=r"^context_parallel must be 1 with standard attention"):
        plan(std, 1, 512, HW, parallel(16, 1, 1, 4))


def test_moe_plan_expert_all_to_all_and_expert_gradients():
    """EP: 4 all-to-alls of b·s·h·k per MoE layer per microbatch (6 with full recomputation); experts split EP ways."""
    mixtral = model(32, 4096, 32, 32000, 4096, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
    pl = plan(mixtral, 1, 64, HW, parallel(2, 4, 1, 1, 8, zero=1, sequence_parallel=True, recompute="full"))
    (ep,) = rows(pl, "expert")
    assert ep.bytes_per_call == 4096 * 4096 * 2 * 2 / 4 and ep.calls_per_step == 32 * 6 * pl.microbatches_per_step
    assert pl.stages[0].experts_per_device == 1
    groups = {c.what: c.group_size for c in rows(pl, "data")}
    assert groups["gradients"] == 16 and groups["expert gradients"] == 2


def test_dp_leaves_activations_unchanged():
    """Adding data-parallel replicas does not change a device's activations."""
    small = hardware(8, profile_name="h100-sxm5-80gb")
    a = plan(LLAMA, 1, 64, small, parallel(1, 8, sequence_parallel=True)).memory_per_device.activations_bytes
    b = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)).memory_per_device.activations_bytes
    assert a == b


def test_model_states_fall_with_zero_in_a_plan():
    """Per-device model states fall strictly with each ZeRO stage, with or without pipelining."""
    for degrees in ((64,), (16, 1, 4)):
        states = [plan(LLAMA, 1, 512, HW, parallel(*degrees, zero=z)).memory_per_device.model_states_bytes
                  for z in range(4)]
        assert states[0] > states[1] > states[2] > states[3]


def test_memory_counts_the_reserve():
    """The total includes hardware.reserve; a plan fits when total <= the GPU's memory."""
    base = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)).memory_per_device
    more = plan(LLAMA, 1, 512, hardware(64, profile_name="h100-sxm5-80gb", reserve=10 * 2**30),
                parallel(8, 8, sequence_parallel=True)).memory_per_device
    assert base.reserve_bytes == 2 * 2**30 and more.reserve_bytes == 10 * 2**30
    assert more.total_bytes - base.total_bytes == pytest.approx(8 * 2**30)
    assert base.total_bytes == pytest.approx(base.model_states_bytes + base.activations_bytes + base.buffers_bytes
                                             + base.reserve_bytes)


def test_memory_agrees_with_estimate_and_plan():
    """calc.plan.memory (what search checks first) is the plan's memory."""
    w = workload(LLAMA, 512, HW)
    par = parallel(4, 4, 4, zero=1, sequence_parallel=True, interleave=2)
    assert memory(w, par, 1) == estimate(w, par, 1).memory == plan(LLAMA, 1, 512, HW, par).memory_per_device


def test_step_floor_is_below_the_step():
    """The search's pruning bound never exceeds the estimated step."""
    w = workload(LLAMA, 512, HW)
    for par in (parallel(8, 8, sequence_parallel=True), parallel(4, 4, 4, interleave=2), parallel(64, zero=3)):
        e = estimate(w, par, 1)
        assert step_floor(w, par, 1, e.microbatches_per_step) <= e.step_time_s


#: Splits of Llama-3 8B on 64 GPUs that differ from each other in one axis at a time (and an MoE model's).
_VARIED = (parallel(8, 8, sequence_parallel=True), parallel(8, 8, sequence_parallel=True, zero=1),
           parallel(8, 8, sequence_parallel=True, zero=2), parallel(8, 8, sequence_parallel=True, zero=3),
           parallel(8, 8, sequence_parallel=True, zero=3, zero3_gather="tensor"),
           parallel(8, 8, sequence_parallel=True, zero=3, zero3_gather="tensor", recompute="full"),
           parallel(8, 8, zero=3, recompute="full"), parallel(4, 4, 4, interleave=2), parallel(4, 4, 4),
           parallel(4, 4, 4, zero=1, tp_comm_overlap=True), parallel(4, 4, 4, zero=1, overlap_grad_reduce=False),
           parallel(4, 4, 4, zero=1, overlap_param_gather=True), parallel(4, 4, 4, stage_layers=[7, 9, 9, 7]),
           parallel(2, 8, 4, zero=2, interleave=4), parallel(16, 4, zero=1), parallel(4, 8, context=2),
           parallel(64, zero=3), parallel(64, zero=3, zero_group=8), parallel(8, 8, zero=1, zero_group=4))


@pytest.mark.parametrize("micro", [1, 2])
def test_step_bound_is_never_above_the_step(micro):
    """The search's bound after the memory check (m × the slowest stage's time, plus the bubble) never exceeds the
    step, to the bit; given a threshold, it is above it exactly when the whole bound is."""
    w = workload(LLAMA, 512, HW)
    for par in _VARIED:
        e = estimate(w, par, micro)
        bound = step_bound(w, par, micro, e.microbatches_per_step)
        assert bound <= e.step_time_s
        assert bound == e.microbatches_per_step * max(sc.time_per_microbatch_s for sc in e.stages) + e.bubble_time_s
        for above in (0.0, bound * 0.5, e.bubble_time_s, bound - e.bubble_time_s, bound, e.step_time_s):
            early = step_bound(w, par, micro, e.microbatches_per_step, above)
            assert (early > above) == (bound > above) and early <= bound


def test_first_stage_bound_is_below_the_bound_and_grows_with_the_interleaving():
    """What lets a search skip the bound of a split's larger interleavings: m × the first stage's time is never above
    step_bound, and never smaller with more model chunks."""
    w = workload(LLAMA, 512, HW)
    for base in (dict(data=4, tensor=4, pipeline=4, zero=1), dict(data=2, tensor=4, pipeline=8, zero=2),
                 dict(data=4, tensor=4, pipeline=4, stage_layers=[7, 9, 9, 7], pipeline_engine="deepspeed")):
        firsts = []
        for v in (1, 2, 4):
            par = parallel(**base, interleave=1 if base.get("pipeline_engine") else v)
            parts = time_parts(w, par, 1)
            first = first_stage_bound(par.pipeline_engine, v, 32, parts)
            assert first <= bound_from_parts(par.pipeline_engine, v, 32, parts)
            firsts.append(first)
        assert firsts == sorted(firsts) and firsts[0] < firsts[-1]


def test_memory_total_is_memory_s_total_stage_and_terms():
    """What the search reads for each split (memory_total) is memory()'s total, most loaded stage and terms."""
    w = workload(LLAMA, 512, HW)
    for par in _VARIED:
        mem = memory(w, par, 2)
        total, stage, terms = memory_total(w, par, 2)
        assert (total, stage) == (mem.total_bytes, mem.stage)
        assert terms == (mem.params_bytes, mem.grads_bytes, mem.optimizer_bytes, mem.activations_bytes,
                         mem.buffers_bytes)


@pytest.mark.parametrize("m, gpus, splits", [
    (LLAMA, 64, _VARIED + (parallel(2, 4, 8, zero=1), parallel(1, 4, 16, interleave=2), parallel(2, 2, 16, zero=3),
                           parallel(1, 8, 8, stage_layers=[3, 4, 5, 4, 4, 4, 4, 4]))),
    (model(16, 2048, 16, 32000, 4096, experts=8, top_k=2, moe_layer_freq=2), 32,
     (parallel(2, 2, 8, expert=1), parallel(1, 2, 8, expert=2, interleave=2), parallel(2, 2, 4, expert=2, zero=3))),
])
def test_memory_total_is_the_most_loaded_of_every_stage(m, gpus, splits):
    """memory_total weighs only the stages that can need the most (a middle stage like the first never needs more
    than the first); its stage and terms are those of the most loaded of every stage, the earliest on a tie."""
    hw = hardware(gpus, profile_name="h100-sxm5-80gb")
    w = workload(m, 512, hw)
    for par in splits:
        for micro in (1, 2):
            every = estimate(w, par, micro, every_stage=True).stages
            sums = [fsum(terms) for terms in ((sc.params_bytes, sc.grads_bytes, sc.optimizer_bytes,
                                               sc.activations_bytes, sc.buffers_bytes) for sc in every)]
            heaviest = every[sums.index(max(sums))]
            total, stage, terms = memory_total(w, par, micro)
            assert (stage, total) == (heaviest.stage, max(sums) + hw.reserve_bytes), par
            assert terms == (heaviest.params_bytes, heaviest.grads_bytes, heaviest.optimizer_bytes,
                             heaviest.activations_bytes, heaviest.buffers_bytes)


def test_a_workload_answers_each_split_as_a_fresh_one_would():
    """The Workload's caches are keyed on what each part depends on: whatever was costed before on the same
    Workload, and in whichever order, every split's estimate and plan are those of a fresh Workload."""
    moe = model(16, 2048, 16, 32000, 4096, experts=8, top_k=2, moe_layer_freq=2)
    for m, splits in ((LLAMA, _VARIED), (moe, (parallel(8, 2, 4, expert=1), parallel(4, 2, 4, expert=2),
                                                parallel(4, 2, 4, expert=2, zero=3), parallel(4, 2, 4, expert=2,
                                                                                             interleave=2)))):
        shared = workload(m, 512, HW)
        for micro in (1, 2):
            for par in splits + splits[::-1]:
                fresh = workload(m, 512, HW)
                assert estimate(shared, par, micro) == estimate(fresh, par, micro)
                assert estimate(shared, par, micro, every_stage=True) == estimate(fresh, par, micro, every_stage=True)


@pytest.mark.parametrize("m, base", [
    (LLAMA, dict(data=2, tensor=8, pipeline=4)),
    (LLAMA, dict(data=4, tensor=4, pipeline=4, zero=3, recompute="full", recompute_layers=1)),
    (LLAMA, dict(data=4, tensor=4, pipeline=4, zero=2, sequence_parallel=True, pipeline_engine="megatron-2021")),
    (model(16, 2048, 16, 32000, 4096, experts=8, top_k=2, moe_layer_freq=2),
     dict(data=4, tensor=2, pipeline=4, expert=2, zero=1, recompute="full", recompute_layers=1)),
])
def test_parts_shared_by_the_interleavings_of_a_split_are_exact(m, base):
    """A search costs one split at every interleaving; what the Workload keeps from one for the others (a stage's
    activations before the chunks in flight multiply them, its time but the pipeline's sends) gives each exactly
    what a fresh Workload gives, and step_bound is still m × the slowest stage + the bubble of the estimate."""
    shared = workload(m, 512, HW)
    # Megatron-LM 2021 builds only chunks that divide a stage's 8 layers (engine_layout_rule)
    vs = (1, 2, 4, 2, 1) if base.get("pipeline_engine") == "megatron-2021" else (1, 2, 3, 4, 2, 1)
    for micro in (1, 2):
        for v in vs:
            par = parallel(**base, interleave=v)
            fresh = workload(m, 512, HW)
            e = estimate(fresh, par, micro)
            mbs = e.microbatches_per_step
            assert memory_total(shared, par, micro, mbs) == memory_total(fresh, par, micro, mbs), (micro, v)
            bound = step_bound(shared, par, micro, mbs)
            assert bound == step_bound(fresh, par, micro, mbs), (micro, v)
            assert bound == mbs * max(sc.time_per_microbatch_s for sc in e.stages) + e.bubble_time_s, (micro, v)
            assert estimate(shared, par, micro) == e


def test_interleavings_share_their_parts_exactly_when_shared_by_interleavings_says_so():
    """memory_parts and time_parts are those of every interleaving of a split, as the search reuses them, unless which
    layers a stage holds as MoE layers or recomputes changes with the chunks; those two cases do change them."""
    moe = model(16, 2048, 16, 32000, 4096, experts=8, top_k=2, moe_layer_freq=2)
    cases = ((LLAMA, dict(data=2, tensor=8, pipeline=4, zero=1, sequence_parallel=True), True),
             (LLAMA, dict(data=4, tensor=4, pipeline=4, zero=3, recompute="full"), True),
             (LLAMA, dict(data=4, tensor=4, pipeline=4, recompute="full", recompute_layers=3), False),
             (moe, dict(data=4, tensor=2, pipeline=4, expert=2, zero=1), False))
    for m, base, shared in cases:
        w = workload(m, 512, HW)
        one = parallel(**base)
        differs = []
        for v in (2, 3, 4):
            par = parallel(**base, interleave=v)
            assert shared_by_interleavings(w, par) == shared
            order, _, parts = time_parts(w, par, 1)
            same = memory_parts(w, par, 1) == memory_parts(w, one, 1) and \
                [parts(s) for s in order] == [time_parts(w, one, 1)[2](s) for s in order]
            assert same or not shared, (base, v)
            differs.append(not same)
        assert any(differs) != shared, base


def test_flash_attention_keeps_full_recomputation_below_selective_at_long_context():
    """With FlashAttention no s² scores are kept, so full recomputation needs less than selective did without it."""
    long = dict(kv_heads=8, ffn_hidden=53248, gated_mlp=True)
    flash = model(126, 16384, 128, 128256, 32768, **long)
    std = model(126, 16384, 128, 128256, 32768, attention="standard", **long)
    hw = hardware(16384, profile_name="h100-sxm5-80gb")
    par = dict(data=128, tensor=8, pipeline=16, zero=1, sequence_parallel=True)
    full = plan(flash, 1, 2048, hw, parallel(**par, recompute="full")).memory_per_device.activations_bytes
    selective = plan(std, 1, 2048, hw, parallel(**par, recompute="selective")).memory_per_device.activations_bytes
    assert full < selective


def test_compute_efficiency_override_times_compute_from_flops():
    """compute_efficiency: compute = hardware FLOPs / (peak × efficiency), the one-efficiency model."""
    hw = hardware(64, profile_name="h100-sxm5-80gb", compute_efficiency=0.5)
    pl = plan(LLAMA, 1, 512, hw, parallel(64))
    assert pl.compute_time_s == pytest.approx(pl.hardware_flops_per_step / 64 / (989e12 * 0.5), rel=0.02)


def test_most_loaded_stage_and_placement():
    """Embedding on the first stage, head on the last; memory is that of the most loaded stage."""
    pl = plan(LLAMA, 1, 512, HW, parallel(4, 4, 4, sequence_parallel=True))
    assert [(s.embedding, s.output_head) for s in pl.stages] == [(True, False), (False, False), (False, False),
                                                                  (False, True)]
    assert pl.memory_per_device.total_bytes == max(s.memory_total_bytes for s in pl.stages)
    assert pl.memory_per_device.stage == 0 and sorted(i for s in pl.stages for i in s.layers) == list(range(32))


def test_uneven_split_is_stated_and_explicit_splits_are_taken():
    """30 layers on 4 stages: 7, 7, 8, 8 by default, or as parallel.stage_layers says; the plan states it."""
    m = model(30, 1024, 16, 32000, 2048)
    hw = hardware(8, profile_name="h100-sxm5-80gb")
    pl = plan(m, 1, 64, hw, parallel(2, 1, 4))
    assert pl.layers_per_stage == (7, 7, 8, 8) and pl.uneven_split == "layers per stage: 7, 7, 8, 8"
    pl = plan(m, 1, 64, hw, parallel(2, 1, 4, stage_layers=[6, 9, 9, 6]))
    assert pl.layers_per_stage == (6, 9, 9, 6) and pl.as_dict()["parallel"]["stage_layers"] == [6, 9, 9, 6]


def test_llama3_layout_interleaves_with_lighter_ends():
    """126 layers on 16 stages of [7, 8, ..., 8, 7] with v = 8: the first chunk holds only the embedding."""
    m = model(126, 16384, 128, 128256, 8192, kv_heads=8, ffn_hidden=53248, gated_mlp=True)
    par = parallel(64, 8, 16, interleave=8, stage_layers=[7] + [8] * 14 + [7])
    chunks = chunk_ranges(layout(m, par).stage_layers, 8)
    assert chunks[0][0] == (0, 0) and chunks[15][7][0] == chunks[15][7][1] == 126
    assert check_combination(m, 1, 2048, hardware(8192, profile_name="h100-sxm5-80gb"), par) == 32


def test_tied_embeddings_across_stages_all_reduce_their_gradients():
    """Tied embeddings with PP > 1: the first and last stage all-reduce the embedding gradient."""
    m = model(8, 1024, 16, 32000, 2048, tied_embeddings=True)
    pl = plan(m, 1, 64, hardware(8, profile_name="h100-sxm5-80gb"), parallel(2, 1, 4))
    (row,) = [c for c in rows(pl, "pipeline") if c.collective == "all-reduce"]
    assert row.group_size == 2 and row.bytes_per_call == 32000 * 1024 * 2


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    """t = 16 > 8 KV heads: each rank keeps one KV head (replicated twice) instead of half a head."""
    w = workload(LLAMA, 512, hardware(64, profile_name="h100-sxm5-80gb"))
    shape16 = w.arrangement(parallel(4, 16)).shape(0)
    shape8 = w.arrangement(parallel(8, 8)).shape(0)
    k_and_v = 2 * 4096 * 128 * 32  # one head's K and V weights in every layer
    assert shape16.dense_params - shape8.dense_params / 2 == pytest.approx(k_and_v - k_and_v / 2, rel=0.05)


def test_does_not_fit_names_the_binding_term():
    """A plan above capacity is returned with fits False and the largest term named."""
    hw = hardware(64, profile_name="h100-sxm5-80gb", device_memory=16e9)
    mem = plan(LLAMA, 4, 512, hw, parallel(64)).memory_per_device
    assert not mem.fits and mem.binding_term == "activations" and mem.headroom_bytes < 0
    assert mem.total_gib == mem.total_bytes / 2**30 and mem.total_gb == mem.total_bytes / 1e9


def test_rank_coordinates_put_tp_innermost():
    """Rank r = (((p·D + d)·E + e)·C + c)·T + t, and a TP group shares a node."""
    pl = plan(LLAMA, 1, 512, HW, parallel(2, 8, 2, 2, sequence_parallel=True))
    assert pl.rank_order == ("pipeline", "data", "expert", "context", "tensor")
    assert pl.ranks[0] == (0, 0, 0, 0, 0, 0, 0)
    assert pl.ranks[13] == (13, 0, 0, 1, 0, 5, 1)
    assert pl.ranks[16] == (16, 1, 0, 0, 0, 0, 2)  # the next data-parallel replica before the next stage
    assert pl.ranks[63][1:6] == (1, 1, 1, 0, 7)
    for r in pl.ranks:
        assert r[6] == (r[0] - r[5]) // 8


def test_rank_groups_are_megatron_s():
    """The groups the coordinates make are the ones Megatron-LM's initialize_model_parallel builds (2021):
    pipeline groups of stride world/p, data groups of stride t inside a stage's block of world/p ranks."""
    world, t, p = 64, 2, 4
    pl = plan(LLAMA, 1, 512, HW, parallel(world // (t * p), t, p))
    d = world // (t * p)
    groups = {}
    for rank, dc, pc, cc, ec, tc, _ in pl.ranks:
        groups.setdefault(("pipeline", dc, tc), []).append(rank)
        groups.setdefault(("data", pc, tc), []).append(rank)
        groups.setdefault(("tensor", pc, dc), []).append(rank)
    block = world // p
    megatron = ({tuple(range(i, world, block)) for i in range(block)}
                | {tuple(range(s * block + j, (s + 1) * block, t)) for s in range(p) for j in range(t)}
                | {tuple(range(i * t, (i + 1) * t)) for i in range(world // t)})
    assert {tuple(g) for g in groups.values()} == megatron and d == 8


def test_replicas_outermost_is_the_other_rank_order():
    """rank_order tp-cp-ep-pp-dp lays the pipeline inside the replicas (Megatron's --use-tp-pp-dp-mapping, Llama 3):
    consecutive stages sit t ranks apart, in one node here, and a data-parallel group takes one GPU per node."""
    pl = plan(LLAMA, 1, 512, HW, parallel(16, 2, 2, rank_order="tp-cp-ep-pp-dp"))
    assert pl.rank_order == ("data", "pipeline", "expert", "context", "tensor")
    assert pl.rank_strides == {"data": 4, "pipeline": 2, "expert": 2, "context": 2, "tensor": 1}
    assert pl.ranks[2][1:3] == (0, 1) and pl.ranks[4][1:3] == (1, 0)
    sends = {c.collective: c for c in pl.communications if c.strategy in ("pipeline", "data")}
    default = plan(LLAMA, 1, 512, HW, parallel(16, 2, 2))
    other = {c.collective: c for c in default.communications if c.strategy in ("pipeline", "data")}
    assert sends["send-recv"].intra_node and not other["send-recv"].intra_node
    with pytest.raises(CalcError, match="rank_order must be one of tp-cp-ep-dp-pp, tp-cp-ep-pp-dp, got 'dp-tp'"):
        parallel(rank_order="dp-tp")


def test_large_clusters_do_not_list_ranks():
    """Beyond 1024 GPUs the coordinates follow from rank_strides instead of a list."""
    pl = plan(LLAMA, 1, 2048, hardware(2048, profile_name="h100-sxm5-80gb"), parallel(256, 8, sequence_parallel=True))
    assert pl.ranks is None and pl.rank_strides == {"pipeline": 2048, "data": 8, "expert": 8, "context": 8, "tensor": 1}


def test_megatron_2021_gpt3_layer_is_slower_per_flop_than_a_larger_one():
    """Element-wise work and small GEMMs: the achieved FLOP/s per GPU rises with the hidden size."""
    a100 = hardware(32, profile_name="a100-sxm4-80gb", dtype="fp16")
    small = plan(model(24, 2304, 24, 51200, 2048, attention="standard"), 16, 512, a100, parallel(32, recompute="full"))
    big = plan(GPT3, 1, 32, hardware(32, profile_name="a100-sxm4-80gb", dtype="fp16"),
               parallel(1, 8, 4, recompute="full"))
    assert small.achieved_flops_per_gpu < big.achieved_flops_per_gpu


@pytest.mark.parametrize(
    "par,micro,batch,message",
    [
        (parallel(7, 8), 1, 512, "data_parallel must be gpus / (tensor_parallel × pipeline_parallel × context_parallel × expert_parallel) = 8, got 7"),
        (parallel(1, 8, 3), 1, 512, "gpus must be a multiple of tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = 24, got 64"),
        (parallel(16, 4, 1, 1), 1, 512, None),
        (parallel(2, 3, 1), 1, 512, "gpus must be a multiple of tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = 3, got 64"),
        (parallel(1, 1, 64), 1, 512, "pipeline_parallel must be <= layers (32), got 64"),
        (parallel(32, 1, 1, 1, 2), 1, 512, "expert_parallel must be a divisor of experts (1), got 2"),
        (parallel(64), 3, 512, "global_batch must be a multiple of micro_batch × data_parallel × expert_parallel = 192, got 512"),
        (parallel(64, interleave=2), 1, 512, "interleave must be 1 when pipeline_parallel is 1, got 2"),
        (parallel(8, 1, 8, interleave=6), 1, 512, "interleave must be at most 4: every model chunk needs a layer (the "
                                                  "first and the last stage may give one chunk to the embedding or "
                                                  "the output layer), got 6"),
        (parallel(32, 1, 2, interleave=2), 1, 96, "interleave must be 1, or the microbatches per step (3) a "
                                                  "multiple of pipeline_parallel (2), got 2"),
        (parallel(32, 1, 2, stage_layers=[16, 15]), 1, 512, "stage_layers must be layer counts that add up to layers "
                                                           "(32), got [16, 15]"),
        (parallel(32, 1, 2, stage_layers=[32]), 1, 512, "stage_layers must be 2 layer counts, one per pipeline stage, "
                                                       "got [32]"),
        (parallel(32, 1, 2, interleave=2, pipeline_engine="deepspeed"), 1, 512,
         "interleave must be 1 with pipeline_engine deepspeed (its TrainSchedule has no model chunks), got 2"),
    ],
)
def test_invalid_combinations(par, micro, batch, message):
    """Each rule is a CalcError with the reason (None: the combination is valid)."""
    if message is None:
        assert check_combination(LLAMA, micro, batch, HW, par) > 0
        return
    with pytest.raises(CalcError) as e:
        plan(LLAMA, micro, batch, HW, par)
    assert str(e.value) == message


def test_tensor_must_divide_heads_and_fit_kv_heads():
    """t divides the heads, and either divides the KV heads or is a multiple of them."""
    m = model(2, 768, 12, 100, 16, kv_heads=4)
    hw = hardware(8, profile_name="h100-sxm5-80gb")
    assert check_combination(m, 1, 8, hw, parallel(4, 2)) == 2
    with pytest.raises(CalcError, match=r"^tensor_parallel must be a divisor of heads \(12\) that divides kv_heads \(4\) or "
                                        r"is a multiple of it, got 6$"):
        check_combination(m, 1, 8, hardware(6, profile_name="h100-sxm5-80gb"), parallel(1, 6))


def test_valid_edges_of_the_rules():
    """The accepted side of each rule: interleaving with m = p, CP with 2c | s, ZeRO-1 to 3 with PP."""
    assert check_combination(LLAMA, 1, 128, HW, parallel(32, 1, 2, interleave=2)) == 4
    assert check_combination(LLAMA, 1, 512, HW, parallel(16, 1, 1, 4)) == 32
    for z in (1, 2, 3):
        assert check_combination(LLAMA, 1, 512, HW, parallel(32, 1, 2, zero=z)) == 16


def test_ffn_must_split_over_tp():
    """TP must divide the MLP width."""
    m = model(2, 64, 8, 100, 16, ffn_hidden=100)
    with pytest.raises(CalcError, match=r"^tensor_parallel must be a divisor of ffn_hidden \(100\), got 8$"):
        plan(m, 1, 8, hardware(8, profile_name="h100-sxm5-80gb"), parallel(1, 8))


def test_context_needs_two_chunks_per_rank():
    """Load-balanced causal CP splits the sequence into 2 × context chunks."""
    m = model(2, 64, 8, 100, 12)
    with pytest.raises(CalcError, match=r"^context_parallel must be such that 2 × context_parallel divides seq_len \(12\) "
                                        r"\(load-balanced causal split\), got 4$"):
        plan(m, 1, 8, hardware(8, profile_name="h100-sxm5-80gb"), parallel(2, 1, 1, 4))


def test_sequence_parallel_needs_divisible_sequence():
    """SP splits s/c tokens over TP ranks."""
    m = model(2, 64, 8, 100, 12)
    with pytest.raises(CalcError, match=r"^sequence_parallel must be false, or seq_len / context_parallel \(12\) must be a "
                                        r"multiple of tensor_parallel \(8\), got True$"):
        plan(m, 1, 8, hardware(8, profile_name="h100-sxm5-80gb"), parallel(1, 8, sequence_parallel=True))


def test_flash3_needs_hopper_or_blackwell():
    """FlashAttention-3 is refused on an A100, naming the attention field."""
    m = model(32, 4096, 32, 128256, 8192, attention="flash3")
    with pytest.raises(CalcError, match=r"^attention must be flash or standard on a100-sxm4-80gb"):
        plan(m, 1, 512, hardware(64, profile_name="a100-sxm4-80gb"), parallel(64))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: parallel(zero=4), "zero must be a whole number <= 3, got 4"),
        (lambda: parallel(recompute="all"), "recompute must be one of none, selective, full, got 'all'"),
        (lambda: parallel(sequence_parallel="yes"), "sequence_parallel must be true or false, got 'yes'"),
        (lambda: parallel(tensor=True), "tensor_parallel must be a whole number >= 1, got True"),
        (lambda: parallel(stage_layers=[4, 0]), "stage_layers must be a whole number >= 1, got 0"),
        (lambda: parallel(zero3_gather="bucket"), "zero3_gather must be one of layer, tensor, tensor-blocking, got 'bucket'"),
        (lambda: parallel(overlap_grad_reduce="no"), "overlap_grad_reduce must be true or false, got 'no'"),
        (lambda: parallel(pipeline_engine="gpipe"),
         "pipeline_engine must be one of megatron, megatron-2021, deepspeed, got 'gpipe'"),
    ],
)
def test_input_errors(call, message):
    """Single bad values are CalcErrors with exact messages."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message


def test_device_memory_is_the_plans_memory():
    """device-memory reports what plan reports for the same model and split."""
    inputs = dict(PRESETS["mixtral-8x7b"].inputs)
    plan = evaluate("plan", inputs)["memory_per_device"]
    keys = {p.name for p in COMMANDS["device-memory"].params}
    mem = evaluate("device-memory", {k: x for k, x in inputs.items() if k in keys})
    for key in ("params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes", "binding_term"):
        assert mem[key] == plan[key], key


# ---------------------------------------------------------------------------- block recomputation

#: Llama-3-8B on 4 stages of 8 layers, 2 chunks each: 4 layers per model chunk.
_BLOCK = dict(data=2, tensor=8, pipeline=4, zero=1, sequence_parallel=True, interleave=2)


def _numbers(pl) -> dict:
    """A plan's figures, without the split that names how they were reached."""
    out = pl.as_dict()
    del out["parallel"]
    return out


def test_recompute_layers_none_and_all_are_the_existing_modes():
    """0 recomputed layers is recompute none, every layer of each chunk is full: the same plan, figure for figure."""
    none = plan(LLAMA, 1, 512, HW, parallel(**_BLOCK))
    full = plan(LLAMA, 1, 512, HW, parallel(**_BLOCK, recompute="full"))
    assert _numbers(plan(LLAMA, 1, 512, HW, parallel(**_BLOCK, recompute="full", recompute_layers=0))) == _numbers(none)
    assert _numbers(plan(LLAMA, 1, 512, HW, parallel(**_BLOCK, recompute="full", recompute_layers=4))) == _numbers(full)


def test_more_recomputed_layers_less_memory_more_time():
    """Each layer recomputed keeps only its input (less memory), redoes its forward and its TP collectives
    (more time and hardware FLOPs), on a model with MoE and dense layers and context parallelism too."""
    moe = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2,
                moe_layer_freq=2)
    for m, par in ((LLAMA, _BLOCK), (moe, dict(_BLOCK, tensor=4, context=2))):
        plans = [plan(m, 1, 512, HW, parallel(**par, recompute="full", recompute_layers=n)) for n in range(5)]
        acts = [p.memory_per_device.activations_bytes for p in plans]
        steps = [p.step_time_s for p in plans]
        flops = [p.hardware_flops_per_step for p in plans]
        tp = [sum(c.calls_per_step for c in rows(p, "tensor")) for p in plans]
        assert acts == sorted(acts, reverse=True) and len(set(acts)) == 5
        assert steps == sorted(steps) and len(set(steps)) == 5
        assert flops == sorted(flops) and len(set(flops)) == 5
        assert tp == sorted(tp) and len(set(tp)) == 5


def test_recompute_layers_counts_per_model_chunk():
    """Megatron's block method counts per model chunk: with 2 chunks of 4, 2 layers per chunk is half the stage
    (the hardware FLOPs are half way between none and full)."""
    none, half, full = (plan(LLAMA, 1, 512, HW, parallel(**_BLOCK, **kw)).hardware_flops_per_step
                        for kw in ({}, {"recompute": "full", "recompute_layers": 2}, {"recompute": "full"}))
    assert half == pytest.approx((none + full) / 2, rel=1e-12)


def test_recompute_layers_refusals():
    """Only with full recomputation, a whole number, and at most the layers of the largest model chunk."""
    with pytest.raises(CalcError, match=r"^recompute_layers must be blank unless recompute is full \(recompute is "
                                        r"selective: it applies to every layer\), got 2$"):
        parallel(recompute="selective", recompute_layers=2)
    with pytest.raises(CalcError, match=r"^recompute_layers must be a whole number >= 0, got -1$"):
        parallel(recompute="full", recompute_layers=-1)
    with pytest.raises(CalcError, match=r"^recompute_layers must be at most 4, the layers of the largest model chunk "
                                        r"\(layers per stage / interleave\), got 5$"):
        check_combination(LLAMA, 1, 512, HW, parallel(**_BLOCK, recompute="full", recompute_layers=5))


def test_recompute_layers_in_a_spec():
    """The SPEC field reaches the plan, and a bad value is one error naming parallel.recompute_layers."""
    raw = {**PRESETS["llama3-8b"].inputs, "recompute": "full", "recompute_layers": "1"}
    out = evaluate("plan", raw)
    assert out["parallel"]["recompute_layers"] == 1
    assert out["step_time_s"] < evaluate("plan", {**raw, "recompute_layers": ""})["step_time_s"]
    with pytest.raises(CalcError, match="recompute_layers must be a whole number >= 0, got 1.5"):
        evaluate("plan", {**raw, "recompute_layers": "1.5"})


def test_deepspeed_zero3_keeps_at_most_its_live_parameters_gathered():
    """DeepSpeed's ZeRO-3 (tensor gathers) releases weights beyond stage3_max_live_parameters (1e9) unless one
    tensor is larger; PyTorch FSDP (layer gathers) keeps two whole layers."""
    big = model(105, 20480, 128, 51200, 2048, biases=True, learned_positions=True, attention="standard")
    hw = hardware(64, profile_name="a100-sxm4-80gb", dtype="fp16")
    w = workload(big, 256, hw, "megatron-fp16")
    fsdp, ds = (memory(w, parallel(64, zero=3, recompute="full", zero3_gather=g), 1).buffers_bytes
                for g in ("layer", "tensor"))
    layer = 12 * 20480**2 + 13 * 20480  # weights and biases of one layer
    assert fsdp == 2 * layer * 2
    assert ds == 4 * 20480**2 * 2  # the MLP's 4h × h matrix, larger than 1e9 parameters
    small = workload(LLAMA, 512, HW)
    assert memory(small, parallel(64, zero=3, zero3_gather="tensor"), 1).buffers_bytes == \
        memory(small, parallel(64, zero=3), 1).buffers_bytes  # two Llama-3-8B layers are fewer than 1e9 parameters


def test_device_memory_takes_recompute_layers():
    """device-memory's activations fall from none to full as more layers are recomputed, 0 and all at the ends."""
    raw = dict(COMMANDS["device-memory"].example, recompute="full")
    acts = [evaluate("device-memory", {**raw, "recompute_layers": n})["activations_bytes"] for n in ("0", "16", "32")]
    none = evaluate("device-memory", {**raw, "recompute": "none"})["activations_bytes"]
    assert acts[0] == none and acts[2] == evaluate("device-memory", raw)["activations_bytes"]
    assert acts[0] > acts[1] > acts[2]


@pytest.mark.parametrize("kw,message", [
    (dict(pipeline=2, interleave=2),
     "interleave must be 1 with pipeline_engine megatron-2021 unless pipeline_parallel > 2, got 2"),
    (dict(pipeline=4, interleave=3),
     "interleave must be a divisor of the layers per stage (8) with pipeline_engine megatron-2021, got 3"),
    (dict(pipeline=4, stage_layers=[7, 9, 8, 8]),
     "stage_layers must be the same layers on every stage with pipeline_engine megatron-2021, got [7, 9, 8, 8]"),
])
def test_megatron_2021_builds_only_even_layouts(kw, message):
    """Megatron-LM of 2021 refuses what its argument checks refused; the current engine builds the same layout."""
    def par(engine):
        return parallel(64 // (8 * kw["pipeline"]), 8, pipeline_engine=engine, **kw)

    with pytest.raises(CalcError) as e:
        check_combination(LLAMA, 1, 512, HW, par("megatron-2021"))
    assert str(e.value) == message
    assert check_combination(LLAMA, 1, 512, HW, par("megatron")) > 0


# ---------------------------------------------------------------------------- hybrid sharding (zero_group)

#: Llama 2 7B on 12 nodes of 8 H100s with 12.5 GB/s of network per GPU: IBM's HSDP run's cluster.
_LLAMA2_7B = model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True)
_HW96 = hardware(96, profile_name="h100-sxm5-80gb", inter_node_bandwidth=12.5e9)


@pytest.mark.parametrize("z", [1, 2, 3])
def test_a_shard_group_of_every_replica_is_full_sharding(z):
    """zero_group = data is the default, to the bit."""
    assert plan(LLAMA, 1, 512, HW, parallel(64, zero=z, zero_group=64)).as_dict() | {"parallel": None} == \
        plan(LLAMA, 1, 512, HW, parallel(64, zero=z)).as_dict() | {"parallel": None}


@pytest.mark.parametrize("z", [1, 2, 3])
def test_hybrid_sharding_holds_the_states_of_its_shard_group(z):
    """Sharded over G of 64 replicas, a GPU holds what it holds under full sharding over G GPUs."""
    hybrid = plan(LLAMA, 1, 512, HW, parallel(64, zero=z, zero_group=8)).memory_per_device
    alone = plan(LLAMA, 1, 64, hardware(8, profile_name="h100-sxm5-80gb"), parallel(8, zero=z)).memory_per_device
    full = plan(LLAMA, 1, 512, HW, parallel(64, zero=z)).memory_per_device
    for term in ("params_bytes", "grads_bytes", "optimizer_bytes", "buffers_bytes"):
        assert getattr(hybrid, term) == getattr(alone, term)
    assert hybrid.optimizer_bytes == 8 * full.optimizer_bytes


@pytest.mark.parametrize("z", [1, 2, 3])
def test_hybrid_sharding_reduces_in_the_node_and_all_reduces_the_shards_across(z):
    """Every ZeRO transfer stays in the shard group (a node); each shard is all-reduced across the 12 nodes'
    replicas, one call per layer (ZeRO 2-3) or per bucket (ZeRO-1), of 1/8 of the gradients."""
    pl = plan(_LLAMA2_7B, 2, 192, _HW96, parallel(96, zero=z, zero_group=8))
    across = [c for c in rows(pl, "data") if "replicas" in c.what]
    inside = [c for c in rows(pl, "data") if c not in across]
    assert {(c.group_size, c.intra_node) for c in inside} == {(8, True)}
    (ar,) = across
    assert (ar.collective, ar.group_size, ar.intra_node) == ("all-reduce", 12, False)
    shard_grads = pl.memory_per_device.grads_bytes if z >= 2 else \
        pl.memory_per_device.grads_bytes / 8  # ZeRO-1 keeps whole gradients, reduces them to an 8th
    assert ar.bytes_per_call * ar.calls_per_step == pytest.approx(shard_grads, rel=0.01)
    if z >= 2:
        assert ar.calls_per_step == 32


def test_hybrid_sharding_moves_less_over_a_slow_network():
    """On a slow network a step of FSDP inside the node with replicas across is faster than sharding over every
    GPU, and holds more per GPU."""
    full = plan(_LLAMA2_7B, 2, 192, _HW96, parallel(96, zero=3))
    hybrid = plan(_LLAMA2_7B, 2, 192, _HW96, parallel(96, zero=3, zero_group=8))
    network = lambda pl: sum(c.bytes_per_step for c in rows(pl, "data") if not c.intra_node)  # noqa: E731
    assert network(hybrid) < network(full)
    assert hybrid.exposed_communication_s < full.exposed_communication_s
    assert hybrid.memory_per_device.total_bytes > full.memory_per_device.total_bytes


@pytest.mark.parametrize("par, message", [
    (parallel(64, zero=0, zero_group=8), "zero_group must be unset with zero 0 (hybrid sharding shards with ZeRO "
                                         "1-3), got 8"),
    (parallel(64, zero=3, zero_group=3), "zero_group must be a divisor of data_parallel (64), got 3"),
])
def test_hybrid_sharding_refusals(par, message):
    with pytest.raises(CalcError) as e:
        plan(LLAMA, 1, 512, HW, par)
    assert str(e.value) == message


def test_zero_group_is_bounded_before_use():
    with pytest.raises(CalcError, match="^zero_group must be a whole number"):
        parallel(64, zero=3, zero_group=0)


# ---------------------------------------------------------------------------- DeepSpeed of 2021 (tensor-blocking)

def test_blocking_gathers_are_exposed_with_a_copy_per_rank():
    """DeepSpeed's ZeRO-3 of 2021: every gather is exposed (the device is synchronised before each), and each
    call of its list collectives costs at least one CPU launch per rank more than NCCL's call."""
    from calc.plan import CPU_LAUNCH_S, ZERO3_GATHERS
    hw = hardware(1536, profile_name="a100-sxm4-80gb")
    kept = dict(zero=3, recompute="full")
    now = plan(GPT3, 1, 1536, hw, parallel(1536, zero3_gather="tensor", **kept))
    then = plan(GPT3, 1, 1536, hw, parallel(1536, zero3_gather="tensor-blocking", **kept))
    assert then.exposed_communication_s > now.exposed_communication_s
    for old, new in zip(rows(now, "data"), rows(then, "data")):
        assert (old.collective, old.calls_per_step, old.bytes_per_call) == \
            (new.collective, new.calls_per_step, new.bytes_per_call)
        assert new.time_s >= old.time_s + new.calls_per_step * 1536 * CPU_LAUNCH_S * (1 - 1e-9)
    (gather,) = [c for c in rows(then, "data") if c.collective == "all-gather"]
    # the weights' gathers: none hidden (the rows share their exposed time in proportion to their times)
    assert sum(c.exposed_time_s for c in rows(then, "data")) >= gather.time_s
    assert then.memory_per_device == now.memory_per_device
    assert ZERO3_GATHERS == 2


def test_list_copies_grow_with_the_ranks_not_the_bytes():
    from calc.plan import list_copies
    hw = hardware(1536, profile_name="a100-sxm4-80gb")
    assert list_copies(hw, "all-gather", 1536, 3e8) == 2 * list_copies(hw, "all-gather", 768, 3e8)
    assert list_copies(hw, "all-gather", 8, 3e9) > list_copies(hw, "reduce-scatter", 8, 3e9) > 8 * 5e-6


def test_fp8_is_faster_counts_mfu_against_the_fp8_peak_and_gathers_fp8_weights():
    """FP8 on the H100: a shorter step, MFU against the 1979 TFLOP/s peak (as NVIDIA reports it), the ZeRO-1
    weight all-gather in one byte per weight, less activation memory, the same gradient bytes."""
    par = parallel(8, 8, zero=1, sequence_parallel=True)
    bf16, fp8 = (plan(LLAMA, 1, 512, HW, par, fp8=f) for f in (False, True))
    assert fp8.step_time_s < 0.9 * bf16.step_time_s and fp8.fp8 and not bf16.fp8
    assert fp8.mfu == pytest.approx(fp8.model_flops_per_step / (fp8.step_time_s * 64 * 1979e12))
    gather = {pl.fp8: next(c for c in rows(pl, "data") if c.collective == "all-gather") for pl in (bf16, fp8)}
    assert gather[True].bytes_per_step == pytest.approx(gather[False].bytes_per_step / 2)
    assert gather[True].calls_per_step == gather[False].calls_per_step
    reduce = {pl.fp8: next(c for c in rows(pl, "data") if c.collective != "all-gather") for pl in (bf16, fp8)}
    assert reduce[True].bytes_per_step == reduce[False].bytes_per_step
    assert fp8.memory_per_device.activations_bytes < bf16.memory_per_device.activations_bytes


def test_fp8_sequence_parallel_gathers_the_norm_outputs_in_fp8():
    """With SP the forward's two all-gathers per layer carry fp8, so TP takes less time; without SP (all-reduces)
    FP8 leaves TP's bytes alone."""
    sp = [sum(c.time_s for c in rows(plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True), fp8=f),
                                     "tensor")) for f in (False, True)]
    assert sp[1] < sp[0]
    ar = [sum(c.time_s for c in rows(plan(LLAMA, 1, 512, HW, parallel(8, 8), fp8=f), "tensor")) for f in (False, True)]
    assert ar[1] == pytest.approx(ar[0])


def test_fp8_without_zero_keeps_transformer_engine_s_weight_copies():
    """Without ZeRO the 16-bit weights stay and TE keeps an fp8 copy and its transpose: two bytes more per weight."""
    par = parallel(8, 8, sequence_parallel=True)
    bf16, fp8 = (plan(LLAMA, 1, 512, HW, par, fp8=f) for f in (False, True))
    s = fp8.memory_per_device.stage
    assert fp8.memory_per_device.params_bytes - bf16.memory_per_device.params_bytes == pytest.approx(
        FP8_WEIGHT_COPY_BYTES * fp8.stages[s].params_per_device)


@pytest.mark.parametrize("kwargs,message", [
    ({"hw": hardware(64, profile_name="a100-sxm4-80gb")}, "fp8 must be false on a100-sxm4-80gb"),
    ({"precision": "fp32-adam"}, "fp8 must be false with precision fp32-adam"),
    ({"hw": hardware(64, 80e9, 1e15, 450e9, 50e9, hbm_bandwidth=3e12)}, "fp8 must be false without a hardware.profile"),
])
def test_fp8_is_refused_where_it_cannot_run(kwargs, message):
    """No fp8 tensor cores, a 32-bit recipe, or a GPU given by hand (no fp8 peak or efficiency): refused by name."""
    with pytest.raises(CalcError, match=message):
        plan(LLAMA, 1, 512, kwargs.get("hw", HW), parallel(8, 8), kwargs.get("precision", "bf16-adam"), fp8=True)


def test_fp8_is_a_training_field_of_plan_search_and_device_memory():
    """``training.fp8`` reaches the plan, the search and device-memory; the search's plans are fp8 plans."""
    inputs = {**PRESETS["llama3-8b"].inputs, "fp8": "true"}
    assert evaluate("plan", inputs)["fp8"] is True
    search = {k: x for k, x in inputs.items() if k in {p.name for p in COMMANDS["search"].params}}
    top = evaluate("search", {**search, "top": "1"})["plans"][0]
    bf16 = evaluate("search", {**search, "top": "1", "fp8": "false"})["plans"][0]
    assert top["step_time_s"] < bf16["step_time_s"]
    dm = {k: x for k, x in inputs.items() if k in {p.name for p in COMMANDS["device-memory"].params}}
    fp8, bf16 = (evaluate("device-memory", {**dm, "fp8": f})["total_bytes"] for f in ("true", "false"))
    assert fp8 < bf16


def test_megatron_reduces_its_whole_gradient_buffer_in_one_call_unless_it_overlaps():
    """Megatron-LM buckets its gradients only to overlap them with the backward pass: with the overlap off the
    reduction is one call of the whole buffer (its per-call startup paid once); DeepSpeed keeps its buckets."""
    from calc.plan import plan

    hw = hardware(64, profile_name="a100-sxm4-80gb")

    def reduction(**kw):
        pl = plan(LLAMA, 1, 512, hw, parallel(64, **kw), "bf16-adam")
        (row,) = [c for c in pl.communications if c.strategy == "data" and c.what == "gradients"]
        return row

    overlapped, whole = reduction(), reduction(overlap_grad_reduce=False)
    assert overlapped.calls_per_step > 1 and whole.calls_per_step == 1
    assert whole.bytes_per_call == pytest.approx(overlapped.bytes_per_call * overlapped.calls_per_step)
    assert reduction(overlap_grad_reduce=False, pipeline_engine="deepspeed").calls_per_step > 1
