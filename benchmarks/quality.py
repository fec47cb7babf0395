"""Training for a wall-clock budget, with held-out BLEU at given moments of the training clock.

The clock counts training only: it stops while the model is evaluated, so a contender that is
evaluated more often is not penalised. Both contenders check it after every optimisation step.
"""

import time
from collections.abc import Callable, Sequence

import sacrebleu
import torch

from seq2seq_attention.core.training import learning_rate_at, make_optimizer
from seq2seq_attention.core.vocabulary import Vocabularies
from seq2seq_attention.model.seq2seq import Seq2Seq, build_model
from seq2seq_attention.translation.corpus import Pair, TranslationDataset, make_loader
from seq2seq_attention.translation.train import TrainConfig, make_criterion, train_step
from seq2seq_attention.translation.translator import translate

from .tutorial_loops import TutorialTrainer


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """sacrebleu corpus BLEU, one reference per sentence (as `evaluate.evaluate`)."""
    return sacrebleu.metrics.BLEU(force=True).corpus_score(list(hypotheses), [list(references)]).score


def run_clocked(
    step: Callable[[], None], evaluate: Callable[[], float], eval_at: Sequence[float], budget: float
) -> list[dict]:
    """Call `step` until the training clock reaches `budget`; at each time of `eval_at`, record `evaluate()`."""
    pending = sorted(eval_at)
    results, clock, steps = [], 0.0, 0
    while pending:
        tic = time.perf_counter()
        step()
        clock += time.perf_counter() - tic
        steps += 1
        while pending and (clock >= pending[0] or clock >= budget):
            results.append({"at_s": pending.pop(0), "clock_s": round(clock, 2), "steps": steps, "bleu": evaluate()})
    return results


def tutorial_quality(
    train_set: TranslationDataset,
    test_pairs: Sequence[Pair],
    vocabs: Vocabularies,
    eval_at: Sequence[float],
    hidden_size: int = 256,
    seed: int = 0,
) -> list[dict]:
    """The tutorial-style peer (batch 32, Adam 1e-3) trained for max(eval_at) seconds."""
    trainer = TutorialTrainer(train_set.examples, len(vocabs.source), len(vocabs.target), hidden_size, seed=seed)
    sources = [vocabs.source.encode(p.source, unknown="unk") for p in test_pairs]
    references = [" ".join(p.target.split()) for p in test_pairs]
    batches: list[torch.Tensor] = []

    def step() -> None:
        if not batches:
            batches.extend(trainer.batches())
        trainer.step(batches.pop(0))

    def evaluate() -> float:
        return corpus_bleu([vocabs.target.decode(t) for t in trainer.translate(sources)], references)

    return run_clocked(step, evaluate, eval_at, max(eval_at))


def project_quality(
    config: TrainConfig,
    train_set: TranslationDataset,
    test_pairs: Sequence[Pair],
    vocabs: Vocabularies,
    eval_at: Sequence[float],
    beam_size: int = 1,
) -> tuple[list[dict], Seq2Seq]:
    """The project's trainer (`train_step` with `config`) for max(eval_at) seconds; greedy BLEU (and beam BLEU).

    Returns the evaluations and the trained model (in eval mode).
    """
    torch.manual_seed(config.seed)
    model = build_model(config.decoder, len(vocabs.source), len(vocabs.target), config.hidden_size, config.dropout)
    loader = make_loader(train_set, config.batch_size, shuffle=True, seed=config.seed)
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    criterion = make_criterion(config)
    total_steps = len(loader) * config.epochs
    sources = [p.source for p in test_pairs]
    references = [" ".join(p.target.split()) for p in test_pairs]
    state = {"step": 0, "epoch": 0, "batches": iter(())}

    def step() -> None:
        batch = next(state["batches"], None)
        if batch is None:
            state["epoch"] += 1
            loader.batch_sampler.set_epoch(state["epoch"])
            state["batches"] = iter(loader)
            batch = next(state["batches"])
        model.train()
        lr = learning_rate_at(config.schedule, config.learning_rate, min(state["step"], total_steps - 1), total_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        train_step(model, batch, optimizer, criterion, config.teacher_forcing_ratio, config.coin_per_step, config.clip)
        state["step"] += 1

    def evaluate() -> float:
        model.eval()
        return corpus_bleu(translate(model, vocabs, sources, max_words=99, unknown="unk"), references)

    results = run_clocked(step, evaluate, eval_at, max(eval_at))
    if beam_size > 1:
        model.eval()
        hyps = translate(model, vocabs, sources, max_words=99, unknown="unk", beam_size=beam_size)
        results[-1]["beam_bleu"] = corpus_bleu(hyps, references)
    for row in results:
        row["epochs"] = round(row["steps"] / len(loader), 2)
    return results, model.eval()
