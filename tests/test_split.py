"""Tests for calc.split: one divisibility rule, the same for traffic, activations, memory and plan."""

from __future__ import annotations

import pytest

from calc.api import evaluate
from calc.errors import CalcError
from calc.split import check_split


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(tensor=3, heads=32), "tensor_parallel must be a divisor of heads (32) that divides kv_heads (32) or "
                                   "is a multiple of it, got 3"),
        (dict(tensor=12, heads=48, kv_heads=8), "tensor_parallel must be a divisor of heads (48) that divides kv_heads "
                                                "(8) or is a multiple of it, got 12"),
        (dict(tensor=8, ffn_hidden=14340), "tensor_parallel must be a divisor of ffn_hidden (14340), got 8"),
        (dict(tensor=7, hidden=12288), "tensor_parallel must be a divisor of hidden (12288), got 7"),
        (dict(pipeline=97, layers=96), "pipeline_parallel must be <= layers (96), got 97"),
        (dict(context=3, seq_len=2047), "context_parallel must be such that 2 × context_parallel divides seq_len (2047) "
                                        "(load-balanced causal split), got 3"),
        (dict(context=2, seq_len=2050), "context_parallel must be such that 2 × context_parallel divides seq_len (2050) "
                                        "(load-balanced causal split), got 2"),
        (dict(tensor=8, sequence_parallel=True, seq_len=2052), "sequence_parallel must be false, or seq_len / "
                                                                "context_parallel (2052) must be a multiple of tensor_parallel (8), got True"),
        (dict(tensor=8, pipeline=1, params=7), "params must be a multiple of tensor_parallel × pipeline_parallel = 8 (each device "
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


def test_kv_heads_may_be_replicated_but_not_split_unevenly():
    """t a multiple of kv_heads replicates each KV head (Megatron-LM); t between two divisors is refused."""
    check_split(tensor=16, heads=32, kv_heads=8)
    with pytest.raises(CalcError, match="^tensor_parallel must be a divisor of heads"):
        check_split(tensor=12, heads=48, kv_heads=8)


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
         "tensor_parallel must be a divisor of heads (96) that divides kv_heads (96) or is a multiple of it, got 5"),
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

    plan = {**COMMANDS["plan"].example, "seq_len": "8190", "context_parallel": "2", "data_parallel": "4",
            "sequence_parallel": "false"}
    with pytest.raises(CalcError) as by_plan:
        evaluate("plan", plan)
    with pytest.raises(CalcError) as by_activations:
        evaluate("activations", {"seq_len": "8190", "hidden": "4096", "heads": "32", "layers": "32",
                                 "tensor_parallel": "8", "context_parallel": "2"})
    assert str(by_plan.value) == str(by_activations.value)
    assert by_plan.value.param == "context_parallel"
