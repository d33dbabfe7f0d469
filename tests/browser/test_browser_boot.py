"""How Python starts in Chromium: from the build's memory snapshot, or by a normal boot when the
snapshot cannot be used; and early, when the browser is idle, unless the reader asks to save data.

Each test takes a cold page or a context of its own: what it checks happens before, or instead of, Python's first
start. How the worker started is read from the page's ``calc:ready`` performance mark, and how it
warmed up from ``calc:warm`` (calc-runtime.mjs).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from tests.browser.atlas_browser import SAVE_DATA, SEEN, Calculator, Watch, cli_json, open_context

pytestmark = pytest.mark.browser

BOOT = "() => performance.getEntriesByName('calc:ready').map((e) => e.detail)"
WARM = "() => performance.getEntriesByName('calc:warm').map((e) => e.detail)"
#: calc-worker.mjs's WARM_RUNS and WARM_MS.
WARM_RUNS, WARM_MS = 30, 600


def _warmed(page) -> dict:
    """Wait for the worker's warm-up to end (it follows the first answer); its one mark."""
    page.wait_for_function(f"() => ({WARM})().length > 0")
    [mark] = page.evaluate(WARM)
    return mark

#: Resolves once the browser has been idle twice after this call: an idle callback the page asked for
#: before it (the early start) has run by then.
IDLE_TWICE = "() => new Promise((resolve) => requestIdleCallback(() => requestIdleCallback(resolve)))"


def _ready_on_batch(page) -> list[dict]:
    """Open the batch calculator, wait until it is live, check one answer against the CLI; the marks."""
    page.goto("/calculators/batch/")
    calc = Calculator(page, "batch")
    assert calc.wait_state("ready", "unavailable") == "ready", calc.status()
    calc.set_inputs({"micro_batch": "3", "data_parallel": "5"})
    assert calc.values()["global_batch"] == cli_json("batch", {"micro_batch": "3", "data_parallel": "5"})["global_batch"]
    return page.evaluate(BOOT)


def test_python_starts_from_the_snapshot(cold_page, watch, manifest, site):
    """A cold start restores the build's snapshot, fetched once, whose bytes are those the manifest hashes."""
    snapshot = manifest["snapshot"]
    served = (site / "assets/runtime" / snapshot["file"]).read_bytes()
    assert hashlib.sha256(served).hexdigest() == snapshot["sha256"] and len(served) == snapshot["gzip_bytes"]
    assert _ready_on_batch(cold_page) == [{"boot": "snapshot", "fallback": ""}]
    warm = _warmed(cold_page)  # the first answer repeated, so the reader's next inputs run optimised code
    assert 1 <= warm["runs"] <= WARM_RUNS and warm["ms"] > 0, warm
    assert warm["runs"] == WARM_RUNS or warm["ms"] >= WARM_MS, warm  # it stops at one bound or the other
    calc = Calculator(cold_page, "batch")  # still answering, the same answers
    calc.set_inputs({"micro_batch": "7", "data_parallel": "2"})
    assert calc.values()["global_batch"] == cli_json("batch", {"micro_batch": "7", "data_parallel": "2"})["global_batch"]
    assert len(watch.paths(snapshot["file"])) == 1
    assert len(watch.paths(manifest["wheel"])) == 1  # the wheel's files are unpacked after the restore


def _corrupt(route):
    body = bytearray(route.fetch().body())
    body[len(body) // 2] ^= 0xFF
    route.fulfill(status=200, body=bytes(body), content_type="application/gzip")
    return True


def _garbage_that_matches(route):
    """The manifest and the snapshot both replaced: bytes that pass the checksum but are no snapshot."""
    garbage = b"\x1f\x8b" + bytes(range(256)) * 64
    if route.request.url.endswith("manifest.json"):
        manifest = route.fetch().json()
        manifest["snapshot"]["sha256"] = hashlib.sha256(garbage).hexdigest()
        route.fulfill(status=200, body=json.dumps(manifest), content_type="application/json")
        return True
    if route.request.url.endswith(".snapshot.gz"):
        route.fulfill(status=200, body=garbage, content_type="application/gzip")
        return True
    return False


SNAPSHOT_FAULTS = {
    "corrupt snapshot": (lambda r: r.request.url.endswith(".snapshot.gz") and _corrupt(r), "does not match"),
    "missing snapshot": (lambda r: r.request.url.endswith(".snapshot.gz")
                         and (r.fulfill(status=404, body="") or True), "HTTP 404"),
    "blocked snapshot": (lambda r: r.request.url.endswith(".snapshot.gz") and (r.abort() or True), ""),
    "not a snapshot": (_garbage_that_matches, ""),
}


@pytest.mark.parametrize("fault", SNAPSHOT_FAULTS)
def test_a_snapshot_that_fails_means_a_normal_boot(browser, base_url, fault):
    """Whatever is wrong with the snapshot, Python boots as it would without one, and says why."""
    route, reason = SNAPSHOT_FAULTS[fault]
    watch = Watch(base_url, allow_errors=True)  # a 404 or an aborted request is logged by Chromium
    context = open_context(browser, base_url, watch, fault=route)
    try:
        page = context.new_page()
        [mark] = _ready_on_batch(page)
        warm = _warmed(page)
    finally:
        context.close()
    assert mark["boot"] == "normal" and reason in mark["fallback"] and mark["fallback"], mark
    assert warm == {"runs": 0, "ms": 0}, warm  # a normal boot's imports did the warming
    assert watch.offsite == []


def test_python_starts_early_when_the_browser_is_idle(cold_page):
    """Below the fold and untouched, a calculator goes live by itself, from the snapshot."""
    page = cold_page
    page.set_viewport_size({"width": 1000, "height": 300})
    page.goto("/calculators/allreduce/")
    calc = Calculator(page, "allreduce")
    # the premise, checked rather than assumed: the calculator starts below the fold
    assert calc.root.bounding_box()["y"] >= 300, "the calculator is on screen; the page intro got shorter?"
    assert calc.wait_state("ready", "unavailable") == "ready", calc.status()
    assert calc.root.bounding_box()["y"] >= 300  # nobody scrolled to it
    assert page.evaluate(BOOT)[0]["boot"] == "snapshot"


def test_save_data_waits_for_the_calculator(cold_page, watch):
    """With Save-Data, idle time starts nothing: Python starts when the calculator is focused, and
    without the snapshot (twice the bytes of a normal boot)."""
    page = cold_page
    page.set_viewport_size({"width": 1000, "height": 300})
    page.add_init_script(SAVE_DATA)
    page.goto("/calculators/allreduce/")
    calc = Calculator(page, "allreduce")
    page.wait_for_function("root => !root.querySelector('.calc__form [name]').readOnly",
                           arg=calc.root.element_handle())  # mounted: the early start was decided
    assert page.evaluate(SEEN)
    page.evaluate(IDLE_TWICE)
    assert calc.root.bounding_box()["y"] >= 300
    assert calc.state == "static" and watch.paths("calc-worker.mjs") == []
    calc.root.locator('[name="ranks"]').focus()
    assert calc.wait_state("ready") == "ready"
    [mark] = page.evaluate(BOOT)
    assert mark["boot"] == "normal" and "saves data" in mark["fallback"], mark  # fewer bytes without it
    assert watch.paths(".snapshot.gz") == []
