"""The content pages: navigation, structure, and numbers that come from markers, not from typing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from calc.errors import CalcError
from hooks.content import RENDERERS, build_cases, build_commands, build_schedule
from hooks.markers import MARKER_RE, MarkerError, parse, replace_markers
from hooks.site import all_renderers
from calc.api import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
STRATEGIES = ("data", "tensor", "pipeline", "context", "expert", "sharding", "inference")


def _nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold !!python tags elsewhere; the nav is plain YAML."""


_Loader.add_multi_constructor("", lambda loader, suffix, node: None)
NAV = _nav_pages(yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)["nav"])


def _source(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def _without_markers_and_code(text: str) -> str:
    """The prose a reader sees in the source: markers and fenced code removed."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    return MARKER_RE.sub("", text)


# ---------------------------------------------------------------------------- sources


def test_nav_lists_every_page_and_every_page_exists():
    """Each page of section 4 is in the nav, and every nav entry is a file."""
    expected = {"index.md", "batch.md", "allreduce.md", "tradeoffs.md", "interfaces.md", "quiz.md",
                "history.md", "scope.md", "about.md"} | {f"strategies/{s}.md" for s in STRATEGIES}
    assert expected <= set(NAV)
    for page in NAV:
        assert (DOCS / page).is_file(), page
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert on_disk == set(NAV), "a page exists that the nav does not list (or the reverse)"


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_page_has_the_required_parts(name):
    """Each strategy page: notation, a figure, a formula, a takeaway, questions and sources."""
    text = _source(f"strategies/{name}.md")
    assert "| Symbol | Meaning | Unit |" in text
    assert re.search(r"<svg[^>]*role=\"img\"", text) and "<title" in text
    assert "$$" in text
    assert '!!! tip "Takeaway"' in text
    assert len(re.findall(r'^\?\?\? question "', text, flags=re.M)) >= 1
    assert "**Sources.**" in text
    for heading in ("How the volume scales", "Effect on memory", "When it pays, and when it does not"):
        assert heading in text, heading


@pytest.mark.parametrize("page", ["index.md", "batch.md", "allreduce.md", "tradeoffs.md", "strategies/data.md",
                                  "strategies/sharding.md", "interfaces.md", "quiz.md"])
@pytest.mark.parametrize(
    "result",
    [
        "8192", "8,192",  # the engineering example's global batch
        "1536", "1,536", "3145728", "3,145,728", "1562",  # GPT-3's batch in sequences and tokens
        "17.57",  # the ring all-reduce of case R1
        "2.8 TB", "2.8e12",  # 175B × 16 bytes
        "46.67", "0.047",  # Bekman's DDP example
    ],
)
def test_key_results_are_not_typed_into_the_source(page, result):
    """Results come from markers; the prose of the source never types them."""
    assert result not in _without_markers_and_code(_source(page))


def test_svg_figures_carry_no_digits_except_layout():
    """Hand-drawn figures hold labels only: no computed numbers in their visible text."""
    for page in [f"strategies/{s}.md" for s in STRATEGIES]:
        for svg in re.findall(r"<svg.*?</svg>", _source(page), flags=re.S):
            texts = re.findall(r"<text[^>]*>(.*?)</text>", svg)
            for t in texts:
                # Device, stage, rank and microbatch indices are labels; no decimals or units.
                assert not re.search(r"\d\s*(%|GB|MB|ms|s\b|µs)|\d\.\d", t), (page, t)


def test_every_marker_in_the_pages_renders():
    """Each page's markers render without error through the hook renderers."""
    renderers = all_renderers()
    for page in NAV:
        out = replace_markers(_source(page), renderers, page)
        assert MARKER_RE.search(_without_markers_and_code(out)) is None


def test_calculators_are_placed_once_each_on_their_pages():
    """Each calculator appears once on its concept page and once on its standalone calculator page."""
    placed = {"batch.md": ["batch"], "allreduce.md": ["allreduce"],
              "calculators/batch.md": ["batch"], "calculators/allreduce.md": ["allreduce"]}
    for page in NAV:
        text = _without_code(_source(page))
        expected = placed.get(page, [])
        found = re.findall(r"<!--\s*calc:calculator\s+(\w+)", text)
        assert found == expected, page


def _without_code(text: str) -> str:
    return re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)


def test_engine_todos_are_html_comments():
    """Placeholders for numbers the engine will compute are invisible comments, not prose."""
    for page in NAV:
        for line in _source(page).splitlines():
            if "TODO(engine)" in line:
                assert line.startswith("<!-- TODO(engine):") and line.endswith("-->"), (page, line)


def test_quiz_has_the_brief_question_with_its_options_and_answer():
    """The brief's question, its three options, and the answer with the reason."""
    text = _source("quiz.md")
    block = text.split('??? question "Which strategy splits work inside an individual layer?"', 1)[1]
    block = block.split("\n??? ", 1)[0]
    for option in ("Pipeline parallelism only", "Data replication only", "Tensor parallelism"):
        assert f"- {option}" in block
    assert "**Answer: Tensor parallelism.**" in block
    assert "groups of layers" in block


# ---------------------------------------------------------------------------- hooks/content.py


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


def _render(text: str) -> str:
    return replace_markers(text, RENDERERS, "test.md")


def test_sequences_marker_gpt3():
    """Published case B2: 3.2M tokens at 2048 → 1536 sequences (multiple of 512) = 3,145,728 tokens."""
    assert _render("<!-- calc:sequences tokens=3.2e6 seq_len=2048 -->") == "1,562 sequences"
    assert _render("<!-- calc:sequences tokens=3.2e6 seq_len=2048 multiple_of=512 -->") == "1,536 sequences"
    assert _render("<!-- calc:sequences tokens=3.2e6 seq_len=2048 multiple_of=512 show=tokens -->") == "3,145,728 tokens"


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
        ("<!-- calc:sequences seq_len=2048 -->", "needs tokens=T seq_len=S"),
        ("<!-- calc:sequences tokens=3e6 seq_len=2048 show=both -->", "show must be sequences or tokens, got 'both'"),
        ("<!-- calc:sequences tokens=lots seq_len=2048 -->", "must be numbers"),
        ("<!-- calc:sequences tokens=100 seq_len=2048 -->", "target_tokens must be >= seq_len × multiple_of"),
        ("<!-- calc:cases batch vary=gpus values=8 -->", "needs vary=P1,P2"),
        ('<!-- calc:cases batch vary=gpus,tensor_parallel values="8" columns=data_parallel micro_batch=1 -->',
         "has 1 values for 2 parameters"),
        ('<!-- calc:cases batch vary=gpus,tensor_parallel values="8,3" columns=data_parallel micro_batch=1 -->',
         "gpus must be divisible by tensor_parallel × pipeline_parallel × context_parallel = 3, got 8"),
        ("<!-- calc:sequences tokens=3e6 seq_len=2048 extra=1 -->", "unknown option(s) extra"),
    ],
)
def test_bad_content_markers_fail_naming_page_and_marker(marker, message):
    """A bad marker fails the build with the page, the marker and the reason."""
    with pytest.raises(MarkerError) as e:
        _render(marker)
    assert str(e.value).startswith(f"test.md: marker {marker!r}: ")
    assert message in str(e.value)


def test_schedule_range_both_sides():
    """2 and 8 ranks render; 1 and 9 do not (covered above)."""
    assert len(build_schedule(2).rows) == 2
    assert len(build_schedule(8).rows) == 14


def test_parse_keeps_quoted_case_lists_whole():
    """`values="a,b;c,d"` stays one option."""
    m = parse(MARKER_RE.search('<!-- calc:cases batch vary=a,b values="1,2;3,4" columns=x -->'))
    assert m.options["values"] == "1,2;3,4"


def test_calc_errors_are_reported_not_raised_raw():
    """A CalcError inside a content marker becomes a MarkerError (a build failure), never a traceback."""
    with pytest.raises(MarkerError):
        _render("<!-- calc:sequences tokens=3e6 seq_len=0 -->")
    assert issubclass(CalcError, ValueError)


# ---------------------------------------------------------------------------- the built site


@pytest.fixture(scope="module")
def site(built_site) -> Path:
    """The session's one strict build (tests/conftest.py; tests/test_build.py checks it warns nothing)."""
    return built_site


def _html(site: Path, page: str) -> str:
    if page == "index.md" or page.endswith("/index.md"):
        path = site / page.removesuffix("index.md") / "index.html"
    else:
        path = site / (page.removesuffix(".md") + "/index.html")
    return path.read_text(encoding="utf-8")


def _article(html: str) -> str:
    m = re.search(r"<article[^>]*>(.*)</article>", html, flags=re.S)
    assert m
    return m.group(1)


@pytest.mark.build
def test_every_nav_page_builds(site):
    """Every page in the nav is in the built site, with no marker left outside code."""
    for page in NAV:
        body = _article(_html(site, page))
        body = re.sub(r"<code.*?</code>|<pre.*?</pre>", "", body, flags=re.S)
        assert "calc:" not in body, page


@pytest.mark.build
def test_engineering_example_is_rendered_by_the_marker(site):
    """8,192 examples appears in the batch page's HTML, produced by the marker (not in the source)."""
    assert "8,192 examples" in _html(site, "batch.md")
    assert "8,192" not in _without_markers_and_code(_source("batch.md"))


@pytest.mark.build
def test_allreduce_tables_show_the_startup_term_taking_over(site):
    """Time vs ranks ends latency-bound; time vs payload crosses from latency- to bandwidth-bound."""
    html = _html(site, "allreduce.md")
    tables = re.findall(r"<table>.*?</table>", html, flags=re.S)
    by_ranks = next(t for t in tables if "Ranks p" in t)
    by_payload = next(t for t in tables if "Payload n per rank" in t)
    ranks_regimes = re.findall(r"(latency-bound|bandwidth-bound)", by_ranks)
    assert ranks_regimes[0] == "bandwidth-bound" and ranks_regimes[-1] == "latency-bound"
    payload_regimes = re.findall(r"(latency-bound|bandwidth-bound)", by_payload)
    assert payload_regimes[0] == "latency-bound" and payload_regimes[-1] == "bandwidth-bound"


@pytest.mark.build
@pytest.mark.parametrize("page", ["quiz.md"] + [f"strategies/{s}.md" for s in STRATEGIES])
def test_answers_are_inside_details(site, page):
    """Every answer is in a native <details> (keyboard and no-JS friendly), closed by default."""
    body = _article(_html(site, page))
    details = re.findall(r"<details class=\"question(?: quiz__answer\" data-quiz-answer|\")( open)?>(.*?)</details>",
                         body, flags=re.S)
    assert details, page
    for is_open, inner in details:
        assert not is_open
        assert "<summary>" in inner
        assert re.search(r"</summary>\s*\S", inner), "an answer follows the summary"


@pytest.mark.build
def test_quiz_answer_is_hidden_until_asked(site):
    """The answer text is only inside the <details> of its question."""
    body = _article(_html(site, "quiz.md"))
    outside = re.sub(r"<details.*?</details>", "", body, flags=re.S)
    assert "Answer: Tensor parallelism" not in outside
    assert "Answer: Tensor parallelism" in body


@pytest.mark.build
def test_pages_reference_no_other_origin(site):
    """No image, script or stylesheet on the content pages comes from another origin."""
    for page in NAV:
        html = _html(site, page)
        assets = re.findall(r"\bsrc=\"(https?://[^\"]+)\"", html)
        assets += re.findall(r"<link\b[^>]*\bhref=\"(https?://[^\"]+)\"", html)
        for url in assets:
            assert url.startswith("http://127.0.0.1:8000/"), (page, url)
