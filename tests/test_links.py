"""Every internal link and fragment in the built site resolves."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

pytestmark = pytest.mark.build


class _Page(HTMLParser):
    """Collects ids (anchor targets) and the links a reader can follow or the browser loads."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "link", "script", "img", "source", "iframe"):
                self.links.append(a[key])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _target(site: Path, page: Path, link: str) -> tuple[Path, str] | None:
    """The file and fragment an internal link points to (None for other origins and schemes)."""
    url = urlparse(link)
    if url.scheme or url.netloc or link.startswith(("mailto:", "javascript:", "data:")):
        return None
    base = "/" + page.relative_to(site).as_posix()
    resolved = urlparse(urljoin(base, link))
    path = site / unquote(resolved.path).lstrip("/")
    if resolved.path.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, unquote(resolved.fragment)


def test_no_broken_internal_links_or_fragments(built_site):
    """Each relative href/src resolves to a built file; each fragment to an id in that file."""
    pages = {p: _parse(p) for p in built_site.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        if page.name == "404.html":
            continue  # served from any depth; its links are absolute to site_url's path
        for link in parsed.links:
            target = _target(built_site, page, link)
            if target is None:
                continue
            path, fragment = target
            if not path.is_file():
                broken.append((page.relative_to(built_site).as_posix(), link, "no such file"))
            elif fragment and path.suffix == ".html":
                ids = pages[path].ids if path in pages else _parse(path).ids
                if fragment not in ids:
                    broken.append((page.relative_to(built_site).as_posix(), link, "no such anchor"))
    assert broken == []


def test_checker_sees_a_broken_link(tmp_path):
    """The checker itself reports a missing file and a missing anchor (it is not vacuous)."""
    (tmp_path / "index.html").write_text('<a href="gone/">x</a><a href="#nowhere">y</a><p id="here"></p><a href="#here">z</a>')
    page = _parse(tmp_path / "index.html")
    results = [_target(tmp_path, tmp_path / "index.html", link) for link in page.links]
    assert not results[0][0].is_file()
    assert results[1][1] == "nowhere" and "nowhere" not in page.ids
    assert results[2][1] in page.ids
