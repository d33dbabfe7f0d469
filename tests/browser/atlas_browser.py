"""What the browser tests and the benchmark share: build, serve, drive Chromium, read a calculator.

- The site is built once (``mkdocs build --strict -d <tmp>``) and served by a threaded
  ``http.server`` on 127.0.0.1 at the port ``site_url`` names: Material's instant
  navigation silently falls back to full page loads on any other origin.
- Chromium is Debian's (``chromium`` on PATH) driven by Playwright; Playwright never
  downloads a browser here. Without it the tests are skipped, except under ``CI=true``,
  where they fail.
- Every request of every page (its workers included) is routed: one to any host but the
  test server fails the test, as does any console error or uncaught page error.
- Tests wait for states and events (a calculator's ``data-state``, a URL, a navigation), never
  for a guessed duration. The only limit is :data:`HUNG_MS`, after which a page counts as hung;
  it is generous and scaled by ``ATLAS_TEST_TIMEOUT_SCALE`` (:mod:`tests.support`).
- :func:`visit` reaches a page by the site's instant navigation when it can, so the page keeps
  its Python worker: Pyodide boots once per browser page, not once per test.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from tests.support import ROOT, mkdocs_build, time_limit

#: After this long (scaled) a page that has not reached the state a test waits for counts as hung.
HUNG_MS = time_limit(180) * 1000

CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def site_origin() -> tuple[str, int]:
    """Host and port of ``site_url`` as MkDocs reads it (mkdocs.yml, or SITE_URL when set)."""
    from mkdocs.config import load_config

    url = urlsplit(load_config(str(ROOT / "mkdocs.yml")).site_url)
    return url.hostname, url.port or 80


def build_site(dest: Path) -> float:
    """Build the site into ``dest`` with --strict; return the seconds it took."""
    started = time.perf_counter()
    proc = mkdocs_build(dest, "-q")
    if proc.returncode != 0:
        raise RuntimeError(f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}")
    return time.perf_counter() - started


class _Quiet(SimpleHTTPRequestHandler):
    prefix = "/"  #: the URL path the served directory appears at

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass

    def send_head(self):
        """A path outside ``prefix`` is 404; one below it maps into the directory."""
        if not urlsplit(self.path).path.startswith(self.prefix):
            self.send_error(404, "outside the site's path")
            return None
        return super().send_head()

    def translate_path(self, path):
        return super().translate_path("/" + path[len(self.prefix):])


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A browser that drops a connection (a closed page, an aborted route) is not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Gzip(_Quiet):
    """Also gzips text responses for clients that accept it, as static hosts (GitHub Pages) do."""

    TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")
    _cache: dict = {}

    def send_head(self):
        path = self.translate_path(urlsplit(self.path).path)
        if urlsplit(self.path).path.endswith("/") and Path(path, "index.html").is_file():
            path = str(Path(path, "index.html"))
        ctype = self.guess_type(path)
        if ("gzip" not in self.headers.get("Accept-Encoding", "") or not Path(path).is_file()
                or not ctype.startswith(self.TYPES) or not urlsplit(self.path).path.startswith(self.prefix)):
            return super().send_head()
        key = (path, Path(path).stat().st_mtime_ns)
        if key not in self._cache:
            self._cache[key] = gzip.compress(Path(path).read_bytes(), mtime=0)
        data = self._cache[key]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        return io.BytesIO(data)


def serve(directory: Path, site_url: str | None = None, compress: bool = False) -> ThreadingHTTPServer:
    """Serve ``directory`` where ``site_url`` says, in a daemon thread; fail if the port is taken.

    Without ``site_url``, on the port of mkdocs.yml's ``site_url`` at the root. With one, e.g.
    ``http://127.0.0.1:8001/atlas/``, on its port with ``/atlas/`` mapped to ``directory`` and
    every path outside it answered 404, as a project site below a sub-path is served.
    ``compress`` gzips text responses, as static hosts do (for page-weight figures).
    """
    if site_url is None:
        (host, port), prefix = site_origin(), "/"
    else:
        url = urlsplit(site_url)
        host, port, prefix = url.hostname, url.port or 80, url.path if url.path.endswith("/") else url.path + "/"
    handler = type("Handler", (_Gzip if compress else _Quiet,), {"prefix": prefix})
    try:
        server = _Server((host, port), functools.partial(handler, directory=str(directory)))
    except OSError as e:
        raise RuntimeError(
            f"cannot serve the test site on {host}:{port} (site_url in mkdocs.yml): {e}. "
            "Stop whatever listens there (make serve?) and run the tests again."
        ) from None
    threading.Thread(target=server.serve_forever, name="site-server", daemon=True).start()
    return server


@dataclass
class Watch:
    """What a page did that a test may check: requests, off-site attempts, console errors."""

    origin: str
    requests: list[str] = field(default_factory=list)
    offsite: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allow_errors: bool = False  #: set by tests that break the runtime on purpose

    def paths(self, suffix: str) -> list[str]:
        return [u for u in self.requests if urlsplit(u).path.endswith(suffix)]


def open_context(browser, base_url: str, watch: Watch, fault=None, **options):
    """A fresh context whose every request goes through ``fault`` (or straight on) if it is ours."""
    context = browser.new_context(base_url=base_url, **options)
    context.set_default_timeout(HUNG_MS)  # every Playwright wait: a hung page, not a slow one, fails it
    context.set_default_navigation_timeout(HUNG_MS)

    def route(r):
        url = r.request.url
        if not url.startswith(base_url + "/"):
            watch.offsite.append(url)
            r.abort()
            return
        watch.requests.append(url)
        if fault is None or not fault(r):
            r.continue_()

    context.route("**/*", route)
    return context


class Hold:
    """A route fault (for :func:`open_context`) that holds back requests for URLs ending in ``suffix``.

    :meth:`release` lets the held requests go and every later one pass, whether it was already
    asked for or comes afterwards (so no request can slip in between and stay held); :meth:`arm`
    holds again, for the next page.
    """

    def __init__(self, suffix: str):
        self.suffix, self.held, self.holding = suffix, [], True

    def __call__(self, route) -> bool:
        if not (self.holding and route.request.url.endswith(self.suffix)):
            return False
        self.held.append(route)
        return True

    def arm(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        while self.held:
            self.held.pop().continue_()


#: Test instrument, before any page script: the reader's browser asks to save data (Save-Data), so
#: Python waits until a calculator shows or is used (calc-runtime.mjs, startWhenIdle).
SAVE_DATA = "Object.defineProperty(Navigator.prototype, 'connection', { get: () => ({ saveData: true }) });"

#: Test instrument, evaluated in the calc worker while a :class:`Hold` keeps Pyodide back: the worker
#: reports progress every second, as one on a slow network does, so the page's watchdog (12 s
#: without progress, calc-runtime.mjs) waits however long the test looks at "loading".
KEEP_LOADING = "() => { self.__keepLoading = setInterval(() => self.postMessage({ type: 'progress' }), 1000); }"
STOP_LOADING = "() => clearInterval(self.__keepLoading)"


class Calculator:
    """One calculator on a page, through its DOM contract (hooks/widgets.py)."""

    def __init__(self, page, command: str, uid: str | None = None):
        self.page = page
        self.root = page.locator(f"#{uid}" if uid else f'[data-calc="{command}"]')

    def wait_state(self, *states: str, timeout: float = HUNG_MS) -> str:
        self.page.wait_for_function(
            """([root, states]) => states.includes(root.dataset.state) && root.getAttribute("aria-busy") !== "true" """,
            arg=[self.root.element_handle(), list(states)], timeout=timeout,
        )
        return self.state

    @property
    def state(self) -> str:
        return self.root.get_attribute("data-state")

    def set_inputs(self, values: dict[str, str], blank_others: bool = True) -> str:
        """Put ``values`` in the fields (others blank), fire one input event, wait for the answer."""
        self.root.evaluate(
            """(root, [values, blank]) => {
                for (const f of root.querySelectorAll(".calc__form [name]")) {
                    if (f.name in values) f.value = values[f.name];
                    else if (blank) f.value = "";
                }
                root.querySelector(".calc__form [name]").dispatchEvent(new Event("input", {bubbles: true}));
            }""",
            [values, blank_others],
        )
        return self.wait_state("ready", "error")

    def drawn(self) -> None:
        """Have every figure of the view drawn for the answer shown, as a print does, and wait until it is: a figure
        far off screen is drawn when it comes near (calc-view.mjs deferOffscreen), and the timeline's two ends are
        never near together. ``beforeprint`` draws them all, asking Python again for those it named only."""
        self.page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
        self.page.wait_for_function("(root) => !root.querySelector('[data-view] > [data-stale]')",
                                    arg=self.root.element_handle(), timeout=HUNG_MS)
        self.page.evaluate("() => window.dispatchEvent(new Event('afterprint'))")

    def values(self) -> dict[str, str]:
        return self.root.evaluate(
            "root => Object.fromEntries([...root.querySelectorAll('[data-result]')]"
            ".map(d => [d.dataset.result, d.dataset.value]))"
        )

    def texts(self) -> dict[str, str]:
        return self.root.evaluate(
            "root => Object.fromEntries([...root.querySelectorAll('[data-result]')]"
            ".map(d => [d.dataset.result, d.textContent]))"
        )

    def inputs(self) -> dict[str, str]:
        return self.root.evaluate(
            "root => Object.fromEntries([...root.querySelectorAll('.calc__form [name]')].map(f => [f.name, f.value]))"
        )

    def current(self) -> bool:
        return self.root.locator(".calc__results").get_attribute("data-current") == "true"

    def field_error(self, name: str) -> str | None:
        """The message shown next to field ``name`` (None if none), checked against its ARIA."""
        field_ = self.root.locator(f'.calc__form [name="{name}"]')
        error_id = field_.get_attribute("id") + "-error"
        assert error_id in field_.get_attribute("aria-describedby").split()
        error = self.root.locator(f"#{error_id}")
        if error.get_attribute("hidden") is not None:
            assert field_.get_attribute("aria-invalid") is None
            return None
        assert field_.get_attribute("aria-invalid") == "true"
        return error.text_content()

    def status(self) -> str:
        return self.root.locator(".calc__status").text_content()


def cli_json(command: str, inputs: dict[str, str]) -> dict[str, str]:
    """``python -m calc COMMAND --opt value ... --json``: each key's JSON text, exactly as printed."""
    argv = [sys.executable, "-m", "calc", command, "--json"]
    for name, value in inputs.items():
        argv.append(f"--{name.replace('_', '-')}={value}")
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    out = {key: json.dumps(value) for key, value in json.loads(proc.stdout).items()}
    for key, text in out.items():
        assert f'"{key}": {text}' in proc.stdout, (key, text, proc.stdout)  # as printed, not re-encoded
    return out


# ---------------------------------------------------------------- what the built site holds

class _Roots(HTMLParser):
    """Collects ``(id, command)`` of every element that has a ``data-calc`` attribute, and the query
    that shows each tool of a mode switch (hooks/modes.py): ``KEY=MODE``, blank for the default mode."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.queries: dict[str, str] = {}
        self._key: str | None = None  #: inside a mode switch: its address key
        self._first = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-calc" in a:
            self.found.append((a.get("id") or "", a["data-calc"]))
        if "data-modes" in a:
            self._key, self._first = a["data-modes"], True
        if tag == "input" and "data-panel" in a and self._key is not None:
            self.queries[a["data-panel"]] = "" if self._first else f"{self._key}={a['value']}"
            self._first = False

    def handle_endtag(self, tag):
        if tag == "fieldset":
            self._key = None


def page_paths(site: Path) -> list[str]:
    """The URL path of every HTML page of a built site (``/``, ``/about/``, ``/404.html``), sorted.

    Discovered from the files, so pages added later are covered without editing a test.
    """
    paths = []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        paths.append("/" + (rel[: -len("index.html")] if rel.endswith("index.html") else rel))
    return sorted(paths)


@dataclass(frozen=True)
class Widget:
    """One calculator as built: the page it is on, its element id and its command."""

    path: str
    id: str
    command: str
    query: str = ""  #: what the address needs to show it (``mode=inference``: a tool of a mode switch)

    def __str__(self) -> str:
        return f"{self.path}#{self.id}"

    def url(self, query: str = "") -> str:
        """The address that shows it, with ``query`` (``a=1&b=2``) after the one it needs."""
        both = "&".join(q for q in (self.query, query) if q)
        return f"{self.path}?{both}" if both else self.path


#: Marks the current page's content as old, then follows a link to ``url`` as a reader's click would.
FOLLOW = """(url) => {
  for (const old of document.querySelectorAll("article")) old.dataset.visited = "old";
  const link = document.createElement("a");
  link.href = url;
  link.textContent = "test link";
  document.querySelector("article").append(link);
  link.click();
}"""
#: The link has been followed: the address is ``url`` and the article is a new one.
_ARRIVED = """(url) => location.href === new URL(url, location.href).href && document.querySelector("article") !== null
  && document.querySelector("article[data-visited]") === null"""


#: Resolves once the site's scripts have seen this page (Material's document$ has emitted it, so
#: calculators.mjs has decided whether to load anything), and two frames have been drawn since.
SEEN = """() => new Promise((resolve) => document$.subscribe(
  () => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))))"""


def scrolled_to(locator) -> None:
    """Scroll ``locator``'s element into view and wait two frames: a tool view's parts far off screen are not laid
    out (tools.css, content-visibility), and Chromium measures what it skipped as 0 x 0."""
    locator.scroll_into_view_if_needed()
    locator.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def settled_url(page) -> str:
    """The page's address once no calculator has a rewrite of it due (``data-query="pending"``): calc-mount.mjs
    writes the inputs into the address once the reader pauses (300 ms without input) or leaves the field."""
    page.wait_for_function("() => !document.querySelector('[data-query=pending]')")
    return page.url


def visit(page, url: str) -> None:
    """Open ``url`` (a path, or absolute), by instant navigation when the page is already on the site.

    Instant navigation keeps the document, so its Python worker: a page that has booted Pyodide
    once answers on every later page at once. Material does not navigate to the page it is on
    with another query, so such a visit goes by the home page. Without a site page to start from
    (a new page, another origin) it is an ordinary ``goto``.
    """
    target = urljoin(page.url, url) if page.url.startswith("http") else None
    instant = target is not None and urlsplit(target).netloc == urlsplit(page.url).netloc and page.evaluate(
        "() => typeof document$ !== 'undefined' && document.querySelector('article') !== null")
    if not instant:
        page.goto(url)
        return
    if urlsplit(page.url).path == urlsplit(target).path:  # the same page again: go by the home page
        home = page.evaluate("() => document.querySelector('.md-header__button.md-logo').href")
        if urlsplit(home).path == urlsplit(target).path:
            page.goto(url)
            return
        page.evaluate(FOLLOW, home)
        page.wait_for_function(_ARRIVED, arg=home)
    page.evaluate(FOLLOW, target)
    page.wait_for_function(_ARRIVED, arg=target)


def open_widget(page, widget: Widget, cold: bool = False) -> Calculator:
    """Open the widget's page and bring the widget on screen (which starts Python).

    ``cold``: load the page afresh (a new document, so a new worker) instead of navigating to it.
    """
    if cold:
        page.goto(widget.url())
    else:
        visit(page, widget.url())
    calc = Calculator(page, widget.command, widget.id)
    calc.root.scroll_into_view_if_needed()
    return calc


def calculators(site: Path) -> list[Widget]:
    """Every ``[data-calc]`` calculator on every built page (hooks/widgets.py renders them)."""
    found = []
    for path in page_paths(site):
        parser = _Roots()
        parser.feed((site / (path.lstrip("/") + ("index.html" if path.endswith("/") else ""))).read_text())
        found += [Widget(path, uid, command, parser.queries.get(uid, "")) for uid, command in parser.found]
    return found
