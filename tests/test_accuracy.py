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
                                         ("sweeps", "| Sweep | Published finding"),
                                         ("kinds", "| Kind of plan | Measured runs")])
def test_each_validation_table_starts_with_its_escaped_header(show, header):
    """Each table starts with its header (pipes inside cells escaped)."""
    assert render(f"<!-- calc:validation show={show} -->").strip().startswith(header.replace("|error|", "\\|error\\|"))


def test_unknown_show_fails_the_build():
    """An unknown view is a MarkerError naming the choices."""
    with pytest.raises(MarkerError, match="show must be one of chart, summary, runs, constants, bounds, rankings, sweeps, kinds"):
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


def test_kinds_give_each_kind_its_signed_range():
    """show=kinds: a row per kind of plan, its range written lowest to highest with a sign on a positive end."""
    from calc.validate import validate

    table = render("<!-- calc:validation show=kinds -->")
    kinds = validate(cross_validate=False, rank=False).kinds
    rows = [line for line in table.strip().splitlines()[2:]]
    assert len(rows) == len(kinds)
    for row, k in zip(rows, kinds):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == k.kind and cells[1] == str(k.runs)
        low, high = cells[3].split(" to ")
        assert float(low.rstrip(" %").replace("+", "")) == pytest.approx(100 * k.lowest_error, abs=0.06)
        assert high.startswith("+") == (k.highest_error > 0)


def test_the_planner_page_says_how_far_to_trust_its_times(built_site):
    """The planner's page shows the kinds' table and links to the accuracy page."""
    html = (built_site / "tools" / "planner" / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="how-far-to-trust-the-times"'):]
    assert "Kind of plan" in section and 'href="../accuracy/"' in section
