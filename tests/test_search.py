"""calc.search: only plans that fit, fastest first, refusals with reasons."""

import pytest

from calc.errors import CalcError
from calc.model import model
from calc.plan import hardware, parallel, plan
from calc.search import search

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
HW = hardware(64, 80e9, 989e12, 450e9, 50e9)


@pytest.fixture(scope="module")
def everything():
    return search(LLAMA, 512, HW, top=10_000)


def test_returns_only_plans_that_fit(everything):
    """Every returned plan fits in device memory."""
    assert everything.plans and all(p["memory_per_device"]["fits"] for p in everything.plans)
    assert len(everything.plans) == everything.feasible


def test_best_is_no_slower_than_any_enumerated(everything):
    """Plans are sorted by step time; the first is the minimum over all feasible configurations."""
    times = [p["step_time_s"] for p in everything.plans]
    assert times == sorted(times) and times[0] == min(times)


@pytest.mark.parametrize("index", [0, 1, 7, -1])
def test_search_costs_agree_with_plan(everything, index):
    """A plan found by the search costs the same when planned directly (the search's stage shortcut is exact)."""
    found = everything.plans[index]
    par = dict(found["parallel"])
    micro = par.pop("micro_batch")
    direct = plan(LLAMA, micro, 512, HW, parallel(**par))
    assert direct.step_time_s == pytest.approx(found["step_time_s"], rel=1e-12)
    assert direct.memory_per_device.total_bytes == pytest.approx(found["memory_per_device"]["total_bytes"])


def test_refusals_say_why(everything):
    """Every refusal has a kind and a reason; memory refusals name the stage and the largest term."""
    assert everything.refused_count == len(everything.refused) > 0
    assert set(everything.refused_by_reason) <= {"memory", "combination"}
    for r in everything.refused:
        assert r.reason
        if r.kind == "memory" and not str(r.parallel["micro_batch"]).startswith(">="):
            assert "GiB on stage" in r.reason and "largest term" in r.reason


def test_why_each_ranks():
    """The first plan explains its time; the others say how much slower and mostly why."""
    plans = search(LLAMA, 512, HW, top=3).plans
    assert plans[0]["why"].startswith("fastest: step")
    assert "slower than #1, mostly" in plans[1]["why"]


def test_tiny_memory_refuses_everything():
    """With 1 GB per GPU nothing fits: no plans, only refusals."""
    r = search(LLAMA, 512, hardware(64, 1e9, 989e12, 450e9, 50e9))
    assert r.plans == () and r.feasible == 0 and r.refused_by_reason.get("memory", 0) > 0


def test_fixed_micro_batch():
    """micro_batch fixes the microbatch size."""
    r = search(LLAMA, 512, HW, top=50, micro_batch=2)
    assert {p["parallel"]["micro_batch"] for p in r.plans} == {2}


def test_moe_search_uses_expert_parallelism():
    """An MoE model's search space includes expert parallelism."""
    moe = model(8, 1024, 16, 32000, 2048, experts=8, top_k=2)
    r = search(moe, 64, hardware(16, 80e9, 989e12, 450e9, 50e9), top=10_000)
    assert {p["parallel"]["expert"] for p in r.plans} >= {1, 2, 8}


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(top=0), "top must be a whole number >= 1, got 0"),
        (dict(top=10_001), "top must be a whole number <= 10000, got 10001"),
        (dict(max_micro_batch=0), "max_micro_batch must be a whole number >= 1, got 0"),
        (dict(precision="int4"), "precision must be one of bf16-adam, fp16-adam, megatron-bf16, megatron-fp16, "
                                 "fp32-adam, got 'int4'"),
    ],
)
def test_errors(kwargs, message):
    """Bad search options are CalcErrors."""
    with pytest.raises(CalcError) as e:
        search(LLAMA, 512, HW, **kwargs)
    assert str(e.value) == message
