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
                                         ("constants", "| Profiles | Constant"),
                                         ("bounds", "| Run | Predicted model FLOP/s per GPU"),
                                         ("rankings", "| Run | Published split"),
                                         ("sweeps", "| Sweep | Published finding"),
                                         ("kinds", "| Kind of plan | Measured runs | Mean error"),
                                         ("recomputations", "| Recomputation | Measured runs | Mean error")])
def test_each_validation_table_starts_with_its_escaped_header(show, header):
    """Each table starts with its header (pipes inside cells escaped)."""
    assert render(f"<!-- calc:validation show={show} -->").strip().startswith(header.replace("|error|", "\\|error\\|"))


def test_unknown_show_fails_the_build():
    """An unknown view is a MarkerError naming the choices."""
    with pytest.raises(MarkerError, match="show must be one of chart, summary, runs, constants, bounds, rankings, sweeps, kinds, recomputations"):
        render("<!-- calc:validation show=pie -->")


def test_runs_are_one_folded_table_per_group_in_the_runs_order():
    """show=runs: a closed <details> per group, in the order the runs are listed, each summary giving the group's
    count and errors as the summary table has them, each table holding that group's runs and no other."""
    from calc.runs import GROUPS, RUNS

    html = render("<!-- calc:validation show=runs -->")
    folds = html.split('<details class="runs" markdown="1">')[1:]
    assert len(folds) == len(GROUPS)
    summary = render("<!-- calc:validation show=summary -->")
    for group, fold in zip(GROUPS, folds):
        head = fold[fold.index("<summary>") + 9:fold.index("</summary>")]
        runs = [r for r in RUNS if r.group == group]
        assert head.startswith(f"{group}: {len(runs)} run")
        row = next(line for line in summary.splitlines() if line.startswith(f"| {group} |"))
        mean, largest, worst = [c.strip() for c in row.split(" | ")[2:5]]
        assert f"mean \\|error\\| {mean}".replace("\\", "") in head and f"largest {largest} ({worst})" in head
        body = fold[:fold.index("</details>")]
        assert body.count("\n| ") - 2 == len(runs)  # header and rule, then one row per run
        assert all(f"| {r.name} |" in body for r in runs)


def test_every_run_is_on_its_own_page_folded_not_on_the_accuracy_page(built_site):
    """The longest table (every run's source and assumptions) is on /tools/runs/, each group in a closed <details>,
    which the browser neither styles nor lays out until the reader opens it; the accuracy page links there and
    carries none of its rows (issue 15: its weight before any interaction)."""
    from calc.runs import GROUPS, RUNS

    html = (built_site / "tools" / "runs" / "index.html").read_text(encoding="utf-8")
    assert html.count('<details class="runs">') == len(GROUPS) and "<details open" not in html
    first = html.index('<details class="runs">')
    folded = html[first:html.rindex("</details>")]
    assert all(folded.count(f"<td>{r.name}</td>") == 1 for r in RUNS)
    assert html[:first].count("<td>") == 0
    accuracy = (built_site / "tools" / "accuracy" / "index.html").read_text(encoding="utf-8")
    assert 'href="../runs/"' in accuracy
    assert "Source, and what was assumed" in html and "Source, and what was assumed" not in accuracy


@pytest.mark.parametrize("show,field", [("kinds", "kinds"), ("recomputations", "recomputations")])
def test_breakdowns_give_each_row_its_signed_mean_and_range(show, field):
    """show=kinds and show=recomputations: a row per kind, its mean error signed (a sign on a positive one), its
    range written lowest to highest with a sign on a positive end."""
    from calc.validate import validate

    table = render(f"<!-- calc:validation show={show} -->")
    kinds = getattr(validate(cross_validate=False, rank=False), field)
    rows = [line for line in table.strip().splitlines()[2:]]
    assert len(rows) == len(kinds) > 1
    for row, k in zip(rows, kinds):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == k.kind and cells[1] == str(k.runs)
        assert float(cells[2].rstrip(" %")) == pytest.approx(100 * k.mean_error, abs=0.06)
        assert cells[2].startswith("+") == (k.mean_error > 0)
        low, high = cells[4].split(" to ")
        assert float(low.rstrip(" %").replace("+", "")) == pytest.approx(100 * k.lowest_error, abs=0.06)
        assert high.startswith("+") == (k.highest_error > 0)


def test_the_planner_page_says_how_far_to_trust_its_times(built_site):
    """The planner's page shows the kinds' table and links to the accuracy page."""
    html = (built_site / "tools" / "planner" / "index.html").read_text(encoding="utf-8")
    section = html[html.index('id="how-far-to-trust-the-times"'):]
    assert "Kind of plan" in section and 'href="../accuracy/"' in section
