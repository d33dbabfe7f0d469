"""``export``: a plan as Megatron-LM, torchtitan or DeepSpeed take it (:mod:`calc.export`)."""

from __future__ import annotations

from .. import export as _export
from ..command import Command, Param, Result
from ..errors import CalcError
from ..spec import qualified
from .plan import _LLAMA3_8B, PLAN, planned


def _compute_export(v: dict) -> dict:
    m, p = planned(v, ranks=False)
    return _export.export(v["to"], p, m, v["precision"]).as_dict()


def launches(v: dict) -> dict[str, dict]:
    """The plan of ``v`` (a ``plan``'s parsed inputs) for every framework, planned once (the launch panels).

    Each framework's entry is ``{"ok": true, "text", "targets"}`` — ``text`` exactly what
    ``python -m calc export SPEC.json --to NAME`` prints — or ``{"ok": false, "param", "message"}``:
    the one line the CLI prints after ``error:`` saying why that framework cannot run the plan.
    """
    m, p = planned(v, ranks=False)
    out: dict[str, dict] = {}
    for name in _export.FRAMEWORKS:
        try:
            launch = _export.export(name, p, m, v["precision"])
        except CalcError as e:
            e.param = qualified(e.param, PLAN.spec_fields)  # as the CLI names it
            out[name] = {"ok": False, "param": e.param, "message": str(e)}
        else:
            out[name] = {"ok": True, "text": launch.text, "targets": list(launch.targets)}
    return out


EXPORT = Command(
    name="export",
    title="Launch settings for a framework",
    params=PLAN.params + (
        Param("to", "choice", "Framework (the version each targets is in the output)", required=True,
              choices=_export.FRAMEWORKS),
    ),
    results=(
        Result("text", "Launch settings", "text"),
        Result("targets", "Framework versions written for", "json"),
        Result("arguments", "Command-line arguments, one token each", "json"),
        Result("config", "Config file", "json"),
        Result("config_file", "Config file name", "text"),
        Result("framework", "Framework", "text"),
    ),
    compute=_compute_export,
    example={**PLAN.example, "to": "megatron"},
    render=lambda result: result["text"],
)
