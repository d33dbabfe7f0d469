"""The parity vectors inside Pyodide under Node, headless, against the wheel the built site serves."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.browser.atlas_browser import ROOT, cli_json
from tests.support import time_limit
from tests.browser.vectors import ALLREDUCE, BATCH, COMPARE_VECTORS, LAUNCH_VECTORS, atlas_inputs

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


def run_in_pyodide(site, requests: list, tmp_path) -> dict:
    """``pyodide_parity.mjs`` on ``requests`` (from a file), its output parsed."""
    vectors = tmp_path / "requests.json"
    vectors.write_text(json.dumps(requests))
    proc = subprocess.run(
        ["node", str(Path(__file__).with_name("pyodide_parity.mjs")), str(ROOT / "node_modules/pyodide"), str(site),
         str(vectors)], capture_output=True, text=True, timeout=time_limit(900), check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def cli_export(inputs: dict[str, str], framework: str, tmp_path) -> tuple[int, str]:
    """``python -m calc export SPEC.json --to FRAMEWORK``: its exit status and its text (stdout, else stderr)."""
    from calc.views import plan_spec

    spec = tmp_path / "SPEC.json"
    spec.write_text(json.dumps(plan_spec(inputs)))
    proc = subprocess.run([sys.executable, "-m", "calc", "export", str(spec), "--to", framework], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout if proc.returncode == 0 else proc.stderr


def test_launch_and_compare_in_pyodide_match_cpython_and_the_cli(site, tmp_path):
    """The page's launch and compare requests, and the atlas's plan request (whose view carries the launch
    settings and both drawings), answered in Pyodide are byte for byte CPython's answers; each launch text
    is what ``calc export`` prints and each refusal its one line; each comparison holds what ``calc compare
    --json`` prints."""
    from calc.page import page_request
    from calc.views import pinned_inputs, plan_spec

    requests = [{"op": "launch", "inputs": atlas_inputs(v)} for v in LAUNCH_VECTORS]
    requests += [{"op": "evaluate", "command": "plan", "inputs": atlas_inputs(v)} for v in LAUNCH_VECTORS]
    requests += [{"op": "compare", "pin": pin, "inputs": atlas_inputs(v)} for pin, v in COMPARE_VECTORS]
    out = run_in_pyodide(site, requests, tmp_path)
    assert out["fetches"] == []
    for request, answer in zip(requests, out["answers"], strict=True):
        assert answer == json.loads(page_request(json.dumps(request))), request
    launches = out["answers"][:len(LAUNCH_VECTORS)]
    seen = {"text": 0, "refused": 0}
    for vector, answer in zip(LAUNCH_VECTORS, launches, strict=True):
        assert answer["ok"], vector
        for framework, one in answer["launch"].items():
            status, text = cli_export(atlas_inputs(vector), framework, tmp_path)
            if one["ok"]:
                assert (status, text) == (0, one["text"] + "\n"), (vector, framework)
                seen["text"] += 1
            else:
                assert (status, text) == (2, f"python -m calc export: error: {one['message']}\n"), (vector, framework)
                seen["refused"] += 1
    assert seen["text"] >= 6 and seen["refused"] >= 6, seen
    plans = out["answers"][len(LAUNCH_VECTORS):2 * len(LAUNCH_VECTORS)]
    assert all(a["ok"] and a["view"]["launch"] == b["launch"] for a, b in zip(plans, launches, strict=True))
    compared = out["answers"][2 * len(LAUNCH_VECTORS):]
    assert [a["ok"] for a in compared] == [True] * 4 + [False, False]
    assert [a.get("param") for a in compared[4:]] == ["model.hidden", "pin"]
    for (pin, vector), answer in zip(COMPARE_VECTORS[:4], compared[:4], strict=True):
        (tmp_path / "A.json").write_text(json.dumps(plan_spec(pinned_inputs(pin))))
        (tmp_path / "B.json").write_text(json.dumps(plan_spec(atlas_inputs(vector))))
        proc = subprocess.run([sys.executable, "-m", "calc", "compare", str(tmp_path / "A.json"),
                               str(tmp_path / "B.json"), "--json"], cwd=ROOT, capture_output=True, text=True,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        expected = json.loads(proc.stdout)
        assert {k: json.loads(v) for k, v in answer["values"].items()} == {k: expected[k] for k in answer["values"]}
