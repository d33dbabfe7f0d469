"""The Content-Security-Policy in force in Chromium: no violation on any page or while calculators work.

The policy is the one hooks/csp.py writes into each page; no context here bypasses it. A
listener added before any page script records every ``securitypolicyviolation`` event. (The
calculator's module worker gets its policy from its own response headers, which a static host
does not send; its requests are still confined to this origin by the routing of every test.)
"""

from __future__ import annotations

import pytest
from tests.browser.atlas_browser import SEEN, Watch, calculators, open_context, open_widget, page_paths, visit

pytestmark = pytest.mark.browser

LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
});
"""


def violations(page) -> list[str]:
    return page.evaluate("window.__csp")


def test_no_violation_on_any_page(cold_page, site):
    """Each page loaded directly, then each reached by instant navigation from the home page: none.

    A cold page: the listener is added before any page script, so from the first document on."""
    page = cold_page
    page.add_init_script(LISTEN)
    found = []
    paths = page_paths(site)
    for path in paths:
        page.goto(path)
        found += [f"{path}: {v}" for v in violations(page)]
    page.goto("/")
    page.evaluate("window.__sameDocument = true")
    for path in [p for p in paths if p.endswith("/") and p != "/"]:
        visit(page, path)  # a link followed as a reader's click would, then the new article waited for
        assert page.evaluate(SEEN)
    assert page.evaluate("window.__sameDocument") is True, "instant navigation fell back to full loads"
    found += [f"(instant navigation) {v}" for v in violations(page)]
    assert found == []


def test_no_violation_while_the_calculators_work(cold_page, site, watch):
    """Each calculator: the worker starts, a result is ready, an error and a new result follow: none.

    A cold page, so the listener sees the worker start; the calculators are then reached by
    instant navigation, in the same document."""
    page = cold_page
    page.add_init_script(LISTEN)
    widgets = calculators(site)
    assert widgets
    found = []
    for widget in widgets:
        calc = open_widget(page, widget)
        assert calc.wait_state("ready") == "ready", calc.status()
        assert any("calc-worker" in w.url for w in page.workers), "the Python worker did not start"
        name = calc.root.evaluate("r => r.querySelector('.calc__form input[type=text][name]')?.name ?? null")
        if name is not None:
            assert calc.set_inputs({name: "not a number"}, blank_others=False) == "error"
            default = calc.root.locator(f'[name="{name}"]').get_attribute("data-default")
            assert calc.set_inputs({name: default}, blank_others=False) == "ready"
        found += [f"{widget}: {v}" for v in violations(page)]
    assert watch.paths("pyodide.asm.wasm") and watch.paths(".whl")
    assert found == []


def test_the_policy_is_in_force(browser, base_url):
    """Control: an inline script the build did not hash is blocked and reported, so silence above means something."""
    watch = Watch(base_url)
    context = open_context(browser, base_url, watch)
    try:
        page = context.new_page()
        page.add_init_script(LISTEN)
        page.goto("/")
        page.evaluate("""() => {
            const s = document.createElement("script");
            s.textContent = "window.__injected = true";
            document.body.append(s);
        }""")
        page.wait_for_function("() => window.__csp.length > 0")
        assert page.evaluate("window.__injected") is None
        assert any(v.startswith("script-src") for v in violations(page))
    finally:
        context.close()
