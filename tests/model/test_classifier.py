"""The sentiment data, the BiLSTM + attention classifier, its baselines, checkpoints and commands."""

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import clear_error, random_tokens, tiny_classifier

from seq2seq_attention.cli import main
from seq2seq_attention.core.batching import collate
from seq2seq_attention.core.checkpoint import save_checkpoint
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.vocabulary import Vocabularies, Vocabulary
from seq2seq_attention.model.classifier import MeanEmbeddingClassifier, SentimentClassifier, build_classifier
from seq2seq_attention.model.tensors import run_packed
from seq2seq_attention.model.tokens import PAD_IDX, UNK_IDX
from seq2seq_attention.sentiment.data import (
    SOURCES,
    Example,
    encode_tokens,
    iterate_batches,
    load_sentences,
    prepare_data,
    split_examples,
    tokenize,
)
from seq2seq_attention.sentiment.figures import plot_word_attention
from seq2seq_attention.sentiment.train import SentimentConfig, accuracy, load_classifier, predict, train_classifier

V = 13


def padded_batch(lengths: list[int], extra: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    rows = [torch.randint(1, V, (n,), generator=generator).tolist() for n in lengths]
    batch = collate([(row, 0) for row in rows])
    tokens = torch.cat([batch.source, torch.full((len(rows), extra), PAD_IDX)], dim=1)  # (B, S + extra)
    return tokens, batch.lengths


batches = st.tuples(
    st.lists(st.integers(1, 9), min_size=1, max_size=6),  # lengths
    st.integers(0, 4),  # padding beyond the longest sentence
    st.integers(0, 2**16),  # token seed
    st.booleans(),  # training mode (dropout on)
)


@settings(max_examples=30, deadline=None)
@given(batches)
def test_padded_positions_get_exactly_zero_attention(case):
    lengths, extra, seed, training = case
    tokens, lengths_t = padded_batch(lengths, extra, seed)
    model = tiny_classifier().train(training)
    logits, weights = model(tokens, lengths_t)
    B, S = tokens.shape
    assert logits.shape == (B,)
    assert weights.shape == (B, S)
    for b, n in enumerate(lengths):
        assert torch.all(weights[b, n:] == 0.0), weights[b]
        assert torch.all(weights[b, :n] > 0.0)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(B))


@settings(max_examples=15, deadline=None)
@given(batches, st.sampled_from(["attention", "bilstm", "mean"]))
def test_extra_padding_changes_nothing(case, kind):
    lengths, extra, seed, _ = case
    model = tiny_classifier(kind).eval()
    tokens, lengths_t = padded_batch(lengths, 0, seed)
    longer = torch.cat([tokens, torch.full((len(lengths), extra + 1), PAD_IDX)], dim=1)
    logits, weights = model(tokens, lengths_t)
    logits_long, weights_long = model(longer, lengths_t)
    torch.testing.assert_close(logits_long, logits)
    if kind == "attention":
        torch.testing.assert_close(weights_long[:, : tokens.shape[1]], weights)
    else:
        assert weights is None and weights_long is None


def test_each_sentence_is_classified_as_if_alone():
    model = tiny_classifier().eval()
    tokens, lengths = padded_batch([7, 2, 5], 0, seed=3)
    logits, weights = model(tokens, lengths)
    for b, n in enumerate(lengths.tolist()):
        alone_logits, alone_weights = model(tokens[b : b + 1, :n], lengths[b : b + 1])
        torch.testing.assert_close(alone_logits, logits[b : b + 1])
        torch.testing.assert_close(alone_weights[0], weights[b, :n])


def test_query_is_the_final_state_of_each_direction():
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    inputs = torch.randn(3, 6, 3)
    lengths = torch.tensor([6, 2, 4])
    outputs, (h_n, _) = run_packed(lstm, inputs, lengths)
    assert outputs.shape == (3, 6, 8) and h_n.shape == (2, 3, 4)
    for b, n in enumerate(lengths.tolist()):
        torch.testing.assert_close(h_n[0, b], outputs[b, n - 1, :4])  # forward: after the last real token
        torch.testing.assert_close(h_n[1, b], outputs[b, 0, 4:])  # backward: after reading back to the first
        assert torch.all(outputs[b, n:] == 0)


def test_the_classifier_reuses_the_translators_attention_module():
    from seq2seq_attention.model.attention import BahdanauAttention

    model = SentimentClassifier(V, embedding_size=6, hidden_size=4, attention_size=3)
    assert isinstance(model.attention, BahdanauAttention)
    assert (model.attention.query_size, model.attention.key_size, model.attention.hidden_size) == (8, 8, 3)
    assert SentimentClassifier(V, use_attention=False).attention is None
    assert isinstance(build_classifier("mean", V), MeanEmbeddingClassifier)
    with pytest.raises(InputError, match="unknown classifier kind"):
        build_classifier("transformer", V)


@pytest.mark.parametrize(
    ("tokens", "lengths", "error", "message"),
    [
        (torch.ones(2, 5), torch.tensor([5, 3]), ValueError, r"input must be Int64\[Tensor, 'B S'\], got f32\[2,5\]"),
        (
            torch.ones(2, 5, dtype=torch.long),
            torch.tensor([5, 3, 1]),
            ValueError,
            r"lengths must be Int64\[Tensor, 'B'\] with B=2, S=5, got i64\[3\]",
        ),
        (torch.ones(5, dtype=torch.long), torch.tensor([5]), ValueError, r"input must be Int64\[Tensor, 'B S'\]"),
        (torch.full((2, 5), V), torch.tensor([5, 3]), IndexError, "index out of range"),  # the vocabulary is torch's
    ],
)
@pytest.mark.parametrize("kind", ["attention", "mean"])
def test_bad_input_gets_a_clear_message(tokens, lengths, error, message, kind):
    with pytest.raises(error, match=message):
        tiny_classifier(kind)(tokens, lengths)


@pytest.mark.parametrize("lengths", [[5, 0], [6, 3]])
def test_lengths_outside_the_batch_are_torchs_error_in_the_packed_lstm(lengths):
    with pytest.raises(RuntimeError, match="greater than 0|exceeds"):
        tiny_classifier("attention")(torch.ones(2, 5, dtype=torch.long), torch.tensor(lengths))


def test_the_bundled_files_hold_500_of_each_label():
    examples = load_sentences(tuple(SOURCES))
    for source in SOURCES:
        labels = [e.label for e in examples if e.source == source]
        assert len(labels) == 1000 and sum(labels) == 500
    # U+0085 inside a sentence is not a line break
    assert any("\x85" in e.text for e in examples if e.source == "imdb")
    with pytest.raises(InputError, match="unknown sentiment source"):
        load_sentences(["twitter"])


def test_a_malformed_line_is_reported(tmp_path: Path):
    (tmp_path / SOURCES["imdb"]).write_text("fine\t1\nno label here\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":2: expected 'sentence<TAB>0\|1'"):
        load_sentences(["imdb"], root=tmp_path)


def test_tokenize_keeps_words_negations_and_marks():
    assert tokenize("It wasn't GOOD\x85 at all!!") == ["it", "wasn't", "good", "at", "all", "!", "!"]


@given(st.lists(st.text(min_size=1, max_size=12), max_size=60), st.integers(1, 99))
def test_the_split_is_a_deterministic_partition_by_sentence(texts, percent):
    examples = [Example(t, i % 2, "imdb") for i, t in enumerate(texts)]
    train, test = split_examples(examples, percent)
    assert (train, test) == split_examples(list(examples), percent)
    assert sorted(map(id, train + test)) == sorted(map(id, examples))
    assert not {e.text for e in train} & {e.text for e in test}


def test_prepared_data_never_shares_a_sentence_across_sides():
    data = prepare_data(("imdb", "yelp"))
    sides = [{e.text for e in split.examples} for split in (data.train, data.valid, data.test)]
    assert not (sides[0] & sides[1] or sides[0] & sides[2] or sides[1] & sides[2])
    assert len(data.train) + len(data.valid) + len(data.test) == 2000
    assert 0.15 < len(data.test) / 2000 < 0.25
    assert data.vocab.index2word[PAD_IDX] == "<pad>" and data.vocab.index2word[UNK_IDX] == "<unk>"


def test_vocabulary_min_freq_and_unknown_words():
    vocab = Vocabulary.from_counts("words", [["a", "b", "a"], ["c", "a", "b"]], min_freq=2)
    assert vocab.index2word[4:] == ["a", "b"]
    assert encode_tokens(vocab, ["b", "c", "zzz"]) == [5, UNK_IDX, UNK_IDX]
    assert encode_tokens(vocab, []) == [UNK_IDX]  # a sentence without a word reads as one <unk>


def test_batches_pad_right_mask_and_carry_float_labels():
    (batch,) = iterate_batches([[5, 6, 7], [8], [UNK_IDX]], [1, 0, 1], batch_size=3)
    assert batch.source.tolist() == [[5, 6, 7], [8, PAD_IDX, PAD_IDX], [UNK_IDX, PAD_IDX, PAD_IDX]]
    assert batch.lengths.tolist() == [3, 1, 1]
    assert batch.source_mask.tolist() == [[True, True, True], [True, False, False], [True, False, False]]
    assert batch.target.dtype == torch.float and batch.target.tolist() == [1.0, 0.0, 1.0]
    assert batch.target_lengths is None


def words(n: int) -> Vocabulary:
    vocab = Vocabulary("words")
    for i in range(n - 4):
        vocab.add_word(f"w{i}")
    return vocab


def test_checkpoint_round_trip(tmp_path: Path):
    model = tiny_classifier().eval()
    config = SentimentConfig(kind="attention", sources=("imdb",))
    save_checkpoint(tmp_path / "m", model, Vocabularies(words(V)), training={"config": {"sources": ["imdb"]}})
    loaded = load_classifier(tmp_path / "m")
    assert loaded.vocabs.source == words(V) and loaded.config["kind"] == config.kind
    sequences = [[4, 5, 6], [7, 8]]
    assert predict(loaded.model, sequences) == predict(model, sequences)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "checkpoint.json").write_text("not a checkpoint")
    with pytest.raises(InputError, match="not valid JSON"):
        load_classifier(tmp_path / "bad")


def test_accuracy_counts_the_sentences_on_the_right_side_of_one_half():
    model = tiny_classifier().eval()
    sequences = [[4, 5, 6], [7, 8], [9], [10, 11, 12, 4]]
    probs, _ = predict(model, sequences)
    labels = [int(p >= 0.5) for p in probs]
    assert accuracy(model, sequences, labels) == 1.0
    assert accuracy(model, sequences, [1 - y for y in labels]) == 0.0
    assert accuracy(model, sequences, labels[:2] + [1 - y for y in labels[2:]]) == 0.5


@pytest.mark.slow
def test_training_keeps_the_weights_of_the_best_validation_epoch(monkeypatch):
    data = prepare_data(("imdb",))
    torch.manual_seed(0)
    model = build_classifier("mean", len(data.vocab), embedding_size=8, dense_size=4)
    seen = {}
    from seq2seq_attention.sentiment import train as train_module

    scores = iter([0.5, 0.9, 0.6])  # epoch 2 is the best

    def fake_accuracy(model, sequences, labels):
        score = next(scores)
        seen[score] = {k: v.clone() for k, v in model.state_dict().items()}
        return score

    monkeypatch.setattr(train_module, "accuracy", fake_accuracy)
    history = train_classifier(model, data, SentimentConfig(kind="mean", epochs=3), progress=False)
    assert [r["valid_accuracy"] for r in history] == [0.5, 0.9, 0.6]
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, seen[0.9][name], rtol=0, atol=0)
    assert any(not torch.equal(seen[0.6][k], seen[0.9][k]) for k in seen[0.9])


@pytest.mark.slow
def test_cli_train_predict_and_figure(tmp_path: Path, capsys):
    checkpoint = tmp_path / "mean"
    threads = str(torch.get_num_threads())  # keep the test session's setting
    assert (
        main(["sentiment-train", "--kind", "mean", "--epochs", "1", "--threads", threads, "--out", str(checkpoint)])
        == 0
    )
    assert "test accuracy" in capsys.readouterr().out
    assert main(["sentiment-predict", "--checkpoint", str(checkpoint), "a great film", "awful"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split("\t") == ["label", "P(positive)", "sentence"]  # the columns are labelled
    assert len(lines) == 3 and all(line.split("\t")[0] in ("positive", "negative") for line in lines[1:])

    figure = tmp_path / "attention.png"
    assert main(["sentiment-attention-figure", "--checkpoint", str(checkpoint), "--out", str(figure)]) == 2
    assert "has no attention to draw" in capsys.readouterr().err

    data = prepare_data(("imdb",))
    torch.manual_seed(0)
    attention = build_classifier("attention", len(data.vocab), embedding_size=8, hidden_size=4, attention_size=4)
    training = {"config": {"sources": list(data.sources)}}
    save_checkpoint(tmp_path / "attention", attention, Vocabularies(data.vocab), training=training)
    argv = ["sentiment-attention-figure", "--checkpoint", str(tmp_path / "attention")]
    assert main([*argv, "--out", str(figure), "--count", "2", "--json", str(tmp_path / "a.json")]) == 0
    assert figure.stat().st_size > 1000 and (tmp_path / "a.json").is_file()

    assert main(["sentiment-predict", "--checkpoint", str(tmp_path / "missing"), "ok"]) == 2
    assert "does not exist" in capsys.readouterr().err


# Each wrong input to a classifier raises one ValueError that names the argument and says what came.
B, S = 2, 5
LENGTHS = torch.tensor([S, 2])
CLASSIFIER_CASES: list[tuple[str, Callable[[], object], str]] = [
    *[
        (f"{kind}-input-rank", lambda kind=kind: tiny_classifier(kind)(random_tokens(B), LENGTHS), "input")
        for kind in ("attention", "mean")
    ],
    *[
        (f"{kind}-input-dtype", lambda kind=kind: tiny_classifier(kind)(torch.ones(B, S), LENGTHS), "input")
        for kind in ("attention", "mean")
    ],
    *[
        (
            f"{kind}-lengths-size",
            lambda kind=kind: tiny_classifier(kind)(random_tokens(B, S), torch.tensor([S])),
            "lengths",
        )
        for kind in ("attention", "mean")
    ],
]


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize(("call", "names"), [c[1:] for c in CLASSIFIER_CASES], ids=[c[0] for c in CLASSIFIER_CASES])
def test_a_wrong_input_raises_one_clear_value_error(call: Callable[[], object], names: str):
    clear_error(call, names)


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("rows", [[[], []], [["a"], []], [[], ["a"]]])
def test_an_empty_attention_row_is_named(rows, tmp_path):
    words, weights = ([rows[0]], [[]]) if rows[0] == [] else ([rows[0]], [rows[1]])
    with pytest.raises(InputError, match="sentence 1|1 words but 0 weights"):
        plot_word_attention(words, weights, ["title"], tmp_path / "x.png")
    assert not list(tmp_path.iterdir())
