"""Two clean builds give identical files; the build date is the last commit's."""

from __future__ import annotations

import datetime as dt
import hashlib
import os

import pytest

from hooks.reproducible import last_commit_epoch
from tests.support import ROOT, mkdocs_build

pytestmark = pytest.mark.build


def digest_tree(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_clean_builds_are_identical(tmp_path, built_site):
    """A second clean build into another directory is byte-for-byte the first."""
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    second = tmp_path / "second"
    proc = mkdocs_build(second, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert digest_tree(second) == digest_tree(built_site)


def test_sitemap_date_is_last_commit(built_site):
    """Without SOURCE_DATE_EPOCH, the sitemap's lastmod is HEAD's commit date (UTC)."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        expected = int(os.environ["SOURCE_DATE_EPOCH"])
    else:
        epoch = last_commit_epoch(ROOT)
        assert epoch is not None, "the tests run in a git checkout"
        expected = int(epoch)
    day = dt.datetime.fromtimestamp(expected, dt.timezone.utc).strftime("%Y-%m-%d")
    assert f"<lastmod>{day}</lastmod>" in (built_site / "sitemap.xml").read_text()
