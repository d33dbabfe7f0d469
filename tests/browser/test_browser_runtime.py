"""The runtime in Chromium: lazy, one worker across instant navigation, and honest when it fails.

Every test here takes a cold page (``cold_page`` or a context of its own): what they check is
what happens before, or instead of, Python's first start.
"""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import (
    KEEP_LOADING, SAVE_DATA, SEEN, STOP_LOADING, Calculator, Hold, cli_json, open_context,
)

from calc.api import COMMANDS

pytestmark = pytest.mark.browser

PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")

#: Counts the messages the page sends to workers (test instrumentation, added before any page script).
COUNT_POSTS = """
const post = Worker.prototype.postMessage;
window.__posts = 0;
Worker.prototype.postMessage = function (...args) { window.__posts++; return post.apply(this, args); };
"""


def test_page_without_calculator_loads_no_python(cold_page, watch):
    """A page with no calculator fetches neither Pyodide, the worker, the wheel nor the mounting code."""
    page = cold_page
    page.goto("/calculators/")
    assert page.evaluate(SEEN)  # the page's scripts have run: anything they were to load is asked for
    for name in PYODIDE_FILES + ("calc-worker.mjs", "calc-mount.mjs", "manifest.json", ".whl"):
        assert watch.paths(name) == [], name
    assert page.evaluate("document.querySelectorAll('[data-calc]').length") == 0


def test_instant_navigation_keeps_one_worker_and_one_pyodide_start(cold_page, watch):
    """A -> B -> A by the site's own links: one worker, one Pyodide download, one listener per control."""
    page = cold_page
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


def test_instant_navigation_across_tool_pages_keeps_one_worker(cold_page, watch):
    """Atlas -> memory -> atlas through the site's links: the same document, one worker, one Pyodide download.

    The tool pages hide the navigation sidebar: the links followed are the visible ones (the footer's)."""
    page = cold_page
    page.add_init_script(COUNT_POSTS)
    page.goto("/tools/atlas/")
    assert Calculator(page, "plan").wait_state("ready") == "ready"
    page.evaluate("window.__sameDocument = true")
    page.locator('a[href$="memory/"]:visible').first.click()
    page.wait_for_url("**/tools/memory/")
    assert Calculator(page, "device-memory").wait_state("ready") == "ready"
    page.locator('a[href$="atlas/"]:visible').first.click()
    page.wait_for_url("**/tools/atlas/")
    atlas = Calculator(page, "plan")
    assert atlas.wait_state("ready") == "ready"
    assert page.evaluate("window.__sameDocument") is True
    assert len([w for w in page.workers if "calc-worker" in w.url]) == 1
    for name in PYODIDE_FILES + ("calc-worker.mjs", ".whl"):
        assert len(watch.paths(name)) == 1, (name, watch.paths(name))
    before = page.evaluate("window.__posts")
    atlas.set_inputs({"interleave": "2"})
    assert page.evaluate("window.__posts") - before == 1  # one listener per control after A -> B -> A


def test_python_starts_only_when_a_calculator_shows_or_is_focused(cold_page, watch):
    """Off screen, a calculator stays static; focusing one of its fields starts Python. With Save-Data
    (test_browser_boot.py: without it, Python starts early, when the browser is idle)."""
    page = cold_page
    page.add_init_script(SAVE_DATA)
    page.set_viewport_size({"width": 1000, "height": 300})
    page.goto("/calculators/allreduce/")  # the calculator sits below a 300 px tall window
    calc = Calculator(page, "allreduce")
    # mounted (its fields are editable), and the visibility observer has had frames to report
    page.wait_for_function("root => !root.querySelector('.calc__form [name]').readOnly", arg=calc.root.element_handle())
    assert page.evaluate(SEEN)
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
def test_unavailable_with_build_time_results(browser, base_url, watch, fault):
    """When Python cannot start, the calculator says why and keeps the pre-rendered results.

    The failure is reported by an event (an error, a 404, a checksum), not by the watchdog: the
    reason shown is the fault's own."""
    context = open_context(browser, base_url, watch, fault=FAULTS[fault])
    try:
        page = context.new_page()
        page.goto("/calculators/batch/?micro_batch=4")
        calc = Calculator(page, "batch")
        calc.wait_state("unavailable")
        assert "unavailable" in calc.status()
        assert "did not start in time" not in calc.status(), calc.status()
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
    hold = Hold("pyodide.asm.wasm")
    context = open_context(browser, base_url, watch, fault=hold, reduced_motion=motion)
    try:
        page = context.new_page()
        with page.expect_worker(lambda w: "calc-worker" in w.url) as started:
            page.goto("/calculators/batch/")
        started.value.evaluate(KEEP_LOADING)  # the watchdog waits while the ring is looked at
        calc = Calculator(page, "batch")
        assert calc.wait_state("loading") == "loading"
        mark = calc.root.evaluate(STATUS_MARK)
        assert mark["content"] == '""', mark  # no text of its own: the status text is what is announced
        assert mark["width"] > 4 and not mark["pictograph"], mark
        assert mark["text"].startswith("Loading Python in your browser"), mark
        if motion == "reduce":
            assert (mark["animation"], mark["border"]) == ("none", "dotted"), mark
        else:
            assert (mark["animation"], mark["border"]) == ("calc-spin", "solid"), mark
        hold.release()
        started.value.evaluate(STOP_LOADING)
        assert calc.wait_state("ready") == "ready"
        assert calc.root.evaluate(STATUS_MARK)["content"] in ("none", "normal"), "the ring stays after loading"
    finally:
        context.close()
    assert watch.offsite == []


def test_a_start_that_hangs_is_unavailable_after_the_watchdog(browser, base_url, watch):
    """A server that never answers for Pyodide's WebAssembly: no error event comes, so the watchdog
    (12 s without progress, calc-runtime.mjs) says Python did not start, and the build-time results stay."""
    held = []
    context = open_context(browser, base_url, watch,
                           fault=lambda r: r.request.url.endswith(".wasm") and (held.append(r) or True))
    try:
        page = context.new_page()
        page.goto("/calculators/batch/")
        calc = Calculator(page, "batch")
        assert calc.wait_state("unavailable") == "unavailable"
        assert "Python did not start in time" in calc.status()
        assert held and calc.current()
    finally:
        context.close()


def test_a_start_that_is_busy_is_waited_for(browser, base_url, watch):
    """A worker too busy to answer (as on a loaded machine) is not hung: the watchdog counts only idle
    time, so a start held back for longer than the watchdog's 12 s, busy throughout, still ends ready."""
    hold = Hold("pyodide.asm.wasm")
    context = open_context(browser, base_url, watch, fault=hold)
    try:
        page = context.new_page()
        with page.expect_worker(lambda w: "calc-worker" in w.url) as started:
            page.goto("/calculators/batch/")
        calc = Calculator(page, "batch")
        assert calc.wait_state("loading") == "loading"
        # test instrument: keep the worker's thread busy for 13 s, longer than the watchdog's limit
        started.value.evaluate("() => { const end = Date.now() + 13000; while (Date.now() < end); }")
        hold.release()
        assert calc.wait_state("ready", "unavailable") == "ready", calc.status()
    finally:
        context.close()
