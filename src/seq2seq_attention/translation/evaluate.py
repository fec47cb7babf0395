"""The one module for held-out scores: corpus BLEU (sacrebleu) with a bootstrap interval, exact match and paired
comparisons (`compare`); the one better / worse / tie rule every script and page uses is `stats.verdict`."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu
from sacrebleu.significance import _bootstrap_resample, _compute_p_value  # sacrebleu 2.x (pinned below 3)

from ..core.batching import DECODE_BATCH_SIZE
from ..core.checks import Call, checked, checks_of
from ..core.errors import InputError, echo
from ..core.vocabulary import Vocabularies
from ..model.search import MAX_LENGTH
from ..model.seq2seq import Seq2Seq
from ..stats import ALPHA
from .corpus import Pair
from .translator import translate

BOOTSTRAP_SAMPLES = 1000
"""Resamples of the held-out sentences for the 95% intervals and the paired test (sacrebleu's,
seeded with its fixed default seed, so every number is reproducible)."""


@dataclass
class Evaluation:
    """Scores of one model on a list of pairs.

    Attributes:
        bleu: corpus BLEU in [0, 100], one reference per pair (sacrebleu defaults).
        bleu_low, bleu_high: the 95% bootstrap interval of the BLEU (`bootstrap_interval`).
        exact_match: the fraction of pairs whose translation equals the reference.
        signature: sacrebleu's signature of the BLEU settings.
        split: the name of the held-out split the pairs come from (None when not given).
        sources, references, hypotheses: the sentences behind the numbers, in order.
    """

    bleu: float
    bleu_low: float
    bleu_high: float
    exact_match: float
    signature: str
    split: str | None
    sources: list[str]
    references: list[str]
    hypotheses: list[str]

    def __len__(self) -> int:
        return len(self.sources)


def _bleu() -> sacrebleu.metrics.BLEU:
    return sacrebleu.metrics.BLEU(force=True)  # the sentences are tokenised on purpose: no warning


def _check_evaluate(call: Call) -> None:
    """The pairs, and what `evaluate` hands on to `translate` (the search's numbers unchanged), whose check does not
    run there."""
    _check_pairs(call.pairs)
    sources = [p.source for p in call.pairs]
    longest = max(len(s.split()) for s in sources)
    search = {name: call[name] for name in ("max_length", "batch_size", "beam_size", "length_penalty")}
    checks_of(translate, call.model, call.vocabs, sources, max_words=longest, unknown="unk", **search)


@checked(_check_evaluate)
# --8<-- [start:evaluate]
def evaluate(
    model: Seq2Seq,
    vocabs: Vocabularies,
    pairs: Sequence[Pair],
    *,
    split: str | None = None,
    max_length: int = MAX_LENGTH,
    batch_size: int = DECODE_BATCH_SIZE,
    beam_size: int = 1,
    length_penalty: float = 1.0,
) -> Evaluation:
    """Translate every pair's French side (greedily, or by beam search) and score it against its English side.

    Words missing from the training vocabulary read as `<unk>` (the held-out split has some);
    no sentence is dropped. `split` names the split the pairs come from, for the record.
    """
    sources = [p.source for p in pairs]
    references = [" ".join(p.target.split()) for p in pairs]  # single spaces, as translations have
    longest = max(len(s.split()) for s in sources)
    hypotheses = translate(
        model,
        vocabs,
        sources,
        max_words=longest,
        max_length=max_length,
        unknown="unk",
        batch_size=batch_size,
        beam_size=beam_size,
        length_penalty=length_penalty,
    )
    bleu = _bleu()
    score = bleu.corpus_score(hypotheses, [references])
    low, high = bootstrap_interval(hypotheses, references)
    exact = sum(h == r for h, r in zip(hypotheses, references, strict=True)) / len(pairs)
    signature = str(bleu.get_signature())
    return Evaluation(score.score, low, high, exact, signature, split, sources, references, hypotheses)


# --8<-- [end:evaluate]


@checked(lambda call: _check_sentences(call.hypotheses, call.references))
# --8<-- [start:bootstrap]
def bootstrap_interval(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, float]:
    """The 95% interval of corpus BLEU under resampling of the sentences (2.5th and 97.5th percentile).

    The test set is one sample of sentences; resampling it with replacement `BOOTSTRAP_SAMPLES`
    times and recomputing BLEU shows how much the score would move on another sample of the same
    size. sacrebleu draws the resamples (its fixed seed); the percentiles are taken here, so the
    interval stays inside [0, 100] (sacrebleu reports the mean plus or minus a half-width).

    Raises:
        InputError: the lists are empty, of different lengths, or hold something else than strings.
    """
    low, high = np.percentile(resampled_bleu(hypotheses, references), [2.5, 97.5])
    return float(np.clip(low, 0, 100)), float(np.clip(high, 0, 100))  # float32 sums can pass 100 by 1e-14


def resampled_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Corpus BLEU of each of the `BOOTSTRAP_SAMPLES` resamples of the sentences, shape (N,).

    sacrebleu draws the resamples with its fixed seed, so two systems scored on the same
    sentences get the same resamples: their differences are paired.
    """
    bleu = _bleu()
    stats = bleu._extract_corpus_statistics(list(hypotheses), [list(references)])  # one row of counts per sentence
    _, scores = _bootstrap_resample(stats, bleu, BOOTSTRAP_SAMPLES)  # BLEU of each resample
    return np.array([s.score for s in scores])  # (N,)


# --8<-- [end:bootstrap]


@dataclass
class Comparison:
    """A paired bootstrap comparison of two systems on the same sentences.

    Attributes:
        baseline, system: the BLEU of each.
        difference: ``system - baseline``.
        p_value: the chance of a difference at least this large if the two were equally good
            (sacrebleu's paired bootstrap resampling, `BOOTSTRAP_SAMPLES` resamples); the degenerate
            cases are listed in `compare`.
        significant: ``p_value < ALPHA``; otherwise the two are called a tie.
    """

    baseline: float
    system: float
    difference: float
    p_value: float
    significant: bool


@checked(lambda call: _check_comparable(call.baseline, call.system))
# --8<-- [start:compare]
def compare(baseline: Evaluation, system: Evaluation) -> Comparison:
    """Paired bootstrap resampling (Koehn 2004, as sacrebleu's `PairedTest` computes it) of two evaluations.

    Both systems are scored on the same resamples of the sentences; p is the share of resamples
    whose absolute difference, centred on its mean, exceeds the observed difference (with sacrebleu's
    +1 in numerator and denominator, so the smallest p is 1 / (`BOOTSTRAP_SAMPLES` + 1)).

    The degenerate cases, the rule:

    - no difference (the same translations, two all-empty outputs, any two outputs of equal BLEU):
      p = 1, a tie;
    - one sentence: every resample is that sentence, so nothing measures how the difference would
      move on other sentences: p = 1, a tie, whatever the difference;
    - two or more sentences and a difference that no resample changes (one system right and the
      other wrong on every sentence): no resample comes near zero, the strongest evidence the test
      can give: p = 1 / (`BOOTSTRAP_SAMPLES` + 1), significant.

    Raises:
        InputError: the two were not made on the same references in the same order, or either
            holds lists that are empty, of different lengths or not strings.
    """
    references = baseline.references  # the same as the system's (checked)
    bleu = _bleu()
    first = bleu.corpus_score(baseline.hypotheses, [references]).score
    second = bleu.corpus_score(system.hypotheses, [references]).score
    if second == first or len(references) == 1:  # nothing to test: a tie
        return Comparison(first, second, second - first, 1.0, False)
    resampled = resampled_bleu(system.hypotheses, references) - resampled_bleu(baseline.hypotheses, references)
    differences = np.abs(resampled)  # (N,): the same resamples for both systems
    p_value = _compute_p_value(differences - differences.mean(), abs(second - first))
    return Comparison(first, second, second - first, p_value, p_value < ALPHA)


# --8<-- [end:compare]


def _check_sentences(hypotheses: object, references: object) -> tuple[list[str], list[str]]:
    """Two non-empty lists of strings of one length (a NaN read from a missing table cell is not a string)."""
    checked = []
    for name, sentences in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(sentences, str | bytes) or not isinstance(sentences, Sequence):
            raise InputError(f"{name} must be a list of strings, one per sentence, got {type(sentences).__name__}")
        if len(sentences) == 0:
            raise InputError(f"{name} is empty: BLEU needs at least one sentence")
        for index, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise InputError(
                    f"{name}[{index}] must be a string, got {type(sentence).__name__} {echo(sentence, 60)}"
                    + (" (a missing table cell?)" if sentence is None or sentence != sentence else "")
                )
        checked.append(list(sentences))
    if len(checked[0]) != len(checked[1]):
        raise InputError(
            f"hypotheses and references must pair up one to one, got {len(checked[0])} hypotheses "
            f"and {len(checked[1])} references"
        )
    return checked[0], checked[1]


def _check_pairs(pairs: object) -> None:
    if isinstance(pairs, str | bytes) or not isinstance(pairs, Sequence):
        raise InputError(f"pairs must be a list of (French, English) pairs, got {type(pairs).__name__}")
    if len(pairs) == 0:
        raise InputError("evaluate needs at least one pair")
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, Pair) and all(isinstance(side, str) for side in pair)):
            raise InputError(f"pairs[{index}] must be a Pair(source, target) of two strings, got {echo(pair, 80)}")


def _check_comparable(baseline: object, system: object) -> list[str]:
    for name, evaluation in (("baseline", baseline), ("system", system)):
        if not isinstance(evaluation, Evaluation):
            raise InputError(f"{name} must be an Evaluation (from evaluate), got {type(evaluation).__name__}")
        _check_sentences(evaluation.hypotheses, evaluation.references)
    if baseline.references != system.references:
        raise InputError("compare needs two evaluations of the same pairs, in the same order")
    return baseline.references
