"""Measured training runs: what the performance model is judged against, with sources.

Each :class:`Run` is a SPEC.json (the inputs ``python -m calc plan`` takes) as its
source describes the run, the step time the source measured, what it printed, and
every input the source does not publish together with the value taken for it.
Inputs the sources leave out take the plan's defaults unless a run says otherwise
(FlashAttention; the gradient reduction overlapped; no ZeRO). Where a source prints
achieved FLOP/s rather than a time, the step is derived with the source's own FLOP
formula (:func:`calc.compute.megatron_flops`, Narayanan et al. 2021 Eq. 3, for the
Megatron-LM and BigScience logs): that is how those sources computed their figure.

Groups (``group``; the first five are the reference set every validation reports
first, the public runs of the project's validation brief):

- ``megatron-2021-t1``: Narayanan et al. 2021 (SC'21, arXiv 2104.04473) Table 1, with
  the microbatch and interleaving of the authors' script
  (NVIDIA/Megatron-LM ``examples/academic_paper_scripts/sc21/run_table_1.sh``);
- ``mt-nlg``: Smith et al. 2022 (arXiv 2201.11990) §2.4, via two agreeing secondary copies
  (cli99/llm-analysis ``examples/megatron-turing-nlg``);
- ``bloom``: BigScience tr11-176B-ml (bigscience-workshop/bigscience ``train/tr11-176B-ml``,
  ``chronicles.md``);
- ``llama3``: Dubey et al. 2024 (arXiv 2407.21783) §3.3 and Table 4;
- ``megatron-2021-t2``: Narayanan et al. 2021 Table 2 (DeepSpeed ZeRO-3 against PTD-P);
- ``korthikanti-2022``: Korthikanti et al. 2022 (arXiv 2205.05198) Tables 3 and 5, §6.3;
- ``megatron-core-h100``: NVIDIA/Megatron-LM README, "Performance Benchmarking" (H100 weak scaling);
- ``nemo-h100``: NVIDIA/dgxc-benchmarking v24.11.1 recipes (NeMo 24.09, H100, bf16), and the same
  repository's Grok-1 314B recipe (commit 35a9aec), a mixture of experts: 8 experts, 2 per token;
- ``nemo-h100-fp8``: the same recipes run in FP8 (``training.fp8``), from the same tables;
- ``mosaic-mpt``: mosaicml/llm-foundry ``scripts/train/benchmarking/README.md`` (FSDP);
- ``mosaic-mpt-sweep``: the same README's H100 bf16 table of 8 to 64 GPUs and 512 to 65,536 tokens
  (its 2023 sweep, FlashAttention in Triton), every row but the one ``mosaic-mpt`` holds;
- ``ibm-fsdp``: PyTorch blog, "Maximizing training throughput using PyTorch FSDP" (IBM and Meta, 2024),
  eager PyTorch; and the same code compiled (foundation-model-stack/fms-fsdp README, May 2024).

OPT-175B (Zhang et al. 2022 §2.4: "up to 147 TFLOP/s per GPU") is a ceiling, not a
measurement of a step; it is listed in :data:`BOUNDS`, not among the runs.

:data:`SWEEPS` are measured comparisons whose values are printed only in plots but whose
order the source states in its text (Narayanan et al. 2021 §5.3.2, §5.4, §5.5): the
configurations of each, and which one was fastest or how throughput moved along them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .compute import megatron_flops

__all__ = ["Run", "RUNS", "BOUNDS", "REFERENCE_GROUPS", "GROUPS", "Sweep", "SWEEPS"]

#: The groups of the project's validation brief (../shared/validation/measured-runs.md).
REFERENCE_GROUPS = ("megatron-2021-t1", "mt-nlg", "bloom", "llama3")


@dataclass(frozen=True, slots=True)
class Run:
    """One measured training run."""

    name: str
    group: str
    source: str  #: where the measurement is printed
    spec: MappingProxyType  #: SPEC.json sections, as ``python -m calc plan`` takes them
    step_time_s: float  #: measured (or derived from a printed throughput with the source's formula)
    measured: str  #: what the source printed
    assumed: str  #: inputs the source does not publish, and the values taken
    #: The source does not publish the microbatch size: :func:`calc.validate.predict_run` takes the
    #: fastest that fits among the divisors of the sequences per replica, as whoever tuned the run
    #: for its published throughput would have (``batch.micro_batch`` is then left out of ``spec``).
    open_micro_batch: bool = False

    @property
    def gpus(self) -> int:
        return int(self.spec["hardware"]["gpus"])


def _gpt(layers: int, hidden: int, heads: int, vocab: int = 51200, seq: int = 2048, **extra) -> dict:
    """A Megatron GPT model section: biases, learned positions, tied embeddings, GeLU MLP of 4h."""
    return {"layers": layers, "hidden": hidden, "heads": heads, "vocab": vocab, "seq_len": seq,
            "tied_embeddings": True, "biases": True, "learned_positions": True, **extra}


def _eq3_step(global_batch: int, layers: int, hidden: int, gpus: int, tflops: float, vocab: int = 51200,
              seq: int = 2048) -> float:
    """The step a printed Eq.-3 TFLOP/s per GPU implies: ``F / (n · X)`` seconds."""
    return megatron_flops(global_batch, seq, layers, hidden, vocab) / (gpus * tflops * 1e12)


def _run(name: str, group: str, source: str, step: float, measured: str, assumed: str,
         open_micro_batch: bool = False, **sections) -> Run:
    return Run(name, group, source, MappingProxyType({k: MappingProxyType(v) for k, v in sections.items()}),
               step, measured, assumed, open_micro_batch)


_SELENE = {"profile": "a100-sxm4-80gb"}
#: Megatron-LM 2021: full recomputation, the gradient reduction after the last microbatch, and each microbatch's
#: gradients added into the accumulator by a pass of their own (LocalDDP's ``main_grad.add_`` hook; gradient
#: accumulation fusion came to Megatron-LM in February 2022, commit 83b1e42): engine ``megatron-2021``.
_MEGATRON_2021 = {"recompute": "full", "overlap_grad_reduce": False, "pipeline_engine": "megatron-2021"}

# -------------------------------------------------------------------- Narayanan et al. 2021, Table 1
_T1_SRC = ("Narayanan et al. 2021, Table 1 (row {row}); microbatch and interleaving from the authors' "
           "run_table_1.sh (NVIDIA/Megatron-LM examples/academic_paper_scripts/sc21)")
_T1 = (  # params, heads, hidden, layers, t, p, GPUs, batch, TFLOP/s, microbatch, interleave
    ("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137, 16, 1),
    ("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138, 16, 1),
    ("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142, 16, 1),
    ("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 1),
    ("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 1),
    ("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 3),
    ("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 2),
    ("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 2),
    ("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 3),
    ("1008.0B", 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 1),
)
_RUNS = [
    _run(f"megatron-t1-{size}", "megatron-2021-t1", _T1_SRC.format(row=i + 1),
         _eq3_step(gb, l, h, n, x), f"{x} TFLOP/s per GPU (Eq. 3, with recomputation)",
         "gradient reduction not overlapped (Megatron-LM 2021); fp16 with fp16 gradients (Megatron's recipe); "
         "gradients added per microbatch by LocalDDP's hook (no gradient accumulation fusion before 2022)",
         model=_gpt(l, h, a, attention="standard"), batch={"micro_batch": b, "global_batch": gb},
         hardware={**_SELENE, "gpus": n},
         parallel={"data": n // (t * p), "tensor": t, "pipeline": p, "interleave": v, **_MEGATRON_2021},
         training={"precision": "megatron-fp16"})
    for i, (size, a, h, l, t, p, n, gb, x, b, v) in enumerate(_T1)
]

# -------------------------------------------------------------------- MT-NLG, BLOOM, Llama 3
_RUNS += [
    _run(f"mt-nlg-{n}", "mt-nlg", "Smith et al. 2022 §2.4 (530B on 280/350/420 DGX A100 nodes), as quoted by "
         "cli99/llm-analysis examples/megatron-turing-nlg", step, f"{step} s per iteration ({x} TFLOP/s per GPU)",
         "microbatch 1, ZeRO stage 1, full recomputation, bf16 weights and gradients (which optimizer path the "
         "run's pre-release DeepSpeed took for bf16 is not published; DeepSpeed gained bf16 in v0.5.5, November "
         "2021, after the run), gradient reduction not overlapped: none is published; DeepSpeed's pipeline "
         "engine (Smith et al. 2022 §2: DeepSpeed's pipeline parallelism; v0.5 deepspeed/runtime/pipe: blocking "
         "sends one at a time, no interleaving, each microbatch's gradients added into param.grad by autograd)",
         model=_gpt(105, 20480, 128, attention="standard"), batch={"micro_batch": 1, "global_batch": 1920},
         hardware={**_SELENE, "gpus": n},
         parallel={"data": n // 280, "tensor": 8, "pipeline": 35, "zero": 1, **_MEGATRON_2021,
                   "pipeline_engine": "deepspeed"},
         training={"precision": "bf16-adam"})
    for n, step, x in ((2240, 60.1, 126), (2800, 50.2, 121), (3360, 44.4, 113))
] + [
    _run("bloom-176b", "bloom", "BigScience tr11-176B-ml chronicles.md: iteration 12695 at global batch 2048",
         105.22, "105.22 s per iteration, 149.02 TFLOP/s per GPU (Eq. 3)",
         "gradient reduction not overlapped; Omni-Path at 4 x 100 Gb/s per node (the BLOOM paper, p. 18, via "
         "secondary summaries); DeepSpeed's pipeline engine with bf16 and ZeRO stage 0 in its config, which is "
         "DeepSpeed's BF16_Optimizer (tr11-176B-ml.slurm: 'bf16 must use z0! it implements its own zero stage 1 "
         "equivalent'; chronicles.md: 'FP32 grad accumulation for the pipeline'; microsoft/DeepSpeed PR 1801, "
         "v0.6.5 runtime/bf16_optimizer.py): fp32 gradients (megatron-bf16's bytes), accumulated every "
         "microbatch, all-reduced in fp32; optimizer states sharded (zero 1)",
         model={"layers": 70, "hidden": 14336, "heads": 112, "vocab": 250880, "seq_len": 2048,
                "tied_embeddings": True, "biases": True, "attention": "standard"},
         batch={"micro_batch": 2, "global_batch": 2048},
         hardware={**_SELENE, "gpus": 384, "inter_node_bandwidth": "6.25GB/s"},
         parallel={"data": 8, "tensor": 4, "pipeline": 12, "zero": 1, "stage_layers": [5] + [6] * 10 + [5],
                   **_MEGATRON_2021, "pipeline_engine": "deepspeed"},
         training={"precision": "megatron-bf16"}),
]


def _llama3_step(gpus: int, seq: int, tflops: float) -> float:
    """Table 4's TFLOP/s as MFU counts it (the model's FLOPs, attention included): step = F/(n·X)."""
    from .compute import training_flops
    from .model import model
    m = model(126, 16384, 128, 128256, seq, kv_heads=8, ffn_hidden=53248, gated_mlp=True)
    return training_flops(m, 16 * 2**20 // seq, "none").model_flops / (gpus * tflops * 1e12)


_L3 = (  # GPUs, t, c, p, d, sequence, TFLOP/s
    (8192, 8, 1, 16, 64, 8192, 430), (16384, 8, 1, 16, 128, 8192, 400), (16384, 8, 16, 16, 8, 131072, 380))
_RUNS += [
    _run(f"llama3-405b-{n}-{seq // 1024}k", "llama3", f"Dubey et al. 2024, Table 4 (row {i + 1}) and §3.3.2",
         _llama3_step(n, seq, x), f"{x} TFLOP/s per GPU (BF16 MFU {round(100 * x / 989)} %)",
         "microbatch 1; interleaving v = 8 (a chunk per layer: the first chunk of the first stage holds only the "
         "embedding, the last of the last stage only the output layer, as §3.3.2 describes); §3.3.1: FSDP shards "
         "the optimizer states and gradients but does not reshard the weights after the forward pass = ZeRO-2, "
         "reducing in the weights' bf16 (PyTorch FSDP's MixedPrecision default reduce_dtype; the paper does not "
         "say) = bf16-adam; no recomputation (§3.3.2: 8K sequences without activation checkpointing); no dropout "
         "(the Llama architecture has none: meta-llama/llama3 llama/model.py); ranks in the order [TP, CP, PP, DP] "
         "(§3.3.2), replicas outermost",
         model={"layers": 126, "hidden": 16384, "heads": 128, "kv_heads": 8, "ffn_hidden": 53248,
                "gated_mlp": True, "vocab": 128256, "seq_len": seq, "dropout": False},
         batch={"micro_batch": 1, "global_batch": 16 * 2**20 // seq},
         hardware={"profile": "h100-sxm5-80gb", "gpus": n},
         parallel={"data": d, "tensor": t, "context": c, "pipeline": p, "interleave": 8, "zero": 2,
                   "sequence_parallel": True, "stage_layers": [7] + [8] * 14 + [7], "rank_order": "tp-cp-ep-pp-dp"},
         training={"precision": "bf16-adam"})
    for i, (n, t, c, p, d, seq, x) in enumerate(_L3)
]

# -------------------------------------------------------------------- Narayanan et al. 2021, Table 2
_T2 = (  # scheme, layers, hidden, heads, model-parallel (t, p), batch, GPUs, microbatch, TFLOP/s
    ("zero3", 96, 12288, 96, (1, 1), 1536, 384, 4, 144), ("zero3", 96, 12288, 96, (1, 1), 1536, 768, 2, 88),
    ("zero3", 96, 12288, 96, (1, 1), 1536, 1536, 1, 44), ("zero3", 105, 20480, 128, (1, 1), 2560, 640, 4, 138),
    ("zero3", 105, 20480, 128, (1, 1), 2240, 1120, 2, 98), ("zero3", 105, 20480, 128, (1, 1), 2240, 2240, 1, 48),
    ("ptd-p", 96, 12288, 96, (8, 12), 1536, 384, 1, 153), ("ptd-p", 96, 12288, 96, (8, 12), 1536, 768, 1, 149),
    ("ptd-p", 96, 12288, 96, (8, 12), 1536, 1536, 1, 141),
    ("ptd-p", 105, 20480, 128, (8, 35), 2240, 560, 1, 171), ("ptd-p", 105, 20480, 128, (8, 35), 2240, 1120, 1, 167),
    ("ptd-p", 105, 20480, 128, (8, 35), 2240, 2240, 1, 159),
)
_RUNS += [
    _run(f"megatron-t2-{scheme}-{'175b' if l == 96 else '530b'}-{n}", "megatron-2021-t2",
         f"Narayanan et al. 2021, Table 2 (row {i + 1})", _eq3_step(gb, l, h, n, x),
         f"{x} TFLOP/s per GPU (Eq. 3, with recomputation)",
         ("full recomputation; DeepSpeed's ZeRO-3 of 2021 (the source: 'We integrated ZeRO into our codebase using "
          "the DeepSpeed Python library'; DeepSpeed v0.3.13-0.3.16 were current): each weight tensor gathered after "
          "a device synchronize, through PyTorch's list all-gather and reduce-scatter (zero3_gather "
          "tensor-blocking); " if scheme == "zero3" else "t x p = 8 x 12 or 8 x 35 (only the model-parallel "
          "size is printed); no interleaving; gradients added per microbatch by LocalDDP's hook (no gradient accumulation "
          "fusion before 2022); ") + "gradient reduction not overlapped; fp16",
         model=_gpt(l, h, a, attention="standard"), batch={"micro_batch": b, "global_batch": gb},
         hardware={**_SELENE, "gpus": n},
         parallel={"data": n // (t * p), "tensor": t, "pipeline": p, "zero": 3 if scheme == "zero3" else 0,
                   **({"zero3_gather": "tensor-blocking"} if scheme == "zero3" else {}), **_MEGATRON_2021},
         training={"precision": "megatron-fp16"})
    for i, (scheme, l, h, a, (t, p), gb, n, b, x) in enumerate(_T2)
]

# -------------------------------------------------------------------- Korthikanti et al. 2022
_K = (  # model, layers, hidden, heads, p, GPUs, batch, microbatch, interleave, full-recompute s, present-work s
    ("22b", 48, 6144, 64, 1, 8, 4, 4, 1, 1.42, 1.10), ("175b", 96, 12288, 96, 8, 64, 64, 1, 3, 18.13, 13.75),
    ("530b", 105, 20480, 128, 35, 280, 280, 1, 3, 49.05, 37.83), ("1t", 128, 25600, 160, 64, 512, 512, 1, 1, 94.42, 71.49),
)
for size, l, h, a, p, n, gb, b, v, full, present in _K:
    for mode, step in (("full", full), ("selective", present)):
        _RUNS.append(_run(
            f"korthikanti-{size}-{mode}", "korthikanti-2022", "Korthikanti et al. 2022, Tables 3 and 5", step,
            f"{step} s per iteration", "fp16 (the paper says mixed precision); gradient reduction not overlapped "
            "(§6: 'we do not use any overlapping of gradient all-reduces')",
            model=_gpt(l, h, a, attention="standard"), batch={"micro_batch": b, "global_batch": gb},
            hardware={**_SELENE, "gpus": n},
            parallel={"tensor": 8, "pipeline": p, "interleave": v, "sequence_parallel": mode == "selective",
                      "recompute": mode, "overlap_grad_reduce": False},
            training={"precision": "megatron-fp16"}))
_RUNS.append(_run(
    "korthikanti-530b-selective-2240", "korthikanti-2022", "Korthikanti et al. 2022 §6.3", 39.15,
    "39.15 s per iteration (MFU 54.2 %)", "as the 280-GPU run, with 8 data-parallel replicas",
    model=_gpt(105, 20480, 128, attention="standard"), batch={"micro_batch": 1, "global_batch": 2240},
    hardware={**_SELENE, "gpus": 2240},
    parallel={"data": 8, "tensor": 8, "pipeline": 35, "interleave": 3, "sequence_parallel": True,
              "recompute": "selective", "overlap_grad_reduce": False},
    training={"precision": "megatron-fp16"}))

# -------------------------------------------------------------------- Megatron-Core on H100
_MC = (  # size, heads, hidden, layers, t, p, GPUs, batch, TFLOP/s
    ("1.7b", 16, 2048, 24, 1, 1, 48, 192, 408.8), ("7.1b", 32, 4096, 30, 2, 1, 96, 192, 465.9),
    ("16b", 48, 6144, 32, 4, 1, 192, 192, 489.1), ("32b", 56, 7168, 48, 8, 1, 384, 192, 459.6),
    ("70b", 64, 8192, 84, 8, 2, 768, 384, 419.7), ("119b", 80, 10240, 92, 8, 4, 1536, 768, 420.5),
    ("177b", 96, 12288, 96, 8, 6, 2304, 1152, 432.8), ("314b", 128, 16384, 96, 8, 8, 3072, 1536, 474.4),
    ("462b", 144, 18432, 112, 8, 16, 6144, 3072, 459.9),
)


def _mcore_step(layers: int, hidden: int, heads: int, batch: int, gpus: int, tflops: float) -> float:
    from .compute import training_flops
    from .model import model
    m = model(layers, hidden, heads, 131072, 4096)
    return training_flops(m, batch, "none").model_flops / (gpus * tflops * 1e12)


_RUNS += [
    _run(f"megatron-core-h100-{size}", "megatron-core-h100",
         "NVIDIA/Megatron-LM README, Performance Benchmarking (images/model_table.png, Megatron-Core r0.8.0)",
         _mcore_step(l, h, a, gb, n, x), f"{x} TFLOP/s per GPU (model FLOPs)",
         "Transformer Engine's fused attention (FlashAttention-3 class); GeLU MLP of 4h, multi-head attention, rotary positions, untied (the README gives only h, heads, layers, "
         "V = 131,072, s = 4,096); the microbatch size is not published: the fastest that fits; no interleaving "
         "(with p > 1 the README's pipeline overlap implies Megatron's interleaved schedule, of unpublished depth); "
         "distributed optimizer (ZeRO-1) with gradients reduced in fp32 (Megatron-LM's default for bf16); sequence "
         "parallelism with TP; no recomputation", open_micro_batch=True,
         model={"layers": l, "hidden": h, "heads": a, "vocab": 131072, "seq_len": 4096, "attention": "flash3"},
         batch={"global_batch": gb}, hardware={"profile": "h100-sxm5-80gb", "gpus": n},
         parallel={"data": n // (t * p), "tensor": t, "pipeline": p, "zero": 1, "sequence_parallel": t > 1,
                   "overlap_param_gather": True, "tp_comm_overlap": True},
         training={"precision": "megatron-bf16"})
    for size, a, h, l, t, p, n, gb, x in _MC
]

# -------------------------------------------------------------------- NVIDIA's NeMo recipes on H100 (bf16)
_NEMO_SRC = "NVIDIA/dgxc-benchmarking v24.11.1, {readme} (NeMo 24.09 on DGX H100, bf16)"
_LLAMA31 = {"heads": None, "kv_heads": 8, "gated_mlp": True, "vocab": 128256, "seq_len": 8192, "attention": "flash3"}
#: The recipes' optimizer (each YAML's ``optim``): Apex's ``distributed_fused_adam`` with ``grad_sync_dtype: bf16``,
#: a bf16 gradient buffer (bf16-adam); Nemotron-4 340B's also sets ``dtype: bf16``, its master copy and Adam states
#: in bf16 (bf16-states).
_NEMO_OPTIM = {"llama3.1/llama3.1_8b.yaml": "bf16-adam", "llama3.1/llama3.1_70b.yaml": "bf16-adam",
               "llama3.1/llama3.1_405b.yaml": "bf16-adam",
               "nemo_megatron/gpt3_175b_hydra.yaml": "bf16-adam", "nemotron/nemotron4-340b-synth.yaml": "bf16-states",
               "nemotron/nemotron4-15b-synth.yaml": "bf16-adam"}
#: The recipes' dropout (each YAML's ``hidden_dropout``, ``attention_dropout``, ``ffn_dropout``): 0.0 in the Llama 3.1
#: and Nemotron-4 recipes, so no masks are kept (:data:`calc.model.Model.dropout`: PyTorch's dropout at p = 0 returns
#: its input); 0.1 in GPT-3 175B's, which keeps them.
_NEMO_DROPOUT = {"llama3.1/llama3.1_8b.yaml": 0.0, "llama3.1/llama3.1_70b.yaml": 0.0, "llama3.1/llama3.1_405b.yaml": 0.0,
                 "nemo_megatron/gpt3_175b_hydra.yaml": 0.1, "nemotron/nemotron4-340b-synth.yaml": 0.0,
                 "nemotron/nemotron4-15b-synth.yaml": 0.0}
#: Each recipe's model says which attention kernel it ran, from the environment its v24.11.1 launch script sets:
#: Transformer Engine's fused (cuDNN) attention, FlashAttention-3 class, where ``NVTE_FUSED_ATTN=1``
#: (llama3.1/configure.sh; nemotron's configure.sh for 15B), flash-attn's FlashAttention-2 where
#: ``NVTE_FUSED_ATTN=0`` (nemo_megatron/launch.sh; nemotron's configure.sh for 340B).
_NEMO_ATTENTION_TEXT = {"flash3": "Transformer Engine's fused (cuDNN) attention, FlashAttention-3 class "
                                  "(NVTE_FUSED_ATTN=1)",
                        "flash": "flash-attn's FlashAttention-2 through Transformer Engine (NVTE_FUSED_ATTN=0)"}
#: Microbatch per recipe where it is not 1 (nemotron/configure.sh: MBS=4 for 15B).
_NEMO_MICRO = {"nemotron4-15b": 4}
_NEMO = (  # name, readme, recipe YAML, model, split, (GPUs, batch, step) rows
    ("llama31-8b", "llama3.1/README_8b.md", "llama3.1/llama3.1_8b.yaml",
     {**_LLAMA31, "layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 14336},
     {"tensor": 1, "pipeline": 1, "context": 2}, ((8, 128, 12.91), (128, 2048, 13.10))),
    ("llama31-70b", "llama3.1/README_70b.md", "llama3.1/llama3.1_70b.yaml",
     {**_LLAMA31, "layers": 80, "hidden": 8192, "heads": 64, "ffn_hidden": 28672},
     {"tensor": 4, "pipeline": 4, "context": 2, "interleave": 5, "sequence_parallel": True, "tp_comm_overlap": True},
     ((64, 128, 14.72), (2048, 4096, 14.98))),
    # the full model's first and last GPU counts (576 and 2304; below 576 the README's rows are proxies of fewer
    # layers); configure.sh scales the batch as 252 sequences per 576 GPUs
    ("llama31-405b", "llama3.1/README_405b.md", "llama3.1/llama3.1_405b.yaml",
     {**_LLAMA31, "layers": 126, "hidden": 16384, "heads": 128, "ffn_hidden": 53248},
     {"tensor": 8, "pipeline": 9, "context": 2, "interleave": 7, "sequence_parallel": True, "tp_comm_overlap": True},
     ((576, 252, 17.20), (2304, 1008, 17.62))),
    ("gpt3-175b", "nemo_megatron/README_175b.md", "nemo_megatron/gpt3_175b_hydra.yaml",
     _gpt(96, 12288, 96, attention="flash"),
     {"tensor": 4, "pipeline": 8, "interleave": 12, "sequence_parallel": True, "tp_comm_overlap": True},
     ((128, 256, 8.91), (2048, 4096, 9.02))),
    ("nemotron4-340b", "nemotron/README_340b.md", "nemotron/nemotron4-340b-synth.yaml",
     {"layers": 96, "hidden": 18432, "heads": 96, "kv_heads": 8, "ffn_hidden": 73728, "vocab": 256000,
      "seq_len": 4096, "attention": "flash"},
     # configure.sh overrides the YAML's ub_tp_comm_overlap False with model.ub_tp_comm_overlap=True (all sizes)
     {"tensor": 8, "pipeline": 8, "interleave": 12, "sequence_parallel": True, "recompute": "selective",
      "tp_comm_overlap": True},
     ((128, 32, 4.61), (2048, 512, 4.84))),
    ("nemotron4-15b", "nemotron/README_15b.md", "nemotron/nemotron4-15b-synth.yaml",
     {"layers": 32, "hidden": 6144, "heads": 48, "kv_heads": 8, "ffn_hidden": 24576, "vocab": 256000,
      "seq_len": 4096, "attention": "flash3"},
     {"tensor": 4, "pipeline": 1, "sequence_parallel": True, "tp_comm_overlap": True},
     ((16, 64, 2.83), (2048, 8192, 2.96))),
)
#: The same recipes' FP8 rows (``DTYPE=fp8``: ``model.fp8``, ``fp8_hybrid`` and ``fp8_params`` true, Transformer
#: Engine's delayed scaling with a 1024-step amax history): the first and last GPU count of each table, as above.
_NEMO_FP8_SRC = ("NVIDIA/dgxc-benchmarking commit 143b90d, {readme}: the FP8 table beside the same BF16 table as "
                 "v24.11.1's (DGX H100, FP8)")
_NEMO_FP8 = {"llama31-8b": ((8, 128, 9.67), (128, 2048, 9.82)),
             "llama31-70b": ((64, 128, 11.01), (2048, 4096, 11.39)),
             "llama31-405b": ((576, 252, 11.24), (2304, 1008, 12.35)),
             "gpt3-175b": ((128, 256, 5.92), (2048, 4096, 6.24)),
             "nemotron4-340b": ((128, 32, 3.16), (2048, 512, 3.49)),
             "nemotron4-15b": ((16, 64, 2.08), (2048, 8192, 2.18))}
for name, readme, yaml, mdl, split, rows in _NEMO:
    per_replica = split["tensor"] * split["pipeline"] * split.get("context", 1)
    for fp8, group, src, table in ((False, "nemo-h100", _NEMO_SRC, rows),
                                   (True, "nemo-h100-fp8", _NEMO_FP8_SRC, _NEMO_FP8[name])):
        for n, gb, step in table:
            _RUNS.append(_run(
                f"nemo-{name}{'-fp8' if fp8 else ''}-{n}", group, src.format(readme=readme), step,
                f"{step} s per step (the last step's time)", _NEMO_ATTENTION_TEXT[mdl["attention"]]
                + "; the recipe's distributed optimizer (ZeRO-1) with gradient and weight overlap; microbatch "
                f"{_NEMO_MICRO.get(name, 1)} as the recipe says; squared-ReLU MLP of Nemotron-4 taken "
                f"as an ungated MLP of the same width; {yaml}: distributed_fused_adam with grad_sync_dtype bf16"
                + (" and dtype bf16 (bf16-states)" if _NEMO_OPTIM[yaml] == "bf16-states" else " (bf16-adam)")
                + f"; hidden_dropout and attention_dropout {_NEMO_DROPOUT[yaml]}"
                + (" (ffn_dropout 0.0): no dropout masks kept" if not _NEMO_DROPOUT[yaml] else ": dropout masks kept")
                + ("; FP8 linear layers with fp8 weights (the launch scripts' model.fp8, fp8_hybrid and fp8_params)"
                   if fp8 else "")
                + ("; tensor-parallel communication overlapped (ub_tp_comm_overlap, in the YAML or set by the launch "
                   "script)" if split.get("tp_comm_overlap") else ""),
                model={**{k: x for k, x in mdl.items() if x is not None}, "dropout": _NEMO_DROPOUT[yaml] > 0},
                batch={"micro_batch": _NEMO_MICRO.get(name, 1), "global_batch": gb},
                hardware={"profile": "h100-sxm5-80gb", "gpus": n},
                parallel={"data": n // per_replica, "zero": 1, "overlap_param_gather": True, **split},
                training={"precision": _NEMO_OPTIM[yaml], **({"fp8": True} if fp8 else {})}))

# -------------------------------------------------------------------- NeMo's Grok-1 314B (mixture of experts)
_GROK_SRC = ("NVIDIA/dgxc-benchmarking commit 35a9aec, grok1/README_314b.md ({dtype} table), with the recipe "
             "grok1/grok1_314b.yaml and the overrides of grok1/configure.sh (NeMo 24.09 on DGX H100)")
#: The full model's rows (64 layers; the README's smaller scales are proxies of 2 to 32 layers): the first and last
#: GPU count, as for the recipes above. (GPUs, data-parallel degree, global batch, BF16 step s, FP8 step s);
#: configure.sh sets the global batch to 16 sequences per node.
_GROK = ((512, 1, 1024, 20.83, 16.69), (2048, 4, 4096, 21.09, 17.04))
for n, d, gb, bf16_step, fp8_step in _GROK:
    for fp8, step in ((False, bf16_step), (True, fp8_step)):
        _RUNS.append(_run(
            f"nemo-grok1-314b{'-fp8' if fp8 else ''}-{n}", "nemo-h100-fp8" if fp8 else "nemo-h100",
            _GROK_SRC.format(dtype="FP8" if fp8 else "BF16"), step, f"{step} s per step (the last step's time)",
            "Grok-1's shape as the recipe gives it (64 layers, h = 6144, 48 query and 8 key-value heads, gated GeLU "
            "MLP of 32768, 8 experts with 2 per token, RMSNorm, rotary positions, no biases, untied embeddings; "
            "the Llama 3 tokenizer, V = 128256); t = 4, p = 8, v = 8, c = 2, e = 8, sequence parallelism, "
            "microbatch 1, no recomputation (activations_checkpoint_* null), no dropout; tensor-parallel "
            "communication overlapped (configure.sh: model.ub_tp_comm_overlap=true); NVTE_FUSED_ATTN=0, so "
            "Transformer Engine runs flash-attn's kernel (FlashAttention-2); the all-to-all token dispatcher with a "
            "capacity factor of 1.0 (padded: every expert gets the mean load); mcore_distributed_optim with "
            "grad_sync_dtype bf16 (bf16-adam), gradient and weight overlap"
            + ("; FP8 linear layers with fp8 weights (configure.sh: model.fp8, fp8_hybrid and fp8_params)" if fp8
               else ""),
            model={"layers": 64, "hidden": 6144, "heads": 48, "kv_heads": 8, "ffn_hidden": 32768, "gated_mlp": True,
                   "vocab": 128256, "norm": "rmsnorm", "seq_len": 8192, "experts": 8, "top_k": 2, "dropout": False,
                   "attention": "flash"},
            batch={"micro_batch": 1, "global_batch": gb},
            hardware={"profile": "h100-sxm5-80gb", "gpus": n},
            parallel={"data": d, "tensor": 4, "pipeline": 8, "context": 2, "expert": 8, "interleave": 8, "zero": 1,
                      "sequence_parallel": True, "overlap_param_gather": True, "tp_comm_overlap": True},
            training={"precision": "bf16-adam", **({"fp8": True} if fp8 else {})}))

# -------------------------------------------------------------------- MosaicML MPT with FSDP
_MPT = {"760m": (24, 1536, 12), "1b": (24, 2048, 16), "3b": (32, 2560, 20), "7b": (32, 4096, 32),
        "13b": (40, 5120, 40), "30b": (48, 7168, 56), "70b": (80, 8192, 64)}
#: Which attention kernel each row ran (``attn_impl``): the large-scale H100 rows (2024-01, commit 5e85bd6) as
#: ``scripts/train/benchmarking/sweep.py`` passed it, ``flash`` (flash-attn 2, the ``gpu-flash2`` extra) for 1B, 3B,
#: 7B and 70B and ``triton`` for 13B and 30B; the older rows (2023-05, commit 300cc5c; 2023-10, commit b2a43a1)
#: with ``submit_benchmarks.py``'s default, ``triton``, which their ``sweep.sh`` does not override.
_MPT_ATTENTION = {"flash": "FlashAttention-2 (llm-foundry attn_impl flash)",
                  "triton": "FlashAttention in Triton (llm-foundry attn_impl triton, the scripts' default)"}
_MOSAIC = (  # model, profile, GPUs, seq, microbatch, accumulation, tokens/s per GPU, FULL_SHARD?, checkpointing, attn
    ("70b", "h100-sxm5-80gb", 512, 2048, 8, 1, 1007, True, True, "flash"),
    ("70b", "h100-sxm5-80gb", 128, 2048, 8, 1, 1058, True, True, "flash"),
    ("30b", "h100-sxm5-80gb", 512, 2048, 8, 1, 2115, True, True, "triton"),
    ("30b", "h100-sxm5-80gb", 128, 2048, 8, 1, 2199, True, True, "triton"),
    ("13b", "h100-sxm5-80gb", 512, 2048, 16, 1, 4952, True, True, "triton"),
    ("13b", "h100-sxm5-80gb", 128, 2048, 16, 1, 5080, True, True, "triton"),
    ("7b", "h100-sxm5-80gb", 512, 2048, 6, 1, 9670, True, False, "flash"),
    ("7b", "h100-sxm5-80gb", 128, 2048, 6, 1, 10475, True, False, "flash"),
    ("3b", "h100-sxm5-80gb", 512, 2048, 8, 1, 21664, False, False, "flash"),
    ("3b", "h100-sxm5-80gb", 128, 2048, 8, 1, 23422, False, False, "flash"),
    ("1b", "h100-sxm5-80gb", 512, 2048, 12, 1, 39837, False, False, "flash"),
    ("1b", "h100-sxm5-80gb", 128, 2048, 12, 1, 44123, False, False, "flash"),
    ("7b", "h100-sxm5-80gb", 8, 8192, 8, 2, 6935, True, True, "triton"),
    ("70b", "a100-sxm4-80gb", 64, 2048, 8, 4, 410, True, True, "triton"),
    ("13b", "a100-sxm4-80gb", 8, 8192, 5, 3, 1795, True, True, "triton"),
    ("70b", "a100-sxm4-40gb", 128, 2048, 4, 1, 376, True, True, "triton"),
    ("7b", "a100-sxm4-40gb", 128, 2048, 18, 1, 3623, True, True, "triton"),
    ("1b", "a100-sxm4-40gb", 128, 2048, 10, 1, 18647, True, False, "triton"),
)
for size, prof, n, seq, b, acc, tps, full, ac, attn in _MOSAIC:
    l, h, a = _MPT[size]
    gb = b * acc * n
    step = gb * seq / (tps * n)
    _RUNS.append(_run(
        f"mosaic-mpt-{size}-{prof.split('-')[0]}-{n}-{seq // 1024}k", "mosaic-mpt",
        "mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit 8c8dd48)", step,
        f"{tps} tokens/s per GPU", "MPT: GeLU MLP of 4h, no biases, tied, learned positions (the table's "
        "parameter counts grow with the sequence); " + _MPT_ATTENTION[attn] + "; nodes of 8 with 8 NICs of "
        "400 Gb/s (H100) or 200 Gb/s (A100: 'RoCE 1600 Gbps'); no dropout masks: the benchmark's "
        "scripts/train/yamls/pretrain/mpt-*.yaml set no resid_pdrop, emb_pdrop or attn_pdrop, whose defaults are 0.0 "
        "(llmfoundry/models/mpt/configuration_mpt.py); the table's FSDP mixed_precision is DEFAULT (the 2024 "
        "sweep.py passes PURE), which in Composer meant fp32 weights gathered with a bf16 reduction and later bf16 "
        "weights with an fp32 reduction; the Composer version is not published: taken as "
        "bf16 weights and gradients (bf16-adam)",
        model={"layers": l, "hidden": h, "heads": a, "vocab": 50368, "seq_len": seq, "tied_embeddings": True,
               "learned_positions": True, "dropout": False, "attention": attn},
        batch={"micro_batch": b, "global_batch": gb}, hardware={"profile": prof, "gpus": n},
        parallel={"data": n, "zero": 3 if full else 2, "recompute": "full" if ac else "none"},
        training={"precision": "bf16-adam"}))

#: The README's "H100 80GB BF16" table (8 to 64 GPUs, 512 to 65,536 tokens): model, sequence, GPUs, microbatch,
#: accumulation, tokens/s per GPU, activation checkpointing; every row FULL_SHARD. Its sweep (commit b2a43a1,
#: ``sweep.sh``: llm-foundry v0.0.4, PyTorch 2.1) passes no ``--attn_impl``, so each ran ``submit_benchmarks.py``'s
#: default, ``triton``. The 7B row at 8,192 tokens is ``mosaic-mpt-7b-h100-8-8k`` above.
_MPT_SWEEP = (
    ("70b", 2048, 64, 8, 4, 1039, True), ("70b", 2048, 32, 2, 16, 882, True),
    ("30b", 8192, 8, 1, 21, 1384, True), ("30b", 4096, 8, 1, 21, 1802, True),
    ("30b", 2048, 32, 14, 3, 2308, True), ("30b", 2048, 16, 10, 3, 2263, True),
    ("30b", 2048, 8, 3, 21, 2002, True), ("30b", 1024, 8, 6, 21, 2084, True),
    ("13b", 32768, 8, 1, 3, 1976, True), ("13b", 16384, 8, 3, 3, 2985, True),
    ("13b", 4096, 8, 10, 3, 4717, True), ("13b", 2048, 64, 2, 1, 4800, False),
    ("13b", 2048, 32, 2, 1, 4811, False), ("13b", 2048, 16, 2, 1, 4767, False),
    ("13b", 2048, 8, 2, 1, 4792, False), ("13b", 1024, 8, 40, 3, 5502, True),
    ("7b", 65536, 8, 1, 2, 1956, True), ("7b", 32768, 8, 2, 2, 3318, True),
    ("7b", 4096, 8, 16, 2, 8611, True), ("7b", 2048, 8, 6, 1, 10643, False),
    ("7b", 1024, 8, 64, 2, 10203, True), ("3b", 65536, 8, 1, 2, 3262, True),
    ("3b", 32768, 8, 3, 6, 5873, True), ("3b", 16384, 8, 1, 6, 11152, False),
    ("3b", 8192, 8, 3, 6, 16578, False), ("3b", 4096, 8, 5, 6, 20964, False),
    ("3b", 2048, 64, 6, 3, 22525, False), ("3b", 2048, 32, 6, 3, 23021, False),
    ("3b", 2048, 16, 10, 3, 24142, False), ("3b", 1024, 8, 20, 6, 27046, False),
    ("3b", 512, 8, 40, 6, 27965, False), ("1b", 65536, 8, 1, 2, 5506, True),
    ("1b", 32768, 8, 1, 4, 12025, False), ("1b", 16384, 8, 2, 4, 19649, False),
    ("1b", 8192, 8, 3, 4, 29157, False), ("1b", 4096, 8, 7, 4, 38535, False),
    ("1b", 2048, 64, 20, 1, 44402, False), ("1b", 2048, 32, 20, 1, 45130, False),
    ("1b", 2048, 16, 20, 1, 46037, False), ("1b", 2048, 8, 14, 1, 45455, False),
    ("1b", 1024, 8, 18, 4, 48910, False), ("1b", 512, 8, 56, 4, 52275, False),
    ("760m", 32768, 8, 1, 2, 16291, False), ("760m", 16384, 8, 3, 2, 27815, False),
    ("760m", 8192, 8, 6, 2, 41825, False), ("760m", 4096, 8, 12, 2, 55459, False),
    ("760m", 2048, 32, 24, 1, 67971, False), ("760m", 2048, 16, 24, 1, 68551, False),
    ("760m", 2048, 8, 24, 2, 63147, False), ("760m", 1024, 8, 48, 2, 78581, False),
    ("760m", 512, 8, 96, 2, 83749, False),
)
for size, seq, n, b, acc, tps, ac in _MPT_SWEEP:
    l, h, a = _MPT[size]
    _RUNS.append(_run(
        f"mosaic-mpt-sweep-{size}-{n}-{seq}", "mosaic-mpt-sweep",
        "llm-foundry's benchmarking README (8c8dd48), H100 80GB BF16", b * acc * n * seq / (tps * n),
        f"{tps} tokens/s per GPU", "as mosaic-mpt; attn_impl triton (the sweep's default); FULL_SHARD; "
        "checkpointing " + ("on" if ac else "off"),
        model={"layers": l, "hidden": h, "heads": a, "vocab": 50368, "seq_len": seq, "tied_embeddings": True,
               "learned_positions": True, "dropout": False, "attention": "triton"},
        batch={"micro_batch": b, "global_batch": b * acc * n}, hardware={"profile": "h100-sxm5-80gb", "gpus": n},
        parallel={"data": n, "zero": 3, "recompute": "full" if ac else "none"},
        training={"precision": "bf16-adam"}))

# -------------------------------------------------------------------- IBM and Meta, PyTorch FSDP blog
_LLAMA2 = {"7b": (32, 4096, 32, 32, 11008), "13b": (40, 5120, 40, 40, 13824), "34b": (48, 8192, 64, 8, 22016),
           "70b": (80, 8192, 64, 8, 28672)}
#: Table 1's activation checkpointing: none, 'selective' (every other block, fms-fsdp's
#: ``selective_checkpointing`` 0.5: each 2nd LLaMABlock wrapped whole, fms_fsdp/policies/ac_handler.py), full.
_IBM_RECOMPUTE = {"none": "none", "every other block": "full", "full": "full"}
_IBM = (  # model, checkpointing, A100 tokens/s per GPU, H100 tokens/s per GPU, compiled
    ("7b", "none", 3700, 7500, False), ("13b", "every other block", 1800, 3800, False),
    ("34b", "full", 700, 1550, False), ("70b", "full", 370, 800, False),
    # The same code and clusters with torch.compile (fms-fsdp README, commit ed74fd5, 2024-05-09). The README's
    # 34B and 70B rows also move from full to selective checkpointing of an unpublished share of blocks: left out.
    ("7b", "none", 4550, 9600, True), ("13b", "every other block", 2150, 4850, True))
_IBM_SRC = ("PyTorch blog (IBM and Meta, 2024), 'Maximizing training throughput using PyTorch FSDP', Table 1; "
            "fms-fsdp README (commit 4ffb9bd)")
_IBM_COMPILED_SRC = ("foundation-model-stack/fms-fsdp README, 'Training throughput benchmarks' (commit ed74fd5, "
                     "2024-05-09: 'numbers are updated with torch.compile')")
for size, rec, a100, h100, compiled in _IBM:
    l, h, a, kv, f = _LLAMA2[size]
    for prof, n, nic, tps in (("a100-sxm4-80gb", 128, "6.25GB/s", a100), ("h100-sxm5-80gb", 96, "12.5GB/s", h100)):
        _RUNS.append(_run(
            f"ibm-fsdp-llama2-{size}-{prof.split('-')[0]}" + ("-compiled" if compiled else ""), "ibm-fsdp",
            _IBM_COMPILED_SRC if compiled else _IBM_SRC,
            2 * 4096 / tps, f"{tps} tokens/s per GPU",
            ("torch.compile: fused element-wise kernels; " if compiled else
             "eager PyTorch (use_torch_compile false, fms-fsdp's default then): fms's RMSNorm in fp32 and rotary "
             "embeddings in fp32, each operation its own kernel; ") +
            ("HSDP, as the README's 7B row says (fms-fsdp's sharding_strategy 'hsdp': PyTorch FSDP's HYBRID_SHARD, "
             "sharded over the 8 GPUs of a node and replicated across nodes); " if size == "7b" else
             "full sharding over all GPUs; ") + "activation checkpointing " + (
                "of every other block (the blog's 'selective': fms-fsdp selective_checkpointing 0.5, each 2nd "
                "LLaMABlock checkpointed whole, fms_fsdp/policies/ac_handler.py): recompute full on half the layers"
                if rec == "every other block" else rec) +
            "; the cluster's 400 (A100) and 800 (H100) Gb/s are per node: "
            f"{nic} per GPU; no dropout (fms-fsdp fms_fsdp/utils/config_utils.py get_model_config sets no p_dropout, "
            "whose default in foundation-model-stack fms/models/llama.py LLaMAConfig is 0.0)",
            model={"layers": l, "hidden": h, "heads": a, "kv_heads": kv, "ffn_hidden": f, "gated_mlp": True,
                   "vocab": 32000, "seq_len": 4096, "dropout": False, "norm": "rmsnorm",
                   "kernels": "fused" if compiled else "eager"},
            batch={"micro_batch": 2, "global_batch": 2 * n},
            hardware={"profile": prof, "gpus": n, "inter_node_bandwidth": nic},
            parallel={"data": n, "zero": 3, "recompute": _IBM_RECOMPUTE[rec],
                      **({"zero_group": 8} if size == "7b" else {}),
                      **({"recompute_layers": l // 2} if rec == "every other block" else {})},
            training={"precision": "bf16-adam"}))

#: Every run, in the order of the groups above.
RUNS: tuple[Run, ...] = tuple(_RUNS)
#: The groups, in order.
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(r.group for r in RUNS))

#: Published ceilings ("up to"): (name, source, SPEC, the most model FLOP/s per GPU the source claims).
BOUNDS = (
    ("opt-175b", "Zhang et al. 2022 §2.4: 'utilization of up to 147 TFLOP/s per GPU' on 992 A100 80GB, FSDP "
     "with Megatron TP 8, 2M-token batches",
     MappingProxyType({"model": _gpt(96, 12288, 96, vocab=50272), "batch": {"micro_batch": 8, "global_batch": 992},
                       "hardware": {**_SELENE, "gpus": 992},
                       "parallel": {"data": 124, "tensor": 8, "zero": 3, "recompute": "full"},
                       "training": {"precision": "bf16-adam"}}), 147e12),
)


@dataclass(frozen=True, slots=True)
class Sweep:
    """Configurations measured side by side, and the order the source states they ran in."""

    name: str
    source: str
    finding: str  #: what the source states, paraphrased
    expect: str  #: ``"best"``: the point named ``best`` was fastest; ``"falling"``: throughput falls along the points
    points: tuple[tuple[str, MappingProxyType], ...]  #: (label, SPEC)
    best: str = ""


def _sc21(layers: int, hidden: int, heads: int, gpus: int, batch: int, t: int, p: int, micro: int = 1,
          interleave: int = 1) -> MappingProxyType:
    """A SPEC of the authors' ``run_figure_*.sh``: Megatron-LM 2021, full recomputation, local DDP, fp16."""
    return MappingProxyType({k: MappingProxyType(v) for k, v in {
        "model": _gpt(layers, hidden, heads, attention="standard"),
        "batch": {"micro_batch": micro, "global_batch": batch}, "hardware": {**_SELENE, "gpus": gpus},
        "parallel": {"data": gpus // (t * p), "tensor": t, "pipeline": p, "interleave": interleave,
                     **_MEGATRON_2021},
        "training": {"precision": "megatron-fp16"}}.items()})


_SC21_SRC = ("Narayanan et al. 2021 (arXiv 2104.04473) {section}, Figure {fig}; configurations from the authors' "
             "run_figure_{fig}.sh (NVIDIA/Megatron-LM examples/sc21)")
#: Measured orderings (values only in the figures; the order is stated in the text).
SWEEPS: tuple[Sweep, ...] = tuple(
    [Sweep(f"fig13-batch-{gb}", _SC21_SRC.format(section="§5.4.1", fig=13),
           "162.2B model on 64 GPUs: of the five (t, p) splits, t = 8 (the GPUs of one node) with p = 8 was fastest",
           "best", tuple((f"t = {64 // p}, p = {p}", _sc21(32, 20480, 128, 64, gb, 64 // p, p))
                         for p in (2, 4, 8, 16, 32)), best="t = 8, p = 8")
     for gb in (32, 128)]
    + [Sweep(f"fig14-batch-{gb}", _SC21_SRC.format(section="§5.4.2", fig=14),
             "5.9B model on 64 GPUs, t = 1: throughput decreases as the pipeline-parallel size increases",
             "falling", tuple((f"p = {p}, d = {64 // p}", _sc21(32, 3840, 32, 64, gb, 1, p)) for p in (2, 4, 8, 16, 32)))
       for gb in (32, 512)]
    + [Sweep(f"fig15-batch-{gb}", _SC21_SRC.format(section="§5.4.3", fig=15),
             "5.9B model on 64 GPUs, p = 1: throughput decreases as the tensor-parallel size increases",
             "falling", tuple((f"t = {t}, d = {64 // t}", _sc21(32, 3840, 32, 64, gb, t, 1)) for t in (2, 4, 8, 16, 32)))
       for gb in (32, 128, 512)]
    + [Sweep(f"fig16-batch-{gb}", _SC21_SRC.format(section="§5.5", fig=16),
             "91B model, (t, p) = (8, 8) on 64 GPUs: the best microbatch size is 2",
             "best", tuple((f"microbatch {b}", _sc21(32, 15360, 128, 64, gb, 8, 8, micro=b)) for b in (1, 2, 4, 8)),
             best="microbatch 2")
       for gb in (128, 512)]
    + [Sweep(f"fig12-batch-{gb}", _SC21_SRC.format(section="§5.3.2", fig=12),
             "GPT-3 175B, (t, p) = (8, 12) on 96 GPUs: the interleaved schedule (2 layers per virtual stage) was "
             "faster than the default one", "best",
             (("default schedule", _sc21(96, 12288, 96, 96, gb, 8, 12)),
              ("interleaved", _sc21(96, 12288, 96, 96, gb, 8, 12, interleave=4))), best="interleaved")
       for gb in (12, 24, 36, 48, 60)]
)
