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
    "Param", "Result", "Command", "COMMANDS", "command", "run", "evaluate", "evaluate_for_page", "page_values",
    "check_finite",
    "error_json",
    "parse_param", "format_result", "format_field", "unit_of_field",
]

#: Every command, by its CLI name.
COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        batch.BATCH, batch.SEQUENCES, collectives.ALLREDUCE, training.MEMORY, training.ACTIVATIONS, training.FLOPS,
        training.TRAIN_TIME, training.BUBBLE, training.SCHEDULE, *collectives.GATHER_LIKE,
        collectives.ALLREDUCE_ALGORITHMS, collectives.TWO_LEVEL, plan.PLAN, plan.SEARCH, scaling.SCALING,
        scaling.CAPACITY, collectives.TRAFFIC, plan.DEVICE_MEMORY, plan.HARDWARE, validate.VALIDATE, export.EXPORT,
        compare.COMPARE, inference.INFER, inference.INFER_SEARCH,
    )
}


def command(name: object) -> Command:
    """The command called ``name``, or a CalcError listing them."""
    cmd = COMMANDS.get(name) if isinstance(name, str) else None
    if cmd is None:
        raise CalcError("command", "one of " + ", ".join(COMMANDS), name)
    return cmd


def run(name: str, raw: Mapping[str, object], page: bool = False) -> tuple[dict, dict]:
    """Parse ``raw`` once and compute: ``(values, result)``, the parsed inputs beside the result.

    The page's views and charts draw from ``values`` (:mod:`calc.page`), so nothing is parsed twice.
    A result holding NaN or an infinity is refused (:func:`check_finite`). With ``page`` the result is the page's:
    computed by the command's ``page_compute`` where it has one (it leaves out what only the CLI prints: the plan's
    listing of every rank), and not checked whole, since the page checks what it sends (:func:`page_values`,
    :func:`calc.page.page_request`): encoding the whole result only to check it took a fifth of the atlas's time
    per input (issue 15).
    """
    cmd = command(name)
    values = cmd.parse(raw)
    if page:
        return values, (cmd.page_compute or cmd.compute)(values)
    result = cmd.compute(values)
    check_finite(result)
    return values, result


def evaluate(name: str, raw: Mapping[str, object]) -> dict:
    """Parse ``raw`` by the command's parameters, compute, return the JSON-able result.

    Blank or missing optional values take their defaults; unknown names are errors.

    >>> evaluate("batch", {"micro_batch": "8", "accumulation": "16", "data_parallel": "64"})["global_batch"]
    8192
    """
    return run(name, raw)[1]


def check_finite(result: dict) -> None:
    """The last guard: a result holding NaN or an infinity is refused, so none is ever printed.

    The parameters' limits and floors keep every result finite (:mod:`calc.check`; an efficiency or
    a rate near 0 is refused by name); this catches whatever a new formula lets through.
    """
    try:  # the C encoder finds any NaN or infinity far faster than a walk in Python
        jsontext.dumps(result)
        return
    except (ValueError, TypeError):
        pass  # a value that is not finite (or not JSON): the walk below names it
    stack: list[tuple[str, object]] = list(result.items())  # something is not: find where, to name it
    while stack:
        key, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise CalcError("inputs", "values that give finite results (is a rate, a bandwidth or an efficiency "
                            "nearly 0?)", f"{key} = {value!r}")
        if isinstance(value, dict):
            stack.extend((f"{key}.{k}", v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{key}[{i}]", v) for i, v in enumerate(value))


def page_values(cmd: Command, result: dict) -> dict:
    """The page's success answer for ``result``: ``{"ok": true, "values": ..., "text": ...}``.

    A value shown that is not finite is refused by name (:func:`check_finite`), checked or not before.

    ``values[key]`` is the JSON text the CLI prints for that key; ``text[key]`` the formatted value
    (blank for a nested result, which the page's views draw instead of showing as text).
    """
    try:
        values = {r.key: jsontext.dumps(result[r.key]) for r in cmd.results}
    except ValueError:  # NaN or an infinity among the values shown: named, as run's check names it
        check_finite({r.key: result[r.key] for r in cmd.results})
        raise
    return {"ok": True, "values": values,
            "text": {r.key: "" if r.unit == "json" else format_result(r.unit, result[r.key]) for r in cmd.results}}


def evaluate_for_page(name: str, raw_json: str) -> str:
    """JSON inputs in, the page's answer (:func:`page_values`) or failure out, never an exception.

    Failure: ``{"ok": false, "param": name, "message": text}``. Always strict JSON (no NaN, no
    Infinity). The worker's full answer, with charts and views, is :func:`calc.page.page_request`.
    """
    try:
        raw = jsontext.loads(raw_json, "inputs")
        if not isinstance(raw, dict):
            raise CalcError("inputs", "a JSON object", raw_json)
        _, result = run(name, raw)
        return jsontext.dumps(page_values(COMMANDS[name], result))
    except CalcError as e:
        return error_json(e)


def error_json(e: CalcError) -> str:
    """The page's failure answer: ``{"ok": false, "param": name, "message": one line}``."""
    return jsontext.dumps({"ok": False, "param": e.param, "message": str(e)})
