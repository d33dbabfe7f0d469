"""hooks/search_index.py: the built index's documents move out of what the theme fetches at load."""

from __future__ import annotations

import json

import pytest

from hooks.search_index import DOCS, INDEX, defer_documents

INDEXED = {"config": {"lang": ["en"], "separator": "[\\s\\-]+"},
           "docs": [{"location": "history/", "title": "History", "text": "Data parallelism, 1989"}]}


def written(tmp_path, data) -> None:
    (tmp_path / "search").mkdir()
    (tmp_path / INDEX).write_text(json.dumps(data))


def test_the_documents_move_and_the_config_stays(tmp_path):
    """search_index.json keeps the config with no documents; search_docs.json is the whole index."""
    written(tmp_path, INDEXED)
    index_bytes, docs_bytes = defer_documents(tmp_path)
    assert json.loads((tmp_path / INDEX).read_text()) == {"config": INDEXED["config"], "docs": []}
    assert json.loads((tmp_path / DOCS).read_text()) == INDEXED
    assert (index_bytes, docs_bytes) == ((tmp_path / INDEX).stat().st_size, (tmp_path / DOCS).stat().st_size)


def test_no_index_is_an_error(tmp_path):
    """Without the search plugin's index there is nothing to move: an error, not an empty index."""
    with pytest.raises(FileNotFoundError):
        defer_documents(tmp_path)


@pytest.mark.parametrize("data", [{"docs": []}, {"config": {}, "docs": {}}])
def test_not_an_index_is_refused(tmp_path, data):
    """A file without a config and a list of documents is named in the error."""
    written(tmp_path, data)
    with pytest.raises(ValueError, match="search_index.json: not a search index"):
        defer_documents(tmp_path)


@pytest.mark.build
def test_the_built_site_fetches_no_documents_at_load(built_site):
    """Every page names the site's search worker, with the theme's worker that exists beside it."""
    index = json.loads((built_site / INDEX).read_text())
    assert index["docs"] == []
    assert len(json.loads((built_site / DOCS).read_text())["docs"]) > 100
    assert (built_site / "assets/js/search-worker.js").is_file()
    for html in built_site.rglob("*.html"):
        config = json.loads(html.read_text().split('<script id="__config" type="application/json">')[1].split("</script>")[0])
        worker, _, theme = config["search"].partition("?theme=")
        assert worker.endswith("assets/js/search-worker.js"), html
        assert (built_site / "assets/javascripts/workers" / theme).is_file(), html
