"""calc.scaling: data-parallel strong scaling and model-state capacity."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.api import evaluate
from calc.collectives import ring_allreduce
from calc.errors import CalcError
from calc.scaling import MAX_PARAMS, data_parallel_scaling, model_state_capacity

# ----------------------------------------------------------------- data_parallel_scaling

BASE = dict(compute=60.0, params=1.5e9, bytes_per_gradient=2, bandwidth=25e9, startup=10e-6, serial=0.05)


def test_step_is_compute_share_plus_serial_plus_ring():
    """T(N) = C/N + S + the ring all-reduce of Ψ·b bytes over N ranks."""
    r = data_parallel_scaling(64, **BASE)
    ring = ring_allreduce(64, 3e9, 25e9, 10e-6).time_s
    assert r.gradient_bytes == 3e9
    assert r.step_s == pytest.approx(60.0 / 64 + 0.05 + ring, rel=1e-12)
    assert r.allreduce_s == ring


def test_bekman_ddp_example():
    """Published case R5: 2B fp32 gradients on 8 GPUs at 300 GB/s take about 0.047 s."""
    r = data_parallel_scaling(8, compute=1.0, params=2e9, bytes_per_gradient=4, bandwidth=300e9, startup=0.0)
    assert r.gradient_bytes == 8e9
    assert r.allreduce_s == pytest.approx(1.75 * 8e9 / 300e9, rel=1e-12)
    assert round(r.allreduce_s, 3) == 0.047


def test_one_gpu_has_no_communication_and_unit_speedup():
    """N = 1: no all-reduce, speed-up 1, efficiency 1."""
    r = data_parallel_scaling(1, **BASE)
    assert (r.allreduce_s, r.speedup, r.efficiency, r.communication_share) == (0.0, 1.0, 1.0, 0.0)
    assert r.single_gpu_step_s == r.step_s == pytest.approx(60.05)


def test_doubling_speedup_compares_with_twice_the_gpus():
    """doubling_speedup = T(N) / T(2N)."""
    r, r2 = data_parallel_scaling(32, **BASE), data_parallel_scaling(64, **BASE)
    assert r.doubling_speedup == pytest.approx(r.step_s / r2.step_s, rel=1e-12)


def test_scaling_falls_short_of_linear_at_scale():
    """The brief's claim: doubling GPUs does not halve runtime once communication matters."""
    r = data_parallel_scaling(512, **BASE)
    assert r.doubling_speedup < 1.5
    assert r.efficiency < 0.5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"data_parallel": 0}, "data_parallel must be a whole number >= 1, got 0"),
        ({"data_parallel": 500_000_001}, "data_parallel must be a whole number <= 500000000, got 500000001"),
        ({"data_parallel": True}, "data_parallel must be a whole number >= 1, got True"),
        ({"compute": 0.0}, "compute must be a number > 0 s, got 0.0"),
        ({"compute": math.inf}, "compute must be a number > 0 s, got inf"),
        ({"serial": -1e-9}, "serial must be a number >= 0 s, got -1e-09"),
        ({"params": 0}, "params must be a number > 0 parameters, got 0"),
        ({"params": 1.1e15}, "params must be a number <= 1e+15 parameters, got 1100000000000000.0"),
        ({"bytes_per_gradient": 0}, "bytes_per_gradient must be a number > 0 bytes, got 0"),
        ({"bytes_per_gradient": 65}, "bytes_per_gradient must be a number <= 64 bytes, got 65"),
        ({"bandwidth": 0}, "bandwidth must be a number > 0 bytes/s, got 0"),
        ({"startup": -1.0}, "startup must be a number >= 0 s, got -1.0"),
    ],
)
def test_scaling_rejects_bad_input_with_exact_messages(kwargs, message):
    """Each rule names the parameter, the rule and the value."""
    args = {"data_parallel": 8, **BASE, **kwargs}
    with pytest.raises(CalcError) as e:
        data_parallel_scaling(**args)
    assert str(e.value) == message


@pytest.mark.parametrize(("gpus", "ok"), [(1, True), (500_000_000, True), (500_000_001, False)])
def test_gpu_limit_both_sides(gpus, ok):
    """The GPU count may be at most half of MAX_COUNT, so the doubled ring stays valid."""
    if ok:
        assert data_parallel_scaling(gpus, **BASE).data_parallel == gpus
    else:
        with pytest.raises(CalcError):
            data_parallel_scaling(gpus, **BASE)


@given(
    gpus=st.integers(1, 4096),
    compute=st.floats(1e-3, 1e4),
    params=st.floats(1e6, 1e12),
    bandwidth=st.floats(1e9, 1e12),
    startup=st.floats(0, 1e-4),
    serial=st.floats(0, 1.0),
)
def test_speedup_never_exceeds_gpus(gpus, compute, params, bandwidth, startup, serial):
    """Speed-up is at most N (efficiency <= 1) and the step is never below C/N + S."""
    r = data_parallel_scaling(gpus, compute, params, 2, bandwidth, startup, serial)
    assert r.speedup <= gpus * (1 + 1e-12)
    assert 0 < r.efficiency <= 1 + 1e-12
    assert r.step_s >= compute / gpus + serial
    assert 0 <= r.communication_share < 1


@given(gpus=st.integers(2, 2048), extra=st.floats(1e-6, 10.0))
def test_more_serial_time_never_helps(gpus, extra):
    """A larger serial part S lowers efficiency (Amdahl)."""
    base = data_parallel_scaling(gpus, **BASE)
    slower = data_parallel_scaling(gpus, **{**BASE, "serial": BASE["serial"] + extra})
    assert slower.efficiency < base.efficiency


# ----------------------------------------------------------------- model_state_capacity


@pytest.mark.parametrize(
    ("devices", "per_device_gb"),
    [(1, 120), (4, 30), (16, 7.5), (64, 1.875), (256, 0.46875), (1024, 0.1171875)],
)
def test_zero_stage3_column_of_table_1(devices, per_device_gb):
    """Published case Z: 7.5B parameters, 16 bytes each, P_os+g+p per device (GB = 1e9 B)."""
    c = model_state_capacity(7.5e9, 16, 80e9, devices)
    assert c.per_device_bytes == pytest.approx(per_device_gb * 1e9, rel=1e-12)


@pytest.mark.parametrize(
    ("memory", "fits", "min_data_parallel"),
    [(120e9, True, 1), (120e9 - 1, False, 2), (60e9, False, 2), (59.99e9, False, 3)],
)
def test_fits_and_min_data_parallel_both_sides_of_the_boundary(memory, fits, min_data_parallel):
    """Exactly enough memory fits; one byte less does not."""
    c = model_state_capacity(7.5e9, 16, memory)
    assert (c.fits, c.min_data_parallel) == (fits, min_data_parallel)


def test_min_data_parallel_is_not_pushed_up_by_rounding():
    """175e9 × 16 / 80e9 is 35 devices, not 36."""
    c = model_state_capacity(175e9, 16, 80e9)
    assert c.state_bytes == 2.8e12
    assert c.min_data_parallel == 35
    assert c.state_to_memory == pytest.approx(35.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"params": -1.0}, "params must be a number > 0 parameters, got -1.0"),
        ({"params": 2 * float(MAX_PARAMS)}, "params must be a number <= 1e+15 parameters, got 2000000000000000.0"),
        ({"bytes_per_param": 0}, "bytes_per_param must be a number > 0 bytes, got 0"),
        ({"device_memory": 0}, "device_memory must be a number > 0 bytes, got 0"),
        ({"data_parallel": 0}, "data_parallel must be a whole number >= 1, got 0"),
        ({"data_parallel": 2.5}, "data_parallel must be a whole number >= 1, got 2.5"),
    ],
)
def test_capacity_rejects_bad_input_with_exact_messages(kwargs, message):
    """Each rule names the parameter, the rule and the value."""
    args = {"params": 7.5e9, "bytes_per_param": 16, "device_memory": 80e9, "data_parallel": 1, **kwargs}
    with pytest.raises(CalcError) as e:
        model_state_capacity(**args)
    assert str(e.value) == message


def test_largest_inputs_stay_within_the_byte_limits():
    """Ψ = 1e15 at 64 bytes each is accepted by both functions (6.4e16 bytes < 1e18)."""
    assert model_state_capacity(MAX_PARAMS, 64, 80e9).state_bytes == 6.4e16
    assert data_parallel_scaling(8, 1.0, MAX_PARAMS, 64, 1e12, 0.0).gradient_bytes == 6.4e16


@given(params=st.floats(1e6, 1e13), k=st.floats(0.5, 32), n=st.integers(1, 10_000))
def test_sharding_divides_the_state(params, k, n):
    """Per-device bytes times N is the whole state; min_data_parallel devices suffice, one fewer does not."""
    c = model_state_capacity(params, k, 80e9, n)
    assert c.per_device_bytes * n == pytest.approx(c.state_bytes, rel=1e-12)
    assert c.state_bytes / c.min_data_parallel <= 80e9 * (1 + 1e-9)
    if c.min_data_parallel > 1:
        assert c.state_bytes / (c.min_data_parallel - 1) > 80e9 * (1 - 1e-9)


# ----------------------------------------------------------------- through the command registry


def test_scaling_command_json_keys_and_values():
    """`python -m calc scaling --json` keys are the result fields, in JSON-able form."""
    out = evaluate("scaling", {"data_parallel": "8", "compute": "1s", "params": "2e9", "bytes_per_gradient": "4",
                               "bandwidth": "300GB/s", "startup": "0"})
    assert set(out) == {
        "data_parallel", "gradient_bytes", "compute_s", "serial_s", "allreduce_s", "step_s", "single_gpu_step_s",
        "speedup", "efficiency", "doubling_speedup", "communication_share",
    }
    assert out["gradient_bytes"] == 8e9
    json.dumps(out)


def test_capacity_command_defaults():
    """The capacity command's defaults are the 7.5B example on a card of 80 GiB (2^30 B units): it does not fit."""
    out = evaluate("capacity", {})
    assert (out["state_bytes"], out["fits"], out["min_data_parallel"]) == (120e9, False, 2)
    assert out["device_memory_bytes"] == 80 * 2**30


def test_command_rejects_text_that_is_not_a_number():
    """Bad text fails naming the parameter."""
    with pytest.raises(CalcError) as e:
        evaluate("capacity", {"params": "lots"})
    assert str(e.value) == "params must be a number >= 0, got 'lots'"
