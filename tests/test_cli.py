"""Tests for calc.cli: the `python -m calc` contract (JSON keys, readable output, exit 2)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calc.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "calc", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_batch_json_contract():
    """batch --json prints one object with global_batch, data_parallel and tokens_per_update."""
    p = run("batch", "--micro-batch", "8", "--accumulation", "16", "--data-parallel", "64", "--json")
    assert p.returncode == 0 and p.stderr == ""
    out = json.loads(p.stdout)
    assert out["global_batch"] == 8192 and out["data_parallel"] == 64 and out["tokens_per_update"] is None


def test_batch_json_with_seq_len_and_gpus(capsys):
    """DP derived from GPUs; tokens counted with --seq-len."""
    argv = ["batch", "--micro-batch", "4", "--accumulation", "32", "--gpus", "16", "--tensor-parallel", "2",
            "--pipeline-parallel", "2", "--context-parallel", "1", "--seq-len", "2048", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["data_parallel"] == 4 and out["global_batch"] == 512 and out["tokens_per_update"] == 512 * 2048


def test_allreduce_json_contract(capsys):
    """allreduce --json has every key the contract names."""
    assert main(["allreduce", "--ranks", "64", "--payload", "1GiB", "--bandwidth", "100GB/s", "--startup", "5us", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    keys = {"time_s", "latency_s", "bandwidth_s", "steps", "bytes_sent_per_rank", "algbw_bytes_per_s",
            "busbw_bytes_per_s", "crossover_payload_bytes"}
    assert keys <= out.keys()
    assert out["steps"] == 126


def test_readable_output_names_units(capsys):
    """Without --json the summary shows each value with its unit."""
    assert main(["allreduce", "--ranks", "8", "--payload", "1e9", "--bandwidth", "100GB/s", "--startup", "5us"]) == 0
    text = capsys.readouterr().out
    assert "17.57 ms" in text and "1.75 GB (1.63 GiB)" in text and "GB/s" in text


def test_readable_batch(capsys):
    """The batch summary counts examples."""
    assert main(["batch", "--micro-batch", "8", "--accumulation", "16", "--data-parallel", "64"]) == 0
    assert "8,192 examples" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["batch", "--micro-batch", "0", "--data-parallel", "1"], "micro_batch must be a whole number >= 1, got 0"),
        (["batch", "--micro-batch", "8", "--gpus", "16", "--tensor-parallel", "3"], "gpus must be divisible by"),
        (["allreduce", "--ranks", "64", "--payload", "lots"], "payload must be a size such as"),
        (["allreduce", "--bandwidth", "0"], "bandwidth must be a number > 0 bytes/s"),
        (["allreduce", "--startup", "nan"], "startup must be a time such as"),
        (["batch", "--bogus", "1"], "unrecognized arguments: --bogus"),
        (["nosuch"], "invalid choice: 'nosuch'"),
        ([], "the following arguments are required: command"),
    ],
)
def test_bad_input_exit_2_one_line(args, message):
    """Bad input: exit status 2, exactly one line on stderr naming the problem, no traceback."""
    p = run(*args)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert message in lines[0]
    assert "Traceback" not in p.stderr


def test_help_exits_0():
    """--help is not an error."""
    p = run("allreduce", "--help")
    assert p.returncode == 0 and "--payload" in p.stdout


def test_readable_plan_shows_tables_not_json(tmp_path, capsys):
    """plan without --json prints memory per device as lines and communications as a table with units."""
    spec = {
        "model": {"layers": 4, "hidden": 1024, "heads": 8, "vocab": 32000, "seq_len": 1024},
        "batch": {"micro_batch": 1, "global_batch": 16},
        "hardware": {"gpus": 8, "profile": "a100-sxm4-80gb"},
        "parallel": {"data": 2, "tensor": 4},
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert main(["plan", str(path)]) == 0
    text = capsys.readouterr().out
    assert "{" not in text and "[" not in text, "nested results are rendered, not dumped as JSON"
    assert "total_bytes" in text and "GiB" in text
    header = next(line for line in text.splitlines() if "collective" in line)
    assert "strategy" in header and "bytes_per_step" in header
    assert "all-reduce" in text
