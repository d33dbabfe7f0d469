"""Published cases M, Z, K, P and R4 of ../shared/validation/published-cases.md, each within its tolerance."""

import math

import pytest

from calc.api import evaluate
from calc.collectives import rabenseifner_allreduce, recursive_doubling_allreduce
from calc.compute import megatron_flops, percent_of_peak, train_time
from calc.memory import layer_activation_bytes, model_states
from calc.pipeline import bubble

# Narayanan et al. 2021, Table 1: P (B), heads, h, l, TP, PP, GPUs, batch, TFLOP/s per GPU, % of peak.
MEGATRON_TABLE_1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 44),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 44),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 46),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 43),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 44),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 45),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 47),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 50),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 52),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 52),
]
M2_PERCENT = [43.9, 44.2, 45.5, 43.3, 44.2, 44.9, 47.4, 49.7, 52.2, 52.2]


@pytest.mark.parametrize("row", MEGATRON_TABLE_1, ids=[f"{r[0]}B" for r in MEGATRON_TABLE_1])
def test_parameter_count_rounds_to_megatrons_table(row):
    """M1: Eq. 2 from (h, l), rounded to 0.1B, equals the P column."""
    from calc.model import megatron_params

    assert round(megatron_params(row[3], row[2]) / 1e9, 1) == row[0]


@pytest.mark.parametrize("row,expected", list(zip(MEGATRON_TABLE_1, M2_PERCENT)), ids=[str(x) for x in M2_PERCENT])
def test_percent_of_peak_matches_megatrons_table(row, expected):
    """M2: X / 312 TFLOP/s matches the derived percentage and the printed integer within 0.6 points."""
    pct = percent_of_peak(row[8] * 1e12, 312e12)
    assert round(pct, 1) == expected
    assert abs(pct - row[9]) <= 0.6


@pytest.mark.parametrize(
    "batch,l,h,expected",
    [(1536, 96, 12288, 4.5110e18), (512, 24, 2304, 1.5467e16), (3072, 128, 25600, 5.1391e19)],
    ids=["gpt3", "1.7B", "1T"],
)
def test_flops_per_iteration_with_recomputation(batch, l, h, expected):
    """M3: Eq. 3 with recomputation, and the CLI's general form, within rel. 1e-4."""
    assert megatron_flops(batch, 2048, l, h, 51200) == pytest.approx(expected, rel=1e-4)
    got = evaluate("flops", {"layers": l, "hidden": h, "seq_len": 2048, "vocab": 51200, "global_batch": batch})
    assert got["flops_per_iteration"] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("p,t,n,x,days", [(175e9, 300e9, 1024, 140e12, 34), (1008e9, 450e9, 3072, 163e12, 84)],
                         ids=["M4-gpt3", "M4b-1T"])
def test_training_days_are_8tp_over_nx(p, t, n, x, days):
    """M4, M4b: Eq. 4, 8TP/(nX), within half a day of the paper."""
    assert abs(train_time(p, t, n, x).days - days) <= 0.5
    assert abs(evaluate("train-time", {"params": p, "tokens": t, "gpus": n, "flops_per_gpu": x})["days"] - days) <= 0.5


@pytest.mark.parametrize("p,m,v,expected", [(8, 8, 1, 0.875), (8, 32, 1, 0.21875), (8, 32, 8, 0.02734375)])
def test_bubble_fraction_is_p_minus_1_over_v_m(p, m, v, expected):
    """M6: (p−1)/m and (p−1)/(v·m), exactly."""
    assert bubble(p, m, v).bubble_fraction == expected


def test_tensor_and_pipeline_volumes_of_a_gpt3_layer():
    """M7: TP moves 8·b·s·h·(t−1)/t elements per layer per microbatch (336 MiB bf16); PP b·s·h (48 MiB)."""
    from calc.model import model
    from calc.plan import hardware, parallel, plan
    from calc.traffic import layer_traffic

    b, s, h, t = 1, 2048, 12288, 8
    elements = 8 * b * s * h * (t - 1) / t
    assert elements == 176160768 and math.isclose(elements, 1.7616e8, rel_tol=1e-4)
    closed = layer_traffic(b, s, h, t)
    assert closed.tp_elements_per_layer == elements and closed.tp_bytes_per_layer == 336 * 2**20
    assert closed.pp_elements_per_boundary == 25_165_824 and closed.pp_bytes_per_boundary == 48 * 2**20
    gpt3 = model(96, h, 96, 51200, s)
    hw = hardware(64, 1e15, profile_name="a100-sxm4-80gb")
    pl = plan(gpt3, b, 8, hw, parallel(tensor=8, pipeline=8))
    tp = next(c for c in pl.communications if c.strategy == "tensor")
    layers, mbs = pl.layers_per_stage[0], pl.microbatches_per_step
    per_layer_microbatch = tp.bytes_per_step / (layers * mbs)
    assert per_layer_microbatch == 176160768 * 2 == 336 * 2**20
    pp = next(c for c in pl.communications if c.strategy == "pipeline")
    assert pp.bytes_per_call * t == b * s * h * 2 == 48 * 2**20  # each TP rank sends its 1/t (scatter-gather)


ZERO_TABLE_1 = {  # DP: (7.5B: Pos, Pos+g, Pos+g+p), (128B ...), (1T ...), GB = 1e9 B
    1: ((120, 120, 120), (2048, 2048, 2048), (16000, 16000, 16000)),
    4: ((52.5, 41.3, 30), (896, 704, 512), (7000, 5500, 4000)),
    16: ((35.6, 21.6, 7.5), (608, 368, 128), (4750, 2875, 1000)),
    64: ((31.4, 16.6, 1.88), (536, 284, 32), (4187, 2218, 250)),
    256: ((30.4, 15.4, 0.47), (518, 263, 8), (4046, 2054, 62.5)),
    1024: ((30.1, 15.1, 0.12), (513, 257, 2), (4011, 2013, 15.6)),
}


def _last_digit(printed: float) -> float:
    text = repr(printed)
    return 10.0 ** -(len(text.split(".")[1])) if "." in text else 1.0


@pytest.mark.parametrize("dp", sorted(ZERO_TABLE_1))
@pytest.mark.parametrize("model_i,psi", [(0, 7.5e9), (1, 128e9), (2, 1e12)], ids=["7.5B", "128B", "1T"])
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_zero_model_states_match_zeros_table_1(dp, model_i, psi, stage):
    """Z: every cell of ZeRO's Table 1 within one unit of the last printed digit (the paper truncates)."""
    printed = ZERO_TABLE_1[dp][model_i][stage - 1]
    got = model_states(psi, dp, stage).model_states_bytes / 1e9
    assert abs(got - printed) <= _last_digit(printed) + 1e-9
    cli = evaluate("memory", {"params": psi, "data_parallel": dp, "zero": stage})
    assert cli["model_states_bytes"] == got * 1e9


K1 = {
    "none": (dict(), 2_868_903_936),
    "tp": (dict(tensor_parallel=8), 578_813_952),
    "tp+sp": (dict(tensor_parallel=8, sequence_parallel=True), 358_612_992),
    "tp+selective": (dict(tensor_parallel=8, recompute="selective"), 327_155_712),
    "tp+sp+selective": (dict(tensor_parallel=8, sequence_parallel=True, recompute="selective"), 106_954_752),
    "full": (dict(tensor_parallel=8, recompute="full"), 50_331_648),
}


@pytest.mark.parametrize("case", K1)
def test_gpt3_layer_activation_bytes_are_exact(case):
    """K1: bytes per layer of the GPT-3 layer, exactly, through the function and the CLI path."""
    kw, expected = K1[case]
    assert layer_activation_bytes(2048, 1, 12288, 96, **kw) == expected
    raw = {"seq_len": 2048, "micro_batch": 1, "hidden": 12288, "heads": 96, "layers": 96}
    raw.update({k: ("true" if v is True else v) for k, v in kw.items()})
    assert evaluate("activations", raw)["per_layer_bytes"] == expected


def test_bubble_share_of_total_and_of_ideal_time():
    """P: p = 8, m = 32: 7/39 of the total time (GPipe), 7/32 of the ideal time (Megatron)."""
    b = bubble(8, 32)
    assert b.bubble_share == pytest.approx(7 / 39, rel=1e-12) and round(b.bubble_share, 4) == 0.1795
    assert b.bubble_fraction == 7 / 32 == 0.21875


def test_rabenseifner_and_recursive_doubling_times():
    """R4: R1's inputs give 0.01753 s (Rabenseifner) and 0.030015 s (recursive doubling)."""
    assert rabenseifner_allreduce(8, 1e9, 100e9, 5e-6).time_s == pytest.approx(0.01753, rel=1e-9)
    assert recursive_doubling_allreduce(8, 1e9, 100e9, 5e-6).time_s == pytest.approx(0.030015, rel=1e-9)
    got = evaluate("allreduce-algorithms", {"ranks": 8, "payload": "1GB", "bandwidth": "100GB/s", "startup": "5us"})
    assert got["rabenseifner_time_s"] == pytest.approx(0.01753, rel=1e-9)
    assert got["recursive_doubling_time_s"] == pytest.approx(0.030015, rel=1e-9)
