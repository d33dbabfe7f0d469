"""Tests for calc.export: every preset and planner row exported or refused, every flag in its framework's list."""

import json
import re
import tomllib
from pathlib import Path

import pytest

from calc.api import COMMANDS, evaluate
from calc.errors import CalcError
from calc.export import FRAMEWORKS, TARGETS
from calc.presets import PRESETS

LISTS = Path(__file__).with_name("frameworks")
#: The split a search chooses (the rest of a preset stays).
SPLIT = ("data_parallel", "tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel", "zero", "sequence_parallel", "recompute", "interleave",
         "micro_batch", "stage_layers", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "zero3_gather",
         "recompute_layers")
PLAN_PARAMS = {p.name for p in COMMANDS["plan"].params}


def flag_list(name: str) -> dict:
    return json.loads((LISTS / f"{name}.json").read_text())


def inputs(preset: str, **changes: object) -> dict:
    return {**PRESETS[preset].inputs, **{k: str(x) for k, x in changes.items()}}


def export(framework: str, raw: dict) -> dict:
    return evaluate("export", raw | {"to": framework})


def search_rows(preset: str) -> list[dict]:
    """The planner's rows for a preset's model, batch and cluster, as plan inputs."""
    base = {k: x for k, x in PRESETS[preset].inputs.items() if k not in SPLIT}
    search = {p.name for p in COMMANDS["search"].params}
    rows = evaluate("search", {k: x for k, x in base.items() if k in search})["plans"]
    return [base | {k: x for k, x in row["parallel"].items() if k in PLAN_PARAMS} for row in rows]


#: Splits that reach every branch of the exporters (each exports; together they write every listed name).
CASES = [
    ("megatron", "gpt3-175b", {}),
    ("megatron", "gpt3-175b", {"interleave": 2}),
    ("megatron", "gpt3-175b", {"stage_layers": "11,12,12,12,12,12,12,13"}),
    ("megatron", "gpt3-175b", {"stage_layers": "11,13,12,12,12,12,12,12"}),
    ("megatron", "gpt3-175b", {"stage_layers": "10,13,13,12,12,12,12,12", "interleave": 2}),
    ("megatron", "llama3-8b", {"zero": 2, "overlap_param_gather": "true"}),
    ("megatron", "llama3-8b", {"zero": 3}),
    ("megatron", "llama3-8b", {"tp_comm_overlap": "true", "recompute": "full"}),
    ("megatron", "llama3-8b", {"precision": "megatron-bf16", "attention": "flash3"}),
    ("megatron", "gpt3-175b", {"recompute": "full", "recompute_layers": 3, "interleave": 2}),
    ("megatron", "llama3-8b", {"precision": "fp16-adam", "attention": "standard", "recompute": "full"}),
    ("megatron", "llama3-8b", {"data_parallel": 2, "context_parallel": 2, "precision": "fp32-adam"}),
    ("megatron", "mixtral-8x7b", {}),
    ("megatron", "gpt3-175b", {"rank_order": "tp-cp-ep-pp-dp"}),
    ("torchtitan", "llama3-8b", {"zero": 3}),
    ("torchtitan", "llama3-8b", {"zero": 0, "data_parallel": 8, "tensor_parallel": 1, "sequence_parallel": "false", "layers": 8}),
    ("torchtitan", "llama3-8b", {"zero": 3, "data_parallel": 2, "pipeline_parallel": 2, "interleave": 2, "recompute": "full"}),
    ("torchtitan", "llama3-8b", {"zero": 3, "tp_comm_overlap": "true", "precision": "fp32-adam"}),
    ("torchtitan", "llama3-8b", {"zero": 3, "data_parallel": 2, "context_parallel": 2}),
    ("torchtitan", "mixtral-8x7b", {"zero": 3, "pipeline_parallel": 1, "data_parallel": 8}),
    ("torchtitan", "llama3-8b", {"zero": 3, "recompute": "full", "recompute_layers": 16}),
    ("megatron", "llama3-8b", {"zero_group": 2}),
    ("torchtitan", "llama3-8b", {"zero": 3, "zero_group": 2}),
    ("deepspeed", "llama3-8b", {}),
    ("deepspeed", "gpt3-175b", {"overlap_grad_reduce": "false"}),
    ("deepspeed", "llama3-8b", {"zero": 3, "zero3_gather": "tensor", "recompute": "full"}),
    ("deepspeed", "llama3-8b", {"precision": "megatron-bf16"}),
    ("deepspeed", "llama3-8b", {"precision": "fp32-adam", "attention": "standard"}),
    ("deepspeed", "mixtral-8x7b", {"pipeline_parallel": 1, "data_parallel": 8}),
    ("megatron", "llama3-8b", {"fp8": "true"}),
    ("torchtitan", "llama3-8b", {"zero": 3, "fp8": "true"}),
    ("deepspeed", "llama3-8b", {"precision": "megatron-bf16", "zero": 0, "fp8": "true", "layers": 8,
                                "overlap_grad_reduce": "false"}),
]


def all_exports() -> list[tuple[str, dict, dict]]:
    """(framework, inputs, export) for the cases, every preset and every planner row that exports."""
    out = []
    for framework, preset, changes in CASES:
        raw = inputs(preset, **changes)
        out.append((framework, raw, export(framework, raw)))
    rows = [dict(p.inputs) for p in PRESETS.values()] + [r for name in PRESETS for r in search_rows(name)]
    for raw in rows:
        for framework in FRAMEWORKS:
            try:
                out.append((framework, raw, export(framework, raw)))
            except CalcError:
                pass  # refusals are held to their reasons below
    return out


@pytest.fixture(scope="module")
def exports():
    return all_exports()


# ---------------------------------------------------------------------------- the lists of names


def parse_arguments(tokens: list[str], flags: dict) -> dict[str, str | None]:
    """Read ``tokens`` as the framework's parser would, by the list: an unknown flag, a value that the
    flag does not take, or a value outside its choices fails."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(tokens):
        flag = tokens[i]
        assert flag in flags, f"{flag} is not in the framework's list"
        spec = flags[flag]
        if spec["takes"] == "flag":
            assert i + 1 == len(tokens) or tokens[i + 1].startswith("--"), f"{flag} takes no value"
            out[flag], i = None, i + 1
            continue
        value = tokens[i + 1]
        if spec["takes"] == "int":
            assert re.fullmatch(r"[0-9]+", value), (flag, value)
        assert value in spec.get("choices", [value]), (flag, value)
        out[flag], i = value, i + 2
    return out


def flatten(config: dict, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` → ``{"a": {...}, "a.b": 1}``: every table and key of a config file."""
    out: dict[str, object] = {}
    for key, value in config.items():
        out[prefix + key] = value
        if isinstance(value, dict):
            out |= flatten(value, prefix + key + ".")
    return out


def check_config(config: dict, keys: dict) -> None:
    for key, value in flatten(config).items():
        assert key in keys, f"{key} is not in the framework's list"
        spec = keys[key]
        assert value in spec.get("choices", [value]) or re.fullmatch(spec.get("pattern", "(?!)"), str(value)), \
            (key, value)


def test_lists_name_the_versions_the_exporters_target():
    """Each list is of the version its exporter names, read at a pinned commit, each name with a source line."""
    pairs = [(TARGETS["megatron"][0], "megatron-lm"), (TARGETS["torchtitan"][0], "torchtitan"),
             (TARGETS["deepspeed"][0], "deepspeed"), (TARGETS["deepspeed"][1], "megatron-deepspeed")]
    for target, name in pairs:
        data = flag_list(name)
        assert (data["framework"], data["version"]) == (target.framework, target.version)
        assert data["repository"] == f"https://github.com/{target.repository}"
        assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
        if not target.version.startswith(("core_v", "v")):  # a project without releases: the version is the commit
            assert data["commit"].startswith(target.version)
        entries = data.get("flags") or data["keys"]
        assert entries and all(e["source"] and e["line"] >= 1 for e in entries.values())


def test_every_emitted_flag_and_key_is_in_its_frameworks_list(exports):
    """Every argument and config key written, for every case, preset and planner row, is in the list of
    the version targeted, takes the kind of value the parser takes and one of its choices."""
    lists = {"megatron": flag_list("megatron-lm")["flags"], "megatron-deepspeed": flag_list("megatron-deepspeed")["flags"],
             "deepspeed": flag_list("deepspeed")["keys"], "torchtitan": flag_list("torchtitan")["keys"]}
    for framework, _, out in exports:
        if framework == "megatron":
            parse_arguments(out["arguments"], lists["megatron"])
            assert out["config"] == {}
        elif framework == "deepspeed":
            parse_arguments(out["arguments"], lists["megatron-deepspeed"])
            check_config(out["config"], lists["deepspeed"])
        else:
            assert out["arguments"] == []
            check_config(out["config"], lists["torchtitan"])


def test_every_listed_name_is_emitted_by_some_case(exports):
    """The lists hold what the exporters write, no more: each name is written by at least one case."""
    seen: dict[str, set] = {"megatron-lm": set(), "megatron-deepspeed": set(), "deepspeed": set(), "torchtitan": set()}
    for framework, _, out in exports:
        flags = {t for t in out["arguments"] if t.startswith("--")}
        if framework == "megatron":
            seen["megatron-lm"] |= flags
        elif framework == "deepspeed":
            seen["megatron-deepspeed"] |= flags
            seen["deepspeed"] |= set(flatten(out["config"]))
        else:
            seen["torchtitan"] |= set(flatten(out["config"]))
    for name, names in seen.items():
        data = flag_list(name)
        assert names == set(data.get("flags") or data["keys"]), name


def test_a_renamed_flag_fails_the_check():
    """The check refuses a flag the list does not hold (as a rename upstream would make it)."""
    flags = flag_list("megatron-lm")["flags"]
    with pytest.raises(AssertionError, match="not in the framework's list"):
        parse_arguments(["--tensor-parallel-size", "8"], flags)
    with pytest.raises(AssertionError):
        parse_arguments(["--recompute-granularity", "attention"], flags)


# ---------------------------------------------------------------------------- presets


#: What each preset gives with each framework: None (exported) or the setting refused.
PRESET_OUTCOMES = {
    ("gpt3-175b", "megatron"): None,
    ("gpt3-175b", "torchtitan"): "precision",  # megatron-fp16: torchtitan trains in bfloat16 or float32
    ("gpt3-175b", "deepspeed"): "overlap_grad_reduce",  # pipelined: DeepSpeed reduces after the last microbatch
    ("llama3-8b", "megatron"): None,
    ("llama3-8b", "torchtitan"): "zero",  # ZeRO-1: FSDP2 has no optimizer-only sharding
    ("llama3-8b", "deepspeed"): None,
    ("mixtral-8x7b", "megatron"): None,
    ("mixtral-8x7b", "torchtitan"): "zero",
    ("mixtral-8x7b", "deepspeed"): "pipeline_parallel",  # MoE with TP and PP: Megatron-DeepSpeed unpartitions the sends
}


@pytest.mark.parametrize("preset,framework", sorted(PRESET_OUTCOMES))
def test_every_preset_exports_or_is_refused_with_its_reason(preset, framework):
    """Each preset is written for each framework, or refused naming the setting and the framework."""
    refused = PRESET_OUTCOMES[(preset, framework)]
    if refused is None:
        out = export(framework, dict(PRESETS[preset].inputs))
        assert out["text"] and out["targets"] == [t.name for t in TARGETS[framework]]
        return
    with pytest.raises(CalcError) as e:
        export(framework, dict(PRESETS[preset].inputs))
    assert e.value.param == refused
    assert TARGETS[framework][0].name in str(e.value) or TARGETS[framework][-1].name in str(e.value)
    assert "\n" not in str(e.value)


def test_planner_rows_export_or_are_refused_naming_a_setting():
    """Every planner row of every preset's model is written or refused with a plan setting named."""
    names = PLAN_PARAMS | {"parallel"}
    for preset in PRESETS:
        for raw in search_rows(preset):
            for framework in FRAMEWORKS:
                try:
                    assert export(framework, raw)["text"]
                except CalcError as e:
                    assert e.param in names and "\n" not in str(e)


# ---------------------------------------------------------------------------- Megatron-LM


def megatron_args(**changes: object) -> dict[str, str | None]:
    preset = changes.pop("preset", "gpt3-175b")
    out = export("megatron", inputs(preset, **changes))
    return parse_arguments(out["arguments"], flag_list("megatron-lm")["flags"])


def layout_layers(layout: str, p: int) -> list[list[int]]:
    """Per pipeline rank, the global layer indices a Megatron layout string gives it (its grammar, in the list)."""
    text = layout.replace(",", "")
    text = re.sub(r"\(([^)]+)\)\*(\d+)", lambda x: x.group(1) * int(x.group(2)), text)
    text = re.sub(r"(.)\*(\d+)", lambda x: x.group(1) * int(x.group(2)), text)
    stages = text.split("|")
    assert len(stages) % p == 0 and stages[0].startswith("E") and stages[-1].endswith("L")
    assert set("".join(stages)) <= set(flag_list("megatron-lm")["flags"]["--pipeline-model-parallel-layout"]
                                       ["grammar"]["characters"])
    ranks: list[list[int]] = [[] for _ in range(p)]
    layer = 0
    for i, stage in enumerate(stages):
        for _ in range(stage.count("t")):
            ranks[i % p].append(layer)
            layer += 1
    return ranks


def plan_layers(raw: dict) -> list[list[int]]:
    return [list(s["layers"]) for s in evaluate("plan", raw)["stages"]]


def test_megatron_even_split_takes_no_layout_flag():
    """96 layers on 8 stages is Megatron's own split: no layout flag; the sizes are written."""
    args = megatron_args()
    assert not {"--pipeline-model-parallel-layout", "--decoder-first-pipeline-num-layers",
                "--num-virtual-stages-per-pipeline-rank"} & set(args)
    assert (args["--tensor-model-parallel-size"], args["--pipeline-model-parallel-size"]) == ("8", "8")
    assert (args["--micro-batch-size"], args["--global-batch-size"], args["--seq-length"]) == ("1", "1536", "2048")


def test_megatron_interleaving_with_equal_chunks_names_the_virtual_stages():
    """Interleaving 12 layers per stage in 2 chunks: --num-virtual-stages-per-pipeline-rank 2."""
    assert megatron_args(interleave=2)["--num-virtual-stages-per-pipeline-rank"] == "2"


def test_megatron_uneven_end_stages_use_the_first_and_last_stage_flags():
    """Only the end stages differ: Megatron's first/last stage layer counts say so."""
    args = megatron_args(stage_layers="11,12,12,12,12,12,12,13")
    assert (args["--decoder-first-pipeline-num-layers"], args["--decoder-last-pipeline-num-layers"]) == ("11", "13")


@pytest.mark.parametrize("changes", [{"stage_layers": "11,13,12,12,12,12,12,12"},
                                     {"stage_layers": "10,13,13,12,12,12,12,12", "interleave": 2},
                                     {"stage_layers": "13,12,12,12,12,12,12,11", "interleave": 3}])
def test_megatron_layout_places_every_layer_where_the_plan_does(changes):
    """Any other split is written as a layout string that gives each rank the plan's layers."""
    raw = inputs("gpt3-175b", **changes)
    args = parse_arguments(export("megatron", raw)["arguments"], flag_list("megatron-lm")["flags"])
    assert layout_layers(args["--pipeline-model-parallel-layout"], 8) == plan_layers(raw)


@pytest.mark.parametrize("zero,flags,strategy", [
    (0, set(), None), (1, {"--use-distributed-optimizer"}, None),
    (2, {"--use-megatron-fsdp", "--use-distributed-optimizer", "--ckpt-format"}, "optim_grads"),
    (3, {"--use-megatron-fsdp", "--use-distributed-optimizer", "--ckpt-format"}, "optim_grads_params"),
])
def test_megatron_zero_stages(zero, flags, strategy):
    """ZeRO-1 is the distributed optimizer; ZeRO-2 and 3 are Megatron-FSDP's sharding strategies."""
    args = megatron_args(preset="llama3-8b", zero=zero, layers=16)  # 16 layers: without ZeRO it fits too
    assert flags <= set(args)
    assert args.get("--data-parallel-sharding-strategy") == strategy
    assert ("--use-distributed-optimizer" in args) == (zero >= 1)


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_megatron_hybrid_sharding_is_distributed_optimizer_instances(zero):
    """Sharded within groups of 2 of the 4 replicas: two instances of the distributed optimizer (Megatron-FSDP's
    HSDP for ZeRO 2-3); none written without hybrid sharding."""
    args = megatron_args(preset="llama3-8b", zero=zero, zero_group=2, layers=16)
    assert args["--num-distributed-optimizer-instances"] == "2"
    assert "--num-distributed-optimizer-instances" not in megatron_args(preset="llama3-8b", zero=zero, layers=16)
    assert "--num-distributed-optimizer-instances" not in megatron_args(preset="llama3-8b", zero=zero, zero_group=4,
                                                                         layers=16)


def test_megatron_overlap_switches_follow_the_plan():
    """Gradient overlap as the plan says; the weight gather overlaps only beside it, and ZeRO-3 prefetches."""
    assert "--overlap-grad-reduce" in megatron_args(preset="llama3-8b")
    assert "--overlap-grad-reduce" not in megatron_args(preset="llama3-8b", overlap_grad_reduce="false")
    assert "--overlap-param-gather" in megatron_args(preset="llama3-8b", overlap_param_gather="true")
    assert "--overlap-param-gather" in megatron_args(preset="llama3-8b", zero=3)
    with pytest.raises(CalcError, match="^overlap_param_gather must be false while overlap_grad_reduce is false "
                                        "for Megatron-LM core_v0.15.3"):
        megatron_args(preset="llama3-8b", overlap_param_gather="true", overlap_grad_reduce="false")


def test_megatron_writes_no_overlap_when_there_is_no_data_parallel_group():
    """On one data-parallel rank nothing is reduced: no overlap flag, whatever the switches."""
    args = megatron_args(preset="llama3-8b", data_parallel=1, tensor_parallel=8, global_batch=8)
    assert not {"--overlap-grad-reduce", "--overlap-param-gather"} & set(args)


@pytest.mark.parametrize("precision,flags", [("bf16-adam", {"--bf16", "--grad-reduce-in-bf16"}),
                                             ("megatron-bf16", {"--bf16"}), ("megatron-fp16", {"--fp16"}),
                                             ("fp32-adam", set())])
def test_megatron_precision(precision, flags):
    """bf16 gradients need --grad-reduce-in-bf16 (Megatron keeps fp32 main gradients otherwise)."""
    args = megatron_args(preset="llama3-8b", precision=precision)
    assert {f for f in ("--bf16", "--fp16", "--grad-reduce-in-bf16") if f in args} == flags


@pytest.mark.parametrize("recompute,expected", [
    ("none", {}), ("selective", {"--recompute-granularity": "selective"}),
    ("full", {"--recompute-granularity": "full", "--recompute-method": "uniform", "--recompute-num-layers": "1"}),
])
def test_megatron_recomputation(recompute, expected):
    """Full recomputation keeps each layer's input: uniform groups of one layer."""
    args = megatron_args(preset="llama3-8b", recompute=recompute)
    assert {k: x for k, x in args.items() if k.startswith("--recompute")} == expected


@pytest.mark.parametrize("layers,expected", [
    ("3", {"--recompute-granularity": "full", "--recompute-method": "block", "--recompute-num-layers": "3"}),
    ("5", {"--recompute-granularity": "full", "--recompute-method": "block", "--recompute-num-layers": "5"}),
    ("6", {"--recompute-granularity": "full", "--recompute-method": "uniform", "--recompute-num-layers": "1"}),
])
def test_megatron_block_recomputation_counts_per_model_chunk(layers, expected):
    """recompute_layers is Megatron's block method, per model chunk (GPT-3 175B: 8 stages of 12 layers, 2 chunks
    of 6): a whole chunk is uniform full recomputation; none recomputed writes no flag (Llama-3 8B)."""
    assert not [k for k in megatron_args(preset="llama3-8b", recompute="full", recompute_layers=0)
                if k.startswith("--recompute")]
    for framework in ("megatron", "deepspeed"):
        changes = {"recompute": "full", "recompute_layers": layers}
        if framework == "megatron":
            args = megatron_args(preset="gpt3-175b", interleave=2, **changes)
        else:
            out = export("deepspeed", inputs("gpt3-175b", overlap_grad_reduce="false", **changes))
            args = parse_arguments(list(out["arguments"]), flag_list("megatron-deepspeed")["flags"])
            if layers == "6":  # one chunk per stage of 12 layers: 6 is the block method there
                expected = {**expected, "--recompute-method": "block", "--recompute-num-layers": "6"}
        assert {k: x for k, x in args.items() if k.startswith("--recompute")} == expected


@pytest.mark.parametrize("changes,param", [
    ({"zero": 3, "zero3_gather": "tensor"}, "zero3_gather"),
    ({"zero": 3, "zero3_gather": "tensor-blocking"}, "zero3_gather"),
    ({"tp_comm_overlap": "true", "sequence_parallel": "false"}, "tp_comm_overlap"),
    ({"kernels": "eager"}, "kernels"),
    ({"fp8": "true", "precision": "fp16-adam"}, "precision"),
])
def test_megatron_refusals(changes, param):
    """What Megatron-LM cannot run as planned is refused, naming the setting and the version."""
    with pytest.raises(CalcError, match="Megatron-LM core_v0.15.3") as e:
        megatron_args(preset="llama3-8b", **changes)
    assert e.value.param == param


def test_rank_order_is_megatron_s_mapping_flag_and_refused_where_the_order_is_fixed():
    """Replicas outermost is Megatron-LM's --use-tp-pp-dp-mapping; torchtitan's mesh and DeepSpeed's topology always
    put the pipeline outermost, so they refuse it, naming rank_order."""
    assert "--use-tp-pp-dp-mapping" not in megatron_args()
    assert "--use-tp-pp-dp-mapping" in megatron_args(rank_order="tp-cp-ep-pp-dp")
    for framework in ("torchtitan", "deepspeed"):
        with pytest.raises(CalcError) as e:
            export(framework, inputs("llama3-8b", zero=3 if framework == "torchtitan" else 1,
                                     rank_order="tp-cp-ep-pp-dp"))
        assert e.value.param == "rank_order" and "pipeline stages outermost" in str(e.value)


def test_megatron_text_is_the_arguments_with_the_version_and_world_size():
    """The text: comment lines naming the version and the world size, then one argument per line."""
    out = export("megatron", dict(PRESETS["gpt3-175b"].inputs))
    lines = out["text"].splitlines()
    assert lines[0].startswith("# Megatron-LM core_v0.15.3") and "1024 GPUs (128 nodes of 8)" in lines[1]
    assert "data-parallel size 16" in lines[2]
    body = [x for x in lines if not x.startswith("#")]
    assert " ".join(body).split() == out["arguments"]


# ---------------------------------------------------------------------------- torchtitan


def torchtitan_config(preset: str = "llama3-8b", **changes: object) -> dict:
    return export("torchtitan", inputs(preset, **changes))


def test_torchtitan_text_is_toml_of_the_config():
    """The printed tables are TOML that reads back to the config."""
    out = torchtitan_config(zero=3, pipeline_parallel=2, data_parallel=2)
    assert tomllib.loads(out["text"]) == out["config"]


def test_torchtitan_zero3_is_fsdp_resharding_after_every_forward():
    """ZeRO-3: FSDP over data × expert ranks, resharding after every forward pass; no replication."""
    par = torchtitan_config(zero=3)["config"]["parallelism"]
    assert (par["data_parallel_replicate_degree"], par["data_parallel_shard_degree"]) == (1, 4)
    assert par["fsdp_reshard_after_forward"] == "always" and par["tensor_parallel_degree"] == 2


def test_torchtitan_hybrid_sharding_is_replicas_of_shard_groups():
    """zero_group 2 of 4 replicas: FSDP inside groups of 2, 2 replicas (HSDP)."""
    par = torchtitan_config(zero=3, zero_group=2)["config"]["parallelism"]
    assert (par["data_parallel_replicate_degree"], par["data_parallel_shard_degree"]) == (2, 2)


def test_torchtitan_zero0_is_ddp_alone():
    """ZeRO 0 is DDP over the data-parallel ranks, with no sharding degree left to default."""
    par = torchtitan_config(zero=0, data_parallel=8, tensor_parallel=1, sequence_parallel="false", layers=8)["config"]["parallelism"]
    assert (par["data_parallel_replicate_degree"], par["data_parallel_shard_degree"]) == (8, 1)


def test_torchtitan_batch_without_and_with_pipelining():
    """Without PP the local batch is one microbatch (accumulation fills the step); with PP it is the whole
    per-replica batch, split into microbatches of micro_batch."""
    flat = torchtitan_config(zero=3)["config"]["training"]
    assert (flat["local_batch_size"], flat["global_batch_size"], flat["seq_len"]) == (1, 64, 8192)
    out = torchtitan_config(zero=3, pipeline_parallel=2, data_parallel=2, micro_batch=2)["config"]
    # 64 sequences over 2 replicas: 32 each, in 16 microbatches of 2
    assert out["training"]["local_batch_size"] == 32 and out["parallelism"]["pipeline_parallel_microbatch_size"] == 2


@pytest.mark.parametrize("changes", [{"pipeline_parallel": 2, "data_parallel": 2}, {"pipeline_parallel": 2, "data_parallel": 2, "interleave": 2},
                                     {"pipeline_parallel": 2, "data_parallel": 2, "stage_layers": "15,17"}])
def test_torchtitan_module_names_place_every_layer_where_the_plan_does(changes):
    """Each rank's model chunks hold the plan's layers; the embedding opens the first, norm and output
    close the last; the schedule is 1F1B, interleaved with chunks."""
    raw = inputs("llama3-8b", zero=3, **changes)
    par = export("torchtitan", raw)["config"]["parallelism"]
    parts = par["module_fqns_per_model_part"]
    ranks: list[list[int]] = [[], []]
    for i, part in enumerate(parts):
        ranks[i % 2] += [int(n.split(".")[1]) for n in part if n.startswith("layers.")]
    assert ranks == plan_layers(raw)
    assert parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"]
    assert par["pipeline_parallel_schedule"] == ("Interleaved1F1B" if "interleave" in changes else "1F1B")


def test_torchtitan_async_tp_turns_on_compile():
    """Overlapped TP is torchtitan's async TP, which runs only compiled."""
    config = torchtitan_config(zero=3, tp_comm_overlap="true")["config"]
    assert config["parallelism"]["enable_async_tensor_parallel"] is True and config["compile"] == {"enable": True}


def test_torchtitan_compiles_for_fused_kernels_only():
    """The plan's fused element-wise kernels are torchtitan's compiled model; eager kernels leave it off."""
    assert torchtitan_config(zero=3)["config"]["compile"] == {"enable": True}
    assert "compile" not in torchtitan_config(zero=3, kernels="eager")["config"]


def test_torchtitan_experts_split_by_tensor_parallelism_too():
    """Expert parallelism with the experts' TP equal to TP, as the plan splits them."""
    par = torchtitan_config("mixtral-8x7b", zero=3, pipeline_parallel=1, data_parallel=8)["config"]["parallelism"]
    assert (par["expert_parallel_degree"], par["expert_tensor_parallel_degree"]) == (4, 2)
    assert par["data_parallel_shard_degree"] == 32


@pytest.mark.parametrize("layers,expected", [
    ("0", {"mode": "none"}), ("32", {"mode": "full"}), ("16", {"mode": "selective", "selective_ac_option": "2"}),
    ("8", {"mode": "selective", "selective_ac_option": "4"}),
])
def test_torchtitan_block_recomputation_is_every_kth_block(layers, expected):
    """torchtitan checkpoints every k-th block: recompute_layers ⌊32/k⌋ of 32 layers is option "k"."""
    config = torchtitan_config(zero=3, recompute="full", recompute_layers=layers)["config"]
    assert config["activation_checkpoint"] == expected


def test_torchtitan_refuses_a_block_count_no_k_gives():
    """12 of 32 layers is no ⌊32/k⌋: refused, naming recompute_layers."""
    with pytest.raises(CalcError, match=r"^recompute_layers must be ⌊layers per stage / k⌋ for some k \(every k-th "
                                        r"block\) for torchtitan v0.2.2 .*got 12$") as e:
        torchtitan_config(zero=3, recompute="full", recompute_layers=12)
    assert e.value.param == "recompute_layers"


@pytest.mark.parametrize("changes,param", [
    ({"zero": 1}, "zero"), ({"zero": 2}, "zero"), ({"zero": 0, "layers": 8}, "zero"),
    ({"zero": 3, "zero3_gather": "tensor"}, "zero3_gather"),
    ({"zero": 3, "zero3_gather": "tensor-blocking"}, "zero3_gather"),
    ({"zero": 3, "precision": "fp16-adam"}, "precision"),
    ({"zero": 3, "attention": "standard"}, "attention"),
    ({"zero": 3, "sequence_parallel": "false"}, "sequence_parallel"),
    ({"zero": 3, "tied_embeddings": "true", "pipeline_parallel": 2, "data_parallel": 2}, "tied_embeddings"),
    ({"zero": 0, "data_parallel": 8, "tensor_parallel": 1, "sequence_parallel": "false", "overlap_grad_reduce": "false", "layers": 8},
     "overlap_grad_reduce"),
    ({"zero": 3, "seq_len": 8190, "tensor_parallel": 2}, "seq_len"),
    ({"zero": 3, "kernels": "eager", "tp_comm_overlap": "true"}, "kernels"),
])
def test_torchtitan_refusals(changes, param):
    """What torchtitan cannot run as planned is refused, naming the setting and the version."""
    with pytest.raises(CalcError, match="torchtitan v0.2.2") as e:
        torchtitan_config(**changes)
    assert e.value.param == param


# ---------------------------------------------------------------------------- DeepSpeed


def test_deepspeed_batch_adds_up_as_deepspeed_checks_it():
    """train_batch_size = micro batch × accumulation steps × DeepSpeed's data-parallel size (gpus / (t·p))."""
    for preset, changes in (("llama3-8b", {}), ("gpt3-175b", {"overlap_grad_reduce": "false"})):
        raw = inputs(preset, **changes)
        config = export("deepspeed", raw)["config"]
        dp = int(raw["gpus"]) // (int(raw["tensor_parallel"]) * int(raw["pipeline_parallel"]))
        assert config["train_batch_size"] == int(raw["global_batch"])
        assert config["train_batch_size"] == config["train_micro_batch_size_per_gpu"] * \
            config["gradient_accumulation_steps"] * dp


def test_deepspeed_config_and_arguments():
    """ZeRO stage and overlap, bf16 with bf16 gradients; Megatron-DeepSpeed takes TP, no pipeline engine, SP."""
    out = export("deepspeed", dict(PRESETS["llama3-8b"].inputs))
    assert out["config"]["zero_optimization"] == {"stage": 1, "overlap_comm": True}
    assert out["config"]["bf16"] == {"enabled": True} and out["config"]["data_types"] == {"grad_accum_dtype": "bf16"}
    args = parse_arguments(out["arguments"], flag_list("megatron-deepspeed")["flags"])
    assert args["--tensor-model-parallel-size"] == "2" and "--no-pipeline-parallel" in args
    assert "--sequence-parallel" in args and args["--deepspeed_config"] == out["config_file"] == "ds_config.json"
    assert args["--zero-stage"] == "1"


def test_deepspeed_text_holds_the_json_config_then_the_arguments():
    """The text: the JSON config as DeepSpeed reads it, then the arguments, each part under a comment."""
    out = export("deepspeed", dict(PRESETS["llama3-8b"].inputs))
    text = out["text"]
    start, end = text.index("\n{"), text.index("\n}") + 2
    assert json.loads(text[start:end]) == out["config"]
    assert text[end:].lstrip("\n").startswith("# Megatron-DeepSpeed 4efb479")


def test_deepspeed_megatron_bf16_keeps_fp32_gradients():
    """megatron-bf16 is bf16 weights with fp32 gradient accumulation (DeepSpeed's BF16 optimizer)."""
    config = export("deepspeed", inputs("llama3-8b", precision="megatron-bf16"))["config"]
    assert config["data_types"] == {"grad_accum_dtype": "fp32"}


@pytest.mark.parametrize("preset,changes,param", [
    ("llama3-8b", {"context_parallel": 2, "data_parallel": 2}, "context_parallel"),
    ("gpt3-175b", {"interleave": 2, "overlap_grad_reduce": "false"}, "interleave"),
    ("gpt3-175b", {"stage_layers": "11,12,12,12,12,12,12,13", "overlap_grad_reduce": "false"}, "stage_layers"),
    ("gpt3-175b", {"zero": 2}, "zero"),
    ("llama3-8b", {"zero": 3}, "zero3_gather"),
    ("llama3-8b", {"tp_comm_overlap": "true"}, "tp_comm_overlap"),
    ("llama3-8b", {"attention": "flash3"}, "attention"),
    ("llama3-8b", {"overlap_param_gather": "true"}, "overlap_param_gather"),
    ("llama3-8b", {"zero": 0, "overlap_grad_reduce": "false", "layers": 16}, "precision"),
    ("llama3-8b", {"zero": 0, "layers": 16}, "overlap_grad_reduce"),
    ("llama3-8b", {"zero": 2, "precision": "megatron-bf16"}, "precision"),
    ("gpt3-175b", {"kernels": "eager"}, "kernels"),
    ("llama3-8b", {"zero_group": 2, "overlap_grad_reduce": "false"}, "zero_group"),
    ("llama3-8b", {"zero": 3, "zero3_gather": "tensor-blocking", "recompute": "full"}, "zero3_gather"),
    ("llama3-8b", {"fp8": "true"}, "zero"),
])
def test_deepspeed_refusals(preset, changes, param):
    """What DeepSpeed and Megatron-DeepSpeed cannot run as planned is refused, naming the setting."""
    with pytest.raises(CalcError, match="DeepSpeed") as e:
        export("deepspeed", inputs(preset, **changes))
    assert e.value.param == param


def test_deepspeed_pipeline_layers_not_a_multiple_are_refused_as_the_pipeline_degree():
    """30 layers on 4 stages: DeepSpeed balances them itself, so the pipeline degree is named."""
    raw = inputs("llama3-8b", layers=30, pipeline_parallel=4, data_parallel=1, tensor_parallel=2, overlap_grad_reduce="false")
    with pytest.raises(CalcError, match=r"^pipeline_parallel must be a divisor of layers \(30\)"):
        export("deepspeed", raw)


# ---------------------------------------------------------------------------- every framework


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_plan_that_does_not_fit_is_refused(framework):
    """An export is a plan to run: one that does not fit in memory is refused, saying by how much."""
    raw = inputs("gpt3-175b", pipeline_parallel=1, data_parallel=128, recompute="none")
    assert not evaluate("plan", raw)["memory_per_device"]["fits"]
    with pytest.raises(CalcError, match=r"^parallel must be a split whose most loaded GPU fits in its memory "
                                        r"\(80 GiB\): an export is a plan to run, got '\d+\.\d GiB per GPU on "
                                        r"pipeline stage 0'$"):
        export(framework, raw)


def test_the_framework_is_one_of_three():
    """--to names one of the frameworks."""
    with pytest.raises(CalcError, match="^to must be one of megatron, torchtitan, deepspeed, got 'jax'"):
        export("jax", dict(PRESETS["llama3-8b"].inputs))


@pytest.mark.parametrize("framework", ["megatron", "torchtitan", "deepspeed"])
def test_bf16_optimizer_states_are_refused_by_every_framework(framework):
    """bf16-states (Apex's DistributedFusedAdam with dtype bf16) has no flag in the frameworks targeted."""
    with pytest.raises(CalcError) as e:
        export(framework, inputs("llama3-8b", precision="bf16-states", zero=3 if framework == "torchtitan" else 1))
    assert e.value.param == "precision" and "bf16-states" in str(e.value)


@pytest.mark.parametrize("framework", ["megatron", "torchtitan"])
@pytest.mark.parametrize("engine", ["megatron-2021", "deepspeed"])
def test_a_plan_timed_for_another_engine_is_refused(framework, engine):
    """Megatron-LM and torchtitan of today run neither Megatron-LM 2021's gradient add nor DeepSpeed's engine."""
    with pytest.raises(CalcError, match=rf"^pipeline_engine must be megatron for .*got '{engine}'$") as e:
        export(framework, inputs("llama3-8b", zero=3 if framework == "torchtitan" else 1, pipeline_engine=engine))
    assert e.value.param == "pipeline_engine"


def test_fp8_is_transformer_engine_s_recipe_where_the_framework_has_it():
    """FP8: Megatron-LM's hybrid format with delayed scaling and fp8 weight gathers (with the distributed optimizer
    only, as its parser requires); torchtitan's float8 converter with fp8 FSDP gathers; Megatron-DeepSpeed's TE
    layers; without fp8 none of it."""
    fp8 = megatron_args(preset="llama3-8b", fp8="true")
    assert (fp8["--fp8-format"], fp8["--fp8-recipe"], fp8["--fp8-amax-history-len"]) == ("hybrid", "delayed", "1024")
    assert "--fp8-param-gather" in fp8 and "--use-distributed-optimizer" in fp8
    assert "--fp8-param-gather" not in megatron_args(preset="llama3-8b", fp8="true", zero=0, data_parallel=1,
                                                     tensor_parallel=8)
    assert not any(k.startswith("--fp8") for k in megatron_args(preset="llama3-8b"))
    config = export("torchtitan", inputs("llama3-8b", zero=3, fp8="true"))["config"]
    assert config["model"]["converters"] == ["quantize.linear.float8"]
    assert config["quantize"]["linear"]["float8"]["enable_fsdp_float8_all_gather"] is True
    assert "quantize" not in export("torchtitan", inputs("llama3-8b", zero=3))["config"]
    out = export("deepspeed", inputs("llama3-8b", precision="megatron-bf16", zero=0, fp8="true", layers=8,
                                     overlap_grad_reduce="false"))
    args = parse_arguments(list(out["arguments"]), flag_list("megatron-deepspeed")["flags"])
    assert args["--transformer-impl"] == "transformer_engine" and "--fp8-hybrid" in args
