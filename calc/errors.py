"""The one error type of ``calc``.

Every rule a parameter can break is reported as a :class:`CalcError` that names
the parameter, the rule and the offending value, in the style of attrs'
validators::

    micro_batch must be a whole number >= 1, got 0
"""

from __future__ import annotations

import math

__all__ = ["CalcError", "show_value"]


def show_value(value: object) -> str:
    """How a rejected value is printed in a message (short, never multi-line).

    >>> show_value(0), show_value("abc"), show_value(float("nan")), show_value(True)
    ('0', "'abc'", 'nan', 'True')
    """
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return repr(value)
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class CalcError(ValueError):
    """A parameter broke a documented rule.

    Structured like pint's errors: the fields are kept and the text is built
    in ``__str__``, so the CLI and the page can point at ``param``.

    >>> str(CalcError("micro_batch", "a whole number >= 1", 0))
    'micro_batch must be a whole number >= 1, got 0'
    """

    def __init__(self, param: str, rule: str, value: object) -> None:
        super().__init__(param, rule, value)
        self.param = param
        self.rule = rule
        self.value = value

    def __str__(self) -> str:
        return f"{self.param} must be {self.rule}, got {show_value(self.value)}"
