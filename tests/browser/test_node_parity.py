"""The parity vectors inside Pyodide under Node, headless, against the wheel the built site serves."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.browser.atlas_browser import ROOT, cli_json
from tests.support import time_limit
from tests.browser.vectors import ALLREDUCE, BATCH

pytestmark = [pytest.mark.build, pytest.mark.pyodide]


def test_parity_vectors_in_pyodide_under_node(site, manifest):
    """calc from the served wheel, in Pyodide's CPython, prints what the CLI prints, with no network."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH (it is needed for npm anyway)")
    vectors = [("batch", v) for v in BATCH] + [("allreduce", v) for v in ALLREDUCE]
    requests = [{"op": "evaluate", "command": c, "inputs": v} for c, v in vectors]
    proc = subprocess.run(
        [node, str(Path(__file__).with_name("pyodide_parity.mjs")), str(ROOT / "node_modules/pyodide"), str(site)],
        input=json.dumps(requests), capture_output=True, text=True, timeout=time_limit(600), check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["version"] == manifest["pyodide"]
    assert out["python"].startswith("3.14")
    assert "site-packages/calc" in out["location"]
    assert out["loadedPackages"] == [] and out["fetches"] == []
    for (command, vector), answer in zip(vectors, out["answers"], strict=True):
        assert answer["ok"], (vector, answer)
        expected = cli_json(command, vector)
        assert answer["values"] == {k: expected[k] for k in answer["values"]}, vector


def test_every_command_in_pyodide_matches_cpython(site):
    """Every command's page example, and the atlas's splits, give the same JSON in Pyodide as in CPython."""
    from calc.api import COMMANDS, evaluate
    from tests.browser.vectors import ATLAS_VECTORS, atlas_inputs

    vectors = [(name, dict(cmd.example)) for name, cmd in COMMANDS.items()]
    vectors += [("plan", atlas_inputs(v)) for v in ATLAS_VECTORS]
    requests = [{"op": "evaluate", "command": c, "inputs": v} for c, v in vectors]
    proc = subprocess.run(
        ["node", str(Path(__file__).with_name("pyodide_parity.mjs")), str(ROOT / "node_modules/pyodide"), str(site)],
        input=json.dumps(requests), capture_output=True, text=True, timeout=time_limit(900), check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["fetches"] == []
    for (command, vector), answer in zip(vectors, out["answers"], strict=True):
        assert answer["ok"], (command, answer)
        expected = evaluate(command, vector)
        assert answer["values"] == {k: json.dumps(expected[k]) for k in answer["values"]}, command
