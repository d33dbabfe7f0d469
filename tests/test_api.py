"""Tests for calc.api: the command registry shared by the CLI, the hooks and the page."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.api import COMMANDS, evaluate, evaluate_for_page, format_result
from calc.errors import CalcError


def test_every_example_evaluates():
    """Each command's page defaults compute without error."""
    for cmd in COMMANDS.values():
        evaluate(cmd.name, cmd.example)


def test_every_result_key_is_produced():
    """Each declared result exists in what compute returns (the page shows every one)."""
    for cmd in COMMANDS.values():
        out = evaluate(cmd.name, cmd.example)
        assert {r.key for r in cmd.results} <= out.keys()


def test_batch_from_gpus():
    """DP is derived from GPUs / (TP × PP × CP) when gpus is given."""
    out = evaluate("batch", {"micro_batch": "4", "accumulation": "32", "gpus": "16", "tensor_parallel": "2", "pipeline_parallel": "2"})
    assert (out["data_parallel"], out["global_batch"], out["model_parallel"]) == (4, 512, 4)


def test_batch_gpus_and_dp_must_agree():
    """Giving both gpus and a data_parallel that disagrees is an error naming data_parallel."""
    with pytest.raises(CalcError) as info:
        evaluate("batch", {"micro_batch": "4", "gpus": "16", "tensor_parallel": "2", "data_parallel": "4"})
    assert str(info.value) == (
        "data_parallel must be blank or gpus / (tensor_parallel × pipeline_parallel × context_parallel) = 8, got 4"
    )


def test_batch_needs_replicas():
    """Without data_parallel or gpus there is no replica count."""
    with pytest.raises(CalcError, match="^data_parallel must be given, or derived from gpus, got ''$"):
        evaluate("batch", {"micro_batch": "4"})


def test_batch_inverse_through_api():
    """target_global_batch derives the accumulation steps (B3: 1024 sequences, micro 2, DP 128 → 4)."""
    out = evaluate("batch", {"micro_batch": "2", "data_parallel": "128", "target_global_batch": "1024"})
    assert out["accumulation"] == 4 and out["global_batch"] == 1024
    with pytest.raises(CalcError, match="^accumulation must be blank or target_global_batch"):
        evaluate("batch", {"micro_batch": "2", "data_parallel": "128", "target_global_batch": "1024", "accumulation": "2"})


def test_batch_uneven_and_packing():
    """Uneven sizes and packing give the effective counts beside the nominal one."""
    out = evaluate(
        "batch",
        {"micro_batch": "8", "accumulation": "3", "data_parallel": "2", "microbatch_sizes": "8,8,5; 8,8,8",
         "examples_per_sequence": "2", "seq_len": "1024", "padding_fraction": "0.5"},
    )
    assert out["global_batch"] == 48
    assert out["effective_sequences"] == 45
    assert out["effective_examples"] == 90.0
    assert out["tokens_per_update"] == 48 * 1024
    assert out["real_tokens_per_update"] == 45 * 1024 * 0.5


@pytest.mark.parametrize(
    "sizes, message",
    [
        ("8,8,5", "microbatch_sizes must be one list per replica (2 replicas), got 1"),
        ("8,8;8,8", "microbatch_sizes must be 3 sizes per replica (the accumulation steps), got 2"),
        ("8,x;8,8", "microbatch_sizes must be microbatch sizes per replica such as 8,8,5;8,8,8, got '8,x;8,8'"),
    ],
)
def test_batch_uneven_errors(sizes, message):
    """Uneven sizes must match the replica and accumulation counts."""
    with pytest.raises(CalcError) as info:
        evaluate("batch", {"micro_batch": "8", "accumulation": "3", "data_parallel": "2", "microbatch_sizes": sizes})
    assert str(info.value) == message


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"micro_batch": ""}, "micro_batch must be given (it is required), got ''"),
        ({"micro_batch": "abc"}, "micro_batch must be a whole number >= 1, got 'abc'"),
        ({"micro_batch": "-1"}, "micro_batch must be a whole number >= 1, got -1"),
        ({"micro_batch": "0"}, "micro_batch must be a whole number >= 1, got 0"),
        ({"micro_batch": "2.5"}, "micro_batch must be a whole number >= 1, got 2.5"),
        ({"micro_batch": "1e309"}, "micro_batch must be a whole number >= 1, got inf"),
        ({"micro_batch": "NaN"}, "micro_batch must be a whole number >= 1, got 'NaN'"),
        ({"micro_batch": "9" * 100}, "micro_batch must be a whole number >= 1, got '9999999999999999999999999999999999999...'"),
        ({"micro_batch": "8", "frobnicate": "1"}, None),
    ],
)
def test_batch_field_errors(raw, message):
    """Bad text in a field names the field, the rule and the value as typed."""
    with pytest.raises(CalcError) as info:
        evaluate("batch", {"data_parallel": "1", **raw})
    if message:
        assert str(info.value) == message
    else:
        assert info.value.param == "frobnicate"


def test_an_unknown_command_is_refused_naming_the_known_ones():
    """An unknown command is a CalcError naming the known ones."""
    with pytest.raises(CalcError, match="^command must be one of batch, sequences, allreduce"):
        evaluate("nope", {})


def test_allreduce_units_in_text_fields():
    """Unit strings are accepted in size, bandwidth and time fields."""
    out = evaluate("allreduce", {"ranks": "8", "payload": "1e9", "bandwidth": "100GB/s", "startup": "5us"})
    assert out["time_s"] == pytest.approx(0.01757, rel=1e-9)


def test_evaluate_for_page_success_is_cli_json():
    """The page receives, per key, the JSON text the CLI prints, plus the formatted text."""
    cmd = COMMANDS["allreduce"]
    reply = json.loads(evaluate_for_page("allreduce", json.dumps(cmd.example)))
    full = evaluate("allreduce", cmd.example)
    assert reply["ok"] is True
    for r in cmd.results:
        assert reply["values"][r.key] == json.dumps(full[r.key])
        assert reply["text"][r.key] == format_result(r.unit, full[r.key])


@pytest.mark.parametrize("raw_json", ["{", "[]", '{"ranks": "0"}', '{"ranks": {"a": 1}}', "null"])
def test_evaluate_for_page_never_raises(raw_json):
    """Malformed or invalid inputs come back as {ok: false, param, message}."""
    reply = json.loads(evaluate_for_page("allreduce", raw_json))
    assert reply["ok"] is False and reply["param"] and reply["message"]


@settings(max_examples=200)
@given(st.dictionaries(st.sampled_from([p.name for p in COMMANDS["batch"].params]), st.text(max_size=12)))
def test_batch_fuzz_raises_only_calc_error(raw):
    """Any text in any field yields a result or a CalcError, never another exception."""
    try:
        evaluate("batch", raw)
    except CalcError:
        pass


@settings(max_examples=200)
@given(st.dictionaries(st.sampled_from(["ranks", "payload", "bandwidth", "startup"]), st.text(max_size=12)))
def test_allreduce_fuzz_raises_only_calc_error(raw):
    """Any text in any all-reduce field yields a result or a CalcError."""
    try:
        evaluate("allreduce", raw)
    except CalcError:
        pass
