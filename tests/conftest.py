"""Shared fixtures: one strict build of the real site per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def mkdocs_build(site_dir: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mkdocs build --strict` as a reader would, into ``site_dir``."""
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "true", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir), *extra],
        cwd=ROOT, capture_output=True, text=True, env=full_env, timeout=600,
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site built once with --strict; fails the tests that use it if the build fails."""
    site = tmp_path_factory.mktemp("site")
    proc = mkdocs_build(site)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}")
    return site
