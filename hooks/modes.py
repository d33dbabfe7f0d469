"""``<!-- calc:modes [id=NAME] [key=mode] MODE=PANEL_ID ... -->``: one page, several tools, one shown.

A radio group (``modes.html``) that chooses which of the page's tools is shown: the atlas's
"Training step" (``plan``) and "Serving (per generated token)" (``infer``). Each option names its
mode and the id of the tool it shows (``training=atlas inference=atlas-serve``); the first is the
default. The labels are :data:`LABELS`: a mode not listed there fails the build.

DOM contract (``calc-mode.mjs`` makes it live; tests rely on it):

- the ``<fieldset data-modes="KEY">`` is rendered ``hidden``: without JavaScript every tool is
  shown one after the other, each under its own title; the script shows the switch and hides
  (the ``hidden`` attribute) every tool but the chosen one;
- each radio has ``value="MODE"`` and ``data-panel="PANEL_ID"``; the first is checked (the default);
- the tools follow the switch on the page, the default first, and no other tool does: when scripts
  run, a rule of ``atlas.css`` hides every tool after the first while the switch is still hidden, so
  the other modes' long tools cost no style or layout at load (issue 15);
- the address holds ``KEY=MODE`` (absent for the default), and a refused value is explained in
  the ``role="status"`` note of the switch (``data-modes-note``).
"""

from __future__ import annotations

from . import templates
from .markers import Marker, MarkerError

__all__ = ["LABELS", "render_modes", "RENDERERS"]

#: Every mode a page may offer, and what its radio says.
LABELS = {"training": "Training step", "inference": "Serving (per generated token)"}


def render_modes(marker: Marker) -> str:
    """The switch: a legend, one radio per mode (the first checked), the note for a refused mode."""
    uid = marker.take("id") or "modes"
    key = marker.take("key") or "mode"
    if marker.words:
        raise MarkerError(f"modes take no words, got {' '.join(marker.words)!r}")
    panels = {name: marker.take(name) for name in list(marker.options)}
    unknown = [name for name in panels if name not in LABELS]
    if unknown:
        raise MarkerError(f"unknown mode(s) {', '.join(unknown)} (known: {', '.join(LABELS)})")
    if len(panels) < 2:
        raise MarkerError(f"modes need at least two MODE=PANEL_ID options, got {len(panels)}")
    if len(set(panels.values())) < len(panels) or not all(panels.values()):
        raise MarkerError("each mode needs a panel id of its own")
    modes = [{"value": name, "label": LABELS[name], "panel": panel} for name, panel in panels.items()]
    html = templates.render("modes.html", uid=uid, key=key, modes=modes)
    return f"\n\n{html}\n\n"


RENDERERS = {"modes": render_modes}
