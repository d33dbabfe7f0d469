"""Fixtures for the browser tests: one built site, one server, one Chromium per session.

``page`` is one page shared by the whole session: tests reach their pages with
:func:`~tests.browser.atlas_browser.visit` (instant navigation), so Pyodide boots once for
all of them. A test that needs a cold start (what is fetched before Python starts, a fresh
document for an init script, another viewport) takes ``cold_page``, a page in a fresh context,
and says why. After a failed test the shared page is dropped, so one failure cannot leave a
broken page to the tests after it. See :mod:`atlas_browser` for what they share with
``tests/bench.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from tests.browser.atlas_browser import CHROMIUM_ARGS, Watch, open_context, serve

_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        message = "Debian's chromium is not on PATH (make test installs it with apt-get)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; under CI=true browser tests are not skipped")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def site(built_site) -> Path:
    """The one strict build of the session (tests/conftest.py)."""
    return built_site


@pytest.fixture(scope="session")
def manifest(site) -> dict:
    return json.loads((site / "assets/runtime/manifest.json").read_text())


@pytest.fixture(scope="session")
def base_url(site) -> str:
    try:
        server = serve(site)
    except RuntimeError as e:
        pytest.fail(str(e))
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser(base_url):
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # launch() gives every run a fresh, temporary user-data dir of its own.
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def watch(base_url) -> Watch:
    return Watch(base_url)


def _listen(page, watch: Watch):
    page.on("console", lambda m: watch.errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.errors.append(f"pageerror: {e}"))
    return page


def _checked(watch: Watch) -> None:
    assert watch.offsite == [], f"requests to other hosts: {watch.offsite}"
    if not watch.allow_errors:
        assert watch.errors == [], f"console errors: {watch.errors}"


class _Shared:
    """The session's shared page, opened on first use and dropped after a failure."""

    def __init__(self, browser, base_url):
        self.browser, self.base_url = browser, base_url
        self.context = self.page = self.watch = None

    def get(self):
        if self.page is None:
            self.watch = Watch(self.base_url)
            self.context = open_context(self.browser, self.base_url, self.watch)
            self.page = _listen(self.context.new_page(), self.watch)
        self.watch.requests.clear()
        self.watch.offsite.clear()
        self.watch.errors.clear()
        return self.page

    def drop(self):
        if self.context is not None:
            self.context.close()
        self.context = self.page = self.watch = None


@pytest.fixture(scope="session")
def shared(browser, base_url):
    keeper = _Shared(browser, base_url)
    yield keeper
    keeper.drop()


@pytest.fixture
def page(shared, request):
    """The session's shared page: reach pages with visit(); Python stays booted from test to test."""
    page = shared.get()
    yield page
    if request.node.stash.get(_FAILED, False):
        shared.drop()
        return
    try:
        _checked(shared.watch)
    except AssertionError:
        shared.drop()
        raise


@pytest.fixture
def page_watch(shared, page) -> Watch:
    """What the shared page requested and logged during this test."""
    return shared.watch


@pytest.fixture
def context(browser, base_url, watch):
    """A fresh context (its own cache and workers), for tests that need a cold start."""
    ctx = open_context(browser, base_url, watch)
    yield ctx
    ctx.close()


@pytest.fixture
def cold_page(context, watch):
    """A page in a fresh context: Python not started, nothing fetched yet."""
    page = _listen(context.new_page(), watch)
    yield page
    _checked(watch)
