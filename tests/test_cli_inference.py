"""The CLI contract of infer and infer-search: the issue's JSON keys, and exit status 2 with one line on bad input."""

import json

import pytest

from calc.api import COMMANDS, evaluate, evaluate_for_page
from calc.spec import flatten
from calc.cli import main

SPEC = {
    "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "gated_mlp": True,
              "vocab": 128256, "max_context": 8192},
    "serving": {"batch": 16, "prompt_tokens": 1024, "output_tokens": 256, "weight_precision": "bf16",
                "kv_precision": "bf16"},
    "hardware": {"profile": "h100-sxm5-80gb", "gpus": 8},
    "parallel": {"data": 4, "tensor": 2, "pipeline": 1, "expert": 1},
}


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def spec_file(tmp_path):
    def write(spec):
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        return str(path)

    return write


def edited(section, name, value):
    spec = json.loads(json.dumps(SPEC))
    if value is None:
        spec[section].pop(name, None)
    else:
        spec[section][name] = value
    return spec


def test_infer_json_has_the_issues_keys(capsys, spec_file):
    """kv_cache_bytes_per_token, memory_per_device.total_bytes, max_concurrent_sequences, prefill and decode
    times, tokens_per_s, and communications in plan's row shape."""
    code, out, err = run(capsys, ["infer", spec_file(SPEC), "--json"])
    assert code == 0 and err == ""
    r = json.loads(out)
    assert {"kv_cache_bytes_per_token", "max_concurrent_sequences", "prefill_time_s", "decode_time_per_token_s",
            "tokens_per_s", "communications", "parallel", "gpus", "nodes", "rank_strides", "stages"} <= set(r)
    assert r["kv_cache_bytes_per_token"] == 131072 and "total_bytes" in r["memory_per_device"]
    fields = {"strategy", "collective", "what", "group_size", "bytes_per_call", "calls_per_step", "bytes_per_step",
              "intra_node", "time_s", "exposed_time_s", "stage", "bandwidth_bytes_per_s"}
    assert r["communications"] and all(set(c) == fields for c in r["communications"])


def test_infer_cli_equals_page_values(capsys, spec_file):
    """The CLI's JSON and the page's values are the same for every result."""
    code, out, _ = run(capsys, ["infer", spec_file(SPEC), "--json"])
    flat = flatten(SPEC, COMMANDS["infer"].spec_fields)
    page = json.loads(evaluate_for_page("infer", json.dumps(flat)))
    assert code == 0 and page["ok"]
    for key, text in page["values"].items():
        assert json.loads(text) == json.loads(out)[key], key


def test_infer_text_output_has_units(capsys, spec_file):
    """Without --json: labelled lines with units."""
    code, out, _ = run(capsys, ["infer", spec_file(SPEC)])
    assert code == 0 and "Inter-token latency (mean over the output)" in out and " ms" in out and "tokens/s" in out


def test_infer_search_ranks_and_fixes(capsys, spec_file):
    """A partial parallel section fixes axes; without max_latency the plans come fastest first."""
    spec = {**SPEC, "parallel": {"expert": 1}}
    code, out, _ = run(capsys, ["infer-search", spec_file(spec), "--top", "4", "--json"])
    r = json.loads(out)
    assert code == 0 and r["fixed"] == {"expert": 1} and len(r["plans"]) == 4
    times = [p["decode_time_per_token_s"] for p in r["plans"]]
    assert times == sorted(times)


def test_infer_search_under_a_latency_bound(capsys, spec_file):
    """serving.max_latency switches to the most tokens/s within the bound."""
    spec = {**edited("serving", "max_latency", "25ms"), "parallel": {}}
    code, out, _ = run(capsys, ["infer-search", spec_file(spec), "--top", "3", "--json"])
    r = json.loads(out)
    assert code == 0 and "at most 0.025 s" in r["objective"]
    assert all(p["decode_time_per_token_s"] <= 0.025 for p in r["plans"])


@pytest.mark.parametrize("edit,line", [
    (("parallel", "tensor", 3), "parallel.tensor must be a divisor of heads (32) that divides kv_heads (8) or is a "
                                "multiple of it, got 3"),
    (("model", "layers", 2), "parallel.pipeline must be <= layers (2), got 4"),
    (("serving", "batch", 5000), "serving.batch must be at most "),
    (("serving", "weight_precision", "fp8"), "serving.weight_precision must be a precision the a100-sxm4-80gb "
                                             "profile has a peak for"),
    (("serving", "output_tokens", 7200), "serving.output_tokens must be <= max_context − prompt_tokens = 7168, got "
                                         "7200"),
    (("serving", "kv_precision", "fp4"), "serving.kv_precision must be one of bf16, fp16, fp8, int8, got 'fp4'"),
    (("model", "seq_len", 8192), "model.seq_len must be a field of model"),
    (("hardware", "compute_efficiency", 0.5), "hardware.compute_efficiency must be a field of hardware"),
    (("parallel", "zero", 1), "parallel.zero must be a field of parallel (data, tensor, pipeline, context, expert), "
                              "got 1"),
    (("parallel", "recompute", "full"), "parallel.recompute must be a field of parallel"),
    (("serving", "prompt_tokens", None), "serving.prompt_tokens must be given (it is required), got ''"),
])
def test_bad_input_exits_2_with_one_line(capsys, spec_file, edit, line):
    """A split that does not divide the heads or layers, a batch that does not fit, a precision the profile cannot
    run, an output past the context, unknown fields (training's switches among them: serving has no ZeRO or
    recomputation): exit 2, one line naming section.field."""
    section, name, value = edit
    spec = edited(section, name, value)
    if name == "tensor":
        spec["hardware"]["gpus"], spec["parallel"]["data"] = 24, 8
    if name == "layers":
        spec["parallel"] = {"data": 2, "tensor": 1, "pipeline": 4}
    if name == "weight_precision":
        spec["hardware"]["profile"] = "a100-sxm4-80gb"
    code, out, err = run(capsys, ["infer", spec_file(spec)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("python -m calc infer: error: " + line), err
