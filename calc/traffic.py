"""Closed-form traffic of tensor and pipeline parallelism, per layer and per microbatch.

Megatron-LM's tensor parallelism runs two all-reduces of the layer's activations
(``b·s·h`` elements) in the forward pass and two in the backward pass of every
transformer layer; in a ring each moves ``2(t−1)/t`` of its payload per device, so

    TP elements sent per device, per layer, per microbatch = 8·b·s·h·(t−1)/t

Pipeline parallelism sends the ``b·s·h`` activations forward across each stage
boundary, and their gradients back, once per microbatch.

Source: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
GPU Clusters Using Megatron-LM", §3.2 (published case M7). :mod:`calc.plan` lists
the same volumes per step; its tests check the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .check import count
from .split import check_split

__all__ = ["LayerTraffic", "layer_traffic"]


@dataclass(frozen=True, slots=True)
class LayerTraffic:
    """Elements and bytes moved per device for one layer (TP) or one boundary (PP), one microbatch."""

    activation_elements: int  #: b·s·h, the payload of each TP all-reduce and each PP transfer
    tp_elements_per_layer: float  #: 8·b·s·h·(t−1)/t, sent per device (2 all-reduces forward, 2 backward)
    tp_bytes_per_layer: float  #: the same, in bytes
    pp_elements_per_boundary: int  #: b·s·h, each direction (activations forward, gradients back)
    pp_bytes_per_boundary: float  #: the same, in bytes


def layer_traffic(
    micro_batch: int, seq_len: int, hidden: int, tensor_parallel: int, bytes_per_element: int = 2
) -> LayerTraffic:
    """``8·b·s·h·(t−1)/t`` TP elements per layer per microbatch; ``b·s·h`` PP elements per boundary.

    Units: elements; bytes = elements × ``bytes_per_element`` (2 for bf16/fp16). ``t`` must divide
    ``h`` (:func:`calc.split.check_split`), so every count is whole.
    Source: Narayanan et al. 2021 §3.2.

    >>> t = layer_traffic(1, 2048, 12288, 8)
    >>> t.tp_elements_per_layer, t.tp_bytes_per_layer / 2**20, t.pp_bytes_per_boundary / 2**20
    (176160768.0, 336.0, 48.0)
    """
    b = count("micro_batch", micro_batch)
    s = count("seq_len", seq_len)
    h = count("hidden", hidden)
    t = count("tensor_parallel", tensor_parallel)
    e = count("bytes_per_element", bytes_per_element, maximum=8)
    check_split(tensor=t, hidden=h)  # each of the t ranks holds whole columns
    bsh = b * s * h
    tp = 8 * bsh * (t - 1) / t
    return LayerTraffic(bsh, tp, tp * e, bsh, float(bsh * e))
