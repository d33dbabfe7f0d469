"""hooks/views.py in-process: the tool marker's HTML, its figures and its tables."""

from __future__ import annotations

import json
from html import escape
from html.parser import HTMLParser

from calc.api import COMMANDS, evaluate
from calc.presets import INFERENCE_DEFAULT, INFERENCE_PRESETS, PRESETS
from hooks.markers import MARKER_RE, parse
from hooks.table_frames import frame_tables
from hooks.views import preset_inputs, render_presets, render_tool_marker, render_view, table_html


def render(text: str) -> str:
    return render_tool_marker(parse(MARKER_RE.search(text)))


def test_tool_marker_renders_the_dom_contract():
    """The tool marker gives data-calc, named fields, data-result values equal to the CLI's JSON, and the view."""
    html = render("<!-- calc:tool plan id=atlas preset=gpt3-175b presets=all -->")
    result = evaluate("plan", dict(PRESETS["gpt3-175b"].inputs))
    assert 'data-calc="plan"' in html and 'data-state="static"' in html and "data-view" in html
    for p in COMMANDS["plan"].params:
        assert f'name="{p.name}"' in html
    for key in ("step_time_s", "communications", "memory_per_device"):
        assert f'data-result="{key}" data-value="{escape(json.dumps(result[key]), quote=True)}"' in html
    assert html.count("data-preset=") == len(PRESETS)
    assert "\n\n" not in html.strip()  # one raw-HTML block for Markdown


def test_table_html_links_are_attributes():
    """A link cell becomes an <a href>, its text escaped."""
    out = table_html("t", {"caption": "c", "head": ["a"], "rows": [[{"text": "<x>", "href": "../atlas/?a=1&b=2"}]],
                           "align": "l"})
    assert '<a href="../atlas/?a=1&amp;b=2">&lt;x&gt;</a>' in out


def test_a_views_figures_take_their_drawings_ratio_and_its_tables_no_second_frame():
    """Each figure of a view has its drawing's aspect ratio (its height while the page skips it off screen, tools.css);
    each table scrolls in its own region, so the build frames none of them again (hooks/table_frames.py)."""
    a = {"w": 720, "h": 312.5, "title": "a", "desc": "a", "items": []}
    b = {"w": 270, "h": 1000, "title": "b", "desc": "b", "items": []}
    t = {"caption": "c", "head": ["a"], "rows": [["1"]], "align": "l"}
    html = frame_tables(render_view({"figures": [a, b], "tables": {"t": t, "u": t}}, "v"), "p.md")
    figures = [m for m in html.split("<figure")[1:]]
    assert [f.split(">", 1)[0] for f in figures] == [' class="tool__figure" style="aspect-ratio: 720 / 312.5;"',
                                                      ' class="tool__figure" style="aspect-ratio: 270 / 1000;"']
    assert html.count('<table data-frame="own">') == 2 and "md-typeset__scrollwrap" not in html


def test_tool_marker_offers_the_serving_presets_and_groups_the_serving_fields():
    """calc:tool infer with presets=all: one button per serving preset, a Serving group, no training presets."""
    html = render(f"<!-- calc:tool infer id=inf preset={INFERENCE_DEFAULT} presets=all -->")
    assert html.count("data-preset=") == len(INFERENCE_PRESETS) and 'data-preset="gpt3-175b"' not in html
    assert ">Serving<" in html and 'name="weight_precision"' in html


class Buttons(HTMLParser):
    """The attributes of every <button>, unescaped as a browser reads them."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[dict] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "button":
            self.found.append(dict(attrs))


def test_each_preset_button_carries_every_field_as_json_and_its_source():
    """A preset button's data-inputs reads back (unescaped) as the preset's fields; its title is the source."""
    cmd = COMMANDS["plan"]
    buttons = Buttons(render_presets(cmd, list(PRESETS), "u")).found
    assert [b["data-preset"] for b in buttons] == list(PRESETS)
    for b in buttons:
        assert json.loads(b["data-inputs"]) == preset_inputs(cmd, b["data-preset"])
        assert b["title"] == PRESETS[b["data-preset"]].source and "disabled" in b
