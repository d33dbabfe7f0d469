"""calc.plan: placement, memory, communication volumes and times, step time, refusals."""

import json

import pytest

from calc.collectives import allgather, alltoall, reducescatter, ring_allreduce
from calc.errors import CalcError
from calc.model import model, param_count
from calc.plan import check_combination, hardware, parallel, plan

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
HW = hardware(64, 80e9, 989e12, 450e9, 50e9, startup=5e-6)


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
    json.dumps(pl.as_dict())


def test_step_time_adds_up():
    """step = compute + bubble + exposed communication, and the rows' exposed times sum to the last."""
    for par in (parallel(2, 8, 4, zero=1, sequence_parallel=True, interleave=2),
                parallel(8, 2, 2, 2, recompute="full"), parallel(64, zero=3), parallel(64, zero=2)):
        pl = plan(LLAMA, 1, 512, HW, par)
        assert pl.compute_time_s + pl.bubble_time_s + pl.exposed_communication_s == pytest.approx(pl.step_time_s)
        assert sum(c.exposed_time_s for c in pl.communications) == pytest.approx(pl.exposed_communication_s)
        assert all(0 <= c.exposed_time_s <= c.time_s * (1 + 1e-12) for c in pl.communications)


def test_bubble_fraction_and_time():
    """bubble_fraction = (p−1)/(v·m); bubble time = (p−1)/v of a microbatch on the slowest stage."""
    pl = plan(LLAMA, 1, 512, HW, parallel(2, 8, 4, interleave=2, sequence_parallel=True))
    assert pl.bubble_fraction == 3 / (2 * 256)
    slowest = max(s.time_per_microbatch_s for s in pl.stages)
    assert pl.bubble_time_s == pytest.approx(3 / 2 * slowest)


def test_dp_all_reduce_matches_the_ring_closed_form():
    """ZeRO-0: one all-reduce of the gradients, 2(d−1)/d of them sent, timed as a ring at the inter-node bandwidth."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True))
    (dp,) = rows(pl, "data")
    grads = pl.stages[0].params_per_device * 2
    assert pl.stages[0].params_per_device == pytest.approx(param_count(LLAMA).total / 8, rel=1e-3)
    assert dp.collective == "all-reduce" and dp.bytes_per_call == pytest.approx(grads, rel=1e-6)
    assert dp.bytes_per_step == pytest.approx(2 * 7 / 8 * dp.bytes_per_call)
    assert dp.time_s == pytest.approx(ring_allreduce(8, dp.bytes_per_call, 50e9, 5e-6).time_s)


def test_zero3_moves_one_and_a_half_times_the_dp_volume():
    """ZeRO paper §7: P_os+g+p moves 3Ψ against 2Ψ (one microbatch per step)."""
    def volume(z):
        return sum(c.bytes_per_step for c in rows(plan(LLAMA, 8, 512, HW, parallel(64, zero=z)), "data"))

    assert volume(3) == pytest.approx(1.5 * volume(0)) and volume(1) == pytest.approx(volume(0))


def test_sequence_parallel_moves_the_same_bytes_as_all_reduces():
    """SP: 4 all-gathers and 4 reduce-scatters per layer per microbatch carry the bytes of 4 all-reduces."""
    sp = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)), "tensor")
    (ar,) = rows(plan(LLAMA, 1, 512, HW, parallel(8, 8)), "tensor")
    assert [c.calls_per_step for c in sp] == [32 * 4 * 64] * 2
    assert sum(c.bytes_per_step for c in sp) == pytest.approx(ar.bytes_per_step)
    assert sum(c.time_s for c in sp) == pytest.approx(ar.time_s)


def test_tp_volume_and_times():
    """TP without SP: 4 all-reduces of b·s·h per layer per microbatch (6 with full recomputation)."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 8, recompute="full"))
    (tp,) = rows(pl, "tensor")
    assert tp.bytes_per_call == 8192 * 4096 * 2 and tp.calls_per_step == 32 * 6 * 64
    assert tp.time_s == pytest.approx(tp.calls_per_step * ring_allreduce(8, tp.bytes_per_call, 450e9, 5e-6).time_s)


def test_pp_volume():
    """PP: each device sends its 1/t of b·s·h forward and backward for every microbatch and chunk."""
    pl = plan(LLAMA, 2, 512, HW, parallel(2, 4, 8, interleave=2, sequence_parallel=True))
    (pp,) = [c for c in rows(pl, "pipeline") if c.collective == "send-recv"]
    assert pp.bytes_per_call == 2 * 8192 * 4096 * 2 / 4 and pp.calls_per_step == 2 * 2 * pl.microbatches_per_step
    assert pp.bytes_per_step == pp.bytes_per_call * pp.calls_per_step


def test_cp_exchanges_keys_and_values():
    """CP: K and V of the whole sequence for this TP rank's KV heads, gathered fwd and bwd, grads reduce-scattered."""
    pl = plan(LLAMA, 1, 512, HW, parallel(8, 2, 1, 4, sequence_parallel=True))
    ag, rs = rows(pl, "context")
    kv_bytes = 2 * 8192 * (8 * 128) / 2 * 2
    assert (ag.collective, rs.collective) == ("all-gather", "reduce-scatter")
    assert ag.bytes_per_call == kv_bytes and ag.calls_per_step == 2 * 32 * pl.microbatches_per_step
    assert ag.time_s == pytest.approx(ag.calls_per_step * allgather(4, kv_bytes, 450e9, 5e-6).time_s)
    assert rs.time_s == pytest.approx(rs.calls_per_step * reducescatter(4, kv_bytes, 450e9, 5e-6).time_s)


def test_moe_plan_expert_all_to_all_and_expert_gradients():
    """EP: 4 all-to-alls of b·s·h·k per MoE layer per microbatch; experts and their gradients split EP ways."""
    mixtral = model(32, 4096, 32, 32000, 4096, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
    hw = hardware(64, 80e9, 989e12, 450e9, 50e9)
    pl = plan(mixtral, 1, 64, hw, parallel(2, 4, 1, 1, 8, zero=1, sequence_parallel=True, recompute="full"))
    (ep,) = rows(pl, "expert")
    assert ep.bytes_per_call == 4096 * 4096 * 2 * 2 / 4 and ep.calls_per_step == 32 * 6 * pl.microbatches_per_step
    assert ep.time_s == pytest.approx(ep.calls_per_step * alltoall(8, ep.bytes_per_call, 50e9, 5e-6).time_s)
    assert pl.stages[0].experts_per_device == 1
    groups = {c.what: c.group_size for c in rows(pl, "data")}
    assert groups["gradients"] == 16 and groups["expert gradients"] == 2


def test_dp_leaves_activations_unchanged():
    """Adding data-parallel replicas does not change a device's activations."""
    small = hardware(8, 80e9, 989e12, 450e9, 50e9)
    a = plan(LLAMA, 1, 64, small, parallel(1, 8, sequence_parallel=True)).memory_per_device.activations_bytes
    b = plan(LLAMA, 1, 512, HW, parallel(8, 8, sequence_parallel=True)).memory_per_device.activations_bytes
    assert a == b


def test_model_states_fall_with_zero_in_a_plan():
    """Per-device model states fall strictly with each ZeRO stage."""
    states = [plan(LLAMA, 1, 512, HW, parallel(64, zero=z)).memory_per_device.model_states_bytes for z in range(4)]
    assert states[0] > states[1] > states[2] > states[3]


def test_most_loaded_stage_and_placement():
    """Embedding on the first stage, head on the last; memory is that of the most loaded stage."""
    pl = plan(LLAMA, 1, 512, HW, parallel(4, 4, 4, sequence_parallel=True))
    assert [(s.embedding, s.output_head) for s in pl.stages] == [(True, False), (False, False), (False, False),
                                                                  (False, True)]
    assert pl.memory_per_device.total_bytes == max(s.memory_total_bytes for s in pl.stages)
    assert pl.memory_per_device.stage == 0 and sorted(i for s in pl.stages for i in s.layers) == list(range(32))


def test_uneven_split_is_stated():
    """30 layers on 4 stages: 7, 7, 8, 8, and the plan says so."""
    m = model(30, 1024, 16, 32000, 2048)
    pl = plan(m, 1, 64, hardware(8, 80e9, 989e12, 450e9, 50e9), parallel(2, 1, 4))
    assert pl.layers_per_stage == (7, 7, 8, 8)
    assert pl.uneven_split == "30 layers do not divide into 4 stages: the last 2 stages hold 8 layers, the others 7"


def test_tied_embeddings_across_stages_all_reduce_their_gradients():
    """Tied embeddings with PP > 1: the first and last stage all-reduce the embedding gradient."""
    m = model(8, 1024, 16, 32000, 2048, tied_embeddings=True)
    pl = plan(m, 1, 64, hardware(8, 80e9, 989e12, 450e9, 50e9), parallel(2, 1, 4))
    (row,) = [c for c in rows(pl, "pipeline") if c.collective == "all-reduce"]
    assert row.group_size == 2 and row.bytes_per_call == 32000 * 1024 * 2


def test_does_not_fit_names_the_binding_term():
    """A plan above capacity is returned with fits False and the largest term named."""
    hw = hardware(64, 16e9, 989e12, 450e9, 50e9)
    mem = plan(LLAMA, 4, 512, hw, parallel(64)).memory_per_device
    assert not mem.fits and mem.binding_term == "activations" and mem.headroom_bytes < 0
    assert mem.total_gib == mem.total_bytes / 2**30 and mem.total_gb == mem.total_bytes / 1e9


def test_rank_coordinates_put_tp_innermost():
    """Rank r = (((d·P + p)·C + c)·E + e)·T + t, and a TP group shares a node."""
    pl = plan(LLAMA, 1, 512, HW, parallel(2, 8, 2, 2, sequence_parallel=True))
    assert pl.ranks[0] == (0, 0, 0, 0, 0, 0, 0)
    assert pl.ranks[13] == (13, 0, 0, 1, 0, 5, 1)
    assert pl.ranks[63][1:6] == (1, 1, 1, 0, 7)
    for r in pl.ranks:
        assert r[6] == (r[0] - r[5]) // 8


def test_large_clusters_do_not_list_ranks():
    """Beyond 1024 GPUs the coordinates follow from rank_strides instead of a list."""
    hw = hardware(2048, 80e9, 989e12, 450e9, 50e9)
    pl = plan(LLAMA, 1, 2048, hw, parallel(256, 8, sequence_parallel=True))
    assert pl.ranks is None and pl.rank_strides == {"data": 8, "pipeline": 8, "context": 8, "expert": 8, "tensor": 1}


@pytest.mark.parametrize(
    "par,micro,batch,message",
    [
        (parallel(7, 8), 1, 512, "data must be gpus / (tensor × pipeline × context × expert) = 8, got 7"),
        (parallel(1, 8, 3), 1, 512, "gpus must be a multiple of tensor × pipeline × context × expert = 24, got 64"),
        (parallel(4, 16), 1, 512, "tensor must be a divisor of heads (32) and kv_heads (8), got 16"),
        (parallel(1, 1, 64), 1, 512, "pipeline must be <= layers (32), got 64"),
        (parallel(32, 1, 1, 1, 2), 1, 512, "expert must be a divisor of experts (1), got 2"),
        (parallel(64), 3, 512, "global_batch must be a multiple of micro_batch × data × expert = 192, got 512"),
        (parallel(64, interleave=2), 1, 512, "interleave must be 1 when pipeline is 1, got 2"),
        (parallel(8, 1, 8, interleave=3), 1, 512, "interleave must be such that pipeline × interleave divides layers "
                                                  "(32), got 3"),
        (parallel(32, 1, 2, interleave=2), 1, 96, "interleave must be 1, or the microbatches per step (3) must be a "
                                                  "multiple of pipeline (2), got 2"),
        (parallel(32, 1, 2, zero=2), 1, 512, "zero must be 0 or 1 with pipeline > 1 (ZeRO-2/3 would re-communicate "
                                             "gradients or weights every microbatch; DeepSpeed refuses it), got 2"),
    ],
)
def test_invalid_combinations(par, micro, batch, message):
    """Each rule of the issue is a CalcError with the reason."""
    with pytest.raises(CalcError) as e:
        plan(LLAMA, micro, batch, HW, par)
    assert str(e.value) == message


def test_valid_edges_of_the_rules():
    """The accepted side of each rule: interleaving with m = p, CP with 2c = s/..., ZeRO-1 with PP."""
    assert check_combination(LLAMA, 1, 128, HW, parallel(32, 1, 2, interleave=2)) == 4
    assert check_combination(LLAMA, 1, 512, HW, parallel(16, 1, 1, 4)) == 32
    assert check_combination(LLAMA, 1, 512, HW, parallel(32, 1, 2, zero=1)) == 16


def test_ffn_must_split_over_tp():
    """TP must divide the MLP width."""
    m = model(2, 64, 8, 100, 16, ffn_hidden=100)
    with pytest.raises(CalcError, match=r"^tensor must be a divisor of ffn_hidden \(100\), got 8$"):
        plan(m, 1, 8, hardware(8, 80e9, 1e12, 1e9, 1e9), parallel(1, 8))


def test_context_needs_two_chunks_per_rank():
    """Load-balanced causal CP splits the sequence into 2 × context chunks."""
    m = model(2, 64, 8, 100, 12)
    with pytest.raises(CalcError, match=r"^context must be such that 2 × context divides seq_len \(12\) "
                                        r"\(load-balanced causal split\), got 4$"):
        plan(m, 1, 8, hardware(8, 80e9, 1e12, 1e9, 1e9), parallel(2, 1, 1, 4))


def test_sequence_parallel_needs_divisible_sequence():
    """SP splits s/c tokens over TP ranks."""
    m = model(2, 64, 8, 100, 12)
    with pytest.raises(CalcError, match=r"^sequence_parallel must be false, or seq_len / context \(12\) must be a "
                                        r"multiple of tensor \(8\), got True$"):
        plan(m, 1, 8, hardware(8, 80e9, 1e12, 1e9, 1e9), parallel(1, 8, sequence_parallel=True))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: hardware(12, 80e9, 1e12, 1e9, 1e9), "gpus must be a multiple of gpus_per_node (8) or at most one "
                                                     "node, got 12"),
        (lambda: hardware(8, 0, 1e12, 1e9, 1e9), "memory must be a number > 0 bytes, got 0"),
        (lambda: hardware(8, 1e9, 1e12, 1e9, 1e9, compute_efficiency=1.5), "compute_efficiency must be a number <= 1, "
                                                                          "got 1.5"),
        (lambda: parallel(zero=4), "zero must be a whole number <= 3, got 4"),
        (lambda: parallel(recompute="all"), "recompute must be one of none, selective, full, got 'all'"),
        (lambda: parallel(sequence_parallel="yes"), "sequence_parallel must be true or false, got 'yes'"),
        (lambda: parallel(tensor=True), "tensor must be a whole number >= 1, got True"),
    ],
)
def test_input_errors(call, message):
    """Single bad values are CalcErrors with exact messages."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message
