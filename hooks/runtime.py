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
  equal to Pyodide's (3.14); see ``docs/architecture.md``.
- The wheel is named by its content hash and described in
  ``assets/runtime/manifest.json`` (wheel file, sha256, size, Pyodide version);
  the page's worker checks the sha256 before it loads the wheel.

Everything is added as generated :class:`~mkdocs.structure.files.File` objects:
nothing is written into ``docs/``.
"""

from __future__ import annotations

import hashlib
import json
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
    with tempfile.TemporaryDirectory(prefix="atlas-wheel-") as out:
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD_WHEEL, out],
            cwd=root, capture_output=True, text=True, check=False,
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


def manifest(wheel: Wheel, pyodide: str) -> dict:
    """What the worker reads first. Paths are relative to the manifest itself."""
    return {
        "wheel": wheel.served_as,
        "sha256": wheel.sha256,
        "bytes": len(wheel.data),
        "built_as": wheel.built_as,
        "pyodide": pyodide,
        "pyodide_dir": "../vendor/pyodide/",
    }


def add_runtime_files(files: Files, config, root: Path) -> dict:
    """Add Pyodide's files, the wheel and the manifest to ``files``; return the manifest."""
    version = pyodide_version(root)
    for src, dest in vendor_files(root, [(f"pyodide/{name}", f"{PYODIDE_DIR}/{name}") for name in PYODIDE_FILES]):
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    wheel = build_wheel(root)
    info = manifest(wheel, version)
    files.append(File.generated(config, f"{RUNTIME_DIR}/{wheel.served_as}", content=wheel.data))
    files.append(File.generated(config, MANIFEST, content=json.dumps(info, indent=2) + "\n"))
    return info
