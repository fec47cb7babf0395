"""What the package does, small: the workload `test_excerpt_coverage.py` runs under coverage.py.

A small translation training (Bahdanau, with the mixed schedule, and Luong with every registered
score, a plain GRU), greedy and beam decoding, evaluation, an attention figure, the ONNX export and
a small classifier training. Run as a script: ``python tests/excerpt_workload.py OUT_DIR``.

`run(out, sizes, device)` is the same workload with other sizes (`Sizes`) or on another device:
`tests/shape_trace.py` runs it with every shape letter at a size of its own, so that the shape
comments of the excerpts can be checked against it. The script keeps the defaults.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from seq2seq_attention import (
    DECODERS,
    EOS_IDX,
    SCORES,
    SOS_IDX,
    Vocabulary,
    build_attention,
    build_model,
    masked_softmax,
    translate,
)
from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.model.classifier import build_classifier
from seq2seq_attention.sentiment.data import prepare_data
from seq2seq_attention.sentiment.train import SentimentConfig, train_classifier
from seq2seq_attention.translation.corpus import build_vocabularies, load_pairs, split_pairs, target_overlap
from seq2seq_attention.translation.evaluate import bootstrap_interval, compare, evaluate
from seq2seq_attention.translation.export import EncoderGraph, StepGraph, export_onnx
from seq2seq_attention.translation.plotting import plot_attention, sentence_attention
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR
from seq2seq_attention.translation.train import TrainConfig, train


@dataclass(frozen=True)
class Sizes:
    """The sizes the workload chooses (the data chooses the rest: sentence lengths, vocabularies)."""

    hidden: int = 8  # H of the translators trained here
    batch: int = 8  # sentences per training batch (B; the last batch of an epoch may be smaller)
    beam: int = 3  # k of the beam searches
    # what the packaged translator translates (B of its batch; their lengths differ, so they are padded)
    sentences: tuple[str, ...] = ("je suis fatigue .", "il est tres grand .", "nous sommes la .")
    evaluated: int = 20  # held-out pairs the packaged translator is evaluated on
    free_running: tuple[int, ...] = (4, 5, 6)  # source ids (before <eos>) the packaged translator decodes alone
    plotted: str = "je suis fatigue ."  # the sentence whose attention is plotted
    classifier_embedding: int = 8  # E of the attention classifier
    classifier_hidden: int = 4  # H of the classifiers (the BiLSTM's keys are 2H)
    classifier_attention: int = 4  # the attention classifier's tanh layer (Hp of its additive score)
    classifier_batch: int = SentimentConfig.batch_size  # sentences per classifier batch


def translation(out: Path, sizes: Sizes = Sizes(), device: torch.device | str = "cpu") -> None:
    train_pairs, test_pairs = split_pairs(load_pairs())
    pairs = train_pairs[:48] + test_pairs[:16]
    quiet = dict(progress=False, log=lambda line: None, measure_bleu=False, device=device)
    H, batch = sizes.hidden, sizes.batch
    mixed = TrainConfig(
        decoder="bahdanau",
        hidden_size=H,
        batch_size=batch,
        epochs=2,
        teacher_forcing_ratio=0.5,
        teacher_forcing_schedule="inverse_sigmoid",
        coin_per_step=True,
        init="xavier",
    )
    train(mixed, pairs=pairs, **quiet)
    for decoder, score in [("luong", name) for name in DECODERS["luong"].scores] + [("gru", None)]:
        config = TrainConfig(decoder=decoder, score=score, hidden_size=H, batch_size=batch, epochs=1)
        train(config, pairs=pairs, **quiet)
    switches = TrainConfig(
        decoder="luong",
        hidden_size=H,
        batch_size=batch,
        epochs=1,
        bidirectional=True,
        tie_embeddings=True,
        input_feeding=True,
    )
    train(switches, pairs=pairs, **quiet)  # the recipe's architecture switches, all on

    packaged = load_checkpoint(PRETRAINED_DIR / "bahdanau", device)
    model, vocabs = packaged.model, packaged.vocabs
    sentences = list(sizes.sentences)  # lengths differ: packed
    k = sizes.beam
    translate(model, vocabs, sentences)
    translate(model, vocabs, sentences, beam_size=k)
    translate(model, vocabs, sentences, beam_size=k, max_length=1)  # no hypothesis finishes: the best live one
    greedy = evaluate(model, vocabs, test_pairs[: sizes.evaluated], split="test")
    beam = evaluate(model, vocabs, test_pairs[: sizes.evaluated], split="test", beam_size=2)
    compare(greedy, beam)
    compare(greedy, greedy)  # nothing differs: a tie
    bootstrap_interval(greedy.hypotheses, greedy.references)
    source, output, weights = sentence_attention(model, vocabs, sizes.plotted)
    plot_attention(weights, source, output)

    plot_attention(weights, source, output, title=sizes.plotted)

    tiny = build_vocabularies(pairs)
    luong = build_model("luong", len(tiny.source), len(tiny.target), hidden_size=H, score="general").eval()
    export_onnx(luong, tiny, out / "onnx")
    with torch.no_grad():  # the two graphs the export traces, run eagerly too (tracing for export hides their lines)
        keys, hidden, proj_keys = EncoderGraph(luong)(torch.tensor([[4, 5, 6, EOS_IDX]]))  # S = 4
        StepGraph(luong)(torch.tensor([[SOS_IDX]]), hidden, keys, proj_keys)
    pages(model, vocabs, out, device, H, sizes.free_running)


def pages(
    model, vocabs, out: Path, device: torch.device | str = "cpu", hidden: int = 8, tokens: tuple[int, ...] = (4, 5, 6)
) -> None:
    """The public calls the pages make that a training run does not: free running, no lengths, a corpus file,
    an attention over several query steps (T > 1), a bidirectional encoder without lengths."""
    source = torch.tensor([[*tokens, EOS_IDX]], device=device)  # (1, S)
    model(source, torch.tensor([source.size(1)], device=device))  # no target: greedy decoding
    model.encoder(source)  # no lengths
    sources = torch.tensor([[4, 5, 6, 7, EOS_IDX]] * 3, device=device)  # (3, 5)
    both_ways = build_model("gru", 10, 10, hidden_size=hidden, bidirectional=True).to(device)
    both_ways.encoder(sources)  # no lengths, two directions
    query, keys = torch.randn(2, 3, hidden, device=device), torch.randn(2, 5, hidden, device=device)
    mask = torch.tensor([[True] * 5, [True] * 4 + [False]], device=device)
    for name in SCORES:  # (B, T, H) queries with T = 3, as a page's fence calls them
        build_attention(name, hidden).to(device)(query, keys, mask)
    scores = torch.randn(2, 1, 3, device=device)
    masked_softmax(scores, torch.tensor([[True, True, False], [True, True, True]], device=device))
    vocabulary = Vocabulary("eng")
    vocabulary.add_sentence("<unk> hello")
    vocabulary.decode([SOS_IDX, vocabulary.word2index["hello"], EOS_IDX])
    translate(model, vocabs, ["je suis xylophoniste ."], unknown="unk")
    corpus = out / "corpus.txt"
    corpus.write_text("I am tired.\tJe suis fatigue.\n\nGo.\tVa !\n", encoding="utf-8")
    pairs = load_pairs(path=corpus)
    train, dev = split_pairs(load_pairs(), eval_split="dev")
    target_overlap(train, dev)
    assert pairs


def classifiers(sizes: Sizes = Sizes(), device: torch.device | str = "cpu") -> None:
    data = prepare_data(("imdb",))
    model = build_classifier(
        "attention",
        len(data.vocab),
        embedding_size=sizes.classifier_embedding,
        hidden_size=sizes.classifier_hidden,
        attention_size=sizes.classifier_attention,
    ).to(device)
    config = SentimentConfig(kind="attention", epochs=1, batch_size=sizes.classifier_batch)
    train_classifier(model, data, config, progress=False)
    baseline = build_classifier(
        "bilstm", len(data.vocab), embedding_size=sizes.classifier_embedding, hidden_size=sizes.classifier_hidden
    ).to(device)
    baseline(torch.tensor([[4, 5, 6]], device=device), torch.tensor([3], device=device))


def run(out: Path, sizes: Sizes = Sizes(), device: torch.device | str = "cpu") -> None:
    """The whole workload: translation, then the classifiers."""
    translation(out, sizes, device)
    classifiers(sizes, device)


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.manual_seed(0)
    run(Path(sys.argv[1]))
