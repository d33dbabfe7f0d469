"""The CLI contract of the commands over models and SPEC files: --json keys, and exit status 2 with one line on bad input."""

import json

import pytest

from calc.api import COMMANDS, evaluate, evaluate_for_page
from calc.cli import main
from calc.spec import flatten

SPEC = {
    "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "gated_mlp": True,
              "vocab": 128256, "seq_len": 8192},
    "batch": {"micro_batch": 1, "global_batch": 512},
    "hardware": {"profile": "h100-sxm5-80gb", "gpus": 64},
    "parallel": {"data": 8, "tensor": 8, "pipeline": 1, "context": 1, "expert": 1, "zero": 1,
                 "sequence_parallel": True, "recompute": "selective", "interleave": 1},
}


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, argv):
    code, out, err = run(capsys, argv + ["--json"])
    assert code == 0 and err == ""
    return json.loads(out)


@pytest.fixture
def spec_file(tmp_path):
    def write(spec, name="spec.json"):
        path = tmp_path / name
        path.write_text(json.dumps(spec))
        return str(path)

    return write


CONTRACT = [
    ("memory --params 7.5e9 --data-parallel 64 --zero 1", {"params_bytes", "grads_bytes", "optimizer_bytes",
                                                           "model_states_bytes"}),
    ("activations --seq-len 2048 --micro-batch 1 --hidden 12288 --heads 96 --layers 96 --tensor-parallel 8 "
     "--sequence-parallel --recompute selective --pipeline-parallel 8 --interleave 3", {"per_layer_bytes",
                                                                                          "total_bytes"}),
    ("flops --layers 96 --hidden 12288 --seq-len 2048 --vocab 51200 --global-batch 1536 --recompute full",
     {"flops_per_iteration"}),
    ("train-time --params 175e9 --tokens 300e9 --gpus 1024 --flops-per-gpu 140e12", {"seconds", "days"}),
    ("bubble --pipeline-parallel 8 --microbatches 32 --interleave 8", {"bubble_fraction", "bubble_share"}),
    ("allgather --ranks 8 --payload 512MiB --bandwidth 450GB/s --startup 1us",
     {"time_s", "algbw_bytes_per_s", "busbw_bytes_per_s"}),
    ("reducescatter --ranks 8 --payload 512MiB --bandwidth 450GB/s --startup 1us",
     {"time_s", "algbw_bytes_per_s", "busbw_bytes_per_s"}),
    ("alltoall --ranks 8 --payload 512MiB --bandwidth 450GB/s --startup 1us",
     {"time_s", "algbw_bytes_per_s", "busbw_bytes_per_s"}),
    ("broadcast --ranks 8 --payload 512MiB --bandwidth 450GB/s --startup 1us",
     {"time_s", "algbw_bytes_per_s", "busbw_bytes_per_s"}),
]


@pytest.mark.parametrize("line,keys", CONTRACT, ids=[c[0].split()[0] for c in CONTRACT])
def test_each_contract_command_prints_at_least_its_keys(capsys, line, keys):
    """Each command of the contract prints a JSON object with at least the contract's keys."""
    assert keys <= set(run_json(capsys, line.split()))


def test_activations_takes_recompute_layers_to_the_memory_function(capsys):
    """--recompute-layers reaches calc.memory.activations: the same figures, between none and full."""
    from calc.memory import activations

    line = ("activations --seq-len 2048 --hidden 12288 --heads 96 --layers 96 --tensor-parallel 8 --sequence-parallel "
            "--pipeline-parallel 8 --interleave 2 --recompute full")
    kw = dict(tensor_parallel=8, sequence_parallel=True, pipeline_parallel=8, interleave=2, recompute="full")
    out = run_json(capsys, (line + " --recompute-layers 3").split())
    a = activations(2048, 1, 12288, 96, 96, recompute_layers=3, **kw)
    assert (out["total_bytes"], out["per_layer_bytes"], out["recomputed_layers"]) == \
        (a.total_bytes, a.per_layer_bytes, 3)
    assert run_json(capsys, line.split())["total_bytes"] < out["total_bytes"] < \
        run_json(capsys, line.replace("full", "none").split())["total_bytes"]


def test_activations_takes_the_attention_kernel_and_dropout_to_the_memory_function(capsys):
    """--attention and --no-dropout reach calc.memory.activations; at 32K tokens FlashAttention keeps no
    s² scores, so full recomputation's working set falls far below standard attention's."""
    from calc.memory import activations

    line = ("activations --seq-len 32768 --hidden 8192 --heads 64 --layers 80 --kv-heads 8 --tensor-parallel 8 "
            "--sequence-parallel --pipeline-parallel 4 --recompute full")
    kw = dict(kv_heads=8, tensor_parallel=8, sequence_parallel=True, pipeline_parallel=4, recompute="full")
    standard = run_json(capsys, line.split())
    flash = run_json(capsys, (line + " --attention flash --no-dropout").split())
    a = activations(32768, 1, 8192, 64, 80, attention="flash", dropout=False, **kw)
    assert (flash["total_bytes"], flash["recompute_working_bytes"]) == (a.total_bytes, a.recompute_working_bytes)
    assert standard["total_bytes"] == activations(32768, 1, 8192, 64, 80, **kw).total_bytes
    assert flash["recompute_working_bytes"] < standard["recompute_working_bytes"] / 10


def test_memory_json_is_16_bytes_per_parameter_at_zero_0(capsys):
    """bf16-adam is 16 bytes per parameter at ZeRO 0."""
    out = run_json(capsys, "memory --params 1e9".split())
    assert out["model_states_bytes"] == 16e9 and out["params_bytes"] == 2e9


def test_plan_keys(capsys, spec_file):
    """plan SPEC.json --json: microbatches, memory with total_bytes, communications with the contract's fields."""
    out = run_json(capsys, ["plan", spec_file(SPEC)])
    assert {"microbatches_per_step", "memory_per_device", "communications", "step_time_s", "bubble_fraction",
            "optimizer_time_s", "achieved_flops_per_gpu", "hardware_profile"} <= set(out)
    assert {"total_bytes", "reserve_bytes"} <= set(out["memory_per_device"])
    fields = {"strategy", "collective", "group_size", "bytes_per_call", "calls_per_step", "bytes_per_step",
              "intra_node", "time_s", "exposed_time_s", "bandwidth_bytes_per_s"}
    assert out["communications"] and all(fields <= set(c) for c in out["communications"])
    assert {c["strategy"] for c in out["communications"]} <= {"data", "tensor", "pipeline", "context", "expert"}


def test_plan_cli_equals_page_values(capsys, spec_file):
    """The CLI's JSON and the page's values are the same text for every result."""
    out = run_json(capsys, ["plan", spec_file(SPEC)])
    flat = flatten(SPEC, COMMANDS["plan"].spec_fields)
    page = json.loads(evaluate_for_page("plan", json.dumps(flat)))
    assert page["ok"]
    for key, text in page["values"].items():
        assert json.loads(text) == out[key]


def test_search_keys(capsys, spec_file):
    """search SPEC.json --top 3 --json: plans fastest first with parallel, step time and memory."""
    spec = {k: v for k, v in SPEC.items() if k != "parallel"}
    out = run_json(capsys, ["search", spec_file(spec), "--top", "3"])
    assert len(out["plans"]) == 3 and {"refused_summary", "refused_count", "fixed", "capped"} <= set(out)
    assert all({"parallel", "step_time_s", "memory_per_device"} <= set(p) for p in out["plans"])
    times = [p["step_time_s"] for p in out["plans"]]
    assert times == sorted(times)


def test_without_json_each_result_is_a_labelled_line(capsys):
    """Without --json: one labelled line per result, with units."""
    code, out, _ = run(capsys, "bubble --pipeline-parallel 8 --microbatches 32".split())
    assert code == 0 and "0.2188" in out and "GPipe" in out


@pytest.mark.parametrize(
    "argv,line",
    [
        ("memory --params 7.5e9 --zero 4", "python -m calc memory: error: zero must be a whole number <= 3, got 4"),
        ("memory --params 2e15", "python -m calc memory: error: params must be a whole number <= 1000000000000000, "
                                 "got 2000000000000000.0"),
        ("bubble --pipeline-parallel 8 --microbatches 12 --interleave 2",
         "python -m calc bubble: error: microbatches must be a multiple of pipeline_parallel (8) when "
         "interleave > 1, got 12"),
        ("train-time --params 1e9 --tokens 1e9 --gpus 8 --flops-per-gpu fast",
         "python -m calc train-time: error: flops_per_gpu must be a rate such as 989TFLOP/s or 312e12 (FLOP/s), "
         "got 'fast'"),
        ("allgather --ranks 0", "python -m calc allgather: error: ranks must be a whole number >= 1, got 0"),
        ("activations --seq-len 2048 --hidden 64 --heads 3 --layers 2 --recompute half",
         "python -m calc activations: error: recompute must be one of none, selective, full, got 'half'"),
        ("activations --seq-len 2048 --hidden 64 --heads 4 --layers 8 --attention flash2",
         "python -m calc activations: error: attention must be one of flash, flash3, triton, standard, got 'flash2'"),
        ("activations --seq-len 2048 --hidden 64 --heads 4 --layers 8 --no-dropout false",
         "python -m calc activations: error: no_dropout must be the flag --no-dropout alone (it takes no value), "
         "got 'false'"),
        ("activations --seq-len 2048 --hidden 64 --heads 4 --layers 8 --recompute selective --recompute-layers 2",
         "python -m calc activations: error: recompute_layers must be blank unless recompute is full (recompute is "
         "selective: it applies to every layer), got 2"),
        ("activations --seq-len 2048 --hidden 64 --heads 4 --layers 8 --pipeline-parallel 2 --recompute full "
         "--recompute-layers 5", "python -m calc activations: error: recompute_layers must be at most 4, the layers "
                                 "of the largest model chunk (layers per stage / interleave), got 5"),
        ("activations --seq-len 2048 --hidden 64 --heads 4 --layers 8 --recompute full --recompute-layers 1e5",
         "python -m calc activations: error: recompute_layers must be a whole number <= 10000, got 100000.0"),
    ],
)
def test_bad_values_exit_2_with_one_line(capsys, argv, line):
    """Bad values: exit status 2 and exactly one line on stderr naming the parameter."""
    code, out, err = run(capsys, argv.split())
    assert code == 2 and out == "" and err == line + "\n"


@pytest.mark.parametrize(
    "edit,line",
    [
        (("model", "foo", 1), "python -m calc plan: error: model.foo must be a field of model (layers, hidden, "
                              "heads, kv_heads, ffn_hidden, gated_mlp, vocab, seq_len, tied_embeddings, biases, "
                              "learned_positions, dropout, experts, top_k, moe_layer_freq, attention, kernels, "
                              "norm), got 1"),
        (("model", "kv_heads", 7), "python -m calc plan: error: model.kv_heads must be a divisor of heads (32), got 7"),
        (("hardware", "device_memory", "lots"), "python -m calc plan: error: hardware.device_memory must be a size "
                                                "such as 512MiB, 1GB or 4096 (bytes), got 'lots'"),
        (("parallel", "data", 4), "python -m calc plan: error: parallel.data must be gpus / (tensor_parallel × "
                                  "pipeline_parallel × context_parallel × expert_parallel) = 8, got 4"),
        (("parallel", "zero", True), "python -m calc plan: error: parallel.zero must be a whole number >= 0, got True"),
        (("parallel", "zero_group", 3), "python -m calc plan: error: parallel.zero_group must be a divisor of "
                                        "data_parallel (8), got 3"),
    ],
)
def test_plan_bad_spec_exit_2_naming_the_field(capsys, spec_file, edit, line):
    """Unknown fields and bad values in SPEC.json: exit 2, one line naming section.field."""
    section, name, value = edit
    spec = json.loads(json.dumps(SPEC))
    spec[section][name] = value
    code, out, err = run(capsys, ["plan", spec_file(spec)])
    assert code == 2 and out == "" and err == line + "\n"


def test_missing_or_invalid_spec_file(capsys, tmp_path):
    """An unreadable or non-JSON SPEC file is one line and exit 2."""
    code, _, err = run(capsys, ["plan", str(tmp_path / "missing.json")])
    assert code == 2 and err.startswith("python -m calc plan: error: SPEC.json must be a readable UTF-8 file")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = run(capsys, ["plan", str(bad)])
    assert code == 2 and err.startswith("python -m calc plan: error: SPEC.json must be valid JSON")
    assert err.count("\n") == 1


def test_search_takes_a_partial_parallel_section(capsys, spec_file):
    """search: the fields of a parallel section are fixed in every plan, and the result says which."""
    spec = {**SPEC, "batch": {"global_batch": 512}, "parallel": {"tensor": 2, "recompute": "full"}}
    out = run_json(capsys, ["search", spec_file(spec), "--top", "5"])
    assert out["fixed"] == {"tensor": 2, "recompute": "full"}
    assert all(p["parallel"]["tensor"] == 2 and p["parallel"]["recompute"] == "full" for p in out["plans"])


def test_search_keeps_a_fixed_shard_group(capsys, spec_file):
    """search with parallel.zero_group: every plan shards within groups of that many replicas (ZeRO 1-3 only), and
    the splits it does not divide are refused by that rule."""
    spec = {**SPEC, "batch": {"global_batch": 512}, "parallel": {"zero_group": 4}}
    out = run_json(capsys, ["search", spec_file(spec), "--top", "20"])
    assert out["fixed"] == {"zero_group": 4} and out["plans"]
    assert all(p["parallel"]["zero_group"] == 4 and p["parallel"]["zero"] >= 1 and p["parallel"]["data"] % 4 == 0
               for p in out["plans"])
    assert [r["example"]["reason"] for r in out["refused_summary"] if r["rule"].startswith("zero_group")] == \
        ["zero_group (4) does not divide data_parallel (2)"]


def test_hardware_profile_fields_override(capsys, spec_file):
    """A field beside hardware.profile overrides the profile's; without a profile the figures are required."""
    spec = json.loads(json.dumps(SPEC))
    spec["hardware"]["device_memory"] = "40GiB"
    out = run_json(capsys, ["plan", spec_file(spec)])
    assert out["memory_per_device"]["capacity_bytes"] == 40 * 2**30
    spec["hardware"] = {"gpus": 64, "device_memory": "80GiB", "flops_per_gpu": "989TFLOP/s",
                        "intra_node_bandwidth": "450GB/s", "inter_node_bandwidth": "50GB/s"}
    code, _, err = run(capsys, ["plan", spec_file(spec)])
    assert code == 2 and err == ("python -m calc plan: error: hardware.hbm_bandwidth must be given when no "
                                 "hardware.profile is named, got ''\n")


def test_hardware_lists_the_profiles(capsys):
    """hardware --json lists every profile; --profile NAME gives one in full with its sources."""
    out = run_json(capsys, ["hardware"])
    assert {p["name"] for p in out["profiles"]} >= {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                                                     "h200-sxm-141gb", "b200", "gb200-nvl72"}
    one = run_json(capsys, ["hardware", "--profile", "a100-sxm4-80gb"])["profile"]
    assert one["memory_bytes"] == 80 * 2**30 and one["sources"]["gemm_efficiency"]


def test_missing_required_field(capsys, spec_file):
    """A missing required field is named."""
    spec = json.loads(json.dumps(SPEC))
    del spec["model"]["layers"]
    code, _, err = run(capsys, ["plan", spec_file(spec)])
    assert code == 2 and err == "python -m calc plan: error: model.layers must be given (it is required), got ''\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_example_evaluates_and_is_json(name):
    """Every command's page example computes and serialises, through the page's entry point too."""
    json.dumps(evaluate(name, dict(COMMANDS[name].example)))
    assert json.loads(evaluate_for_page(name, json.dumps(dict(COMMANDS[name].example))))["ok"]


# ---------------------------------------------------------------------------- export and compare


def test_export_prints_the_launch_settings(capsys, spec_file):
    """export SPEC.json --to megatron: the arguments as Megatron-LM takes them, after comment lines."""
    code, out, err = run(capsys, ["export", spec_file(SPEC), "--to", "megatron"])
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("# Megatron-LM core_v0.15.3") and "--tensor-model-parallel-size 8" in lines
    assert "--use-distributed-optimizer" in lines and "--recompute-granularity selective" in lines


@pytest.mark.parametrize("framework", ["megatron", "torchtitan", "deepspeed"])
def test_export_json_is_the_page_values(capsys, spec_file, framework):
    """export --json: the launch settings' parts; the same text the page gets, or one refusal line."""
    spec = json.loads(json.dumps(SPEC))
    spec["parallel"]["zero"] = 3 if framework == "torchtitan" else 1
    code, out, err = run(capsys, ["export", spec_file(spec), "--to", framework, "--json"])
    assert code == 0 and err == ""
    result = json.loads(out)
    assert {"framework", "targets", "arguments", "config", "config_file", "text"} <= set(result)
    flat = flatten(spec, COMMANDS["export"].spec_fields) | {"to": framework}
    page = json.loads(evaluate_for_page("export", json.dumps(flat)))
    assert page["ok"] and json.loads(page["values"]["text"]) == result["text"] == page["text"]["text"]


def test_export_refusal_is_one_line_and_nothing_else(capsys, spec_file):
    """A setting the framework cannot run: exit 2, one line naming section.field and the version, no output."""
    code, out, err = run(capsys, ["export", spec_file(SPEC), "--to", "torchtitan"])
    assert code == 2 and out == ""
    assert err == ("python -m calc export: error: parallel.zero must be 0 or 3 for torchtitan v0.2.2 (FSDP2 shards "
                   "the weights as well; without resharding after the forward pass it gathers them again every "
                   "microbatch, not once a step), got 1\n")


def test_export_needs_a_framework(capsys, spec_file):
    """--to is required and names one of the three frameworks."""
    code, _, err = run(capsys, ["export", spec_file(SPEC)])
    assert code == 2 and err == "python -m calc export: error: to must be given (it is required), got ''\n"
    code, _, err = run(capsys, ["export", spec_file(SPEC), "--to", "jax"])
    assert code == 2 and err == ("python -m calc export: error: to must be one of megatron, torchtitan, deepspeed, "
                                 "got 'jax'\n")


def test_compare_takes_two_spec_files(capsys, spec_file):
    """compare A.json B.json: the faster plan, why, and the tables; --json has every part."""
    b = json.loads(json.dumps(SPEC))
    b["parallel"] |= {"data": 16, "tensor": 4}
    argv = ["compare", spec_file(SPEC, "a.json"), spec_file(b, "b.json")]
    code, out, err = run(capsys, argv)
    assert code == 0 and err == ""
    assert out.splitlines()[0].split() == ["Faster", "plan", "B"] and "parallel.tensor" in out
    result = run_json(capsys, argv)
    assert {"faster", "reason", "settings", "step_time", "memory", "communications", "a_mfu", "b_mfu"} <= set(result)


@pytest.mark.parametrize("edit,line", [
    (("model", "hidden", 8192), "model.hidden must be the same in A and B (compare takes two plans of one model), "
                                "got (4096, 8192)"),
    (("parallel", "tensor", 3), "b.hardware.gpus must be a multiple of tensor_parallel × pipeline_parallel × "
                                "context_parallel × expert_parallel = 3, "
                                "got 64"),
    (("parallel", "foo", 1), "b.parallel.foo must be a field of parallel"),
])
def test_compare_refusals_are_one_line(capsys, spec_file, edit, line):
    """Plans of different models, and a bad field of one SPEC, are one line naming it; exit 2, no output."""
    section, name, value = edit
    b = json.loads(json.dumps(SPEC))
    b[section][name] = value
    code, out, err = run(capsys, ["compare", spec_file(SPEC, "a.json"), spec_file(b, "b.json")])
    assert code == 2 and out == "" and err.startswith("python -m calc compare: error: " + line)
    assert err.count("\n") == 1


def test_compare_needs_both_files(capsys, spec_file, tmp_path):
    """A missing second SPEC or an unreadable one is one line and exit 2."""
    with pytest.raises(SystemExit) as e:
        run(capsys, ["compare", spec_file(SPEC)])
    assert e.value.code == 2 and capsys.readouterr().err.endswith("the following arguments are required: B.json\n")
    code, _, err = run(capsys, ["compare", spec_file(SPEC), str(tmp_path / "missing.json")])
    assert code == 2 and err.startswith("python -m calc compare: error: SPEC.json must be a readable UTF-8 file")
