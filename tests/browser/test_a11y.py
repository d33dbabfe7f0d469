"""axe-core on every built page and every calculator state: zero WCAG 2.2 AA violations.

- axe-core comes from ``node_modules`` (the exact version in package.json), never from a CDN.
  Its source is evaluated in the page through the DevTools protocol (``page.evaluate``), which
  a Content-Security-Policy does not govern, so the site's real policy stays in force: the pages
  are checked exactly as readers get them, and no context needs ``bypass_csp``.
- Pages and calculators are discovered from the built site, so new pages are covered unedited.
- Palettes: each page is loaded once and checked in both, switched in place as the reader's
  toggle does (the theme's palette radio, with ``prefers-color-scheme`` emulated to match);
  every check first asserts the body's ``data-md-color-scheme`` really is the one expected.
- An exclusion is an entry of ``tests/a11y_exclusions.json``: a rule id, a CSS selector and a
  written reason; it drops only that rule's findings on elements matching that selector.
"""

from __future__ import annotations

import json

import pytest
from tests.browser.atlas_browser import (KEEP_LOADING, STOP_LOADING, Hold, Watch, calculators, open_context,
                                         open_widget, page_paths)
from tests.support import ROOT

pytestmark = pytest.mark.browser

AXE_SOURCE = (ROOT / "node_modules/axe-core/axe.min.js").read_text()
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
EXCLUSIONS_FILE = ROOT / "tests/a11y_exclusions.json"
EXCLUSIONS = json.loads(EXCLUSIONS_FILE.read_text())["exclusions"]

#: Palette name -> (emulated prefers-color-scheme, the theme's scheme on <body>).
PALETTES = {"light": ("light", "default"), "dark": ("dark", "slate")}
WIDTHS = {"desktop": 1280, "phone": 375}

#: Waits until the page has settled: two frames for resize observers to report. (Math is rendered
#: at build time, so there is nothing else to wait for; unrendered math fails the check.)
SETTLED = """async () => {
  for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(r));
  const unrendered = document.querySelectorAll(".arithmatex:not([data-katex])").length;
  return [document.body.dataset.mdColorScheme, unrendered];
}"""

#: Runs axe over ``include`` (selectors) and returns violations, minus the committed exclusions.
RUN_AXE = """async ([include, tags, exclusions]) => {
  const result = await axe.run({ include }, {
    runOnly: { type: "tag", values: tags }, resultTypes: ["violations"],
  });
  const excluded = (rule, target) => exclusions.some((e) => e.rule === rule &&
    typeof target[0] === "string" && document.querySelector(target[0])?.matches(e.selector));
  return result.violations
    .map((v) => ({ id: v.id, help: v.help,
                   nodes: v.nodes.filter((n) => !excluded(v.id, n.target))
                                 .map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })) }))
    .filter((v) => v.nodes.length > 0);
}"""


def axe(page, include: list[str] | None = None) -> list[str]:
    """axe's violations on ``page`` (within ``include`` selectors, else the document), one line each."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE_SOURCE)
    found = page.evaluate(RUN_AXE, [include or ["html"], TAGS, EXCLUSIONS])
    return [
        f"{v['id']} ({v['help']}) at {n['target']}: {' '.join(n['summary'].split())}"
        for v in found for n in v["nodes"]
    ]


def settle(page, scheme: str) -> None:
    shown, unrendered = page.evaluate(SETTLED)
    assert shown == scheme, "the palette did not switch"
    assert unrendered == 0, "math left for the page to render"


def test_exclusions_name_a_rule_a_selector_and_a_reason():
    """Every exclusion is explicit: an axe rule id, a CSS selector and a written reason."""
    for entry in EXCLUSIONS:
        assert set(entry) == {"rule", "selector", "reason"}, entry
        assert entry["rule"] and entry["selector"].strip() not in ("", "*", "html", "body"), entry
        assert len(entry["reason"].split()) >= 5, entry


def in_both_palettes(page, check) -> list[str]:
    """``check()`` under each palette, switched in place as the reader's toggle does."""
    found = []
    for palette, (emulated, scheme) in PALETTES.items():
        page.emulate_media(color_scheme=emulated)
        page.evaluate("""(scheme) => {
            const option = document.querySelector(`input[name="__palette"][data-md-color-scheme="${scheme}"]`);
            if (!option.checked) option.click();
        }""", scheme)
        settle(page, scheme)
        found += [f"[{palette}] {p}" for p in check()]
    return found


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_has_no_violations(browser, base_url, site, width):
    """axe finds nothing on any built page in either palette, with every folded answer opened too.

    Python is held back (calculators stay 'loading'); their other states are the next test's.
    """
    watch = Watch(base_url)
    context = open_context(browser, base_url, watch, fault=Hold("pyodide.asm.wasm"),  # never released
                           viewport={"width": WIDTHS[width], "height": 800})
    problems = []
    try:
        page = context.new_page()
        for path in page_paths(site):
            page.goto(path)
            problems += [f"{path}: {p}" for p in in_both_palettes(page, lambda: axe(page))]
            if page.evaluate("document.querySelectorAll('article details').length"):
                # the quiz answered: open every fold, then check what it shows
                page.evaluate("document.querySelectorAll('article details').forEach((d) => { d.open = true; })")
                problems += [f"{path} (answers open): {p}"
                             for p in in_both_palettes(page, lambda: axe(page, ["article details"]))]
    finally:
        context.close()
    assert watch.offsite == []
    assert problems == [], f"{len(problems)} violations:\n" + "\n".join(problems)


def _block_worker(route) -> bool:
    return route.request.url.endswith("calc-worker.mjs") and (route.abort() or True)


def test_calculators_in_every_state_have_no_violations(browser, base_url, site):
    """Each calculator, loading, with a result, with an input error and unavailable: axe finds nothing.

    Each widget page is loaded cold, with Pyodide's WebAssembly held back, because "loading" is
    only seen before Python's first start; it is released once axe has checked that state. While
    it is held the worker reports progress, as a slow download would (:data:`KEEP_LOADING`), so
    however long axe takes on a busy machine, the runtime's watchdog does not turn "loading" into
    "unavailable" under the check."""
    widgets = calculators(site)
    assert widgets, "no [data-calc] on any built page: the discovery is broken"
    watch = Watch(base_url)
    hold = Hold("pyodide.asm.wasm")
    viewport = {"width": 1280, "height": 800}
    problems = []

    def check(calc, widget, state):
        assert calc.state == state, (widget, calc.state, calc.status())
        return [f"{widget} {state}: {p}" for p in in_both_palettes(calc.page, lambda: axe(calc.page, [f"#{widget.id}"]))]

    context = open_context(browser, base_url, watch, fault=hold, viewport=viewport)
    try:
        page = context.new_page()
        for widget in widgets:
            hold.arm()
            with page.expect_worker(lambda w: "calc-worker" in w.url) as started:
                calc = open_widget(page, widget, cold=True)
            started.value.evaluate(KEEP_LOADING)
            calc.wait_state("loading")
            problems += check(calc, widget, "loading")
            hold.release()
            started.value.evaluate(STOP_LOADING)
            calc.wait_state("ready")
            problems += check(calc, widget, "ready")
            name = calc.root.evaluate("r => r.querySelector('.calc__form input[type=text][name]')?.name ?? null")
            if name is not None:
                calc.set_inputs({name: "not a number"}, blank_others=False)
                problems += check(calc, widget, "error")
    finally:
        context.close()
    # unavailable: the worker cannot start
    context = open_context(browser, base_url, watch, fault=_block_worker, viewport=viewport)
    try:
        page = context.new_page()
        for widget in widgets:
            calc = open_widget(page, widget)
            calc.wait_state("unavailable")
            problems += check(calc, widget, "unavailable")
    finally:
        context.close()
    assert watch.offsite == []
    assert problems == [], f"{len(problems)} violations:\n" + "\n".join(problems)
