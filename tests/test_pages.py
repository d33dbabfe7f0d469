"""The pages in docs/: navigation, structure, numbers that come from markers, not from typing; and as built."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hooks.markers import MARKER_RE, replace_markers
from hooks.site import all_renderers

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
