"""The site's stylesheet (docs/assets/css/atlas.css)."""

from __future__ import annotations

import re

from tests.support import ROOT

CSS = re.sub(r"/\*.*?\*/", "", (ROOT / "docs/assets/css/atlas.css").read_text(encoding="utf-8"), flags=re.S)


def test_generated_content_needs_no_emoji_font():
    """No `content:` draws a pictograph (it showed as an empty box without an emoji font, issue 10 item 26)."""
    values = re.findall(r"content:\s*([^;}]+)", CSS)
    assert values, "the pattern found no content declarations: is the check still looking?"
    for value in values:
        assert all(ord(ch) < 0x2000 for ch in value), value


def test_every_animation_stops_for_reduced_motion():
    """Each animated rule has a prefers-reduced-motion override that sets animation: none."""
    animated = re.findall(r"([^{}]+)\{[^{}]*\banimation:\s*(?!none)[^;}]+", CSS)
    assert animated, "no animation found: the check is vacuous"
    reduced = re.search(r"@media \(prefers-reduced-motion: reduce\)\s*\{(.*?)\}\s*\}", CSS, flags=re.S)
    assert reduced, "no prefers-reduced-motion block"
    for selector in animated:
        selector = selector.strip()
        assert selector in reduced.group(1) and "animation: none" in reduced.group(1), selector
