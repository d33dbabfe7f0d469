"""GPU profiles and the cluster a plan runs on.

A :class:`Profile` is one GPU model as its vendor specifies it, plus how much of
each figure real kernels and collectives achieve (each constant with its source in
:data:`Profile.sources`). A :class:`Hardware` is a cluster: a profile (or the same
figures given by hand), the number of GPUs, the NVLink domain ("node") size and a
memory reserve. ``SPEC.json``'s ``hardware.profile`` names a profile; any field
given beside it overrides the profile's value.

Units: memory in bytes as the vendor means it (an "80GB" A100 or H100 has
80 GiB = 85,899,345,920 B: ``nvidia-smi`` reports 81,920 MiB on the A100 and
81,559 MiB usable on the H100); FLOP/s dense (without 2:4 sparsity); bandwidths in
bytes/s *per GPU per direction* (NVLink 4's "900 GB/s" is 450 GB/s each way);
startup (alpha) in seconds per message step.

Achievable fractions (how much of the nominal figure a program gets):

- ``intra_node_efficiency`` and ``inter_node_efficiency``: the bus bandwidth
  nccl-tests measures for large all-reduces, divided by the nominal link rate
  (NVIDIA nccl-tests ``doc/PERFORMANCE.md`` defines busbw);
- ``hbm_efficiency``: what a streaming kernel reads and writes per second, over
  the nominal HBM bandwidth;
- ``gemm_efficiency``: the best cuBLAS throughput on a large bf16/fp16 matrix
  multiply, over the dense peak; smaller and skinnier shapes lose more through
  tile and wave quantization (:mod:`calc.kernels`);
- ``attention_efficiency``: FlashAttention-2's forward throughput over the peak
  (the backward pass runs at ``attention_backward_ratio`` of it); ``flash3_efficiency``
  the same for FlashAttention-3 or cuDNN's fused attention, on Hopper and Blackwell only.

Sources are listed per profile; a figure marked "(fitted)" was chosen so that
``python -m calc validate`` matches measured runs, and the validation reports it
cross-validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType

from .check import MAX_BYTES, MAX_RATE, count, real
from .errors import CalcError

__all__ = ["Profile", "PROFILES", "profile", "Hardware", "hardware", "fp8_hardware", "GIB", "PRECISION_DTYPES",
           "MAX_GPUS"]

GIB = 2.0**30
GB = 1e9
#: Largest cluster accepted.
MAX_GPUS = 10**7
#: Most GPUs in one node (or NVLink domain treated as one): NVL72 and NVL576 racks fit.
MAX_GPUS_PER_NODE = 1024
#: The compute data type each training or serving precision runs its matrix multiplies in.
PRECISION_DTYPES = MappingProxyType({
    "bf16-adam": "bf16", "fp16-adam": "fp16", "megatron-bf16": "bf16", "megatron-fp16": "fp16",
    "fp32-adam": "fp32", "bf16-states": "bf16",
    "bf16": "bf16", "fp16": "fp16", "fp8": "fp8", "int8": "int8", "int4": "int4",
})


@dataclass(frozen=True, slots=True)
class Profile:
    """One GPU model: vendor figures and achievable fractions."""

    name: str  #: the profile's id, e.g. ``h100-sxm5-80gb``
    title: str
    memory_bytes: float  #: HBM capacity (80 GiB for an "80GB" card)
    peak_flops: MappingProxyType  #: dtype → dense peak FLOP/s (bf16, fp16, fp8, tf32, fp32, ...)
    hbm_bandwidth: float  #: bytes/s
    sms: int  #: streaming multiprocessors (for wave quantization)
    gemm_tile: tuple[int, int]  #: output tile of a large cuBLAS GEMM (rows, columns)
    gpus_per_node: int  #: GPUs sharing one NVLink domain (8 in a DGX/HGX, 72 in an NVL72 rack)
    intra_node_bandwidth: float  #: NVLink, bytes/s per GPU per direction
    inter_node_bandwidth: float  #: the GPU's NIC share, bytes/s per direction
    intra_node_efficiency: float  #: nccl-tests ring bus bandwidth / NVLink rate (all-gather, reduce-scatter, ...)
    intra_node_allreduce_efficiency: float  #: all-reduce bus bandwidth / NVLink rate (above 1 with NVLink SHARP)
    inter_node_efficiency: float  #: nccl-tests busbw across nodes / NIC rate
    intra_node_startup: float  #: alpha per ring step inside the NVLink domain (s)
    inter_node_startup: float  #: alpha per ring step across nodes (s)
    hbm_efficiency: float
    gemm_efficiency: float
    attention_efficiency: float  #: FlashAttention-2 forward TFLOP/s / peak
    attention_backward_ratio: float  #: FlashAttention-2 backward throughput / forward throughput
    flash3_efficiency: float | None  #: FlashAttention-3 (or cuDNN) forward TFLOP/s / peak; None: not on this GPU
    flash3_backward_ratio: float | None
    kernel_overhead_s: float  #: fixed cost of launching one kernel (s)
    comm_sms: int  #: SMs a running collective holds (one thread block per NCCL channel)
    gemm_k_half: float  #: inner dimension K at which a GEMM tile spends half its time outside its main loop
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  #: field → where it comes from
    #: FP8 GEMMs (Transformer Engine's training recipe): the share of the fp8 peak a large one sustains, and its
    #: ``gemm_k_half``; None: the GPU has no fp8 tensor cores
    fp8_gemm_efficiency: float | None = None
    fp8_gemm_k_half: float | None = None

    def as_dict(self) -> dict:
        """The JSON-able dict ``python -m calc hardware --json`` lists."""
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        out["peak_flops"] = dict(self.peak_flops)
        out["gemm_tile"] = list(self.gemm_tile)
        out["sources"] = dict(self.sources)
        out["memory_gib"] = self.memory_bytes / GIB
        return out


# Figures and their sources ---------------------------------------------------------------------
# Where a figure is measured, the source is a measurement: nccl-tests bus bandwidth, STREAM-type copy
# kernels, cuBLAS(Lt) matrix multiplies, FlashAttention's own benchmarks. Secondary compendia are named as
# such: [Bekman] = S. Bekman, "Machine Learning Engineering" (stas00/ml-engineering, compute/ and network/
# chapters), which cites the vendor datasheets and reports its own measurements; [Azure] = Azure/
# AI-benchmarking-guide, measured results of ND A100 v4, ND H100 v5 and ND H200 v5 VMs.

_SRC_COMMON = {
    "gemm_tile": "NVIDIA, Matrix Multiplication Background User's Guide, ch. 3 (tile and wave quantization): "
                 "a 256x128 output tile for large GEMMs; the smaller tiles cuBLAS falls back to are in calc.kernels",
    "kernel_overhead_s": "Meta HolisticTraceAnalysis docs: a kernel launch costs 5-20 us on the CPU; launched "
                         "asynchronously, back-to-back kernels leave a few microseconds between them on the GPU",
    "comm_sms": "NCCL runs one thread block per channel; Nsight Systems shows an all-gather holding 24 of an "
                "H100's 132 SMs while a GEMM runs (NVIDIA developer forum, 2025, 'Compute-Communication Overlap "
                "Causes Severe GEMM Performance Degradation'); 16 assumed on the A100",
}
_A100 = {
    "peak_flops": "NVIDIA A100 datasheet: dense 312 TFLOP/s bf16/fp16, 156 tf32, 19.5 fp32, 624 TOPS int8",
    "sms": "A100 whitepaper and CUDA deviceQuery: 108 SMs at 1410 MHz",
    "intra_node_bandwidth": "A100 datasheet: NVLink 3, 600 GB/s per GPU both ways = 300 GB/s per direction",
    "gpus_per_node": "DGX/HGX A100: 8 GPUs on NVSwitch",
    "inter_node_bandwidth": "Narayanan et al. 2021 §5 (Selene, DGX A100): eight 200 Gb/s HDR InfiniBand HCAs "
                            "per 8 GPUs = 25 GB/s per GPU",
    "intra_node_efficiency": "[Azure] nccl-tests all_reduce on 8 A100-SXM4-80GB: 228-232 GB/s bus bandwidth "
                             "at 1-8 GB = 0.77 of 300 GB/s; NVIDIA/nccl-tests#175: 232.5 GB/s",
    "intra_node_allreduce_efficiency": "as intra_node_efficiency (the A100 has no NVLink SHARP, NVLS)",
    "inter_node_efficiency": "NVIDIA/nccl#412 (maintainer): 24 GB/s per 200 Gb/s HDR NIC = 0.96; user reports "
                             "of 86/100 GB/s on 4-NIC nodes (nccl-tests#175) = 0.86: 0.9 taken",
    "intra_node_startup": "[Azure] 8 A100s: a 1 KB all_reduce takes about 45 us: 3 us per ring step",
    "inter_node_startup": "4 us per ring step across the network: InfiniBand RDMA latency (about 2 us) plus "
                          "NCCL's proxy; fitted within that range to how Narayanan et al. 2021's ZeRO-3 rows slow "
                          "down with the rank count (NVIDIA/nccl#1244: a small 2-node all_reduce takes 46-49 us)",
    "hbm_efficiency": "[Azure] STREAM Copy/Mul/Add/Triad/Dot on A100-80GB: 1.61-1.75 TB/s = 0.79-0.86 of "
                      "2.039 TB/s: 0.83 taken",
    "gemm_efficiency": "fitted (python -m calc validate): 0.76 is what Megatron-LM's measured A100 runs sustain "
                       "(Narayanan et al. 2021 Tables 1-2, Korthikanti et al. 2022); isolated cuBLASLt fp16 GEMMs "
                       "reach 0.81-0.82 at 8192^3-16384^3 ([Azure]) and 0.87 at the best shape ([Bekman])",
    "gemm_k_half": "assumed: the H100's time outside a tile's main loop (200 x 2 x 256 x 128 FLOPs at 0.8 of its "
                   "peak per SM: 2.2 us) at the A100's best-shape rate per SM (0.87 of 312 TFLOP/s over 108 SMs): 84",
    "attention_efficiency": "Dao 2023 (FlashAttention-2) §4.1: up to 230 TFLOP/s forward, 73 % of the A100's "
                            "peak; [Azure]: 179.5 TFLOP/s at head dim 64, sequence 8K",
    "attention_backward_ratio": "Dao 2023 §4.1: backward 'up to 63 %' against forward 73 % of peak: 0.86",
}
_H100 = {
    "peak_flops": "dgxc-benchmarking READMEs: 989 TFLOP/s bf16, 1979 fp8 (dense); [Bekman]: 494.5 tf32, 67 fp32 "
                  "(1830 MHz x 528 tensor cores x 1024 FLOP/clock)",
    "sms": "Shah et al. 2024 (FlashAttention-3) §2.2: 132 SMs; 1830 MHz compute clock",
    "intra_node_bandwidth": "NVLink 4: 18 links, 900 GB/s per GPU both ways = 450 GB/s per direction ([Bekman])",
    "gpus_per_node": "DGX/HGX H100: 8 GPUs on four NVSwitch chips",
    "inter_node_bandwidth": "DGX H100: eight 400 Gb/s ConnectX-7 per 8 GPUs = 50 GB/s per GPU; Llama 3 paper "
                            "§3.3.1: '400 Gbps interconnects between GPUs'",
    "intra_node_efficiency": "NVIDIA/nccl-tests#212 (maintainer): 'NCCL can get an effective NVLink bandwidth of "
                             "370GB/s' for ring and non-all-reduce collectives = 0.82 of 450",
    "intra_node_allreduce_efficiency": "nccl-tests#212: 'you should reach a peak busBw of ~480GB/s' with NVLS; "
                                       "dgxc-benchmarking sample 480.2 GB/s: 1.06 of 450",
    "inter_node_efficiency": "NVIDIA/nccl-tests#290 and #267 (maintainers): 46-49 GB/s per 400 Gb/s NIC = 0.94",
    "intra_node_startup": "dgxc-benchmarking sample: an 8-byte to 2 KB all_reduce on 8 H100s takes 13-17 us: "
                          "about 1 us per ring step",
    "inter_node_startup": "as the A100's network (4 us per ring step)",
    "hbm_efficiency": "[Azure] STREAM on H100 80GB: 2.90-3.18 TB/s = 0.87-0.95 of 3.35 TB/s: 0.9 taken",
    "gemm_efficiency": "fitted (python -m calc validate): 0.66 is what NVIDIA's measured NeMo and Megatron-Core "
                       "H100 runs sustain under the 700 W power limit; an isolated bf16 matmul at its best shape "
                       "reaches 794.5 TFLOP/s = 0.80 ([Bekman])",
    "gemm_k_half": "fitted to measured cuBLAS bf16 GEMMs on the H100: OpenXLA's matmul table "
                   "(xla/service/gpu/model/matmul_interpolator_data.h, sm_90, tensorflow/tensorflow 372d578): the 75 "
                   "shapes of 30 us or more, M, N, K of 256-4096, match within 3.6 % (mean |log|) with 200 (48: 8.9 %); "
                   "tile-lang's H800 sweep of K at M = N = 8192 (386-766 TFLOP/s for K = 256-16384) fits 260",
    "attention_efficiency": "Dao 2023 §4.1: FlashAttention-2 on the H100 'up to 335 TFLOPs/s' (0.34 of 989); "
                            "[Azure]: 327.9 TFLOP/s at head dim 128, sequence 8K; Shah et al. 2024: '35% utilization'",
    "attention_backward_ratio": "as FlashAttention-2 on the A100 (0.86), a little lower: 0.8",
    "flash3_efficiency": "Shah et al. 2024 (FlashAttention-3): bf16 forward up to 740 TFLOP/s = 0.75 of 989",
    "flash3_backward_ratio": "Shah et al. 2024 §1: backward 1.5-1.75x FlashAttention-2's backward while the forward "
                             "is 1.5-2x: about 0.7 of the forward",
    "fp8_gemm_efficiency": "fitted (python -m calc validate): 0.54 of the 1979 TFLOP/s fp8 peak is what NVIDIA's "
                           "measured FP8 NeMo runs (dgxc-benchmarking) sustain in their linear layers; an isolated fp8 "
                           "GEMM at its best shape reaches 1541 TFLOP/s = 0.78 (tile-lang's H800 sweep, "
                           "benchmark/matmul_fp8, M = N = 8192, K = 16384)",
    "fp8_gemm_k_half": "fitted to tile-lang's fp8 sweep of K at M = N = 8192 on the H800 (569-1541 TFLOP/s for "
                       "K = 256-16384): 400, against bf16's 260 on the same sweep",
}
_B200 = {
    "peak_flops": "[Bekman] (DGX B200 datasheet): dense 2250 TFLOP/s bf16, 4500 fp8, 9000 fp4, 1125 tf32, 80 fp32",
    "sms": "148 SMs (two dies); no NVIDIA document found, widely reported by kernel authors",
    "intra_node_bandwidth": "NVLink 5: 18 links, 1.8 TB/s per GPU both ways = 900 GB/s per direction (MLPerf "
                            "system description nebius_b200_n1; [Bekman])",
    "gpus_per_node": "DGX/HGX B200: 8 GPUs on NVSwitch",
    "inter_node_bandwidth": "MLPerf system description (B200): 8 x ConnectX-7 NDR 400 Gb/s per node = 50 GB/s "
                            "per GPU",
    "intra_node_efficiency": "[Bekman] nccl-tests on 8 B200: ring all_reduce 682 GB/s at 8 GiB = 0.76 of 900",
    "intra_node_allreduce_efficiency": "[Bekman] nccl-tests on 8 B200: NVLS all_reduce 838 GB/s = 0.93 of 900",
    "inter_node_efficiency": "assumed as the H100's 400 Gb/s NICs (0.94); [Bekman] measured 73 % on AWS EFA v4",
    "intra_node_startup": "assumed as the H100's",
    "inter_node_startup": "assumed as the H100's",
    "hbm_efficiency": "assumed 0.9 (no published STREAM measurement found)",
    "gemm_efficiency": "assumed: the H100's ratio of sustained to best-shape throughput (0.66/0.80) applied to the "
                       "B200's best shape, 1745 TFLOP/s bf16 = 0.78 ([Bekman]): 0.64. No measured B200 run checks it",
    "gemm_k_half": "assumed as the H100's (no published measurement of GEMM throughput against K found)",
    "attention_efficiency": "assumed: FlashAttention-2's generic kernels reach a share of the peak like the H100's",
    "attention_backward_ratio": "as the H100",
    "flash3_efficiency": "assumed: cuDNN's fused attention on Blackwell as FlashAttention-3 on the H100 (no "
                         "published B200 figure found)",
    "flash3_backward_ratio": "as the H100",
    "fp8_gemm_efficiency": "assumed: the H100's fp8 to bf16 ratio of sustained GEMM efficiency (0.54/0.66) applied "
                           "to this GPU's bf16 figure. No measured FP8 run on Blackwell checks it",
    "fp8_gemm_k_half": "assumed as the H100's",
}


def _p(name: str, title: str, *, memory: float, peak: dict, hbm: float, sms: int, gpn: int, nvlink: float,
       nic: float, sources: dict, gemm: float, attention: float, attention_bwd: float, intra_eff: float,
       allreduce_eff: float, inter_eff: float, intra_alpha: float, inter_alpha: float, hbm_eff: float,
       comm_sms: int, k_half: float, flash3: float | None = None, flash3_bwd: float | None = None,
       tile: tuple[int, int] = (256, 128), overhead: float = 2e-6, fp8_gemm: float | None = None,
       fp8_k_half: float | None = None) -> Profile:
    return Profile(name, title, memory, MappingProxyType(peak), hbm, sms, tile, gpn, nvlink, nic, intra_eff,
                   allreduce_eff, inter_eff, intra_alpha, inter_alpha, hbm_eff, gemm, attention, attention_bwd,
                   flash3, flash3_bwd, overhead, comm_sms, k_half, MappingProxyType({**_SRC_COMMON, **sources}),
                   fp8_gemm, fp8_k_half)


MIB = 2.0**20
_A100_PEAK = {"fp32": 19.5e12, "tf32": 156e12, "bf16": 312e12, "fp16": 312e12, "int8": 624e12}
_H100_PEAK = {"fp32": 67e12, "tf32": 494.5e12, "bf16": 989e12, "fp16": 989e12, "fp8": 1979e12, "int8": 1979e12}
_B200_PEAK = {"fp32": 80e12, "tf32": 1125e12, "bf16": 2250e12, "fp16": 2250e12, "fp8": 4500e12, "fp4": 9000e12,
              "int8": 4500e12}
_A100_K = dict(peak=_A100_PEAK, sms=108, gpn=8, nvlink=300e9, nic=25e9, gemm=0.76, attention=0.72,
               attention_bwd=0.86, intra_eff=0.77, allreduce_eff=0.77, inter_eff=0.9, intra_alpha=3e-6,
               inter_alpha=4e-6, hbm_eff=0.83, comm_sms=16, k_half=84)
_H100_K = dict(peak=_H100_PEAK, sms=132, gpn=8, nvlink=450e9, nic=50e9, gemm=0.66, attention=0.35,
               attention_bwd=0.8, flash3=0.75, flash3_bwd=0.7, intra_eff=0.82, allreduce_eff=1.06, inter_eff=0.94, intra_alpha=1e-6,
               inter_alpha=4e-6, comm_sms=24, k_half=200, fp8_gemm=0.54, fp8_k_half=400)
_B200_K = dict(sms=148, nvlink=900e9, nic=50e9, gemm=0.64, attention=0.3, attention_bwd=0.8, flash3=0.7,
               flash3_bwd=0.7, intra_eff=0.76,
               allreduce_eff=0.93, inter_eff=0.94, intra_alpha=1e-6, inter_alpha=4e-6, hbm_eff=0.9, comm_sms=24,
               k_half=200, fp8_gemm=0.52, fp8_k_half=400)

_ALL = (
    _p("a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB (DGX A100)", memory=40960 * MIB, hbm=1555e9, **_A100_K,
       sources={**_A100, "memory_bytes": "A100 datasheet: 40 GB HBM2; nvidia-smi: 40,960 MiB = 40 GiB",
                "hbm_bandwidth": "A100 datasheet: 1,555 GB/s"}),
    _p("a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB (DGX A100)", memory=81920 * MIB, hbm=2039e9, **_A100_K,
       sources={**_A100, "memory_bytes": "A100 datasheet: 80 GB HBM2e; nvidia-smi: 81,920 MiB = 80 GiB",
                "hbm_bandwidth": "A100 datasheet: 2,039 GB/s"}),
    _p("h100-sxm5-80gb", "NVIDIA H100 SXM5 80GB (DGX H100)", memory=81559 * MIB, hbm=3.35e12, **_H100_K,
       hbm_eff=0.9,
       sources={**_H100, "memory_bytes": "80 GB of HBM3 (80 GiB); nvidia-smi reports 81,559 MiB (79.6 GiB) usable, "
                                         "the figure taken",
                "hbm_bandwidth": "Shah et al. 2024, Table 1: 3.35 TB/s"}),
    _p("h200-sxm-141gb", "NVIDIA H200 SXM 141GB (HGX H200)", memory=143771 * MIB, hbm=4.8e12, **_H100_K,
       hbm_eff=0.86,
       sources={**_H100, "memory_bytes": "MLPerf system description: 141 GB HBM3e; nvidia-smi reports 143,771 MiB "
                                         "(140.4 GiB), the figure taken",
                "hbm_bandwidth": "[Bekman]: 4.8 TB/s HBM3e",
                "hbm_efficiency": "[Azure] STREAM on H200: 4.00-4.48 TB/s = 0.83-0.93 of 4.8 TB/s: 0.86 taken",
                "peak_flops": "[Bekman]: the H100 SXM's compute (989 TFLOP/s dense bf16, 1979 fp8)"}),
    _p("b200", "NVIDIA B200 (HGX/DGX B200)", memory=183359 * MIB, peak=_B200_PEAK, hbm=8e12, gpn=8, **_B200_K,
       sources={**_B200, "memory_bytes": "MLPerf system description: 180 GB HBM3e; nvidia-smi reports 183,359 MiB "
                                         "(179.1 GiB), the figure taken",
                "hbm_bandwidth": "[Bekman]: 8 TB/s"}),
    _p("gb200-nvl72", "NVIDIA GB200 NVL72 rack (72 Blackwell GPUs in one NVLink domain)", memory=189471 * MIB,
       peak={**_B200_PEAK, "bf16": 2500e12, "fp16": 2500e12, "fp8": 5000e12, "fp4": 10000e12, "tf32": 1250e12},
       hbm=8e12, gpn=72, **{**_B200_K, "gemm": 0.60, "fp8_gemm": 0.49},
       sources={**_B200,
                "memory_bytes": "GB200 NVL72 specification: 13.4 TB HBM3e for 72 GPUs (186 GB each); nvidia-smi "
                                "reports 189,471 MiB (185.0 GiB), the figure taken",
                "hbm_bandwidth": "GB200 NVL72 specification: 576 TB/s for 72 GPUs = 8 TB/s each",
                "peak_flops": "GB200 NVL72 specification: 360 PFLOP/s fp16/bf16 with sparsity for 72 GPUs = 2.5 "
                              "PFLOP/s dense each (matches [Bekman]'s dense table)",
                "gpus_per_node": "GB200 NVL72: one NVLink domain of 72 GPUs",
                "intra_node_allreduce_efficiency": "coreweave/nccl-tests PR #43: all_reduce on 72 GB200s reaches "
                                                   "835-847 GB/s at 4-8 GB = 0.93 of 900",
                "inter_node_bandwidth": "one 400 Gb/s ConnectX-7 per GPU in an MLPerf GB200 submission (4 per "
                                        "4-GPU tray); some builds have 800 Gb/s: unconfirmed, override it",
                "gemm_efficiency": "assumed: the H100's ratio of sustained to best-shape throughput (0.66/0.80) "
                                   "applied to the GB200's best shape, 1822 TFLOP/s bf16 = 0.73 ([Bekman]): 0.60"}),
)

#: Every profile, by name.
PROFILES: MappingProxyType = MappingProxyType({p.name: p for p in _ALL})


def profile(name: str) -> Profile:
    """The profile called ``name``.

    >>> profile("a100-sxm4-80gb").memory_bytes / 2**30, profile("a100-sxm4-80gb").peak_flops["bf16"]
    (80.0, 312000000000000.0)
    """
    if name not in PROFILES:
        raise CalcError("profile", "one of " + ", ".join(PROFILES), name)
    return PROFILES[name]


@dataclass(frozen=True, slots=True)
class Hardware:
    """The cluster: GPU figures (a profile's, with overrides), GPUs, the node size and the memory reserve."""

    gpus: int
    gpus_per_node: int  #: GPUs per NVLink domain
    memory_bytes: float  #: per GPU
    reserve_bytes: float  #: per GPU, for the CUDA context, NCCL buffers and allocator fragmentation
    flops_per_gpu: float  #: dense peak FLOP/s of the precision's dtype (the MFU denominator)
    hbm_bandwidth: float
    intra_node_bandwidth: float  #: nominal, bytes/s per GPU per direction
    inter_node_bandwidth: float
    intra_node_startup: float
    inter_node_startup: float
    compute_efficiency: float | None  #: None: the kernel model; else all compute at this share of the peak
    gpu: Profile  #: the profile (or a custom one built from the fields) with its efficiencies

    @property
    def intra_node_effective(self) -> float:
        """Achievable bytes/s per GPU inside the NVLink domain."""
        return self.intra_node_bandwidth * self.gpu.intra_node_efficiency

    @property
    def inter_node_effective(self) -> float:
        """Achievable bytes/s per GPU across nodes."""
        return self.inter_node_bandwidth * self.gpu.inter_node_efficiency


#: Memory kept back by default: the CUDA context and cuBLAS/NCCL workspaces (about 1-2 GiB) and the
#: caching allocator's fragmentation. Source: PyTorch CUDA semantics (memory management) and NCCL's
#: NCCL_BUFFSIZE (4 MiB per channel per peer); an estimate, configurable as ``hardware.reserve``.
DEFAULT_RESERVE = 2 * GIB
_CUSTOM = "custom"


def _template(gpu: Profile | None, profile_name: str | None, **fields: float | None) -> Profile:
    """The profile the fields override: ``gpu``, the named one, or (with every field in ``fields``
    given) a custom GPU with the H100 profile's efficiencies."""
    if gpu is not None:
        return gpu
    if profile_name is not None:
        return profile(profile_name)
    for name, value in fields.items():
        if value is None:
            raise CalcError(name, "given when no hardware.profile is named", "")
    return replace(PROFILES["h100-sxm5-80gb"], name=_CUSTOM, title="custom GPU",
                   sources=MappingProxyType({"efficiencies": "the h100-sxm5-80gb profile's"}))


def pick(value, default):
    """``value``, or ``default`` when it is None (a field left to the profile)."""
    return default if value is None else value


def hardware(gpus: int, device_memory: float | None = None, flops_per_gpu: float | None = None,
             intra_node_bandwidth: float | None = None, inter_node_bandwidth: float | None = None,
             startup: float | None = None, gpus_per_node: int | None = None,
             compute_efficiency: float | None = None, *, profile_name: str | None = None,
             hbm_bandwidth: float | None = None, reserve: float | None = None, dtype: str = "bf16",
             intra_node_startup: float | None = None, inter_node_startup: float | None = None,
             gpu: Profile | None = None) -> Hardware:
    """A cluster from a profile and overrides, or from the fields alone.

    Without a profile, ``device_memory``, ``flops_per_gpu`` and both bandwidths are required,
    and the efficiencies are the H100 profile's (a documented default). ``startup``
    sets both startups; ``dtype`` picks the profile's peak (``flops_per_gpu`` overrides it);
    ``gpu`` replaces the named profile by a modified copy (what validation fits).

    >>> hw = hardware(64, profile_name="h100-sxm5-80gb")
    >>> round(hw.memory_bytes / 2**30, 2), hw.flops_per_gpu, hw.gpus_per_node
    (79.65, 989000000000000.0, 8)
    >>> hardware(12, profile_name="h100-sxm5-80gb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: gpus must be a multiple of gpus_per_node (8) or at most one node (...), got 12
    """
    template = _template(gpu, profile_name, device_memory=device_memory, flops_per_gpu=flops_per_gpu,
                         intra_node_bandwidth=intra_node_bandwidth, inter_node_bandwidth=inter_node_bandwidth,
                         hbm_bandwidth=hbm_bandwidth)
    if dtype not in template.peak_flops and flops_per_gpu is None:
        raise CalcError("precision", f"a data type {template.name} runs ({', '.join(template.peak_flops)})", dtype)
    g = count("gpus", gpus, maximum=MAX_GPUS)
    gpn = count("gpus_per_node", template.gpus_per_node if gpus_per_node is None else gpus_per_node,
                maximum=MAX_GPUS_PER_NODE)
    if g > gpn and g % gpn:
        raise CalcError("gpus", f"a multiple of gpus_per_node ({gpn}) or at most one node (a job on part of each node "
                                "or NVLink domain, such as 64 GPUs of each NVL72 rack, sets gpus_per_node to that part)", g)

    mem = real("device_memory", pick(device_memory, template.memory_bytes), maximum=MAX_BYTES, unit="bytes")
    res = real("reserve", pick(reserve, DEFAULT_RESERVE), maximum=MAX_BYTES, allow_minimum=True, unit="bytes")
    if res >= mem:
        raise CalcError("reserve", f"less than the GPU's memory ({mem / GIB:.4g} GiB)", res)
    rate = real("flops_per_gpu", pick(flops_per_gpu, template.peak_flops.get(dtype)), minimum=1e6,
                maximum=MAX_RATE, unit="FLOP/s")
    hbm = real("hbm_bandwidth", pick(hbm_bandwidth, template.hbm_bandwidth), minimum=1e3, maximum=MAX_RATE,
               unit="bytes/s")
    intra = real("intra_node_bandwidth", pick(intra_node_bandwidth, template.intra_node_bandwidth), minimum=1e3,
                 maximum=MAX_RATE, unit="bytes/s")
    inter = real("inter_node_bandwidth", pick(inter_node_bandwidth, template.inter_node_bandwidth), minimum=1e3,
                 maximum=MAX_RATE, unit="bytes/s")
    a_in = pick(intra_node_startup, pick(startup, template.intra_node_startup))
    a_out = pick(inter_node_startup, pick(startup, template.inter_node_startup))
    a_in = real("intra_node_startup", a_in, maximum=1.0, allow_minimum=True, unit="s")
    a_out = real("inter_node_startup", a_out, maximum=1.0, allow_minimum=True, unit="s")
    eff = None
    if compute_efficiency is not None:
        eff = real("compute_efficiency", compute_efficiency, minimum=1e-3, allow_minimum=True, maximum=1.0)
    return Hardware(g, gpn, mem, res, rate, hbm, intra, inter, a_in, a_out, eff, template)


def fp8_hardware(hw: Hardware) -> Hardware:
    """``hw`` as its FP8 GEMMs see it: the profile's fp8 peak (scaled as ``hw``'s peak is scaled from the profile's
    16-bit one, when ``flops_per_gpu`` overrides it), ``fp8_gemm_efficiency`` and ``fp8_gemm_k_half``.

    >>> h = fp8_hardware(hardware(8, profile_name="h100-sxm5-80gb"))
    >>> h.flops_per_gpu, h.gpu.gemm_efficiency == h.gpu.fp8_gemm_efficiency
    (1979000000000000.0, True)
    >>> fp8_hardware(hardware(8, profile_name="a100-sxm4-80gb"))
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: fp8 must be false on a100-sxm4-80gb (its profile has no fp8 tensor cores), got True
    """
    gpu = hw.gpu
    if gpu.name == _CUSTOM:
        raise CalcError("fp8", "false without a hardware.profile (the fp8 peak and efficiency come from one)", True)
    if "fp8" not in gpu.peak_flops or gpu.fp8_gemm_efficiency is None:
        raise CalcError("fp8", f"false on {gpu.name} (its profile has no fp8 tensor cores)", True)
    rate = gpu.peak_flops["fp8"] * hw.flops_per_gpu / gpu.peak_flops["bf16"]
    return replace(hw, flops_per_gpu=rate, gpu=replace(gpu, gemm_efficiency=gpu.fp8_gemm_efficiency,
                                                       gemm_k_half=gpu.fp8_gemm_k_half))
