"""hooks/content.py in-process: the markers for cases, schedules, the command list, names and parameter counts."""

from __future__ import annotations

import pytest

from calc.api import COMMANDS, evaluate, format_result
from calc.errors import CalcError
from hooks.content import RENDERERS, build_cases, build_commands, build_schedule
from hooks.markers import MARKER_RE, MarkerError, parse, replace_markers
from tests.test_markers import failure


def test_schedule_table_matches_the_calc_schedule():
    """The schedule table has 2(p−1) rows and, for p = 3, the first step sends chunk r from rank r."""
    t = build_schedule(3)
    assert len(t.rows) == 4
    assert t.header == ("Step", "Phase", "Rank 0 sends", "Rank 1 sends", "Rank 2 sends")
    assert t.rows[0] == ("1", "reduce-scatter", "chunk 0 → rank 1, added", "chunk 1 → rank 2, added",
                         "chunk 2 → rank 0, added")
    assert t.rows[-1][1] == "all-gather" and t.rows[-1][2].endswith("copied")


def test_cases_table_reproduces_megatron_data_parallel_degrees():
    """Published case B4: GPUs / (TP × PP) for Megatron-LM's Table 1."""
    rows = [("32", "1", "1"), ("64", "2", "1"), ("128", "4", "1"), ("256", "8", "1"), ("512", "8", "2"),
            ("1024", "8", "4"), ("1536", "8", "8"), ("1920", "8", "16"), ("2520", "8", "35"), ("3072", "8", "64")]
    t = build_cases(COMMANDS["batch"], ["gpus", "tensor_parallel", "pipeline_parallel"], [list(r) for r in rows],
                    ["data_parallel"], {"micro_batch": "1"})
    assert [r[-1] for r in t.rows] == [f"{d} replicas" for d in (32, 32, 32, 32, 32, 32, 24, 15, 9, 6)]


def test_cases_table_reaches_into_a_nested_result():
    """A column ``result.field`` is that field of the result, formatted by its name's unit, headed by both names."""
    fixed = {**COMMANDS["plan"].example}
    t = build_cases(COMMANDS["plan"], ["zero"], [["1"], ["3"]], ["memory_per_device.params_bytes"], fixed)
    assert t.header[-1] == "Memory per device (most loaded stage), params"
    for (zero,), row in zip([["1"], ["3"]], t.rows):
        got = evaluate("plan", fixed | {"zero": zero})["memory_per_device"]["params_bytes"]
        assert row[-1] == format_result("bytes", got)
    assert t.rows[0][-1] != t.rows[1][-1]
    with pytest.raises(MarkerError, match="has no field 'memory_per_device.nothing'"):
        build_cases(COMMANDS["plan"], ["zero"], [["1"]], ["memory_per_device.nothing"], fixed)


def _render(text: str) -> str:
    return replace_markers(text, RENDERERS, "test.md")


def test_commands_table_lists_every_command_in_registry_order():
    """One row per command of calc.api.COMMANDS, as --help lists them, with its title."""
    t = build_commands()
    assert t.header == ("Command", "What it computes")
    assert [row[0] for row in t.rows] == [f"`python -m calc {name}`" for name in COMMANDS]
    assert [row[1] for row in t.rows] == [c.title for c in COMMANDS.values()]
    assert _render("<!-- calc:commands -->") == t.as_markdown()


LLAMA3_8B = "layers=32 hidden=4096 heads=32 kv_heads=8 ffn_hidden=14336 gated_mlp=true vocab=128256 seq_len=8192"
GPT3 = "layers=96 hidden=12288 heads=96 vocab=51200 seq_len=2048 biases=true learned_positions=true"


@pytest.mark.parametrize(
    ("model", "show", "expected"),
    [
        (LLAMA3_8B, "total", "8,030,261,248 parameters"),  # Meta's published count
        (LLAMA3_8B, "output_head", f"{128256 * 4096:,} parameters"),  # V·h, untied
        (LLAMA3_8B, "per_dense_layer", f"{2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096:,} parameters"),
        (GPT3, "output_head", f"{51200 * 12288:,} parameters"),
        (GPT3, "per_dense_layer", f"{12 * 12288**2 + 13 * 12288:,} parameters"),  # Eq. 2's per-layer term
        (GPT3 + " tied_embeddings=true", "output_head", "0 parameters"),
    ],
)
def test_params_marker_counts_the_parts_of_a_model(model, show, expected):
    """Parameter counts by part: Llama 3 8B's published total, V·h heads, one block."""
    assert _render(f"<!-- calc:params {model} show={show} -->") == expected


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- calc:params layers=2 hidden=64 heads=4 vocab=100 -->", "show must be one of"),
        ("<!-- calc:params layers=2 hidden=64 heads=4 vocab=100 show=total -->", "needs seq_len=N"),
        ("<!-- calc:params layers=2 hidden=64 heads=4 vocab=100 seq_len=8 gated_mlp=yes show=total -->",
         "gated_mlp must be true or false, got 'yes'"),
        ("<!-- calc:params layers=two hidden=64 heads=4 vocab=100 seq_len=8 show=total -->", "must be whole numbers"),
        ("<!-- calc:params layers=2 hidden=64 heads=5 vocab=100 seq_len=8 show=total -->", "heads"),
        ("<!-- calc:commands batch -->", "takes no command name"),
    ],
)
def test_bad_params_and_commands_markers_fail(marker, message):
    """A bad parameter-count or command-list marker fails the build, naming the reason."""
    with pytest.raises(MarkerError) as e:
        _render(marker)
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- calc:schedule -->", "needs ranks=P"),
        ("<!-- calc:schedule ranks=9 -->", "ranks must be 2 to 8 to fit a page, got 9"),
        ("<!-- calc:schedule ranks=1 -->", "ranks must be 2 to 8 to fit a page, got 1"),
        ("<!-- calc:schedule ranks=x -->", "ranks must be a whole number, got 'x'"),
        ("<!-- calc:schedule allreduce ranks=4 -->", "takes no command name"),
        ("<!-- calc:cases batch vary=gpus values=8 -->", "needs vary=P1,P2"),
        ('<!-- calc:cases batch vary=gpus,tensor_parallel values="8" columns=data_parallel micro_batch=1 -->',
         "has 1 values for 2 parameters"),
        ('<!-- calc:cases batch vary=gpus,tensor_parallel values="8,3" columns=data_parallel micro_batch=1 -->',
         "gpus must be divisible by tensor_parallel × pipeline_parallel × context_parallel = 3, got 8"),
        ("<!-- calc:schedule ranks=4 extra=1 -->", "unknown option(s) extra"),
        ("<!-- calc:cases nope vary=gpus values=8 columns=data_parallel -->", "needs one command name, got 'nope'"),
    ],
)
def test_bad_content_markers_fail_naming_page_and_marker(marker, message):
    """A bad marker fails the build with the page, the marker and the reason."""
    assert message in failure(_render, marker, page="test.md")


def test_schedule_renders_two_to_eight_ranks():
    """2 and 8 ranks render, 2(p−1) steps each; 1 and 9 are refused (above)."""
    assert len(build_schedule(2).rows) == 2
    assert len(build_schedule(8).rows) == 14


def test_parse_keeps_quoted_case_lists_whole():
    """`values="a,b;c,d"` stays one option."""
    m = parse(MARKER_RE.search('<!-- calc:cases batch vary=a,b values="1,2;3,4" columns=x -->'))
    assert m.options["values"] == "1,2;3,4"


def test_calc_errors_are_reported_not_raised_raw():
    """A CalcError inside a content marker becomes a MarkerError (a build failure) that keeps calc's message."""
    with pytest.raises(MarkerError, match=r": micro_batch must be a whole number >= 1, got 0$"):
        _render('<!-- calc:cases batch vary=gpus values="8" columns=data_parallel micro_batch=0 -->')
    assert issubclass(CalcError, ValueError)
