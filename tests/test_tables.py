"""hooks/tables.py: calc:value and calc:table give what calc computes, formatted with its unit."""

import pytest

from calc.api import COMMANDS, evaluate, format_result
from hooks.markers import replace_markers
from hooks.tables import RENDERERS, Table, build_table
from tests.test_markers import failure


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


def test_value_marker_reads_the_sequences_command():
    """Published case B2 in prose: GPT-3's 3.2M-token batch at s = 2048, rounded to a multiple of 512."""
    base = "<!-- calc:value sequences target_tokens=3.2e6 seq_len=2048"
    assert render(f"{base} show=sequences -->") == "1,562 sequences"
    assert render(f"{base} multiple_of=512 show=sequences -->") == "1,536 sequences"
    assert render(f"{base} multiple_of=512 show=tokens_per_update -->") == "3,145,728 tokens"


def test_value_marker_reaches_into_a_nested_result():
    """show=a.b reads a field of a nested result, its unit from the field name's suffix."""
    out = render("<!-- calc:value plan inputs=example show=memory_per_device.total_bytes -->")
    total = evaluate("plan", COMMANDS["plan"].example)["memory_per_device"]["total_bytes"]
    assert out == format_result("bytes", total) and "GiB" in out


def test_table_marker_gives_one_row_per_value():
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
        ("<!-- calc:value nosuch show=x -->", "needs one command name, got 'nosuch' (known: batch, "),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 -->", "needs show=RESULT_KEY"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 show=nope -->", "batch has no result 'nope'"),
        ("<!-- calc:value batch micro_batch=0 data_parallel=1 show=global_batch -->",
         "micro_batch must be a whole number >= 1, got 0"),
        ("<!-- calc:value batch micro_batch=8 data_parallel=1 show=global_batch format=fancy -->",
         "format must be text or raw, got 'fancy'"),
        ("<!-- calc:value batch inputs=mine show=global_batch -->", "inputs must be example, got 'mine'"),
        ("<!-- calc:table allreduce vary=ranks -->", "needs vary=PARAM"),
    ],
)
def test_bad_value_and_table_markers_fail_naming_the_reason(marker, fragment):
    """A bad value or table marker, or a CalcError in it, fails the build naming the page, the marker and why."""
    assert fragment in failure(render, marker)
