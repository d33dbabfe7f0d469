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


def test_hostile_requests_are_answered_in_pyodide(site, tmp_path):
    """The worker's Python answers hostile requests with a field error and lives on: JSON nested
    100,000 deep (a fatal stack overflow in Pyodide before the depth check), a 5,000-digit number,
    a 1 MB value, denormal rates."""
    requests = [
        '{"op": "evaluate", "command": "batch", "inputs": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"op": "evaluate", "command": "batch", "inputs": {"micro_batch": ' + "9" * 5000 + "}}",
        {"op": "evaluate", "command": "batch", "inputs": {"micro_batch": "9" * 1_000_000}},
        {"op": "evaluate", "command": "capacity", "inputs": {"device_memory": "1e-300"}},
        {"op": "evaluate", "command": "allreduce", "inputs": {"bandwidth": "1e-300"}},
        {"op": "evaluate", "command": "batch", "inputs": {"micro_batch": "8", "data_parallel": "8"}},
    ]
    vectors = tmp_path / "requests.json"  # a file: Node reads a large stdin pipe unreliably
    vectors.write_text(json.dumps(requests))
    proc = subprocess.run(
        ["node", str(Path(__file__).with_name("pyodide_parity.mjs")), str(ROOT / "node_modules/pyodide"), str(site),
         str(vectors)], capture_output=True, text=True, timeout=time_limit(600), check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers = json.loads(proc.stdout)["answers"]
    assert [a.get("param") for a in answers] == ["request", "micro_batch", "micro_batch", "device_memory",
                                                 "bandwidth", None]
    assert answers[-1]["ok"] is True  # and it still computes afterwards
