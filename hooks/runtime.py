"""The in-page Python runtime: Pyodide's files and the ``calc`` wheel, served by the site.

- Pyodide's five browser files come from the npm package pinned in
  ``package.json`` (``node_modules/pyodide``) and go to
  ``assets/vendor/pyodide/``. Nothing is loaded from another origin.
- The ``calc`` wheel is built from the same source tree the build imports, with
  the project's standard PEP 517 backend (hatchling, pinned in ``pyproject.toml``),
  called directly: ``hatchling.build.build_wheel`` in a child process whose
  working directory is the project root. Hatchling's wheels are reproducible
  (fixed timestamps), so the same source gives the same bytes and the same name.
  ``pyodide build`` would give a byte-identical wheel for this pure-Python
  package, but it downloads a cross-build environment and needs a host Python
  equal to Pyodide's (3.14); see ``docs/calculators/index.md``.
- The wheel is named by its content hash and described in
  ``assets/runtime/manifest.json`` (wheel file, sha256, size, Pyodide version);
  the page's worker checks the sha256 before it loads the wheel.
- A memory snapshot of Pyodide with that wheel imported (``hooks/snapshot.mjs``, run by
  Node): the worker starts from it instead of booting Python and importing ``calc``,
  and boots normally when it cannot. It is served gzipped (``calc-<hash>.snapshot.gz``,
  6.3 MB for 31.5 MB of memory) and inflated in the worker with ``DecompressionStream``,
  so every static host sends the compressed bytes whatever it does with
  ``Content-Encoding``; the manifest gives its sha256, which the worker checks. The
  bytes are reproducible, and they depend only on the wheel, Pyodide and the maker
  script, so a build reuses the copy cached under ``.cache/snapshot/`` for the same
  three (making one takes about 3 s, a third of a build).

Everything is added as generated :class:`~mkdocs.structure.files.File` objects:
nothing is written into ``docs/``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from .assets import vendor_files

#: The files a browser needs from the npm package, all served from PYODIDE_DIR.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
PYODIDE_DIR = "assets/vendor/pyodide"
RUNTIME_DIR = "assets/runtime"
MANIFEST = f"{RUNTIME_DIR}/manifest.json"
SNAPSHOT_MAKER = Path(__file__).with_name("snapshot.mjs")
SNAPSHOT_CACHE = ".cache/snapshot"  #: under the project root (git ignores it)
SNAPSHOT_CACHE_KEEP = 4  #: snapshots kept there, newest first
#: gzip level of the served snapshot: 6 gives 6.25 MB in 0.5 s, 9 only 0.07 MB less in 2.7 s.
SNAPSHOT_GZIP_LEVEL = 6

_BUILD_WHEEL = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"


@dataclass(frozen=True, slots=True)
class Wheel:
    """A built wheel: its bytes and the content-addressed name it is served under."""

    data: bytes
    built_as: str  #: the name the backend gave it (``name-version-py3-none-any.whl``)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def served_as(self) -> str:
        """``calc-<first 16 hex digits of sha256>.whl``: a new build gets a new URL."""
        return f"calc-{self.sha256[:16]}.whl"


def build_wheel(root: Path) -> Wheel:
    """Build the project's wheel with its PEP 517 backend, offline, into a temporary folder."""
    # Without SOURCE_DATE_EPOCH hatchling stamps every file with its fixed default date, so
    # the wheel's bytes (and its URL) depend on calc's content alone, not on the commit date
    # the build hooks put into that variable for the sitemap.
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    with tempfile.TemporaryDirectory(prefix="atlas-wheel-") as out:
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD_WHEEL, out],
            cwd=root, capture_output=True, text=True, check=False, env=env,
        )
        if proc.returncode != 0:
            raise PluginError(f"building the calc wheel failed:\n{proc.stderr.strip()}")
        name = proc.stdout.strip().splitlines()[-1]
        return Wheel((Path(out) / name).read_bytes(), name)


def pyodide_version(root: Path) -> str:
    """The version of ``node_modules/pyodide``; it must be the exact pin of ``package.json``."""
    try:
        installed = json.loads((root / "node_modules/pyodide/package.json").read_text())["version"]
    except FileNotFoundError:
        raise PluginError("node_modules/pyodide is missing: run `npm ci` (make serve and make test do)") from None
    pinned = json.loads((root / "package.json").read_text())["dependencies"]["pyodide"]
    if installed != pinned:
        raise PluginError(f"node_modules has pyodide {installed} but package.json pins {pinned}: run `npm ci`")
    return installed


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A gzipped memory snapshot of Pyodide with one wheel imported, and the name it is served under."""

    gz: bytes  #: as served: gzip (level :data:`SNAPSHOT_GZIP_LEVEL`, no timestamp) of the memory
    memory_bytes: int  #: bytes of the memory once inflated (the interpreter's linear memory)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.gz).hexdigest()

    @property
    def served_as(self) -> str:
        return f"calc-{self.sha256[:16]}.snapshot.gz"


def snapshot_key(root: Path, wheel: Wheel, pyodide: str) -> str:
    """What the snapshot's bytes depend on: the wheel, Pyodide's version and the maker script."""
    parts = (wheel.sha256, pyodide, hashlib.sha256(SNAPSHOT_MAKER.read_bytes()).hexdigest(), str(SNAPSHOT_GZIP_LEVEL))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def make_snapshot(root: Path, wheel: Wheel) -> Snapshot:
    """Run ``hooks/snapshot.mjs`` on ``wheel`` (no cache); fail the build loudly if it fails."""
    node = shutil.which("node")
    if node is None:
        raise PluginError("node is not on PATH; it makes the Pyodide snapshot (Node >= 20 is part of the set-up)")
    with tempfile.TemporaryDirectory(prefix="atlas-snapshot-") as tmp:
        whl, out = Path(tmp) / wheel.built_as, Path(tmp) / "memory.bin"
        whl.write_bytes(wheel.data)
        proc = subprocess.run([node, str(SNAPSHOT_MAKER), str(root / "node_modules/pyodide"), str(whl), str(out)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not out.is_file():
            raise PluginError(f"making the Pyodide snapshot failed (hooks/snapshot.mjs):\n{proc.stderr.strip()[-2000:]}")
        memory = out.read_bytes()
    return Snapshot(gzip.compress(memory, compresslevel=SNAPSHOT_GZIP_LEVEL, mtime=0), len(memory))


def cached_snapshot(root: Path, wheel: Wheel, pyodide: str) -> Snapshot:
    """The snapshot for ``wheel`` from ``.cache/snapshot/``, made (and cached) when it is not there."""
    path = root / SNAPSHOT_CACHE / f"{snapshot_key(root, wheel, pyodide)}.gz"
    if path.is_file():
        gz = path.read_bytes()
        try:
            return Snapshot(gz, len(gzip.decompress(gz)))
        except (OSError, EOFError):
            pass  # a damaged cache entry is made again
    snap = make_snapshot(root, wheel)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(snap.gz)
    partial.replace(path)  # atomic: a parallel build reads the whole file or none
    # each change to calc adds 6.7 MB: keep the newest few (a build reads only its own key)
    entries = sorted(path.parent.glob("*.gz"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[SNAPSHOT_CACHE_KEEP:]:
        old.unlink(missing_ok=True)
    return snap


def manifest(wheel: Wheel, pyodide: str, snapshot: Snapshot | None = None) -> dict:
    """What the worker reads first. Paths are relative to the manifest itself."""
    info = {
        "wheel": wheel.served_as,
        "sha256": wheel.sha256,
        "bytes": len(wheel.data),
        "built_as": wheel.built_as,
        "pyodide": pyodide,
    }
    if snapshot is not None:
        info["snapshot"] = {"file": snapshot.served_as, "sha256": snapshot.sha256,
                            "gzip_bytes": len(snapshot.gz), "memory_bytes": snapshot.memory_bytes}
    return info


def add_runtime_files(files: Files, config, root: Path) -> dict:
    """Add Pyodide's files, the wheel and the manifest to ``files``; return the manifest."""
    version = pyodide_version(root)
    for src, dest in vendor_files(root, [(f"pyodide/{name}", f"{PYODIDE_DIR}/{name}") for name in PYODIDE_FILES]):
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    wheel = build_wheel(root)
    snapshot = cached_snapshot(root, wheel, version)
    info = manifest(wheel, version, snapshot)
    files.append(File.generated(config, f"{RUNTIME_DIR}/{wheel.served_as}", content=wheel.data))
    files.append(File.generated(config, f"{RUNTIME_DIR}/{snapshot.served_as}", content=snapshot.gz))
    files.append(File.generated(config, MANIFEST, content=json.dumps(info, indent=2) + "\n"))
    return info
