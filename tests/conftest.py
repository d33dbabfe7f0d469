"""Shared fixtures: one strict build of the real site per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The site built once with --strict; fails the tests that use it if the build fails."""
    site = tmp_path_factory.mktemp("site")
    proc = mkdocs_build(site)
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}")
    return site
