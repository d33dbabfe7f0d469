"""Reproducible builds: the one date a build writes (the sitemap's ``lastmod``) is fixed.

MkDocs takes the build date from ``SOURCE_DATE_EPOCH`` when it is set
(reproducible-builds.org's convention). When it is not, the hooks set it to the
time of the last git commit, which is also the truthful "last modified" date of
the content; outside a git checkout the variable is left alone.
"""

from __future__ import annotations

import os
import subprocess
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


def fix_build_date(root: Path) -> None:
    if "SOURCE_DATE_EPOCH" not in os.environ:
        epoch = last_commit_epoch(root)
        if epoch is not None:
            os.environ["SOURCE_DATE_EPOCH"] = epoch
