"""Tests for calc.compare (and the compare command): two plans side by side, and why one wins."""

import json
from math import fsum

import pytest

from calc.api import COMMANDS, evaluate
from calc.compare import PARTS, compare, differing
from calc.errors import CalcError
from calc.hardware import hardware
from calc.model import model
from calc.plan import parallel, plan
from calc.presets import PRESETS
from calc.spec import spec_key

LLAMA = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
H100 = hardware(64, profile_name="h100-sxm5-80gb")


def llama(**split) -> object:
    return plan(LLAMA, split.pop("micro_batch", 1), split.pop("global_batch", 512), H100, parallel(**split))


def spec_of(preset: str, **changes: object) -> dict:
    """A preset's inputs as a SPEC (sections from the plan command's parameters)."""
    sections = COMMANDS["plan"].spec_fields
    spec: dict = {}
    for k, x in {**PRESETS[preset].inputs, **changes}.items():
        spec.setdefault(sections[k], {})[spec_key(k, sections[k])] = x
    return spec


def test_the_faster_plan_wins_with_its_main_saving_named():
    """TP 4 instead of 8 exposes less tensor-parallel communication: B wins, and the sentence says so."""
    c = compare(llama(data=8, tensor=8, zero=1, sequence_parallel=True),
                llama(data=16, tensor=4, zero=1, sequence_parallel=True))
    assert c.faster == "B" and c.b_step_time_s < c.a_step_time_s and c.b_tokens_per_s > c.a_tokens_per_s
    assert c.reason.startswith("B is faster (") and "its exposed communication is" in c.reason
    assert "tensor-parallel" in c.reason and "tensor 4 instead of 8" in c.reason
    assert "\n" not in c.reason and c.reason.endswith(".")


def test_rows_hold_both_plans_and_the_change():
    """Every part, term and transfer holds A's figure, B's and B − A; the parts add up to each step."""
    a, b = llama(data=8, tensor=8, zero=1, sequence_parallel=True), llama(data=64, zero=3)
    c = compare(a, b)
    assert [r.part for r in c.step_time] == [name for name, _ in PARTS] + ["step"]
    for r in c.step_time + tuple(c.memory):
        x, y, change = (r.a_s, r.b_s, r.change_s) if hasattr(r, "a_s") else (r.a_bytes, r.b_bytes, r.change_bytes)
        assert change == y - x
    assert fsum(r.a_s for r in c.step_time[:-1]) == pytest.approx(a.step_time_s, rel=1e-12)
    assert fsum(r.b_s for r in c.step_time[:-1]) == pytest.approx(b.step_time_s, rel=1e-12)
    total = {r.term: r for r in c.memory}["total"]
    assert (total.a_bytes, total.b_bytes) == (a.memory_per_device.total_bytes, b.memory_per_device.total_bytes)
    (tensor_rows, zero3_gathers) = ([r for r in c.communications if r.strategy == "tensor"],
                                    [r for r in c.communications if "before each forward" in r.what])
    assert tensor_rows and all(r.a_time_s > 0 and r.b_time_s == 0 and r.b_step_bytes == 0 for r in tensor_rows)
    assert zero3_gathers and all(r.a_time_s == 0 and r.b_time_s > 0 for r in zero3_gathers)
    assert (c.a_mfu, c.b_mfu) == (a.mfu, b.mfu)


def test_the_same_plan_twice_wins_nothing():
    """Identical plans: neither is faster and every change is 0."""
    c = compare(llama(data=8, tensor=8, zero=1), llama(data=8, tensor=8, zero=1))
    assert c.faster == "neither" and c.reason.startswith("Neither is faster")
    assert all(r.change_s == 0 for r in c.step_time) and all(r.change_bytes == 0 for r in c.memory)


def test_a_shorter_bubble_is_given_with_its_formula():
    """Interleaving cuts the bubble: the sentence gives (p − 1)/(v·m) of both plans."""
    gpt3 = model(96, 12288, 96, 51200, 2048)
    hw = hardware(1024, profile_name="a100-sxm4-80gb")
    a = plan(gpt3, 1, 1536, hw, parallel(data=16, tensor=8, pipeline=8, recompute="full"), "megatron-fp16")
    b = plan(gpt3, 1, 1536, hw, parallel(data=16, tensor=8, pipeline=8, recompute="full", interleave=4),
             "megatron-fp16")
    c = compare(a, b)
    assert c.faster == "B" and "its pipeline bubble is" in c.reason
    assert f"{a.bubble_fraction:.3g}" in c.reason and "v = 4" in c.reason


def test_only_the_plan_that_fits_wins():
    """A plan that does not fit loses whatever its speed, and the sentence says by how much it is over."""
    fits, over = llama(data=8, tensor=8, zero=1, sequence_parallel=True), llama(data=64)
    assert fits.memory_per_device.fits and not over.memory_per_device.fits
    c = compare(over, fits)
    assert c.faster == "B" and (c.a_fits, c.b_fits) == (False, True)
    assert c.reason.startswith("Only B fits in memory: A needs ") and "GiB per GPU of 79.65 GiB" in c.reason


def test_different_batches_are_compared_by_throughput():
    """With different global batches the step times do not compare: tokens/s does."""
    c = compare(llama(data=8, tensor=8, zero=1, global_batch=512), llama(data=8, tensor=8, zero=1, global_batch=1024))
    assert c.faster in ("A", "B") and "tokens/s against" in c.reason and "global batch" in c.reason


def test_differing_names_the_inputs_that_changed():
    """Only the inputs whose values differ are listed, by their SPEC names."""
    names = {"tensor": "parallel.tensor", "data": "parallel.data", "zero": "parallel.zero"}
    rows = differing({"tensor": 8, "data": 8, "zero": 1}, {"tensor": 4, "data": 16, "zero": 1}, names)
    assert [(r.setting, r.a, r.b) for r in rows] == [("parallel.tensor", 8, 4), ("parallel.data", 8, 16)]


# ---------------------------------------------------------------------------- the command


def test_command_compares_two_specs():
    """compare takes two SPECs (JSON text or objects) and lists the inputs that differ."""
    out = evaluate("compare", {"a": json.dumps(spec_of("llama3-8b")), "b": spec_of("llama3-8b", recompute="full")})
    assert [(s["setting"], s["a"], s["b"]) for s in out["settings"]] == [("parallel.recompute", "selective", "full")]
    assert out["faster"] == "A" and "compute" in out["reason"] and "recomputation selective instead of full" in \
        out["reason"]


def test_command_refuses_plans_of_different_models():
    """Plans of two models are refused in one line naming the first field that differs."""
    with pytest.raises(CalcError) as e:
        evaluate("compare", {"a": spec_of("llama3-8b"), "b": spec_of("llama3-8b", hidden="2048", heads="16")})
    assert str(e.value) == ("model.hidden must be the same in A and B (compare takes two plans of one model), "
                            "got (4096, 2048)")


def test_command_compares_attention_kernels_of_one_model():
    """The attention kernel is not the model: flash against standard attention is a comparison."""
    out = evaluate("compare", {"a": spec_of("llama3-8b"), "b": spec_of("llama3-8b", attention="standard")})
    assert [s["setting"] for s in out["settings"]] == ["model.attention"]


@pytest.mark.parametrize("side,changes,message", [
    ("b", {"tensor_parallel": "3"}, "b.hardware.gpus must be a multiple of tensor_parallel × pipeline_parallel × "
                                    "context_parallel × expert_parallel = 3, got 8"),
    ("a", {"kv_heads": "0"}, "a.model.kv_heads must be a whole number >= 1, got 0"),
])
def test_command_errors_name_the_plan_and_the_field(side, changes, message):
    """A bad field is named with its plan and section, as plan names it."""
    raw = {"a": spec_of("llama3-8b"), "b": spec_of("llama3-8b")}
    raw[side] = spec_of("llama3-8b", **changes)
    with pytest.raises(CalcError) as e:
        evaluate("compare", raw)
    assert str(e.value).startswith(message)


def test_command_refuses_a_spec_that_is_not_an_object():
    """Each side is a JSON object of sections."""
    with pytest.raises(CalcError, match=r"^a must be a JSON object of sections, got '\[1\]'"):
        evaluate("compare", {"a": "[1]", "b": spec_of("llama3-8b")})
    with pytest.raises(CalcError, match=r"^b.parallel.foo must be a field of parallel"):
        evaluate("compare", {"a": spec_of("llama3-8b"), "b": {"parallel": {"foo": 1}}})
