"""hooks/theme_js.py: the theme's bundle no longer appends its colour-scheme meta element nor looks for tables to frame,
each edit keeping its length, and a theme that changes either statement fails the build naming it (the edits'
mechanics: tests/test_theme_patch.py); its first line asks V8 to compile it while it downloads, its source map
shifted one line to match."""

from __future__ import annotations

from pathlib import Path

import pytest

from hooks.theme_js import APPEND, BUNDLE_START, COMPILE_HINT, FIND_TABLES, KEPT_OUT, NO_TABLES, edit_bundle, hint_compile
from tests.support import theme_file_site


def site_with(tmp_path: Path, text: str | None = None) -> Path:
    return theme_file_site(tmp_path, "assets/javascripts", "bundle.*.min.js", text)


def site_with_map(tmp_path: Path) -> tuple[Path, Path]:
    """A site holding the installed theme's bundle and its source map; their paths."""
    import json
    import shutil

    import material

    site = site_with(tmp_path)
    (bundle,) = (site / "assets/javascripts").glob("bundle.*.min.js")
    original = Path(material.__file__).parent / "templates/assets/javascripts" / (bundle.name + ".map")
    shutil.copy(original, bundle.with_name(original.name))
    assert "mappings" in json.loads(original.read_text())
    return bundle, bundle.with_name(original.name)


def test_the_installed_themes_bundle_keeps_the_element_out_and_changes_nothing_else(tmp_path):
    """The element is still made (the theme sets its content later) but never appended; the rest is the theme's,
    at the same offsets (the source map still points right)."""
    site = site_with(tmp_path)
    (bundle,) = (site / "assets/javascripts").glob("bundle.*.min.js")
    before = bundle.read_text()
    assert before.count(APPEND) == 1
    assert edit_bundle(site) == bundle
    after = bundle.read_text()
    assert after == COMPILE_HINT + before.replace(APPEND, KEPT_OUT).replace(FIND_TABLES, NO_TABLES)
    assert 'x("meta",{name:"color-scheme"})' in after and "appendChild(o)" not in after[after.index(KEPT_OUT):][:80]


def test_the_bundle_asks_to_be_compiled_as_it_downloads_and_its_map_still_points_right(tmp_path):
    """The hint is the bundle's whole first line; the source map gains one empty generated line in front, so each
    mapping still names the line of the code it maps, one further down."""
    import json

    bundle, source_map = site_with_map(tmp_path)
    before, mappings = bundle.read_text(), json.loads(source_map.read_text())["mappings"]
    assert before.startswith(BUNDLE_START)
    edit_bundle(bundle.parent.parent.parent)
    after = bundle.read_text()
    assert after.splitlines()[0] == COMPILE_HINT.strip() and after.splitlines()[1].startswith(BUNDLE_START)
    assert json.loads(source_map.read_text())["mappings"] == ";" + mappings


def test_a_rebuild_that_kept_the_bundle_hints_it_once(tmp_path):
    """``mkdocs serve --dirty`` keeps built files: a second pass finds the hint and leaves bundle and map alone."""
    bundle, source_map = site_with_map(tmp_path)
    edit_bundle(bundle.parent.parent.parent)
    done = bundle.read_text(), source_map.read_text()
    edit_bundle(bundle.parent.parent.parent)
    assert (bundle.read_text(), source_map.read_text()) == done


@pytest.mark.parametrize(("bundle_text", "map_text", "message"), [
    ("(()=>{var a=1;})();", None, "bundle.1.min.js does not begin with"),
    (BUNDLE_START + "})();", '{"version": 3}', "bundle.1.min.js.map does not hold"),
])
def test_a_bundle_or_map_of_another_shape_fails_the_build(tmp_path, bundle_text, map_text, message):
    """A theme whose bundle no longer starts as esbuild writes it, or whose map has no mappings, is looked at, not
    hinted blindly; nothing is written."""
    bundle = tmp_path / "bundle.1.min.js"
    bundle.write_text(bundle_text)
    if map_text is not None:
        (tmp_path / "bundle.1.min.js.map").write_text(map_text)
    with pytest.raises(ValueError, match=message):
        hint_compile(bundle)
    assert bundle.read_text() == bundle_text


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
