"""hooks/svg.py in-process: a calc.diagram drawing as the build's inline SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from calc.diagram import atlas_layout
from calc.presets import ATLAS_DEFAULT
from hooks.svg import svg
from tests.test_diagram import SPLITS, plan_for

SVG_NS = "{http://www.w3.org/2000/svg}"


def _parse_svg(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag == SVG_NS + "svg"
    return root


@pytest.mark.parametrize("split", SPLITS)
def test_svg_is_valid_xml_and_deterministic(split):
    """The build's SVG parses as XML, has a title and description, and is byte-identical on a rebuild."""
    plan = plan_for(ATLAS_DEFAULT, **split)
    first, second = svg(atlas_layout(plan), "x"), svg(atlas_layout(plan_for(ATLAS_DEFAULT, **split)), "x")
    assert first == second
    root = _parse_svg(first)
    assert root.find(SVG_NS + "title").text and root.find(SVG_NS + "desc").text
    groups = [g for g in root.iter(SVG_NS + "g") if "atlas-crossing" in g.get("class", "")]
    assert len(groups) == len(plan["communications"])


def test_svg_escapes_text():
    """Text from a drawing is escaped, never markup."""
    drawing = {"w": 10, "h": 10, "title": "<b>", "desc": "&", "items": [
        {"t": "text", "x": 1, "y": 1, "s": "<script>alert(1)</script>", "cls": "a", "anchor": "start"}]}
    out = svg(drawing, "u")
    assert "<script>" not in out and _parse_svg(out).find(SVG_NS + "text").text == "<script>alert(1)</script>"
