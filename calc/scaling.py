"""Why more GPUs is not a proportional speed-up, and why some models need them anyway.

Two small models, each a lower bound on what real systems pay:

- :func:`data_parallel_scaling` — strong scaling of data parallelism at a fixed
  global batch. One step on ``N`` replicas costs ``C/N`` of compute, a fixed
  per-replica time ``S`` that does not shrink (every replica runs the whole
  optimizer update), and an ideal ring all-reduce of the gradients
  (:func:`calc.collectives.ring_allreduce`), with no overlap of communication
  and compute::

      T(N) = C/N + S + 2(N−1)·α + 2(N−1)/N · G/β      G = Ψ · bytes per gradient

  Speed-up ``T(1)/T(N)``, efficiency ``speed-up / N``. As ``N`` grows the
  compute term vanishes, the bandwidth term tends to ``2G/β`` and the startup
  term grows linearly, so ``T(N)`` has a floor and then rises.

- :func:`model_state_capacity` — does the model's state fit? ``Ψ`` parameters at
  ``k`` bytes each (``k = 16`` for mixed-precision Adam: 2 + 2 + 12, Rajbhandari
  et al. 2020, §3.1) need ``Ψ·k`` bytes; a device holds ``M`` bytes, so at least
  ``ceil(Ψ·k / M)`` devices are needed *if* the state is partitioned evenly
  (ZeRO stage 3 / FSDP full sharding). Activations, buffers and fragmentation
  are left out, so the true count is higher.

Sources: Amdahl 1967 (the serial term); Thakur, Rabenseifner & Gropp 2005 and
Patarasuk & Yuan 2009 (the ring); Rajbhandari et al. 2020, "ZeRO: Memory
Optimizations Toward Training Trillion Parameter Models" (model-state bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .check import MAX_BYTES, MAX_COUNT, MAX_SECONDS, MIN_BYTES, MIN_SECONDS, count, real
from .collectives import ring_allreduce
from .memory import MAX_PARAMS

__all__ = [
    "MAX_PARAMS",
    "DataParallelScaling",
    "data_parallel_scaling",
    "ModelStateCapacity",
    "model_state_capacity",
]

#: Largest parameter count accepted: 10^15 (a thousand times the largest published dense models).


def _params(value: object) -> float:
    return real("params", value, maximum=float(MAX_PARAMS), unit="parameters")


def _bytes_per(name: str, value: object) -> float:
    return real(name, value, maximum=64.0, unit="bytes")


@dataclass(frozen=True, slots=True)
class DataParallelScaling:
    """One data-parallel step on ``data_parallel`` replicas, against the same step on one GPU."""

    data_parallel: int  #: N, data-parallel replicas (one GPU each)
    gradient_bytes: float  #: G = Ψ × bytes per gradient, all-reduced every step (bytes)
    compute_s: float  #: C/N, compute per replica per step (s)
    serial_s: float  #: S, per-replica time that does not shrink with N (s)
    allreduce_s: float  #: ring all-reduce of G over N ranks (s); 0 for N = 1
    step_s: float  #: T(N) = compute_s + serial_s + allreduce_s (s)
    single_gpu_step_s: float  #: T(1) = C + S (s)
    speedup: float  #: T(1) / T(N)
    efficiency: float  #: speedup / N (1 = perfect scaling)
    doubling_speedup: float  #: T(N) / T(2N): what doubling the GPUs buys (2 = halved runtime)
    communication_share: float  #: allreduce_s / step_s


def _step(n: int, compute: float, serial: float, grad: float, bandwidth: float, startup: float) -> tuple[float, float]:
    comm = ring_allreduce(n, grad, bandwidth, startup).time_s
    return compute / n + serial + comm, comm


def data_parallel_scaling(
    data_parallel: int,
    compute: float,
    params: float,
    bytes_per_gradient: float,
    bandwidth: float,
    startup: float,
    serial: float = 0.0,
) -> DataParallelScaling:
    """``T(N) = C/N + S + 2(N−1)α + 2(N−1)/N · Ψ·b/β`` seconds per step; speed-up ``T(1)/T(N)``.

    ``C``: seconds of compute for the whole global batch on one GPU; ``S``:
    seconds per step that every replica spends regardless of ``N``; ``Ψ``
    parameters with ``b`` bytes per gradient (2 for bf16, 4 for fp32); ``β``
    bytes/s per rank; ``α`` seconds per ring step. No overlap of communication
    with compute (an upper bound on the step time within the model).
    Sources: Amdahl 1967; Patarasuk & Yuan 2009.

    >>> r = data_parallel_scaling(8, compute=8.0, params=2e9, bytes_per_gradient=4,
    ...                           bandwidth=300e9, startup=0.0)
    >>> r.gradient_bytes, round(r.allreduce_s, 6), round(r.step_s, 6)
    (8000000000.0, 0.046667, 1.046667)
    >>> data_parallel_scaling(1, 8.0, 2e9, 4, 300e9, 5e-6).speedup
    1.0
    """
    n = count("data_parallel", data_parallel, maximum=MAX_COUNT // 2)  # the doubled ring must stay within limits
    c = real("compute", compute, maximum=MAX_SECONDS, unit="s", smallest=MIN_SECONDS)
    s = real("serial", serial, maximum=MAX_SECONDS, allow_minimum=True, unit="s")
    # At most 1e15 parameters × 64 bytes = 6.4e16 bytes, inside the ring's payload limit.
    grad = _params(params) * _bytes_per("bytes_per_gradient", bytes_per_gradient)
    # bandwidth and startup are checked by ring_allreduce, with the same names.
    step, comm = _step(n, c, s, grad, bandwidth, startup)
    doubled, _ = _step(2 * n, c, s, grad, bandwidth, startup)
    single = c + s
    speedup = single / step
    return DataParallelScaling(
        data_parallel=n,
        gradient_bytes=grad,
        compute_s=c / n,
        serial_s=s,
        allreduce_s=comm,
        step_s=step,
        single_gpu_step_s=single,
        speedup=speedup,
        efficiency=speedup / n,
        doubling_speedup=step / doubled,
        communication_share=comm / step,
    )


@dataclass(frozen=True, slots=True)
class ModelStateCapacity:
    """Model state (parameters, gradients, optimizer) against device memory."""

    state_bytes: float  #: Ψ × k, the whole model state (bytes)
    device_memory_bytes: float  #: M, one device (bytes)
    data_parallel: int  #: N, data-parallel ranks the state is sharded over evenly (ZeRO-3)
    per_device_bytes: float  #: Ψ × k / N (bytes)
    fits: bool  #: per_device_bytes <= M
    min_data_parallel: int  #: ceil(Ψ × k / M), the fewest ranks that can hold the state
    state_to_memory: float  #: Ψ × k / M: how many devices' worth of memory the state is


def model_state_capacity(
    params: float, bytes_per_param: float, device_memory: float, data_parallel: int = 1
) -> ModelStateCapacity:
    """``Ψ·k`` bytes of state; ``Ψ·k/N`` per device when partitioned; ``ceil(Ψ·k/M)`` devices at least.

    ``k`` bytes per parameter of state: 16 for mixed-precision Adam (2 fp16/bf16
    weights + 2 gradients + 12 fp32 master weights, momentum and variance), 2 for
    bf16 weights alone. Activations, communication buffers and fragmentation are
    not counted: this is a lower bound. Source: Rajbhandari et al. 2020, §3.1, §5.

    >>> c = model_state_capacity(7.5e9, 16, 80e9)
    >>> c.state_bytes, c.fits, c.min_data_parallel
    (120000000000.0, False, 2)
    >>> model_state_capacity(7.5e9, 16, 80e9, data_parallel=64).per_device_bytes
    1875000000.0
    """
    psi = _params(params)
    k = _bytes_per("bytes_per_param", bytes_per_param)
    m = real("device_memory", device_memory, maximum=MAX_BYTES, unit="bytes", smallest=MIN_BYTES)
    n = count("data_parallel", data_parallel)
    state = psi * k  # at most 6.4e16 bytes: the limits on Ψ and k keep it finite and in range
    per_device = state / n
    return ModelStateCapacity(
        state_bytes=state,
        device_memory_bytes=m,
        data_parallel=n,
        per_device_bytes=per_device,
        fits=per_device <= m,
        # The tolerance keeps 35.000000000000004 (a rounding error) from becoming 36.
        min_data_parallel=max(1, math.ceil(state / m * (1 - 1e-12))),
        state_to_memory=state / m,
    )
