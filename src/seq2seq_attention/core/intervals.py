"""The 95% interval of a mean over seeds, in the standard library only: the site build (hooks/course_values.py,
which runs without torch) and `translation.evaluate` use this one implementation."""

import math
import numbers
import statistics
from collections.abc import Sequence

from .errors import InputError, echo

T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
"""Student's t quantile 0.975 for 1, 2, ... 30 degrees of freedom (the 95% interval of a mean of 2 to 31 values)."""


def t_975(degrees: int) -> float:
    """Student's t quantile 0.975 (`T_975`; past 30 degrees, the Cornish-Fisher expansion, within 1e-3)."""
    if degrees <= len(T_975):
        return T_975[degrees - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * degrees) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * degrees**2)


def seed_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high): the mean of `values` (one per seed) and its 95% Student-t interval (nan bounds for one).

    Any finite values get an answer: they are scaled by a power of two (exact) so that the largest
    magnitude is below 1 before they are summed, and scaled back after. The mean is then always
    finite; a bound is infinite only where the interval itself reaches past the largest float.
    """
    values = _check_numbers("values", values)
    exponent = math.frexp(max(abs(v) for v in values))[1]  # every |v| < 2 ** exponent
    scaled = [math.ldexp(v, -exponent) for v in values]
    mean = math.ldexp(statistics.fmean(scaled), exponent)
    if len(values) < 2:
        return mean, math.nan, math.nan
    half_scaled = t_975(len(values) - 1) * statistics.stdev(scaled) / math.sqrt(len(values))
    try:
        half = math.ldexp(half_scaled, exponent)
    except OverflowError:  # the interval is wider than the largest float
        half = math.inf
    return mean, mean - half, mean + half


def _check_numbers(name: str, values: object) -> list[float]:
    """A non-empty list of finite real numbers, as floats (bool is not a number here; nor is an int past the
    largest float)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or len(values) == 0:
        raise InputError(f"{name} must be a non-empty list of numbers, one per seed, got {echo(values, 80)}")
    checked = []
    for index, value in enumerate(values):
        try:
            number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        except OverflowError:  # an int (or Fraction) past the largest float is as unusable as infinity
            raise InputError(f"{name}[{index}] must be a finite number, got one beyond the largest float") from None
        if not math.isfinite(number):
            raise InputError(f"{name}[{index}] must be a finite number, got {echo(value, 60)}")
        checked.append(number)
    return checked
