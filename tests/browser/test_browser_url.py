"""Inputs in the address: kept when not default, restored on opening, and never executed."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from tests.browser.atlas_browser import (FOLLOW, KEEP_LOADING, STOP_LOADING, Calculator, Hold, Watch, calculators,
                                         cli_json, open_context, settled_url, visit)

from calc.api import COMMANDS, evaluate

pytestmark = pytest.mark.browser

def test_url_round_trip(page, browser, base_url, watch):
    """Edited inputs go to the query (non-default only); opening that address restores inputs and results."""
    visit(page, "/calculators/allreduce/")
    calc = Calculator(page, "allreduce")
    calc.wait_state("ready")
    entries = page.evaluate("history.length")
    calc.set_inputs({"ranks": "8", "payload": "4MB", "bandwidth": "100GB/s", "startup": "5us"})
    assert urlsplit(settled_url(page)).query == "ranks=8&payload=4MB"
    calc.set_inputs({"ranks": "64", "payload": "4MB", "bandwidth": "100GB/s", "startup": "5us"})
    assert urlsplit(settled_url(page)).query == "payload=4MB"  # back to default: dropped
    calc.set_inputs({"ranks": "8", "payload": "4MB", "bandwidth": "100GB/s", "startup": "5us"})
    shared = settled_url(page)
    assert page.evaluate("history.length") == entries  # replaceState, no new history entries

    # opened as a new reader would: another browser context, nothing booted yet
    context = open_context(browser, base_url, watch)
    try:
        other = context.new_page()
        other.goto(shared)
        restored = Calculator(other, "allreduce")
        restored.wait_state("ready")
        assert restored.inputs() == {"ranks": "8", "payload": "4MB", "bandwidth": "100GB/s", "startup": "5us"}
        expected = cli_json("allreduce", {"ranks": "8", "payload": "4MB"})
        assert restored.values() == {k: expected[k] for k in restored.values()}
        assert restored.current()
    finally:
        context.close()
    assert watch.offsite == [] and watch.errors == []


def test_malformed_url_value_is_a_field_error(page):
    """A value calc rejects shows its message next to the field; unknown parameters are ignored."""
    visit(page, "/calculators/batch/?micro_batch=eight&colour=blue&accumulation=2")
    calc = Calculator(page, "batch")
    assert calc.wait_state("error") == "error"
    assert calc.field_error("micro_batch") == "micro_batch must be a whole number >= 1, got 'eight'"
    assert calc.inputs()["accumulation"] == "2"
    assert not calc.current()


MARKUP = [
    '<img src=x onerror="window.__pwned=1">',
    '"><script>window.__pwned=1</script>',
    "javascript:window.__pwned=1",
    "<svg onload=window.__pwned=1>",
    "{{constructor.constructor('window.__pwned=1')()}}",
    "${window.__pwned=1}",
]


def _hostile_queries() -> list[tuple[str, str]]:
    fields = {"batch": ["micro_batch", "accumulation", "data_parallel", "microbatch_sizes", "seq_len"],
              "allreduce": ["ranks", "payload", "bandwidth", "startup"],
              "plan": ["tensor_parallel", "layers", "device_memory", "recompute", "sequence_parallel"],
              "device-memory": ["zero", "hidden", "device_memory", "precision"],
              "bubble": ["pipeline_parallel", "microbatches", "interleave"],
              "search": ["gpus", "device_memory", "inter_node_bandwidth", "top"],
              "infer": ["batch", "weight_precision", "max_latency", "tensor_parallel"]}
    queries = []
    for command, names in fields.items():
        queries.append((command, "&".join(f"{n}={quote(MARKUP[i % len(MARKUP)])}" for i, n in enumerate(names))))
        queries.append((command, "&".join(f"{n}={'9' * 10_000}" for n in names)))
        queries.append((command, "__proto__[polluted]=1&__proto__=x&constructor[prototype][polluted]=1"
                                 "&prototype=1&hasOwnProperty=1&toString=1&" + f"{names[0]}=2&{names[0]}=<b>3</b>"))
    queries.append(("batch", "micro_batch=%E0%A4%A&accumulation=%00%0A%0D&data_parallel=" + quote("\u202e8\u0000")))
    return queries


PATHS = {"batch": "/calculators/batch/", "allreduce": "/calculators/allreduce/", "plan": "/tools/atlas/",
         "device-memory": "/tools/memory/", "bubble": "/tools/timeline/", "search": "/tools/planner/",
         "infer": "/tools/inference/"}
COUNT = "root => root.querySelectorAll('.calc__form *, .calc__results *, .calc__status *').length"
RISKY = "document.querySelectorAll('script, img, iframe, object, embed, b').length"


@pytest.fixture(scope="module")
def baselines(browser, base_url):
    """Element counts of each calculator page as built (JavaScript off: no Python needed)."""
    context = open_context(browser, base_url, Watch(base_url), java_script_enabled=False)
    page = context.new_page()
    counts = {}
    for command, path in PATHS.items():
        page.goto(path)
        counts[command] = (Calculator(page, command).root.evaluate(COUNT), page.evaluate(RISKY))
    context.close()
    return counts


@pytest.mark.parametrize(("command", "query"), _hostile_queries(), ids=lambda v: v[:40])
def test_hostile_url_executes_nothing_and_adds_no_element(page, baselines, command, query):
    """Markup, prototype keys, 10 KB values: shown as text or ignored; no script runs, no element appears."""
    dialogs = []

    def on_dialog(d):
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    baseline, risky_before = baselines[command]
    path = PATHS[command]
    count, risky = COUNT, RISKY

    visit(page, f"{path}?{query}")
    calc = Calculator(page, command)
    calc.wait_state("ready", "error")
    assert calc.root.evaluate(count) <= baseline  # the live status drops the static one's <code>
    assert page.evaluate(risky) <= risky_before
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("({}).polluted === undefined && Object.prototype.polluted === undefined")
    assert dialogs == []
    if calc.state == "error":
        assert not calc.current()
        assert "Traceback" not in calc.root.text_content()
    page.remove_listener("dialog", on_dialog)


# ---------------------------------------------------------------- shared links compute (issue 11, §3)

#: A shared link for each calculator and tool: inputs that differ from the page's defaults.
SHARED = {"batch": "micro_batch=4&accumulation=32&data_parallel=4", "allreduce": "ranks=8&payload=4MB",
          "plan": "data_parallel=32&pipeline_parallel=4&interleave=2", "device-memory": "zero=3&recompute=full",
          "bubble": "pipeline_parallel=4&microbatches=16", "search": "global_batch=256", "infer": "batch=4&output_tokens=128"}


def test_every_calculator_has_a_shared_link_test(site):
    """Each command with a calculator on a built page is among the shared links below (add new ones)."""
    assert {w.command for w in calculators(site)} == set(SHARED)


@pytest.mark.parametrize("command", SHARED)
def test_a_shared_link_starts_python_at_once_and_marks_old_results(browser, base_url, site, command):
    """Opening a link with inputs: Python starts without a scroll or a focus, the calculator is brought
    into view, the build-time results are marked not current until the live ones, the CLI's, arrive.

    A cold context per page, with Pyodide's WebAssembly held back, so the time before the live
    results is long enough to be seen; a low window, so the calculator starts below the fold."""
    for widget in (w for w in calculators(site) if w.command == command):
        watch, hold = Watch(base_url), Hold("pyodide.asm.wasm")
        context = open_context(browser, base_url, watch, fault=hold, viewport={"width": 1000, "height": 300})
        try:
            page = context.new_page()
            with page.expect_worker(lambda w: "calc-worker" in w.url) as started:
                page.goto(widget.url(SHARED[command]))
            started.value.evaluate(KEEP_LOADING)  # the watchdog waits while the marking is checked
            calc = Calculator(page, command, widget.id)
            assert calc.wait_state("loading") == "loading", (widget, calc.status())
            linked = dict(parse_qsl(SHARED[command]))
            assert {k: calc.inputs()[k] for k in linked} == linked, widget
            assert not calc.current() and calc.root.locator(".calc__stale").is_visible(), widget
            assert "computed when the site was built" in calc.status(), widget
            top = calc.root.bounding_box()["y"]
            assert 0 <= top < 300, (widget, top)  # scrolled into view, its top on screen
            hold.release()
            started.value.evaluate(STOP_LOADING)
            assert calc.wait_state("ready") == "ready", (widget, calc.status())
            expected = evaluate(command, calc.inputs())
            assert calc.values() == {k: json.dumps(expected[k]) for k in calc.values()}, widget
            assert calc.current()
        finally:
            context.close()
        assert watch.offsite == [] and watch.errors == []


def test_a_name_given_twice_in_a_link_keeps_its_last_value(page):
    """Decided (README, input rules): as an option given twice on the command line, the last one counts."""
    visit(page, "/calculators/batch/?accumulation=2&accumulation=32")
    calc = Calculator(page, "batch")
    assert calc.wait_state("ready") == "ready"
    assert calc.inputs()["accumulation"] == "32"
    assert calc.values()["global_batch"] == cli_json("batch", {**COMMANDS["batch"].example,
                                                               "accumulation": "32"})["global_batch"]


#: Counts in ``window.__writes`` the rewrites of the address that change its query, the inputs' part (Material
#: also replaces the state: without a URL to keep the scroll offset, with the #fragment of the heading scrolled to).
COUNT_WRITES = """() => {
  window.__replace ??= history.replaceState.bind(history);  // instant navigation keeps the document
  const replace = window.__replace;
  window.__writes = [];
  history.replaceState = (state, title, url) => {
    if (url !== undefined && new URL(url, location.href).search !== location.search) window.__writes.push(String(url));
    return replace(state, title, url);
  };
}"""

#: Give the all-reduce calculator ``ranks`` and wait for its answer (aria-busy false: calc-mount.mjs); returns
#: whether a rewrite of the address is due then. Waits on the answer, an event, not on a clock.
ANSWERED = """async (ranks) => {
  const root = document.querySelector('[data-calc="allreduce"]');
  const field = root.querySelector('[name="ranks"]');
  const done = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (root.getAttribute("aria-busy") === "false") { observer.disconnect(); resolve(); }
    });
    observer.observe(root, { attributes: true, attributeFilter: ["aria-busy"] });
  });
  field.value = ranks;
  field.dispatchEvent(new Event("input", { bubbles: true }));
  await done;
  return root.dataset.query ?? null;
}"""


def ready_allreduce(page) -> Calculator:
    visit(page, "/calculators/allreduce/")
    calc = Calculator(page, "allreduce")
    calc.wait_state("ready")
    settled_url(page)
    page.evaluate(COUNT_WRITES)
    return calc


def test_a_burst_of_input_rewrites_the_address_once(page):
    """Inputs that come in one task make one rewrite, not one in the input events, and it holds the last of them."""
    calc = ready_allreduce(page)
    written = page.evaluate("""() => {
      const root = document.querySelector('[data-calc="allreduce"]');
      const field = root.querySelector('[name="ranks"]');
      for (const ranks of ["3", "5", "7"]) {
        field.value = ranks;
        field.dispatchEvent(new Event("input", { bubbles: true }));
      }
      return [window.__writes.length, root.dataset.query];
    }""")
    assert written == [0, "pending"]  # nothing written in the input events themselves
    assert urlsplit(settled_url(page)).query == "ranks=7"
    assert page.evaluate("window.__writes.length") == 1
    assert calc.wait_state("ready") == "ready" and calc.inputs()["ranks"] == "7"


def test_the_address_waits_for_the_reader_to_pause(cold_page):
    """Answered inputs 100 ms apart (a typist) rewrite nothing until 300 ms pass without one (calc-mount.mjs
    QUIET_MS): history.replaceState took a core from Python in the worker. The page's clock is Playwright's, so
    the test moves time itself; the answers come from the worker, waited on. A page of its own: the clock stays."""
    page = cold_page
    calc = ready_allreduce(page)
    page.clock.install()
    for ranks in ("3", "5", "7", "9"):
        assert page.evaluate(ANSWERED, ranks) == "pending"
        page.clock.run_for(100)
    assert page.evaluate("window.__writes.length") == 0 and calc.inputs()["ranks"] == "9"
    page.clock.run_for(150)  # 250 ms since the last input
    assert page.evaluate("window.__writes.length") == 0
    page.clock.run_for(100)
    assert urlsplit(settled_url(page)).query == "ranks=9"
    assert page.evaluate("window.__writes") == [page.url]


def test_leaving_the_field_or_the_page_writes_the_address_at_once(cold_page):
    """A rewrite due is made when focus leaves the calculator (a click on a link or on the address bar moves it)
    and when the page is hidden, without waiting for the pause; Back drops it (the entry reached keeps its own)."""
    page = cold_page
    ready_allreduce(page)
    page.clock.install()  # not moved: only the events below can write
    field = page.locator('[data-calc="allreduce"] [name="ranks"]')
    field.focus()
    assert page.evaluate(ANSWERED, "12") == "pending"
    page.locator("h1").first.click()  # focus leaves the field
    assert urlsplit(settled_url(page)).query == "ranks=12"

    assert page.evaluate(ANSWERED, "14") == "pending"
    page.evaluate("""() => {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
      document.dispatchEvent(new Event("visibilitychange"));
      delete document.hidden;
    }""")
    assert urlsplit(settled_url(page)).query == "ranks=14"

    assert page.evaluate(ANSWERED, "16") == "pending"
    page.evaluate("window.dispatchEvent(new PopStateEvent('popstate', { state: history.state }))")
    assert page.evaluate("document.querySelector('[data-query]')") is None
    page.clock.run_for(1000)
    assert urlsplit(page.url).query == "ranks=14" and page.evaluate("window.__writes.length") == 2


#: Holds back the page's XMLHttpRequests for ``url`` (Material's instant navigation fetches pages so) until
#: ``window.__release()``, which also puts XMLHttpRequest back as it was.
HOLD_PAGE = """(url) => {
  const proto = XMLHttpRequest.prototype;
  const { open, send } = proto;
  const held = [];
  proto.open = function (method, address, ...rest) {
    this.__address = new URL(String(address), location.href).href;
    return open.call(this, method, address, ...rest);
  };
  proto.send = function (...args) {
    if (this.__address !== url) return send.apply(this, args);
    held.push(() => send.apply(this, args));
  };
  window.__held = () => held.length;
  window.__release = () => {
    Object.assign(proto, { open, send });
    for (const go of held.splice(0)) go();
  };
}"""


def test_a_rewrite_due_when_instant_navigation_leaves_writes_nothing_into_the_next_address(page, base_url):
    """Material's instant navigation puts the next page's address at the click and unmounts this page's
    calculators once that page has arrived: a rewrite that falls due in between (the link followed without the
    field losing focus) is dropped, not written over the next page's address. The next page is held back until
    it has fallen due. (Unguarded, a page's blank fields once went onto the next page's address.)"""
    ready_allreduce(page)
    assert page.evaluate("""async (ranks) => {
      window.__left = document.querySelector('[data-calc="allreduce"]');
      return await (""" + ANSWERED + """)(ranks);
    }""", "11") == "pending"
    target = base_url + "/calculators/batch/"
    page.evaluate(HOLD_PAGE, target)
    try:
        page.evaluate(FOLLOW, target)
        page.wait_for_function("(url) => location.href === url && window.__held() === 1", arg=target)
        page.wait_for_function("() => !window.__left.dataset.query")  # the rewrite fell due meanwhile
        assert page.url == target and page.evaluate("window.__writes") == []
        assert page.evaluate("window.__left.isConnected")  # the old page still shown
    finally:
        page.evaluate("window.__release()")
    Calculator(page, "batch").wait_state("ready")
    assert page.url == target
