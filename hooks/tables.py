"""Markers that put computed values and tables into prose.

``<!-- calc:value COMMAND show=KEY [format=text|raw] param=value ... -->``
    One result of ``python -m calc COMMAND``, formatted with its unit
    (``format=raw`` prints the JSON value).

``<!-- calc:table COMMAND vary=PARAM values=v1,v2,... columns=K1,K2 [param=value ...] -->``
    One row per value of ``PARAM``; the other parameters are fixed. Column
    headers are the results' labels.

Every number comes from :func:`calc.api.evaluate`, the function the CLI runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from calc.api import COMMANDS, Command, evaluate, format_result

from .markers import Marker, MarkerError


@dataclass(frozen=True, slots=True)
class Table:
    """A plain table, rendered to Markdown (tested without MkDocs)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[str, ...] = ()  #: per column "l" or "r"

    def as_markdown(self) -> str:
        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        align = self.align or ("l",) + ("r",) * (len(self.header) - 1)
        rule = ["---:" if a == "r" else "---" for a in align]
        lines = ["| " + " | ".join(cell(h) for h in self.header) + " |", "| " + " | ".join(rule) + " |"]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in self.rows]
        return "\n\n" + "\n".join(lines) + "\n\n"


def _command(marker: Marker) -> Command:
    if len(marker.words) != 1:
        raise MarkerError("needs exactly one command name, e.g. calc:value batch ...")
    cmd = COMMANDS.get(marker.words[0])
    if cmd is None:
        raise MarkerError(f"unknown command {marker.words[0]!r} (known: {', '.join(COMMANDS)})")
    return cmd


def _result(cmd: Command, key: str):
    for r in cmd.results:
        if r.key == key:
            return r
    raise MarkerError(f"{cmd.name} has no result {key!r} (known: {', '.join(r.key for r in cmd.results)})")


def _params(marker: Marker) -> dict[str, str]:
    """What is left of the options: the command's own parameters (consumed here)."""
    params = dict(marker.options)
    marker.options.clear()
    return params


def render_value(marker: Marker) -> str:
    cmd = _command(marker)
    key = marker.take("show")
    if key is None:
        raise MarkerError("needs show=RESULT_KEY")
    fmt = marker.take("format", "text")
    if fmt not in ("text", "raw"):
        raise MarkerError(f"format must be text or raw, got {fmt!r}")
    result = _result(cmd, key)
    value = evaluate(cmd.name, _params(marker))[key]
    if fmt == "raw":
        import json

        return json.dumps(value)
    return format_result(result.unit, value)


def build_table(cmd: Command, vary: str, values: list[str], columns: list[str], fixed: dict[str, str]) -> Table:
    """Evaluate ``cmd`` once per value of ``vary`` and tabulate the chosen result columns."""
    param = cmd.param(vary)
    results = [_result(cmd, c) for c in columns]
    rows = []
    for v in values:
        out = evaluate(cmd.name, {**fixed, vary: v})
        rows.append((v,) + tuple(format_result(r.unit, out[r.key]) for r in results))
    return Table((param.label,) + tuple(r.label for r in results), tuple(rows))


def render_table(marker: Marker) -> str:
    cmd = _command(marker)
    vary = marker.take("vary")
    values = marker.take("values")
    columns = marker.take("columns")
    if not (vary and values and columns):
        raise MarkerError("needs vary=PARAM values=a,b,... columns=KEY,KEY")
    return build_table(cmd, vary, values.split(","), columns.split(","), _params(marker)).as_markdown()


RENDERERS = {"value": render_value, "table": render_table}
