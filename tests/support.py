"""Helpers shared by the tests and the benchmark: where the project is and how the site is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mkdocs_build(site_dir: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mkdocs build --strict` as a reader would, into ``site_dir``."""
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "true", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir), *extra],
        cwd=ROOT, capture_output=True, text=True, env=full_env, timeout=600,
    )
