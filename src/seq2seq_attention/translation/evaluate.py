"""Held-out evaluation: corpus BLEU (sacrebleu) with a bootstrap interval, exact match, paired comparisons."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu
from sacrebleu.significance import PairedTest, _bootstrap_resample  # sacrebleu 2.x (pinned below 3)

from ..core.errors import InputError
from ..core.vocabulary import Vocabularies
from .corpus import Pair
from .decoders import MAX_LENGTH
from .model import Seq2Seq
from .search import translate

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


# --8<-- [start:evaluate]
def evaluate(
    model: Seq2Seq,
    vocabs: Vocabularies,
    pairs: Sequence[Pair],
    *,
    split: str | None = None,
    max_length: int = MAX_LENGTH,
    batch_size: int = 256,
    beam_size: int = 1,
    length_penalty: float = 1.0,
) -> Evaluation:
    """Translate every pair's French side (greedily, or by beam search) and score it against its English side.

    Words missing from the training vocabulary read as `<unk>` (the held-out split has some);
    no sentence is dropped. `split` names the split the pairs come from, for the record.
    """
    if not pairs:
        raise InputError("evaluate needs at least one pair")
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


# --8<-- [start:bootstrap]
def bootstrap_interval(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, float]:
    """The 95% interval of corpus BLEU under resampling of the sentences (2.5th and 97.5th percentile).

    The test set is one sample of sentences; resampling it with replacement `BOOTSTRAP_SAMPLES`
    times and recomputing BLEU shows how much the score would move on another sample of the same
    size. sacrebleu draws the resamples (its fixed seed); the percentiles are taken here, so the
    interval stays inside [0, 100] (sacrebleu reports the mean plus or minus a half-width).
    """
    bleu = _bleu()
    stats = bleu._extract_corpus_statistics(list(hypotheses), [list(references)])  # one row of counts per sentence
    _, scores = _bootstrap_resample(stats, bleu, BOOTSTRAP_SAMPLES)  # BLEU of each resample
    low, high = np.percentile([s.score for s in scores], [2.5, 97.5])
    return float(low), float(high)


# --8<-- [end:bootstrap]


@dataclass
class Comparison:
    """A paired bootstrap comparison of two systems on the same sentences.

    Attributes:
        baseline, system: the BLEU of each.
        difference: ``system - baseline``.
        p_value: the chance of a difference at least this large if the two were equally good
            (sacrebleu's paired bootstrap resampling, `BOOTSTRAP_SAMPLES` resamples).
        significant: ``p_value < 0.05``; otherwise the two are called a tie.
    """

    baseline: float
    system: float
    difference: float
    p_value: float
    significant: bool


# --8<-- [start:compare]
def compare(baseline: Evaluation, system: Evaluation) -> Comparison:
    """Paired bootstrap resampling (Koehn 2004, as sacrebleu implements it) of two evaluations.

    Raises:
        InputError: the two were not made on the same references in the same order.
    """
    if baseline.references != system.references:
        raise InputError("compare needs two evaluations of the same pairs, in the same order")
    test = PairedTest(
        [("baseline", baseline.hypotheses), ("system", system.hypotheses)],
        {"BLEU": _bleu()},
        [baseline.references],
        test_type="bs",
        n_samples=BOOTSTRAP_SAMPLES,
    )
    _, results = test()
    first, second = results["BLEU"]
    return Comparison(first.score, second.score, second.score - first.score, second.p_value, second.p_value < 0.05)


# --8<-- [end:compare]
