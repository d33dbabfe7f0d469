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


def test_the_table_of_every_run_is_folded_on_the_built_page(built_site):
    """The longest table (every run's source and assumptions, about half the page's elements) sits in a
    closed <details>, which the browser neither styles nor lays out until the reader opens it."""
    from calc.runs import RUNS

    html = (built_site / "tools" / "accuracy" / "index.html").read_text(encoding="utf-8")
    start = html.index('<details class="runs">')
    folded = html[start:html.index("</details>", start)]
    assert all(f"<td>{r.name}</td>" in folded for r in RUNS)
    assert html[:start].count("<td>") < folded.count("<td>")
