"""What the theme's bundle does to every page when it starts is done before the first style, so the bundle finds
nothing left to change (issue 15: each change restyled the whole page inside the bundle's task): in the head
(overrides/main.html) and, for the tables' scrolling frames, in the HTML (hooks/table_frames.py).

A MutationObserver installed before any page script records each change to a stylesheet's ``href`` and to the
root's ``class`` and ``data-js-focus-visible`` (the theme's focus-visible polyfill sets both), and whether the body existed when its callback ran: callbacks run at the end of the script that
made the change, so a change made by the head's script is seen with no body, one made by the bundle (at the end of
the body) with one.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

RECORD = """
window.__changes = [];
window.__moved = 0;  // tables taken out of the page once the body exists (the theme framing them)
new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === "childList") {
      window.__moved += [...r.removedNodes].filter((n) => n.nodeName === "TABLE").length;
    } else if (r.target === document.documentElement || r.target.matches('link[rel="stylesheet"]')) {
      window.__changes.push({tag: r.target.tagName, attribute: r.attributeName, old: r.oldValue,
                             now: r.target.getAttribute(r.attributeName), body: document.body !== null});
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true,
                      attributeFilter: ["href", "class", "data-js-focus-visible"], attributeOldValue: true});
"""


@pytest.mark.parametrize("path", ["/strategies/sharding/", "/tools/atlas/"])
def test_the_bundle_finds_the_stylesheets_absolute_and_the_root_marked(cold_page, base_url, path):
    """Each stylesheet's href is made absolute once, in the head; the root's no-js becomes js there too, and it gets
    the focus-visible polyfill's class and attribute. After the body exists the bundle sets the root's class and
    attribute again, to the values they have (DOMTokenList.add writes the attribute even when the class is there),
    so nothing is restyled; and the theme still did its part: every stylesheet's href is absolute, the root is
    marked js and js-focus-visible."""
    cold_page.add_init_script(RECORD)
    cold_page.goto(path)
    cold_page.wait_for_function("() => typeof document$ !== 'undefined' && document.readyState === 'complete'")
    changes = cold_page.evaluate("window.__changes")
    sheets = [c for c in changes if c["tag"] == "LINK"]
    assert sheets and all(not c["body"] for c in sheets), sheets
    assert all(c["now"].startswith(base_url) and not c["old"].startswith("http") for c in sheets), sheets
    assert len({c["now"] for c in sheets}) == len(sheets)  # each once
    root = [c for c in changes if c["tag"] == "HTML"]
    in_head = [(c["attribute"], c["old"], c["now"]) for c in root if not c["body"]]  # "now": when the head's script ended
    assert in_head == [("class", "no-js", "js js-focus-visible"), ("class", "js", "js js-focus-visible"),
                       ("data-js-focus-visible", None, "")], root
    later = [c for c in root if c["body"]]
    assert later and all(c["old"] == c["now"] for c in later), root  # the polyfill ran, and changed nothing
    hrefs = cold_page.evaluate("[...document.querySelectorAll('link[rel=stylesheet]')].map((l) => l.getAttribute('href'))")
    assert hrefs and all(h.startswith(base_url) for h in hrefs), hrefs
    assert cold_page.evaluate("document.documentElement.className").split() == ["js", "js-focus-visible"]


@pytest.mark.parametrize("path", ["/strategies/sharding/", "/tools/atlas/"])
def test_tables_come_framed_and_the_bundle_moves_none(cold_page, path):
    """Every table of the content without a class sits in the theme's scrolling frame, exactly one, as the theme
    framed them (hooks/table_frames.py writes the frames; hooks/theme_js.py stops the bundle looking), but for a
    tool's tables, which scroll in their own region and have no other frame; and no table is taken out of the page
    and put back after load."""
    cold_page.add_init_script(RECORD)
    cold_page.goto(path)
    cold_page.wait_for_function("() => typeof document$ !== 'undefined' && document.readyState === 'complete'")
    tables, framed, nested, own, own_misplaced = cold_page.evaluate("""() => {
      const tables = [...document.querySelectorAll(".md-content table:not([class]):not([data-frame='own'])")];
      const own = [...document.querySelectorAll(".md-content table[data-frame='own']")];
      return [tables.length,
              tables.filter((t) => t.parentElement.matches(".md-typeset__scrollwrap > .md-typeset__table")).length,
              document.querySelectorAll(".md-typeset__table .md-typeset__table").length,
              own.length, own.filter((t) => !t.parentElement.matches(".tool__table[role=region][tabindex='0']")).length];
    }""")
    assert framed == tables and nested == 0, (tables, framed, nested)
    assert (tables if path == "/strategies/sharding/" else own) > 0 and own_misplaced == 0, (tables, own, own_misplaced)
    assert cold_page.evaluate("window.__moved") == 0
