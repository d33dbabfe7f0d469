"""The runtime in Chromium: lazy, one worker across instant navigation, and honest when it fails."""

from __future__ import annotations

import time

import pytest
from tests.browser.atlas_browser import Calculator, cli_json, open_context

from calc.api import COMMANDS

pytestmark = pytest.mark.browser

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")

#: Counts the messages the page sends to workers (test instrumentation, added before any page script).
COUNT_POSTS = """
const post = Worker.prototype.postMessage;
window.__posts = 0;
Worker.prototype.postMessage = function (...args) { window.__posts++; return post.apply(this, args); };
"""


def test_page_without_calculator_loads_no_python(page, watch):
    """A page with no calculator fetches neither Pyodide, the worker, the wheel nor the mounting code."""
    page.goto("/calculators/")
    page.wait_for_load_state("networkidle")
    for name in PYODIDE_FILES + ("calc-worker.mjs", "calc-mount.mjs", "manifest.json", ".whl"):
        assert watch.paths(name) == [], name
    assert page.evaluate("document.querySelectorAll('[data-calc]').length") == 0


def test_instant_navigation_keeps_one_worker_and_one_pyodide_start(page, watch):
    """A -> B -> A by the site's own links: one worker, one Pyodide download, one listener per control."""
    page.add_init_script(COUNT_POSTS)
    page.goto("/calculators/batch/")
    Calculator(page, "batch").wait_state("ready")
    page.evaluate("window.__sameDocument = true")
    page.locator('nav a[href$="calculators/allreduce/"]').first.click()
    page.wait_for_url("**/calculators/allreduce/")
    Calculator(page, "allreduce").wait_state("ready")
    page.locator('nav a[href$="calculators/batch/"]').first.click()
    page.wait_for_url("**/calculators/batch/")
    batch = Calculator(page, "batch")
    batch.wait_state("ready")
    assert page.evaluate("window.__sameDocument") is True  # instant navigation, not a reload
    assert [w.url for w in page.workers if "calc-worker" in w.url] == [f"{watch.origin}/assets/js/calc-worker.mjs"]
    for name in PYODIDE_FILES + ("calc-worker.mjs", ".whl"):
        assert len(watch.paths(name)) == 1, (name, watch.paths(name))
    before = page.evaluate("window.__posts")
    batch.set_inputs({"micro_batch": "2", "data_parallel": "3"})
    assert page.evaluate("window.__posts") - before == 1  # one listener answered one input event
    assert batch.values()["global_batch"] == cli_json("batch", {"micro_batch": "2", "data_parallel": "3"})["global_batch"]


def test_instant_navigation_across_tool_pages_keeps_one_worker(page, watch):
    """Atlas -> memory -> atlas through the nav: the same document, one worker, one Pyodide download."""
    page.add_init_script(COUNT_POSTS)
    page.goto("/tools/atlas/")
    assert Calculator(page, "plan").wait_state("ready", timeout=30_000) == "ready"
    page.evaluate("window.__sameDocument = true")
    page.locator('nav a[href$="memory/"]').first.click()
    page.wait_for_url("**/tools/memory/")
    assert Calculator(page, "device-memory").wait_state("ready", timeout=30_000) == "ready"
    page.locator('nav a[href$="atlas/"]').first.click()
    page.wait_for_url("**/tools/atlas/")
    atlas = Calculator(page, "plan")
    assert atlas.wait_state("ready", timeout=30_000) == "ready"
    assert page.evaluate("window.__sameDocument") is True
    assert len([w for w in page.workers if "calc-worker" in w.url]) == 1
    for name in PYODIDE_FILES + ("calc-worker.mjs", ".whl"):
        assert len(watch.paths(name)) == 1, (name, watch.paths(name))
    before = page.evaluate("window.__posts")
    atlas.set_inputs({"interleave": "2"})
    assert page.evaluate("window.__posts") - before == 1  # one listener per control after A -> B -> A


def test_python_starts_only_when_a_calculator_shows_or_is_focused(page, watch):
    """Off screen, a calculator stays static; focusing one of its fields starts Python."""
    page.set_viewport_size({"width": 1000, "height": 300})
    page.goto("/calculators/allreduce/")  # the calculator sits below a 300 px tall window
    page.wait_for_load_state("networkidle")
    calc = Calculator(page, "allreduce")
    # the premise, checked rather than assumed: the calculator starts below the fold
    assert calc.root.bounding_box()["y"] >= 300, "the calculator is on screen; the page intro got shorter?"
    assert calc.state == "static" and watch.paths("pyodide.asm.wasm") == []
    calc.root.locator('[name="ranks"]').focus()
    assert calc.wait_state("ready") == "ready"


def _corrupt(route):
    body = bytearray(route.fetch().body())
    body[len(body) // 2] ^= 0xFF
    route.fulfill(status=200, body=bytes(body), content_type="application/octet-stream")
    return True


FAULTS = {
    "blocked wasm": lambda r: r.request.url.endswith(".wasm") and (r.abort() or True),
    "corrupted wheel": lambda r: r.request.url.endswith(".whl") and _corrupt(r),
    "missing wheel": lambda r: r.request.url.endswith(".whl") and (r.fulfill(status=404, body="") or True),
    "blocked worker": lambda r: r.request.url.endswith("calc-worker.mjs") and (r.abort() or True),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_unavailable_within_15_s_with_build_time_results(browser, base_url, watch, fault):
    """When Python cannot start, the calculator says so within 15 s and keeps the pre-rendered results."""
    context = open_context(browser, base_url, watch, fault=FAULTS[fault])
    try:
        page = context.new_page()
        started = time.monotonic()
        page.goto("/calculators/batch/?micro_batch=4")
        calc = Calculator(page, "batch")
        calc.wait_state("unavailable", timeout=15_000)
        assert time.monotonic() - started < 15
        assert "unavailable" in calc.status()
        example = COMMANDS["batch"].example
        assert calc.values() == {k: v for k, v in cli_json("batch", example).items() if k in calc.values()}
        assert calc.inputs()["micro_batch"] == "8"  # the inputs the results belong to
        assert calc.current()
        assert calc.root.locator('[name="micro_batch"]').get_attribute("readonly") is not None
        assert "Traceback" not in calc.root.text_content()
    finally:
        context.close()
    assert watch.offsite == []


#: The status line's ::before as the page draws it, and whether its text holds any pictograph.
STATUS_MARK = """(root) => {
  const status = root.querySelector(".calc__status");
  const mark = getComputedStyle(status, "::before");
  return { content: mark.content, width: parseFloat(mark.width), animation: mark.animationName,
           border: mark.borderTopStyle, text: status.textContent,
           pictograph: /\\p{Extended_Pictographic}/u.test(status.textContent + mark.content) };
}"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_loading_shows_a_css_indicator_not_an_emoji(browser, base_url, watch, motion):
    """While Python loads, the status has a CSS-drawn ring (still under reduced motion) and plain text."""
    held = []

    def hold_wasm(route):
        if route.request.url.endswith("pyodide.asm.wasm"):
            held.append(route)
            return True
        return False

    context = open_context(browser, base_url, watch, fault=hold_wasm, reduced_motion=motion)
    try:
        page = context.new_page()
        # the worker's request for the WebAssembly is held; wait for it, so it is there to release
        with context.expect_event("request", lambda r: r.url.endswith("pyodide.asm.wasm"), timeout=30_000):
            page.goto("/calculators/batch/")
        calc = Calculator(page, "batch")
        calc.wait_state("loading")
        assert held, "the request was seen but not routed"
        mark = calc.root.evaluate(STATUS_MARK)
        assert mark["content"] == '""', mark  # no text of its own: the status text is what is announced
        assert mark["width"] > 4 and not mark["pictograph"], mark
        assert mark["text"].startswith("Loading Python in your browser"), mark
        if motion == "reduce":
            assert (mark["animation"], mark["border"]) == ("none", "dotted"), mark
        else:
            assert (mark["animation"], mark["border"]) == ("calc-spin", "solid"), mark
        while held:
            held.pop().continue_()
        calc.wait_state("ready", timeout=30_000)
        assert calc.root.evaluate(STATUS_MARK)["content"] in ("none", "normal"), "the ring stays after loading"
    finally:
        context.close()
    assert watch.offsite == []
