"""The statistics behind every comparison: `compare` (paired bootstrap) in each degenerate case, `stats.verdict`, and
what `bootstrap_interval`, `compare` and `evaluate` refuse (lists of another length, a missing cell, another type)."""

import math
import random
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest
from support import evaluation, tiny_translator, tiny_vocabs

from seq2seq_attention.core.errors import InputError
from seq2seq_attention.stats import ALPHA, seed_interval, t_975, verdict
from seq2seq_attention.translation.evaluate import (
    BOOTSTRAP_SAMPLES,
    bootstrap_interval,
    compare,
    evaluate,
    resampled_bleu,
)

WORDS = ["i", "am", "he", "is", "tall", "here", "tired", "."]
SENTENCE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
SMALLEST_P = 1 / (BOOTSTRAP_SAMPLES + 1)


# compare: the degenerate cases -------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(hypotheses=st.lists(SENTENCE, min_size=1, max_size=8), references=st.lists(SENTENCE, min_size=1, max_size=8))
def test_identical_systems_are_a_tie_with_p_1(hypotheses, references):
    n = min(len(hypotheses), len(references))
    same = evaluation(hypotheses[:n], references[:n])
    result = compare(same, same)
    assert (result.difference, result.p_value, result.significant) == (0, 1.0, False)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 25), words=st.integers(4, 7))  # BLEU needs 4-grams
def test_right_everywhere_against_wrong_everywhere_is_the_strongest_evidence(n, words):
    """Distinct sentences, one system perfect and the other wrong on each: every resample gives 100 against 0."""
    references = [" ".join(f"w{i}x{j}" for j in range(words)) for i in range(n)]
    wrong = [" ".join(f"z{i}y{j}" for j in range(words)) for i in range(n)]
    better = compare(evaluation(wrong, references), evaluation(references, references))
    worse = compare(evaluation(references, references), evaluation(wrong, references))
    assert better.difference == pytest.approx(100) and worse.difference == pytest.approx(-100)
    for result in (better, worse):
        assert result.p_value == SMALLEST_P and result.significant


@settings(max_examples=30, deadline=None)
@given(first=SENTENCE, second=SENTENCE, reference=SENTENCE, n=st.integers(2, 12))
def test_a_constant_non_zero_difference_is_significant(first, second, reference, n):
    """n copies of one sentence: no resample moves the difference; non-zero, it is p = 1/(N+1), else a tie."""
    result = compare(evaluation([first] * n, [reference] * n), evaluation([second] * n, [reference] * n))
    if result.difference == 0:
        assert (result.p_value, result.significant) == (1.0, False)
    else:
        assert (result.p_value, result.significant) == (SMALLEST_P, True)


@settings(max_examples=30, deadline=None)
@given(first=SENTENCE, second=SENTENCE, reference=SENTENCE)
def test_one_sentence_is_a_tie_whatever_the_difference(first, second, reference):
    result = compare(evaluation([first], [reference]), evaluation([second], [reference]))
    assert (result.p_value, result.significant) == (1.0, False)


@settings(max_examples=20, deadline=None)
@given(references=st.lists(SENTENCE, min_size=1, max_size=10), other=st.lists(SENTENCE, min_size=10, max_size=10))
def test_all_empty_hypotheses(references, other):
    """Two all-empty outputs tie (BLEU 0 and 0); all-empty against real output is an ordinary comparison."""
    n = len(references)
    empty = evaluation([""] * n, references)
    both = compare(empty, evaluation([""] * n, references))
    assert (both.baseline, both.system, both.p_value, both.significant) == (0, 0, 1.0, False)
    result = compare(empty, evaluation(other[:n], references))
    assert result.baseline == 0 and result.difference == result.system >= 0
    assert 0 < result.p_value <= 1 and result.significant == (result.p_value < ALPHA)
    if result.difference == 0 or n == 1:
        assert result.p_value == 1.0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_elsewhere_the_p_value_is_sacrebleus(seed):
    """Where a difference exists and there are several sentences, p is sacrebleu's PairedTest p."""
    rng = random.Random(seed)
    references = [" ".join(rng.choices(WORDS, k=rng.randint(2, 6))) for _ in range(rng.randint(2, 30))]
    systems = [[r if rng.random() < 0.5 else " ".join(rng.choices(WORDS, k=4)) for r in references] for _ in "ab"]
    mine = compare(evaluation(systems[0], references), evaluation(systems[1], references))
    test = PairedTest([("a", systems[0]), ("b", systems[1])], {"BLEU": BLEU(force=True)}, [references], "bs", 1000)
    baseline, system = test()[1]["BLEU"]
    assert mine.difference == pytest.approx(system.score - baseline.score)
    if mine.difference != 0:  # a constant non-zero difference included: sacrebleu's p
        assert mine.p_value == system.p_value
    else:  # no difference: a tie (sacrebleu's 1/(N+1) for two equal systems is the bug)
        assert mine.p_value == 1.0
    differences = resampled_bleu(systems[1], references) - resampled_bleu(systems[0], references)
    if np.ptp(np.abs(differences)) == 0 and mine.difference != 0:  # the constant case: sacrebleu agrees here
        assert mine.p_value == SMALLEST_P
    assert np.ptp(np.abs(differences)) > 0 or mine.p_value in (1.0, SMALLEST_P)


# verdict: the one rule -----------------------------------------------------------------------------

DIFFERENCE = st.floats(-50, 50, allow_nan=False)


@given(st.lists(st.floats(0, 100), min_size=2, max_size=40))
def test_seed_interval_is_the_t_interval_of_the_mean(values):
    mean, low, high = seed_interval(values)
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert mean == pytest.approx(statistics.fmean(values))
    assert low == pytest.approx(mean - half, abs=1e-9) and high == pytest.approx(mean + half, abs=1e-9)


def test_t_quantiles_beyond_the_table_continue_it():
    assert t_975(1) == 12.706 and t_975(30) == 2.042
    assert 2.0 < t_975(40) < 2.042 and t_975(10**6) == pytest.approx(1.96, abs=1e-3)
    assert t_975(60) == pytest.approx(2.000, abs=1e-3) and t_975(120) == pytest.approx(1.980, abs=1e-3)


@given(st.lists(DIFFERENCE, min_size=2, max_size=10))
def test_over_seeds_the_interval_decides(differences):
    decided = verdict(differences)
    _, low, high = seed_interval(differences)
    expected = "better" if low > 0 else "worse" if high < 0 else "tie"
    assert decided.outcome == expected and (decided.low, decided.high) == (low, high)


@given(st.lists(st.tuples(DIFFERENCE, st.floats(0, 1)), min_size=1, max_size=10))
def test_with_p_values_both_kinds_of_evidence_must_agree(rows):
    differences, p_values = [d for d, _ in rows], [p for _, p in rows]
    decided = verdict(differences, p_values)
    mean, low, high = seed_interval(differences)
    sign = (mean > 0) - (mean < 0)
    agreeing = sum(p < ALPHA and d * sign > 0 for d, p in rows)
    evidence = [2 * agreeing > len(rows)] + ([low > 0 if sign > 0 else high < 0] if len(rows) > 1 else [])
    expected = "tie" if sign == 0 or not all(evidence) else ("better" if sign > 0 else "worse")
    assert decided.outcome == expected and decided.agreeing_seeds == agreeing
    assert decided.korean == {"better": "나아짐", "worse": "나빠짐", "tie": "동률"}[expected]


@given(DIFFERENCE)
def test_one_seed_without_a_test_is_a_tie(difference):
    decided = verdict([difference])
    assert decided.outcome == "tie" and decided.low is None and "nothing measures the noise" in decided.reason


@given(DIFFERENCE, st.floats(0, 1))
def test_one_seed_with_a_paired_test_decides_by_its_p(difference, p_value):
    decided = verdict([difference], [p_value])
    if difference != 0 and p_value < ALPHA:
        assert decided.outcome == ("better" if difference > 0 else "worse")
    else:
        assert decided.outcome == "tie"


def test_the_committed_comparisons_keep_their_verdicts():
    """The attention page's three seeds (results/attention/results.json) and two borderline cases."""
    assert verdict([3.02, 4.86, 2.43], [0.026, 0.001, 0.048]).outcome == "better"
    assert verdict([1.44, 4.45, 3.54], [0.1239, 0.003, 0.005]).outcome == "tie"  # 2 of 3, interval holds 0
    assert verdict([7.20, 9.19, 1.12, 6.84, 7.17], [0.001, 0.001, 0.147, 0.001, 0.001]).outcome == "better"
    assert verdict([2.0, 2.0, 2.0], [0.2, 0.3, 0.01]).outcome == "tie"  # the seeds agree, the sentences do not


@pytest.mark.parametrize(
    ("differences", "p_values", "message"),
    [
        ([], None, "differences must be a non-empty list"),
        ("1.0", None, "differences must be a non-empty list"),
        ([1.0, math.nan], None, r"differences\[1\] must be a finite number"),
        ([1.0, math.inf], None, r"differences\[1\] must be a finite number"),
        ([True, 1.0], None, r"differences\[0\] must be a finite number"),
        ([1.0, None], None, r"differences\[1\] must be a finite number"),
        ([1.0, 2.0], [0.01], "p_values must be 2 numbers in"),
        ([1.0, 2.0], [0.01, 1.5], "p_values must be 2 numbers in"),
        ([1.0], [math.nan], r"p_values\[0\] must be a finite number"),
        ([10**400, 1], None, r"differences\[0\] must be a finite number, got one beyond the largest float"),
        ([1.0, -(10**5000)], None, r"differences\[1\] must be a finite number, got one beyond the largest float"),
        ([1.0, 2.0], [0.01, 10**400], r"p_values\[1\] must be a finite number"),
    ],
)
def test_verdict_refuses_what_is_not_a_comparison(differences, p_values, message):
    with pytest.raises(InputError, match=message):
        verdict(differences, p_values)


# any finite input gets an answer or a clear refusal, never an arithmetic error ---------------------

FINITE = st.floats(allow_nan=False, allow_infinity=False)
MAGNITUDE = st.sampled_from([1e-320, 1e-300, 1e-10, 1.0, 1e10, 1e300, 1e307, 1.7e308])


@given(st.lists(st.one_of(FINITE, MAGNITUDE, MAGNITUDE.map(lambda v: -v)), min_size=1, max_size=12))
@example([6.814172424030507e16] * 3)  # 3 x that value is not a float: the mean rounds past it, as fmean's does
def test_seed_interval_answers_every_finite_input(values):
    mean, low, high = seed_interval(values)
    rounding = len(values) * math.ulp(max(abs(v) for v in values))  # the mean's own rounding, as fmean's
    assert math.isfinite(mean) and min(values) - rounding <= mean <= max(values) + rounding
    if len(values) > 1:
        assert low <= mean <= high and not math.isnan(low) and not math.isnan(high)
    scale = max(abs(v) for v in values)
    if 0 < scale < 1e150 and scale > 1e-150:  # within the range where the plain formula cannot overflow
        assert mean == pytest.approx(statistics.fmean(values), rel=1e-9, abs=scale * 1e-12)


@given(
    st.lists(st.one_of(FINITE, MAGNITUDE, MAGNITUDE.map(lambda v: -v)), min_size=1, max_size=12),
    st.booleans(),
)
def test_verdict_answers_every_finite_input(differences, with_p_values):
    decided = verdict(differences, [0.01] * len(differences) if with_p_values else None)
    assert decided.outcome in ("better", "worse", "tie") and math.isfinite(decided.mean)
    assert len(decided.reason) < 200


@pytest.mark.parametrize("values", [[10**400, 2], [2, -(10**5000)], [Fraction(10**400, 3), 1]])
def test_seed_interval_refuses_a_number_beyond_the_largest_float(values):
    with pytest.raises(InputError, match=r"values\[\d\] must be a finite number, got one beyond the largest float"):
        seed_interval(values)


def test_verdict_of_two_largest_floats_is_better_not_an_overflow():
    decided = verdict([1e308, 1e308])
    assert decided.outcome == "better" and decided.mean == 1e308 and decided.low == decided.high == 1e308
    assert seed_interval([1.7e308, -1.7e308]) == (0.0, -math.inf, math.inf)


# What the statistics refuse, and their degenerate cases over lists of any length ---------------------------


@settings(max_examples=60, deadline=None)
@given(hypotheses=st.lists(SENTENCE, max_size=6), references=st.lists(SENTENCE, max_size=6))
def test_the_bootstrap_interval_pairs_lists_of_one_length_or_refuses(hypotheses, references):
    if not hypotheses or not references or len(hypotheses) != len(references):
        with pytest.raises(InputError, match="hypotheses|references"):
            bootstrap_interval(hypotheses, references)
        return
    low, high = bootstrap_interval(hypotheses, references)
    assert 0 <= low <= high <= 100


@settings(max_examples=40, deadline=None)
@given(
    sentences=st.lists(SENTENCE, min_size=1, max_size=5),
    index=st.integers(0, 4),
    bad=st.sampled_from([math.nan, None, 3, b"i am", ["i", "am"]]),
    side=st.sampled_from(["hypotheses", "references"]),
)
def test_a_missing_cell_among_the_sentences_is_named(sentences, index, bad, side):
    broken = list(sentences)
    broken[index % len(broken)] = bad
    lists = {"hypotheses": list(sentences), "references": list(sentences), side: broken}
    with pytest.raises(InputError, match=rf"{side}\[{index % len(broken)}\] must be a string"):
        bootstrap_interval(lists["hypotheses"], lists["references"])
    with pytest.raises(InputError, match=rf"{side}\[{index % len(broken)}\] must be a string"):
        compare(evaluation(lists["hypotheses"], lists["references"]), evaluation(sentences, lists["references"]))


@settings(max_examples=30, deadline=None)
@given(first=SENTENCE, second=SENTENCE, reference=SENTENCE, n=st.integers(1, 12))
def test_one_sentence_is_a_tie_and_a_constant_difference_is_significant(first, second, reference, n):
    """One sentence: p = 1, a tie. n >= 2 copies: no resample moves the difference; non-zero, it is the
    strongest evidence, p = 1/(N+1) (issue 32: the old "a tie" read a constant difference as none)."""
    result = compare(evaluation([first] * n, [reference] * n), evaluation([second] * n, [reference] * n))
    if n == 1 or result.difference == 0:
        assert result.p_value == 1.0 and not result.significant
    else:
        assert result.p_value == 1 / 1001 and result.significant


def test_compare_and_evaluate_refuse_what_is_not_theirs():
    good = evaluation(["i am here ."], ["i am here ."])
    for bad in (None, "i am here .", {"hypotheses": []}, [good]):
        with pytest.raises(InputError, match="must be an Evaluation"):
            compare(bad, good)
    for pairs in (None, "je suis la .", [("je suis la .", math.nan)], [None], b"x", 3):
        with pytest.raises(InputError, match="pair"):
            evaluate(tiny_translator(), tiny_vocabs(), pairs)
    with pytest.raises(InputError, match="must pair up one to one, got 3 hypotheses and 5 references"):
        bootstrap_interval(["i am ."] * 3, ["i am ."] * 5)
