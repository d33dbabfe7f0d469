"""Draw lists: the atlas diagram, pipeline timelines, memory bars and charts as plain data.

A *drawing* is a dict ``{"w", "h", "title", "desc", "items"}`` whose items are
primitives with coordinates in a ``w × h`` box (rounded to 0.1), CSS class
names and texts, all computed here:

- ``{"t": "rect", "x", "y", "w", "h", "cls", ["rx"], ["title"]}``
- ``{"t": "line", "x1", "y1", "x2", "y2", "cls"}``
- ``{"t": "path", "d", "cls", ["fill"]}`` (``d`` uses only ``M``, ``L``, ``H``, ``V``, ``Q``, ``Z``;
  ``fill`` names a pattern of the same drawing that paints it)
- ``{"t": "pattern", "id", "w", "h", "items"}``: a tile of ``items`` repeated over what names it
  (``<defs><pattern patternUnits="userSpaceOnUse">``; its element id is the drawing's id, ``-``, ``id``)
- ``{"t": "circle", "cx", "cy", "r", "cls"}``
- ``{"t": "text", "x", "y", "s", "cls", ["anchor"]}``
- ``{"t": "g", "cls", "items", ["title"], ["data"]}`` (``data``: ``data-*`` attributes)
- ``{"t": "boxes", "h", "cls", "rows"}``: many rects of one height ``h`` in a ``g``, one per row
  ``[x, y, w, k, title]`` with class ``cls[k]`` and, unless it is ``""``, a title (a timeline's operations:
  the same drawing as rect items, in a third of the time and half the bytes). ``x``, ``y`` and ``w`` are
  whole tenths of a unit (``645`` is 64.5): JSON writes an integer about four times as fast as a decimal,
  and these are most of the numbers a timeline input sends (issue 15)

A drawing with ``"named_only": true`` has no items: its title, description and size only, for a figure the page
does not draw yet (:func:`timeline_layout` with ``drawn=False``; ``calc-view.mjs`` asks again when it comes near).

The build hook (``hooks/views.py``) turns a drawing into inline SVG; the page
(``calc-view.mjs``) draws the same list with ``createElementNS`` and
``textContent``. Both only place what is here, so every number and label on the
picture is ``calc``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import units
from .pipeline import Op, Schedule
from .plan import MEMORY_TERMS

__all__ = ["atlas_layout", "timeline_layout", "memory_bars", "accuracy_chart", "serving_chart", "allreduce_panels",
           "clip_polyline", "STRATEGY_NAMES", "MAX_TIMELINE_SLOTS", "SERVING_TERMS"]

#: Reader-facing names of the strategies in ``Communication.strategy``.
STRATEGY_NAMES = {"tensor": "tensor (TP)", "pipeline": "pipeline (PP)", "data": "data (DP/ZeRO)",
                  "context": "context (CP)", "expert": "expert (EP)"}
#: Timelines longer than this (slots) are not drawn: the boxes would be too thin to read.
MAX_TIMELINE_SLOTS = 400
_MAX_TIMELINE_STAGES = 16
_W = 720.0


def _r(x: float) -> float:
    """``x`` to the nearest 0.1. As ``round(x * 10) / 10``, not ``round(x, 1)``: the same to the drawing
    (they can differ when ``x * 10`` rounds across a half), and about three times faster in Pyodide,
    where a drawing of the timeline page calls this some 8,000 times per input (issue 15)."""
    return round(x * 10) / 10


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


def crossing_text(c: dict, step: str = "step") -> tuple[str, str]:
    """Two lines describing one communication: what moves, and how much, where and how long.

    >>> crossing_text({"strategy": "tensor", "collective": "all-reduce", "what": "layer activations",
    ...                "group_size": 8, "bytes_per_step": 1e9, "intra_node": True, "time_s": 0.01})
    ('tensor (TP) · all-reduce · layer activations', '8 GPUs · 1 GB (953.7 MiB) per GPU per step · inside a node · 10 ms')
    """
    where = "inside a node" if c["intra_node"] else "across nodes"
    return (f"{STRATEGY_NAMES.get(c['strategy'], c['strategy'])} · {c['collective']} · {c['what']}",
            f"{c['group_size']} GPUs · {_bytes(c['bytes_per_step'])} per GPU per {step} · {where} · "
            f"{units.format_time(c['time_s'])}")


# ---------------------------------------------------------------------------- the atlas


def _layers_text(layers: list[int], v: int) -> str:
    if not layers:
        return "no layers"
    if v == 1 and list(layers) == list(range(layers[0], layers[-1] + 1)):
        return f"layers {layers[0] + 1}–{layers[-1] + 1}" if len(layers) > 1 else f"layer {layers[0] + 1}"
    return f"{len(layers)} layers in {v} chunks"


@dataclass(frozen=True, slots=True)
class _AtlasGrid:
    """Where the atlas places things: the visible stages and the rows of one stage.

    Wide (``w`` = 720): the stages are columns side by side. Narrow (:data:`NARROW_W`): the stages
    are bands stacked top to bottom, each as wide as the drawing. The rows of a stage (``y_emb`` …
    ``y_dev``) are given for a stage whose band starts at y = 30; stage ``i`` is drawn ``y_of[i]``
    lower (0 for every column of the wide layout).
    """

    visible: tuple[int | None, ...]  #: the stages drawn, None for the ellipsis
    x_of: tuple[float, ...]  #: each stage's left edge
    y_of: tuple[float, ...]  #: each stage's shift down from a band at y = 30
    colw: float
    w: float = _W
    narrow: bool = False
    top: float = 30.0  #: the replica's frame, top …
    bottom: float = 254.0  #: … and bottom
    left: float = 16.0
    right: float = 56.0
    gap: float = 34.0
    y_emb: float = 64.0
    y_att: float = 92.0
    y_mlp: float = 132.0
    y_head: float = 172.0
    y_dev: float = 212.0
    dev_h: float = 20.0

    @staticmethod
    def for_stages(p: int) -> "_AtlasGrid":
        visible: tuple[int | None, ...] = tuple(range(p)) if p <= 4 else (0, 1, None, p - 1)
        left, right, gap = 16.0, 56.0, 34.0
        colw = (_W - left - right - gap * (len(visible) - 1)) / len(visible)
        return _AtlasGrid(visible, tuple(left + i * (colw + gap) for i in range(len(visible))),
                          (0.0,) * len(visible), colw)

    @staticmethod
    def stacked(p: int, top: float) -> "_AtlasGrid":
        """At most three stages (the first, an ellipsis, the last), each a band below the last."""
        visible: tuple[int | None, ...] = tuple(range(p)) if p <= 3 else (0, None, p - 1)
        left, right, y_of, y = 12.0, 26.0, [], top
        for s in visible:
            y_of.append(y - 30)
            y += (_STAGE_BAND if s is not None else _ELLIPSIS_BAND) + _BAND_GAP
        return _AtlasGrid(visible, (left,) * len(visible), tuple(y_of), NARROW_W - left - right, NARROW_W, True,
                          top, y - _BAND_GAP, left, right)

    def col_of(self, stage: int) -> int:
        """Where a stage is drawn; a stage hidden in the ellipsis goes to the first drawn stage after stage 0."""
        return next((i for i, s in enumerate(self.visible) if s == stage),
                    next((i for i, s in enumerate(self.visible) if i > 0 and s is not None), 0))

    def band_end(self, i: int) -> float:
        """The bottom of stage ``i``'s band in the narrow layout."""
        return self.y_of[i] + 30 + (_STAGE_BAND if self.visible[i] is not None else _ELLIPSIS_BAND)


#: The narrow atlas's width (user units): at 375 px a phone shows it about 300 px wide, so its
#: 11-unit labels are drawn at 12 px and more (tests/browser/test_browser_layout.py).
NARROW_W = 270.0
_STAGE_BAND, _ELLIPSIS_BAND, _BAND_GAP = 224.0, 48.0, 28.0
#: Widths of a character, in ems, used to wrap text in the narrow layout: a little wider than the
#: average of DejaVu Sans and Liberation Sans, so a wrapped line stays inside the drawing.
_EM_PER_CHAR, _EM_PER_BOLD_CHAR = 0.56, 0.62


def _wrap(s: str, size: float, width: float | None, bold: bool = False) -> list[str]:
    """``s`` in lines of at most ``width`` user units at font ``size`` (one line when width is None).

    Breaks between words; a ``·`` separator stays at the end of its line.

    >>> _wrap("8 GPUs · 1 GB per GPU per step · inside a node", 11, 120)
    ['8 GPUs · 1 GB per', 'GPU per step ·', 'inside a node']
    """
    if width is None:
        return [s]
    most = max(8, int(width / (size * (_EM_PER_BOLD_CHAR if bold else _EM_PER_CHAR))))
    words: list[str] = []
    for word in s.split(" "):
        if word == "·" and words:
            words[-1] += " ·"
        else:
            words.append(word)
    lines = [words[0]]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) <= most:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _lines(x: float, y: float, lines: list[str], cls: str, step: float = 15.0) -> list[dict]:
    return [_text(x, y + k * step, line, cls) for k, line in enumerate(lines)]


def _atlas_copies(g: _AtlasGrid, c: int, e: int, d: int, y_text: float) -> list[dict]:
    """The replica's frame and the context-, expert- and data-parallel copies drawn behind it."""
    items: list[dict] = []
    depth = [(k, n) for k, n in (("context", c), ("expert", e), ("data", d)) if n > 1]
    height = g.bottom - g.top
    for j, (kind, n) in reversed(list(enumerate(depth))):
        off = 5.0 * (j + 1)
        items.append(_rect(g.left + off, g.top - off, g.w - g.left - g.right, height, "atlas-shadow",
                           f"{n} {kind}-parallel copies of what is drawn", 6))
    items.append(_rect(g.left - 6, g.top, g.w - g.left - g.right + 12, height, "atlas-replica", None, 6))
    copies = " × ".join(f"{n} {kind}" for kind, n in depth)
    if copies:
        text = "× " + copies.replace(" × ", " ×\u2009")
        items.append(_text(10, y_text, text, "atlas-small") if g.narrow else
                     _text(g.w - 4, 44, text, "atlas-small", "end"))
    return items


def _atlas_stage(g: _AtlasGrid, i: int, st: dict, s: int, p: int, t: int, v: int, rank_of, gpn: int) -> list[dict]:
    """One stage's column (or band): its parts (embedding, attention, MLP, head) striped by TP, and its GPUs."""
    x, oy = g.x_of[i], g.y_of[i]
    colw, shown_t = g.colw, min(t, 8)
    items = [_text(x, oy + 42, f"Stage {s}" if p > 1 else "Every GPU of the replica", "atlas-label"),
             _text(x, oy + 56, _layers_text(st["layers"], v), "atlas-small")]
    n_layers = len(st["layers"])
    parts = []
    if st["embedding"]:
        parts.append((g.y_emb, 22, "embedding", "Embedding" + (" (÷t by vocabulary)" if t > 1 else "")))
    parts.append((g.y_att, 34, "attention", f"Attention × {n_layers}"))
    mlp = f"MoE MLP × {st['moe_layers']}: {st['experts_per_device']} experts" if st["moe_layers"] \
        else f"MLP × {n_layers}"
    parts.append((g.y_mlp, 34, "mlp", mlp))
    if st["output_head"]:
        parts.append((g.y_head, 22, "head", "Output head"))
    for y, h, kind, label in parts:
        y += oy
        items.append(_rect(x, y, colw, h, f"atlas-part atlas-part--{kind}",
                           f"{label}; each GPU holds 1/{t} of its weight matrices" if t > 1 else label, 3))
        for k in range(1, shown_t):
            xx = x + k * colw / shown_t
            items.append(_line(xx, y + 2, xx, y + h - 2, "atlas-stripe"))
        items.append(_text(x + 5, y + 14, label, "atlas-part__label"))
    y_dev = g.y_dev + oy
    for k in range(shown_t):  # the GPUs of this stage in replica 0
        rank = rank_of(s, k)
        w = colw / shown_t
        node = rank // gpn
        items.append(_rect(x + k * w + 1, y_dev, w - 2, g.dev_h, f"atlas-dev atlas-dev--node{node % 2}",
                           f"GPU {rank} (node {node}): stage {s}, tensor rank {k}", 2))
        if w >= max(22, 7 * len(str(rank)) + 4):
            items.append(_text(x + k * w + w / 2, y_dev + 14, rank, "atlas-dev__n", "middle"))
    if t > shown_t:
        items.append(_text(x + colw, y_dev - 4, f"{t} GPUs, 8 drawn", "atlas-small", "end"))
    items.append(_text(x, y_dev + g.dev_h + 14, f"{units.format_bytes(st['memory_total_bytes'])} per GPU",
                       "atlas-small"))
    return items


def _atlas_sends(g: _AtlasGrid, slot: int, cls: str) -> tuple[list[dict], float, float]:
    """Pipeline sends: arrows from each drawn stage to the next (dotted across the ellipsis)."""
    items: list[dict] = []
    colw = g.colw
    for i in range(len(g.visible) - 1):
        elided = " atlas-x--elided" if None in g.visible[i:i + 2] else ""
        if g.narrow:
            xx = g.left + colw - 24 - 10 * slot
            items += _arrow(xx, g.band_end(i) + 3, xx, g.y_of[i + 1] + 30 - 3, cls + elided)
        else:
            y = g.y_mlp - 4 + 8 * slot
            items += _arrow(g.x_of[i] + colw + 3, y, g.x_of[i + 1] - 3, y, cls + elided)
    if g.narrow:
        return items, g.left + colw - 40 - 10 * slot, g.band_end(0) + _BAND_GAP / 2
    return items, g.x_of[0] + colw + g.gap / 2, g.y_mlp - 16 + 8 * slot


def _atlas_tied(g: _AtlasGrid, cls: str) -> tuple[list[dict], float, float]:
    """Tied embedding gradients between the first and the last stage: a line around the replica."""
    colw, first, last = g.colw, 0, len(g.visible) - 1
    if g.narrow:
        xe, xr = g.left + colw, g.left + colw + 8
        y1, y2 = g.y_of[first] + g.y_emb + 11, g.y_of[last] + g.y_head + 11
        items = [_path(f"M{_r(xe)} {_r(y1)}H{_r(xr)}V{_r(y2)}H{_r(xe)}", cls + " atlas-x--open"),
                 _head(xe, y2, -1, 0, cls), _head(xe, y1, -1, 0, cls)]
        return items, xr, g.y_of[first] + g.y_att
    xl = g.x_of[-1]
    pts = (f"M{_r(g.x_of[0] + colw / 2)} {_r(g.y_emb)}V{_r(22)}H{_r(xl + colw + 8)}"
           f"V{_r(g.y_head + 11)}H{_r(xl + colw)}")
    items = [_path(pts, cls + " atlas-x--open"), _head(xl + colw, g.y_head + 11, -1, 0, cls),
             _head(g.x_of[0] + colw / 2, g.y_emb, 0, 1, cls)]
    return items, xl + colw + 8, g.y_att


def _atlas_crossing(g: _AtlasGrid, comm: dict, slot: int, data_drawn: int, y_rep: float) -> tuple[list[dict], float, float]:
    """The arrows of one communication (by strategy) and where its numbered badge goes."""
    kind, colw = comm["strategy"], g.colw
    col = g.col_of(comm["stage"])
    x, oy = g.x_of[col], g.y_of[col]
    cls = f"atlas-x atlas-x--{kind}"
    if kind == "tensor":
        y = oy + g.y_dev - 5 - 5 * slot
        return _arrow(x + 4, y, x + colw - 4, y, cls), x + colw / 2 + 18 * slot, y
    if kind == "pipeline" and comm["collective"] == "send-recv":
        return _atlas_sends(g, slot, cls)
    if kind == "pipeline":
        return _atlas_tied(g, cls)
    if kind == "context":
        y, xr = oy + g.y_att + 17, x + colw - 6 - 14 * slot
        items = [_path(f"M{_r(xr - 10)} {_r(y - 10)}Q{_r(xr + 14)} {_r(y)} {_r(xr - 10)} {_r(y + 10)}",
                       cls + " atlas-x--open"), _head(xr - 10, y + 10, -1, 0.4, cls)]
        return items, xr - 22, y
    if kind == "expert":
        y, xr = oy + g.y_mlp + 17, x + colw - 8 - 16 * slot
        return _arrow(xr, y + 8, xr + 10, y - 22, cls), xr - 12, y
    # data: from the replica down to its copies
    xx = g.left + 40 + (48 if g.narrow else 96) * data_drawn
    top = g.bottom + 2
    return _arrow(xx, top, xx, y_rep - 2, cls), xx + 14, (top + y_rep) / 2


def _atlas_legend(g: _AtlasGrid, plan: dict, legend: list[tuple[int, dict]], y_rep: float, groups: int,
                  serving: bool) -> tuple[list[dict], float]:
    """Below the replica: the other copies, one numbered line per crossing, and the step and memory.

    Returns the items and the drawing's height.
    """
    items: list[dict] = []
    narrow = g.w - 20 if g.narrow else None
    y = y_rep + 44
    if groups > 1:
        other = "other sequences" if serving else "other tokens"
        lines = _wrap(f"the other {groups - 1} copies of this replica (data × context × expert = {groups}): "
                      f"same layers, {other}", 11, narrow and g.w - g.left - g.right - 8)
        items.append(_rect(g.left - 6, y_rep, g.w - g.left - g.right + 12, 9 + 15 * len(lines), "atlas-copies",
                           None, 6))
        items += _lines(g.left + 4, y_rep + 16, lines, "atlas-small")
        y += 15 * (len(lines) - 1)
    if not legend:
        lines = _wrap("Nothing crosses a device boundary: one GPU holds the whole model.", 12, narrow)
        items += _lines(10, y, lines, "atlas-label")
        y += 20 + 15 * (len(lines) - 1)
    for n, comm in legend:
        line1, line2 = crossing_text(comm, "generated token" if serving else "step")
        first, second = _wrap(line1, 12, narrow and g.w - 36), _wrap(line2, 11, narrow and g.w - 36)
        items += _badge(18, y - 4, n)
        items += _lines(32, y, first, "atlas-legend")
        items += _lines(32, y + 15 * len(first), second, "atlas-small")
        y += 15 * (len(first) + len(second)) + 6
    mem = plan["memory_per_device"]
    step = (f"Decode step (one token for each of the batch's sequences) {units.format_time(plan['decode_time_per_token_s'])}"
            if serving else f"Step {units.format_time(plan['step_time_s'])}")
    lines = _wrap(f"{step}; most loaded GPU (stage {mem['stage']}): {_bytes(mem['total_bytes'])} of "
                  f"{_bytes(mem['capacity_bytes'])}{'' if mem['fits'] else ' — does not fit'}", 12, g.w - 20)
    items += _lines(10, y + 4, lines, "atlas-label")
    return items, y + 16 + 15 * (len(lines) - 1)


def _atlas_crossings(g: _AtlasGrid, comms: list[dict], y_rep: float,
                     serving: bool) -> tuple[list[dict], list[tuple[int, dict]]]:
    """(items, legend) of the numbered crossings: one group per communication, its arrows and badge.

    Crossings of one strategy at one drawn column take successive slots so their arrows do not overlap.
    """
    items: list[dict] = []
    legend: list[tuple[int, dict]] = []
    used: dict[tuple[str, int], int] = {}
    for n, comm in enumerate(comms, start=1):
        kind, col = comm["strategy"], g.col_of(comm["stage"])
        slot = used.get((kind, col), 0)
        used[(kind, col)] = slot + 1
        arrows, bx, by = _atlas_crossing(g, comm, slot, sum(1 for _, k in legend if k["strategy"] == "data"), y_rep)
        line1, line2 = crossing_text(comm, "generated token" if serving else "step")
        items.append({"t": "g", "cls": f"atlas-crossing atlas-crossing--{kind}", "title": f"{n}. {line1}; {line2}",
                      "data": {"crossing": str(n), "strategy": kind}, "items": arrows + _badge(bx, by, n)})
        legend.append((n, comm))
    return items, legend


def atlas_layout(plan: dict, narrow: bool = False) -> dict:
    """The atlas drawing of one plan (the dict ``python -m calc plan --json`` prints), or of a
    serving plan (``python -m calc infer --json``: its crossings are per generated token).

    One model replica is drawn as its pipeline stages (columns; at most four, with
    an ellipsis), each holding its part of the model (embedding, attention, MLP,
    output head) split into tensor-parallel stripes over that stage's GPUs; the
    context-, expert- and data-parallel copies are drawn behind and below. Every
    communication of the plan is one numbered *crossing* (``cls`` ``atlas-crossing``,
    ``data-crossing`` its index) with its arrows and a legend line giving the
    collective, group size, bytes per GPU per step, inside or across nodes, and time.

    ``narrow``: the same picture for a phone, :data:`NARROW_W` wide: the stages stacked top to
    bottom (at most three: the first, an ellipsis, the last) and long lines wrapped. The first
    item is an empty group of class ``atlas-fit atlas-fit--wide`` (or ``--narrow``), by which
    the page's style sheet shows the layout that fits (``tools.css``).

    >>> from calc.api import evaluate
    >>> from calc.presets import preset
    >>> plan = evaluate("plan", dict(preset("gpt3-175b").inputs))
    >>> [sum(1 for i in d["items"] if i["t"] == "g" and i["cls"].startswith("atlas-crossing"))
    ...  for d in (atlas_layout(plan), atlas_layout(plan, narrow=True))]
    [4, 4]
    >>> atlas_layout(plan, narrow=True)["w"]
    270.0
    """
    par = plan["parallel"]
    t, p, c, e, d, v = (par[k] for k in ("tensor", "pipeline", "context", "expert", "data", "interleave"))
    gpus, nodes = plan["gpus"], plan["nodes"]
    gpn = gpus // nodes if nodes > 1 else gpus
    strides = plan["rank_strides"]
    stages = {s["stage"]: s for s in plan["stages"]}
    serving = "decode_time_per_token_s" in plan
    title = (f"{gpus} GPUs = data {d} × pipeline {p} × context {c} × expert {e} × tensor {t}"
             f" on {nodes} node{'s' if nodes > 1 else ''}")
    heading = _wrap(title, 13, NARROW_W - 20, bold=True) if narrow else [title]
    y_copies = 16 + 16 * len(heading)
    g = _AtlasGrid.stacked(p, y_copies + (20 if c * e * d > 1 else -2)) if narrow else _AtlasGrid.for_stages(p)
    items: list[dict] = [{"t": "g", "cls": f"atlas-fit atlas-fit--{'narrow' if narrow else 'wide'}", "items": []},
                         *_lines(10, 16, heading, "atlas-title", 16), *_atlas_copies(g, c, e, d, y_copies)]
    for i, s in enumerate(g.visible):
        if s is None:
            x, y = g.x_of[i] + g.colw / 2, (g.y_of[i] + 30 + 22) if g.narrow else g.y_mlp
            items.append(_text(x, y, "…", "atlas-ellipsis", "middle"))
            items.append(_text(x, y + 18, f"stages {g.visible[i - 1] + 1}–{g.visible[i + 1] - 1}", "atlas-small",
                               "middle"))
            continue
        items += _atlas_stage(g, i, stages[s], s, p, t, v,
                              lambda st, k: st * strides["pipeline"] + k * strides["tensor"], gpn)
    y_rep = g.bottom + 54
    crossings, legend = _atlas_crossings(g, plan["communications"], y_rep, serving)
    items += crossings
    below, height = _atlas_legend(g, plan, legend, y_rep, d * c * e, serving)
    items += below
    kinds = f"{len(plan['communications'])} kinds of transfer cross device boundaries"
    return {"w": g.w, "h": _r(height), "title": ("Serving atlas: " if serving else "Atlas: ") + title,
            "desc": (f"{kinds} for each generated token (one decode step of the batch)" if serving else kinds)
                    + "; the table below lists them.",
            "items": items}


# ---------------------------------------------------------------------------- pipeline timelines

_KIND_TITLES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved 1F1B"}


def _hatch() -> dict:
    """The backward passes' hatch: one diagonal line per 5-unit tile, with its neighbours' corners so the
    tiles join into unbroken lines. A pattern, not lines per box: the view for p = 4, m = 32 had about
    2,700 hatch segments to compute, send and lay out (issue 15)."""
    return {"t": "pattern", "id": "hatch", "w": 5.0, "h": 5.0,
            "items": [{"t": "path", "d": "M0 5L5 0M-1 1L1 -1M4 6L6 4", "cls": "tl-hatch__line"}]}


def _timeline_ops(ops: tuple[Op, ...], kind: str, x0: float, y0: float, rh: float, sw: float) -> list[dict]:
    """A box per forward and backward (``sw`` wide per slot, ``rh`` high per stage row), the backward ones
    hatched by one pattern-filled overlay, then the labels that fit, over both.

    The boxes are one ``boxes`` item, and what is the same for many of them (a slot's x, a row's place, a
    duration's width, the classes) is worked out once: the timeline page redraws up to about 1,000 boxes per
    input, and as rects of their own they took three times as long in Pyodide (issue 15)."""
    rows, backward, labels = [], [], []
    xs = [round((x0 + k * sw + 0.5) * 10) for k in range(max(o.start for o in ops) + 1)] if ops else []  # tenths
    places: dict[int, tuple[int, str, str, float]] = {}  # stage -> box top (tenths), top and bottom as text, label y
    spans: dict[tuple[int, int], tuple[str, str]] = {}  # (start, duration) -> box left and right as text
    widths: dict[int, tuple[int, float]] = {}  # duration (slots) -> box width (drawn, in tenths; exact)
    classes = [f"tl-op tl-op--{'fwd' if fwd else 'bwd'} tl-mb{k}" for fwd in (True, False) for k in range(8)]
    interleaved = kind == "interleaved"
    for stage, chunk_k, mb, op_kind, start, duration in ops:
        if stage not in places:
            y = y0 + stage * (rh + 4)
            places[stage] = (round(y * 10), str(_r(y)), str(_r(y + rh)), _r(y + 15))
        y, top, bottom, label_y = places[stage]
        if duration not in widths:
            widths[duration] = (round(max(duration * sw - 1, 0) * 10), duration * sw - 1)
        w, width = widths[duration]
        x = xs[start]
        fwd = op_kind == "forward"
        chunk = f" chunk {chunk_k}" if interleaved else ""
        rows.append([x, y, w, (0 if fwd else 8) + mb % 8, f"{'forward' if fwd else 'backward'} of microbatch {mb + 1}"
                     f"{chunk} on stage {stage}, slots {start}–{start + duration}"])
        if not fwd:
            if (start, duration) not in spans:
                spans[start, duration] = (str(x / 10), str((x + w) / 10))
            left, right = spans[start, duration]
            backward.append(f"M{left} {top}H{right}V{bottom}H{left}Z")
        if width < 6.5 * 2 + 2:  # not even a two-character label fits (below)
            continue
        label = ("F" if fwd else "B") + str(mb + 1) + ("abcdefgh"[chunk_k] if interleaved and chunk_k < 8 else "")
        if width >= 6.5 * len(label) + 2:
            labels.append(_text(x0 + start * sw + 0.5 + width / 2, label_y, label, "tl-op__label", "middle"))
    items = [{"t": "boxes", "h": _r(rh), "cls": classes, "rows": rows}] if rows else []
    if backward:
        items += [_hatch(), {**_path("".join(backward), "tl-hatch"), "fill": "hatch"}]
    return items + labels


def timeline_layout(sched: Schedule, drawn: bool = True) -> dict:
    """Stages × time slots of one generated schedule (:func:`calc.pipeline.schedule`).

    Forward passes are plain boxes labelled ``F``; backward passes are hatched and
    labelled ``B`` (shape and text, not only colour); the microbatch sets the colour
    class ``tl-mbK`` (K = microbatch mod 8). Idle slots are drawn as bubbles. With ``drawn`` false, the drawing is
    named only (``"named_only"``: its title, description and size, no items).

    >>> from calc.pipeline import schedule
    >>> d = timeline_layout(schedule("1f1b", 4, 8))
    >>> sum(len(i["rows"]) for i in d["items"] if i["t"] == "boxes"), d["h"] > 100
    (64, True)
    >>> {k: v for k, v in timeline_layout(schedule("1f1b", 4, 8), drawn=False).items() if k != "title"} == {
    ...     "w": d["w"], "h": d["h"], "desc": d["desc"], "items": [], "named_only": True}
    True
    """
    kind, p, m, v, ops = sched.kind, sched.stages, sched.microbatches, sched.interleave, sched.ops
    makespan, ideal = sched.makespan_slots, sched.ideal_slots
    frac, share = sched.bubble_fraction, sched.bubble_share
    head = (f"{_KIND_TITLES[kind]}: p = {p}, m = {m}" + (f", v = {v}" if kind == "interleaved" else "")
            + f"; {makespan} slots for {ideal} of work per stage")
    sub = f"bubble {frac:.1%} of the ideal time (Megatron), {share:.1%} of the total (GPipe)"
    too_long = makespan > MAX_TIMELINE_SLOTS or p > _MAX_TIMELINE_STAGES
    x0, y0, rh = 64.0, 44.0, 22.0
    y_axis = y0 + p * (rh + 4) + 4
    h = 64.0 if too_long else _r(y_axis + 40)
    if not drawn:
        return {"w": _W, "h": h, "title": head, "desc": sub, "items": [], "named_only": True}
    items = [_text(8, 16, head, "tl-title"), _text(8, 32, sub, "tl-sub")]
    if too_long:
        items.append(_text(8, 54, f"Too long to draw legibly ({makespan} slots, {p} stages; drawn up to "
                                  f"{MAX_TIMELINE_SLOTS} slots and {_MAX_TIMELINE_STAGES} stages). "
                                  "The fractions above are still computed.", "tl-sub"))
        return {"w": _W, "h": h, "title": head, "desc": sub, "items": items}
    sw = (_W - x0 - 8) / makespan
    by_stage: list[list[tuple[int, int]]] = [[] for _ in range(p)]
    for o in ops:
        by_stage[o.stage].append((o.start, o.start + o.duration))
    for s in range(p):
        y = y0 + s * (rh + 4)
        items.append(_text(x0 - 6, y + 15, f"stage {s}", "tl-stage", "end"))
        busy = sorted(by_stage[s])
        t = 0
        for a, b in busy + [(makespan, makespan)]:
            if a > t:
                items.append(_rect(x0 + t * sw, y, (a - t) * sw, rh, "tl-idle", f"stage {s} idle, slots {t}–{a}"))
            t = max(t, b)
    items += _timeline_ops(ops, kind, x0, y0, rh, sw)
    step = max(1, round(makespan / 12))
    for k in range(0, makespan + 1, step):
        items.append(_line(x0 + k * sw, y_axis - 2, x0 + k * sw, y_axis + 2, "tl-tick"))
        items.append(_text(x0 + k * sw, y_axis + 14, k, "tl-sub", "middle"))
    items.append(_text(x0, y_axis + 30, "time slots (a forward takes 1, a backward 2); F forward, B backward "
                                        "(hatched), grey: bubble", "tl-sub"))
    return {"w": _W, "h": h, "title": head, "desc": sub, "items": items}


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


# ---------------------------------------------------------------------------- the all-reduce chart

#: One panel of the all-reduce chart: its box, and the plotting area inside it (left, top, width, height).
_RING_W, _RING_H = 380.0, 250.0
_RING_PANEL = (62.0, 14.0, 300.0, 180.0)


def clip_polyline(points: list[tuple[float, float]], lo: float, hi: float) -> list[list[tuple[float, float]]]:
    """The parts of the polyline through ``points`` whose ``y`` lies in ``[lo, hi]``, each segment cut where it
    crosses a bound (linear interpolation in the drawing's coordinates, where the log-log curves are straight
    between samples). A curve that leaves the plotting area and comes back is two parts.

    >>> clip_polyline([(0, 0), (10, 10), (20, 0)], 2, 8)
    [[(2.0, 2.0), (8.0, 8.0)], [(12.0, 8.0), (18.0, 2.0)]]
    """
    parts: list[list[tuple[float, float]]] = []
    for (ax, ay), (bx, by) in zip(points, points[1:]):
        t0, t1 = 0.0, 1.0  # the part of the segment a + t·(b − a) inside the bounds
        if ay == by:
            if not lo <= ay <= hi:
                continue
        else:
            ta, tb = (lo - ay) / (by - ay), (hi - ay) / (by - ay)
            t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
            if t0 > t1:
                continue
        start = (ax, ay) if t0 == 0 else (ax + (bx - ax) * t0, ay + (by - ay) * t0)
        end = (bx, by) if t1 == 1 else (ax + (bx - ax) * t1, ay + (by - ay) * t1)
        if parts and parts[-1][-1] == start:
            parts[-1].append(end)
        else:
            parts.append([start, end])
    return [part for part in parts if len(part) > 1]


def _ring_panel(points: list[list[float]], x_ticks: list[list], y_ticks: list[list], x_label: str,
                current: tuple[float, float], crossover: float | None, crossover_label: str, title: str,
                desc: str) -> dict:
    """One panel on log-log axes: the time and its two terms (``points``: ``[x, time, startup, bandwidth]``),
    the ticks calc labelled, the crossover where it is on the axis, the inputs' point."""
    import math

    left, top, width, height = _RING_PANEL
    xs = [q[0] for q in points]
    ys = [q[1] for q in points if q[1] > 0] + [t[0] for t in y_ticks]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = (min(ys), max(ys)) if ys else (1.0, 10.0)  # every time 0 (one rank, or nothing to send)

    def scale(lo: float, hi: float, start: float, end: float):
        a = math.log10(lo)
        span = math.log10(hi) - a or 1.0
        return lambda v: start + (math.log10(v) - a) / span * (end - start)

    x, y = scale(x_lo, x_hi, left, left + width), scale(y_lo, y_hi, top + height, top)
    items = [_rect(left, top, width, height, "chart__frame")]
    for value, label in x_ticks:
        if x_lo <= value <= x_hi:
            items += [_line(x(value), top, x(value), top + height, "chart__grid"),
                      _text(x(value), top + height + 16, label, "chart__tick", "middle")]
    for value, label in y_ticks:
        items += [_line(left, y(value), left + width, y(value), "chart__grid"),
                  _text(left - 4, y(value) + 4, label, "chart__tick", "end")]
    items += [_text(left + width / 2, top + height + 34, x_label, "chart__label", "middle"),
              _text(4, top + height + 34, "time (log)", "chart__tick")]
    for column, cls in ((2, "chart__term chart__term--startup"), (3, "chart__term chart__term--bandwidth"),
                        (1, "chart__time")):
        drawn = [(x(q[0]), y(q[column])) for q in points if q[column] > 0]
        d = "".join("M" + "L".join(f"{_r(px)},{_r(py)}" for px, py in part)
                    for part in clip_polyline(drawn, top, top + height))
        if d:
            items.append(_path(d, cls))
    if not ys:
        items.append(_text(left + width / 2, top + height / 2, "T = 0 s: nothing crosses a link", "chart__note",
                           "middle"))
    if crossover is not None and x_lo <= crossover <= x_hi:
        cx = x(crossover)
        end = cx > left + width / 2
        items += [_line(cx, top, cx, top + height, "chart__crossover"),
                  _text(cx - 4 if end else cx + 4, top + 14, f"crossover {crossover_label}", "chart__note",
                        "end" if end else "start")]
    if current[0] > 0 and current[1] > 0:
        items.append({"t": "circle", "cx": _r(x(current[0])), "cy": _r(y(current[1])), "r": 5.0,
                      "cls": "chart__current"})
    return {"w": _RING_W, "h": _RING_H, "title": title, "desc": desc, "items": items}


def allreduce_panels(chart: dict, time_text: str, regime: str) -> list[dict]:
    """The all-reduce calculator's chart: the ring's time against ranks (payload fixed) and against payload
    (ranks fixed), log-log, each with its startup and bandwidth terms, the crossover and the inputs' point.

    ``chart`` is :func:`calc.series.chart_json`'s; ``time_text`` and ``regime`` the results as the page shows
    them. Curves are clipped to the plotting area (a term far below the time leaves it).

    >>> from calc.series import allreduce_chart, chart_json
    >>> a, b = allreduce_panels(chart_json(allreduce_chart(64, 2**30, 1e11, 5e-6)), "21.77 ms", "bandwidth-bound")
    >>> a["title"]
    'Time against ranks for the payload given: 21.77 ms at 64 ranks; the startup term dominates beyond about 2,147 ranks.'
    >>> [i["s"] for i in b["items"] if i.get("cls") == "chart__note"]
    ['crossover 32 MB']
    """
    ranks, time_s = chart["ranks"], chart["time_s"]
    beyond = "" if chart["crossover_ranks_text"] is None else \
        f"; the startup term dominates beyond about {chart['crossover_ranks_text']} ranks"
    crossover_payload = chart["crossover_payload_text"]
    desc = ("Log-log axes. Solid line: the ring's time T; dashed: its startup term 2(p-1)α and its bandwidth term "
            "2(p-1)/p · n/β; dotted: the crossover, where the two terms are equal; dot: the inputs.")
    return [
        _ring_panel(chart["by_ranks"], chart["ticks"]["ranks"], chart["ticks"]["time_by_ranks"],
                    "ranks p (payload fixed)", (ranks, time_s), chart["crossover_ranks"],
                    f"p ≈ {chart['crossover_ranks_text']}",
                    f"Time against ranks for the payload given: {time_text} at {ranks} ranks{beyond}.", desc),
        _ring_panel(chart["by_payload"], chart["ticks"]["payload"], chart["ticks"]["time_by_payload"],
                    "payload n (ranks fixed)", (chart["payload_bytes"], time_s), chart["crossover_payload_bytes"],
                    str(crossover_payload),
                    f"Time against payload for {ranks} ranks: {time_text} for the payload given ({regime})"
                    + ("" if crossover_payload is None else f"; crossover payload {crossover_payload}") + ".", desc),
    ]
