"""``<!-- calc:tool COMMAND [id=NAME] [preset=NAME] [presets=a,b] [param=value ...] -->``: a tool page.

A calculator with the DOM contract of :mod:`hooks.widgets` (the same form,
status, results and error places, so ``calc-mount.mjs`` makes it live) plus a
*view*: the drawings and tables of :func:`calc.views.page_view`, rendered here
as inline SVG and HTML tables so the page is complete with JavaScript off. The
page's ``calc-view.mjs`` redraws the same view from the worker's answer.

- ``preset=NAME`` takes the default inputs from the command's presets (:func:`calc.presets.presets_for`);
  ``presets=a,b`` (or ``presets=all``) adds buttons that load those presets.
- Fields are grouped by their SPEC.json section, the split first; flags are
  shown as false/true choices.
- Results whose unit is ``json`` keep their ``data-value`` (the CLI's JSON text)
  on a hidden element: the view's tables show them to the reader.
"""

from __future__ import annotations

import json
from dataclasses import replace
from html import escape

from calc.api import COMMANDS, Command, run
from calc.presets import presets_for
from calc.views import page_view

from .markers import Marker, MarkerError
from .widgets import render_form, render_results, render_shell

__all__ = ["svg", "table_html", "render_tool", "RENDERERS"]

_SECTIONS = {"parallel": "Split", "serving": "Serving", "batch": "Batch", "model": "Model", "hardware": "Hardware",
             "training": "Training", "": "Search"}
_ORDER = tuple(_SECTIONS)


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _num(x: float) -> str:
    return f"{x:g}"


_ATTRS = {"rect": (("x", "x"), ("y", "y"), ("w", "width"), ("h", "height"), ("rx", "rx")),
          "line": (("x1", "x1"), ("y1", "y1"), ("x2", "x2"), ("y2", "y2")),
          "circle": (("cx", "cx"), ("cy", "cy"), ("r", "r")),
          "text": (("x", "x"), ("y", "y")),
          "path": ()}
_ANCHOR = {"start": "start", "middle": "middle", "end": "end"}


def _item(item: dict) -> str:
    kind = item["t"]
    cls = f' class="{_attr(item["cls"])}"' if item.get("cls") else ""
    title = f"<title>{escape(item['title'])}</title>" if item.get("title") else ""
    if kind == "g":
        data = "".join(f' data-{_attr(k)}="{_attr(v)}"' for k, v in sorted(item.get("data", {}).items()))
        return f"<g{cls}{data}>{title}{''.join(_item(i) for i in item['items'])}</g>"
    if kind not in _ATTRS:
        raise ValueError(f"unknown drawing primitive {kind!r}")
    attrs = "".join(f' {name}="{_num(item[key])}"' for key, name in _ATTRS[kind] if key in item)
    if kind == "path":
        attrs += f' d="{_attr(item["d"])}"'
    if kind == "text":
        attrs += f' text-anchor="{_ANCHOR[item.get("anchor", "start")]}"'
        return f"<text{attrs}{cls}>{escape(item['s'])}</text>"
    return f"<{kind}{attrs}{cls}>{title}</{kind}>" if title else f"<{kind}{attrs}{cls}/>"


def svg(drawing: dict, uid: str) -> str:
    """Inline SVG for a drawing of :mod:`calc.diagram` (deterministic: same drawing, same text)."""
    return (f'<svg class="draw" viewBox="0 0 {_num(drawing["w"])} {_num(drawing["h"])}" role="img" '
            f'aria-labelledby="{uid}-t {uid}-d" xmlns="http://www.w3.org/2000/svg">'
            f'<title id="{uid}-t">{escape(drawing["title"])}</title><desc id="{uid}-d">{escape(drawing["desc"])}</desc>'
            + "".join(_item(i) for i in drawing["items"]) + "</svg>")


def _cell(cell: object, tag: str, right: bool) -> str:
    cls = ' class="num"' if right else ""
    if isinstance(cell, dict):
        return f'<{tag}{cls}><a href="{_attr(cell["href"])}">{escape(cell["text"])}</a></{tag}>'
    return f"<{tag}{cls}>{escape(str(cell))}</{tag}>"


def table_html(name: str, table: dict) -> str:
    """One view table, in a scrolling wrapper (``data-table`` names it)."""
    align = table["align"]
    num = ' class="num"'
    head = "".join(f'<th{num if a == "r" else ""} scope="col">{escape(h)}</th>' for h, a in zip(table["head"], align))
    rows = "".join("<tr>" + "".join(_cell(c, "td", a == "r") for c, a in zip(row, align)) + "</tr>"
                   for row in table["rows"])
    return (f'<div class="tool__table" data-table="{_attr(name)}" tabindex="0" role="region" '
            f'aria-label="{_attr(table["caption"])}"><table><caption>{escape(table["caption"])}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>")


def render_view(view: dict, uid: str) -> str:
    figures = "".join(f'<figure class="tool__figure">{svg(d, f"{uid}-fig{i}")}</figure>'
                      for i, d in enumerate(view["figures"]))
    tables = "".join(table_html(name, t) for name, t in view["tables"].items())
    return f'<div class="tool__view" data-view id="{uid}-view">{figures}{tables}</div>'


def form_command(cmd: Command) -> Command:
    """The command as the tool's form shows it: grouped by section, split first, flags as choices."""
    params = sorted(cmd.params, key=lambda p: _ORDER.index(p.section))
    shown = tuple(replace(p, group=_SECTIONS[p.section], kind="choice" if p.kind == "flag" else p.kind,
                          choices=("false", "true") if p.kind == "flag" else p.choices) for p in params)
    return replace(cmd, params=shown)


def preset_inputs(cmd: Command, name: str) -> dict[str, str]:
    """Every field of ``cmd`` for preset ``name``: its value, else the field's default (or blank)."""
    presets = presets_for(cmd.name)
    if name not in presets:
        raise MarkerError(f"unknown preset {name!r} (known: {', '.join(presets)})")
    values = {k: x for k, x in presets[name].inputs.items() if k not in _NOT_FROM_PRESETS.get(cmd.name, ())}
    return cmd.fields(values)


#: Preset fields a command's page leaves at their defaults (the planner searches the microbatch and the split).
_NOT_FROM_PRESETS = {"search": ("micro_batch", "data_parallel", "tensor_parallel", "pipeline_parallel",
                                "context_parallel", "expert_parallel", "zero", "sequence_parallel", "recompute",
                                "interleave", "stage_layers")}


def render_presets(cmd: Command, names: list[str], uid: str) -> str:
    presets = presets_for(cmd.name)
    buttons = "".join(
        f'<button type="button" class="md-button tool__preset" disabled data-preset="{_attr(n)}" '
        f'data-inputs="{_attr(json.dumps(preset_inputs(cmd, n), sort_keys=True))}" '
        f'title="{_attr(presets[n].source)}">{escape(presets[n].title)}</button>'
        for n in names)
    return (f'<div class="tool__presets" role="group" aria-label="Presets" id="{uid}-presets">'
            f"<span>Presets:</span>{buttons}</div>")


def render_tool(cmd: Command, uid: str, inputs: dict[str, str], presets: list[str]) -> str:
    values, result = run(cmd.name, inputs)
    view = page_view(cmd.name, inputs, values, result)
    form = (render_presets(cmd, presets, uid) + "\n" if presets else "") + render_form(form_command(cmd), uid, inputs)
    outputs = f"{render_results(cmd, result)}\n{render_view(view, uid)}\n"
    return render_shell(cmd, uid, cmd.title, form, outputs, extra_class="calc--tool")


def render_marker(marker: Marker) -> str:
    if len(marker.words) != 1 or marker.words[0] not in COMMANDS:
        raise MarkerError(f"needs one command name (known: {', '.join(COMMANDS)})")
    cmd = COMMANDS[marker.words[0]]
    uid = marker.take("id") or f"tool-{cmd.name}"
    base = marker.take("preset")
    names = marker.take("presets")
    known = presets_for(cmd.name)
    presets = list(known) if names == "all" else [n for n in (names or "").split(",") if n]
    for n in presets:
        if n not in known:
            raise MarkerError(f"unknown preset {n!r} (known: {', '.join(known)})")
    inputs = preset_inputs(cmd, base) if base else cmd.fields(cmd.example)
    overrides = dict(marker.options)
    marker.options.clear()
    for name in overrides:
        cmd.param(name)  # unknown names fail the build
    return render_tool(cmd, uid, {**inputs, **overrides}, presets)


RENDERERS = {"tool": render_marker}
