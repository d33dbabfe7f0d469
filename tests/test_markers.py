"""hooks/markers.py: marker syntax, replacement outside code fences, and loud failures naming page and marker."""

import pytest

from hooks.markers import MARKER_RE, MarkerError, parse, replace_markers
from hooks.tables import RENDERERS


def render(text: str) -> str:
    return replace_markers(text, RENDERERS, "page.md")


def failure(render, marker: str, page: str = "page.md") -> str:
    """The message of the MarkerError ``render`` raises for ``marker`` in prose, checked to name page and marker first."""
    with pytest.raises(MarkerError) as info:
        render(f"text {marker} text")
    assert str(info.value).startswith(f"{page}: marker {marker!r}: ")
    return str(info.value)


@pytest.mark.parametrize(
    "marker, fragment",
    [
        ("<!-- calc:nosuch batch -->", "unknown kind 'nosuch' (known: table, value)"),
        ('<!-- calc:value batch show="x -->', "cannot split its options"),
        ("<!-- calc:value batch a=1 a=2 show=x -->", "option 'a' given twice"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 show=global_batch extra=1 -->", "parameter must be one of"),
    ],
)
def test_bad_markers_fail_naming_page_and_marker(marker, fragment):
    """A marker that cannot be read, or a CalcError, raises MarkerError naming the page, the marker and the reason."""
    assert fragment in failure(render, marker)


def test_markers_inside_code_fences_are_left_alone():
    """Pages can document the syntax inside fenced code."""
    src = "```\n<!-- calc:nosuch -->\n```\n"
    assert render(src) == src


def test_parse_words_and_options():
    """Positional words come before key=value options; quoted values keep spaces."""
    m = parse(MARKER_RE.search('<!-- calc:table batch vary=x label="a b" -->'))
    assert m.words == ("batch",) and m.options == {"vary": "x", "label": "a b"}
    with pytest.raises(MarkerError, match="word 'y' after key=value options"):
        parse(MARKER_RE.search("<!-- calc:table a=1 y -->"))
