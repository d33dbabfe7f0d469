"""Reproducible builds: the one date a build writes (the sitemap's ``lastmod``) is fixed.

MkDocs takes the build date from ``SOURCE_DATE_EPOCH`` when it is set
(reproducible-builds.org's convention). When it is not, the hooks set it to the
time of the last git commit, which is also the truthful "last modified" date of
the content; outside a git checkout the variable is left alone.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path


def last_commit_epoch(root: Path) -> str | None:
    """Seconds since the epoch of HEAD's commit, or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out.isdigit() else None


def fix_build_date(root: Path) -> Callable[[], None]:
    """Set ``SOURCE_DATE_EPOCH`` to HEAD's commit time for one build; return what undoes it.

    A caller's own value is kept (and nothing is undone); so is a checkout without git. The hooks
    call the returned function when the build ends (``on_post_build`` or ``on_build_error``), so the
    variable never outlives the build: in ``mkdocs serve`` each rebuild reads the commit afresh, and a
    process that builds in-process (the tests) keeps its environment as it was.
    """
    if "SOURCE_DATE_EPOCH" in os.environ:
        return _nothing
    epoch = last_commit_epoch(root)
    if epoch is None:
        return _nothing
    os.environ["SOURCE_DATE_EPOCH"] = epoch
    return lambda: os.environ.pop("SOURCE_DATE_EPOCH", None)  # type: ignore[return-value]


def _nothing() -> None:
    pass
