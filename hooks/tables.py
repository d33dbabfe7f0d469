"""Markers that put computed values and tables into prose.

``<!-- calc:value COMMAND show=KEY [format=text|raw] [inputs=example] param=value ... -->``
    One result of ``python -m calc COMMAND``, formatted with its unit
    (``format=raw`` prints the JSON value). ``KEY`` may reach into a nested
    result (``memory_per_device.total_bytes``); the unit then comes from the
    field name's suffix (``_bytes``, ``_s``, ``_bytes_per_s``), the project's
    naming rule. ``inputs=example`` starts from the command's page example.

``<!-- calc:table COMMAND vary=PARAM values=v1,v2,... columns=K1,K2 [param=value ...] -->``
    One row per value of ``PARAM``; the other parameters are fixed. Column
    headers are the results' labels.

Every number comes from :func:`calc.api.evaluate`, the function the CLI runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from calc.api import Command, evaluate, format_result, unit_of_field

from . import arguments
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


def _result(cmd: Command, key: str):
    for r in cmd.results:
        if r.key == key:
            return r
    raise MarkerError(f"{cmd.name} has no result {key!r} (known: {', '.join(r.key for r in cmd.results)})")


def _nested(cmd: Command, key: str, out: dict) -> tuple[str, object]:
    """The unit and value of ``a.b.c`` inside a result (unit from the last name's suffix)."""
    first, *rest = key.split(".")
    value = out[_result(cmd, first).key]
    for name in rest:
        if not isinstance(value, dict) or name not in value:
            raise MarkerError(f"{cmd.name} result {first!r} has no field {key!r}")
        value = value[name]
    unit = unit_of_field(rest[-1])
    return ("count" if unit == "text" else unit), value


def render_value(marker: Marker) -> str:
    """``calc:value``: one result of the command, formatted with its unit (or its JSON text)."""
    cmd = arguments.command(marker)
    key = marker.take("show")
    if key is None:
        raise MarkerError("needs show=RESULT_KEY")
    fmt = marker.take("format", "text")
    if fmt not in ("text", "raw"):
        raise MarkerError(f"format must be text or raw, got {fmt!r}")
    out = evaluate(cmd.name, arguments.inputs(marker, cmd))
    unit, value = _cell(cmd, key, out)
    if fmt == "raw":
        return json.dumps(value)
    return format_result(unit, value)


def build_cases(cmd, vary: list[str], cases: list[list[str]], columns: list[str], fixed: dict[str, str]) -> Table:
    """Evaluate ``cmd`` once per case; each case gives one value per name in ``vary``."""
    params = [cmd.param(name) for name in vary]
    labels = [_label(cmd, c) for c in columns]
    rows = []
    for case in cases:
        if len(case) != len(vary):
            raise MarkerError(f"case {','.join(case)!r} has {len(case)} values for {len(vary)} parameters")
        out = evaluate(cmd.name, {**fixed, **dict(zip(vary, case))})
        rows.append(tuple(case) + tuple(format_result(*_cell(cmd, c, out)) for c in columns))
    return Table(tuple(p.label for p in params) + tuple(labels), tuple(rows))


def _label(cmd: Command, key: str) -> str:
    """A column's header: the result's label, and for a nested key the field's name after it."""
    first, *rest = key.split(".")
    label = _result(cmd, first).label
    return label + "".join(", " + name.removesuffix("_bytes").removesuffix("_s").replace("_", " ") for name in rest)


def _cell(cmd: Command, key: str, out: dict) -> tuple[str, object]:
    """(unit, value) of a column: a result, or a field inside one (:func:`_nested`)."""
    if "." in key:
        return _nested(cmd, key, out)
    r = _result(cmd, key)
    return r.unit, out[r.key]


def build_table(cmd: Command, vary: str, values: list[str], columns: list[str], fixed: dict[str, str]) -> Table:
    """One row per value of the single parameter ``vary`` (a one-parameter :func:`build_cases`)."""
    return build_cases(cmd, [vary], [[v] for v in values], columns, fixed)


def render_table(marker: Marker) -> str:
    """``calc:table``: one row per value of one parameter."""
    cmd = arguments.command(marker)
    vary = marker.take("vary")
    values = marker.take("values")
    columns = marker.take("columns")
    if not (vary and values and columns):
        raise MarkerError("needs vary=PARAM values=a,b,... columns=KEY,KEY")
    return build_table(cmd, vary, values.split(","), columns.split(","), arguments.inputs(marker, cmd)).as_markdown()


RENDERERS = {"value": render_value, "table": render_table}
