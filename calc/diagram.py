"""Draw lists: the atlas diagram, pipeline timelines and memory bars as plain data.

A *drawing* is a dict ``{"w", "h", "title", "desc", "items"}`` whose items are
primitives with coordinates in a ``w × h`` box (rounded to 0.1), CSS class
names and texts, all computed here:

- ``{"t": "rect", "x", "y", "w", "h", "cls", ["rx"], ["title"]}``
- ``{"t": "line", "x1", "y1", "x2", "y2", "cls"}``
- ``{"t": "path", "d", "cls"}`` (``d`` uses only ``M``, ``L``, ``H``, ``V``, ``Q``, ``Z``)
- ``{"t": "circle", "cx", "cy", "r", "cls"}``
- ``{"t": "text", "x", "y", "s", "cls", ["anchor"]}``
- ``{"t": "g", "cls", "items", ["title"], ["data"]}`` (``data``: ``data-*`` attributes)

The build hook (``hooks/views.py``) turns a drawing into inline SVG; the page
(``calc-view.mjs``) draws the same list with ``createElementNS`` and
``textContent``. Both only place what is here, so every number and label on the
picture is ``calc``'s.
"""

from __future__ import annotations

from . import units
from .plan import MEMORY_TERMS

__all__ = ["atlas_layout", "timeline_layout", "memory_bars", "accuracy_chart", "serving_chart", "STRATEGY_NAMES",
           "MAX_TIMELINE_SLOTS", "SERVING_TERMS"]

#: Reader-facing names of the strategies in ``Communication.strategy``.
STRATEGY_NAMES = {"tensor": "tensor (TP)", "pipeline": "pipeline (PP)", "data": "data (DP/ZeRO)",
                  "context": "context (CP)", "expert": "expert (EP)"}
#: Timelines longer than this (slots) are not drawn: the boxes would be too thin to read.
MAX_TIMELINE_SLOTS = 400
_MAX_TIMELINE_STAGES = 16
_W = 720.0


def _r(x: float) -> float:
    return round(float(x), 1)


def _rect(x, y, w, h, cls, title=None, rx=None) -> dict:
    item = {"t": "rect", "x": _r(x), "y": _r(y), "w": _r(max(w, 0)), "h": _r(max(h, 0)), "cls": cls}
    if rx is not None:
        item["rx"] = _r(rx)
    if title:
        item["title"] = title
    return item


def _text(x, y, s, cls, anchor="start") -> dict:
    return {"t": "text", "x": _r(x), "y": _r(y), "s": str(s), "cls": cls, "anchor": anchor}


def _line(x1, y1, x2, y2, cls) -> dict:
    return {"t": "line", "x1": _r(x1), "y1": _r(y1), "x2": _r(x2), "y2": _r(y2), "cls": cls}


def _path(points_or_d, cls) -> dict:
    return {"t": "path", "d": points_or_d, "cls": cls}


def _head(x: float, y: float, dx: float, dy: float, cls: str) -> dict:
    """A filled arrowhead at (x, y) pointing along (dx, dy)."""
    n = (dx * dx + dy * dy) ** 0.5 or 1.0
    ux, uy = dx / n, dy / n
    bx, by = x - 7 * ux, y - 7 * uy
    px, py = -uy * 3.5, ux * 3.5
    return _path(f"M{_r(x)} {_r(y)}L{_r(bx + px)} {_r(by + py)}L{_r(bx - px)} {_r(by - py)}Z", cls + " atlas-head")


def _arrow(x1, y1, x2, y2, cls: str, both: bool = True) -> list[dict]:
    items = [_line(x1, y1, x2, y2, cls)]
    items.append(_head(x2, y2, x2 - x1, y2 - y1, cls))
    if both:
        items.append(_head(x1, y1, x1 - x2, y1 - y2, cls))
    return items


def _badge(x: float, y: float, n: int) -> list[dict]:
    return [{"t": "circle", "cx": _r(x), "cy": _r(y), "r": 8.0, "cls": "atlas-badge"},
            _text(x, y + 3.5, n, "atlas-badge__n", "middle")]


def _bytes(n: float) -> str:
    return f"{units.format_bytes(n)} ({units.format_bytes(n, 'iec')})"


def crossing_text(c: dict) -> tuple[str, str]:
    """Two lines describing one communication: what moves, and how much, where and how long.

    >>> crossing_text({"strategy": "tensor", "collective": "all-reduce", "what": "layer activations",
    ...                "group_size": 8, "bytes_per_step": 1e9, "intra_node": True, "time_s": 0.01})
    ('tensor (TP) · all-reduce · layer activations', '8 GPUs · 1 GB (953.7 MiB) per GPU per step · inside a node · 10 ms')
    """
    where = "inside a node" if c["intra_node"] else "across nodes"
    return (f"{STRATEGY_NAMES.get(c['strategy'], c['strategy'])} · {c['collective']} · {c['what']}",
            f"{c['group_size']} GPUs · {_bytes(c['bytes_per_step'])} per GPU per step · {where} · "
            f"{units.format_time(c['time_s'])}")


# ---------------------------------------------------------------------------- the atlas


def _layers_text(layers: list[int], v: int) -> str:
    if not layers:
        return "no layers"
    if v == 1 and list(layers) == list(range(layers[0], layers[-1] + 1)):
        return f"layers {layers[0] + 1}–{layers[-1] + 1}" if len(layers) > 1 else f"layer {layers[0] + 1}"
    return f"{len(layers)} layers in {v} chunks"


def atlas_layout(plan: dict) -> dict:
    """The atlas drawing of one plan (the dict ``python -m calc plan --json`` prints).

    One model replica is drawn as its pipeline stages (columns; at most four, with
    an ellipsis), each holding its part of the model (embedding, attention, MLP,
    output head) split into tensor-parallel stripes over that stage's GPUs; the
    context-, expert- and data-parallel copies are drawn behind and below. Every
    communication of the plan is one numbered *crossing* (``cls`` ``atlas-crossing``,
    ``data-crossing`` its index) with its arrows and a legend line giving the
    collective, group size, bytes per GPU per step, inside or across nodes, and time.

    >>> from calc.api import evaluate
    >>> from calc.presets import preset
    >>> d = atlas_layout(evaluate("plan", dict(preset("gpt3-175b").inputs)))
    >>> sum(1 for i in d["items"] if i["t"] == "g" and i["cls"].startswith("atlas-crossing"))
    4
    """
    par = plan["parallel"]
    t, p, c, e, d, v = (par[k] for k in ("tensor", "pipeline", "context", "expert", "data", "interleave"))
    gpus, nodes = plan["gpus"], plan["nodes"]
    gpn = gpus // nodes if nodes > 1 else gpus
    strides = plan["rank_strides"]
    stages = {s["stage"]: s for s in plan["stages"]}
    comms = plan["communications"]
    items: list[dict] = []

    title = (f"{gpus} GPUs = data {d} × pipeline {p} × context {c} × expert {e} × tensor {t}"
             f" on {nodes} node{'s' if nodes > 1 else ''}")
    items.append(_text(10, 16, title, "atlas-title"))
    visible: list[int | None] = list(range(p)) if p <= 4 else [0, 1, None, p - 1]
    left, right, gap = 16.0, 56.0, 34.0
    ncol = len(visible)
    colw = (_W - left - right - gap * (ncol - 1)) / ncol
    x_of = [left + i * (colw + gap) for i in range(ncol)]
    y_emb, y_att, y_mlp, y_head, y_dev = 64.0, 92.0, 132.0, 172.0, 212.0
    dev_h = 20.0
    shown_t = min(t, 8)

    # copies behind the replica: context, expert, data
    depth = [(k, n) for k, n in (("context", c), ("expert", e), ("data", d)) if n > 1]
    for j, (kind, n) in reversed(list(enumerate(depth))):
        off = 5.0 * (j + 1)
        items.append(_rect(left + off, 30 - off, _W - left - right, y_dev + dev_h + 22 - 30, "atlas-shadow",
                           f"{n} {kind}-parallel copies of what is drawn", 6))
    items.append(_rect(left - 6, 30, _W - left - right + 12, y_dev + dev_h + 22 - 30, "atlas-replica", None, 6))
    copies = " × ".join(f"{n} {kind}" for kind, n in depth)
    if copies:
        items.append(_text(_W - 4, 44, "× " + copies.replace(" × ", " ×\u2009"), "atlas-small", "end"))

    for i, s in enumerate(visible):
        x = x_of[i]
        if s is None:
            items.append(_text(x + colw / 2, y_mlp, "…", "atlas-ellipsis", "middle"))
            items.append(_text(x + colw / 2, y_mlp + 18, f"stages 2–{p - 2}", "atlas-small", "middle"))
            continue
        st = stages[s]
        items.append(_text(x, 42, f"Stage {s}" if p > 1 else "Every GPU of the replica", "atlas-label"))
        items.append(_text(x, 56, _layers_text(st["layers"], v), "atlas-small"))
        n_layers = len(st["layers"])
        parts = []
        if st["embedding"]:
            parts.append((y_emb, 22, "embedding", "Embedding" + (" (÷t by vocabulary)" if t > 1 else "")))
        parts.append((y_att, 34, "attention", f"Attention × {n_layers}"))
        if st["moe_layers"]:
            mlp = f"MoE MLP × {st['moe_layers']}: {st['experts_per_device']} experts"
        else:
            mlp = f"MLP × {n_layers}"
        parts.append((y_mlp, 34, "mlp", mlp))
        if st["output_head"]:
            parts.append((y_head, 22, "head", "Output head"))
        for y, h, kind, label in parts:
            items.append(_rect(x, y, colw, h, f"atlas-part atlas-part--{kind}",
                               f"{label}; each GPU holds 1/{t} of its weight matrices" if t > 1 else label, 3))
            for k in range(1, shown_t):
                xx = x + k * colw / shown_t
                items.append(_line(xx, y + 2, xx, y + h - 2, "atlas-stripe"))
            items.append(_text(x + 5, y + 14, label, "atlas-part__label"))
        # the GPUs of this stage in replica 0
        for k in range(shown_t):
            rank = s * strides["pipeline"] + k * strides["tensor"]
            w = colw / shown_t
            node = rank // gpn
            items.append(_rect(x + k * w + 1, y_dev, w - 2, dev_h, f"atlas-dev atlas-dev--node{node % 2}",
                               f"GPU {rank} (node {node}): stage {s}, tensor rank {k}", 2))
            if w >= 22:
                items.append(_text(x + k * w + w / 2, y_dev + 14, rank, "atlas-dev__n", "middle"))
        if t > shown_t:
            items.append(_text(x + colw, y_dev - 4, f"{t} GPUs, 8 drawn", "atlas-small", "end"))
        items.append(_text(x, y_dev + dev_h + 14,
                           f"{units.format_bytes(st['memory_total_bytes'])} per GPU", "atlas-small"))

    def col_of(stage: int) -> int:
        for i, s in enumerate(visible):
            if s == stage:
                return i
        return 1  # a stage hidden in the ellipsis is drawn at the column after stage 0

    y_below = y_dev + dev_h + 40
    y_rep = y_below + 36
    legend: list[tuple[int, dict]] = []
    used: dict[tuple[str, int], int] = {}
    for n, comm in enumerate(comms, start=1):
        kind = comm["strategy"]
        col = col_of(comm["stage"])
        slot = used.get((kind, col), 0)
        used[(kind, col)] = slot + 1
        x = x_of[col]
        cls = f"atlas-x atlas-x--{kind}"
        g: list[dict] = []
        if kind == "tensor":
            y = y_dev - 5 - 5 * slot
            g += _arrow(x + 4, y, x + colw - 4, y, cls)
            bx, by = x + colw / 2 + 18 * slot, y
        elif kind == "pipeline" and comm["collective"] == "send-recv":
            y = y_mlp - 4 + 8 * slot
            for i in range(ncol - 1):
                x1, x2 = x_of[i] + colw + 3, x_of[i + 1] - 3
                g += _arrow(x1, y, x2, y, cls + (" atlas-x--elided" if None in visible[i:i + 2] else ""))
            bx, by = x_of[0] + colw + gap / 2, y - 12
        elif kind == "pipeline":  # tied embedding gradients between the first and the last stage
            xl = x_of[-1]
            pts = (f"M{_r(x_of[0] + colw / 2)} {_r(y_emb)}V{_r(22)}H{_r(xl + colw + 8)}"
                   f"V{_r(y_head + 11)}H{_r(xl + colw)}")
            g.append(_path(pts, cls + " atlas-x--open"))
            g.append(_head(xl + colw, y_head + 11, -1, 0, cls))
            g.append(_head(x_of[0] + colw / 2, y_emb, 0, 1, cls))
            bx, by = xl + colw + 8, y_att
        elif kind == "context":
            y = y_att + 17
            xr = x + colw - 6 - 14 * slot
            g.append(_path(f"M{_r(xr - 10)} {_r(y - 10)}Q{_r(xr + 14)} {_r(y)} {_r(xr - 10)} {_r(y + 10)}",
                           cls + " atlas-x--open"))
            g.append(_head(xr - 10, y + 10, -1, 0.4, cls))
            bx, by = xr - 22, y
        elif kind == "expert":
            y = y_mlp + 17
            xr = x + colw - 8 - 16 * slot
            g += _arrow(xr, y + 8, xr + 10, y - 22, cls)
            bx, by = xr - 12, y
        else:  # data: from the replica down to its copies
            xx = left + 40 + 96 * len([k for k in legend if k[1]["strategy"] == "data"])
            g += _arrow(xx, y_dev + dev_h + 24, xx, y_rep - 2, cls)
            bx, by = xx + 14, (y_dev + dev_h + 24 + y_rep) / 2
        g += _badge(bx, by, n)
        line1, line2 = crossing_text(comm)
        items.append({"t": "g", "cls": f"atlas-crossing atlas-crossing--{kind}", "title": f"{n}. {line1}; {line2}",
                      "data": {"crossing": str(n), "strategy": kind}, "items": g})
        legend.append((n, comm))

    if d > 1 or c > 1 or e > 1:
        groups = d * c * e
        items.append(_rect(left - 6, y_rep, _W - left - right + 12, 24, "atlas-copies", None, 6))
        items.append(_text(left + 4, y_rep + 16, f"the other {groups - 1} copies of this replica "
                                                 f"(data × context × expert = {groups}): same layers, other tokens",
                           "atlas-small"))
    y = y_rep + 44
    if not legend:
        items.append(_text(10, y, "Nothing crosses a device boundary: one GPU holds the whole model.", "atlas-label"))
        y += 20
    for n, comm in legend:
        line1, line2 = crossing_text(comm)
        items += _badge(18, y - 4, n)
        items.append(_text(32, y, line1, "atlas-legend"))
        items.append(_text(32, y + 15, line2, "atlas-small"))
        y += 36
    mem = plan["memory_per_device"]
    items.append(_text(10, y + 4, f"Step {units.format_time(plan['step_time_s'])}; most loaded GPU (stage "
                                  f"{mem['stage']}): {_bytes(mem['total_bytes'])} of {_bytes(mem['capacity_bytes'])}"
                                  f"{'' if mem['fits'] else ' — does not fit'}", "atlas-label"))
    return {"w": _W, "h": _r(y + 16), "title": "Atlas: " + title,
            "desc": f"{len(comms)} kinds of transfer cross device boundaries; the table below lists them.",
            "items": items}


# ---------------------------------------------------------------------------- pipeline timelines

_KIND_TITLES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved 1F1B"}


def _hatch(x: float, y: float, w: float, h: float, step: float = 5.0) -> str:
    """Diagonal hatch lines clipped to a rectangle, as one path (backward passes)."""
    parts = []
    k = x - h
    while k < x + w:
        t0, t1 = max(0.0, x - k), min(h, x + w - k)
        if t1 > t0:
            parts.append(f"M{_r(k + t0)} {_r(y + h - t0)}L{_r(k + t1)} {_r(y + h - t1)}")
        k += step
    return "".join(parts)


def timeline_layout(sched: dict, kind: str, stages: int, microbatches: int, interleave: int) -> dict:
    """Stages × time slots of one generated schedule (``python -m calc schedule --json``).

    Forward passes are plain boxes labelled ``F``; backward passes are hatched and
    labelled ``B`` (shape and text, not only colour); the microbatch sets the colour
    class ``tl-mbK`` (K = microbatch mod 8). Idle slots are drawn as bubbles.

    >>> from calc.api import evaluate
    >>> s = evaluate("schedule", {"kind": "1f1b", "pipeline_parallel": "4", "microbatches": "8"})
    >>> d = timeline_layout(s, "1f1b", 4, 8, 1)
    >>> sum(1 for i in d["items"] if i["t"] == "rect" and i["cls"].startswith("tl-op ")), d["h"] > 100
    (64, True)
    """
    p, m, v = stages, microbatches, interleave
    makespan, ideal = sched["makespan_slots"], sched["ideal_slots"]
    ops = sched["ops"]
    frac, share = sched["bubble_fraction"], sched["bubble_share"]
    head = (f"{_KIND_TITLES[kind]}: p = {p}, m = {m}" + (f", v = {v}" if kind == "interleaved" else "")
            + f"; {makespan} slots for {ideal} of work per stage")
    sub = f"bubble {frac:.1%} of the ideal time (Megatron), {share:.1%} of the total (GPipe)"
    items = [_text(8, 16, head, "tl-title"), _text(8, 32, sub, "tl-sub")]
    if makespan > MAX_TIMELINE_SLOTS or p > _MAX_TIMELINE_STAGES:
        items.append(_text(8, 54, f"Too long to draw legibly ({makespan} slots, {p} stages; drawn up to "
                                  f"{MAX_TIMELINE_SLOTS} slots and {_MAX_TIMELINE_STAGES} stages). "
                                  "The fractions above are still computed.", "tl-sub"))
        return {"w": _W, "h": 64.0, "title": head, "desc": sub, "items": items}
    x0, y0, rh = 64.0, 44.0, 22.0
    sw = (_W - x0 - 8) / makespan
    for s in range(p):
        y = y0 + s * (rh + 4)
        items.append(_text(x0 - 6, y + 15, f"stage {s}", "tl-stage", "end"))
        busy = sorted((o["start"], o["start"] + o["duration"]) for o in ops if o["stage"] == s)
        t = 0
        for a, b in busy + [(makespan, makespan)]:
            if a > t:
                items.append(_rect(x0 + t * sw, y, (a - t) * sw, rh, "tl-idle", f"stage {s} idle, slots {t}–{a}"))
            t = max(t, b)
    for o in ops:
        y = y0 + o["stage"] * (rh + 4)
        x, w = x0 + o["start"] * sw + 0.5, o["duration"] * sw - 1
        fwd = o["kind"] == "forward"
        mb = o["microbatch"]
        chunk = f" chunk {o['chunk']}" if kind == "interleaved" else ""
        cls = f"tl-op tl-op--{'fwd' if fwd else 'bwd'} tl-mb{mb % 8}"
        items.append(_rect(x, y, w, rh, cls, f"{'forward' if fwd else 'backward'} of microbatch {mb + 1}{chunk} "
                                             f"on stage {o['stage']}, slots {o['start']}–{o['start'] + o['duration']}"))
        if not fwd:
            items.append(_path(_hatch(x, y, w, rh), "tl-hatch"))
        label = ("F" if fwd else "B") + str(mb + 1) + ("abcdefgh"[o["chunk"]] if kind == "interleaved"
                                                       and o["chunk"] < 8 else "")
        if w >= 6.5 * len(label) + 2:
            items.append(_text(x + w / 2, y + 15, label, "tl-op__label", "middle"))
    y_axis = y0 + p * (rh + 4) + 4
    step = max(1, round(makespan / 12))
    for k in range(0, makespan + 1, step):
        items.append(_line(x0 + k * sw, y_axis - 2, x0 + k * sw, y_axis + 2, "tl-tick"))
        items.append(_text(x0 + k * sw, y_axis + 14, k, "tl-sub", "middle"))
    items.append(_text(x0, y_axis + 30, "time slots (a forward takes 1, a backward 2); F forward, B backward "
                                        "(hatched), grey: bubble", "tl-sub"))
    return {"w": _W, "h": _r(y_axis + 40), "title": head, "desc": sub, "items": items}


# ---------------------------------------------------------------------------- memory bars

_TERMS = MEMORY_TERMS
#: The terms of a serving device's memory (``python -m calc infer``'s ``memory_per_device``).
SERVING_TERMS = (("params", "weights"), ("kv_cache", "KV cache"), ("activations", "prefill activations"),
                 ("reserve", "reserve (CUDA context, NCCL, fragmentation)"))


def memory_bars(mem: dict, terms: tuple[tuple[str, str], ...] = _TERMS) -> dict:
    """One GPU's memory stacked by component against the device's capacity (``memory_per_device``).

    ``terms`` names the components, ``(key, label)`` with ``mem[key + "_bytes"]`` each: training's
    by default, :data:`SERVING_TERMS` for a serving plan.

    >>> d = memory_bars({"params_bytes": 4e10, "grads_bytes": 0, "optimizer_bytes": 2e10,
    ...                  "activations_bytes": 1e10, "buffers_bytes": 0, "total_bytes": 7e10,
    ...                  "capacity_bytes": 8e10, "binding_term": "params", "fits": True, "stage": 0})
    >>> [i["cls"] for i in d["items"] if i["t"] == "rect"][:4]
    ['mem-track', 'mem-seg mem-seg--params mem-seg--binding', 'mem-seg mem-seg--optimizer', 'mem-seg mem-seg--activations']
    """
    total, cap = mem["total_bytes"], mem["capacity_bytes"]
    top = max(total, cap) * 1.04 or 1.0
    x0, y0, bw, bh = 10.0, 40.0, _W - 20, 40.0
    scale = bw / top
    state = "fits" if mem["fits"] else "does not fit"
    head = (f"One GPU of stage {mem['stage']}: {_bytes(total)} of {_bytes(cap)} — {state}; "
            f"largest term: {dict(terms)[mem['binding_term']]}")
    items = [_text(8, 18, head, "mem-title"), _rect(x0, y0, bw, bh, "mem-track", None, 3)]
    x = x0
    legend = []
    for key, label in terms:
        n = mem.get(f"{key}_bytes", 0.0)
        if n <= 0:
            continue
        w = n * scale
        cls = f"mem-seg mem-seg--{key}" + (" mem-seg--binding" if key == mem["binding_term"] else "")
        items.append(_rect(x, y0, w, bh, cls, f"{label}: {_bytes(n)}"))
        if w > 8 * len(label):
            items.append(_text(x + 4, y0 + 25, label, "mem-seg__label"))
        x += w
        legend.append((key, label, n))
    xc = x0 + cap * scale
    items.append(_line(xc, y0 - 12, xc, y0 + bh + 12, "mem-capacity"))
    items.append(_text(min(xc, _W - 10), y0 + bh + 26, f"device memory {_bytes(cap)}", "mem-sub",
                       "end" if xc > _W / 2 else "start"))
    y = y0 + bh + 50
    for key, label, n in legend:
        items.append(_rect(10, y - 10, 12, 12, f"mem-seg mem-seg--{key}", None))
        share = n / total if total else 0.0
        items.append(_text(28, y, f"{label}: {_bytes(n)} ({share:.0%})", "mem-sub"))
        y += 18
    return {"w": _W, "h": _r(y), "title": head, "desc": "Stacked bar of one GPU's memory by component; "
            "the vertical line is the device's memory. The table lists the same.", "items": items}


# ---------------------------------------------------------------------------- accuracy


def _log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2, 5 × 10^k between ``lo`` and ``hi``.

    >>> _log_ticks(0.3, 30)
    [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
    """
    import math

    out = []
    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1.0, 2.0, 5.0):
            x = m * 10.0**k
            if lo <= x <= hi:
                out.append(round(x, 10))
    return out


def accuracy_chart(runs: list[dict], groups: list[str], band: float = 0.15) -> dict:
    """Predicted against measured step time, log-log, one point per run, with ``y = x`` and a ±``band`` region.

    ``runs`` are ``python -m calc validate``'s rows (``name``, ``group``, ``measured_step_s``,
    ``predicted_step_s``, ``error``); ``groups`` orders the legend and the point styles.

    >>> d = accuracy_chart([{"name": "a", "group": "g", "measured_step_s": 1.0, "predicted_step_s": 1.1,
    ...                      "error": 0.1}], ["g"])
    >>> [i["title"] for i in d["items"] if i["t"] == "g" and "title" in i]
    ['a: measured 1 s, predicted 1.1 s (+10.0 %)']
    """
    import math

    values = [r[k] for r in runs for k in ("measured_step_s", "predicted_step_s")]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    x0, y0, side = 70.0, 34.0, 420.0
    span = math.log10(hi) - math.log10(lo)

    def pos(v: float) -> float:
        return (math.log10(v) - math.log10(lo)) / span * side

    items = [_rect(x0, y0, side, side, "acc-frame")]
    for tick in _log_ticks(lo, hi):
        p = pos(tick)
        label = f"{tick:g} s" if tick >= 1 else units.format_time(tick)
        items += [_line(x0 + p, y0 + side, x0 + p, y0 + side + 5, "acc-axis"),
                  _text(x0 + p, y0 + side + 18, label, "acc-tick", "middle"),
                  _line(x0 - 5, y0 + side - p, x0, y0 + side - p, "acc-axis"),
                  _text(x0 - 8, y0 + side - p + 4, label, "acc-tick", "end")]
    # y = x and the band around it, clipped to the frame
    for factor, cls in ((1.0 + band, "acc-band"), (1.0 - band, "acc-band"), (1.0, "acc-diag")):
        a, b = max(lo, lo / factor), min(hi, hi / factor)  # y = factor·x inside the frame
        items.append(_line(x0 + pos(a), y0 + side - pos(a * factor), x0 + pos(b), y0 + side - pos(b * factor), cls))
    index = {g: i for i, g in enumerate(groups)}
    for r in runs:
        cx, cy = x0 + pos(r["measured_step_s"]), y0 + side - pos(r["predicted_step_s"])
        title = (f"{r['name']}: measured {units.format_time(r['measured_step_s'])}, predicted "
                 f"{units.format_time(r['predicted_step_s'])} ({100 * r['error']:+.1f} %)")
        items.append({"t": "g", "cls": f"acc-pt acc-pt--{index[r['group']]}", "title": title,
                      "items": [{"t": "circle", "cx": _r(cx), "cy": _r(cy), "r": 4.0, "cls": "acc-dot"}]})
    items += [_text(x0 + side / 2, y0 + side + 38, "measured step time (log scale)", "acc-label", "middle"),
              _text(x0, y0 - 10, "predicted step time (log scale)", "acc-label")]
    lx, ly = x0 + side + 24, y0 + 10
    for g in groups:
        n = sum(1 for r in runs if r["group"] == g)
        items.append({"t": "g", "cls": f"acc-pt acc-pt--{index[g]}",
                      "items": [{"t": "circle", "cx": _r(lx + 5), "cy": _r(ly - 4), "r": 4.0, "cls": "acc-dot"}]})
        items.append(_text(lx + 16, ly, f"{g} ({n})", "acc-legend"))
        ly += 18
    items += [_line(lx, ly + 6, lx + 12, ly + 6, "acc-diag"), _text(lx + 16, ly + 10, "predicted = measured",
                                                                      "acc-legend"),
              _line(lx, ly + 24, lx + 12, ly + 24, "acc-band"),
              _text(lx + 16, ly + 28, f"±{round(100 * band)} %", "acc-legend")]
    title = f"Predicted against measured step time, {len(runs)} runs"
    return {"w": _W, "h": _r(y0 + side + 50), "title": title,
            "desc": "One point per measured run, predicted step time against measured, both on log scales; points "
                    "on the diagonal are exact, the dashed lines are ±15 %. The table below lists every run.",
            "items": items}


# ---------------------------------------------------------------------------- serving: latency and throughput


def _nice_ticks(top: float, n: int = 4) -> list[float]:
    """0 and multiples of 1, 2 or 5 × 10^k up to ``top`` (about ``n`` of them).

    >>> _nice_ticks(7.3), _nice_ticks(0.042)
    ([0.0, 2.0, 4.0, 6.0], [0.0, 0.02, 0.04])
    """
    import math

    if top <= 0:
        return [0.0]
    raw = top / n
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(k * mag for k in (1.0, 2.0, 5.0, 10.0) if k * mag >= raw)
    return [round(i * step, 12) for i in range(int(top / step + 1e-9) + 1)]


class _ServingAxes:
    """Where the serving chart puts a batch (log2 across) and a value (linear up) in either panel."""

    X0, X1, TOP, PANEL, GAP = 78.0, _W - 20, 44.0, 150.0, 56.0

    def __init__(self, points: list[dict]) -> None:
        import math

        self._log2 = math.log2
        bmin, self.bmax = min(p["batch"] for p in points), max(p["batch"] for p in points)
        self.bmin = bmin
        self.lo, self.hi = math.log2(bmin), max(math.log2(self.bmax), math.log2(bmin) + 1)
        self.panels = {"latency": (self.TOP, max(p["decode_time_per_token_s"] for p in points) * 1.1),
                       "tokens": (self.TOP + self.PANEL + self.GAP,
                                  max(p["tokens_per_s_per_replica"] for p in points) * 1.1)}

    def x(self, b: float) -> float:
        return self.X0 + (self._log2(b) - self.lo) / (self.hi - self.lo) * (self.X1 - self.X0)

    def y(self, v: float, panel: str) -> float:
        y_panel, top = self.panels[panel]
        return y_panel + self.PANEL - v / top * self.PANEL

    @property
    def bottom(self) -> float:
        return self.panels["tokens"][0] + self.PANEL


def _serving_frame(ax: _ServingAxes) -> list[dict]:
    """The two panels with their value ticks, and the batch axis with its powers of two."""
    items = []
    for panel, label, fmt in (("latency", "inter-token latency", units.format_time),
                              ("tokens", "generated tokens/s per replica", lambda v: units.format_count(round(v)))):
        y_panel, top = ax.panels[panel]
        items += [_rect(ax.X0, y_panel, ax.X1 - ax.X0, ax.PANEL, "sv-frame"),
                  _text(ax.X0, y_panel - 8, label, "sv-label")]
        for tick in _nice_ticks(top / 1.1):
            yy = ax.y(tick, panel)
            items += [_line(ax.X0 - 4, yy, ax.X1, yy, "sv-grid"), _text(ax.X0 - 7, yy + 4, fmt(tick), "sv-tick", "end")]
    k = 0
    while 2**k <= ax.bmax:
        if 2**k >= ax.bmin:
            xx = ax.x(2**k)
            items += [_line(xx, ax.bottom, xx, ax.bottom + 4, "sv-axis"),
                      _text(xx, ax.bottom + 16, str(2**k), "sv-tick", "middle")]
        k += 1 if ax.bmax < 2**12 else 2
    items.append(_text((ax.X0 + ax.X1) / 2, ax.bottom + 34, "batch: sequences decoded together (log scale)",
                       "sv-label", "middle"))
    return items


def _serving_series(ax: _ServingAxes, points: list[dict], batch: int) -> list[dict]:
    """The floor, latency and throughput lines, one titled point per batch, and the current batch's line."""
    items = []
    for key, panel, cls in (("decode_floor_s", "latency", "sv-line sv-line--floor"),
                            ("decode_time_per_token_s", "latency", "sv-line sv-line--latency"),
                            ("tokens_per_s_per_replica", "tokens", "sv-line sv-line--tokens")):
        items.append(_path("".join(f"{'M' if i == 0 else 'L'}{_r(ax.x(p['batch']))} {_r(ax.y(p[key], panel))}"
                                   for i, p in enumerate(points)), cls))
    for p in points:
        title = (f"batch {p['batch']}: {units.format_time(p['decode_time_per_token_s'])} per token (floor "
                 f"{units.format_time(p['decode_floor_s'])}), "
                 f"{units.format_count(round(p['tokens_per_s_per_replica']))} tokens/s per replica")
        xx, ya, yt = ax.x(p["batch"]), ax.y(p["decode_time_per_token_s"], "latency"), \
            ax.y(p["tokens_per_s_per_replica"], "tokens")
        items.append({"t": "g", "cls": "sv-pt" + (" sv-pt--current" if p["batch"] == batch else ""), "title": title,
                      "items": [{"t": "circle", "cx": _r(xx), "cy": _r(ya), "r": 4.0, "cls": "sv-dot"},
                                _rect(xx - 3.5, yt - 3.5, 7, 7, "sv-square")]})
    xc = ax.x(batch)
    return items + [_line(xc, ax.TOP, xc, ax.bottom, "sv-current"),
                    _text(min(xc + 4, ax.X1 - 4), ax.TOP + 12, f"batch {batch}", "sv-sub",
                          "start" if xc < ax.X1 - 80 else "end")]


def serving_chart(points: list[dict], batch: int, largest: int) -> dict:
    """Inter-token latency (with its roofline floor) and tokens per second against the batch size.

    ``points`` are ``python -m calc infer`` results at several batch sizes (``batch``,
    ``decode_time_per_token_s``, ``decode_floor_s``, ``tokens_per_s_per_replica``); the batch
    axis is logarithmic (base 2). The latency is a solid line with circles, its floor dashed,
    the throughput a solid line with squares; the current ``batch`` is a vertical line and
    ``largest`` (the most sequences that fit) is named in the title.

    >>> pts = [{"batch": b, "decode_time_per_token_s": 0.004 + b * 1e-5, "decode_floor_s": 0.003 + b * 1e-5,
    ...         "tokens_per_s_per_replica": b / (0.004 + b * 1e-5)} for b in (1, 2, 4, 8)]
    >>> d = serving_chart(pts, 4, 8)
    >>> sum(1 for i in d["items"] if i["t"] == "g" and i["cls"].startswith("sv-pt")), d["title"][:30]
    (4, 'Latency and throughput against')
    """
    ax = _ServingAxes(points)
    head = f"Latency and throughput against batch size (per replica; largest batch that fits: {largest})"
    items = [_text(8, 18, head, "sv-title")] + _serving_frame(ax) + _serving_series(ax, points, batch)
    ly, x0 = ax.bottom + 56, ax.X0
    items += [_line(x0, ly - 4, x0 + 24, ly - 4, "sv-line sv-line--latency"),
              _text(x0 + 30, ly, "latency (circles)", "sv-sub"),
              _line(x0 + 160, ly - 4, x0 + 184, ly - 4, "sv-line sv-line--floor"),
              _text(x0 + 190, ly, "roofline floor (dashed)", "sv-sub"),
              _line(x0 + 350, ly - 4, x0 + 374, ly - 4, "sv-line sv-line--tokens"),
              _text(x0 + 380, ly, "tokens/s (squares)", "sv-sub")]
    return {"w": _W, "h": _r(ly + 12), "title": head,
            "desc": "Two panels sharing a logarithmic batch axis: inter-token latency with its roofline floor above, "
                    "generated tokens per second per replica below; the vertical line marks this plan's batch. "
                    "The table below lists the same points.",
            "items": items}
