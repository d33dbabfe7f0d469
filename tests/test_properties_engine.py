"""Property tests: random valid-looking configurations raise nothing but CalcError."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calc.api import evaluate
from calc.errors import CalcError

small = st.integers(min_value=1, max_value=64)
pow2 = st.sampled_from([1, 2, 4, 8])


@st.composite
def plan_inputs(draw):
    heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    head_dim = draw(st.sampled_from([8, 16, 64]))
    raw = {
        "layers": draw(small), "hidden": heads * head_dim, "heads": heads,
        "kv_heads": draw(st.sampled_from([None, 1, 2, heads])),
        "ffn_hidden": draw(st.one_of(st.none(), st.integers(1, 4096))),
        "gated_mlp": draw(st.booleans()), "vocab": draw(st.integers(1, 200_000)),
        "seq_len": draw(st.sampled_from([16, 128, 2048, 8192, 100])),
        "tied_embeddings": draw(st.booleans()), "biases": draw(st.booleans()),
        "experts": draw(st.sampled_from([1, 1, 2, 8])), "top_k": draw(st.sampled_from([1, 1, 2])),
        "moe_layer_freq": draw(st.sampled_from([1, 2, 3])),
        "micro_batch": draw(pow2), "global_batch": draw(st.sampled_from([1, 8, 64, 512, 96])),
        "gpus": draw(st.sampled_from([1, 4, 8, 16, 64, 12])), "gpus_per_node": draw(st.sampled_from([4, 8])),
        "device_memory": draw(st.sampled_from(["80GB", "16GiB", 40e9])), "flops_per_gpu": "989TFLOP/s",
        "hbm_bandwidth": "3.35TB/s",
        "intra_node_bandwidth": "450GB/s", "inter_node_bandwidth": draw(st.sampled_from(["50GB/s", "1Gbit/s"])),
        "intra_node_startup": draw(st.sampled_from(["0", "5us"])), "inter_node_startup": draw(st.sampled_from(["0", "5us"])),
        "data_parallel": draw(st.sampled_from([1, 2, 4, 8])), "tensor_parallel": draw(st.sampled_from([1, 1, 2, 4, 8])), "pipeline_parallel": draw(st.sampled_from([1, 1, 2, 4])),
        "context_parallel": draw(st.sampled_from([1, 1, 2])), "expert_parallel": draw(st.sampled_from([1, 1, 2])),
        "zero": draw(st.integers(0, 3)), "sequence_parallel": draw(st.booleans()),
        "recompute": draw(st.sampled_from(["none", "selective", "full"])), "interleave": draw(st.sampled_from([1, 2])),
    }
    raw["top_k"] = min(raw["top_k"], raw["experts"]) if draw(st.integers(0, 4)) else raw["top_k"]
    model_ranks = raw["tensor_parallel"] * raw["pipeline_parallel"] * raw["context_parallel"] * raw["expert_parallel"]
    if draw(st.integers(0, 4)):  # mostly a consistent cluster
        raw["gpus"] = model_ranks * raw["data_parallel"]
        raw["gpus_per_node"] = 8 if raw["gpus"] % 8 == 0 else raw["gpus"]
        per_step = raw["micro_batch"] * raw["data_parallel"] * raw["expert_parallel"]
        raw["global_batch"] = per_step * raw["pipeline_parallel"] * draw(st.sampled_from([1, 2, 4]))
    return {k: v for k, v in raw.items() if v is not None}


def _finite(value):
    if isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, dict):
        for v in value.values():
            _finite(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _finite(v)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_inputs())
def test_plan_raises_only_calc_error(raw):
    """plan over random configurations: a finite result or a CalcError, nothing else."""
    try:
        out = evaluate("plan", raw)
    except CalcError as e:
        assert e.param != "parameter", e  # every name drawn is one of plan's: refusals are about values
        return
    _finite(out)
    assert out["step_time_s"] > 0 and out["memory_per_device"]["total_bytes"] > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_inputs())
def test_search_raises_only_calc_error(raw):
    """search over random models and clusters: plans sorted and fitting, or a CalcError."""
    for key in ("data_parallel", "tensor_parallel", "pipeline_parallel", "context_parallel", "expert_parallel", "zero", "sequence_parallel", "recompute",
                "interleave", "micro_batch"):
        raw.pop(key, None)
    try:
        out = evaluate("search", {**raw, "top": 5})
    except CalcError as e:
        assert e.param != "parameter", e
        return
    times = [p["step_time_s"] for p in out["plans"]]
    assert times == sorted(times) and all(p["memory_per_device"]["fits"] for p in out["plans"])


junk = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=12), st.sampled_from(["1e400", "-0", "nan", "inf", "8.5", "80GB", "1e9"]))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["memory", "activations", "flops", "train-time", "bubble", "schedule", "allgather",
                        "reducescatter", "alltoall", "broadcast", "allreduce-algorithms", "allreduce-two-level"]),
       st.data())
def test_commands_with_junk_raise_only_calc_error(name, data):
    """Any command with one junk value among its example inputs: a result or a CalcError."""
    from calc.api import COMMANDS

    cmd = COMMANDS[name]
    raw = dict(cmd.example)
    param = data.draw(st.sampled_from([p.name for p in cmd.params]))
    raw[param] = data.draw(junk)
    try:
        evaluate(name, raw)
    except CalcError:
        pass
