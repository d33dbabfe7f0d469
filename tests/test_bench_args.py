"""``make bench``'s own arguments (tests/bench.py): the CPU slowdown of its Lighthouse budgets."""

import argparse

import pytest

from tests.bench import DEFAULT_SLOWDOWN, _slowdown, main


def test_slowdown_takes_a_multiplier_or_calibrated():
    assert _slowdown("calibrated") == "calibrated"
    assert _slowdown("7.5") == 7.5
    assert _slowdown(str(DEFAULT_SLOWDOWN)) == 4.0


@pytest.mark.parametrize("text", ["0.5", "21", "nan", "x", ""])
def test_slowdown_refuses_what_lighthouse_would_not_mean(text):
    with pytest.raises(argparse.ArgumentTypeError, match="'calibrated' or a number from 1 to 20"):
        _slowdown(text)


def test_a_bad_slowdown_stops_the_bench_with_status_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--only", "input", "--cpu-slowdown", "0"])
    assert stop.value.code == 2
    assert "--cpu-slowdown: must be 'calibrated' or a number from 1 to 20, got '0'" in capsys.readouterr().err
