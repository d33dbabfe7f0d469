"""Parallelism Atlas calculations: standard library only, the same code at build time and in the page.

Calculations, one concept per module, each function with its formula, units and source:

- :mod:`~calc.units` parse and format sizes, bandwidths, times, FLOP rates (GB vs GiB);
- :mod:`~calc.batch` global batch accounting, its inverse, uneven and packed batches;
- :mod:`~calc.collectives` collectives in the alpha-beta model (ring all-reduce and its schedule,
  all-gather, reduce-scatter, all-to-all, broadcast, Rabenseifner, recursive doubling, two-level);
- :mod:`~calc.traffic` Megatron's per-layer tensor- and pipeline-parallel volumes;
- :mod:`~calc.model` architectures, parameter counts, precision recipes;
- :mod:`~calc.memory` model states under ZeRO and activation memory (Korthikanti et al. 2022);
- :mod:`~calc.compute` FLOPs per iteration, training time, MFU and HFU;
- :mod:`~calc.pipeline` bubbles and GPipe / 1F1B / interleaved schedules;
- :mod:`~calc.scaling` data-parallel strong scaling and model-state capacity;
- :mod:`~calc.plan`, :mod:`~calc.search`, :mod:`~calc.spec`, :mod:`~calc.presets` the execution
  plan (model, batch and hardware in; partitions and communication out) and its search.

Interfaces: :mod:`~calc.command` and :mod:`~calc.commands` describe every command,
:mod:`~calc.api` evaluates them (the one path for the CLI, the build hooks and the page),
:mod:`~calc.cli` is ``python -m calc``; :mod:`~calc.series`, :mod:`~calc.views` and
:mod:`~calc.diagram` turn results into what the page draws. Every error is a :class:`CalcError`.
"""

from .errors import CalcError

__all__ = ["CalcError"]
__version__ = "0.1.0"
