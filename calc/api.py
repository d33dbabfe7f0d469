"""Every command, shared by the CLI, the build hooks and the page.

:func:`evaluate` takes raw values, as typed in a terminal, a form field or a
URL, parses them by kind, computes, and returns the JSON-able dict that
``python -m calc <command> --json`` prints. Because the CLI, the hooks and the
worker in the page all go through :func:`evaluate`, a number on the page is the
number the CLI prints. What a command is lives in :mod:`calc.command`; the
commands themselves, one module per concept, in :mod:`calc.commands`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from . import jsontext
from .command import Command, Param, Result, format_field, format_result, is_blank, parse_param, unit_of_field
from .commands import batch, collectives, compare, export, inference, plan, scaling, training, validate
from .errors import CalcError

__all__ = [
    "Param", "Result", "Command", "COMMANDS", "evaluate", "evaluate_for_page", "error_json",
    "parse_param", "format_result", "format_field", "unit_of_field",
]

#: Every command, by its CLI name.
COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        batch.BATCH, collectives.ALLREDUCE, training.MEMORY, training.ACTIVATIONS, training.FLOPS,
        training.TRAIN_TIME, training.BUBBLE, training.SCHEDULE, *collectives.GATHER_LIKE,
        collectives.ALLREDUCE_ALGORITHMS, collectives.TWO_LEVEL, plan.PLAN, plan.SEARCH, scaling.SCALING,
        scaling.CAPACITY, collectives.TRAFFIC, plan.DEVICE_MEMORY, plan.HARDWARE, validate.VALIDATE, export.EXPORT,
        compare.COMPARE, inference.INFER, inference.INFER_SEARCH,
    )
}


def evaluate(command: str, raw: Mapping[str, object]) -> dict:
    """Parse ``raw`` by the command's parameters, compute, return the JSON-able result.

    Blank or missing optional values take their defaults; unknown names are errors.

    >>> evaluate("batch", {"micro_batch": "8", "accumulation": "16", "data_parallel": "64"})["global_batch"]
    8192
    """
    cmd = COMMANDS.get(command)
    if cmd is None:
        raise CalcError("command", "one of " + ", ".join(COMMANDS), command)
    result = cmd.compute(cmd.parse(raw))
    _check_finite(result)
    return result


def _check_finite(result: dict) -> None:
    """The last guard: a result holding NaN or an infinity is refused, so none is ever printed.

    The parameters' limits and floors keep every result finite (:mod:`calc.check`; an efficiency or
    a rate near 0 is refused by name); this catches whatever a new formula lets through.
    """
    stack: list[tuple[str, object]] = list(result.items())
    while stack:
        key, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise CalcError("inputs", "values that give finite results (is a rate, a bandwidth or an efficiency "
                            "nearly 0?)", f"{key} = {value!r}")
        if isinstance(value, dict):
            stack.extend((f"{key}.{k}", v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{key}[{i}]", v) for i, v in enumerate(value))


def evaluate_for_page(command: str, raw_json: str) -> str:
    """What the page's worker calls: JSON in, JSON out, never an exception.

    Success: ``{"ok": true, "values": {key: <json text of the value>}, "text": {key: formatted}}``;
    the JSON text is exactly what the CLI prints for that key. Failure:
    ``{"ok": false, "param": name, "message": text}``. Always strict JSON (no NaN, no Infinity).
    """
    try:
        raw = jsontext.loads(raw_json, "inputs")
        if not isinstance(raw, dict):
            raise CalcError("inputs", "a JSON object", raw_json)
        result = evaluate(command, raw)
        cmd = COMMANDS[command]
        return jsontext.dumps(
            {
                "ok": True,
                "values": {r.key: jsontext.dumps(result[r.key]) for r in cmd.results},
                # nested results are drawn by the page's views, not shown as text: no second copy of them
                "text": {r.key: "" if r.unit == "json" else format_result(r.unit, result[r.key])
                         for r in cmd.results},
            }
        )
    except CalcError as e:
        return error_json(e)


def error_json(e: CalcError) -> str:
    """The page's failure answer: ``{"ok": false, "param": name, "message": one line}``."""
    return jsontext.dumps({"ok": False, "param": e.param, "message": str(e)})
