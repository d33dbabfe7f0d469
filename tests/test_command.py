"""Tests for calc.command: every kind of text input is bounded, and the decided edge cases.

Speed is not asserted here (``make bench`` times the 1 MB answers); what is asserted is the
outcome: a CalcError naming the field, for a value far past any limit.
"""

from __future__ import annotations

import json
import math

import pytest

from calc import units
from calc.api import COMMANDS, check_finite, evaluate, evaluate_for_page
from calc.command import _NUMBER_RE, format_result, parse_param
from calc.errors import CalcError

MB = 1_000_000


def one_param_per_kind() -> dict[str, tuple[str, str]]:
    """kind -> (command, parameter): the first parameter of each kind across every command."""
    found: dict[str, tuple[str, str]] = {}
    for cmd in COMMANDS.values():
        for p in cmd.params:
            found.setdefault(p.kind, (cmd.name, p.name))
    return found


KINDS = one_param_per_kind()
#: 1 MB values shaped to make a backtracking parser work hard: digits with a bad tail, a number and a
#: long run of blanks, an exponent of a million digits, and plain text.
HUGE = {"digits": "9" * MB + "x", "blanks": "1" + " " * MB + "x", "exponent": "1e" + "9" * MB,
        "sizes": "8," * (MB // 2), "text": "a" * MB}


def test_every_kind_is_covered():
    """The kinds of this test are all the kinds the commands use (a new kind must be added here)."""
    assert set(KINDS) == {"count", "number", "fraction", "size", "bandwidth", "time", "flop_rate", "sizes",
                          "choice", "flag", "spec", "counts"}


@pytest.mark.parametrize("shape", HUGE)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_1_mb_value_of_every_kind_is_a_field_error(kind, shape):
    """1 MB in any field: a CalcError naming that field (through evaluate and through the page's entry)."""
    command, name = KINDS[kind]
    raw = {**COMMANDS[command].example, name: HUGE[shape]}
    with pytest.raises(CalcError) as info:
        evaluate(command, raw)
    assert info.value.param == name
    assert len(str(info.value)) < 400 and "\n" not in str(info.value)
    answer = json.loads(evaluate_for_page(command, json.dumps(raw)))
    assert answer == {"ok": False, "param": name, "message": str(info.value)}


def test_an_unknown_name_of_1_mb_is_shortened_and_escaped():
    """An unknown input name is the reader's text: the message shows it short, on one line."""
    name = "\x1b[31m\n" + "k" * MB
    with pytest.raises(CalcError) as info:
        evaluate("batch", {"micro_batch": "8", name: "1"})
    text = str(info.value)
    assert text.startswith("'\\x1b[31m\\nkkk") and "...' must be a parameter of batch" in text
    assert text.isprintable() and len(text) < 400


@pytest.mark.parametrize("pattern", [_NUMBER_RE, units._SIZE_RE, units._RATE_RE, units._TIME_RE, units._FLOP_RE])
def test_the_number_grammar_is_linear(pattern):
    """Matched without the length cap, 20,000 digits with a bad tail fail at once (a backtracking
    grammar took 31-57 s for 16,000; a regression shows at the top of --durations)."""
    for text in ("9" * 20_000 + "x", "9" * 10_000 + "." + "9" * 10_000 + "x", "1e" + "9" * 20_000 + "x"):
        assert pattern.fullmatch(text) is None


# ---------------------------------------------------------------- decided behaviours (README, "Input rules")


@pytest.mark.parametrize("text", ["８", "１２", "٣", "߂", "²", "1٣"])
def test_only_ascii_digits_are_numbers(text):
    """Full-width and other scripts' digits are refused, though Python's float() reads them."""
    with pytest.raises(CalcError, match="^micro_batch must be a whole number >= 1"):
        evaluate("batch", {"micro_batch": text, "data_parallel": "1"})
    with pytest.raises(CalcError, match="^payload must be a size"):
        evaluate("allreduce", {"payload": text + "GB"})


def test_a_unit_may_follow_a_no_break_space():
    """Blanks between number and unit may be any white space (a copied "8 GB" holds a no-break space)."""
    assert evaluate("allreduce", {"payload": "8\u00a0GB"})["payload_bytes"] == 8e9


@pytest.mark.parametrize("text", ["-0", "-0.0", "-0e5", "-0B"])
def test_minus_zero_is_zero(text):
    """-0 is read as 0, so nothing prints -0.0."""
    out = evaluate("allreduce", {"startup": text.rstrip("B"), "payload": text})
    assert json.dumps(out["payload_bytes"]) == "0.0" and json.dumps(out["latency_s"]) == "0.0"


@pytest.mark.parametrize("value", [1, 0, 1.0, 0.0])
def test_a_number_is_not_a_flag(value):
    """A flag takes true or false (a JSON boolean, or the text true/false, 1/0, on/off, yes/no); the
    JSON numbers 0 and 1 are refused, as a flag is not a count either."""
    flag = COMMANDS["activations"].param("gated_mlp")
    with pytest.raises(CalcError, match="^gated_mlp must be true or false"):
        parse_param(flag, value)


@pytest.mark.parametrize("text, expected", [(True, True), ("true", True), ("1", True), ("on", True), ("yes", True),
                                            (False, False), ("false", False), ("0", False), ("off", False),
                                            ("no", False)])
def test_a_flag_accepts_true_false_1_0_on_off_yes_no(text, expected):
    """The texts a flag takes, as a field, a link or a CLI value gives them."""
    assert parse_param(COMMANDS["activations"].param("gated_mlp"), text) is expected


@pytest.mark.parametrize("kind, text", [("size", "1e-300B"), ("bandwidth", "1e-300GB/s"),
                                        ("flop_rate", "5e-324FLOP/s")])
def test_denormal_inputs_are_refused_by_name(kind, text):
    """A rate so small that dividing by it overflows is refused, naming it (issue 11, 5.4)."""
    command, name = {"size": ("capacity", "device_memory"), "bandwidth": ("allreduce", "bandwidth"),
                     "flop_rate": ("train-time", "flops_per_gpu")}[kind]
    with pytest.raises(CalcError) as info:
        evaluate(command, {**COMMANDS[command].example, name: text})
    assert info.value.param == name


def test_a_non_finite_result_is_refused():
    """The last guard: inputs within every limit whose result is not finite are refused, never printed."""
    # Every input's floor keeps today's results finite, so the guard is tried on a result that is not.
    with pytest.raises(CalcError, match=r"^inputs must be values that give finite results .*got 'plan.step = inf'"):
        check_finite({"plan": {"step": math.inf, "stages": [1.0]}})
    with pytest.raises(CalcError, match=r"got 'rows\[1\] = nan'"):
        check_finite({"rows": [1.0, math.nan]})
    check_finite({"huge": 8e31, "rows": [{"a": 1.0}]})


def test_every_declared_unit_and_kind_has_its_function():
    """Every result's unit formats and every parameter's kind parses: the registries hold all the commands use."""
    from calc.command import KINDS, UNITS

    for cmd in COMMANDS.values():
        assert {p.kind for p in cmd.params} <= set(KINDS), cmd.name
        assert {r.unit for r in cmd.results} <= set(UNITS), cmd.name
    samples = {"fits": True, "json": {"a": [1]}, "text": "x"}
    for unit in UNITS:
        text = format_result(unit, samples.get(unit, 1234.5))
        assert text and "\n" not in text, unit
    assert format_result("fits", False) == "does not fit"


def test_an_unknown_unit_or_kind_is_refused_when_declared():
    """A typo in a declaration fails at import, not as a silent str(value) on the page."""
    from calc.command import Param, Result

    with pytest.raises(ValueError, match="unknown unit 'byte'"):
        Result("x", "X", "byte")
    with pytest.raises(ValueError, match="unknown kind 'sise'"):
        Param("x", "sise", "X")
    with pytest.raises(KeyError):
        format_result("byte", 1.0)
