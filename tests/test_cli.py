"""Tests for calc.cli: the `python -m calc` contract (JSON keys, readable output, exit 2)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calc.cli import main
from tests.support import ROOT, time_limit


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "calc", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=time_limit(300))


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


def test_batch_text_output_counts_examples(capsys):
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
        (["batch", "--bogus", "1"], "bogus must be a parameter of batch (accumulation, "),
        (["plan", "--zero-group", "8"], "zero_group must be a parameter of plan (SPEC.json (its fields), json), "
                                        "got '--zero-group'"),
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


def test_an_empty_result_says_none(tmp_path, capsys):
    """A result with nothing to show (no uneven split, nothing fixed, no cap reached) prints "none", not a blank."""
    spec = {"model": {"layers": 4, "hidden": 1024, "heads": 8, "vocab": 32000, "seq_len": 1024},
            "batch": {"global_batch": 16}, "hardware": {"gpus": 8, "profile": "a100-sxm4-80gb"}}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert main(["search", str(path), "--top", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    fixed = lines.index("Fixed by the SPEC")
    assert lines[fixed + 1].strip() == "none"
    assert next(line for line in lines if line.startswith("Configuration cap")).split()[-1] == "none"
    spec["parallel"] = {"data": 2, "tensor": 4}
    spec["batch"]["micro_batch"] = 1
    path.write_text(json.dumps(spec))
    assert main(["plan", str(path)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Uneven layer split"))
    assert line.split()[-1] == "none"


def test_readable_output_has_no_json_null(capsys):
    """A missing value in a table (the A100's fp8 peak) reads n/a, as a missing result does, not JSON's null."""
    assert main(["hardware"]) == 0
    text = capsys.readouterr().out
    assert "null" not in text
    assert "n/a" in next(line for line in text.splitlines() if line.strip().startswith("a100-sxm4-80gb"))


# ---------------------------------------------------------------- bounded input, one-line messages (issue 11, §5)

from calc.api import COMMANDS  # noqa: E402
from tests.test_command import KINDS  # noqa: E402

KB100 = 100_000  # the kernel caps one argv string at 128 KiB


def fails(capsys, argv: list[str]) -> str:
    """Run ``argv``; assert exit 2, nothing on stdout and one printable line on stderr; return that line."""
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out[:200])
    assert err.endswith("\n") and err.count("\n") == 1 and err[:-1].isprintable(), err[:300]
    assert "Traceback" not in err
    return err[:-1]


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


@pytest.mark.parametrize("kind", sorted(k for k, (c, _) in KINDS.items() if not COMMANDS[c].param(KINDS[k][1]).section
                                        and COMMANDS[c].param(KINDS[k][1]).kind not in ("flag", "spec")))
def test_a_100_kb_option_value_is_one_line_naming_it(capsys, kind):
    """A 100 kB value on the command line, for every kind of option: exit 2, one line naming the option."""
    command, name = KINDS[kind]
    example = [arg for k, v in COMMANDS[command].example.items() if k != name for arg in (option(k), v)]
    line = fails(capsys, [command, *example, option(name), "9" * KB100 + "x"])
    assert line.startswith(f"python -m calc {command}: error: {name} must be ")
    assert len(line) < 400


def test_a_100_kb_file_name_is_one_line_naming_it(capsys, tmp_path):
    """A SPEC.json argument is a file name: a 100 kB one is refused as unreadable, in one line."""
    command, name = KINDS["spec"]
    files = [str(tmp_path / f"{p.name}.json") for p in COMMANDS[command].params if p.kind == "spec" and p.name != name]
    line = fails(capsys, [command, "9" * KB100 + ".json", *files])
    assert line.startswith(f"python -m calc {command}: error: ") and "readable" in line
    assert len(line) < 400


def test_a_100_kb_argument_through_a_real_argv(tmp_path):
    """The same through the kernel's argv, once: a real process, exit 2, one line."""
    p = run("allreduce", "--payload", "1" * KB100 + "GB")
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1
    assert p.stderr.startswith("python -m calc allreduce: error: payload must be a size such as")


@pytest.mark.parametrize("field", ["device_memory", "layers", "gated_mlp", "recompute", "kv_heads"])
def test_a_999_000_character_spec_value_is_one_line_naming_it(capsys, tmp_path, field):
    """A SPEC value just under the file's 1,000,000-character limit: exit 2 naming section.field."""
    from tests.test_cli_commands import SPEC

    spec = json.loads(json.dumps(SPEC))
    section = COMMANDS["plan"].param(field).section
    spec[section][field] = "9" * 999_000
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    line = fails(capsys, ["plan", str(path)])
    assert line.startswith(f"python -m calc plan: error: {section}.{field} must be ")


@pytest.mark.parametrize("literal", ["9" * 400, "-" + "9" * 400, "9" * 5000, "1e400"])
def test_a_huge_number_in_a_spec_is_one_line_naming_the_field(capsys, tmp_path, literal):
    """A 400- or 5,000-digit integer (beyond a float; beyond Python's int-string limit) or 1e400 in a SPEC."""
    from tests.test_cli_commands import SPEC

    text = json.dumps(SPEC).replace('"layers": 32', f'"layers": {literal}')
    path = tmp_path / "spec.json"
    path.write_text(text)
    assert fails(capsys, ["plan", str(path)]).startswith("python -m calc plan: error: model.layers must be ")


def test_a_spec_nested_10_000_deep_is_one_line(capsys, tmp_path):
    """JSON nested 10,000 deep: no RecursionError, one line naming SPEC.json."""
    path = tmp_path / "spec.json"
    path.write_text('{"model": ' + "[" * 10_000 + "]" * 10_000 + "}")
    assert fails(capsys, ["plan", str(path)]).startswith("python -m calc plan: error: SPEC.json must be JSON nested")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_spec_file_is_read_only_up_to_the_limit(capsys):
    """plan /dev/zero stops reading at the size limit: exit 2, one line (it once read until memory ran out)."""
    line = fails(capsys, ["plan", "/dev/zero"])
    assert line.startswith("python -m calc plan: error: SPEC.json must be JSON text of at most 1000000 characters")


@pytest.mark.parametrize("key", ["layers\n2", "\x1b[31mred", "\u202eevil", "k" * 500])
def test_a_spec_key_is_escaped_on_one_line(capsys, tmp_path, key):
    """An unknown SPEC key with a newline, an escape code or a direction override: shown escaped, one line."""
    from tests.test_cli_commands import SPEC

    spec = json.loads(json.dumps(SPEC))
    spec["model"][key] = 1
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    line = fails(capsys, ["plan", str(path)])
    assert "must be a field of model" in line and len(line) < 400


@pytest.mark.parametrize(
    "argv, message",
    [
        (["activations", "--gated-mlp", "true"], "gated_mlp must be the flag --gated-mlp alone (it takes no value), "
                                                 "got 'true'"),
        (["activations", "--gated-mlp=true"], "gated_mlp must be the flag --gated-mlp alone (it takes no value), "
                                              "got 'true'"),
        (["batch", "--micro-batch", "8", "4"], "micro_batch must be one value (--micro-batch VALUE), got '4'"),
        (["batch", "--micro-batch"], "micro_batch must be followed by one value"),
        (["batch", "--micro", "8"], "micro must be a parameter of batch (accumulation, "),
        (["batch", "--json", "x"], "json must be the flag --json alone (it takes no value), got 'x'"),
        (["plan", "a.json", "b.json"], "SPEC.json must be one file name, got 'b.json'"),
        (["batch", "--x\n\x1b[2J", "1"], "'x\\n\\x1b[2J' must be a parameter of batch"),
        (["activations", "--pipeline-parallel", "1000", "--seq-len", "2048", "--hidden", "64", "--heads", "8",
          "--layers", "96"], "pipeline_parallel must be <= layers (96), got 1000"),
    ],
)
def test_usage_errors_name_the_parameter(capsys, argv, message):
    """A stray value, an unknown or abbreviated option, a missing value: one line naming the parameter."""
    assert message in fails(capsys, argv)


def test_a_repeated_option_keeps_its_last_value(capsys):
    """Decided: an option given twice keeps its last value (a later option overrides an earlier one)."""
    assert main(["batch", "--micro-batch", "8", "--data-parallel", "2", "--micro-batch", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["micro_batch"] == 4


def test_a_key_given_twice_in_a_spec_is_an_error(capsys, tmp_path):
    """Decided: in a SPEC a name given twice in one object is an error naming it (JSON leaves it undefined)."""
    from tests.test_cli_commands import SPEC

    text = json.dumps(SPEC).replace('"layers": 32', '"layers": 32, "layers": 16')
    path = tmp_path / "spec.json"
    path.write_text(text)
    assert fails(capsys, ["plan", str(path)]) == ("python -m calc plan: error: model.layers must be given once "
                                                  "(the name appears twice in one JSON object), got 16")


def test_a_closed_pipe_stops_quietly():
    """Decided: when the reader has gone (``--json | head -c1``), exit status 1 and no traceback."""
    import os

    read, write = os.pipe()
    os.close(read)  # no reader at all: the first write fails, deterministically
    try:
        p = subprocess.run([sys.executable, "-m", "calc", "batch", "--micro-batch", "8", "--data-parallel", "2",
                            "--json"], stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                           timeout=time_limit(300))
    finally:
        os.close(write)
    assert p.returncode == 1 and p.stderr == ""


def test_json_output_is_strict(capsys, tmp_path):
    """--json never prints NaN or Infinity: an efficiency so small the step time would overflow is refused
    by its floor (the finite-result guard itself: tests/test_command.py); a huge but finite result prints
    as a number."""
    from tests.test_cli_commands import SPEC

    spec = json.loads(json.dumps(SPEC))
    spec["hardware"]["compute_efficiency"] = 5e-324  # within its limits (0, 1], but the step time overflows
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert fails(capsys, ["plan", str(path), "--json"]) == (
        "python -m calc plan: error: hardware.compute_efficiency must be a number >= 0.001, got 5e-324")
    assert main(["train-time", "--params", "1e15", "--tokens", "1e16", "--gpus", "1", "--flops-per-gpu", "1",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert out["seconds"] == 8e31


@pytest.mark.parametrize("value, message", [
    (9, "parallel.recompute_layers must be at most 8, the layers of the largest model chunk (layers per stage / "
        "interleave), got 9"),
    (2.5, "parallel.recompute_layers must be a whole number >= 0, got 2.5"),
])
def test_a_bad_recompute_layers_is_one_line_naming_it(capsys, tmp_path, value, message):
    """SPEC validation of parallel.recompute_layers: the parameter, the rule and the value, exit 2."""
    spec = {"model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
                      "gated_mlp": True, "vocab": 128256, "seq_len": 8192},
            "batch": {"micro_batch": 1, "global_batch": 512}, "hardware": {"profile": "h100-sxm5-80gb", "gpus": 64},
            "parallel": {"data": 2, "tensor": 8, "pipeline": 4, "zero": 1, "recompute": "full",
                         "recompute_layers": value}}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    assert fails(capsys, ["plan", str(path)]) == "python -m calc plan: error: " + message
