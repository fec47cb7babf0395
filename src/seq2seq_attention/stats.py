"""The statistics every comparison of this project uses, once: the 95% Student-t interval of a mean over seeds
(`seed_interval`) and the one better / worse / tie rule (`verdict`).

Torch-free and numpy-free, so that the site build (hooks/course_values.py) reads the same functions as the
package (`translation.evaluate`) and the scripts.
"""

import math
import numbers
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .model.rules import InputError, echo

ALPHA = 0.05
"""The significance level of every test here: the paired bootstrap and the 95% intervals over seeds."""


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


OUTCOMES_KO = {"better": "나아짐", "worse": "나빠짐", "tie": "동률"}
"""The three outcomes of `verdict`, in the pages' Korean."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of `verdict`: "better", "worse" or "tie", and the evidence it rests on.

    Attributes:
        outcome: "better" / "worse" / "tie" (the system against the baseline).
        seeds: how many seed-paired differences were given.
        mean, low, high: their mean and 95% interval over seeds (low and high None for one seed).
        agreeing_seeds: the seeds whose paired bootstrap p < `ALPHA` in the direction of the mean
            (None when no p-values were given).
        reason: the rule's reason, in a few English words.
    """

    outcome: str
    seeds: int
    mean: float
    low: float | None
    high: float | None
    agreeing_seeds: int | None
    reason: str

    @property
    def korean(self) -> str:
        """The outcome in the pages' Korean (`OUTCOMES_KO`)."""
        return OUTCOMES_KO[self.outcome]

    def __str__(self) -> str:
        return self.outcome


def verdict(differences: Sequence[float], p_values: Sequence[float] | None = None) -> Verdict:
    """Better, worse or a tie: the one rule for every comparison the scripts and pages state.

    `differences` holds system minus baseline, one per random seed, each pair trained with the
    same seed and scored on the same sentences; `p_values`, when the translations were kept,
    holds `compare`'s paired bootstrap p of each seed, in the same order. The rule:

    1. Over seeds (two or more): the 95% Student-t interval of the mean difference must lie
       entirely on one side of zero; an interval that holds zero is a tie.
    2. Over sentences (when `p_values` are given): more than half of the seeds must have
       p < `ALPHA` (0.05) with a difference of the same sign as the mean.
    3. Every piece of evidence that exists must agree; one seed without a p-value has none
       (nothing measures the noise): a tie. A mean of exactly zero is a tie.

    So one seed with a paired bootstrap p decides by that p alone (rule 2), several seeds
    without translations by the interval alone (rule 1), several seeds with translations by both.

    Raises:
        InputError: no differences, something not a finite number, a p outside [0, 1], or
            p-values that do not pair up one to one with the differences.
    """
    differences = _check_numbers("differences", differences)
    if p_values is not None:
        p_values = _check_numbers("p_values", p_values)
        if len(p_values) != len(differences) or not all(0 <= p <= 1 for p in p_values):
            raise InputError(
                f"p_values must be {len(differences)} numbers in [0, 1], one per difference, got {echo(p_values, 80)}"
            )
    mean, low, high = seed_interval(differences)
    sign = (mean > 0) - (mean < 0)
    direction = "better" if sign > 0 else "worse"
    evidence: list[bool] = []
    reasons: list[str] = []
    bounds = (None, None) if len(differences) < 2 else (low, high)
    if len(differences) >= 2:
        apart = low > 0 if sign > 0 else high < 0
        evidence.append(sign != 0 and apart)
        reasons.append(f"95% interval over seeds {_signed(low)} to {_signed(high)}")
    agreeing = None
    if p_values is not None:
        agreeing = sum(p < ALPHA and d * sign > 0 for d, p in zip(differences, p_values, strict=True))
        evidence.append(sign != 0 and 2 * agreeing > len(differences))
        reasons.append(f"p < {ALPHA} in the same direction on {agreeing} of {len(differences)} seeds")
    if not evidence:
        return Verdict("tie", 1, mean, None, None, None, "one seed without a paired test: nothing measures the noise")
    outcome = direction if all(evidence) else "tie"
    return Verdict(outcome, len(differences), mean, *bounds, agreeing, "; ".join(reasons))


def _signed(value: float) -> str:
    """A bound for `Verdict.reason`: two decimals, or three significant digits past a million."""
    return f"{value:+.2f}" if abs(value) < 1e6 else f"{value:+.3g}"


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
