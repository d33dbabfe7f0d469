"""Inline SVG for a drawing of :mod:`calc.diagram` (``svg.html``): the build's side of what ``calc-view.mjs``
draws in the page, item by item, so a figure is the same with JavaScript off.

Used by the tool views (:mod:`hooks.views`), the all-reduce calculator's chart (:mod:`hooks.widgets`) and the
accuracy page (:mod:`hooks.accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import templates

__all__ = ["Node", "node", "svg"]


def _num(x: float) -> str:
    return f"{x:g}"


_ATTRS = {"rect": (("x", "x"), ("y", "y"), ("w", "width"), ("h", "height"), ("rx", "rx")),
          "line": (("x1", "x1"), ("y1", "y1"), ("x2", "x2"), ("y2", "y2")),
          "circle": (("cx", "cx"), ("cy", "cy"), ("r", "r")),
          "text": (("x", "x"), ("y", "y")),
          "path": ()}
_ANCHOR = {"start": "start", "middle": "middle", "end": "end"}


@dataclass(frozen=True, slots=True)
class Node:
    """One drawing item as ``svg.html`` writes it: the tag, its attributes in order, then what it holds."""

    tag: str
    attrs: tuple[tuple[str, str], ...]
    title: str | None = None
    text: str | None = None
    children: tuple["Node", ...] = ()
    closed: bool = False  #: written ``<tag .../>``


def node(item: dict, uid: str) -> Node:
    """The :class:`Node` of one item of a :mod:`calc.diagram` drawing (``t`` names its kind) in the
    drawing whose id is ``uid`` (a pattern's id, and a fill naming it, are ``uid-ID``)."""
    kind = item["t"]
    cls = (("class", item["cls"]),) if item.get("cls") else ()
    title = item.get("title") or None
    if kind == "g":
        data = tuple((f"data-{k}", str(v)) for k, v in sorted(item.get("data", {}).items()))
        return Node("g", cls + data, title, children=tuple(node(i, uid) for i in item["items"]))
    if kind == "boxes":
        h = _num(item["h"])
        return Node("g", (), children=tuple(
            Node("rect", (("x", _num(x / 10)), ("y", _num(y / 10)), ("width", _num(w / 10)), ("height", h),
                          ("class", item["cls"][k])),
                 title or None, closed=not title) for x, y, w, k, title in item["rows"]))  # x, y, w in tenths
    if kind == "pattern":
        attrs = (("id", f"{uid}-{item['id']}"), ("width", _num(item["w"])), ("height", _num(item["h"])),
                 ("patternUnits", "userSpaceOnUse"))
        return Node("defs", (), children=(Node("pattern", attrs, children=tuple(node(i, uid) for i in item["items"])),))
    if kind not in _ATTRS:
        raise ValueError(f"unknown drawing primitive {kind!r}")
    attrs = tuple((name, _num(item[key])) for key, name in _ATTRS[kind] if key in item)
    if kind == "path":
        attrs += (("d", item["d"]),) + ((("fill", f"url(#{uid}-{item['fill']})"),) if "fill" in item else ())
    if kind == "text":
        return Node("text", attrs + (("text-anchor", _ANCHOR[item.get("anchor", "start")]),) + cls, text=item["s"])
    return Node(kind, attrs + cls, title, closed=title is None)


def svg(drawing: dict, uid: str) -> str:
    """Inline SVG for a drawing of :mod:`calc.diagram` (``svg.html``; same drawing, same text)."""
    return templates.render("svg.html", uid=uid, w=drawing["w"], h=drawing["h"], title=drawing["title"],
                            desc=drawing["desc"], items=[node(i, uid) for i in drawing["items"]])
