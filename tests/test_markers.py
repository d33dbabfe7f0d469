"""Tests for hooks.markers and hooks.tables: marker syntax, rendering, and loud failures."""

import pytest

from hooks.markers import MARKER_RE, MarkerError, parse, replace_markers
from hooks.tables import RENDERERS, Table, build_table
from calc.api import COMMANDS, evaluate


def render(text: str) -> str:
    return replace_markers(text, RENDERERS, "page.md")


def test_value_marker_is_replaced_by_calc_result():
    """calc:value inlines the formatted result that calc computes."""
    out = render("B = <!-- calc:value batch micro_batch=8 accumulation=16 data_parallel=64 show=global_batch -->.")
    assert out == "B = 8,192 examples."


def test_value_marker_raw_format():
    """format=raw prints the JSON value the CLI prints."""
    out = render("<!-- calc:value allreduce ranks=8 payload=1e9 bandwidth=100GB/s startup=5us show=steps format=raw -->")
    assert out == "14"


def test_table_marker():
    """calc:table renders one row per value with result columns."""
    out = render("<!-- calc:table allreduce vary=ranks values=2,8 columns=time_s,regime payload=1GB -->")
    lines = [line for line in out.splitlines() if line]
    assert lines[0] == "| Ranks p | Time | Regime |"
    assert lines[2].startswith("| 2 | ") and lines[3].startswith("| 8 | ")
    assert len(lines) == 4


def test_table_dataclass_as_markdown_escapes_pipes():
    """A pipe in a cell does not break the table."""
    md = Table(("a", "b"), (("x|y", "1"),)).as_markdown()
    assert "x\\|y" in md and "| --- | ---: |" in md


def test_build_table_uses_evaluate():
    """Every cell is what evaluate returns for that row (formatted)."""
    t = build_table(COMMANDS["batch"], "data_parallel", ["1", "64"], ["global_batch"], {"micro_batch": "8", "accumulation": "16"})
    assert t.rows == (("1", "128 examples"), ("64", "8,192 examples"))
    assert evaluate("batch", {"micro_batch": "8", "accumulation": "16", "data_parallel": "64"})["global_batch"] == 8192


@pytest.mark.parametrize(
    "marker, fragment",
    [
        ("<!-- calc:nosuch batch -->", "unknown kind 'nosuch'"),
        ("<!-- calc:value nosuch show=x -->", "unknown command 'nosuch'"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 -->", "needs show=RESULT_KEY"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 show=nope -->", "batch has no result 'nope'"),
        ("<!-- calc:value batch micro_batch=0 data_parallel=1 show=global_batch -->", "micro_batch must be a whole number >= 1, got 0"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 show=global_batch format=fancy -->", "format must be text or raw"),
        ("<!-- calc:table allreduce vary=ranks -->", "needs vary=PARAM"),
        ('<!-- calc:value batch show="x -->', "cannot split its options"),
        ("<!-- calc:value batch a=1 a=2 show=x -->", "option 'a' given twice"),
    ],
)
def test_bad_markers_fail_naming_page_and_marker(marker, fragment):
    """A bad marker or a CalcError raises MarkerError naming the page, the marker and the reason."""
    with pytest.raises(MarkerError) as info:
        render(f"text {marker} text")
    text = str(info.value)
    assert text.startswith("page.md: marker '<!-- calc:")
    assert fragment in text


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
