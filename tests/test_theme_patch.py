"""hooks/theme_patch.py: exact edits to one built theme file, each made once; a rebuild that kept the file finds
them done; anything but one file holding each text once fails the build."""

from __future__ import annotations

import pytest

from hooks.theme_patch import replace_once

EDITS = [("a{x:1}", "/*a*/", "rule a"), ("b{y:2}", "/*b*/", "rule b")]


def folder_with(tmp_path, text: str, name: str = "sheet.1.css"):
    (tmp_path / name).write_text(text)
    return tmp_path


def test_every_edit_is_made_and_the_rest_is_unchanged(tmp_path):
    folder = folder_with(tmp_path, "a{x:1}c{z:3}b{y:2}")
    assert replace_once(folder, "sheet.*.css", EDITS) == tmp_path / "sheet.1.css"
    assert (tmp_path / "sheet.1.css").read_text() == "/*a*/c{z:3}/*b*/"


def test_a_rebuild_that_kept_the_file_finds_it_done(tmp_path):
    folder = folder_with(tmp_path, "a{x:1}c{z:3}b{y:2}")
    replace_once(folder, "sheet.*.css", EDITS)
    done = (tmp_path / "sheet.1.css").read_text()
    replace_once(folder, "sheet.*.css", EDITS)
    assert (tmp_path / "sheet.1.css").read_text() == done


@pytest.mark.parametrize(("text", "message"), [
    ("a{x:1}c{z:3}", r"does not hold rule b once \(found 0 times\)"),
    ("a{x:1}b{y:2}b{y:2}", r"does not hold rule b once \(found 2 times\)"),
])
def test_a_theme_that_changed_a_text_fails_the_build_and_writes_nothing(tmp_path, text, message):
    folder = folder_with(tmp_path, text)
    with pytest.raises(ValueError, match=message):
        replace_once(folder, "sheet.*.css", EDITS)
    assert (tmp_path / "sheet.1.css").read_text() == text


@pytest.mark.parametrize("names", [[], ["sheet.1.css", "sheet.2.css"]])
def test_not_exactly_one_file_fails_the_build(tmp_path, names):
    for name in names:
        folder_with(tmp_path, "a{x:1}b{y:2}", name)
    with pytest.raises(ValueError, match=rf"expected one sheet\.\*\.css in .*, found {len(names)}"):
        replace_once(tmp_path, "sheet.*.css", EDITS)
