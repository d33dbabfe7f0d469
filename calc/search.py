"""Search: enumerate parallel configurations, keep those that fit, rank them by step time.

The space (every combination is checked by :func:`calc.plan.check_combination`
and costed by :func:`calc.plan.estimate`); a SPEC's ``parallel`` section may fix any
of these axes, and the result says which were fixed:

- ``tensor``: divisors of ``gpus_per_node`` (TP never crosses a node) that divide the
  heads and the MLP width, with the KV heads dividing it or divisible by it;
- ``expert``: divisors of ``experts``; ``context``: 1, 2, 4, ... 32 (``2c`` dividing ``s``, and only
  with a flash attention kernel, which ring attention needs);
- ``pipeline``: every stage count up to ``layers`` (and 512) that divides the GPUs left; the layers
  split as evenly as possible and, where it balances the embedding and the output
  head, one layer fewer on the first and the last stage (Dubey et al. 2024, §3.3.2);
- ``data``: what is left; ``zero``: 0-3; ``zero_group`` (hybrid sharding, ZeRO 1-3): every replica, and
  where a node holds at least two replicas and the data-parallel group spans more than one node, the
  replicas of one node (:meth:`_Search.node_group`);
- ``sequence_parallel``: on and off (with ``tensor > 1``);
- ``recompute``: none, selective (only with standard attention: with FlashAttention it
  keeps and redoes what ``none`` does), full (of every layer: ``recompute_layers``, the block method that
  recomputes only some, is not searched, only kept when the SPEC fixes it); ``interleave``: 1, and with pipelining
  every ``v <= 8`` that the schedule admits (at least ``v`` layers on every stage, the
  microbatches a multiple of the stages);
- ``micro_batch``: divisors of the per-replica batch up to ``max_micro_batch``.

A configuration is refused with its reason: an impossible combination, or memory
above the device's capacity. Memory grows with the microbatch size, so once a size
does not fit, the larger ones are refused together without being costed. Refusals
are counted by rule, each rule with one example. At most :data:`MAX_CONFIGURATIONS`
configurations are costed; when the cap binds, the result says so.

A configuration whose compute alone (:func:`calc.plan.step_floor`) is slower than every plan kept is
pruned: neither weighed for memory nor costed; one that fits but whose step's lower bound
(:func:`calc.plan.step_bound`) is slower is not costed. The families of degrees (t, e, c, p, d) are searched in
the order of a guess at their fastest step (:meth:`_Search.promise`), so that fast plans are kept early and
these bounds prune more. The plans returned do not depend on that order (a bound never exceeds the step it
bounds); the counts of pruned, feasible and refused configurations do, since a pruned one is never weighed.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from dataclasses import dataclass
from functools import lru_cache, partial

from .check import count
from .errors import CalcError
from .hardware import GIB
from .jsontext import plain
from .model import FLASH, Model
from .pipeline import stage_layers as _even_stage_layers
from .plan import (Parallel, assemble, binding_term, bound_from_parts, check_combination, first_stage_bound,
                   engine_layout_rule, estimate, heaviest_stage, interleave_room, memory_parts, memory_total,
                   layout, shared_by_interleavings, step_bound, step_floor, time_parts, workload)
from .hardware import Hardware

__all__ = ["SearchResult", "search", "MAX_TOP", "MAX_CONFIGURATIONS", "SEARCHED"]

#: Most plans returned.
MAX_TOP = 1000
#: Largest microbatch the search tries (sequences).
MAX_MICRO_BATCH = 1024
#: Most configurations one search considers (refused or costed): a few seconds of CPython at most.
MAX_CONFIGURATIONS = 200_000
_CONTEXT = (1, 2, 4, 8, 16, 32)
#: Most pipeline stages searched (published runs use at most 64; each stage is costed, so this bounds the work).
_PIPELINE_MAX = 512
_CAPPED = (f"the search stopped after considering {MAX_CONFIGURATIONS:,} configurations; fix more of the split in "
           "the SPEC's parallel section to search the rest")
_INTERLEAVE_MAX = 8
#: The axes a search varies unless the SPEC fixes them.
SEARCHED = ("data", "tensor", "pipeline", "context", "expert", "zero", "sequence_parallel", "recompute",
            "interleave", "stage_layers", "micro_batch")
_SCHEDULE = ("overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "zero3_gather", "recompute_layers",
             "pipeline_engine", "rank_order", "zero_group")


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Plans that fit, fastest first, and the refusals counted by rule."""

    plans: tuple[dict, ...]  #: plan summaries with ``rank`` and ``why``
    enumerated: int  #: configurations considered (a family of microbatch sizes refused at once counts each size)
    feasible: int  #: configurations that fit and were costed
    pruned: int  #: configurations not costed: their compute alone is slower than the ``top``-th plan found
    refused_count: int
    refused_by_reason: dict  #: kind (combination | memory) → count
    refused_summary: tuple[dict, ...]  #: per rule: kind, rule, count, one example
    fixed: dict  #: the axes the SPEC fixed, with their values
    capped: str  #: "" or the sentence saying the configuration cap stopped the search

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc search --json`` prints."""
        return plain(self)


@lru_cache(maxsize=1024)
def _divisors(n: int, limit: int | None = None) -> tuple[int, ...]:
    """The divisors of ``n`` up to ``limit``, ascending, found in O(min(√n, limit)) (cached: a search asks for the
    microbatch sizes of every split).

    >>> _divisors(12), _divisors(12, 4), _divisors(10**12, 5)
    ((1, 2, 3, 4, 6, 12), (1, 2, 3, 4), (1, 2, 4, 5))
    """
    if limit is not None and limit * limit < n:  # fewer steps up to the limit than up to √n
        return tuple(k for k in range(1, limit + 1) if n % k == 0)
    small, large = [], []
    k = 1
    while k * k <= n:
        if n % k == 0:
            small.append(k)
            if k * k != n:
                large.append(n // k)
        k += 1
    out = small + large[::-1]
    return tuple(out if limit is None else [x for x in out if x <= limit])


def _summary(pl, rank: int, best) -> dict:
    """The fields of a plan a search reports, with why it ranks where it does."""
    parts = {"compute": pl.compute_time_s, "bubble": pl.bubble_time_s,
             "exposed communication": pl.exposed_communication_s, "optimizer step": pl.optimizer_time_s}
    if best is None:
        why = ("fastest: step {:.4g} s = compute {:.4g} s + bubble {:.4g} s + exposed communication {:.4g} s"
               " + optimizer step {:.4g} s".format(pl.step_time_s, *parts.values()))
    else:
        ref = {"compute": best.compute_time_s, "bubble": best.bubble_time_s,
               "exposed communication": best.exposed_communication_s, "optimizer step": best.optimizer_time_s}
        worst = max(parts, key=lambda k: parts[k] - ref[k])
        why = (f"{pl.step_time_s - best.step_time_s:.4g} s slower than #1, mostly {worst} "
               f"(+{parts[worst] - ref[worst]:.4g} s)")
    par = _plain(pl.parallel)
    par["micro_batch"] = pl.micro_batch
    return {
        "rank": rank,
        "parallel": par,
        "microbatches_per_step": pl.microbatches_per_step,
        "step_time_s": pl.step_time_s,
        "compute_time_s": pl.compute_time_s,
        "bubble_time_s": pl.bubble_time_s,
        "exposed_communication_s": pl.exposed_communication_s,
        "optimizer_time_s": pl.optimizer_time_s,
        "bubble_fraction": pl.bubble_fraction,
        "tokens_per_s": pl.tokens_per_s,
        "mfu": pl.mfu,
        "hfu": pl.hfu,
        "training_days": pl.training_days,
        "memory_per_device": plain(pl.memory_per_device),
        "communications": [_row(c) for c in pl.communications],
        "why": why,
    }


#: The fields of a plan's communication row that a search's summary leaves out: each follows from the others
#: (``bytes_per_call × calls_per_step``; ``bytes_per_call`` over the time of one call), and without them ten
#: plans of an MoE split with eleven rows each stay under issue 9's 50 kB. ``plan`` on the split gives them.
_DERIVED_ROW_FIELDS = ("bytes_per_step", "bandwidth_bytes_per_s")


def _row(c) -> dict:
    """A communication row as a search reports it (:data:`_DERIVED_ROW_FIELDS` left out)."""
    row = plain(c)
    for k in _DERIVED_ROW_FIELDS:
        del row[k]
    return row


def stage_splits(layers: int, p: int) -> list[tuple[int, ...] | None]:
    """The layer splits tried for ``p`` stages: as even as possible (None), and, when it differs,
    one layer fewer on the first and the last stage.

    >>> stage_splits(126, 16), stage_splits(96, 8)
    ([None, (7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7)], [None])
    """
    out: list[tuple[int, ...] | None] = [None]
    if p > 2 and (layers + 2) % p == 0 and (layers + 2) // p >= 2:
        k = (layers + 2) // p
        out.append((k - 1,) + (k,) * (p - 2) + (k - 1,))
    return out


#: The numbers a rule quotes from the configuration it refused (``(12)``, ``= 96``, ``at most 3``), which
#: :func:`rule_template` replaces so that one rule is one group whatever the values.
_QUOTED_NUMBER = re.compile(r"(\(|= |at most |at least |<= |>= )\d+(?:\.\d+)?")


def rule_template(rule: str) -> str:
    """A refusal's rule with the values it quotes replaced by ``n``: the key refusals are grouped by.

    >>> rule_template("1, or the microbatches per step (12) a multiple of pipeline_parallel (8)")
    '1, or the microbatches per step (n) a multiple of pipeline_parallel (n)'
    >>> rule_template("interleave must be at most 3: every model chunk needs a layer")
    'interleave must be at most n: every model chunk needs a layer'
    >>> rule_template("interleave must be 1 when pipeline_parallel is 1")
    'interleave must be 1 when pipeline_parallel is 1'
    """
    return _QUOTED_NUMBER.sub(r"\1n", rule)


class _Refusals:
    """Refusals counted by (kind, rule), one example each: bounded, whatever the space.

    A rule that quotes values of the configuration (``a multiple of pipeline_parallel (8)``) is one group
    whatever the values: it is shown as refused the first time and, once a refusal quotes other values, as
    :func:`rule_template` has it (the example keeps the first refusal's values)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], dict] = {}
        self.templates: dict[str, str] = {}  # rule -> rule_template(rule), each worked out once
        self.total = 0

    def add(self, kind: str, rule: str, par, reason, n: int = 1) -> None:
        """Count one refusal (or ``n``); ``par`` and ``reason`` may be callables, built only for a new rule."""
        self.total += n
        template = self.templates.get(rule)
        if template is None:
            template = self.templates[rule] = rule_template(rule)
        g = self.groups.get((kind, template))
        if g is None:
            self.groups[(kind, template)] = {"kind": kind, "rule": rule, "count": n,
                                             "example": {"parallel": par() if callable(par) else par,
                                                         "reason": reason() if callable(reason) else reason}}
        else:
            g["count"] += n
            if g["rule"] != rule:
                g["rule"] = template

    def summary(self) -> tuple[dict, ...]:
        return tuple(sorted(self.groups.values(), key=lambda g: (-g["count"], g["kind"], g["rule"])))

    def by_kind(self) -> dict:
        out: dict[str, int] = {}
        for (kind, _), g in self.groups.items():
            out[kind] = out.get(kind, 0) + g["count"]
        return out


def _plain(par: Parallel) -> dict:
    """A split as JSON-able values."""
    out = plain(par)
    if out["stage_layers"] is not None:
        out["stage_layers"] = list(out["stage_layers"])
    return out


def search(m: Model, global_batch: int, hw: Hardware, precision: str = "bf16-adam", *, top: int = 10,
           max_micro_batch: int = 16, micro_batch: int | None = None, tokens: float | None = None,
           fixed: dict | None = None, fp8: bool = False) -> SearchResult:
    """Every configuration of the space above that fits, ranked by estimated step time (s).

    ``fixed`` maps axes of :class:`~calc.plan.Parallel` (and ``micro_batch``) to the value
    every configuration keeps; the schedule switches (``overlap_grad_reduce``, ...) are
    never searched and come from ``fixed`` or their defaults. So is ``recompute_layers`` (Megatron's block
    recomputation: searching it would multiply the space by the layers per stage): given, it fixes
    ``recompute`` to full. A given ``zero_group`` (hybrid sharding) is kept: only ZeRO 1-3 are searched, and
    splits whose data-parallel degree it does not divide are refused.

    >>> from calc.model import model
    >>> from calc.plan import hardware
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> r = search(llama, 512, hardware(64, profile_name="h100-sxm5-80gb"), top=3)
    >>> [p["rank"] for p in r.plans], r.plans[0]["step_time_s"] <= r.plans[1]["step_time_s"]
    ([1, 2, 3], True)
    """
    w = workload(m, global_batch, hw, precision, tokens, fp8)
    n_top = count("top", top, maximum=MAX_TOP)
    max_b = count("max_micro_batch", max_micro_batch, maximum=MAX_MICRO_BATCH)
    fixed = dict(fixed or {})
    if micro_batch is not None:
        fixed["micro_batch"] = count("micro_batch", micro_batch)
    unknown = set(fixed) - set(SEARCHED) - set(_SCHEDULE)
    if unknown:
        name = sorted(unknown)[0]
        raise CalcError(name, "an axis of the search (" + ", ".join(SEARCHED + _SCHEDULE) + ")", fixed[name])
    if fixed.get("recompute_layers") is not None:
        n = fixed["recompute_layers"] = count("recompute_layers", fixed["recompute_layers"], minimum=0,
                                              maximum=m.layers)
        if fixed.setdefault("recompute", "full") != "full":
            raise CalcError("recompute_layers", f"blank unless recompute is full (recompute is {fixed['recompute']})",
                            n)
    if fixed.get("stage_layers") is not None:  # a split of the layers fixes the number of stages
        stages = len(fixed["stage_layers"])
        if fixed.setdefault("pipeline", stages) != stages:
            raise CalcError("stage_layers", f"one entry per pipeline stage (pipeline {fixed['pipeline']})",
                            list(fixed["stage_layers"]))
    return _Search(w, n_top, max_b, fixed).run()


class _Search:
    """One search: the space it walks, the fastest plans it keeps, its refusals and its counts."""

    def __init__(self, w, n_top: int, max_b: int, fixed: dict) -> None:
        self.w, self.n_top, self.max_b, self.fixed = w, n_top, max_b, fixed
        self.schedule = {k: fixed[k] for k in _SCHEDULE if k in fixed}
        self.refusals = _Refusals()
        self.best: list[tuple] = []  # a min-heap of (−step, −memory, −serial, par, b): the n_top fastest
        self.feasible = self.enumerated = self.pruned = 0
        self.serial = itertools.count()
        self.capped = ""

    def full(self) -> bool:
        """True once the configuration cap is reached (and say so)."""
        if self.enumerated >= MAX_CONFIGURATIONS:
            self.capped = _CAPPED
        return bool(self.capped)

    def axis(self, name: str, default: list) -> list:
        return [self.fixed[name]] if name in self.fixed else default

    def refuse(self, kind: str, rule: str, par, reason, n: int = 1) -> None:
        self.enumerated += n
        self.refusals.add(kind, rule, par, reason, n)

    def run(self) -> SearchResult:
        for t, e, c, p, d in sorted(self.degrees(), key=lambda f: self.promise(*f)):
            self.splits(t, e, c, p, d)
            if self.full():
                break
        return self.result()

    def promise(self, t: int, e: int, c: int, p: int, d: int) -> float:
        """A guess at a family's fastest step (s), to search the promising families first.

        The compute floor (:func:`calc.plan.step_floor`) at microbatch 1 without recomputation, times the
        bubble's ``1 + (p − 1)/m``. Only the order of the search depends on it, not the plans it returns (but for
        which of two plans with exactly the same step and memory is listed first, and, when the cap binds, which
        configurations it reached)."""
        w = self.w
        b = self.axis("micro_batch", [1])[0]
        mbs = max(1, w.global_batch // (d * e * b))
        sp = self.axis("sequence_parallel", [t > 1 and (w.m.seq_len // c) % t == 0])[0]
        sched = {k: x for k, x in self.schedule.items() if k in ("tp_comm_overlap", "pipeline_engine")}
        par = Parallel(d, t, p, c, e, 1, sp, self.axis("recompute", ["none"])[0],
                       stage_layers=self.fixed.get("stage_layers"), **sched)
        return step_floor(w, par, b, mbs) * (1 + (p - 1) / mbs)

    def degrees(self):
        """(t, e, c, p, d) with t·e·c·p·d = GPUs and the batch divisible by the replicas."""
        m, hw, gb = self.w.m, self.w.hw, self.w.global_batch
        g = hw.gpus
        stage_counts = _divisors(g, min(m.layers, _PIPELINE_MAX))
        if self.fixed.get("pipeline", 1) not in stage_counts:
            p = self.fixed["pipeline"]
            self.refuse("combination", f"pipeline_parallel must divide the GPUs and be at most the layers (and "
                        f"{_PIPELINE_MAX})", {"pipeline": p}, f"pipeline_parallel ({p}) does not divide gpus ({g}) or "
                        f"is more than {min(m.layers, _PIPELINE_MAX)}")
        tensors = [t for t in _divisors(min(hw.gpus_per_node, g))
                   if not (m.heads % t or m.ffn_hidden % t or (m.kv_heads % t and t % m.kv_heads))]
        for t, e, c in itertools.product(self.axis("tensor", tensors), self.axis("expert", _divisors(m.experts)),
                                         self.axis("context", list(_CONTEXT))):
            if (c > 1 and (m.seq_len % (2 * c) or m.attention not in FLASH)) or g % (t * e * c):
                continue
            for p in self.axis("pipeline", [p for p in stage_counts if (g // (t * e * c)) % p == 0]):
                if self.full():
                    return
                d = g // (t * e * c * p)
                if g % (t * e * c * p) or ("data" in self.fixed and self.fixed["data"] != d):
                    continue
                group = self.schedule.get("zero_group")
                if group and d % group:
                    self.refuse("combination", "zero_group does not divide the data-parallel degree",
                                _family(t, p, c, e, d), f"zero_group ({group}) does not divide data_parallel ({d})")
                    continue
                if gb % (d * e):
                    self.refuse("combination", "global_batch is not a multiple of data × expert",
                                _family(t, p, c, e, d), f"global_batch ({gb}) is not a multiple of data × expert "
                                f"({d * e})")
                    continue
                yield t, e, c, p, d

    def splits(self, t: int, e: int, c: int, p: int, d: int) -> None:
        """ZeRO stage, sequence parallelism, recomputation and stage split for one set of degrees."""
        m = self.w.m
        # With FlashAttention selective recomputation has nothing to redo: it is "none" under another name.
        recomputes = ["none", "full"] if m.attention in FLASH else ["none", "selective", "full"]
        sps = [False, True] if t > 1 and (m.seq_len // c) % t == 0 else [False]
        layer_splits = [self.fixed["stage_layers"]] if "stage_layers" in self.fixed else stage_splits(m.layers, p)
        engine = self.schedule.get("pipeline_engine", "megatron")
        for split in list(layer_splits):  # a layout the engine cannot build (Megatron-LM of 2021: even stages only)
            broken = engine_layout_rule(engine, split or _even_stage_layers(m.layers, p), 1)
            if broken:
                layer_splits.remove(split)
                self.refuse("combination", broken.requirement, _family(t, p, c, e, d), str(broken))
        schedule = {k: x for k, x in self.schedule.items() if k != "zero_group"}
        groups = [self.schedule["zero_group"]] if "zero_group" in self.schedule else \
            [None, *self.node_group(t, e, c, p, d)]
        firsts: dict[tuple, Parallel] = {}  # the first split made with each (sp, recompute, layers): see micro_batches
        floors: dict[tuple, dict] = {}  # step_floor by microbatch size for each (sp, recompute, layers): the same
        verdicts: dict[tuple, dict] = {}  # check_combination's verdict on the interleavings of (sp, layers, group)
        for z, sp, recompute, split, group in itertools.product(
                self.axis("zero", [1, 2, 3] if self.schedule.get("zero_group") else [0, 1, 2, 3]),
                self.axis("sequence_parallel", sps),
                self.axis("recompute", recomputes), layer_splits, groups):
            if group is not None and z == 0:
                continue  # hybrid sharding shards with ZeRO 1-3
            make = partial(Parallel, d, t, p, c, e, z, sp, recompute, stage_layers=split, zero_group=group, **schedule)
            verdict = None if "interleave" in self.fixed else verdicts.setdefault((sp, split, group), {})
            first = firsts.get((sp, recompute, split))
            floor = floors.setdefault((sp, recompute, split), {})
            if first is None:
                first = firsts[(sp, recompute, split)] = make(1)
                self.micro_batches(make, verdict, first, floor, first)
            else:
                self.micro_batches(make, verdict, first, floor)
            if self.capped:
                return

    def node_group(self, t: int, e: int, c: int, p: int, d: int) -> list[int]:
        """The hybrid shard group a search tries beside full sharding: the replicas one node holds, when there are
        at least two and the data-parallel group spans more than one node (``[]`` otherwise)."""
        order = self.schedule.get("rank_order")
        stride = layout(self.w.m, Parallel(d, t, p, c, e, **({"rank_order": order} if order else {}))).strides["data"]
        g = self.w.hw.gpus_per_node // stride
        return [g] if 2 <= g < d and d % g == 0 else []

    def micro_batches(self, split, verdict: dict | None, like: Parallel, floor: dict,
                      base: Parallel | None = None) -> None:
        """Each microbatch size and interleaving of one split (``split(v)`` makes it with ``v`` chunks per stage;
        ``base``, when given, is ``split(1)``); larger sizes refused once one does not fit. ``verdict``: see below.

        ``like`` is ``split(1)`` or a split that differs from it only in the ZeRO stage and the shard group, which
        neither the sizes and interleavings tried nor :func:`calc.plan.step_floor` depend on: ``split(1)`` is made only
        once a microbatch size passes the floor (most of a search's splits never do). ``floor`` keeps that floor by
        microbatch size for every split that differs from ``like`` only in those two."""
        m, gb = self.w.m, self.w.global_batch
        t, p, c, e, d = like.tensor, like.pipeline, like.context, like.expert, like.data
        per_replica = gb // (d * e)
        micros = self.axis("micro_batch", _divisors(per_replica, self.max_b))
        layout = like.stage_layers or _even_stage_layers(m.layers, p)
        splits = {1: base} if base else {}  # each interleaving made once for every microbatch size, when first needed

        def par_of(v: int) -> Parallel:
            got = splits.get(v)
            if got is None:
                got = splits[v] = split(v)
            return got

        # For v > 1, memory_total() checks the combination first (check_combination). With the interleaving searched,
        # the filters here pass its rules that depend on v and the microbatch (v <= room, m a multiple of p, b
        # dividing the batch), so every v > 1 and microbatch of this split gets the same verdict: found by the
        # first, then reused (``verdict``, a dict shared with the splits that differ only in the ZeRO stage and the
        # recomputation, which the check does not read: zero_group with ZeRO-0 is never made). With it fixed, None:
        # each is checked.
        # the interleavings tried: every v the stages admit when the microbatches are a multiple of the stages, else 1
        interleaved = self.axis("interleave", _interleavings(like.pipeline_engine, layout))
        single = self.axis("interleave", [1])
        share = shared_by_interleavings(self.w, like)
        for i, b in enumerate(micros):
            if per_replica % b:
                self.refuse("combination", "global_batch is not a multiple of micro_batch × data × expert",
                            _family(t, p, c, e, d, micro_batch=b),
                            f"global_batch ({gb}) is not a multiple of micro_batch × data × expert ({b * d * e})")
                continue
            mbs = per_replica // b
            vs = interleaved if mbs % p == 0 else single
            if len(self.best) == self.n_top and _floor(floor, self.w, like, b, mbs) >= -self.best[0][0]:
                self.enumerated += len(vs)  # its compute alone is slower than every plan kept
                self.pruned += len(vs)
                continue
            base = par_of(1)
            shared = {} if share else None  # what this microbatch size's interleavings share, made once
            if self.enumerated + len(vs) < MAX_CONFIGURATIONS:  # the cap cannot bind within this microbatch size
                fits = [self.cost(par_of, base, v, b, mbs, verdict, shared) for v in vs]
            else:
                fits = [self.cost(par_of, base, v, b, mbs, verdict, shared) for v in vs if not self.full()]
                if self.capped:
                    return
            if not any(fits) and i + 1 < len(micros) and "interleave" not in self.fixed:
                larger = micros[i + 1:]
                self.refuse("memory", "larger microbatches need more memory than one that does not fit",
                            _family(t, p, c, e, d, zero=base.zero, sequence_parallel=base.sequence_parallel,
                                    recompute=base.recompute, micro_batch=f">= {larger[0]}"),
                            f"micro_batch {b} does not fit with recompute {base.recompute}; larger microbatches "
                            "need more memory", n=len(larger))
                return

    def cost(self, par_of, base: Parallel, v: int, b: int, mbs: int, verdict: dict | None = None,
             shared: dict | None = None) -> bool:
        """Check, then time a configuration that fits; keep it if it is among the fastest. True if it fits.

        The configuration is ``par_of(v)``: ``base`` (the split with one model chunk per stage) with ``v`` chunks,
        made only when something needs more than its degrees (its check, an example of a refusal, its estimate).
        ``verdict``, when given, holds (under ``"v"``) the outcome of :func:`calc.plan.check_combination` shared
        by this split's interleaved configurations: None (it passes) or its CalcError. ``shared``: see
        :meth:`memory` and :meth:`bound`.
        """
        w = self.w
        hw = w.hw
        self.enumerated += 1
        checked, err = mbs if v == 1 else None, None
        if checked is None and verdict is not None:
            if "v" not in verdict:
                try:
                    check_combination(w.m, b, w.global_batch, hw, par_of(v))
                    verdict["v"] = None
                except CalcError as refused:
                    verdict["v"] = refused
            checked, err = mbs, verdict["v"]
        if err is None:
            try:
                total, stage, terms = self.memory(par_of, base, v, b, checked, shared)
            except CalcError as refused:
                err = refused
        if err is not None:
            self.refusals.add("combination", err.requirement, lambda: _plain(par_of(v)) | {"micro_batch": b},
                              lambda: str(err))
            return False
        if not total <= hw.memory_bytes:  # as memory().fits
            binding = binding_term(terms)
            self.refusals.add("memory", f"does not fit (largest term: {binding})",
                              lambda: _plain(par_of(v)) | {"micro_batch": b},
                              lambda: f"needs {total / GIB:.1f} GiB on stage {stage} > "
                              f"{hw.memory_bytes / GIB:.1f} GiB (largest term: {binding}; reserve "
                              f"{hw.reserve_bytes / GIB:.3g} GiB included)")
            return False
        self.feasible += 1
        if len(self.best) == self.n_top and self.bound(par_of, base, v, b, mbs, shared) > -self.best[0][0]:
            return True  # it fits, but its step is slower than every plan kept: it would not be kept either
        par = par_of(v)
        est = estimate(w, par, b, microbatches=mbs)
        item = (-est.step_time_s, -total, -next(self.serial), par, b)
        if len(self.best) < self.n_top:
            heapq.heappush(self.best, item)
        elif item > self.best[0]:
            heapq.heapreplace(self.best, item)
        return True

    def memory(self, par_of, base: Parallel, v: int, b: int, checked: int | None, shared: dict | None) -> tuple:
        """:func:`calc.plan.memory_total` of ``par_of(v)``. ``shared``, when given, keeps the
        :func:`calc.plan.memory_parts` of this split and microbatch size for its other interleavings
        (:func:`calc.plan.shared_by_interleavings`): made once, each weighed as memory_total weighs it."""
        if shared is None or checked is None:
            return memory_total(self.w, par_of(v), b, checked)
        parts = shared.get("memory") or shared.setdefault("memory", memory_parts(self.w, base, b))
        return heaviest_stage(self.w, base.pipeline, v, checked, parts)

    def bound(self, par_of, base: Parallel, v: int, b: int, mbs: int, shared: dict | None) -> float:
        """:func:`calc.plan.step_bound` of ``par_of(v)`` above the slowest plan kept, from this split's shared
        :func:`calc.plan.time_parts` when given (as :meth:`memory`); infinite once a smaller interleaving's
        :func:`calc.plan.first_stage_bound` exceeded the slowest plan kept, as every larger one's bound does."""
        above = -self.best[0][0]
        if shared is None:
            return step_bound(self.w, par_of(v), b, mbs, above)
        if v > shared.get("slow from", v):  # the interleavings are tried in ascending order, the plans kept only
            return math.inf  # get faster: a smaller v's first stage is already slower (first_stage_bound)
        parts = shared.get("time") or shared.setdefault("time", time_parts(self.w, base, b))
        bound = bound_from_parts(base.pipeline_engine, v, mbs, parts, above)
        if bound > above and first_stage_bound(base.pipeline_engine, v, mbs, parts) > above:
            shared["slow from"] = v
        return bound

    def result(self) -> SearchResult:
        plans, first = [], None
        for i, (_, _, _, par, b) in enumerate(sorted(self.best, reverse=True)):
            pl = assemble(self.w, par, b, list_ranks=False)
            plans.append(_summary(pl, i + 1, first))
            first = first or pl
        shown = dict(self.fixed)
        if shown.get("stage_layers") is not None:
            shown["stage_layers"] = list(shown["stage_layers"])
        r = self.refusals
        return SearchResult(tuple(plans), self.enumerated, self.feasible, self.pruned, r.total, r.by_kind(),
                            r.summary(), shown, self.capped)


def _floor(kept: dict, w, like: Parallel, b: int, mbs: int) -> float:
    """:func:`calc.plan.step_floor` of ``like`` at microbatch size ``b``, from ``kept`` (by size) once worked out."""
    got = kept.get(b)
    if got is None:
        got = kept[b] = step_floor(w, like, b, mbs)
    return got


@lru_cache(maxsize=1024)
def _interleavings(engine: str, layout: tuple[int, ...]) -> tuple[int, ...]:
    """The model chunks per stage a search tries for ``layout`` under ``engine``: 1, and with pipelining every
    ``v <= 8`` the stages admit (:func:`calc.plan.interleave_room`) and the engine can build (cached: every split of
    a search with these stages asks)."""
    p, room = len(layout), interleave_room(layout)
    return tuple(v for v in range(1, _INTERLEAVE_MAX + 1)
                 if v == 1 or (p > 1 and room >= v and not engine_layout_rule(engine, layout, v)))


def _family(t: int, p: int, c: int, e: int, d: int, **kw) -> dict:
    """The degrees of a family of configurations refused together, with what else is fixed."""
    return {"data": d, "tensor": t, "pipeline": p, "context": c, "expert": e} | kw
