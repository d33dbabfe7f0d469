"""Tests of the built site: strict build, pre-rendered numbers, no third-party assets, loud markers."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError

from tests.conftest import tree_digest
from tests.support import ROOT

pytestmark = pytest.mark.build

SITE_HOST = urlparse(load_config(str(ROOT / "mkdocs.yml")).site_url or "").netloc


def test_strict_build_has_no_warnings(session_build):
    """The session's mkdocs build --strict succeeded and logged no warning."""
    assert session_build.proc.returncode == 0, session_build.proc.stderr[-3000:]
    assert "WARNING" not in session_build.proc.stderr


@pytest.mark.rebuild
def test_mkdocs_build_is_strict_by_itself(tmp_path, caplog):
    """mkdocs.yml sets strict: true, so a plain `mkdocs build` (no --strict) fails on a warning."""
    assert load_config(str(ROOT / "mkdocs.yml")).strict is True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n[a link to nowhere](nowhere.md)\n")
    (docs / "assets").symlink_to(ROOT / "docs" / "assets")
    config = load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(tmp_path / "site"),
                         nav=["index.md"])
    with pytest.raises(Abort, match="strict mode"):
        build(config)
    assert "nowhere.md" in caplog.text


def test_engineering_example_is_pre_rendered(built_site):
    """The brief's 8192 example is computed into the HTML by the hook (value and calculator)."""
    html = "".join(p.read_text() for p in built_site.rglob("*.html"))
    assert 'data-result="global_batch" data-value="8192"' in html
    assert "8,192 examples" in html


def test_no_marker_survives(built_site):
    """Every marker was replaced (a marker left in the HTML would silently show nothing)."""
    for page in built_site.rglob("*.html"):
        assert "<!-- calc:" not in page.read_text(), page


class _AssetRefs(HTMLParser):
    """Collects URLs the browser would fetch by itself: scripts, styles, images, media, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source", "embed", "track") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("href") and not {"canonical", "alternate"} & set((a.get("rel") or "").split()):
            self.urls.append(a["href"])
        if tag == "object" and a.get("data"):
            self.urls.append(a["data"])
        for key in ("srcset", "poster"):
            if a.get(key):
                self.urls.extend(part.split()[0] for part in a[key].split(","))


def _foreign(url: str) -> bool:
    host = urlparse(url).netloc
    return bool(host) and host != SITE_HOST


def test_no_html_asset_from_another_origin(built_site):
    """No page makes the browser fetch a script, style, font or image from another origin."""
    bad = []
    for page in built_site.rglob("*.html"):
        parser = _AssetRefs()
        parser.feed(page.read_text())
        bad += [(page.name, u) for u in parser.urls if _foreign(u)]
    assert bad == []


def test_no_css_url_from_another_origin(built_site):
    """No stylesheet imports or loads from another origin (fonts included)."""
    bad = []
    for css in built_site.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="replace")):
            if _foreign(url):
                bad.append((css.name, url))
        bad += [(css.name, m) for m in re.findall(r"@import\s+['\"]?(https?://[^'\")]+)", css.read_text(errors="replace"))]
    assert bad == []


def test_our_scripts_reference_no_other_origin(built_site):
    """The site's own scripts name no absolute URL at all (vendor code is checked in the browser)."""
    own = ROOT / "docs" / "assets" / "js"
    found = [(js.name, m) for js in own.rglob("*.*js") for m in re.findall(r"https?://[^\s'\"`]+", js.read_text())]
    bad = [(name, m) for name, m in found if m not in XML_NAMESPACES]
    assert bad == []


#: Namespace names: identifiers for createElementNS, never fetched.
XML_NAMESPACES = {"http://www.w3.org/2000/svg"}


def test_katex_is_served_by_the_site(built_site):
    """KaTeX and its fonts come from the npm package, copied into the site."""
    assert (built_site / "assets/vendor/katex/katex.min.css").is_file()
    assert list((built_site / "assets/vendor/katex/fonts").glob("*.woff2"))


def _config_with_page(tmp_path: Path, text: str):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(text)
    (docs / "assets").symlink_to(ROOT / "docs" / "assets")
    return load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(tmp_path / "site"), nav=["index.md"], strict=True)


@pytest.mark.rebuild
def test_bad_marker_fails_the_build_naming_page_and_marker(tmp_path, caplog):
    """A marker with a CalcError stops the build with a message that names the page and the marker."""
    config = _config_with_page(tmp_path, "# x\n\n<!-- calc:value batch micro_batch=0 data_parallel=1 show=global_batch -->\n")
    with pytest.raises((PluginError, Abort)):
        build(config)
    text = caplog.text
    assert "index.md: marker '<!-- calc:value batch micro_batch=0" in text
    assert "micro_batch must be a whole number >= 1, got 0" in text


@pytest.mark.rebuild
def test_unknown_marker_fails_the_build(tmp_path, caplog):
    """An unknown marker kind is an error, never silently left invisible."""
    config = _config_with_page(tmp_path, "# x\n\n<!-- calc:frobnicate -->\n")
    with pytest.raises((PluginError, Abort)):
        build(config)
    assert "unknown kind 'frobnicate'" in caplog.text


def test_hooks_never_write_into_docs(session_build):
    """The session's build left docs/ byte-for-byte as it was."""
    assert tree_digest(ROOT / "docs") == session_build.docs_before
