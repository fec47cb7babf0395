"""Held-out evaluation: corpus BLEU (sacrebleu) and exact match of greedy translations."""

from collections.abc import Sequence
from dataclasses import dataclass

import sacrebleu

from ..core.errors import InputError
from ..core.vocabulary import Vocabularies
from .corpus import Pair
from .decoders import MAX_LENGTH
from .model import Seq2Seq
from .search import translate


@dataclass
class Evaluation:
    """Scores of one model on a list of pairs.

    Attributes:
        bleu: corpus BLEU in [0, 100], one reference per pair (sacrebleu defaults).
        exact_match: the fraction of pairs whose translation equals the reference.
        signature: sacrebleu's signature of the BLEU settings.
        sources, references, hypotheses: the sentences behind the numbers, in order.
    """

    bleu: float
    exact_match: float
    signature: str
    sources: list[str]
    references: list[str]
    hypotheses: list[str]

    def __len__(self) -> int:
        return len(self.sources)


# --8<-- [start:evaluate]
def evaluate(
    model: Seq2Seq,
    vocabs: Vocabularies,
    pairs: Sequence[Pair],
    *,
    max_length: int = MAX_LENGTH,
    batch_size: int = 256,
    beam_size: int = 1,
    length_penalty: float = 1.0,
) -> Evaluation:
    """Translate every pair's French side (greedily, or by beam search) and score it against its English side.

    Words missing from the training vocabulary read as `<unk>` (the held-out split has some);
    no sentence is dropped.
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
    bleu = sacrebleu.metrics.BLEU(force=True)  # the sentences are tokenised on purpose: no warning
    score = bleu.corpus_score(hypotheses, [references])
    exact = sum(h == r for h, r in zip(hypotheses, references, strict=True)) / len(pairs)
    return Evaluation(score.score, exact, str(bleu.get_signature()), sources, references, hypotheses)


# --8<-- [end:evaluate]
