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
- The model, hardware and training fields are folded behind "Edit the model and hardware"
  (:data:`FOLD`), so the split sits beside the presets, just above the drawing.
- ``plan`` and ``search`` have a *launch panel* (:func:`render_launch`): the plan as each
  framework takes it (:func:`calc.commands.export.launches`, the text ``python -m calc export``
  prints), a choice of framework (and of the planner's row) and a copy button; ``plan`` also
  has the *pin* panel (:func:`render_pin`) where ``calc-pin.mjs`` draws ``calc compare``.
"""

from __future__ import annotations

import json
from dataclasses import replace

from calc.api import COMMANDS, Command, run
from calc.commands.export import launches
from calc.export import TARGETS
from calc.presets import presets_for
from calc.views import page_view, row_inputs

from . import arguments, templates
from .markers import Marker, MarkerError
from .svg import svg
from .widgets import render_form, render_results, render_shell

__all__ = ["table_html", "render_view", "render_tool", "render_tool_marker", "RENDERERS"]

_SECTIONS = {"parallel": "Split", "serving": "Serving", "batch": "Batch", "model": "Model", "hardware": "Hardware",
             "training": "Training", "": "Search"}
_ORDER = tuple(_SECTIONS)


def table_html(name: str, table: dict) -> str:
    """One view table, in a scrolling wrapper (``table.html``; ``data-table`` names it)."""
    align = table["align"]
    return templates.render("table.html", name=name, caption=table["caption"], head=list(zip(table["head"], align)),
                            rows=[list(zip(row, align)) for row in table["rows"]])


def render_view(view: dict, uid: str) -> str:
    """A tool's drawings and tables (``view.html``)."""
    figures = [(svg(d, f"{uid}-fig{i}"), d["w"], d["h"]) for i, d in enumerate(view["figures"])]
    tables = [table_html(name, t) for name, t in view["tables"].items()]
    return templates.render("view.html", uid=uid, figures=figures, tables=tables)


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
    """The buttons that load presets ``names`` (``presets.html``): each with every field's text as JSON."""
    presets = presets_for(cmd.name)
    buttons = [{"name": n, "inputs": json.dumps(preset_inputs(cmd, n), sort_keys=True), "source": presets[n].source,
                "title": presets[n].title} for n in names]
    return templates.render("presets.html", uid=uid, presets=buttons)


#: The field groups folded behind the presets, and the disclosure's label.
FOLD = ("Model", "Hardware", "Training")
FOLD_LABEL = "Edit the model and hardware"


def render_launch(launch: dict[str, dict], uid: str, ranks: list[int] | None = None) -> str:
    """The launch panel (``launch.html``): one ``<pre>`` (or one line of error) per framework, a choice, a copy button.

    ``ranks``: the planner's rows, offered as a second choice (the first is shown).
    """
    frameworks = [{"name": name, "label": " + ".join(t.name for t in TARGETS[name]), "ok": one["ok"],
                   "text": one["text"] if one["ok"] else "", "message": "" if one["ok"] else one["message"]}
                  for name, one in launch.items()]
    return templates.render("launch.html", uid=uid, ranks=ranks, frameworks=frameworks)


def render_pin(uid: str) -> str:
    """The pin panel of the atlas (``pin.html``): pin the current plan, then compare (drawn by ``calc-pin.mjs``)."""
    return templates.render("pin.html", uid=uid)


def render_tool(cmd: Command, uid: str, inputs: dict[str, str], presets: list[str]) -> str:
    """The tool for ``inputs``: presets, form, results, the view and the panels, in the calculator's shell.

    Every piece of markup comes from a template; this only chooses the pieces and joins them
    (a newline between blocks, as Markdown needs nothing else inside one raw-HTML block).
    """
    values, result = run(cmd.name, inputs)
    view = page_view(cmd.name, inputs, values, result)
    form = (render_presets(cmd, presets, uid) + "\n" if presets else "") + render_form(
        form_command(cmd), uid, inputs, FOLD, FOLD_LABEL)
    extra = ""
    if cmd.name == "plan":
        extra = render_launch(view["launch"], uid)
    elif cmd.name == "search" and view["rows"]:
        first = COMMANDS["plan"].parse(row_inputs(view, 0))
        extra = render_launch(launches(first), uid, [r["rank"] for r in view["rows"]])
    pin = render_pin(uid) if cmd.name == "plan" else ""
    outputs = f"{render_results(cmd, result)}\n{pin}{render_view(view, uid)}\n{extra}"
    return render_shell(cmd, uid, cmd.title, form, outputs, extra_class="calc--tool")


def render_tool_marker(marker: Marker) -> str:
    """``calc:tool``: the command's example, or a preset's inputs, overridden by the marker's options.

    Named for its kind, with ``_marker`` because :func:`render_tool` (the tool's HTML) holds the plain name.
    """
    cmd = arguments.command(marker)
    uid = marker.take("id") or f"tool-{cmd.name}"
    base = marker.take("preset")
    names = marker.take("presets")
    known = presets_for(cmd.name)
    presets = list(known) if names == "all" else [n for n in (names or "").split(",") if n]
    for n in presets:
        if n not in known:
            raise MarkerError(f"unknown preset {n!r} (known: {', '.join(known)})")
    inputs = preset_inputs(cmd, base) if base else cmd.fields(cmd.example)
    return render_tool(cmd, uid, arguments.inputs(marker, cmd, base=inputs), presets)


RENDERERS = {"tool": render_tool_marker}
