"""hooks/runtime.py in-process: the wheel, the snapshot, their hash-named files, the manifest, Pyodide's files."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files

from hooks import runtime

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel() -> runtime.Wheel:
    return runtime.build_wheel(ROOT)


def test_wheel_holds_the_calc_package_the_build_imports(wheel):
    """The wheel is built from this source tree: every calc module, byte for byte."""
    with zipfile.ZipFile(io.BytesIO(wheel.data)) as z:
        names = {n for n in z.namelist() if n.startswith("calc/")}
        assert names == {p.relative_to(ROOT).as_posix() for p in (ROOT / "calc").rglob("*.py")}
        assert z.read("calc/series.py") == (ROOT / "calc/series.py").read_bytes()
    assert wheel.built_as.endswith("-py3-none-any.whl")


def test_wheel_is_reproducible_and_named_by_its_hash(wheel):
    """The same source gives the same bytes, so the same content-addressed name."""
    again = runtime.build_wheel(ROOT)
    assert again.data == wheel.data
    assert wheel.sha256 == hashlib.sha256(wheel.data).hexdigest()
    assert wheel.served_as == f"calc-{wheel.sha256[:16]}.whl"


def test_pyodide_version_is_the_exact_pin():
    """node_modules/pyodide must be the version package.json pins."""
    pinned = json.loads((ROOT / "package.json").read_text())["dependencies"]["pyodide"]
    assert runtime.pyodide_version(ROOT) == pinned


def test_pyodide_version_mismatch_fails_the_build(tmp_path):
    """A stale node_modules is a build failure that says what to run."""
    (tmp_path / "node_modules/pyodide").mkdir(parents=True)
    (tmp_path / "node_modules/pyodide/package.json").write_text('{"version": "0.1.0"}')
    (tmp_path / "package.json").write_text('{"dependencies": {"pyodide": "314.0.7"}}')
    with pytest.raises(PluginError, match="npm ci"):
        runtime.pyodide_version(tmp_path)


def test_missing_pyodide_fails_the_build(tmp_path):
    (tmp_path / "package.json").write_text('{"dependencies": {"pyodide": "314.0.7"}}')
    with pytest.raises(PluginError, match="npm ci"):
        runtime.pyodide_version(tmp_path)


def test_runtime_files_and_manifest_on_a_real_config(wheel):
    """Through the hooks on a validated MkDocsConfig: Pyodide's five files, the wheel and its manifest."""
    config = load_config(str(ROOT / "mkdocs.yml"))
    config = config.plugins.on_config(config)  # through hooks/entry.py, as mkdocs build runs it
    try:
        files = config.plugins.on_files(Files([]), config=config)
    finally:
        config.plugins.on_post_build(config=config)
    info = json.loads(files.get_file_from_path(runtime.MANIFEST).content_string)
    uris = {f.src_uri for f in files}
    assert {f"{runtime.PYODIDE_DIR}/{n}" for n in runtime.PYODIDE_FILES} <= uris
    assert f"{runtime.RUNTIME_DIR}/{wheel.served_as}" in uris
    manifest = json.loads(files.get_file_from_path(runtime.MANIFEST).content_string)
    assert manifest is not None and info == manifest
    assert manifest["wheel"] == wheel.served_as and manifest["sha256"] == wheel.sha256
    assert manifest["bytes"] == len(wheel.data)
    assert manifest["pyodide"] == runtime.pyodide_version(ROOT)
    served = files.get_file_from_path(f"{runtime.RUNTIME_DIR}/{wheel.served_as}").content_bytes
    assert hashlib.sha256(served).hexdigest() == manifest["sha256"]
    snapshot = files.get_file_from_path(f"{runtime.RUNTIME_DIR}/{manifest['snapshot']['file']}").content_bytes
    assert hashlib.sha256(snapshot).hexdigest() == manifest["snapshot"]["sha256"]
    assert len(snapshot) == manifest["snapshot"]["gzip_bytes"]
    assert len(gzip.decompress(snapshot)) == manifest["snapshot"]["memory_bytes"]


def test_wheel_bytes_do_not_depend_on_the_build_date(wheel, monkeypatch):
    """The hooks set SOURCE_DATE_EPOCH for the sitemap; the wheel (and its URL) depend on calc alone."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert runtime.build_wheel(ROOT).sha256 == wheel.sha256


@pytest.mark.pyodide
def test_snapshot_is_reproducible(wheel):
    """Made afresh (no cache), the snapshot is byte for byte the one the build serves and caches."""
    version = runtime.pyodide_version(ROOT)
    fresh = runtime.make_snapshot(ROOT, wheel)
    assert fresh.gz == runtime.cached_snapshot(ROOT, wheel, version).gz
    assert fresh.memory_bytes > 16 * 2**20  # an interpreter's memory, not an empty file
    assert fresh.served_as == f"calc-{hashlib.sha256(fresh.gz).hexdigest()[:16]}.snapshot.gz"


def test_snapshot_cache_is_keyed_by_what_the_snapshot_depends_on(wheel, tmp_path, monkeypatch):
    """Another wheel or another Pyodide is another key; a damaged cache entry is made again."""
    version = runtime.pyodide_version(ROOT)
    key = runtime.snapshot_key(ROOT, wheel, version)
    assert key == runtime.snapshot_key(ROOT, wheel, version)
    assert key != runtime.snapshot_key(ROOT, runtime.Wheel(wheel.data + b"x", wheel.built_as), version)
    assert key != runtime.snapshot_key(ROOT, wheel, "314.0.8")
    made = []
    monkeypatch.setattr(runtime, "make_snapshot",
                        lambda root, w: made.append(w) or runtime.Snapshot(gzip.compress(b"memory", mtime=0), 6))
    entry = tmp_path / runtime.SNAPSHOT_CACHE / f"{key}.gz"
    first = runtime.cached_snapshot(tmp_path, wheel, version)
    assert entry.read_bytes() == first.gz and len(made) == 1
    assert runtime.cached_snapshot(tmp_path, wheel, version) == first and len(made) == 1  # from the cache
    entry.write_bytes(b"damaged")
    assert runtime.cached_snapshot(tmp_path, wheel, version) == first and len(made) == 2
    for n in range(runtime.SNAPSHOT_CACHE_KEEP + 2):  # older entries go, the newest stay
        runtime.cached_snapshot(tmp_path, runtime.Wheel(wheel.data + bytes([n]), wheel.built_as), version)
    assert len(list(entry.parent.glob("*.gz"))) == runtime.SNAPSHOT_CACHE_KEEP
