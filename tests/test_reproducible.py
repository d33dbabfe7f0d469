"""Two clean builds give identical files; the build date is the last commit's."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os

import pytest

from hooks.reproducible import last_commit_epoch
from tests.conftest import tree_digest
from tests.support import ROOT, mkdocs_build

pytestmark = pytest.mark.build


MANIFEST = "assets/runtime/manifest.json"


@pytest.fixture(scope="module")
def second_build(tmp_path_factory):
    """Another clean build, in another directory, without SOURCE_DATE_EPOCH from the caller."""
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    second = tmp_path_factory.mktemp("second")
    proc = mkdocs_build(second, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return second


@pytest.mark.rebuild
def test_two_clean_builds_are_identical(second_build, built_site):
    """A second clean build into another directory is byte-for-byte the first."""
    assert tree_digest(second_build) == tree_digest(built_site)


@pytest.mark.rebuild
def test_the_wheel_and_its_sha256_are_identical(second_build, built_site):
    """Both builds serve the same wheel, under the same name, whose sha256 the manifest states."""
    first, second = (json.loads((site / MANIFEST).read_text()) for site in (built_site, second_build))
    assert first["sha256"] == second["sha256"] and first["wheel"] == second["wheel"]
    for site in (built_site, second_build):
        wheel = (site / MANIFEST).parent / first["wheel"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == first["sha256"]


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


def test_the_build_date_is_set_for_the_build_only(tmp_path, monkeypatch):
    """In-process, SOURCE_DATE_EPOCH is HEAD's commit time from on_config to on_post_build, then gone again."""
    from mkdocs.config import load_config

    from tests.test_hooks_entry import load_entry

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    entry = load_entry()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    entry.on_config(config)
    try:
        assert os.environ.get("SOURCE_DATE_EPOCH") == last_commit_epoch(ROOT) is not None
    finally:
        entry.on_post_build(config)
    assert "SOURCE_DATE_EPOCH" not in os.environ


def test_a_callers_build_date_is_kept(tmp_path, monkeypatch):
    """A SOURCE_DATE_EPOCH the caller set is used and left in place after the build."""
    from mkdocs.config import load_config

    from tests.test_hooks_entry import load_entry

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    entry = load_entry()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    entry.on_config(config)
    entry.on_post_build(config)
    assert os.environ["SOURCE_DATE_EPOCH"] == "86400"
