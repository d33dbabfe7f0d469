"""The ``scaling`` and ``capacity`` commands (:mod:`calc.scaling`)."""

from __future__ import annotations

from dataclasses import asdict

from .. import scaling as _scaling
from ..command import Command, Param, Result

# ---------------------------------------------------------------------------- scaling


def _compute_scaling(v: dict) -> dict:
    # The result's fields are the JSON keys, so the CLI and the page print them as named.
    return asdict(
        _scaling.data_parallel_scaling(
            v["data_parallel"], v["compute"], v["params"], v["bytes_per_gradient"], v["bandwidth"], v["startup"],
            v["serial"],
        )
    )


SCALING = Command(
    name="scaling",
    title="Data-parallel strong scaling",
    params=(
        Param("data_parallel", "count", "Data-parallel replicas N (one GPU each)", default="64"),
        Param("compute", "time", "Compute for the whole global batch on one GPU C (e.g. 60s)", default="60s"),
        Param("params", "number", "Parameters Ψ (e.g. 1.5e9)", default="1.5e9", minimum=0),
        Param("bytes_per_gradient", "number", "Bytes per gradient element (2 bf16, 4 fp32)", default="2",
              minimum=0),
        Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 25GB/s, 200Gbit/s)", default="25GB/s"),
        Param("startup", "time", "Per-step startup α (e.g. 10us)", default="10us"),
        Param("serial", "time", "Per-step time that does not shrink with N, S (e.g. optimizer update)",
              default="0s"),
    ),
    results=(
        Result("step_s", "Step time T(N)", "seconds"),
        Result("compute_s", "Compute per replica C/N", "seconds"),
        Result("allreduce_s", "Gradient all-reduce", "seconds"),
        Result("serial_s", "Serial part S", "seconds"),
        Result("speedup", "Speed-up T(1)/T(N)", "ratio"),
        Result("efficiency", "Scaling efficiency", "percent"),
        Result("doubling_speedup", "Speed-up from doubling N", "ratio"),
        Result("communication_share", "Share of the step in all-reduce", "percent"),
        Result("gradient_bytes", "Gradient bytes G", "bytes"),
        Result("single_gpu_step_s", "Step time on one GPU T(1)", "seconds"),
        Result("data_parallel", "Data-parallel replicas N", "GPUs"),
    ),
    compute=_compute_scaling,
    example={"data_parallel": "64", "compute": "60s", "params": "1.5e9", "bytes_per_gradient": "2",
             "bandwidth": "25GB/s", "startup": "10us", "serial": "0s"},
)


def _compute_capacity(v: dict) -> dict:
    return asdict(_scaling.model_state_capacity(v["params"], v["bytes_per_param"], v["device_memory"],
                                                  v["data_parallel"]))


CAPACITY = Command(
    name="capacity",
    title="Model state against device memory",
    params=(
        Param("params", "number", "Parameters Ψ (e.g. 175e9)", default="7.5e9", minimum=0),
        Param("bytes_per_param", "number", "Bytes of state per parameter k (16 mixed-precision Adam)",
              default="16", minimum=0),
        Param("device_memory", "size", "Memory per device M (e.g. 80GiB; 1 GiB = 2^30 bytes)", default="80GiB"),
        Param("data_parallel", "count", "Data-parallel ranks the state is sharded over N (ZeRO-3)", default="1"),
    ),
    results=(
        Result("state_bytes", "Model state Ψ·k", "bytes"),
        Result("per_device_bytes", "Per device Ψ·k/N", "bytes"),
        Result("fits", "Fits in M?", "fits"),
        Result("min_data_parallel", "Fewest ranks that can hold it", "count"),
        Result("state_to_memory", "State / device memory", "ratio"),
        Result("device_memory_bytes", "Device memory M", "bytes"),
        Result("data_parallel", "Ranks N", "count"),
    ),
    compute=_compute_capacity,
    example={"params": "7.5e9", "bytes_per_param": "16", "device_memory": "80GiB", "data_parallel": "1"},
)
