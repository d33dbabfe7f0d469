"""calc.hardware: the GPU profiles, their sources, and a cluster from a profile and overrides."""

import pytest

from calc.errors import CalcError
from calc.hardware import GIB, PROFILES, fp8_hardware, hardware, profile

REQUIRED = ("a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200", "gb200-nvl72")


def test_the_catalogue_has_the_issue_s_profiles():
    """The six profiles the issue names exist."""
    assert set(REQUIRED) <= set(PROFILES)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_figure_has_a_source(name):
    """Each measured or vendor figure names where it comes from."""
    p = profile(name)
    for field in ("memory_bytes", "peak_flops", "hbm_bandwidth", "intra_node_bandwidth", "inter_node_bandwidth",
                  "gpus_per_node", "intra_node_efficiency", "intra_node_allreduce_efficiency",
                  "inter_node_efficiency", "hbm_efficiency", "gemm_efficiency", "attention_efficiency",
                  "intra_node_startup", "inter_node_startup", "sms"):
        assert p.sources.get(field), (name, field)
    assert 0 < p.gemm_efficiency <= 1 and 0 < p.hbm_efficiency <= 1 and 0 < p.inter_node_efficiency <= 1


def test_memory_is_what_the_card_has():
    """An "80GB" A100 has 80 GiB; the H100 reports 81,559 MiB usable; the 40GB A100 40 GiB."""
    assert profile("a100-sxm4-80gb").memory_bytes == 80 * GIB
    assert profile("a100-sxm4-40gb").memory_bytes == 40 * GIB
    assert profile("h100-sxm5-80gb").memory_bytes == 81559 * 2**20


def test_dense_peaks_per_data_type():
    """Dense peaks (not the 2:4-sparse datasheet figures): A100 312, H100 989 bf16, 1979 fp8; no fp8 on A100."""
    assert profile("a100-sxm4-80gb").peak_flops["bf16"] == 312e12 and "fp8" not in profile("a100-sxm4-80gb").peak_flops
    assert profile("h100-sxm5-80gb").peak_flops["fp8"] == pytest.approx(2 * profile("h100-sxm5-80gb").peak_flops["bf16"],
                                                                        rel=1e-3)
    assert profile("gb200-nvl72").gpus_per_node == 72 and profile("b200").gpus_per_node == 8


def test_fields_beside_a_profile_override_it():
    """memory, bandwidths, startups and the node size given beside a profile replace its figures."""
    hw = hardware(16, profile_name="h100-sxm5-80gb", device_memory=40 * GIB, inter_node_bandwidth=25e9, startup=7e-6,
                  gpus_per_node=4)
    assert hw.memory_bytes == 40 * GIB and hw.inter_node_bandwidth == 25e9 and hw.gpus_per_node == 4
    assert hw.intra_node_startup == hw.inter_node_startup == 7e-6
    assert hw.flops_per_gpu == 989e12 and hw.gpu.name == "h100-sxm5-80gb"


def test_the_precision_picks_the_peak():
    """dtype chooses the profile's peak; flops_per_gpu overrides it."""
    assert hardware(8, profile_name="h100-sxm5-80gb", dtype="fp8").flops_per_gpu == 1979e12
    assert hardware(8, profile_name="h100-sxm5-80gb", flops_per_gpu=5e14).flops_per_gpu == 5e14


def test_custom_hardware_needs_its_figures():
    """Without a profile the figures are required, and named when missing."""
    with pytest.raises(CalcError, match=r"^hbm_bandwidth must be given when no hardware.profile is named"):
        hardware(8, 80 * GIB, 989e12, 450e9, 50e9)
    hw = hardware(8, 80 * GIB, 989e12, 450e9, 50e9, hbm_bandwidth=3e12)
    assert hw.gpu.name == "custom" and hw.hbm_bandwidth == 3e12


@pytest.mark.parametrize("kwargs,message", [
    (dict(profile_name="h100"), "profile must be one of a100-sxm4-40gb, a100-sxm4-80gb, h100-sxm5-80gb, "
                                "h200-sxm-141gb, b200, gb200-nvl72, got 'h100'"),
    (dict(profile_name="a100-sxm4-80gb", dtype="fp8"), "precision must be a data type a100-sxm4-80gb runs "
                                                       "(fp32, tf32, bf16, fp16, int8), got 'fp8'"),
    (dict(profile_name="h100-sxm5-80gb", reserve=90 * GIB), "reserve must be less than the GPU's memory "
                                                            "(79.65 GiB), got 96636764160.0"),
    (dict(profile_name="h100-sxm5-80gb", compute_efficiency=1.5), "compute_efficiency must be a number <= 1, "
                                                                  "got 1.5"),
    (dict(profile_name="h100-sxm5-80gb", hbm_bandwidth=1e-300), "hbm_bandwidth must be a number > 1000 bytes/s, "
                                                                "got 1e-300"),
])
def test_bad_hardware_names_the_field(kwargs, message):
    """One clear error per bad field."""
    with pytest.raises(CalcError) as e:
        hardware(8, **kwargs)
    assert str(e.value) == message


def test_gpus_fill_whole_nodes():
    """More GPUs than a node must be whole nodes."""
    with pytest.raises(CalcError, match=r"^gpus must be a multiple of gpus_per_node \(8\)"):
        hardware(12, profile_name="h100-sxm5-80gb")
    assert hardware(4, profile_name="h100-sxm5-80gb").gpus == 4


def test_a_job_on_part_of_each_nvl72_rack_is_told_how_to_say_so():
    """NVIDIA runs GB200 jobs of 128 to 512 GPUs (NVIDIA/dgxc-benchmarking's Llama 3.1 405B recipe): not whole
    racks of 72. The refusal names gpus_per_node, and with 64 GPUs of each rack the same job plans, its
    tensor-parallel groups inside a rack's NVLink domain."""
    with pytest.raises(CalcError, match=r"^gpus must be a multiple of gpus_per_node \(72\).*sets gpus_per_node"):
        hardware(128, profile_name="gb200-nvl72")
    hw = hardware(128, gpus_per_node=64, profile_name="gb200-nvl72")
    assert (hw.gpus, hw.gpus_per_node) == (128, 64)


def test_fp8_gemms_have_their_own_sourced_efficiency_where_the_gpu_has_fp8():
    """H100, H200, B200 and GB200 carry an fp8 GEMM efficiency and K½ with sources; the A100 has none, and
    :func:`fp8_hardware` refuses it; a 16-bit peak given by hand scales the fp8 peak with it."""
    for name, p in PROFILES.items():
        has = "fp8" in p.peak_flops
        assert (p.fp8_gemm_efficiency is not None) == has == (p.fp8_gemm_k_half is not None), name
        if has:
            assert 0 < p.fp8_gemm_efficiency < p.gemm_efficiency and p.fp8_gemm_k_half > p.gemm_k_half
            assert p.sources.get("fp8_gemm_efficiency") and p.sources.get("fp8_gemm_k_half"), name
    slow = fp8_hardware(hardware(8, profile_name="h100-sxm5-80gb", flops_per_gpu=494.5e12))
    assert slow.flops_per_gpu == pytest.approx(1979e12 / 2)
    with pytest.raises(CalcError, match="fp8 must be false on a100-sxm4-40gb"):
        fp8_hardware(hardware(8, profile_name="a100-sxm4-40gb"))
