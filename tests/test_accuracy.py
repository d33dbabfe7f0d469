"""hooks.accuracy: the validation markers render what calc.validate computes, and refuse what they do not know."""

import pytest

from hooks.accuracy import render_validation
from hooks.markers import MARKER_RE, MarkerError, parse


def render(text):
    return render_validation(parse(MARKER_RE.search(text)))


def test_chart_is_inline_svg_with_a_point_per_run():
    """show=chart: one SVG with a titled point for every run."""
    from calc.runs import RUNS

    html = render("<!-- calc:validation show=chart -->")
    assert html.count("<svg") == 1 and html.count("measured ") >= len(RUNS)


@pytest.mark.parametrize("show,header", [("summary", "| Runs | Count | Mean |error|"),
                                         ("runs", "| Run | GPUs | Measured step"),
                                         ("constants", "| Profiles | Constant"),
                                         ("bounds", "| Run | Predicted model FLOP/s per GPU"),
                                         ("rankings", "| Run | Published split"),
                                         ("sweeps", "| Sweep | Published finding")])
def test_each_validation_table_starts_with_its_escaped_header(show, header):
    """Each table starts with its header (pipes inside cells escaped)."""
    assert render(f"<!-- calc:validation show={show} -->").strip().startswith(header.replace("|error|", "\\|error\\|"))


def test_unknown_show_fails_the_build():
    """An unknown view is a MarkerError naming the choices."""
    with pytest.raises(MarkerError, match="show must be one of chart, summary, runs, constants, bounds, rankings, sweeps"):
        render("<!-- calc:validation show=pie -->")
