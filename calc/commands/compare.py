"""``compare``: two plans of one model side by side (:mod:`calc.compare`).

Its two parameters are whole SPECs (kind ``spec``: the CLI reads them from ``A.json`` and
``B.json``); each is checked field by field as ``plan`` checks it, and an error names the
plan and the field (``B: parallel.tensor``).
"""

from __future__ import annotations

import json
from dataclasses import fields

from .. import compare as _compare
from .. import plan as _plan
from ..command import Command, Param, Result
from ..errors import CalcError
from ..model import Model
from ..spec import flatten, qualified
from .plan import _LLAMA3_8B, PLAN, _spec_hardware, _spec_model, _spec_parallel

#: Flat field → SPEC section, for every field of a plan's SPEC.
_SECTIONS = PLAN.spec_fields
#: What makes two plans plans of one model: the architecture, not the attention or element-wise kernels that run it.
_SAME_MODEL = tuple(f.name for f in fields(Model) if f.name not in ("attention", "kernels"))


def _side(name: str, spec: dict) -> tuple[dict, Model, _plan.Plan]:
    """One SPEC's parsed values, model and plan; an error names the side and the field (``a.model.kv_heads``)."""
    try:
        v = PLAN.parse(flatten(spec, _SECTIONS))
        m = _spec_model(v)
        p = _plan.plan(m, v["micro_batch"], v["global_batch"], _spec_hardware(v), _spec_parallel(v), v["precision"],
                       v["tokens"])
    except CalcError as e:
        field = qualified(e.param, _SECTIONS)
        raise CalcError(f"{name}.{field}" if field else name, e.rule, e.value) from None
    return v, m, p


def _compute_compare(v: dict) -> dict:
    va, ma, a = _side("a", v["a"])
    vb, mb, b = _side("b", v["b"])
    for f in _SAME_MODEL:
        if getattr(ma, f) != getattr(mb, f):
            raise CalcError(f"model.{f}", "the same in A and B (compare takes two plans of one model)",
                            (getattr(ma, f), getattr(mb, f)))
    names = {k: qualified(k, _SECTIONS) for k in _SECTIONS if k not in _SAME_MODEL}
    return _compare.compare(a, b, _compare.differing(va, vb, names)).as_dict()


def _llama3_8b(**parallel: object) -> str:
    """The example's SPEC text: Llama-3 8B on 64 H100s with ``parallel``."""
    model = {k: x for k, x in _LLAMA3_8B.items() if k not in ("micro_batch", "global_batch", "gpus", "profile")}
    spec = {"model": model, "batch": {"micro_batch": 1, "global_batch": 512},
            "hardware": {"profile": "h100-sxm5-80gb", "gpus": 64}, "parallel": parallel}
    return json.dumps(spec)


COMPARE = Command(
    name="compare",
    title="Two plans side by side",
    params=(
        Param("a", "spec", "Plan A (a SPEC.json)", required=True),
        Param("b", "spec", "Plan B (a SPEC.json of the same model)", required=True),
    ),
    results=(
        Result("faster", "Faster plan", "text"),
        Result("reason", "Why", "text"),
        Result("a_step_time_s", "Step time, A", "seconds"),
        Result("b_step_time_s", "Step time, B", "seconds"),
        Result("a_tokens_per_s", "Throughput, A", "tokens_per_s"),
        Result("b_tokens_per_s", "Throughput, B", "tokens_per_s"),
        Result("a_mfu", "MFU, A", "percent"),
        Result("b_mfu", "MFU, B", "percent"),
        Result("a_fits", "Memory, A", "fits"),
        Result("b_fits", "Memory, B", "fits"),
        Result("settings", "Inputs that differ", "json"),
        Result("step_time", "Step time by part (per step; change = B − A)", "json"),
        Result("memory", "Memory of the most loaded GPU by term (change = B − A)", "json"),
        Result("communications", "Communication per GPU per step", "json"),
    ),
    compute=_compute_compare,
    example={"a": _llama3_8b(data=8, tensor=8, zero=1, sequence_parallel=True),
             "b": _llama3_8b(data=16, tensor=4, zero=1, sequence_parallel=True, recompute="selective")},
)
