"""What the package does, small: the workload `test_excerpt_coverage.py` runs under coverage.py.

A small translation training (Bahdanau, with the mixed schedule, and Luong with every dot-product
score, a plain GRU), greedy and beam decoding, evaluation, an attention figure, the ONNX export and
a small classifier training. Run as a script: ``python tests/excerpt_workload.py OUT_DIR``.
"""

import sys
from pathlib import Path

import torch

from seq2seq_attention import EOS_IDX, SOS_IDX, Vocabulary, build_model, masked_softmax, translate
from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.sentiment.classifier import build_classifier
from seq2seq_attention.sentiment.data import prepare_data
from seq2seq_attention.sentiment.train import SentimentConfig, train_classifier
from seq2seq_attention.translation.corpus import build_vocabularies, load_pairs, split_pairs, target_overlap
from seq2seq_attention.translation.evaluate import bootstrap_interval, compare, evaluate
from seq2seq_attention.translation.export import export_onnx
from seq2seq_attention.translation.plotting import plot_attention, sentence_attention
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR
from seq2seq_attention.translation.train import TrainConfig, train


def translation(out: Path) -> None:
    train_pairs, test_pairs = split_pairs(load_pairs())
    pairs = train_pairs[:48] + test_pairs[:16]
    quiet = dict(progress=False, log=lambda line: None, measure_bleu=False)
    mixed = TrainConfig(
        decoder="bahdanau",
        hidden_size=8,
        batch_size=8,
        epochs=2,
        teacher_forcing_ratio=0.5,
        teacher_forcing_schedule="inverse_sigmoid",
        coin_per_step=True,
        init="xavier",
    )
    train(mixed, pairs=pairs, **quiet)
    for decoder, score in (("luong", "dot"), ("luong", "scaled_dot"), ("luong", "general"), ("gru", None)):
        train(TrainConfig(decoder=decoder, score=score, hidden_size=8, batch_size=8, epochs=1), pairs=pairs, **quiet)
    switches = TrainConfig(
        decoder="luong",
        hidden_size=8,
        batch_size=8,
        epochs=1,
        bidirectional=True,
        tie_embeddings=True,
        input_feeding=True,
    )
    train(switches, pairs=pairs, **quiet)  # the recipe's architecture switches, all on

    packaged = load_checkpoint(PRETRAINED_DIR / "bahdanau")
    model, vocabs = packaged.model, packaged.vocabs
    sentences = ["je suis fatigue .", "il est tres grand .", "nous sommes la ."]  # lengths differ: packed
    translate(model, vocabs, sentences)
    translate(model, vocabs, sentences, beam_size=3)
    translate(model, vocabs, sentences, beam_size=3, max_length=1)  # no hypothesis finishes: the best live one
    greedy = evaluate(model, vocabs, test_pairs[:20], split="test")
    beam = evaluate(model, vocabs, test_pairs[:20], split="test", beam_size=2)
    compare(greedy, beam)
    compare(greedy, greedy)  # nothing differs: a tie
    bootstrap_interval(greedy.hypotheses, greedy.references)
    source, output, weights = sentence_attention(model, vocabs, "je suis fatigue .")
    plot_attention(weights, source, output)

    plot_attention(weights, source, output, title="je suis fatigue .")

    tiny = build_vocabularies(pairs)
    luong = build_model("luong", len(tiny.source), len(tiny.target), hidden_size=8, score="general").eval()
    export_onnx(luong, tiny, out / "onnx")
    pages(model, vocabs, out)


def pages(model, vocabs, out: Path) -> None:
    """The public calls the pages make that a training run does not: free running, no lengths, a corpus file."""
    source = torch.tensor([[4, 5, 6, EOS_IDX]])  # (1, S)
    model(source, torch.tensor([4]))  # no target: greedy decoding
    model.encoder(source)  # no lengths
    masked_softmax(torch.randn(2, 1, 3), torch.tensor([[True, True, False], [True, True, True]]))
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


def classifiers() -> None:
    data = prepare_data(("imdb",))
    model = build_classifier("attention", len(data.vocab), embedding_size=8, hidden_size=4, attention_size=4)
    train_classifier(model, data, SentimentConfig(kind="attention", epochs=1), progress=False)
    baseline = build_classifier("bilstm", len(data.vocab), embedding_size=8, hidden_size=4)
    baseline(torch.tensor([[4, 5, 6]]), torch.tensor([3]))


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.manual_seed(0)
    translation(Path(sys.argv[1]))
    classifiers()
