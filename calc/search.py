"""Search: enumerate parallel configurations, keep those that fit, rank them by step time.

The space (every combination is checked by :func:`calc.plan.check_combination`
and costed by the model of :mod:`calc.plan`):

- ``tensor``: divisors of ``gpus_per_node`` (TP never crosses a node) that divide
  the heads, the KV heads and the MLP width;
- ``expert``: divisors of ``experts``; ``context``: 1, 2, 4, ... 32;
- ``pipeline``: divisors of ``layers`` (even splits only); ``data``: what is left;
- ``zero``: 0-3 (2 and 3 only without pipelining);
- ``micro_batch``: divisors of the per-replica batch up to ``max_micro_batch``;
- ``recompute``: none, selective, full; ``interleave``: 1, and with pipelining
  every ``v <= 8`` that splits the stage's layers evenly;
- ``sequence_parallel`` is on whenever ``tensor > 1`` (it moves the same bytes as
  TP's all-reduces and divides the activations TP leaves replicated).

A configuration is refused with its reason: an impossible combination, or
memory above the device's capacity (naming the stage and the binding term).
Memory grows with the microbatch size, so once a size does not fit, the larger
ones are refused together without being costed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .check import count, real
from .errors import CalcError
from .model import Model, precision as _precision
from .plan import GIB, Hardware, Parallel, _Ctx, _evaluate, check_combination

__all__ = ["Refusal", "SearchResult", "search", "refusal_summary", "MAX_TOP"]

#: Most plans returned.
MAX_TOP = 10_000
_CONTEXT = (1, 2, 4, 8, 16, 32)
_INTERLEAVE_MAX = 8
_FIELDS = ("data", "tensor", "pipeline", "context", "expert", "zero", "sequence_parallel", "recompute", "interleave")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A configuration (or a family of them) that was not costed, and why."""

    parallel: dict  #: the degrees; ``micro_batch`` as ">= b" when a family of sizes is refused at once
    kind: str  #: combination | memory
    reason: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Plans that fit, fastest first, and the refusals."""

    plans: tuple[dict, ...]  #: plan summaries with ``rank`` and ``why``
    enumerated: int  #: configurations considered (families count once per size)
    feasible: int  #: configurations that fit and were costed
    refused_count: int
    refused_by_reason: dict  #: kind → count
    refused: tuple[Refusal, ...]

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc search --json`` prints."""
        return asdict(self)


def _divisors(n: int, limit: int | None = None) -> list[int]:
    return [k for k in range(1, (n if limit is None else min(n, limit)) + 1) if n % k == 0]


def _summary(pl, rank: int, best) -> dict:
    """The fields of a plan a search reports, with why it ranks where it does."""
    parts = {"compute": pl.compute_time_s, "bubble": pl.bubble_time_s,
             "exposed communication": pl.exposed_communication_s}
    if best is None:
        why = ("fastest: step {:.4g} s = compute {:.4g} s + bubble {:.4g} s + exposed communication {:.4g} s"
               .format(pl.step_time_s, *parts.values()))
    else:
        ref = {"compute": best.compute_time_s, "bubble": best.bubble_time_s,
               "exposed communication": best.exposed_communication_s}
        worst = max(parts, key=lambda k: parts[k] - ref[k])
        why = (f"{pl.step_time_s - best.step_time_s:.4g} s slower than #1, mostly {worst} "
               f"(+{parts[worst] - ref[worst]:.4g} s)")
    par = asdict(pl.parallel)
    par["micro_batch"] = pl.micro_batch
    return {
        "rank": rank,
        "parallel": par,
        "microbatches_per_step": pl.microbatches_per_step,
        "step_time_s": pl.step_time_s,
        "compute_time_s": pl.compute_time_s,
        "bubble_time_s": pl.bubble_time_s,
        "exposed_communication_s": pl.exposed_communication_s,
        "bubble_fraction": pl.bubble_fraction,
        "tokens_per_s": pl.tokens_per_s,
        "mfu": pl.mfu,
        "hfu": pl.hfu,
        "training_days": pl.training_days,
        "memory_per_device": asdict(pl.memory_per_device),
        "communications": [asdict(c) for c in pl.communications],
        "why": why,
    }


def search(m: Model, global_batch: int, hw: Hardware, precision: str = "bf16-adam", *, top: int = 10,
           max_micro_batch: int = 16, micro_batch: int | None = None, tokens: float | None = None) -> SearchResult:
    """Every configuration of the space above that fits, ranked by estimated step time (s).

    Returns the ``top`` fastest as plan summaries and every refusal with its reason.
    ``micro_batch`` fixes the microbatch size instead of searching it.

    >>> from calc.model import model
    >>> from calc.plan import hardware
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> r = search(llama, 512, hardware(64, 80e9, 989e12, 450e9, 50e9), top=3)
    >>> [p["rank"] for p in r.plans], r.plans[0]["step_time_s"] <= r.plans[1]["step_time_s"]
    ([1, 2, 3], True)
    """
    rec = _precision(precision)
    gb = count("global_batch", global_batch)
    n_top = count("top", top, maximum=MAX_TOP)
    max_b = count("max_micro_batch", max_micro_batch, maximum=1024)
    fixed_b = None if micro_batch is None else count("micro_batch", micro_batch)
    tok = None if tokens is None else real("tokens", tokens, maximum=1e16, unit="tokens")
    ctx = _Ctx(m, hw, rec, gb, tok)
    g, gpn = hw.gpus, hw.gpus_per_node
    found: list[tuple[float, float, Parallel, int]] = []
    refused: list[Refusal] = []
    enumerated = 0

    def refuse(par: Parallel, micro: object, kind: str, reason: str) -> None:
        refused.append(Refusal({**{f: getattr(par, f) for f in _FIELDS}, "micro_batch": micro}, kind, reason))

    tensors = [t for t in _divisors(min(gpn, g)) if not (m.heads % t or m.kv_heads % t or m.ffn_hidden % t)]
    for t in tensors:
        for e in _divisors(m.experts):
            for c in _CONTEXT:
                if c > 1 and m.seq_len % (2 * c):
                    continue
                for p in _divisors(m.layers):
                    if g % (t * e * c * p):
                        continue
                    d = g // (t * e * c * p)
                    sp = t > 1 and (m.seq_len // c) % t == 0
                    family = Parallel(d, t, p, c, e, 0, sp, "any", 1)
                    if gb % (d * e):
                        enumerated += 1
                        refuse(family, "any", "combination",
                               f"global_batch ({gb}) is not a multiple of data × expert ({d * e})")
                        continue
                    micros = _divisors(gb // (d * e), max_b) if fixed_b is None else [fixed_b]
                    if fixed_b is not None and gb % (fixed_b * d * e):
                        enumerated += 1
                        refuse(family, fixed_b, "combination",
                               f"global_batch ({gb}) is not a multiple of micro_batch × data × expert "
                               f"({fixed_b * d * e})")
                        continue
                    for z in range(4):
                        if z >= 2 and p > 1:
                            enumerated += 1
                            refuse(Parallel(d, t, p, c, e, z, sp, "any", 1), "any", "combination",
                                   "ZeRO-2/3 is not combined with pipelining (gradients or weights would be "
                                   "re-communicated every microbatch)")
                            continue
                        for recompute in ("none", "selective", "full"):
                            for i, b in enumerate(micros):
                                mbs = gb // (b * d * e)
                                fits_any = False
                                for v in range(1, _INTERLEAVE_MAX + 1):
                                    if v > 1 and (p == 1 or m.layers % (p * v) or mbs % p):
                                        continue
                                    par = Parallel(d, t, p, c, e, z, sp, recompute, v)
                                    enumerated += 1
                                    try:
                                        check_combination(m, b, gb, hw, par)
                                    except CalcError as err:  # pragma: no cover - the loops above avoid these
                                        refuse(par, b, "combination", str(err))
                                        continue
                                    step, mem, fits, worst = _evaluate(ctx, par, b, mbs, False)
                                    if fits:
                                        fits_any = True
                                        found.append((step, mem, par, b))
                                        continue
                                    terms = dict(zip(("params", "grads", "optimizer", "activations", "buffers"),
                                                     worst[1:6]))
                                    refuse(par, b, "memory",
                                           f"needs {mem / GIB:.1f} GiB on stage {worst[0]} > "
                                           f"{hw.memory_bytes / GIB:.1f} GiB (largest term: "
                                           f"{max(terms, key=terms.get)})")
                                if not fits_any:
                                    larger = micros[i + 1:]
                                    if larger:
                                        enumerated += len(larger)
                                        refuse(Parallel(d, t, p, c, e, z, sp, recompute, 1), f">= {larger[0]}",
                                               "memory", f"micro_batch {b} does not fit with recompute "
                                               f"{recompute}; larger microbatches need more memory")
                                    break
    found.sort(key=lambda x: (x[0], x[1]))
    plans = []
    best = None
    for i, (_, _, par, b) in enumerate(found[:n_top]):
        mbs = check_combination(m, b, gb, hw, par)
        pl = _evaluate(ctx, par, b, mbs, True)
        plans.append(_summary(pl, i + 1, best))
        if best is None:
            best = pl
    by_reason: dict[str, int] = {}
    for r in refused:
        by_reason[r.kind] = by_reason.get(r.kind, 0) + 1
    return SearchResult(tuple(plans), enumerated, len(found), len(refused), by_reason, tuple(refused))


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def refusal_summary(refused: tuple[Refusal, ...], examples: int = 3) -> list[dict]:
    """The refusals grouped by rule (the reason with its numbers blanked), largest group first.

    Each group: ``{"kind", "rule", "count", "examples": [{"parallel", "reason"}, ...]}`` with at
    most ``examples`` examples, so a page can say why configurations fail without the
    whole list (which runs to megabytes for a large cluster).

    >>> r = (Refusal({"data": 8}, "memory", "needs 90.1 GiB on stage 0 > 74.5 GiB (largest term: activations)"),
    ...      Refusal({"data": 4}, "memory", "needs 81.0 GiB on stage 0 > 74.5 GiB (largest term: activations)"))
    >>> s = refusal_summary(r, examples=1)
    >>> s[0]["count"], s[0]["rule"], len(s[0]["examples"])
    (2, 'needs # GiB on stage # > # GiB (largest term: activations)', 1)
    """
    groups: dict[tuple[str, str], dict] = {}
    for r in refused:
        rule = _NUMBER.sub("#", r.reason)
        g = groups.setdefault((r.kind, rule), {"kind": r.kind, "rule": rule, "count": 0, "examples": []})
        g["count"] += 1
        if len(g["examples"]) < examples:
            g["examples"].append({"parallel": dict(r.parallel), "reason": r.reason})
    return sorted(groups.values(), key=lambda g: (-g["count"], g["kind"], g["rule"]))
