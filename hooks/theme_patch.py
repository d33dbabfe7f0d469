"""Exact edits to one of the theme's built files, each made once, failing the build when the theme changed it.

:mod:`hooks.theme_css` and :mod:`hooks.theme_js` remove start-up costs of the theme (issue 15) by replacing
text the theme writes. A theme upgrade that changes that text must be looked at, not skipped, so anything
but exactly one file holding each text exactly once raises ``ValueError`` and the build fails. A rebuild
that kept the file (``mkdocs serve --dirty``) finds an edit done and leaves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: One edit: the theme's text, what replaces it, and how the error names it.
Edit = tuple[str, str, str]


def replace_once(folder: Path, pattern: str, edits: Sequence[Edit]) -> Path:
    """Make each ``(old, new, what)`` edit in the one file of ``folder`` matching ``pattern``; return its path.

    ``what`` names the text in the error (e.g. "the theme's switching rule").
    """
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise ValueError(f"expected one {pattern} in {folder}, found {len(found)}")
    text = original = found[0].read_text(encoding="utf-8")
    for old, new, what in edits:
        if new in text and old not in text:
            continue
        if text.count(old) != 1:
            raise ValueError(f"{found[0].name} does not hold {what} once (found {text.count(old)} times): "
                             f"re-check the hook that edits it against the theme")
        text = text.replace(old, new)
    if text != original:
        found[0].write_text(text, encoding="utf-8")
    return found[0]
