"""Front-end files from pinned npm packages, served by the site itself (no CDN).

Each entry maps a file or folder under ``node_modules/`` to a path in the site.
They are added as generated :class:`~mkdocs.structure.files.File` objects, so
``mkdocs serve`` serves them and ``mkdocs build`` copies them; nothing is
written into ``docs/``. A missing package fails the build with the command that
installs it.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

#: (path under node_modules, destination under the site)
VENDOR = (
    ("katex/dist/katex.min.css", "assets/vendor/katex/katex.min.css"),
    ("katex/dist/fonts", "assets/vendor/katex/fonts"),
)


def vendor_files(root: Path, entries=VENDOR) -> list[tuple[Path, str]]:
    """Expand ``entries`` into (source file, site path) pairs; fail if a package is missing."""
    pairs = []
    for src, dest in entries:
        path = root / "node_modules" / src
        if not path.exists():
            raise PluginError(f"{path} is missing: run `npm ci` (make serve and make test do)")
        if path.is_dir():
            for f in sorted(p for p in path.rglob("*") if p.is_file()):
                pairs.append((f, f"{dest}/{f.relative_to(path).as_posix()}"))
        else:
            pairs.append((path, dest))
    return pairs


def add_vendor_files(files: Files, config, root: Path) -> Files:
    for src, dest in vendor_files(root):
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    return files
