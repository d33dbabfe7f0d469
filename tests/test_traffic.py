"""Tests for calc.traffic: Megatron's per-layer TP volume and per-boundary PP volume."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.errors import CalcError
from calc.model import model
from calc.plan import hardware, parallel, plan
from calc.traffic import layer_traffic


@given(b=st.integers(1, 8), s=st.sampled_from([512, 1024, 2048]), h=st.sampled_from([1024, 2048, 4096]),
       t=st.sampled_from([1, 2, 4, 8]))
def test_plan_lists_the_closed_form_tp_volume(b, s, h, t):
    """The plan's TP bytes per step are layers × microbatches × 8bsh(t−1)/t × 2 bytes."""
    m = model(8, h, 16, 32000, s)
    pl = plan(m, b, b * (8 // t) * 4, hardware(8, 1e15, profile_name="a100-sxm4-80gb"), parallel(tensor=t, data=8 // t))
    tp = [c for c in pl.communications if c.strategy == "tensor"]
    expected = layer_traffic(b, s, h, t).tp_bytes_per_layer * 8 * pl.microbatches_per_step
    assert sum(c.bytes_per_step for c in tp) == pytest.approx(expected, rel=1e-12)


def test_single_device_sends_nothing():
    """t = 1: no tensor-parallel traffic."""
    assert layer_traffic(1, 2048, 4096, 1).tp_elements_per_layer == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tensor_parallel": 0}, "tensor_parallel must be a whole number >= 1, got 0"),
        ({"bytes_per_element": 9}, "bytes_per_element must be a whole number <= 8, got 9"),
        ({"hidden": 1.5}, "hidden must be a whole number >= 1, got 1.5"),
    ],
)
def test_layer_traffic_refuses_a_non_count_naming_the_rule(kwargs, message):
    """Each input is a count with a named rule."""
    args = {"micro_batch": 1, "seq_len": 2048, "hidden": 4096, "tensor_parallel": 8, **kwargs}
    with pytest.raises(CalcError) as info:
        layer_traffic(**args)
    assert str(info.value) == message
