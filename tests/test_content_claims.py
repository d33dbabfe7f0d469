"""What the pages claim in prose: no capability called missing that `calc` has, no internal case ids,
no unit printed twice.

- A command of ``python -m calc`` (:data:`calc.api.COMMANDS`, so commands added later are covered
  unedited) must not appear in a sentence that calls something missing, "not yet computed" or
  only partly implemented.
- Readers cannot see the project's list of published cases, so a page names the paper and table,
  never an id such as "published case M7" or "K1".
- A marker renders its unit ("6 replicas"); the prose after it must not repeat it.
"""

from __future__ import annotations

import re

import pytest

from calc.api import COMMANDS
from hooks import content, tables
from hooks.site import all_renderers
from hooks.markers import MARKER_RE, replace_markers
from tests.test_pages import NAV, _source

#: Phrases that say a capability is absent or incomplete.
MISSING = re.compile(
    r"not (?:yet )?(?:computed|implemented|modell?ed|covered|available|supported)"
    r"|implements? (?:only )?parts?|only parts? of"
    r"|(?:comes?|arrives?) with the next|in a later version|planned"
    r"|\bcovers? [\w-]+ only\b",
    re.I,
)
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]+", text)]


def names_command(sentence: str, name: str) -> bool:
    """Whether ``sentence`` names command ``name``: its words, hyphens and plurals aside.

    >>> names_command("all-gather and reduce-scatter are not computed here", "reducescatter")
    True
    >>> names_command("FLOPs and training time", "train-time"), names_command("an explanation", "plan")
    (True, False)
    """
    words = _words(sentence)
    parts = _words(name.replace("-", " "))
    joined_target = _stem("".join(parts))
    stemmed_target = "".join(_stem(p) for p in parts)
    for i in range(len(words)):
        for n in range(1, 5):
            chunk = words[i:i + n]
            if len(chunk) < n:
                break
            if _stem("".join(chunk)) == joined_target or "".join(_stem(w) for w in chunk) == stemmed_target:
                return True
    return False


def _prose(text: str) -> str:
    """The page as a reader reads it in the source: no fences, markers, SVG or HTML tags."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    text = re.sub(r"<svg.*?</svg>", "", text, flags=re.S)
    text = MARKER_RE.sub(" ", text)
    return re.sub(r"<[^>]+>", " ", text)


def _sentences(text: str) -> list[str]:
    flat = " ".join(_prose(text).split())
    return [s for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z(`*])", flat) if s]


def missing_claims(text: str) -> list[tuple[str, str]]:
    """(command, sentence) for each sentence that calls an existing command's capability missing."""
    found = []
    for sentence in _sentences(text):
        if MISSING.search(sentence):
            found += [(name, sentence) for name in COMMANDS if names_command(sentence, name)]
    return found


# ---------------------------------------------------------------------------- the checker itself

#: What the pages said before the capabilities existed (issue 10, item 1): each must be caught.
STALE = [
    "Per-device memory for ZeRO stages 1 and 2, activation memory (Korthikanti et al. 2022), FLOPs and "
    "training time (Narayanan et al. 2021, Eq. 3 and 4), tensor- and pipeline-parallel communication "
    "volumes and the pipeline bubble are stated as formulas with their sources on the strategy pages; "
    "their computed examples come with the next modules of `calc`.",
    "all-gather, reduce-scatter and all-to-all move $\\frac{p-1}{p}$ of their data per rank and are not "
    "computed here.",
    "It covers all-reduce only, not every collective (all-gather, reduce-scatter, all-to-all, broadcast "
    "have other step counts and volumes).",
    "The `calc` package implements parts of this interface today: batch accounting (`batch`), ring "
    "all-reduce time (`allreduce`).",
]


@pytest.mark.parametrize("text", STALE)
def test_checker_catches_the_old_claims(text):
    """Each sentence the issue reported is flagged, naming at least one existing command."""
    assert missing_claims(text), text


def test_checker_names_the_commands_of_the_old_scope_sentence():
    """The old "not yet computed" sentence is flagged for memory, activations, FLOPs, time and bubble."""
    names = {name for name, _ in missing_claims(STALE[0])}
    assert {"memory", "activations", "flops", "train-time", "bubble"} <= names


def test_checker_leaves_true_limits_alone():
    """Saying what a model leaves out, or naming a command without a claim of absence, is not flagged."""
    assert missing_claims("The plan leaves out NCCL's algorithm choice. `search` ranks the plans.") == []
    assert missing_claims("Contention is not modelled here.") == []


def test_commands_come_from_the_registry():
    """The check covers every command calc has now, whatever is added later."""
    assert {"batch", "allreduce", "allgather", "memory", "activations", "flops", "train-time", "bubble",
            "traffic", "plan", "search"} <= set(COMMANDS)
    for name in COMMANDS:
        assert names_command(f"the {name} command", name), name


# ---------------------------------------------------------------------------- the pages


@pytest.mark.parametrize("page", NAV)
def test_no_page_calls_an_existing_command_missing(page):
    """No sentence says that something calc computes is missing, not yet computed or partial."""
    assert missing_claims(_source(page)) == []


def test_scope_page_lists_the_commands_from_the_registry():
    """The scope page's list of commands is the marker that renders calc.api.COMMANDS, not typed."""
    text = _source("scope.md")
    assert "<!-- calc:commands -->" in text
    rendered = replace_markers(text, content.RENDERERS | tables.RENDERERS, "scope.md")
    for name in COMMANDS:
        assert f"`python -m calc {name}`" in rendered, name


#: Internal ids of the project's published cases (B1-B4, R1-R5, M1-M7, M4b, Z, K1, P ...).
CASE_ID = re.compile(r"\bpublished cases?\b|\bcases? [A-Z]\d*b?\b(?! ?[a-z])|\b[BRMKZP]\d{1,2}b?\b")


@pytest.mark.parametrize("page", NAV)
def test_no_page_names_an_internal_case_identifier(page):
    """Pages name the paper and table, never a case id the reader cannot look up."""
    found = CASE_ID.findall(_prose(_source(page)))
    assert found == [], f"{page}: {found}"


def test_case_id_pattern_catches_the_old_wording():
    """The wording the issue reported is caught."""
    for text in ("bf16; published case M7) each", "(16-bit activations; published case K1):",
                 "as ZeRO's Table 1 prints them (published case Z;", "(published cases M6 and P)", "see R1"):
        assert CASE_ID.search(text), text


_RENDERERS = all_renderers()
_END = "\u2063"  # an invisible separator that marks where a rendered marker ends


def doubled_units(text: str, page: str) -> list[str]:
    """Each marker whose rendered text ends with a word that the prose right after it repeats."""
    marked = {kind: (lambda m, r=r: r(m) + _END) for kind, r in _RENDERERS.items()}
    out = replace_markers(text, marked, page)
    found = []
    for m in re.finditer(rf"([A-Za-z/]+)\)?{_END}\**\s*([A-Za-z/]+)", out):
        last, following = m.group(1).lower(), m.group(2).lower()
        if last == following or _stem(last) == _stem(following):
            found.append(out[max(0, m.start() - 40):m.end() + 10].replace(_END, "|"))
    return found


@pytest.mark.parametrize("page", NAV)
def test_no_marker_unit_is_repeated_by_the_prose(page):
    """A marker prints its unit; the sentence does not say it again ("6 replicas replicas")."""
    assert doubled_units(_source(page), page) == []


def test_doubled_unit_check_catches_the_old_interfaces_sentence():
    """The sentence of issue 10, item 24, is caught."""
    old = ("$N_{dp}$ = <!-- calc:value batch show=data_parallel gpus=3072 tensor_parallel=8 "
           "pipeline_parallel=64 micro_batch=1 -->\nreplicas; with its batch")
    assert doubled_units(old, "interfaces.md")
