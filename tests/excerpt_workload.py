"""What the package does, small: the workload `test_excerpt_coverage.py` runs under coverage.py, and
`tests/shape_trace.py` under its tracer (`run(out, device)`, on any device) to check the excerpts' shape comments.

A small translation training (Bahdanau, with the mixed schedule, and Luong with every registered
score, a plain GRU), greedy and beam decoding, evaluation, an attention figure, the ONNX export and
a small classifier training. Run as a script: ``python tests/excerpt_workload.py OUT_DIR``.
"""

import sys
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

# The sizes the workload chooses (the data chooses the rest): no two of H, B, k, E, 2H, ... alike, so that a shape
# comment that swaps two letters disagrees with the run (tests/shape_trace.py).
H = 16  # of the translators trained here
BATCH = 5  # sentences per training batch (B; the last batch of an epoch may be smaller)
BEAM = 2  # k of the beam searches
SENTENCES = ("je ne suis pas fatigue .", "il est medecin .", "nous sommes la .")  # B=3, S=7, T=6; lengths differ
EVALUATED = 12  # held-out pairs the packaged translator is evaluated on
FREE_RUNNING = (4, 5, 6, 7)  # source ids (before <eos>) the packaged translator decodes alone: S=5, T=4
PLOTTED = "il est medecin ."  # the sentence whose attention is plotted: S=5, T=6
CLASSIFIER = dict(embedding_size=6, hidden_size=7)  # E and H of the classifiers (the BiLSTM's keys are 2H)
CLASSIFIER_ATTENTION = 9  # the attention classifier's tanh layer (Hp of its additive score)
CLASSIFIER_BATCH = 41  # sentences per classifier batch


def translation(out: Path, device: torch.device | str) -> None:
    train_pairs, test_pairs = split_pairs(load_pairs())
    pairs = train_pairs[:48] + test_pairs[:16]
    quiet = dict(progress=False, log=lambda line: None, measure_bleu=False, device=device)
    sized = dict(hidden_size=H, batch_size=BATCH)
    mixed = dict(teacher_forcing_ratio=0.5, teacher_forcing_schedule="inverse_sigmoid", coin_per_step=True)
    train(TrainConfig(decoder="bahdanau", epochs=2, init="xavier", **mixed, **sized), pairs=pairs, **quiet)
    for decoder, score in [("luong", name) for name in DECODERS["luong"].scores] + [("gru", None)]:
        train(TrainConfig(decoder=decoder, score=score, epochs=1, **sized), pairs=pairs, **quiet)
    switches = dict(bidirectional=True, tie_embeddings=True, input_feeding=True)  # the recipe's architecture switches
    train(TrainConfig(decoder="luong", epochs=1, **switches, **sized), pairs=pairs, **quiet)

    packaged = load_checkpoint(PRETRAINED_DIR / "bahdanau", device)
    model, vocabs = packaged.model, packaged.vocabs
    sentences = list(SENTENCES)  # lengths differ: packed
    translate(model, vocabs, sentences)
    translate(model, vocabs, sentences, beam_size=BEAM)
    translate(model, vocabs, sentences, beam_size=BEAM, max_length=1)  # no hypothesis finishes: the best live one
    greedy = evaluate(model, vocabs, test_pairs[:EVALUATED], split="test")
    beam = evaluate(model, vocabs, test_pairs[:EVALUATED], split="test", beam_size=BEAM)
    compare(greedy, beam)
    compare(greedy, greedy)  # nothing differs: a tie
    bootstrap_interval(greedy.hypotheses, greedy.references)
    source, output, weights = sentence_attention(model, vocabs, PLOTTED)
    plot_attention(weights, source, output)
    plot_attention(weights, source, output, title=PLOTTED)

    tiny = build_vocabularies(pairs)
    luong = build_model("luong", len(tiny.source), len(tiny.target), hidden_size=H, score="general").eval()
    export_onnx(luong, tiny, out / "onnx")
    with torch.no_grad():  # the two graphs the export traces, run eagerly too (tracing for export hides their lines)
        keys, hidden, proj_keys = EncoderGraph(luong)(torch.tensor([[4, 5, 6, EOS_IDX]]))  # S = 4
        StepGraph(luong)(torch.tensor([[SOS_IDX]]), hidden, keys, proj_keys)
    pages(model, vocabs, out, device)


def pages(model, vocabs, out: Path, device: torch.device | str) -> None:
    """The public calls the pages make that a training run does not: free running, no lengths, a corpus file,
    an attention over several query steps (T > 1), a bidirectional encoder without lengths."""
    source = torch.tensor([[*FREE_RUNNING, EOS_IDX]], device=device)  # (1, S)
    model(source, torch.tensor([source.size(1)], device=device))  # no target: greedy decoding
    model.encoder(source)  # no lengths
    sources = torch.tensor([[4, 5, 6, 7, EOS_IDX]] * 3, device=device)  # (3, 5)
    both_ways = build_model("gru", 10, 10, hidden_size=H, bidirectional=True).to(device)
    both_ways.encoder(sources)  # no lengths, two directions
    query, keys = torch.randn(2, 3, H, device=device), torch.randn(2, 5, H, device=device)
    mask = torch.tensor([[True] * 5, [True] * 4 + [False]], device=device)
    for name in SCORES:  # (B, T, H) queries with T = 3, as a page's fence calls them
        build_attention(name, H).to(device)(query, keys, mask)
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


def classifiers(device: torch.device | str) -> None:
    data = prepare_data(("imdb",))
    model = build_classifier("attention", len(data.vocab), **CLASSIFIER, attention_size=CLASSIFIER_ATTENTION)
    config = SentimentConfig(kind="attention", epochs=1, batch_size=CLASSIFIER_BATCH)
    train_classifier(model.to(device), data, config, progress=False)
    baseline = build_classifier("bilstm", len(data.vocab), **CLASSIFIER).to(device)
    baseline(torch.tensor([[4, 5, 6]], device=device), torch.tensor([3], device=device))


def run(out: Path, device: torch.device | str = "cpu") -> None:
    """The whole workload: translation, then the classifiers."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    translation(out, device)
    classifiers(device)


if __name__ == "__main__":
    run(Path(sys.argv[1]))
