"""Published below a sub-path: built with SITE_URL=http://127.0.0.1:8001/atlas/ and served only there.

Project sites usually live below a path (``https://<org>.github.io/<project>/``). The server
maps ``/atlas/`` to the built site and answers 404 everywhere else, so a URL that escapes the
sub-path (a root-absolute link, a worker or runtime file resolved against ``/``) fails here.
A second port keeps this apart from the root-served site on 8000.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from html import unescape
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from tests.browser.atlas_browser import (Calculator, Watch, calculators, cli_json, open_context, page_paths, serve,
                                         visit)
from tests.browser.vectors import ALLREDUCE, BATCH
from tests.support import mkdocs_build, time_limit

pytestmark = [pytest.mark.browser, pytest.mark.rebuild]

SITE_URL = "http://127.0.0.1:8001/atlas/"
ORIGIN = "http://127.0.0.1:8001"
VECTORS = {"batch": BATCH[:3], "allreduce": ALLREDUCE[:3]}
RUNTIME = ("calc-worker.mjs", "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
           "pyodide-lock.json", "manifest.json", ".whl")


@pytest.fixture(scope="module")
def sub_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("subpath-site")
    proc = mkdocs_build(site, env={"SITE_URL": SITE_URL})
    assert proc.returncode == 0, proc.stderr[-4000:]
    return site


@pytest.fixture(scope="module")
def sub_server(sub_site):
    try:
        server = serve(sub_site, SITE_URL)
    except RuntimeError as e:
        pytest.fail(str(e))
    yield SITE_URL
    server.shutdown()
    server.server_close()


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.refs.append(value)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=time_limit(60)) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def built_values(site, widget) -> dict[str, str]:
    """The results the build wrote into the widget: ``data-result`` -> ``data-value``."""
    html = (site / (widget.path.lstrip("/") + "index.html")).read_text()
    start = html.index(f'id="{widget.id}"')
    end = html.find("data-calc=", html.index("data-calc=", start) + 1)
    return {k: unescape(v) for k, v in
            re.findall(r'data-result="([^"]+)" data-value="([^"]*)"', html[start:end if end > 0 else None])}


def test_the_server_answers_only_below_the_sub_path(sub_server):
    """Control: the home page is at /atlas/; the root and a root-absolute asset path are 404."""
    assert _status(SITE_URL) == 200
    assert _status(ORIGIN + "/") == 404
    assert _status(ORIGIN + "/assets/css/atlas.css") == 404


def test_every_reference_resolves_below_the_sub_path(sub_site, sub_server):
    """Every href/src of every page, and every url() of every stylesheet, on this origin: 200, below /atlas/."""
    targets: dict[str, str] = {}
    for path in page_paths(sub_site):
        page_url = SITE_URL + path.lstrip("/")
        parser = _Refs()
        parser.feed((sub_site / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))).read_text())
        for ref in parser.refs:
            url = urldefrag(urljoin(page_url, ref)).url
            if urlsplit(url).netloc == urlsplit(ORIGIN).netloc:
                targets.setdefault(url, page_url)
    for css in sub_site.rglob("*.css"):
        css_url = SITE_URL + css.relative_to(sub_site).as_posix()
        for ref in re.findall(r"""url\(\s*["']?([^"')]+)""", css.read_text(errors="replace")):
            if not ref.startswith(("data:", "#")):
                targets.setdefault(urldefrag(urljoin(css_url, ref)).url, css_url)
    assert len(targets) > 50
    outside = sorted(u for u in targets if not u.startswith(SITE_URL))
    assert outside == [], outside
    broken = sorted(f"{url} (from {source})" for url, source in targets.items() if _status(url) != 200)
    assert broken == []


def test_pages_runtime_and_calculators_work_below_the_sub_path(browser, sub_site, sub_server):
    """Every page loads with no 4xx/5xx; the worker, Pyodide and the wheel load; navigation stays instant;
    each calculator is ready with the CLI's numbers."""
    watch = Watch(ORIGIN)
    failed: list[str] = []
    context = open_context(browser, ORIGIN, watch)
    context.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: watch.errors.append(str(e)))
        for path in page_paths(sub_site):
            response = page.goto(SITE_URL + path.lstrip("/"))
            assert response.status == 200, path
        for widget in calculators(sub_site):  # by instant navigation: Python boots once
            visit(page, SITE_URL + widget.url().lstrip("/"))
            calc = Calculator(page, widget.command, widget.id)
            calc.root.scroll_into_view_if_needed()
            assert calc.wait_state("ready") == "ready", (widget, calc.status())
            assert calc.values() == built_values(sub_site, widget), widget  # live defaults = the build's CPython
            for vector in VECTORS.get(widget.command, []):
                assert calc.set_inputs(vector) == "ready", (widget, vector, calc.status())
                expected = cli_json(widget.command, vector)
                assert calc.values() == {k: expected[k] for k in calc.values()}, (widget, vector)
        # instant navigation under the sub-path: a site link swaps the page in the same document
        page.goto(SITE_URL)
        page.evaluate("window.__sameDocument = true")
        link = page.locator('nav a[href$="calculators/"]').first
        link.click()
        page.wait_for_url(SITE_URL + "calculators/")
        assert page.evaluate("window.__sameDocument") is True, "instant navigation fell back to a full load"
    finally:
        context.close()
    for name in RUNTIME:
        assert watch.paths(name), f"{name} was never requested"
    assert [u for u in watch.requests if not u.startswith(SITE_URL)] == []
    assert watch.offsite == [] and failed == [] and watch.errors == []
