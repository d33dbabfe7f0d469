"""The one function the page's worker calls: a request in JSON, the answer in JSON, never an exception.

Requests::

    {"op": "evaluate", "command": NAME, "inputs": {name: text, ...}, "fit": "wide" | "narrow", "drawn": [i, ...]}
        → what :func:`calc.api.page_values` gives, plus "chart" for allreduce
          (:func:`calc.views.allreduce_chart_view`: the ranks and the two panels drawn) and "view" for the tool pages
          (:data:`calc.views.PAGE_VIEWS`); "fit" (optional): the one atlas layout the
          page shows (:func:`calc.views.atlas_figures`; without it, both); "drawn" (optional): the
          indices of the view's figures the page draws now, the others named only (title,
          description, size: :data:`calc.views.NAMING_VIEWS`; without it, all drawn)
    {"op": "ring", "ranks": TEXT}
        → {"ok": true, "ring": ...} (:func:`calc.series.ring_view`)
    {"op": "launch", "inputs": {plan's name: text, ...}}
        → {"ok": true, "launch": {framework: {"ok": true, "text", "targets"} or
          {"ok": false, "param", "message"}}} (:func:`calc.commands.export.launches`: the text
          ``python -m calc export`` prints, or the line it prints after ``error:``)
    {"op": "compare", "pin": TEXT, "inputs": {plan's name: text, ...}}
        → ``compare``'s answer (:func:`calc.api.page_values`) for the pinned plan (A: the atlas's
          query string ``pin``, :func:`calc.views.pinned_inputs`) and the current one (B), plus
          "view" (:func:`calc.views.compare_view`)

A :class:`~calc.errors.CalcError` becomes ``{"ok": false, "param": ..., "message": ...}``
(:func:`calc.api.error_json`). The inputs are parsed once (:func:`calc.api.run`): the chart and
the view draw from the parsed values and the result, and the answer is serialised once, as strict
JSON (no NaN, no Infinity: :mod:`calc.jsontext`). What is sent is what is checked: a value that is
not finite, among those shown or in a view, is refused by name; the rest of the result is not
encoded at all.
"""

from __future__ import annotations

from . import jsontext
from .commands.export import launches
from . import series as _series
from . import views as _views
from .api import COMMANDS, check_finite, command, error_json, page_values, parse_param, run
from .errors import CalcError

__all__ = ["page_request"]


def _evaluate(request: dict) -> dict:
    cmd = command(request.get("command"))
    raw = _inputs(request)
    values, result = run(cmd.name, raw, page=True)  # what is sent is checked: page_values, _strict
    answer = page_values(cmd, result)
    if cmd.name == "allreduce":
        answer["chart"] = _views.allreduce_chart_view(values, result)
    if cmd.name in _views.PAGE_VIEWS:  # the tool pages' drawings and tables
        answer["view"] = _views.page_view(cmd.name, raw, values, result, _fit(request), _drawn(request))
    return answer


def _drawn(request: dict) -> frozenset[int] | None:
    drawn = request.get("drawn")
    if drawn is None:
        return None
    if (not isinstance(drawn, list) or len(drawn) > _views.MAX_FIGURES
            or not all(type(i) is int and 0 <= i < _views.MAX_FIGURES for i in drawn)):
        raise CalcError("drawn", f"a list of figure indices from 0 to {_views.MAX_FIGURES - 1} (the figures the page "
                                 "draws now)", drawn)
    return frozenset(drawn)


def _fit(request: dict) -> str | None:
    fit = request.get("fit")
    if fit is not None and fit not in _views.ATLAS_FITS:
        raise CalcError("fit", "wide or narrow (the atlas layout the page shows)", fit)
    return fit


def _inputs(request: dict) -> dict:
    raw = request.get("inputs")
    if not isinstance(raw, dict):
        raise CalcError("inputs", "a JSON object", raw)
    return raw


def _launch(request: dict) -> dict:
    values = COMMANDS["plan"].parse(_inputs(request))
    return {"ok": True, "launch": launches(values)}


def _compare(request: dict) -> dict:
    a = _views.pinned_inputs(request.get("pin"))
    b = _inputs(request)
    _, result = run("compare", {"a": _views.plan_spec(a), "b": _views.plan_spec(b)}, page=True)
    answer = page_values(COMMANDS["compare"], result)
    answer["view"] = _views.compare_view(result)
    return answer


_OPS = {"evaluate": _evaluate, "launch": _launch, "compare": _compare}


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
        if op == "ring":
            ranks = parse_param(COMMANDS["allreduce"].param("ranks"), request.get("ranks"))
            return jsontext.dumps({"ok": True, "ring": _series.ring_json(_series.ring_view(ranks))})
        if not isinstance(op, str) or op not in _OPS:
            raise CalcError("op", "evaluate, ring, launch or compare", op)
        return _strict(_OPS[op](request))
    except CalcError as e:
        return error_json(e)


def _strict(answer: dict) -> str:
    """``answer`` as strict JSON; a NaN or an infinity in it (in a view, say) is refused by name, as
    :func:`calc.api.check_finite` refuses one in a result."""
    try:
        return jsontext.dumps(answer)
    except ValueError:
        check_finite(answer)  # raises CalcError naming the value
        raise
