"""Tests for calc.split: one divisibility rule, the same for traffic, activations, memory and plan."""

from __future__ import annotations

import pytest

from calc.api import evaluate
from calc.errors import CalcError
from calc.split import PLAN_NAMES, SUFFIXED_NAMES, check_split


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(tensor=3, heads=32), "tensor must be a divisor of heads (32) and kv_heads (32), got 3"),
        (dict(tensor=16, heads=32, kv_heads=8), "tensor must be a divisor of heads (32) and kv_heads (8), got 16"),
        (dict(tensor=8, ffn_hidden=14340), "tensor must be a divisor of ffn_hidden (14340), got 8"),
        (dict(tensor=7, hidden=12288), "tensor must be a divisor of hidden (12288), got 7"),
        (dict(pipeline=97, layers=96), "pipeline must be <= layers (96), got 97"),
        (dict(context=3, seq_len=2047), "context must be such that 2 × context divides seq_len (2047) "
                                        "(load-balanced causal split), got 3"),
        (dict(context=2, seq_len=2050), "context must be such that 2 × context divides seq_len (2050) "
                                        "(load-balanced causal split), got 2"),
        (dict(tensor=8, sequence_parallel=True, seq_len=2052), "sequence_parallel must be false, or seq_len / "
                                                                "context (2052) must be a multiple of tensor (8), got True"),
        (dict(tensor=8, pipeline=1, params=7), "params must be a multiple of tensor × pipeline = 8 (each device "
                                               "holds whole parameters), got 7"),
    ],
)
def test_each_rule_names_the_degree_and_the_size(kwargs, message):
    """Each rule, broken on its own: the message names the degree, what it must divide, and its value."""
    with pytest.raises(CalcError) as info:
        check_split(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "kwargs",
    [dict(tensor=8, heads=32, kv_heads=8, ffn_hidden=14336, hidden=4096),
     dict(pipeline=96, layers=96), dict(context=2, seq_len=2048), dict(context=1, seq_len=2047),
     dict(tensor=8, sequence_parallel=False, seq_len=2047), dict(tensor=8, sequence_parallel=True, seq_len=2048),
     dict(tensor=8, pipeline=8, params=7_500_000_000), dict()],
)
def test_splits_that_divide_pass(kwargs):
    """The other side of each bound: whole pieces everywhere pass."""
    check_split(**kwargs)


def test_names_follow_the_caller():
    """With the suffixed names the message names tensor_parallel, a parameter traffic and activations have."""
    with pytest.raises(CalcError, match="^tensor_parallel must be a divisor of hidden"):
        check_split(tensor=7, hidden=12288, names=SUFFIXED_NAMES)
    assert set(PLAN_NAMES) == set(SUFFIXED_NAMES)


@pytest.mark.parametrize(
    "command, inputs, message",
    [
        ("traffic", {"tensor_parallel": "7"}, "tensor_parallel must be a divisor of hidden (12288), got 7"),
        ("activations", {"seq_len": "2047", "hidden": "12288", "heads": "96", "layers": "96", "context_parallel": "3"},
         "context_parallel must be such that 2 × context_parallel divides seq_len (2047) (load-balanced causal "
         "split), got 3"),
        ("activations", {"seq_len": "2048", "hidden": "12288", "heads": "96", "layers": "96",
                         "pipeline_parallel": "1000"}, "pipeline_parallel must be <= layers (96), got 1000"),
        ("activations", {"seq_len": "2048", "hidden": "12288", "heads": "96", "layers": "96", "tensor_parallel": "5"},
         "tensor_parallel must be a divisor of heads (96) and kv_heads (96), got 5"),
        ("memory", {"params": "7", "tensor_parallel": "8"},
         "params must be a multiple of tensor_parallel × pipeline_parallel = 8 (each device holds whole "
         "parameters), got 7"),
    ],
)
def test_the_commands_refuse_what_plan_refuses(command, inputs, message):
    """The issue's cases: traffic, activations and memory no longer print fractional elements or bytes."""
    with pytest.raises(CalcError) as info:
        evaluate(command, inputs)
    assert str(info.value) == message


def test_the_same_split_is_refused_by_plan_and_activations():
    """One rule: a context degree plan refuses, activations refuses too, each in its own parameter's name."""
    from calc.api import COMMANDS

    plan = {**COMMANDS["plan"].example, "seq_len": "8190", "context": "2", "data": "4", "sequence_parallel": "false"}
    with pytest.raises(CalcError) as by_plan:
        evaluate("plan", plan)
    with pytest.raises(CalcError) as by_activations:
        evaluate("activations", {"seq_len": "8190", "hidden": "4096", "heads": "32", "layers": "32",
                                 "tensor_parallel": "8", "context_parallel": "2"})
    assert (by_plan.value.param, by_activations.value.param) == ("context", "context_parallel")
    assert str(by_plan.value).replace("context", "C") == str(by_activations.value).replace("context_parallel", "C")
