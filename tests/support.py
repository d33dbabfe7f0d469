"""Helpers shared by the tests and the benchmark: where the project is, how the site is built, time limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _timeout_scale() -> float:
    text = os.environ.get("ATLAS_TEST_TIMEOUT_SCALE", "").strip() or "1"
    try:
        scale = float(text)
    except ValueError:
        scale = 0.0
    if not scale > 0:
        raise SystemExit(f"ATLAS_TEST_TIMEOUT_SCALE must be a number > 0, got {text!r}")
    return scale


#: Every time limit in the tests is multiplied by this (environment ATLAS_TEST_TIMEOUT_SCALE, default 1).
#: A limit only stops a run that has hung; no result is decided by one where a state can be waited on.
TIMEOUT_SCALE = _timeout_scale()


def time_limit(seconds: float) -> float:
    """``seconds`` scaled by :data:`TIMEOUT_SCALE`: the most a step may take before the run counts as hung."""
    return seconds * TIMEOUT_SCALE


def mkdocs_build(site_dir: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mkdocs build --strict` as a reader would, into ``site_dir``."""
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "true", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir), *extra],
        cwd=ROOT, capture_output=True, text=True, env=full_env, timeout=time_limit(900),
    )


def theme_file_site(tmp_path: Path, folder: str, pattern: str, text: str | None = None) -> Path:
    """A site folder holding the installed theme's one file ``folder/pattern`` (or ``text`` under its name), for
    the hooks that edit a built theme file (hooks/theme_patch.py)."""
    import shutil

    import material

    target = tmp_path / folder
    target.mkdir(parents=True)
    (original,) = (Path(material.__file__).parent / "templates" / folder).glob(pattern)
    shutil.copy(original, target / original.name)
    if text is not None:
        (target / original.name).write_text(text)
    return tmp_path
