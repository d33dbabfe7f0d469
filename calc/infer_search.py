"""Search serving splits: the lowest latency at a batch, or the most tokens per second under a latency bound.

The space (each split checked by :func:`calc.inference.check_serving_split` and costed by
:func:`calc.inference.infer`); a SPEC's ``parallel`` section may fix any axis:

- ``tensor``: divisors of the heads that the KV heads divide or that divide them, and that
  divide the MLP width and the GPUs;
- ``pipeline``: every stage count up to the layers that divides the GPUs left;
- ``expert``: divisors of ``experts``; ``context``: 1 unless fixed (it pays only for very long prompts);
- ``data``: what is left.

Two objectives:

- without ``serving.max_latency``: the lowest inter-token latency at ``serving.batch``
  sequences per replica (ties: more tokens per second);
- with it: for each split, the largest batch per replica (a multiple of ``expert``, at most
  what fits in memory) whose inter-token latency stays within the bound, found by bisection
  (the step time grows with the batch); splits ranked by generated tokens per second over
  all replicas.

Refusals are counted by rule (the parameter and the rule of the :class:`CalcError`, or
memory, or the latency bound) with one example each.

The work is bounded: costing a split takes time in proportion to its pipeline stages, so each
costing counts its stages plus :data:`COSTING_WORK`, and once :data:`MAX_WORK` is spent the splits
left are not costed; they are counted under one rule (kind ``budget``) that says how to search them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .check import count, real
from .errors import CalcError
from .hardware import Hardware
from .inference import Inference, Serving, check_serving_split, infer, split
from .model import Model
from .spec import AXES

__all__ = ["InferSearch", "infer_search", "MAX_TOP", "MAX_WORK", "COSTING_WORK"]

#: Most plans returned.
MAX_TOP = 100
#: Most work one search does, in stage costings (CPython costs a stage about 0.025 ms): about 2 s at most,
#: where Llama-3 70B on 16,384 GPUs under a latency bound takes 16,300.
MAX_WORK = 80_000
#: What one costing counts besides its stages (a costing's fixed cost is about that of 20 stages).
COSTING_WORK = 20
_FITS = "fits in device memory"


@dataclass(frozen=True, slots=True)
class InferSearch:
    """Splits that serve, best first, and the refusals counted by rule."""

    objective: str  #: what the ranking optimises, in words
    plans: tuple[dict, ...]  #: summaries with ``rank`` and ``why``
    feasible: int  #: splits that fit (and meet the bound, when given)
    refused_count: int
    refused_summary: tuple[dict, ...]  #: per rule: kind, rule, count, one example
    fixed: dict  #: the axes the SPEC fixed

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc infer-search --json`` prints."""
        return asdict(self)


def _divisors_of(n: int, values) -> list[int]:
    return [k for k in values if n % k == 0]


def _candidates(m: Model, gpus: int, fixed: dict) -> list[dict]:
    """Every split of ``gpus`` the axes allow, before the model's rules are checked."""
    heads = range(1, m.heads + 1)
    tensors = [fixed["tensor"]] if "tensor" in fixed else _divisors_of(m.heads, heads)
    experts = [fixed["expert"]] if "expert" in fixed else _divisors_of(m.experts, range(1, m.experts + 1))
    contexts = [fixed.get("context", 1)]
    out = []
    for t in tensors:
        for e in experts:
            for c in contexts:
                rest = gpus // (t * e * c) if gpus % (t * e * c) == 0 else 0
                pipes = [fixed["pipeline"]] if "pipeline" in fixed else \
                    [p for p in range(1, min(m.layers, rest) + 1) if rest % p == 0]
                for p in pipes:
                    if rest and rest % p == 0:
                        d = rest // p
                        if fixed.get("data", d) == d:
                            out.append({"data": d, "tensor": t, "pipeline": p, "context": c, "expert": e})
    return out


def _summary(r: Inference, rank: int, best: Inference | None, throughput: bool) -> dict:
    if best is None:
        why = (f"best: {r.decode_time_per_token_s * 1e3:.4g} ms per token at batch {r.batch} per replica, "
               f"bound by {r.decode_bound}")
    elif throughput:
        why = (f"{r.tokens_per_s / best.tokens_per_s:.3g}× the tokens/s of #1: batch {r.batch} per replica within "
               f"the bound, step bound by {r.decode_bound}")
    else:
        why = (f"{r.decode_time_per_token_s / best.decode_time_per_token_s:.3g}× the latency of #1; step bound by "
               f"{r.decode_bound}, collectives and hand-offs {r.decode_communication_s * 1e3:.3g} ms of it")
    return {"rank": rank, "parallel": {k: r.parallel[k] for k in AXES}, "batch": r.batch,
            "decode_time_per_token_s": r.decode_time_per_token_s, "tokens_per_s": r.tokens_per_s,
            "tokens_per_s_per_device": r.tokens_per_s_per_device, "time_to_first_token_s": r.time_to_first_token_s,
            "decode_floor_s": r.decode_floor_s, "memory_per_device_bytes": r.memory_per_device.total_bytes,
            "max_concurrent_sequences": r.max_concurrent_sequences, "decode_bound": r.decode_bound, "why": why}


class _OutOfBudget(Exception):
    """The search has spent :data:`MAX_WORK`."""


def _largest_batch(sv: Serving, sp, bound: float, cost) -> Inference | tuple[str, str, str]:
    """The plan with the largest batch (a multiple of ``expert``) that fits and decodes within ``bound``,
    or why there is none: (kind, rule, reason). ``cost(serving, split)`` costs one."""
    e = sp.expert
    first = cost(replace(sv, batch=e), sp)
    if not first.memory_per_device.fits:
        return ("memory", _FITS, f"batch {e} needs {first.memory_per_device.total_gib:.4g} GiB per GPU "
                f"({first.memory_per_device.binding_term} binds)")
    if first.decode_time_per_token_s > bound:
        return ("latency", "decodes within max_latency",
                f"batch {e} already takes {first.decode_time_per_token_s * 1e3:.4g} ms per token")
    lo, hi = 1, max(1, first.max_concurrent_sequences // e)  # in units of e sequences
    best = first
    while lo < hi:
        mid = (lo + hi + 1) // 2
        r = cost(replace(sv, batch=mid * e), sp)
        if r.memory_per_device.fits and r.decode_time_per_token_s <= bound:
            lo, best = mid, r
        else:
            hi = mid - 1
    return best


def _at_batch(sv: Serving, sp, cost) -> Inference | tuple[str, str, str]:
    """The split costed at the workload's batch, or (kind, rule, reason) when it does not fit."""
    r = cost(sv, sp)
    if not r.memory_per_device.fits:
        return "memory", _FITS, f"{r.memory_per_device.total_gib:.4g} GiB per GPU; {r.memory_per_device.binding_term} binds"
    return r


def _checked_fixed(fixed: dict | None) -> dict:
    """A copy of ``fixed``, every key an axis of the split (else a CalcError naming it)."""
    fixed = dict(fixed or {})
    for name, value in fixed.items():
        if name not in AXES:
            raise CalcError(name, "an axis of the split (" + ", ".join(AXES) + ")", value)
    return fixed


def _ranked(kept: list, batch: int, bound: float | None, n_top: int) -> tuple[str, tuple[dict, ...]]:
    """(objective, the first ``n_top`` summaries): by latency at the batch, or by tokens/s under ``bound``."""
    if bound is None:
        kept.sort(key=lambda r: (r.decode_time_per_token_s, -r.tokens_per_s))
        objective = f"lowest inter-token latency at batch {batch} per replica"
    else:
        kept.sort(key=lambda r: (-r.tokens_per_s, r.decode_time_per_token_s))
        objective = f"most tokens per second with an inter-token latency of at most {bound:.4g} s"
    return objective, tuple(_summary(r, i + 1, kept[0] if i else None, bound is not None)
                            for i, r in enumerate(kept[:n_top]))


def infer_search(m: Model, sv: Serving, hw: Hardware, top: int = 10, max_latency: float | None = None,
                 fixed: dict | None = None, gemm_flops: float | None = None) -> InferSearch:
    """Rank the serving splits of ``hw.gpus`` GPUs (objectives in the module docstring).

    >>> from calc.hardware import hardware
    >>> from calc.inference import serving
    >>> from calc.model import model
    >>> llama = model(80, 8192, 64, 128256, 8192, kv_heads=8, ffn_hidden=28672, gated_mlp=True)
    >>> r = infer_search(llama, serving(8, 2048, 512), hardware(8, profile_name="h100-sxm5-80gb"), top=3)
    >>> [p["parallel"]["tensor"] for p in r.plans]
    [8, 4, 4]
    """
    n_top = count("top", top, maximum=MAX_TOP)
    bound = None if max_latency is None else real("max_latency", max_latency, maximum=3600.0, unit="s")
    fixed = _checked_fixed(fixed)
    kw = {"gemm_flops": gemm_flops, "max_latency": bound, "memo": {}}  # memo: GEMM times by shape, shared
    kept: list[Inference] = []
    refused: dict[tuple[str, str], dict] = {}  # (kind, rule) → its count and first example
    spent = 0  # stage costings so far, against MAX_WORK

    def refuse(kind: str, rule: str, example: dict, reason: str, n: int = 1) -> None:
        entry = refused.setdefault((kind, rule), {"kind": kind, "rule": rule, "count": 0,
                                                  "example": {"parallel": example, "reason": reason}})
        entry["count"] += n

    def cost(serving_: Serving, sp) -> Inference:
        nonlocal spent
        if spent >= MAX_WORK:
            raise _OutOfBudget
        spent += COSTING_WORK + sp.pipeline
        return infer(m, serving_, hw, sp, refuse=False, **kw)

    candidates = _candidates(m, hw.gpus, fixed)
    for i, cand in enumerate(candidates):
        try:
            sp = split(**cand)
            check_serving_split(m, sv if bound is None else replace(sv, batch=sp.expert), hw, sp)
            r = _at_batch(sv, sp, cost) if bound is None else _largest_batch(sv, sp, bound, cost)
            if isinstance(r, tuple):  # refused: (kind, rule, reason)
                refuse(*r[:2], cand, r[2])
                continue
        except CalcError as err:
            refuse("combination", err.requirement, cand, str(err))
            continue
        except _OutOfBudget:
            left = len(candidates) - i
            refuse("budget", f"costed within the search's budget of {MAX_WORK:,} stage costings (fix tensor, "
                   "pipeline or expert in the SPEC's parallel section to search the rest)", cand,
                   f"the budget ran out with {left:,} splits left, this one first", n=left)
            break
        kept.append(r)
    summary = tuple(sorted(refused.values(), key=lambda x: -x["count"]))
    return InferSearch(*_ranked(kept, sv.batch, bound, n_top), len(kept), sum(x["count"] for x in summary), summary,
                       fixed)
