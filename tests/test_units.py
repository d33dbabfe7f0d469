"""Tests for calc.units: the unit grammar, both prefix systems, and formatting."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.errors import CalcError
from calc.units import (
    format_bytes,
    format_count,
    format_rate,
    format_time,
    parse_bandwidth,
    parse_flop_rate,
    parse_size,
    parse_time,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0.0),
        ("4096", 4096.0),
        ("1B", 1.0),
        ("1kB", 1e3),
        ("1KB", 1e3),
        ("1MB", 1e6),
        ("1GB", 1e9),
        ("1TB", 1e12),
        ("1KiB", 1024.0),
        ("1MiB", 2.0**20),
        ("1GiB", 2.0**30),
        ("1TiB", 2.0**40),
        ("1.5 GiB", 1.5 * 2**30),
        ("  512MiB ", 512 * 2.0**20),
        ("2e9", 2e9),
        (".5GB", 5e8),
    ],
)
def test_parse_size_accepts_si_and_iec(text, expected):
    """SI prefixes are powers of 1000, IEC prefixes powers of 1024; bare numbers are bytes."""
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("100GB/s", 100e9),
        ("100 GB/s", 100e9),
        ("25GiB/s", 25 * 2.0**30),
        ("400Gbit/s", 50e9),
        ("400Gb/s", 50e9),
        ("400Gbps", 50e9),
        ("800bps", 100.0),
        ("1e9", 1e9),
        ("3.2TB/s", 3.2e12),
    ],
)
def test_parse_bandwidth_bytes_and_bits(text, expected):
    """Upper-case B is bytes, lower-case b or bit is bits (8 to the byte)."""
    assert parse_bandwidth(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "text, expected",
    [("5us", 5e-6), ("5µs", 5e-6), ("5μs", 5e-6), ("1.5ms", 1.5e-3), ("2ns", 2e-9), ("3s", 3.0), ("0", 0.0), ("2e-6", 2e-6)],
)
def test_times_accept_s_ms_us_ns_and_bare_seconds(text, expected):
    """Times accept s, ms, us, µs (micro sign or Greek mu) and ns; bare numbers are seconds."""
    assert parse_time(text) == expected


def test_parse_time_divides_exactly():
    """5us is exactly the float 5e-06, not 5 × 1e-6 rounded."""
    assert parse_time("5us") == 5e-06


def test_parse_flop_rate():
    """FLOP rates take SI prefixes."""
    assert parse_flop_rate("989TFLOP/s") == 989e12
    assert parse_flop_rate("312e12") == 312e12


@pytest.mark.parametrize(
    "func, text, message",
    [
        (parse_size, "abc", "payload must be a size such as 512MiB, 1GB or 4096 (bytes), got 'abc'"),
        (parse_size, "-1GB", "payload must be a number >= 0 bytes, got -1000000000.0"),
        (parse_size, "1e309", "payload must be a size such as 512MiB, 1GB or 4096 (bytes), got '1e309'"),
        (parse_size, "NaN", "payload must be a size such as 512MiB, 1GB or 4096 (bytes), got 'NaN'"),
        (parse_size, "1 GiBs", "payload must be a size such as 512MiB, 1GB or 4096 (bytes), got '1 GiBs'"),
        (parse_size, "1Gb", "payload must be a size such as 512MiB, 1GB or 4096 (bytes), got '1Gb'"),
        (parse_bandwidth, "0GB/s", "payload must be a number > 0 bytes/s, got 0.0"),
        (parse_bandwidth, "1Gibit/s", "payload must be a bandwidth such as 100GB/s, 400Gbit/s or 1e9 (bytes/s), got '1Gibit/s'"),
        (parse_time, "5 min", "payload must be a time such as 5us, 1.5ms or 0.002 (seconds), got '5 min'"),
        (parse_time, "-5us", "payload must be a number >= 0 s, got -5e-06"),
    ],
)
def test_parse_errors_name_parameter_rule_and_value(func, text, message):
    """A bad string raises CalcError naming the parameter, the rule and the value."""
    with pytest.raises(CalcError) as info:
        func(text, "payload")
    assert str(info.value) == message
    assert info.value.param == "payload"


@pytest.mark.parametrize("value", [True, False, None, [1], float("nan"), float("inf"), -float("inf")])
def test_parse_size_rejects_non_numbers(value):
    """Bools, None, lists, NaN and infinities are rejected, not coerced."""
    with pytest.raises(CalcError):
        parse_size(value)


def test_size_upper_limit_both_sides():
    """1 EB is the documented largest size; one more byte-scale step is rejected."""
    assert parse_size("1EB") == 1e18
    with pytest.raises(CalcError, match=r"size must be a number <= 1e\+18 bytes"):
        parse_size("2EB")


@pytest.mark.parametrize(
    "n, si, iec",
    [(0, "0 B", "0 B"), (512, "512 B", "512 B"), (1e9, "1 GB", "953.7 MiB"), (2**30, "1.074 GB", "1 GiB"), (8e9, "8 GB", "7.451 GiB")],
)
def test_format_bytes_labels_system(n, si, iec):
    """GB (1e9) and GiB (2^30) are never confused."""
    assert format_bytes(n) == si
    assert format_bytes(n, "iec") == iec


def test_format_time_units():
    """Durations pick a unit that keeps the number readable."""
    assert format_time(0.01757) == "17.57 ms"
    assert format_time(5e-6) == "5 µs"
    assert format_time(3e-9) == "3 ns"
    assert format_time(1.0) == "1 s"
    assert format_time(600.0) == "10 min"
    assert format_time(3 * 86400.0) == "3 days"


def test_format_rate_and_count():
    """Rates are bytes per second; counts get thousands separators and a unit word."""
    assert format_rate(97.1e9) == "97.1 GB/s"
    assert format_count(8192, "examples") == "8,192 examples"


@given(st.floats(min_value=0, max_value=1e18, allow_nan=False))
def test_size_round_trip_of_bare_numbers(x):
    """Any bare number within limits parses to itself."""
    assert parse_size(repr(x)) == x


@given(st.floats(min_value=1e-3, max_value=1e17))
def test_format_bytes_reparses_within_rounding(x):
    """What format_bytes prints parses back to within its 4 significant digits."""
    text = format_bytes(x).replace(" ", "")
    assert math.isclose(parse_size(text), x, rel_tol=1e-3)
