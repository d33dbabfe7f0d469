"""calc.infer_search: splits ranked by latency at a batch, or by throughput under a latency bound."""

import pytest

from calc.errors import CalcError
from calc.hardware import hardware
from calc.infer_search import infer_search
from calc.inference import infer, serving, split
from calc.model import model

LLAMA70 = model(80, 8192, 64, 128256, 8192, kv_heads=8, ffn_hidden=28672, gated_mlp=True)
MIXTRAL = model(32, 4096, 32, 32000, 32768, kv_heads=8, ffn_hidden=14336, gated_mlp=True, experts=8, top_k=2)
NODE = hardware(8, profile_name="h100-sxm5-80gb")


@pytest.fixture(scope="module")
def latency():
    return infer_search(LLAMA70, serving(8, 2048, 512), NODE, top=50)


def test_latency_ranking_is_by_inter_token_latency_and_matches_infer(latency):
    """Plans come fastest first, and each is what infer computes for that split."""
    times = [p["decode_time_per_token_s"] for p in latency.plans]
    assert times == sorted(times) and latency.plans[0]["parallel"]["tensor"] == 8
    for p in latency.plans:
        r = infer(LLAMA70, serving(8, 2048, 512), NODE, split(**p["parallel"]))
        assert r.decode_time_per_token_s == p["decode_time_per_token_s"]


def test_latency_search_refuses_what_does_not_fit_with_a_reason(latency):
    """One GPU cannot hold 70B in bf16: refused for memory with the binding term, counted by rule."""
    rules = {x["kind"]: x for x in latency.refused_summary}
    assert rules["memory"]["example"]["parallel"]["tensor"] == 1 and "params binds" in \
        rules["memory"]["example"]["reason"]
    assert latency.refused_count == sum(x["count"] for x in latency.refused_summary)
    assert latency.feasible == len(latency.plans)


def test_every_candidate_multiplies_to_the_gpus(latency):
    """data × tensor_parallel × pipeline_parallel × context_parallel × expert_parallel = gpus for every plan."""
    for p in latency.plans:
        par = p["parallel"]
        assert par["data"] * par["tensor"] * par["pipeline"] * par["context"] * par["expert"] == 8


def test_throughput_search_finds_the_largest_batch_within_the_bound():
    """Under max_latency each plan's batch meets the bound, and one more batch per replica would not (or not fit)."""
    r = infer_search(LLAMA70, serving(1, 2048, 512), NODE, top=3, max_latency=0.03)
    assert "at most 0.03 s" in r.objective
    tokens = [p["tokens_per_s"] for p in r.plans]
    assert tokens == sorted(tokens, reverse=True)
    for p in r.plans:
        assert p["decode_time_per_token_s"] <= 0.03
        bigger = infer(LLAMA70, serving(p["batch"] + 1, 2048, 512), NODE, split(**p["parallel"]), refuse=False)
        assert bigger.decode_time_per_token_s > 0.03 or not bigger.memory_per_device.fits


def test_a_bound_no_split_meets_refuses_everything_by_rule():
    """1 ms per token is below the floor of a 70B model on 8 GPUs: no plan, every split refused with its reason."""
    r = infer_search(LLAMA70, serving(1, 2048, 512), NODE, max_latency=0.001)
    assert r.plans == () and r.feasible == 0
    assert {x["kind"] for x in r.refused_summary} <= {"latency", "memory", "combination"}
    assert any(x["kind"] == "latency" for x in r.refused_summary)


def test_fixed_axes_are_kept_and_reported():
    """A fixed tensor degree is the only one searched, and the result says it was fixed."""
    r = infer_search(LLAMA70, serving(8, 2048, 512), NODE, fixed={"tensor": 4})
    assert r.fixed == {"tensor": 4} and {p["parallel"]["tensor"] for p in r.plans} == {4}


def test_expert_parallelism_is_searched_for_moe_and_batch_must_divide():
    """Mixtral's 8 experts allow EP 1, 2, 4, 8; a batch of 4 refuses EP 8 by rule."""
    r = infer_search(MIXTRAL, serving(4, 1024, 256), NODE, top=100)
    experts = {p["parallel"]["expert"] for p in r.plans}
    assert experts == {1, 2, 4}
    assert any(x["rule"].startswith("batch must be a multiple of expert") for x in r.refused_summary)


@pytest.mark.parametrize("kwargs,message", [
    ({"top": 0}, "top must be a whole number >= 1, got 0"),
    ({"max_latency": 0.0}, "max_latency must be"),
    ({"fixed": {"zero": 1}}, "zero must be an axis of the split (data, tensor, pipeline, context, expert), got 1"),
])
def test_bad_arguments(kwargs, message):
    """top, the bound and the fixed axes are checked by name."""
    with pytest.raises(CalcError) as info:
        infer_search(LLAMA70, serving(8, 2048, 512), NODE, **kwargs)
    assert str(info.value).startswith(message)


def test_the_default_budget_leaves_a_large_cluster_whole():
    """Llama-3 70B on 16,384 GPUs under a latency bound is searched in full: no split is left uncosted."""
    r = infer_search(LLAMA70, serving(32, 2048, 512), hardware(16384, profile_name="h100-sxm5-80gb"),
                     max_latency=0.05)
    assert r.plans and all(g["kind"] != "budget" for g in r.refused_summary)


@pytest.mark.parametrize("bound", [None, 0.05])
def test_a_spent_budget_counts_the_splits_left_under_one_rule(monkeypatch, bound):
    """Once the budget is spent the rest are not costed: one rule counts them, with the first as example;
    what was costed before is kept, and every split is either kept or refused."""
    hw = hardware(1024, profile_name="h100-sxm5-80gb")
    whole = infer_search(LLAMA70, serving(32, 2048, 512), hw, max_latency=bound, top=100)
    monkeypatch.setitem(infer_search.__globals__, "MAX_WORK", 300)  # tests/test_hooks_entry.py imports calc afresh
    cut = infer_search(LLAMA70, serving(32, 2048, 512), hw, max_latency=bound, top=100)
    (budget,) = [g for g in cut.refused_summary if g["kind"] == "budget"]
    assert "budget of 300 stage costings" in budget["rule"] and "fix tensor, pipeline or expert" in budget["rule"]
    assert budget["example"]["reason"] == f"the budget ran out with {budget['count']} splits left, this one first"
    assert cut.feasible + cut.refused_count == whole.feasible + whole.refused_count
    assert 0 < budget["count"] < whole.feasible + whole.refused_count
    assert {tuple(p["parallel"].values()) for p in cut.plans} < {tuple(p["parallel"].values()) for p in whole.plans}


def test_an_enormous_serving_space_is_bounded_and_says_how_to_search_it():
    """Valid values near the limits (7,560 layers, 83,160 experts, 8,648,640 GPUs, 6,656 splits with the experts
    fixed): the search stops at its budget and names the axes to fix, instead of running for minutes."""
    huge = model(7560, 5040, 5040, 1000, 2520, experts=83160, top_k=1)
    hw = hardware(8_648_640, profile_name="h100-sxm5-80gb", gpus_per_node=720)
    r = infer_search(huge, serving(32, 2048, 512), hw, fixed={"expert": 1})
    (budget,) = [g for g in r.refused_summary if g["kind"] == "budget"]
    assert r.feasible + r.refused_count == 6656 and budget["count"] > 6000
