"""``export``: a plan as Megatron-LM, torchtitan or DeepSpeed take it (:mod:`calc.export`)."""

from __future__ import annotations

from .. import export as _export
from .. import plan as _plan
from ..command import Command, Param, Result
from .plan import _LLAMA3_8B, PLAN, _spec_hardware, _spec_model, _spec_parallel


def _compute_export(v: dict) -> dict:
    m = _spec_model(v)
    p = _plan.plan(m, v["micro_batch"], v["global_batch"], _spec_hardware(v), _spec_parallel(v), v["precision"],
                   v["tokens"])
    return _export.export(v["to"], p, m, v["precision"]).as_dict()


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
