"""Parallelism Atlas calculations: standard library only, the same code at build time and in the page.

Modules: :mod:`~calc.units` (parse and format sizes, bandwidths, times),
:mod:`~calc.batch` (global batch accounting), :mod:`~calc.collectives`
(alpha-beta collective costs), :mod:`~calc.api` (the command registry shared by
the CLI, the hooks and the page). Every error is a :class:`CalcError`.
"""

from .errors import CalcError

__all__ = ["CalcError"]
__version__ = "0.1.0"
