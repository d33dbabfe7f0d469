"""calc.search: only plans that fit, fastest first, refusals counted by rule, fixed axes, a bounded space."""

import json
from dataclasses import replace

import pytest

from calc.api import COMMANDS, evaluate
from calc.errors import CalcError
from calc.hardware import hardware
from calc.model import model
from calc.page import page_request
from calc.plan import parallel, plan
from calc.presets import PRESETS
from calc.search import MAX_CONFIGURATIONS, search, stage_splits
from calc.views import plan_inputs, row_inputs
from hooks.views import preset_inputs

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
HW = hardware(64, profile_name="h100-sxm5-80gb")


@pytest.fixture(scope="module")
def everything():
    return search(LLAMA, 512, HW, top=300)


def test_returns_only_plans_that_fit(everything):
    """Every returned plan fits in device memory, and at most top of them."""
    assert len(everything.plans) == 300 and all(p["memory_per_device"]["fits"] for p in everything.plans)
    assert everything.feasible >= 300


def test_with_room_for_all_nothing_is_pruned():
    """When top exceeds what fits, every configuration that fits is costed and returned."""
    small = model(4, 512, 8, 1000, 512)
    r = search(small, 16, hardware(8, profile_name="h100-sxm5-80gb"), top=1000, fixed={"zero": 0, "recompute": "none"})
    assert r.pruned == 0 and len(r.plans) == r.feasible > 0


def test_best_is_no_slower_than_any_enumerated(everything):
    """Plans are sorted by step time; the first is the minimum over all feasible configurations."""
    times = [p["step_time_s"] for p in everything.plans]
    assert times == sorted(times) and times[0] == min(times)


def test_pruning_keeps_the_same_winners(everything):
    """With top=10 the compute-only bound skips configurations, yet the ten fastest are the same."""
    small = search(LLAMA, 512, HW, top=10)
    assert small.pruned > 0
    assert [p["step_time_s"] for p in small.plans] == [p["step_time_s"] for p in everything.plans[:10]]


@pytest.mark.parametrize("m, gpus, batch", [(LLAMA, 64, 512), (model(24, 2048, 16, 32000, 2048, experts=4, top_k=2), 16, 64)])
def test_the_bound_after_the_memory_check_changes_no_answer(monkeypatch, m, gpus, batch):
    """Splits that fit but whose m × t_max is already slower than every plan kept are not costed further;
    the result, counts and refusals included, is what costing every one of them gives."""
    names = search.__globals__  # the module search runs in (tests/test_hooks_entry.py imports calc afresh)
    hw = hardware(gpus, profile_name="h100-sxm5-80gb")
    costed = []
    estimate = names["estimate"]
    monkeypatch.setitem(names, "estimate", lambda *a, **k: costed.append(1) or estimate(*a, **k))
    fast = search(m, batch, hw, top=10)
    skipped = fast.feasible - len(costed)
    monkeypatch.setitem(names, "step_bound", lambda *a: 0.0)
    monkeypatch.setitem(names, "bound_from_parts", lambda *a: 0.0)  # the same bound from a split's shared parts
    costed.clear()
    assert search(m, batch, hw, top=10) == fast and costed and skipped > fast.feasible // 2
    assert len(costed) == fast.feasible  # with the bound off, every split that fits is costed


#: Small searches of different shapes: dense with uneven splits and tied embeddings, standard attention, MoE with
#: MoE layers every other layer (which layers a chunk holds then depends on the interleaving), ZeRO-3 gathers by
#: tensor, a small device that refuses many splits for memory.
_SMALL = [
    (model(30, 1024, 16, 32000, 2048, tied_embeddings=True, biases=True), hardware(32, profile_name="a100-sxm4-80gb"),
     64, {}),
    (model(16, 2048, 16, 32000, 4096, attention="standard"), hardware(16, profile_name="h100-sxm5-80gb"), 32, {}),
    (model(24, 2048, 16, 32000, 2048, experts=8, top_k=2, moe_layer_freq=2), hardware(32, profile_name="h100-sxm5-80gb"),
     128, {}),
    (model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True),
     hardware(64, profile_name="h100-sxm5-80gb"), 256, {"zero": 3, "zero3_gather": "tensor"}),
    (model(40, 5120, 40, 50000, 2048), hardware(32, profile_name="a100-sxm4-40gb"), 256, {}),
]


@pytest.mark.parametrize("m, hw, batch, fixed", _SMALL)
@pytest.mark.parametrize("top", [1, 10])
def test_pruning_never_drops_a_plan_that_belongs_in_the_top(monkeypatch, m, hw, batch, fixed, top):
    """Both bounds on, the ranked plans are those of a search that prunes nothing (both bounds 0) and costs every
    split that fits; the bound after the memory check alone changes nothing at all, counts and refusals included."""
    names = search.__globals__  # the module search runs in (tests/test_hooks_entry.py imports calc afresh)
    pruned = search(m, batch, hw, top=top, fixed=fixed)
    monkeypatch.setitem(names, "step_bound", lambda *a: 0.0)
    monkeypatch.setitem(names, "bound_from_parts", lambda *a: 0.0)  # the same bound from a split's shared parts
    assert search(m, batch, hw, top=top, fixed=fixed) == pruned
    monkeypatch.setitem(names, "step_floor", lambda *a: 0.0)
    everything = search(m, batch, hw, top=top, fixed=fixed)
    assert everything.pruned == 0 and everything.feasible >= pruned.feasible
    assert everything.plans == pruned.plans and len(pruned.plans) == min(top, everything.feasible) > 0


GPT3 = model(96, 12288, 96, 51200, 2048, tied_embeddings=True, biases=True, learned_positions=True)


@pytest.mark.parametrize("m, hw, batch, fixed", _SMALL + [
    (GPT3, hardware(1024, profile_name="a100-sxm4-80gb"), 1536, {}),
    (GPT3, hardware(1024, profile_name="a100-sxm4-80gb"), 1536, {"micro_batch": 2, "recompute": "full"}),
])
def test_the_order_families_are_searched_in_changes_no_plan(monkeypatch, m, hw, batch, fixed):
    """The families of degrees are searched most promising first; searched in the order they are enumerated, or
    the least promising first, the ranked plans are the same. For GPT-3 on 1024 GPUs the promising order weighs
    (checks for memory) fewer configurations: it keeps fast plans sooner, so the compute floor prunes more."""
    cls = search.__globals__["_Search"]  # the module search runs in (tests/test_hooks_entry.py imports calc afresh)
    promising = search(m, batch, hw, top=10, fixed=fixed)
    promise = cls.promise
    monkeypatch.setattr(cls, "promise", lambda self, *f: 0.0)  # a stable sort: the enumeration order
    listed = search(m, batch, hw, top=10, fixed=fixed)
    monkeypatch.setattr(cls, "promise", lambda self, *f: -promise(self, *f))
    worst_first = search(m, batch, hw, top=10, fixed=fixed)
    assert promising.plans == listed.plans == worst_first.plans and promising.plans
    if m is GPT3 and not fixed:
        weighed = [r.enumerated - r.pruned for r in (promising, listed, worst_first)]
        assert weighed[0] < weighed[1] < weighed[2], weighed


@pytest.mark.parametrize("m, hw, batch, fixed", _SMALL + [
    (LLAMA, HW, 512, {"recompute_layers": 2}),
    (model(24, 2048, 16, 32000, 2048, experts=8, top_k=2, moe_layer_freq=2), hardware(32, profile_name="h100-sxm5-80gb"),
     128, {"recompute": "full", "tp_comm_overlap": True}),
])
def test_what_interleavings_share_changes_no_answer(monkeypatch, m, hw, batch, fixed):
    """A split's interleavings at one microbatch size share their memory and time parts (unless which layers are MoE
    or recomputed depends on the chunks); the result, counts and refusals included, is what costing each
    configuration on its own (memory_total, step_bound) gives."""
    names = search.__globals__  # the module search runs in (tests/test_hooks_entry.py imports calc afresh)
    shared = search(m, batch, hw, top=10, fixed=fixed)
    monkeypatch.setitem(names, "shared_by_interleavings", lambda *a: False)
    assert search(m, batch, hw, top=10, fixed=fixed) == shared and shared.plans


@pytest.mark.parametrize("m, gpus, batch", [(LLAMA, 64, 512), (model(24, 2048, 16, 32000, 2048, experts=4, top_k=2), 16, 64)])
def test_interleaved_configurations_share_their_split_s_check_soundly(monkeypatch, m, gpus, batch):
    """A split's interleaved configurations are checked once (check_combination's rules that depend on the
    interleaving and the microbatch are the search's own filters); every one then costed passes the check."""
    names = search.__globals__  # the module search runs in (tests/test_hooks_entry.py imports calc afresh)
    hw = hardware(gpus, profile_name="h100-sxm5-80gb")
    checks, unchecked = [], []
    check = names["check_combination"]
    monkeypatch.setitem(names, "check_combination", lambda *a: checks.append(1) or check(*a))
    searcher = names["_Search"]
    cost = searcher.cost

    def checked_cost(self, par_of, base, v, b, mbs, verdict=None, shared=None):
        fits = cost(self, par_of, base, v, b, mbs, verdict, shared)
        if v > 1 and verdict is not None and verdict["v"] is None:  # costed on its split's check
            unchecked.append(1)
            par = par_of(v)
            assert par == replace(base, interleave=v)
            assert check(self.w.m, b, self.w.global_batch, self.w.hw, par) == mbs
        return fits

    monkeypatch.setattr(searcher, "cost", checked_cost)
    r = search(m, batch, hw, top=10)
    assert len(unchecked) > 2 * len(checks) > 0 and r.plans


@pytest.mark.parametrize("index", [0, 1, 7, -1])
def test_search_costs_agree_with_plan(everything, index):
    """A plan found by the search costs the same when planned directly (the search's stage shortcut is exact)."""
    found = everything.plans[index]
    par = dict(found["parallel"])
    micro = par.pop("micro_batch")
    direct = plan(LLAMA, micro, 512, HW, parallel(**par))
    assert direct.step_time_s == pytest.approx(found["step_time_s"], rel=1e-12)
    assert direct.memory_per_device.total_bytes == pytest.approx(found["memory_per_device"]["total_bytes"])


@pytest.mark.parametrize("fixed,check", [
    ({"tensor": 2, "sequence_parallel": False}, lambda p: not p["sequence_parallel"]),
    ({"tensor": 2, "sequence_parallel": True}, lambda p: p["sequence_parallel"]),
    ({"pipeline": 4, "zero": 3}, lambda p: p["zero"] == 3 and p["pipeline"] == 4),
    ({"pipeline": 2}, lambda p: p["interleave"] > 1),
])
def test_the_space_has_what_real_runs_use(fixed, check):
    """Sequence parallelism off and on, ZeRO-3 with pipelining, interleaving: each is searched."""
    plans = search(LLAMA, 512, HW, top=200, fixed=fixed).plans
    assert plans and any(check(p["parallel"]) for p in plans)


def test_refusals_are_counted_by_rule_with_one_example(everything):
    """Each rule once, with its count and one example; the counts add up to refused_count."""
    summary = everything.refused_summary
    assert sum(g["count"] for g in summary) == everything.refused_count > 0
    assert len({(g["kind"], g["rule"]) for g in summary}) == len(summary)
    assert set(everything.refused_by_reason) <= {"memory", "combination"}
    for g in summary:
        assert g["example"]["reason"] and isinstance(g["example"]["parallel"], dict)


def test_top_ten_json_is_small():
    """search --top 10 --json stays under 50 kB (refusals are summarised, not listed)."""
    r = search(model(96, 12288, 96, 51200, 2048), 1536, hardware(1024, profile_name="a100-sxm4-80gb"), top=10)
    assert len(json.dumps(r.as_dict())) < 50_000


def test_top_ten_json_is_small_with_moe_splits():
    """Ten MoE plans with eleven communication rows each (tensor, context, expert, pipeline, and data for dense and
    expert weights) stay under 50 kB: a search's rows leave out what follows from the others (55 kB before)."""
    m = model(60, 7168, 128, 51200, 2048, experts=256, top_k=8, biases=True, learned_positions=True,
              tied_embeddings=True)
    r = search(m, 16384, hardware(16384, profile_name="h100-sxm5-80gb"), "megatron-fp16", top=10)
    assert max(len(p["communications"]) for p in r.plans) >= 11
    assert len(json.dumps(r.as_dict())) < 50_000
    row = r.plans[0]["communications"][0]
    assert "bytes_per_step" not in row and {"bytes_per_call", "calls_per_step", "time_s", "exposed_time_s"} <= set(row)


def test_a_rule_that_quotes_values_is_one_group():
    """With the interleaving fixed, every split whose microbatches are not a multiple of its stages breaks the same
    rule with its own numbers: one group (shown as a template, the example with its numbers), and --top 10 --json
    stays under 50 kB (it was 67 kB when each pair of numbers was a rule of its own)."""
    r = search(model(96, 12288, 96, 51200, 2048, biases=True, learned_positions=True), 1536,
               hardware(1024, profile_name="a100-sxm4-80gb", dtype="fp16"), "megatron-fp16", top=10,
               fixed={"interleave": 2})
    multiple = [g for g in r.refused_summary if "a multiple of pipeline_parallel" in g["rule"]]
    assert len(multiple) == 1 and multiple[0]["count"] > 1000
    assert multiple[0]["rule"] == ("interleave must be 1, or the microbatches per step (n) a multiple of "
                                   "pipeline_parallel (n)")
    assert "(n)" not in multiple[0]["example"]["reason"] and "a multiple of pipeline_parallel (" in \
        multiple[0]["example"]["reason"]
    assert len(json.dumps(r.as_dict())) < 50_000


def test_why_each_ranks():
    """The first plan explains its time; the others say how much slower and mostly why."""
    plans = search(LLAMA, 512, HW, top=3).plans
    assert plans[0]["why"].startswith("fastest: step")
    assert "slower than #1, mostly" in plans[1]["why"]


def test_tiny_memory_refuses_everything():
    """With 1 GB per GPU nothing fits: no plans, only refusals."""
    r = search(LLAMA, 512, hardware(64, profile_name="h100-sxm5-80gb", device_memory=3e9))
    assert r.plans == () and r.feasible == 0 and r.refused_by_reason.get("memory", 0) > 0


def test_fixed_axes_are_kept_and_reported():
    """A partial parallel section fixes those axes in every plan and is echoed back."""
    fixed = {"tensor": 2, "recompute": "full", "sequence_parallel": True}
    r = search(LLAMA, 512, HW, top=50, fixed=fixed)
    assert r.fixed == fixed and r.plans
    assert all(p["parallel"]["tensor"] == 2 and p["parallel"]["recompute"] == "full"
               and p["parallel"]["sequence_parallel"] for p in r.plans)


def test_fixed_micro_batch():
    """micro_batch fixes the microbatch size."""
    r = search(LLAMA, 512, HW, top=50, micro_batch=2)
    assert {p["parallel"]["micro_batch"] for p in r.plans} == {2}


def test_fixed_stage_layers_fix_the_number_of_stages():
    """A fixed split of the layers fixes the pipeline degree (it is reported as fixed); one that disagrees with a
    fixed pipeline degree is a CalcError naming both; one whose stage count does not divide the GPUs is refused."""
    m = model(30, 1024, 16, 32000, 2048)
    hw = hardware(8, profile_name="h100-sxm5-80gb")
    r = search(m, 64, hw, top=1000, fixed={"stage_layers": (7, 8, 8, 7)})
    assert r.plans and {p["parallel"]["pipeline"] for p in r.plans} == {4} and r.fixed["pipeline"] == 4
    assert {tuple(p["parallel"]["stage_layers"]) for p in r.plans} == {(7, 8, 8, 7)}
    with pytest.raises(CalcError) as e:
        search(m, 64, hw, fixed={"stage_layers": (7, 8, 8, 7), "pipeline": 2})
    assert str(e.value) == "stage_layers must be one entry per pipeline stage (pipeline 2), got [7, 8, 8, 7]"
    r = search(m, 64, hw, fixed={"stage_layers": (10, 10, 10)})
    assert r.plans == () and [x["rule"] for x in r.refused_summary] == [
        "pipeline_parallel must divide the GPUs and be at most the layers (and 512)"]


def test_uneven_stage_splits_are_tried():
    """126 layers on 16 stages: the even-as-possible split and the one with lighter ends."""
    assert stage_splits(126, 16) == [None, (7,) + (8,) * 14 + (7,)]
    m = model(30, 1024, 16, 32000, 2048)
    r = search(m, 64, hardware(8, profile_name="h100-sxm5-80gb"), top=1000, fixed={"pipeline": 4})
    assert {tuple(p["parallel"]["stage_layers"] or ()) for p in r.plans} == {(), (7, 8, 8, 7)}  # () = as even as possible


def test_standard_attention_searches_no_context_parallelism():
    """Ring attention needs a flash kernel: with standard attention every plan has context 1."""
    std = model(32, 4096, 32, 128256, 8192, kv_heads=8, attention="standard")
    r = search(std, 512, HW, top=20)
    assert r.plans and {p["parallel"]["context"] for p in r.plans} == {1}


def test_moe_search_uses_expert_parallelism():
    """An MoE model's search space includes expert parallelism."""
    moe = model(8, 1024, 16, 32000, 2048, experts=8, top_k=2)
    r = search(moe, 64, hardware(16, profile_name="h100-sxm5-80gb"), top=1000)
    assert {p["parallel"]["expert"] for p in r.plans} >= {1, 2, 8}


def test_an_enormous_space_is_capped_and_says_so():
    """Values within the documented limits with a huge space: the search stops at the cap and says so."""
    m = model(7560, 5040, 5040, 1000, 2520, experts=83160, top_k=1)
    hw = hardware(8_648_640, profile_name="h100-sxm5-80gb", gpus_per_node=720)
    r = search(m, 951_350_400, hw, top=10)
    assert r.capped.startswith("the search stopped after") and r.enumerated >= MAX_CONFIGURATIONS
    assert len(r.refused_summary) < 50  # counted by rule: bounded whatever the space


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(top=0), "top must be a whole number >= 1, got 0"),
        (dict(top=1001), "top must be a whole number <= 1000, got 1001"),
        (dict(max_micro_batch=0), "max_micro_batch must be a whole number >= 1, got 0"),
        (dict(precision="int4"), "precision must be one of bf16-adam, fp16-adam, megatron-bf16, megatron-fp16, "
                                 "fp32-adam, bf16-states, got 'int4'"),
        (dict(fixed={"banana": 1}), "banana must be an axis of the search (data, tensor, pipeline, context, expert, "
                                    "zero, sequence_parallel, recompute, interleave, stage_layers, micro_batch, "
                                    "overlap_grad_reduce, overlap_param_gather, tp_comm_overlap, zero3_gather, "
                                    "recompute_layers, pipeline_engine, rank_order, zero_group), got 1"),
        (dict(fixed={"recompute": "selective", "recompute_layers": 2}),
         "recompute_layers must be blank unless recompute is full (recompute is selective), got 2"),
        (dict(fixed={"recompute_layers": 33}), "recompute_layers must be a whole number <= 32, got 33"),
    ],
)
def test_errors(kwargs, message):
    """Bad search options are CalcErrors."""
    with pytest.raises(CalcError) as e:
        search(LLAMA, 512, HW, **kwargs)
    assert str(e.value) == message


def test_search_summary_is_small_and_counts_every_refusal():
    """The refusal summary adds up to refused_count; the page's answer for 1024 GPUs stays under 64 kB."""
    split = {p.name for p in COMMANDS["search"].params if p.section == "parallel"}
    inputs = {k: x for k, x in PRESETS["gpt3-175b"].inputs.items() if k in {p.name for p in COMMANDS["search"].params}
              and k != "micro_batch" and k not in split}
    full = evaluate("search", inputs)
    assert sum(g["count"] for g in full["refused_summary"]) == full["refused_count"] > 0
    answer = page_request(json.dumps({"op": "evaluate", "command": "search", "inputs": inputs}))
    assert len(answer) < 64_000


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_planner_s_answer_holds_every_field_the_page_reads(preset):
    """What the planner page reads of its answer is there: every result's JSON text as the CLI prints it and its
    text (calc-mount.mjs), the two tables (calc-view.mjs), and each row's rank and, over the first row's inputs,
    its own where they differ (calc-launch.mjs): every plan field of that plan, the launch request's inputs."""
    inputs = preset_inputs(COMMANDS["search"], preset)
    answer = json.loads(page_request(json.dumps({"op": "evaluate", "command": "search", "inputs": inputs})))
    result = evaluate("search", inputs)
    keys = [r.key for r in COMMANDS["search"].results]
    assert answer["ok"] and list(answer["values"]) == list(answer["text"]) == keys
    assert all(answer["values"][k] == json.dumps(result[k]) for k in keys)
    view = answer["view"]
    assert view["figures"] == [] and set(view["tables"]) == {"plans", "refusals"}
    for t in view["tables"].values():
        assert t["caption"] and len(t["head"]) == len(t["align"]) and all(len(r) == len(t["head"]) for r in t["rows"])
    assert len(view["tables"]["plans"]["rows"]) == len(view["rows"]) == len(result["plans"]) > 0
    plan_fields = [p.name for p in COMMANDS["plan"].params]
    assert list(view["inputs"]) == plan_fields and view["rows"][0]["inputs"] == {}
    for i, (row, pl) in enumerate(zip(view["rows"], result["plans"])):
        assert row["rank"] == pl["rank"]
        assert all(view["inputs"][k] != x for k, x in row["inputs"].items())  # only what differs is sent
        assert row_inputs(view, i) == plan_inputs(inputs, pl["parallel"])
        assert evaluate("plan", row_inputs(view, i))["step_time_s"] == pl["step_time_s"]


def test_a_fixed_recompute_layers_is_kept_and_fixes_full_recomputation():
    """recompute_layers is not searched; fixed, every plan keeps it with recompute full (the bound is a refusal)."""
    r = search(LLAMA, 512, HW, top=20, fixed={"recompute_layers": 5, "tensor": 8})
    assert r.plans and all(p["parallel"]["recompute"] == "full" and p["parallel"]["recompute_layers"] == 5
                           for p in r.plans)
    assert r.fixed["recompute"] == "full"
    assert all(-(-max(p["parallel"]["stage_layers"] or [32 // p["parallel"]["pipeline"]]) //
                 p["parallel"]["interleave"]) >= 5 for p in r.plans)
    assert any(s["rule"].endswith("the layers of the largest model chunk (layers per stage / interleave)")
               for s in r.refused_summary)  # 8 stages of 4 layers, or 4 stages in chunks of 4
    free = search(LLAMA, 512, HW, top=5, fixed={"tensor": 8})
    assert all(p["parallel"]["recompute_layers"] is None for p in free.plans)


def test_a_2021_engine_search_keeps_to_the_layouts_it_can_build():
    """With pipeline_engine megatron-2021 fixed, every ranked plan has even stages and, when interleaved, more than
    two stages and chunks that divide them; the uneven splits tried are refused by that rule, counted."""
    m = model(24, 4096, 32, 50000, 2048)  # 24 layers: 16 stages would be uneven
    hw = hardware(64, profile_name="a100-sxm4-80gb")
    r = search(m, 256, hw, top=300, fixed={"pipeline_engine": "megatron-2021", "recompute": "full"})
    shapes = {(pl["parallel"]["pipeline"], pl["parallel"]["interleave"]) for pl in r.plans}
    for p, v in shapes:
        assert 24 % p == 0 and (v == 1 or (p > 2 and (24 // p) % v == 0)), (p, v)
    assert {(4, 2), (4, 3), (4, 6)} <= shapes and (2, 1) in shapes
    rules = [g["rule"] for g in r.refused_summary if g["kind"] == "combination"]
    assert "stage_layers must be the same layers on every stage with pipeline_engine megatron-2021" in rules
    free = search(m, 256, hw, top=300, fixed={"recompute": "full"})
    shapes = {(pl["parallel"]["pipeline"], pl["parallel"]["interleave"]) for pl in free.plans}
    assert (2, 5) in shapes  # the current engine interleaves two stages, in chunks of 3 and 2 layers


def test_hybrid_sharding_is_searched_where_the_replicas_span_nodes(everything):
    """Beside sharding over every replica, the search tries the replicas of one node as the shard group: only with
    ZeRO 1-3, only when the data-parallel group spans nodes, and every such plan equals its plan() to the bit."""
    hybrid = [p for p in everything.plans if p["parallel"]["zero_group"] is not None]
    assert hybrid
    for p in hybrid:
        q = p["parallel"]
        inside = q["tensor"] * q["context"] * q["expert"]  # the default order: the data ranks stride over these
        assert q["zero"] >= 1 and q["zero_group"] == 8 // inside < q["data"]
    one = hybrid[0]["parallel"]
    pl = plan(LLAMA, one["micro_batch"], 512, HW, parallel(**{k: x for k, x in one.items() if k != "micro_batch"}))
    assert pl.step_time_s == hybrid[0]["step_time_s"]
    single = search(LLAMA, 64, hardware(8, profile_name="h100-sxm5-80gb"), top=300)
    assert all(p["parallel"]["zero_group"] is None for p in single.plans)


def test_hybrid_sharding_wins_on_a_slow_network():
    """Llama 2 7B on 12 nodes of 8 H100s with 12.5 GB/s of network per GPU (IBM's cluster, which ran it with
    HSDP): sharding inside each node and all-reducing the shards across nodes ranks first."""
    llama2 = model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True, norm="rmsnorm", dropout=False)
    r = search(llama2, 192, hardware(96, profile_name="h100-sxm5-80gb", inter_node_bandwidth=12.5e9), top=5)
    assert r.plans[0]["parallel"]["zero_group"] == 8
