"""How well the plan's step time matches measured runs (:mod:`calc.runs`).

For every run: the predicted step time (``python -m calc plan`` on the run's SPEC),
the measured one, the error ``predicted/measured − 1``, and whether the plan fits in
memory. Then, per group and overall, the mean and the largest ``|error|``.

Rankings: for Megatron-LM's own runs, where ``search`` ranks the (tensor, pipeline) pair the
run chose, with its recomputation, sequence parallelism and ZeRO stage kept as published.
Sweeps (:data:`calc.runs.SWEEPS`): for configurations measured side by side, whether the
predicted order is the one the source states.

Kinds (:func:`run_kind`): the same errors by what a reader plans rather than by source: how the
weights are held (sharded by ZeRO-3 or FSDP; pipelined; otherwise replicated over data and tensor
parallelism), the GPU family, and the model's size, with the lowest and highest signed error of each,
so the planner's page can say how far runs like the reader's were from their prediction.

Cross-validation: the profiles' efficiency constants named in :data:`FITTED` are
fitted (a grid search minimising the mean ``|error|``) on one half of the runs and the
errors reported on the other half, then the halves swap (two folds; a run's half is
its position within its group, alternating). The constants fitted on all runs are
reported beside the profiles' own, so a reader sees how far the sourced figures are
from what the measurements prefer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import fsum
from types import MappingProxyType

from . import hardware as _hardware
from . import plan as _plan
from .runs import BOUNDS, GROUPS, REFERENCE_GROUPS, RUNS, SWEEPS, Run, Sweep
from .spec import flatten

__all__ = ["RunResult", "GroupSummary", "KindSummary", "Validation", "validate", "predict", "predict_run",
           "rank_published", "check_sweep", "run_kind", "run_recomputation", "FITTED", "GRID", "GRIDS",
           "RANKED_GROUPS", "SIZE_BANDS", "LAYOUTS", "RECOMPUTATIONS"]

#: The constants cross-validation fits, each a (profile family, field): the family's profiles share it.
FITTED = (("a100", "gemm_efficiency"), ("h100", "gemm_efficiency"), ("h100", "fp8_gemm_efficiency"))
#: The values tried for each fitted constant (by field).
GRID = tuple(round(0.60 + 0.02 * i, 2) for i in range(15))
GRIDS = MappingProxyType({"gemm_efficiency": GRID,
                          "fp8_gemm_efficiency": tuple(round(0.40 + 0.02 * i, 2) for i in range(15))})
_FAMILIES = {"a100": ("a100-sxm4-40gb", "a100-sxm4-80gb"), "h100": ("h100-sxm5-80gb", "h200-sxm-141gb")}
#: Model sizes a kind is split by: (upper bound in parameters, label); the last band has no bound.
SIZE_BANDS = ((10e9, "under 10B parameters"), (100e9, "10B to 100B parameters"),
              (float("inf"), "100B parameters and more"))
#: How a run holds its weights, in the order the kinds are listed.
LAYOUTS = ("weights sharded (ZeRO-3, FSDP)", "pipelined (pipeline with tensor and data parallelism)",
           "weights replicated (data and tensor parallelism, ZeRO 0-2)")
#: What a run recomputes in its backward pass (``parallel.recompute``, and ``recompute_layers`` when it is fewer
#: than the layers), in the order the recomputation table lists them.
RECOMPUTATIONS = ("none: every layer's activations kept", "selective: the attention core recomputed",
                  "full on some layers, the others kept", "full: every layer's forward recomputed")


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run against the model."""

    name: str
    group: str
    gpus: int
    measured_step_s: float
    predicted_step_s: float
    error: float  #: predicted / measured − 1
    fits: bool  #: the plan fits in the GPU's memory (with the reserve)
    memory_gib: float  #: the most loaded GPU's memory, reserve included (GiB)
    capacity_gib: float
    mfu: float
    micro_batch: int  #: sequences per microbatch in the predicted plan
    micro_batch_chosen: bool  #: the source does not publish it: the fastest that fits (:func:`predict_run`)
    source: str
    measured: str
    assumed: str
    kind: str  #: :func:`run_kind`


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """Errors of a set of runs."""

    group: str
    runs: int
    mean_abs_error: float
    max_abs_error: float
    worst: str  #: the run with the largest |error|
    all_fit: bool


@dataclass(frozen=True, slots=True)
class KindSummary:
    """Errors of the runs of one kind (:func:`run_kind`), signed: ``predicted / measured − 1`` (negative: the run
    took longer than predicted)."""

    kind: str
    runs: int
    mean_abs_error: float
    mean_error: float  #: signed: below 0, the model is on average faster than these runs were
    lowest_error: float
    highest_error: float
    worst: str  #: the run with the largest |error|


@dataclass(frozen=True, slots=True)
class Validation:
    """The whole comparison."""

    runs: tuple[RunResult, ...]
    groups: tuple[GroupSummary, ...]
    reference: GroupSummary  #: the reference groups together
    overall: GroupSummary
    cross_validated: GroupSummary  #: each run predicted with constants fitted on the other half
    cross_validated_reference: GroupSummary
    constants: tuple[dict, ...]  #: per fitted constant: the profile's value and the value fitted on all runs
    bounds: tuple[dict, ...]  #: published ceilings: the predicted figure and whether it stays below
    rankings: tuple[dict, ...]  #: where search ranks the (t, p) each run of RANKED_GROUPS chose
    sweeps: tuple[dict, ...]  #: per measured sweep: the predicted throughput of each point, and whether the order holds
    kinds: tuple[KindSummary, ...]  #: the runs' errors by :func:`run_kind`, in :data:`LAYOUTS` order
    recomputations: tuple[KindSummary, ...]  #: the runs' errors by :func:`run_recomputation`

    def as_dict(self) -> dict:
        from dataclasses import asdict
        return asdict(self)


def _values(spec) -> dict:
    """The plan command's parsed values for a run's SPEC (blank → default)."""
    from .api import COMMANDS
    plan = COMMANDS["plan"]
    return plan.parse(flatten(spec, plan.spec_fields))


def predict(spec, gpus: dict | None = None) -> _plan.Plan:
    """The plan of a SPEC, with ``gpus`` replacing profiles by name (fitted copies)."""
    from .commands.plan import _spec_model, _spec_parallel
    v = _values(spec)
    gpu = (gpus or {}).get(v["profile"])
    hw = _hardware.hardware(
        v["gpus"], v["device_memory"], v["flops_per_gpu"], v["intra_node_bandwidth"], v["inter_node_bandwidth"], None,
        v["gpus_per_node"], v["compute_efficiency"], profile_name=v["profile"], hbm_bandwidth=v["hbm_bandwidth"],
        reserve=v["reserve"], dtype=_hardware.PRECISION_DTYPES[v["precision"]],
        intra_node_startup=v["intra_node_startup"], inter_node_startup=v["inter_node_startup"], gpu=gpu)
    return _plan.plan(_spec_model(v), v["micro_batch"], v["global_batch"], hw, _spec_parallel(v), v["precision"],
                      fp8=v["fp8"])


def predict_run(run: Run, gpus: dict | None = None) -> _plan.Plan:
    """The plan of a run; with :attr:`~calc.runs.Run.open_micro_batch`, of its fastest microbatch size that fits.

    The sizes tried are the divisors of the sequences each data-parallel replica takes per step
    (``global_batch / data``); when none fits, the smallest is kept (its plan says it does not fit).

    >>> r = next(r for r in RUNS if r.open_micro_batch)
    >>> pl = predict_run(r)
    >>> pl.memory_per_device.fits, pl.step_time_s <= predict(r.spec).step_time_s
    (True, True)
    """
    if not run.open_micro_batch:
        return predict(run.spec, gpus)
    per_replica = int(run.spec["batch"]["global_batch"]) // int(run.spec["parallel"]["data"])
    plans = [predict({**run.spec, "batch": {**run.spec["batch"], "micro_batch": b}}, gpus)
             for b in range(1, per_replica + 1) if per_replica % b == 0]
    fitting = [pl for pl in plans if pl.memory_per_device.fits]
    return min(fitting, key=lambda pl: pl.step_time_s) if fitting else plans[0]


def _kind_parts(spec) -> tuple[int, bool, str, int]:
    """(index in :data:`LAYOUTS`, mixture-of-experts, GPU family, index in :data:`SIZE_BANDS`) of a SPEC."""
    from .commands.plan import _spec_model
    from .model import param_count

    v = _values(spec)
    layout = 0 if v["zero"] == 3 else 1 if (v["pipeline_parallel"] or 1) > 1 else 2
    m = _spec_model(v)
    total = param_count(m).total
    band = next(i for i, (bound, _) in enumerate(SIZE_BANDS) if total < bound)
    return layout, m.experts > 1, (v["profile"] or "custom").split("-")[0].upper(), band


def run_kind(spec) -> str:
    """What kind of plan a SPEC is, as a reader choosing a split would say it: one of :data:`LAYOUTS` (with
    "mixture-of-experts" for a model with experts), the GPU family (the profile's first word, upper case) and a
    :data:`SIZE_BANDS` label of the model's parameters.

    >>> run_kind(next(r for r in RUNS if r.name == "megatron-t1-1008.0B").spec)
    'pipelined (pipeline with tensor and data parallelism) on A100, 100B parameters and more'
    >>> run_kind(next(r for r in RUNS if r.name == "mosaic-mpt-7b-h100-512-2k").spec)
    'weights sharded (ZeRO-3, FSDP) on H100, under 10B parameters'
    >>> run_kind(next(r for r in RUNS if r.name == "mosaic-mpt-1b-h100-512-2k").spec)  # ZeRO-2: weights whole
    'weights replicated (data and tensor parallelism, ZeRO 0-2) on H100, under 10B parameters'
    """
    return _kind_label(_kind_parts(spec))


def _kind_label(parts: tuple[int, bool, str, int]) -> str:
    layout, moe, family, band = parts
    return f"{LAYOUTS[layout]}{', mixture-of-experts' if moe else ''} on {family}, {SIZE_BANDS[band][1]}"


#: Each run's :func:`_kind_parts` by name: a run's kind does not change while the fits re-predict it.
_RUN_KINDS: dict[str, tuple[int, bool, str, int]] = {}


def _run_kind_parts(run: Run) -> tuple[int, bool, str, int]:
    if run.name not in _RUN_KINDS:
        _RUN_KINDS[run.name] = _kind_parts(run.spec)
    return _RUN_KINDS[run.name]


def run_recomputation(spec) -> str:
    """What a SPEC recomputes in the backward pass, as one of :data:`RECOMPUTATIONS`.

    >>> run_recomputation(next(r for r in RUNS if r.name == "mosaic-mpt-7b-h100-512-2k").spec)
    "none: every layer's activations kept"
    >>> run_recomputation(next(r for r in RUNS if r.name == "ibm-fsdp-llama2-13b-a100").spec)  # every other block
    'full on some layers, the others kept'
    """
    v = _values(spec)
    mode = v["recompute"]
    if mode == "full" and v["recompute_layers"] is not None and v["recompute_layers"] < v["layers"]:
        return RECOMPUTATIONS[2]
    return RECOMPUTATIONS[{"none": 0, "selective": 1, "full": 3}[mode]]


def _breakdown(results: list[RunResult], label: dict[str, str], order: dict[str, object]) -> tuple[KindSummary, ...]:
    """One summary per label present among ``results`` (``label``: run name → label), sorted by ``order``."""
    out = []
    for kind in sorted(set(label[r.name] for r in results), key=lambda k: order[k]):
        rs = [r for r in results if label[r.name] == kind]
        errors = [r.error for r in rs]
        worst = max(rs, key=lambda r: abs(r.error))
        out.append(KindSummary(kind, len(rs), fsum(abs(e) for e in errors) / len(rs), fsum(errors) / len(rs),
                               min(errors), max(errors), worst.name))
    return tuple(out)


def _kinds(results: list[RunResult], runs: tuple[Run, ...]) -> tuple[KindSummary, ...]:
    """One summary per kind of run present, ordered by layout, experts, GPU family and size band."""
    parts = {r.name: _run_kind_parts(r) for r in runs}
    order: dict[str, object] = {}
    for r in results:
        order[r.kind] = min(order.get(r.kind, parts[r.name]), parts[r.name])
    return _breakdown(results, {r.name: r.kind for r in results}, order)


def _recomputations(results: list[RunResult], runs: tuple[Run, ...]) -> tuple[KindSummary, ...]:
    """One summary per :data:`RECOMPUTATIONS` entry present, in that order."""
    label = {r.name: run_recomputation(r.spec) for r in runs}
    return _breakdown(results, label, {k: i for i, k in enumerate(RECOMPUTATIONS)})


def _result(run: Run, gpus: dict | None = None) -> RunResult:
    pl = predict_run(run, gpus)
    mem = pl.memory_per_device
    return RunResult(run.name, run.group, run.gpus, run.step_time_s, pl.step_time_s,
                     pl.step_time_s / run.step_time_s - 1, mem.fits, mem.total_gib, mem.capacity_gib, pl.mfu,
                     pl.micro_batch, run.open_micro_batch, run.source, run.measured, run.assumed,
                     _kind_label(_run_kind_parts(run)))


def _summary(group: str, results: list[RunResult]) -> GroupSummary:
    errors = [abs(r.error) for r in results]
    worst = max(results, key=lambda r: abs(r.error))
    return GroupSummary(group, len(results), fsum(errors) / len(errors), max(errors), worst.name,
                        all(r.fits for r in results))


def _profiles(values: dict[tuple[str, str], float]) -> dict:
    """Copies of the profiles with fitted constants."""
    out = {}
    for (family, field), x in values.items():
        for name in _FAMILIES[family]:
            base = out.get(name, _hardware.PROFILES[name])
            out[name] = replace(base, **{field: x})
    return out


def _fit(runs: list[Run]) -> dict[tuple[str, str], float]:
    """Coordinate search over :data:`GRIDS` for each constant in :data:`FITTED`, minimising the mean |error| of the
    runs it moves (so the runs of another family, or in bf16 for the fp8 constant, neither weigh nor cost)."""
    values = {(f, k): getattr(_hardware.PROFILES[_FAMILIES[f][-1]], k) for f, k in FITTED}

    def loss(vals: dict, moved: list[Run]) -> float:
        gpus = _profiles(vals)
        errs = [abs(_result(r, gpus).error) for r in moved]
        return fsum(errs) / len(errs)

    for _ in range(2):
        for key in values:
            family, field = key
            # the runs the constant can move: its family's, and for the fp8 GEMMs' only those that run fp8
            moved = [r for r in runs if r.spec["hardware"]["profile"] in _FAMILIES[family]
                     and (field != "fp8_gemm_efficiency" or r.spec["training"].get("fp8"))]
            if not moved:
                continue
            values[key] = min(GRIDS[field], key=lambda x: loss({**values, key: x}, moved))
    return values


#: The groups whose choice of (tensor, pipeline) the search is asked to rank (Megatron-LM's own choices).
RANKED_GROUPS = ("megatron-2021-t1", "mt-nlg")
#: The settings a ranking keeps as the run published them; the degrees, microbatch and interleaving are searched.
_KEPT = ("recompute", "recompute_layers", "sequence_parallel", "zero", "zero_group", "overlap_grad_reduce",
         "overlap_param_gather", "tp_comm_overlap", "pipeline_engine", "rank_order")


def rank_published(run: Run, top: int = 200) -> dict:
    """Where ``search`` ranks the run's own (t, p) among the (t, p) pairs of its plans.

    The search gets the run's model, batch, GPUs and, fixed as published, the
    recomputation, sequence parallelism, ZeRO stage and overlap switches; pairs are
    ranked by their fastest plan.
    """
    from .commands.plan import _spec_hardware, _spec_model
    from .search import search

    v = _values(run.spec)
    fixed = {k: v[k] for k in _KEPT}
    r = search(_spec_model(v), v["global_batch"], _spec_hardware(v), v["precision"], top=top, fixed=fixed)
    pairs: list[list[int]] = []
    for pl in r.plans:
        pair = [pl["parallel"]["tensor"], pl["parallel"]["pipeline"]]
        if pair not in pairs:
            pairs.append(pair)
    published = [v["tensor_parallel"], v["pipeline_parallel"]]
    return {"name": run.name, "published": published,
            "rank": pairs.index(published) + 1 if published in pairs else None, "top": pairs[:5]}


def check_sweep(sweep: Sweep) -> dict:
    """Predict every point of a sweep; ``holds`` when the predicted order is the published one.

    Points share GPUs and batch, so the shorter step is the higher model FLOP/s per GPU.
    """
    points = []
    for label, spec in sweep.points:
        pl = predict(spec)
        points.append({"label": label, "predicted_step_s": pl.step_time_s,
                       "predicted_flops_per_gpu": pl.achieved_flops_per_gpu, "fits": pl.memory_per_device.fits})
    steps = [p["predicted_step_s"] for p in points]
    fastest = points[steps.index(min(steps))]["label"]
    if sweep.expect == "best":
        holds = fastest == sweep.best
    else:
        holds = all(a < b for a, b in zip(steps, steps[1:]))
    return {"name": sweep.name, "source": sweep.source, "finding": sweep.finding, "points": points,
            "predicted_fastest": fastest, "holds": holds}


def validate(cross_validate: bool = True, rank: bool = True) -> Validation:
    """Predict every run with the profiles as they are; then cross-validate the fitted constants.

    >>> v = validate(cross_validate=False, rank=False)
    >>> v.overall.runs == len(RUNS), v.reference.group
    (True, 'reference')
    """
    results = [_result(r) for r in RUNS]
    by_group = [_summary(g, [r for r in results if r.group == g]) for g in GROUPS]
    reference = _summary("reference", [r for r in results if r.group in REFERENCE_GROUPS])
    overall = _summary("all", results)
    constants: list[dict] = []
    cv, cv_ref = overall, reference
    if cross_validate:
        halves = ([], [])
        for g in GROUPS:
            for i, r in enumerate(x for x in RUNS if x.group == g):
                halves[i % 2].append(r)
        crossed: list[RunResult] = []
        for train, test in ((halves[0], halves[1]), (halves[1], halves[0])):
            gpus = _profiles(_fit(train))
            crossed += [_result(r, gpus) for r in test]
        cv = _summary("cross-validated", crossed)
        cv_ref = _summary("cross-validated reference", [r for r in crossed if r.group in REFERENCE_GROUPS])
        fitted_all = _fit(list(RUNS))
        for (family, field), x in fitted_all.items():
            constants.append({"profiles": list(_FAMILIES[family]), "constant": field,
                              "profile_value": getattr(_hardware.PROFILES[_FAMILIES[family][-1]], field),
                              "fitted_on_all_runs": x})
    bounds = []
    for name, source, spec, ceiling in BOUNDS:
        pl = predict(spec)
        bounds.append({"name": name, "source": source, "predicted_flops_per_gpu": pl.achieved_flops_per_gpu,
                       "ceiling_flops_per_gpu": ceiling, "below_ceiling": pl.achieved_flops_per_gpu <= ceiling,
                       "fits": pl.memory_per_device.fits})
    rankings = tuple(rank_published(r) for r in RUNS if r.group in RANKED_GROUPS) if rank else ()
    sweeps = tuple(check_sweep(s) for s in SWEEPS) if rank else ()
    return Validation(tuple(results), tuple(by_group), reference, overall, cv, cv_ref, tuple(constants),
                      tuple(bounds), rankings, sweeps, _kinds(results, RUNS), _recomputations(results, RUNS))
