"""Site search in Chromium: the documents are fetched when the reader first searches, not at load.

The theme fetches ``search/search_index.json`` at every page load; the build leaves only its config
there, and ``assets/js/search-worker.js`` fetches ``search/search_docs.json`` and the theme's worker on
the first query (hooks/search_index.py, overrides/main.html). A cold page: what is fetched at load.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

pytestmark = pytest.mark.browser

#: The theme's search dialog no longer says what it says until its worker answers: its set-up is done.
SEARCH_SET_UP = """(initial) => {
  const meta = document.querySelector(".md-search-result__meta");
  return meta !== null && meta.textContent.trim() !== initial;
}"""


def initial_meta(site, path: str) -> str:
    """The search dialog's text as built ("Initializing search"), before the theme's worker answers."""
    html = (site / path.strip("/") / "index.html").read_text()
    return re.search(r'<div class="md-search-result__meta">\s*(.*?)\s*</div>', html, re.S).group(1)


def word_only_on(site, path: str) -> str:
    """A long word of the page's text that no other page's text or title holds (from the built documents)."""
    docs = json.loads((site / "search/search_docs.json").read_text())["docs"]
    pages: dict[str, set[str]] = {}
    for doc in docs:
        words = re.findall(r"[a-z]{9,}", (doc["title"] + " " + doc["text"]).lower())
        pages.setdefault("/" + doc["location"].split("#")[0], set()).update(words)
    elsewhere = Counter(w for p, words in pages.items() if p != path for w in words)
    # not a prefix of another page's word either: the theme searches each term as a prefix
    unique = sorted(w for w in pages[path] if not any(o.startswith(w) for o in elsewhere))
    assert unique, f"{path}: no word of its own in the index"
    return max(unique, key=len)


def test_search_finds_a_page_by_a_word_from_its_text(cold_page, watch, site):
    """Nothing of the documents loads with the page; typing a word of /history/ finds /history/."""
    page = cold_page
    word = word_only_on(site, "/history/")
    page.goto("/tradeoffs/")
    page.wait_for_function(SEARCH_SET_UP, arg=initial_meta(site, "/tradeoffs/"))
    assert watch.paths("/search/search_index.json"), "the theme's set-up fetches the index's config"
    assert watch.paths("/search/search_docs.json") == [], "the documents were fetched before any search"
    assert [u for u in watch.requests if "/assets/javascripts/workers/" in u] == [], "the theme's worker loaded early"

    page.locator(".md-search__input").click()
    page.locator(".md-search__input").press_sequentially(word)
    found = page.wait_for_function(
        """() => [...document.querySelectorAll(".md-search-result__list a[href]")]
                   .map((a) => new URL(a.href).pathname).filter((p) => p === "/history/").length > 0""")
    assert found
    assert len(watch.paths("/search/search_docs.json")) == 1


def test_search_index_at_load_holds_no_documents(site):
    """What every page fetches at load is the index's config only, a few hundred bytes."""
    index = json.loads((site / "search/search_index.json").read_text())
    assert index["docs"] == [] and "separator" in index["config"]
    assert (site / "search/search_index.json").stat().st_size < 1000
