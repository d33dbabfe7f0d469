"""The one function the page's worker calls: a request in JSON, the answer in JSON, never an exception.

Requests::

    {"op": "evaluate", "command": NAME, "inputs": {name: text, ...}}
        → what :func:`calc.api.page_values` gives, plus "chart" for allreduce
          (:func:`calc.series.allreduce_chart`) and "view" for the tool pages
          (:data:`calc.views.PAGE_VIEWS`)
    {"op": "ring", "ranks": TEXT}
        → {"ok": true, "ring": ...} (:func:`calc.series.ring_view`)

A :class:`~calc.errors.CalcError` becomes ``{"ok": false, "param": ..., "message": ...}``
(:func:`calc.api.error_json`). The inputs are parsed once (:func:`calc.api.run`): the chart and
the view draw from the parsed values and the result, and the answer is serialised once, as strict
JSON (no NaN, no Infinity: :mod:`calc.jsontext`).
"""

from __future__ import annotations

from . import jsontext
from . import series as _series
from . import views as _views
from .api import COMMANDS, command, error_json, page_values, parse_param, run
from .errors import CalcError

__all__ = ["page_request"]


def _evaluate(request: dict) -> dict:
    cmd = command(request.get("command"))
    raw = request.get("inputs")
    if not isinstance(raw, dict):
        raise CalcError("inputs", "a JSON object", raw)
    values, result = run(cmd.name, raw)
    answer = page_values(cmd, result)
    if cmd.name == "allreduce":
        answer["chart"] = _series.chart_json(_series.allreduce_chart(
            values["ranks"], values["payload"], values["bandwidth"], values["startup"]))
    if cmd.name in _views.PAGE_VIEWS:  # the tool pages' drawings and tables
        answer["view"] = _views.page_view(cmd.name, raw, values, result)
    return answer


def page_request(request_json: str) -> str:
    """Answer one request from the page (see the module docstring).

    >>> import json
    >>> json.loads(page_request('{"op": "ring", "ranks": "2"}'))["ring"]["held"][-1]
    [[2, 2], [2, 2]]
    >>> json.loads(page_request('{"op": "evaluate", "command": "batch", "inputs": {"micro_batch": "0"}}'))["message"]
    'micro_batch must be a whole number >= 1, got 0'
    """
    try:
        request = jsontext.loads(request_json, "request")
        if not isinstance(request, dict):
            raise CalcError("request", "a JSON object", request_json)
        op = request.get("op")
        if op == "evaluate":
            return jsontext.dumps(_evaluate(request))
        if op == "ring":
            ranks = parse_param(COMMANDS["allreduce"].param("ranks"), request.get("ranks"))
            return jsontext.dumps({"ok": True, "ring": _series.ring_json(_series.ring_view(ranks))})
        raise CalcError("op", "evaluate or ring", op)
    except CalcError as e:
        return error_json(e)
