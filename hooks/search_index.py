"""The search index, fetched when the reader first searches instead of on every page load (issue 15).

Material (9.7) fetches ``search/search_index.json`` as soon as any page loads and hands it to its
search worker; at 0.33 MB it was half of what a page without a calculator loaded. The theme has no
option to wait, but it lets a site name its own search worker (the ``search`` URL in the page's
configuration, set in ``overrides/main.html``). So after the build:

- ``search/search_index.json`` keeps the index's ``config`` (language, separator, pipeline, fields:
  what the theme's highlighting needs) and no documents: a few hundred bytes at load;
- ``search/search_docs.json`` holds the whole index as the search plugin wrote it;
- ``assets/js/search-worker.js`` answers the theme's set-up at once, and on the first query fetches
  the documents, loads the theme's own worker and lets it build the index and answer.

The search plugin writes the index in its ``on_post_build``, which MkDocs runs before the hooks'.
"""

from __future__ import annotations

import json
from pathlib import Path

INDEX = "search/search_index.json"  #: what the theme fetches at load (its path is fixed in its bundle)
DOCS = "search/search_docs.json"  #: what search-worker.js fetches on the first query


def defer_documents(site_dir: Path) -> tuple[int, int]:
    """Move the index's documents from :data:`INDEX` to :data:`DOCS`; return both files' sizes in bytes.

    Raises ``FileNotFoundError`` without an index (the caller checks: none is written when search
    is off), ``ValueError`` when the file is not a search index.
    """
    index = site_dir / INDEX
    data = json.loads(index.read_text(encoding="utf-8"))
    if not isinstance(data.get("docs"), list) or "config" not in data:
        raise ValueError(f"{index}: not a search index with 'config' and 'docs'")
    (site_dir / DOCS).write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    index.write_text(json.dumps({"config": data["config"], "docs": []}, separators=(",", ":")), encoding="utf-8")
    return index.stat().st_size, (site_dir / DOCS).stat().st_size
