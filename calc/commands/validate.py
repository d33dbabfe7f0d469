"""``validate``: the plan's step time against measured runs (:mod:`calc.validate`, :mod:`calc.runs`)."""

from __future__ import annotations

from dataclasses import asdict

from .. import validate as _validate
from ..command import Command, Param, Result


def _compute_validate(v: dict) -> dict:
    val = _validate.validate(cross_validate=v["cross_validate"], rank=v["rank"])
    runs = [{"name": r.name, "group": r.group, "gpus": r.gpus, "measured_step_s": r.measured_step_s,
             "predicted_step_s": r.predicted_step_s, "error": r.error, "fits": r.fits, "memory_gib": r.memory_gib,
             "micro_batch": r.micro_batch, "micro_batch_chosen": r.micro_batch_chosen, "kind": r.kind}
            for r in val.runs]
    summary = [asdict(g) for g in (val.reference, *val.groups, val.overall)]
    if v["cross_validate"]:
        summary += [asdict(val.cross_validated_reference), asdict(val.cross_validated)]
    sources = [{"name": r.name, "source": r.source, "measured": r.measured, "assumed": r.assumed} for r in val.runs]
    return {"summary": summary, "runs": runs, "constants": list(val.constants), "bounds": list(val.bounds),
            "rankings": list(val.rankings), "sweeps": list(val.sweeps), "sources": sources,
            "kinds": [asdict(k) for k in val.kinds], "recomputations": [asdict(k) for k in val.recomputations]}


VALIDATE = Command(
    name="validate",
    title="The planner against measured training runs",
    params=(Param("cross_validate", "flag", "Also fit the profiles' GEMM efficiencies on half the runs and report "
                  "the other half", default="true"),
            Param("rank", "flag", "Also rank the (tensor, pipeline) pair each Megatron-LM run chose among the "
                  "search's, and check the order of configurations measured side by side", default="true")),
    results=(
        Result("summary", "Step-time error, per group of runs (error = predicted / measured − 1)", "json"),
        Result("runs", "Every run", "json"),
        Result("constants", "Constants fitted on all runs, beside the profiles' values", "json"),
        Result("bounds", "Published ceilings", "json"),
        Result("rankings", "Where the search ranks the (tensor, pipeline) each run chose", "json"),
        Result("sweeps", "Configurations measured side by side: the predicted order against the published one",
               "json"),
        Result("sources", "Where each run is published, and what was assumed", "json"),
        Result("kinds", "Step-time error by kind of plan (how the weights are held, GPU family, model size), with "
               "the signed mean and the lowest and highest signed error", "json"),
        Result("recomputations", "Step-time error by what the runs recompute in the backward pass (none, selective, "
               "full on some layers, full), signed as in kinds", "json"),
    ),
    compute=_compute_validate,
    example={"cross_validate": "false", "rank": "false"},
)
