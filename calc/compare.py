"""Two plans of one model side by side: memory, step time, communication, MFU, and why one wins.

Every row holds plan A's figure, plan B's and the change ``B − A`` (bytes per GPU of the
most loaded stage; seconds per optimizer step). The winner is the plan with the higher
throughput (tokens/s: the same as the shorter step when the global batches are equal), or
the only one that fits in memory. The reason is one sentence: the part of the step
(compute, pipeline bubble, exposed communication, optimizer step) where the winner saves
the most, what in the split causes it, and what it loses elsewhere, if anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from .plan import MEMORY_TERMS, Plan, shard_degree
from .units import format_bytes, format_time

__all__ = ["TimeRow", "MemoryRow", "CommunicationRow", "Setting", "Comparison", "compare", "differing", "PARTS", "TERMS"]

#: The parts a step adds up to: (name, Plan field).
PARTS = (("compute", "compute_time_s"), ("pipeline bubble", "bubble_time_s"),
         ("exposed communication", "exposed_communication_s"), ("optimizer step", "optimizer_time_s"))
#: Memory per GPU by term: (name, DeviceMemory field).
TERMS = tuple((name, f"{key}_bytes") for key, name in MEMORY_TERMS) + (("total", "total_bytes"),
                                                                       ("GPU memory", "capacity_bytes"))
_STRATEGY = {"data": "data-parallel", "tensor": "tensor-parallel", "pipeline": "pipeline", "context": "context-parallel",
             "expert": "expert-parallel"}


@dataclass(frozen=True, slots=True)
class TimeRow:
    """One part of the step, per optimizer step (seconds)."""

    part: str
    a_s: float
    b_s: float
    change_s: float  #: b − a


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """One term of the memory of the most loaded GPU (bytes)."""

    term: str
    a_bytes: float
    b_bytes: float
    change_bytes: float  #: b − a


@dataclass(frozen=True, slots=True)
class CommunicationRow:
    """One kind of transfer, per GPU per step (0 where a plan has none)."""

    strategy: str
    collective: str
    what: str
    a_step_bytes: float  #: bytes this GPU sends per step
    b_step_bytes: float
    a_time_s: float
    b_time_s: float
    a_exposed_s: float  #: the part not hidden behind compute
    b_exposed_s: float


@dataclass(frozen=True, slots=True)
class Setting:
    """An input that differs between the two plans (``parallel.tensor``: 8 and 4)."""

    setting: str
    a: object
    b: object


@dataclass(frozen=True, slots=True)
class Comparison:
    """Plans A and B side by side."""

    faster: str  #: A | B | neither
    reason: str  #: one sentence
    settings: tuple[Setting, ...]  #: the inputs that differ
    step_time: tuple[TimeRow, ...]  #: the parts, then the step
    memory: tuple[MemoryRow, ...]
    communications: tuple[CommunicationRow, ...]
    a_step_time_s: float
    b_step_time_s: float
    a_tokens_per_s: float
    b_tokens_per_s: float
    a_mfu: float
    b_mfu: float
    a_fits: bool
    b_fits: bool

    def as_dict(self) -> dict:
        return asdict(self)


def _communications(a: Plan, b: Plan) -> tuple[CommunicationRow, ...]:
    """Rows of A, then B's others, matched by strategy, collective and what they move (summed when repeated)."""
    keys: dict[tuple[str, str, str], list[float]] = {}
    for side, p in ((0, a), (1, b)):
        for c in p.communications:
            row = keys.setdefault((c.strategy, c.collective, c.what), [0.0] * 6)
            row[side] += c.bytes_per_step
            row[2 + side] += c.time_s
            row[4 + side] += c.exposed_time_s
    return tuple(CommunicationRow(*k, *v) for k, v in keys.items())


def _exposed_by_strategy(p: Plan) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in p.communications:
        out[c.strategy] = out.get(c.strategy, 0.0) + c.exposed_time_s
    return out


def _recomputation(par) -> str:
    """``full``, or ``full of 4 layers per model chunk`` with ``recompute_layers``."""
    n = par.recompute_layers
    return par.recompute if n is None else f"{par.recompute} of {n} layer{'s' if n != 1 else ''} per model chunk"


def _cause(part: str, w: Plan, lo: Plan) -> str:
    """What in the winner's split makes ``part`` shorter, as a parenthesis ('' when nothing stands out)."""
    pw, pl = w.parallel, lo.parallel
    if part == "compute":
        for label, x, y in (("recomputation", _recomputation(pw), _recomputation(pl)), ("tensor", pw.tensor, pl.tensor),
                            ("micro_batch", w.micro_batch, lo.micro_batch), ("context", pw.context, pl.context),
                            ("layers on the slowest stage", max(w.layers_per_stage), max(lo.layers_per_stage))):
            if x != y:
                return f" ({label} {x} instead of {y})"
        return ""
    if part == "pipeline bubble":
        return (f" ((p − 1)/(v·m) = {w.bubble_fraction:.3g} of the ideal compute instead of {lo.bubble_fraction:.3g}: "
                f"p = {pw.pipeline}, v = {pw.interleave}, m = {w.microbatches_per_step} against "
                f"p = {pl.pipeline}, v = {pl.interleave}, m = {lo.microbatches_per_step})")
    if part == "exposed communication":
        ew, el = _exposed_by_strategy(w), _exposed_by_strategy(lo)
        best = max(sorted(set(ew) | set(el)), key=lambda s: el.get(s, 0.0) - ew.get(s, 0.0))
        x, y = getattr(pw, best), getattr(pl, best)
        degree = f"; {best} {x} instead of {y}" if x != y else ""
        return (f" ({_STRATEGY[best]}: {format_time(ew.get(best, 0.0))} exposed instead of "
                f"{format_time(el.get(best, 0.0))}{degree})")
    gw, gl = shard_degree(pw), shard_degree(pl)
    if pw.zero != pl.zero or gw != gl:  # the optimizer step: its shard of the weights
        return f" (ZeRO-{pw.zero} over {gw} data-parallel ranks instead of ZeRO-{pl.zero} over {gl})"
    return ""


def _reason(names: tuple[str, str], w: Plan, lo: Plan) -> str:
    """One sentence: why ``w`` (called ``names[0]``) beats ``lo``."""
    win, lose = names
    if w.memory_per_device.fits and not lo.memory_per_device.fits:
        mem = lo.memory_per_device
        return (f"Only {win} fits in memory: {lose} needs {format_bytes(mem.total_bytes, 'iec')} per GPU of "
                f"{format_bytes(mem.capacity_bytes, 'iec')} (its largest term: {mem.binding_term}).")
    if w.global_batch != lo.global_batch:
        return (f"{win} is faster: {w.tokens_per_s:,.0f} tokens/s against {lo.tokens_per_s:,.0f} "
                f"(global batch {w.global_batch} sequences against {lo.global_batch}).")
    saved = [(getattr(lo, f) - getattr(w, f), name) for name, f in PARTS]
    gain, part = max(saved)
    loss, worse = min(saved)
    step = (f"{format_time(w.step_time_s)} against {format_time(lo.step_time_s)} per step, "
            f"{100 * (1 - w.step_time_s / lo.step_time_s):.3g} % less")
    tail = f", which outweighs {format_time(-loss)} more {worse}" if loss < 0 else ""
    fits = "" if w.memory_per_device.fits else ", though neither plan fits in memory"
    return f"{win} is faster ({step}): its {part} is {format_time(gain)} shorter{_cause(part, w, lo)}{tail}{fits}."


def _winner(a: Plan, b: Plan) -> str:
    if a.memory_per_device.fits != b.memory_per_device.fits:
        return "A" if a.memory_per_device.fits else "B"
    if a.tokens_per_s == b.tokens_per_s:
        return "neither"
    return "A" if a.tokens_per_s > b.tokens_per_s else "B"


def compare(a: Plan, b: Plan, settings: Sequence[Setting] = ()) -> Comparison:
    """Plans ``a`` and ``b`` side by side; ``settings`` are the inputs that differ (for the reader).

    >>> from calc.hardware import hardware
    >>> from calc.model import model
    >>> from calc.plan import parallel, plan
    >>> llama = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> hw = hardware(64, profile_name="h100-sxm5-80gb")
    >>> a = plan(llama, 1, 512, hw, parallel(data=8, tensor=8, zero=1, sequence_parallel=True))
    >>> b = plan(llama, 1, 512, hw, parallel(data=16, tensor=4, zero=1, sequence_parallel=True))
    >>> c = compare(a, b)
    >>> c.faster, c.step_time[-1].part, c.step_time[-1].change_s < 0
    ('B', 'step', True)
    """
    faster = _winner(a, b)
    if faster == "neither":
        reason = "Neither is faster: both plans take the same time per step."
    else:
        w, lo = (a, b) if faster == "A" else (b, a)
        reason = _reason((faster, "B" if faster == "A" else "A"), w, lo)
    rows = tuple(TimeRow(name, getattr(a, f), getattr(b, f), getattr(b, f) - getattr(a, f)) for name, f in PARTS)
    rows += (TimeRow("step", a.step_time_s, b.step_time_s, b.step_time_s - a.step_time_s),)
    ma, mb = a.memory_per_device, b.memory_per_device
    memory = tuple(MemoryRow(name, getattr(ma, f), getattr(mb, f), getattr(mb, f) - getattr(ma, f))
                   for name, f in TERMS)
    return Comparison(faster, reason, tuple(settings), rows, memory, _communications(a, b), a.step_time_s,
                      b.step_time_s, a.tokens_per_s, b.tokens_per_s, a.mfu, b.mfu, ma.fits, mb.fits)


def differing(a: Mapping[str, object], b: Mapping[str, object], names: Mapping[str, str]) -> tuple[Setting, ...]:
    """The inputs whose values differ, named ``section.field`` by ``names`` (flat name → qualified name).

    >>> differing({"tensor_parallel": 8, "zero": 1}, {"tensor_parallel": 4, "zero": 1},
    ...           {"tensor_parallel": "parallel.tensor", "zero": "parallel.zero"})
    (Setting(setting='parallel.tensor', a=8, b=4),)
    """
    return tuple(Setting(names[k], a[k], b[k]) for k in names if a.get(k) != b.get(k))

