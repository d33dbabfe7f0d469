"""Shared fixtures: one strict build of the real site per test session, reused by every test.

Only a test that needs a different configuration builds again (a sub-path, a second build to
compare); it is marked ``rebuild`` so ``make test-fast`` can leave it out.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from mkdocs.config import load_config

from hooks import templates
from tests.support import ROOT, mkdocs_build


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file below ``root``, by relative path."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass(frozen=True)
class SessionBuild:
    """The session's build: where it went, what mkdocs printed, and docs/ before it ran."""

    site: Path
    proc: subprocess.CompletedProcess
    docs_before: dict[str, str]


@pytest.fixture(scope="session")
def session_build(tmp_path_factory) -> SessionBuild:
    """``mkdocs build --strict`` of the real site, once; fails the tests that use it if the build fails."""
    site = tmp_path_factory.mktemp("site")
    docs_before = tree_digest(ROOT / "docs")
    proc = mkdocs_build(site)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}")
    return SessionBuild(site, proc, docs_before)


@pytest.fixture(scope="session")
def built_site(session_build) -> Path:
    """The site built once with --strict (see :func:`session_build`)."""
    return session_build.site


@pytest.fixture(scope="session", autouse=True)
def theme_templates():
    """The theme's Jinja environment, bound as ``on_config`` binds it, for tests that render HTML in-process."""
    templates.use(load_config(str(ROOT / "mkdocs.yml")))
    yield
    templates.release()
