"""One exact edit to one of the theme's built files, made once, failing the build when the theme changed it.

:mod:`hooks.theme_css` and :mod:`hooks.theme_js` remove two of the theme's start-up costs (issue 15) by
replacing text the theme writes. A theme upgrade that changes that text must be looked at, not skipped, so
anything but exactly one file holding the text exactly once raises ``ValueError`` and the build fails. A
rebuild that kept the file (``mkdocs serve --dirty``) finds the edit done and leaves it.
"""

from __future__ import annotations

from pathlib import Path


def replace_once(folder: Path, pattern: str, old: str, new: str, what: str) -> Path:
    """Replace ``old`` by ``new`` in the one file of ``folder`` matching ``pattern``; return its path.

    ``what`` names the text in the error (e.g. "the theme's switching rule").
    """
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise ValueError(f"expected one {pattern} in {folder}, found {len(found)}")
    text = found[0].read_text(encoding="utf-8")
    if new in text and old not in text:
        return found[0]
    if text.count(old) != 1:
        raise ValueError(f"{found[0].name} does not hold {what} once (found {text.count(old)} times): "
                         f"re-check the hook that edits it against the theme")
    found[0].write_text(text.replace(old, new), encoding="utf-8")
    return found[0]
