"""Every command, shared by the CLI, the build hooks and the page.

:func:`evaluate` takes raw values, as typed in a terminal, a form field or a
URL, parses them by kind, computes, and returns the JSON-able dict that
``python -m calc <command> --json`` prints. Because the CLI, the hooks and the
worker in the page all go through :func:`evaluate`, a number on the page is the
number the CLI prints. What a command is lives in :mod:`calc.command`; the
commands themselves, one module per concept, in :mod:`calc.commands`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .command import Command, Param, Result, format_field, format_result, is_blank, parse_param, unit_of_field
from .commands import batch, collectives, compare, export, inference, plan, scaling, training, validate
from .errors import CalcError

__all__ = [
    "Param", "Result", "Command", "COMMANDS", "evaluate", "evaluate_for_page",
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
    values = cmd.parse(raw)
    return cmd.compute(values)


def evaluate_for_page(command: str, raw_json: str) -> str:
    """What the page's worker calls: JSON in, JSON out, never an exception.

    Success: ``{"ok": true, "values": {key: <json text of the value>}, "text": {key: formatted}}``;
    the JSON text is exactly what the CLI prints for that key. Failure:
    ``{"ok": false, "param": name, "message": text}``.
    """
    try:
        raw = json.loads(raw_json)
        if not isinstance(raw, dict):
            raise CalcError("inputs", "a JSON object", raw_json)
        result = evaluate(command, raw)
    except CalcError as e:
        return json.dumps({"ok": False, "param": e.param, "message": str(e)})
    except ValueError as e:  # malformed JSON from the page
        return json.dumps({"ok": False, "param": "inputs", "message": f"inputs must be JSON: {e}"})
    cmd = COMMANDS[command]
    return json.dumps(
        {
            "ok": True,
            "values": {r.key: json.dumps(result[r.key]) for r in cmd.results},
            # nested results are drawn by the page's views, not shown as text: no second copy of them
            "text": {r.key: "" if r.unit == "json" else format_result(r.unit, result[r.key]) for r in cmd.results},
        }
    )
