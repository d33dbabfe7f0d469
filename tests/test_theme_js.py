"""hooks/theme_js.py: the theme's bundle no longer appends its colour-scheme meta element nor looks for tables to frame,
each edit keeping its length, and a theme that changes either statement fails the build naming it (the edits'
mechanics: tests/test_theme_patch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hooks.theme_js import APPEND, FIND_TABLES, KEPT_OUT, NO_TABLES, edit_bundle
from tests.support import theme_file_site


def site_with(tmp_path: Path, text: str | None = None) -> Path:
    return theme_file_site(tmp_path, "assets/javascripts", "bundle.*.min.js", text)


def test_the_installed_themes_bundle_keeps_the_element_out_and_changes_nothing_else(tmp_path):
    """The element is still made (the theme sets its content later) but never appended; the rest is the theme's,
    at the same offsets (the source map still points right)."""
    site = site_with(tmp_path)
    (bundle,) = (site / "assets/javascripts").glob("bundle.*.min.js")
    before = bundle.read_text()
    assert before.count(APPEND) == 1
    assert edit_bundle(site) == bundle
    after = bundle.read_text()
    assert after == before.replace(APPEND, KEPT_OUT).replace(FIND_TABLES, NO_TABLES) and len(after) == len(before)
    assert 'x("meta",{name:"color-scheme"})' in after and "appendChild(o)" not in after[after.index(KEPT_OUT):][:80]


@pytest.mark.parametrize(("text", "found", "what"), [
    ("var a=1;", 0, "the colour-scheme meta element's append"),
    (APPEND + APPEND + FIND_TABLES, 2, "the colour-scheme meta element's append"),
    (APPEND + "var a=1;", 0, "the content mount's table selector"),
])
def test_a_theme_that_changed_a_statement_fails_the_build(tmp_path, text, found, what):
    with pytest.raises(ValueError, match=rf"does not hold {what} once \(found {found} times\)"):
        edit_bundle(site_with(tmp_path, text))


def test_the_bundle_looks_for_no_table_to_frame(tmp_path):
    """The content mount's query for tables matches nothing once edited (hooks/table_frames.py frames them at build),
    at the same offsets; the rest of the bundle is the theme's."""
    site = site_with(tmp_path)
    (bundle,) = (site / "assets/javascripts").glob("bundle.*.min.js")
    before = bundle.read_text()
    assert before.count(FIND_TABLES) == 1 and len(NO_TABLES) == len(FIND_TABLES)
    edit_bundle(site)
    assert "table:not([class])" not in bundle.read_text()
