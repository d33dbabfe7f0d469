"""hooks/modes.py in-process: the switch between a page's tools, as built, and the markers it refuses."""

from __future__ import annotations

import re

import pytest

from hooks.markers import MARKER_RE, MarkerError, parse
from hooks.modes import LABELS, render_modes
from tests.support import ROOT


def modes(text: str) -> str:
    return render_modes(parse(MARKER_RE.search(text)))


def test_one_radio_per_mode_the_first_checked_the_switch_hidden_until_live():
    """A fieldset hidden until calc-mode.mjs shows it, a legend, one radio per mode naming its tool, the first
    (the default) checked, and an empty polite note; a block of its own for Markdown."""
    html = modes("<!-- calc:modes id=atlas-mode training=atlas inference=atlas-serve -->")
    assert html.startswith("\n\n") and html.endswith("\n\n")
    assert re.search(r'<fieldset class="calc-modes" id="atlas-mode" data-modes="mode" hidden>', html)
    assert "<legend" in html
    radios = re.findall(r'<input type="radio" name="atlas-mode" value="([a-z]+)" data-panel="([a-z-]+)"( checked)?>'
                        r" ([^<]+)</label>", html)
    assert radios == [("training", "atlas", " checked", LABELS["training"]),
                      ("inference", "atlas-serve", "", LABELS["inference"])]
    assert re.search(r'<p class="calc-modes__note" id="atlas-mode-note" role="status" data-modes-note></p>', html)


def test_the_order_of_the_options_sets_the_default_and_key_names_the_address_key():
    """The first option is the default (checked); ``key=`` names the address parameter."""
    html = modes("<!-- calc:modes key=view inference=b training=a -->")
    assert 'data-modes="view"' in html and 'id="modes"' in html
    assert re.search(r'value="inference" data-panel="b" checked', html)
    assert re.search(r'value="training" data-panel="a">', html)


@pytest.mark.parametrize(("text", "message"), [
    ("<!-- calc:modes training=atlas serving=x -->", "unknown mode(s) serving (known: training, inference)"),
    ("<!-- calc:modes training=atlas -->", "modes need at least two MODE=PANEL_ID options, got 1"),
    ("<!-- calc:modes training=atlas inference=atlas -->", "each mode needs a panel id of its own"),
    ("<!-- calc:modes training=atlas inference= -->", "each mode needs a panel id of its own"),
    ("<!-- calc:modes plan training=a inference=b -->", "modes take no words, got 'plan'"),
])
def test_a_bad_marker_fails_the_build_with_the_reason(text, message):
    """Unknown modes, fewer than two, a shared or blank panel id, and stray words are errors, each saying which."""
    with pytest.raises(MarkerError) as info:
        modes(text)
    assert str(info.value) == message


def test_the_atlas_page_offers_both_modes_of_its_two_tools():
    """docs/tools/atlas.md: the switch names the plan tool (default) and the infer tool, both on the page."""
    text = (ROOT / "docs/tools/atlas.md").read_text()
    marker = parse(next(m for m in MARKER_RE.finditer(text) if m["kind"] == "modes"))
    assert list(marker.options.items()) == [("id", "atlas-mode"), ("training", "atlas"), ("inference", "atlas-serve")]
    tools = {parse(m).options["id"]: parse(m).words[0] for m in MARKER_RE.finditer(text) if m["kind"] == "tool"}
    assert tools == {"atlas": "plan", "atlas-serve": "infer"}
