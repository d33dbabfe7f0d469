"""The one error type of ``calc``.

Every rule a parameter can break is reported as a :class:`CalcError` that names
the parameter, the rule and the offending value, in the style of attrs'
validators::

    micro_batch must be a whole number >= 1, got 0
"""

from __future__ import annotations

import math

__all__ = ["CalcError", "show_value", "show_name"]


def show_value(value: object) -> str:
    """How a rejected value is printed in a message: short, one line, control characters escaped.

    Never raises, whatever the value: an integer too long to print in decimal (Python's
    4,300-digit limit) or a structure nested too deep to ``repr`` is described instead.

    >>> show_value(0), show_value("abc"), show_value(float("nan")), show_value(True)
    ('0', "'abc'", 'nan', 'True')
    >>> show_value("a\\nb"), show_value(10**5000)
    ("'a\\\\nb'", 'an integer of about 5001 digits')
    """
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return repr(value)
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a huge integer inside, or nesting too deep to print
        return f"a {type(value).__name__} too large to print"
    return text if len(text) <= 60 else text[:57] + "..."


def show_name(name: object) -> str:
    """A parameter name as printed in a message: as is when short and printable, else escaped.

    Names usually come from ``calc`` itself, but an unknown key of a SPEC or of the page's
    inputs is the reader's text, which may hold a newline or a terminal escape code.

    >>> show_name("model.kv_heads"), show_name("a\\x1b[31m"), show_name("x" * 70)[-5:]
    ('model.kv_heads', "'a\\\\x1b[31m'", "x...'")
    """
    text = str(name)
    if text.isprintable() and 0 < len(text) <= 60:
        return text
    return repr(text if len(text) <= 40 else text[:37] + "...")


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

    @property
    def requirement(self) -> str:
        """The message without the value: what a refusal summary groups by.

        >>> CalcError("micro_batch", "a whole number >= 1", 0).requirement
        'micro_batch must be a whole number >= 1'
        """
        return f"{show_name(self.param)} must be {self.rule}"

    def __str__(self) -> str:
        return f"{self.requirement}, got {show_value(self.value)}"
