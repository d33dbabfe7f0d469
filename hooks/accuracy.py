"""The planner's accuracy page: what ``python -m calc validate`` prints, drawn and tabulated at build time.

``<!-- calc:validation show=chart|summary|runs|constants|bounds|rankings|sweeps|kinds|recomputations -->``
    ``chart``: predicted against measured step time (:func:`calc.diagram.accuracy_chart`) as inline
    SVG; ``summary``: the error per group of runs, overall and cross-validated; ``runs``: every run
    with its source and what was assumed; ``constants``: the fitted constants beside the profiles';
    ``bounds``: published ceilings; ``rankings``: where the search ranks each Megatron-LM run's (t, p);
    ``sweeps``: configurations measured side by side, the predicted order against the published one;
    ``kinds``: the error by kind of plan (:func:`calc.validate.run_kind`), signed, for the planner's page;
    ``recomputations``: the same by what the runs recompute (:func:`calc.validate.run_recomputation`).

Every figure comes from :func:`calc.api.evaluate` (``validate``), computed once per build: this
module is imported afresh for every build (``hooks/entry.py``), so the cache lives one build.
"""

from __future__ import annotations

from html import escape

from calc.api import evaluate, format_result
from calc.diagram import accuracy_chart
from calc.units import format_flops, format_time

from . import arguments, templates
from .markers import Marker, MarkerError
from .tables import Table
from .svg import svg

__all__ = ["RENDERERS", "render_validation"]

_result: dict = {}


def _validation() -> dict:
    if not _result:
        _result.update(evaluate("validate", {"cross_validate": "true", "rank": "true"}))
    return _result


def _pct(x: float) -> str:
    return format_result("percent", x)


def _signed(x: float) -> str:
    """A signed error: a plus sign on a positive one, so a range reads as a range."""
    return ("+" if x > 0 else "") + _pct(x)


def _summary(v: dict) -> Table:
    rows = tuple((g["group"], str(g["runs"]), _pct(g["mean_abs_error"]), _pct(g["max_abs_error"]), g["worst"],
                  "yes" if g["all_fit"] else "no") for g in v["summary"])
    return Table(("Runs", "Count", "Mean |error|", "Largest |error|", "Largest on", "All fit in memory"), rows,
                 ("l", "r", "r", "r", "l", "l"))


def _runs(v: dict, group: str) -> Table:
    sources = {s["name"]: s for s in v["sources"]}
    rows = []
    for r in (r for r in v["runs"] if r["group"] == group):
        s = sources[r["name"]]
        rows.append((r["name"], str(r["gpus"]), format_time(r["measured_step_s"]),
                     format_time(r["predicted_step_s"]), _pct(r["error"]), "yes" if r["fits"] else "no",
                     f"{s['source']}. Printed: {s['measured']}. Assumed: {s['assumed']}"
                     + (f" (taken: {r['micro_batch']})" if r["micro_batch_chosen"] else "")))
    return Table(("Run", "GPUs", "Measured step", "Predicted step", "Error", "Fits", "Source, and what was assumed"),
                 tuple(rows), ("l", "r", "r", "r", "r", "l", "l"))


def _folded_runs(v: dict) -> str:
    """One closed ``<details>`` per group of runs, in the runs' order, its summary the group's count and error:
    the browser neither styles nor lays out a closed one's table until the reader opens it (issue 15)."""
    summaries = {g["group"]: g for g in v["summary"]}
    parts = []
    for group in dict.fromkeys(r["group"] for r in v["runs"]):
        g = summaries[group]
        count = f"{g['runs']} run" + ("s" if g["runs"] != 1 else "")
        summary = (f"{escape(group)}: {count}, mean |error| {_pct(g['mean_abs_error'])}, "
                   f"largest {_pct(g['max_abs_error'])} ({escape(g['worst'])})")
        parts.append(f'<details class="runs" markdown="1">\n<summary>{summary}</summary>\n'
                     f"{_runs(v, group).as_markdown()}</details>")
    return "\n\n" + "\n\n".join(parts) + "\n\n"


def _constants(v: dict) -> Table:
    rows = tuple((", ".join(c["profiles"]), c["constant"], f"{c['profile_value']:g}", f"{c['fitted_on_all_runs']:g}")
                 for c in v["constants"])
    return Table(("Profiles", "Constant", "In the profile", "Fitted on all runs"), rows, ("l", "l", "r", "r"))


def _bounds(v: dict) -> Table:
    rows = tuple((b["name"], format_flops(b["predicted_flops_per_gpu"], per_second=True),
                  format_flops(b["ceiling_flops_per_gpu"], per_second=True),
                  "yes" if b["below_ceiling"] else "no", b["source"]) for b in v["bounds"])
    return Table(("Run", "Predicted model FLOP/s per GPU", "Published ceiling", "Below it", "Source"), rows,
                 ("l", "r", "r", "l", "l"))


def _rankings(v: dict) -> Table:
    rows = tuple((r["name"], "t = {}, p = {}".format(*r["published"]), str(r["rank"]) if r["rank"] else "not found",
                  "; ".join("({}, {})".format(*pair) for pair in r["top"])) for r in v["rankings"])
    return Table(("Run", "Published split", "Rank of that (t, p)", "The search's five best (t, p)"), rows,
                 ("l", "l", "r", "l"))


def _sweeps(v: dict) -> Table:
    rows = []
    for s in v["sweeps"]:
        points = "; ".join(f"{p['label']}: {format_flops(p['predicted_flops_per_gpu'], per_second=True)}"
                           + ("" if p["fits"] else " (does not fit)") for p in s["points"])
        rows.append((s["name"], s["finding"], points, s["predicted_fastest"], "yes" if s["holds"] else "no",
                     s["source"]))
    return Table(("Sweep", "Published finding", "Predicted model FLOP/s per GPU", "Predicted fastest",
                  "Same order", "Source"), tuple(rows), ("l", "l", "l", "l", "l", "l"))


def _breakdown(first: str, summaries: list[dict]) -> Table:
    rows = tuple((k["kind"], str(k["runs"]), _signed(k["mean_error"]), _pct(k["mean_abs_error"]),
                  f"{_signed(k['lowest_error'])} to {_signed(k['highest_error'])}", k["worst"]) for k in summaries)
    return Table((first, "Measured runs", "Mean error", "Mean |error|", "Error, lowest to highest", "Largest on"),
                 rows, ("l", "r", "r", "r", "r", "l"))


def _kinds(v: dict) -> Table:
    return _breakdown("Kind of plan", v["kinds"])


def _recomputations(v: dict) -> Table:
    return _breakdown("Recomputation", v["recomputations"])


def render_validation(marker: Marker) -> str:
    arguments.no_command(marker, "show=chart|summary|runs|constants|bounds|rankings|sweeps|kinds|recomputations")
    show = marker.take("show")
    v = _validation()
    if show == "chart":
        groups = list(dict.fromkeys(r["group"] for r in v["runs"]))
        figure = templates.render("figure.html", svg=svg(accuracy_chart(v["runs"], groups), "accuracy-chart"))
        return f"\n\n{figure}\n\n"
    tables = {"summary": _summary, "runs": _folded_runs, "constants": _constants, "bounds": _bounds,
              "rankings": _rankings, "sweeps": _sweeps, "kinds": _kinds, "recomputations": _recomputations}
    if show not in tables:
        raise MarkerError(f"show must be one of chart, {', '.join(tables)}, got {show!r}")
    out = tables[show](v)
    return out if isinstance(out, str) else out.as_markdown()


RENDERERS = {"validation": render_validation}
