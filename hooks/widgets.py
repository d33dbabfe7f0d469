"""``<!-- calc:calculator COMMAND [id=NAME] [param=value ...] -->``: a calculator.

Rendered at build time as a complete, static HTML form: the default inputs
(the command's ``example``, overridden by the marker's options) and the results
``calc`` computes for them, so the page is correct with JavaScript off. The
page's scripts make it live (see ``docs/assets/js/``).

DOM contract (tests and scripts rely on it):

- the root has ``data-calc="COMMAND"`` and ``data-state="static"`` (the page
  script moves it through ``loading | ready | error | unavailable``);
- each input's ``name`` is the parameter's snake_case name, ``data-default`` its
  default text;
- each result has ``data-result="KEY"`` and ``data-value`` = the JSON text of the
  value exactly as ``python -m calc COMMAND --json`` prints it;
- each input's error text goes in ``#ID-error`` (named by ``aria-describedby``), the
  calculator's state in ``.calc__status`` (``role="status"``, a polite live region);
  the ``<dl class="calc__results">`` has ``data-current="true|false"`` and a visible
  ``.calc__stale`` note that is shown when the results do not match the inputs;
- ``allreduce`` also has ``<figure data-chart data-built>`` (time against ranks and payload, the two
  panels of :func:`calc.views.allreduce_chart_view` as inline SVG for the default inputs; ``data-built``
  until the page's script redraws it for other inputs) and ``<section data-ring>`` (the ring step by
  step, drawn by the page's script).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from calc.api import Command, Param, format_result, run
from calc.views import allreduce_chart_view

from . import arguments, templates
from .markers import Marker
from .svg import svg


@dataclass(frozen=True, slots=True)
class Option:
    """One ``<option>`` of a choice field: its value, its text (``(blank)`` for the blank value)."""

    value: str
    text: str
    selected: bool


@dataclass(frozen=True, slots=True)
class Field:
    """One field as ``field.html`` writes it; ``options`` is None for a text input."""

    id: str
    name: str
    label: str
    value: str
    described: str  #: the ids ``aria-describedby`` names: the help (if any), then the error
    help: str = ""
    placeholder: str = ""
    options: tuple[Option, ...] | None = None


def field(p: Param, uid: str, value: str) -> Field:
    """The :class:`Field` of parameter ``p`` showing ``value``.

    A choice offers a blank first when the parameter has no default and is optional; a text
    field's placeholder is the default, else ``required`` or ``optional``.
    """
    fid = f"{uid}-{p.name}"
    described = f"{fid}-help {fid}-error" if p.help else f"{fid}-error"
    if p.kind == "choice":
        choices = p.choices if p.default is not None or p.required else ("",) + tuple(p.choices)
        options = tuple(Option(c, c or "(blank)", c == value) for c in choices)
        return Field(fid, p.name, p.label, value, described, p.help, options=options)
    placeholder = p.default or ("required" if p.required else "optional")
    return Field(fid, p.name, p.label, value, described, p.help, placeholder)


def render_form(cmd: Command, uid: str, inputs: dict[str, str], fold: tuple[str, ...] = (),
                fold_label: str = "") -> str:
    """The ``<form>`` with one labelled field per parameter, grouped in fieldsets (``form.html``).

    The groups named in ``fold`` come first, folded together in one ``<details class="calc__fold">``
    whose summary is ``fold_label`` (the tool pages: the model and hardware behind the presets).
    """
    groups: dict[str, list[Field]] = {}
    values = cmd.fields(inputs)
    for p in cmd.params:
        groups.setdefault(p.group or "Inputs", []).append(field(p, uid, values[p.name]))
    sets = [{"name": name, "fields": fields} for name, fields in groups.items()]
    folded = [s for name in fold for s in sets if s["name"] == name]
    rest = [s for s in sets if s["name"] not in fold]
    return templates.render("form.html", title=cmd.title, uid=uid, fold_label=fold_label, folded=folded,
                            groups=rest)


def render_results(cmd: Command, result: dict) -> str:
    """The ``<dl>`` of results, each with its raw JSON value and its formatted text (``results.html``).

    Nested results (unit ``json``) keep their value for scripts and tests but are hidden: the
    tool views draw them as diagrams and tables.
    """
    rows = [{"hidden": r.unit == "json", "label": r.label, "key": r.key, "value": json.dumps(result[r.key]),
             "text": format_result(r.unit, result[r.key])} for r in cmd.results]
    return templates.render("results.html", rows=rows)


def render_allreduce_views(uid: str, values: dict, result: dict) -> str:
    """The chart, drawn for these inputs with the page's own :func:`calc.views.allreduce_chart_view`, and the
    place of the ring step-through, which the page's script draws (``allreduce.html``)."""
    chart = allreduce_chart_view(values, result)
    panels = [svg(d, f"{uid}-chart-{name}") for d, name in zip(chart["figures"], ("ranks", "payload"))]
    return templates.render("allreduce.html", uid=uid, panels=panels)


#: Views drawn beside some commands' results.
VIEWS = {"allreduce": render_allreduce_views}


def calculator_html(cmd: Command, uid: str, inputs: dict[str, str]) -> str:
    """The calculator for ``inputs``: the form, the results ``calc`` computes for them, the command's view."""
    values, result = run(cmd.name, inputs)
    return render_shell(cmd, uid, f"{cmd.title} calculator", render_form(cmd, uid, inputs),
                        render_results(cmd, result) + "\n" + (VIEWS[cmd.name](uid, values, result)
                                                               if cmd.name in VIEWS else ""))


def render_shell(cmd: Command, uid: str, title: str, form: str, outputs: str, extra_class: str = "") -> str:
    """The root every calculator and tool shares (``shell.html``): the DOM contract (``data-calc``,
    ``data-state``), its title, the inputs, the status line the script updates, then the outputs;
    blank lines around it, so Markdown leaves it a block of its own."""
    classes = "calc" + (f" {extra_class}" if extra_class else "")
    html = templates.render("shell.html", classes=classes, uid=uid, name=cmd.name, title=title, form=form,
                            outputs=outputs)
    return f"\n\n{html}\n\n"


def render_calculator(marker: Marker) -> str:
    """``calc:calculator``: the command's page example, overridden by the marker's options."""
    cmd = arguments.command(marker)
    uid = marker.take("id") or f"calc-{cmd.name}"
    return calculator_html(cmd, uid, arguments.inputs(marker, cmd, base=dict(cmd.example)))


RENDERERS = {"calculator": render_calculator}
