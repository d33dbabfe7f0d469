"""Fixtures for the browser tests: one built site, one server, one Chromium per session.

See :mod:`atlas_browser` for what they share with the benchmark (``tests/bench.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from atlas_browser import CHROMIUM_ARGS, Watch, build_site, open_context, serve


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        message = "Debian's chromium is not on PATH (make test installs it with apt-get)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; under CI=true browser tests are not skipped")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("site")
    build_site(dest)
    return dest


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


@pytest.fixture
def context(browser, base_url, watch):
    ctx = open_context(browser, base_url, watch)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, watch):
    page = context.new_page()
    page.on("console", lambda m: watch.errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.errors.append(f"pageerror: {e}"))
    yield page
    assert watch.offsite == [], f"requests to other hosts: {watch.offsite}"
    if not watch.allow_errors:
        assert watch.errors == [], f"console errors: {watch.errors}"


