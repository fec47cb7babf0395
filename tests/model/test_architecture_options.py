"""The recipe's architecture switches: a bidirectional encoder, a tied output embedding, Luong's input feeding.

Each is a field of `TrainConfig`, an argument of `build_model` and a key of the checkpoint's
config; these tests check what each one computes (against a slow reference written here), that
a checkpoint keeps it (tied weights stay one parameter, the outputs are equal after loading),
that a resumed run equals an uninterrupted one, and that a switch that cannot apply is refused
with a clear error before anything is built or written.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import DECODERS
from seq2seq_attention.core.checkpoint import load_checkpoint, save_checkpoint
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.model.decoders import DecoderState
from seq2seq_attention.model.encoder import EncoderRNN, join_directions
from seq2seq_attention.model.search import beam_search_decode, greedy_decode
from seq2seq_attention.model.seq2seq import build_model
from seq2seq_attention.model.tokens import PAD_IDX
from seq2seq_attention.translation.corpus import Pair, build_vocabularies, collate, load_pairs
from seq2seq_attention.translation.train import TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_thread")
FAST = settings(max_examples=25, deadline=None, database=None)
SPECIALS = 4


@st.composite
def padded_tokens(draw, max_b: int = 4, max_s: int = 6, v: int = 12):
    """(tokens (B, S), lengths (B,)): random lengths in [1, S], padding after them."""
    b, s = draw(st.integers(1, max_b)), draw(st.integers(1, max_s))
    lengths = torch.tensor(draw(st.lists(st.integers(1, s), min_size=b, max_size=b)))
    mask = torch.arange(s).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    seed = draw(st.integers(0, 2**16))
    tokens = torch.randint(SPECIALS, v, (b, s), generator=torch.Generator().manual_seed(seed))
    return tokens.masked_fill(~mask, PAD_IDX), lengths


@FAST
@given(batch=padded_tokens(), half=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_a_bidirectional_encoder_reads_each_sentence_both_ways(batch, half: int, seed: int):
    tokens, lengths = batch
    b, s = tokens.shape
    h = 2 * half
    torch.manual_seed(seed)
    encoder = EncoderRNN(12, h, bidirectional=True).eval()
    outputs, hidden = encoder(tokens, lengths)  # (B, S, H), (1, B, H)
    assert outputs.shape == (b, s, h) and hidden.shape == (1, b, h)
    mask = torch.arange(s).unsqueeze(0) < lengths.unsqueeze(1)
    assert (outputs[~mask] == 0).all(), "the GRU must not run over padding"
    rows = torch.arange(b)
    # the joined last state: the forward half after the last real token, the backward half after the first
    torch.testing.assert_close(hidden[0, :, :half], outputs[rows, lengths - 1, :half])
    torch.testing.assert_close(hidden[0, :, half:], outputs[:, 0, half:])
    # each sentence alone, without padding, reversed for the backward direction: the same states
    with torch.no_grad():
        for row in range(b):
            n = int(lengths[row])
            embedded = encoder.embedding(tokens[row : row + 1, :n])  # (1, n, H)
            forward_cell = torch.nn.GRU(h, half, batch_first=True)
            backward_cell = torch.nn.GRU(h, half, batch_first=True)
            for cell, suffix in ((forward_cell, ""), (backward_cell, "_reverse")):
                for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
                    getattr(cell, name).copy_(getattr(encoder.gru, name + suffix))
            forward, _ = forward_cell(embedded)  # (1, n, H/2)
            backward, _ = backward_cell(embedded.flip(1))  # (1, n, H/2), last word first
            torch.testing.assert_close(outputs[row, :n], torch.cat((forward[0], backward[0].flip(0)), dim=-1))


def test_join_directions_keeps_one_direction_and_concatenates_two():
    one = torch.randn(1, 3, 4)
    assert join_directions(one) is one
    two = torch.randn(2, 3, 4)  # (D, B, H/D)
    joined = join_directions(two)  # (1, B, H)
    assert joined.shape == (1, 3, 8)
    assert torch.equal(joined[0, :, :4], two[0]) and torch.equal(joined[0, :, 4:], two[1])


def test_tied_embeddings_are_one_parameter_and_survive_a_checkpoint(tmp_path):
    pairs = [Pair("je suis la .", "i am here ."), Pair("tu es grand .", "you re tall .")]
    vocabs = build_vocabularies(pairs)
    torch.manual_seed(0)
    model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=8, tie_embeddings=True)
    decoder = model.decoder
    assert decoder.out.weight is decoder.embedding.weight  # (V, H), read as embedding and as output layer
    assert sum(p.numel() for p in model.parameters()) < sum(
        p.numel() for p in build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=8).parameters()
    )
    with torch.no_grad():
        decoder.embedding.weight.add_(1.0)  # a change through one name is seen through the other
    assert torch.equal(decoder.out.weight, decoder.embedding.weight)
    model.eval()
    save_checkpoint(tmp_path / "tied", model, vocabs)
    loaded = load_checkpoint(tmp_path / "tied")
    assert loaded.config["tie_embeddings"] is True
    assert loaded.model.decoder.out.weight is loaded.model.decoder.embedding.weight
    batch = collate([(vocabs.source.encode(p.source), vocabs.target.encode(p.target)) for p in pairs])
    torch.testing.assert_close(
        loaded.model(batch.source, batch.lengths, batch.target)[0], model(batch.source, batch.lengths, batch.target)[0]
    )


def luong_reference(decoder, embedded, keys, hidden):
    """Luong's input feeding written out step by step in float64: h~_t = tanh(Wc [c_t; s_t])."""
    feed = torch.zeros(keys.size(0), 1, decoder.hidden_size, dtype=keys.dtype)  # h~_0 = 0
    outputs = []
    for i in range(embedded.size(1)):
        step_input = torch.cat((embedded[:, i : i + 1], feed), dim=2)  # (B, 1, 2H)
        s_t, hidden = decoder.gru(step_input, hidden)  # (B, 1, H)
        weights = torch.softmax(s_t @ keys.transpose(1, 2) / decoder.hidden_size**0.5, dim=-1)  # (B, 1, S)
        context = weights @ keys  # (B, 1, H)
        feed = torch.tanh(decoder.concat(torch.cat((context, s_t), dim=2)))  # (B, 1, H)
        outputs.append(decoder.out(feed))
    return torch.cat(outputs, dim=1)  # (B, T, V) logits


@FAST
@given(b=st.integers(1, 3), s=st.integers(1, 5), t=st.integers(1, 5), h=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_input_feeding_feeds_the_previous_attentional_vector(b: int, s: int, t: int, h: int, seed: int):
    torch.manual_seed(seed)
    model = build_model("luong", 12, 10, hidden_size=h, score="scaled_dot", input_feeding=True).double().eval()
    decoder = model.decoder
    assert decoder.gru.input_size == 2 * h
    keys = torch.randn(b, s, h, dtype=torch.float64)  # (B, S, H), nothing padded
    hidden = torch.randn(1, b, h, dtype=torch.float64)  # (1, B, H)
    target = torch.randint(SPECIALS, 10, (b, t))  # (B, T)
    log_probs, _, _ = decoder(keys, hidden, target)  # (B, T, V)
    sos = torch.full((b, 1), 1)
    embedded = decoder.embed(torch.cat((sos, target[:, :-1]), dim=1))  # (B, T, H)
    expected = torch.log_softmax(luong_reference(decoder, embedded, keys, hidden), dim=-1)
    torch.testing.assert_close(log_probs, expected)
    state = decoder.init_state(keys, hidden)
    assert state.feed.shape == (b, 1, h) and not state.feed.any()
    reordered = state.select(torch.arange(b).flip(0))  # beam search reorders rows: the fed vector follows
    assert isinstance(reordered, DecoderState) and reordered.feed.shape == (b, 1, h)


def test_greedy_and_beam_search_decode_a_feeding_bidirectional_tied_model():
    torch.manual_seed(0)
    model = build_model(
        "luong", 12, 10, hidden_size=8, bidirectional=True, tie_embeddings=True, input_feeding=True
    ).eval()
    source = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])
    lengths = torch.tensor([4, 3])
    tokens, attentions = greedy_decode(model, source, lengths, max_length=6)
    assert tokens.size(0) == 2 and attentions.shape[0] == 2 and attentions.shape[2] == 4
    beam, scores = beam_search_decode(model, source, lengths, beam_size=3, max_length=6)  # (B, T), (B,)
    assert beam.size(0) == 2 and scores.shape == (2,) and torch.isfinite(scores).all()
    width_one, _ = beam_search_decode(model, source, lengths, beam_size=1, max_length=6)
    assert torch.equal(width_one, tokens)  # a beam of one is greedy decoding, the fed vector carried per row


PAIRS = load_pairs()[:24]  # a few bundled pairs: some land in the held-out split


@pytest.mark.slow
@pytest.mark.parametrize(
    "switches",
    [
        {"decoder": "bahdanau", "bidirectional": True},
        {"decoder": "bahdanau", "tie_embeddings": True},
        {"decoder": "luong", "input_feeding": True},
    ],
    ids=["bidirectional", "tied", "input-feeding"],
)
def test_a_resumed_run_with_each_switch_equals_an_uninterrupted_one(tmp_path, switches):
    def config(epochs: int) -> TrainConfig:
        return TrainConfig(hidden_size=8, batch_size=4, epochs=epochs, seed=1, **switches)

    quiet = dict(pairs=PAIRS, progress=False, log=lambda _: None, measure_bleu=False)
    whole = train(config(3), **quiet)
    train(config(2), checkpoint=tmp_path / "run", **quiet)
    resumed = train(config(3), checkpoint=tmp_path / "run", resume=True, **quiet)
    assert [e["loss"] for e in resumed.history] == [e["loss"] for e in whole.history]
    saved = load_checkpoint(tmp_path / "run")
    assert all(saved.config[name] == value for name, value in switches.items() if name != "decoder")
    assert all(saved.training["config"][name] == value for name, value in switches.items())


def test_a_switch_that_cannot_apply_is_refused_at_the_config():
    with pytest.raises(InputError, match=r"input feeding needs a decoder that feeds its output back \(luong\)"):
        TrainConfig(decoder="bahdanau", input_feeding=True)
    with pytest.raises(InputError, match="input feeding needs"):
        TrainConfig(decoder="gru", input_feeding=True)
    with pytest.raises(InputError, match="H must be even, got 7"):
        TrainConfig(decoder="bahdanau", hidden_size=7, bidirectional=True)
    with pytest.raises(InputError, match="H must be even"):
        EncoderRNN(10, 5, bidirectional=True)
    with pytest.raises(InputError, match="tie_embeddings must be bool, got 'yes'"):
        build_model("bahdanau", 11, 13, hidden_size=8, tie_embeddings="yes")
    with pytest.raises(InputError, match=r"input feeding needs .* \(luong\), not bahdanau"):
        build_model("bahdanau", 11, 13, hidden_size=8, input_feeding=True)


def test_a_checkpoint_saved_before_the_switches_loads_with_them_off(tmp_path):
    torch.manual_seed(0)
    vocabs = build_vocabularies(PAIRS)
    model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), hidden_size=8)
    for name in ("bidirectional", "tie_embeddings", "input_feeding"):
        del model.config[name]  # the config an older checkpoint saved
    save_checkpoint(tmp_path / "old", model, vocabs)
    loaded = load_checkpoint(tmp_path / "old").model
    assert not loaded.encoder.bidirectional and not loaded.decoder.input_feeding
    assert loaded.decoder.out.weight is not loaded.decoder.embedding.weight


@pytest.mark.slow
def test_export_refuses_input_feeding_and_exports_a_bidirectional_encoder(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime is in the test extra")
    import numpy as np

    from seq2seq_attention.translation.export import export_onnx

    vocabs = build_vocabularies(PAIRS)
    sizes = len(vocabs.source), len(vocabs.target)
    torch.manual_seed(0)
    with pytest.raises(InputError, match="without input feeding"):
        export_onnx(build_model("luong", *sizes, hidden_size=8, input_feeding=True), vocabs, tmp_path / "feeding")
    assert not (tmp_path / "feeding").exists()
    model = build_model("bahdanau", *sizes, hidden_size=8, bidirectional=True).eval()
    export_onnx(model, vocabs, tmp_path / "bi")  # rounds the model to float16 in place
    session = onnxruntime.InferenceSession(str(tmp_path / "bi" / "encoder.onnx"))
    ids = vocabs.source.encode(PAIRS[0].source)
    keys, hidden, _ = session.run(None, {"tokens": np.array([ids], dtype=np.int64)})
    with torch.no_grad():
        expected_keys, expected_hidden = model.encoder(torch.tensor([ids]))
    np.testing.assert_allclose(keys, expected_keys.numpy(), atol=1e-5)
    np.testing.assert_allclose(hidden, expected_hidden.numpy(), atol=1e-5)


# `build_model`, `EncoderRNN` and `TrainConfig` check each value's type before any rule that computes with it:
# `hidden_size="4"` with a bidirectional encoder must get the one clear `InputError`, not a `TypeError` from
# ``"4" % 2``; and a switch that cannot apply gets the same message from every door.
NOT_A_SIZE = st.one_of(
    st.none(),
    st.text(max_size=4),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.integers(max_value=0),
    st.integers(min_value=(1 << 20) + 1),
)


@settings(max_examples=60, deadline=None)
@given(
    decoder=st.sampled_from(sorted(DECODERS)),
    hidden_size=NOT_A_SIZE,
    bidirectional=st.booleans(),
    input_feeding=st.booleans(),
    tie_embeddings=st.booleans(),
)
def test_a_hidden_size_that_is_not_a_size_is_named_before_any_rule(
    decoder, hidden_size, bidirectional, input_feeding, tie_embeddings
):
    switches = dict(bidirectional=bidirectional, input_feeding=input_feeding, tie_embeddings=tie_embeddings)
    with pytest.raises(InputError, match=r"build_model: hidden_size must be int in \[1, 1048576\], got"):
        build_model(decoder, 5, 5, hidden_size=hidden_size, **switches)


@settings(max_examples=30, deadline=None)
@given(decoder=st.sampled_from(sorted(DECODERS)), odd=st.integers(0, 100).map(lambda n: 2 * n + 1))
def test_an_odd_size_gets_the_even_rule_everywhere(decoder, odd):
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        build_model(decoder, 5, 5, hidden_size=odd, bidirectional=True)
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        TrainConfig(decoder=decoder, hidden_size=odd, bidirectional=True)
    with pytest.raises(InputError, match=f"H must be even, got {odd}"):
        EncoderRNN(10, odd, bidirectional=True)


@pytest.mark.parametrize("decoder", sorted(name for name, kind in DECODERS.items() if not kind.feeds_input))
def test_input_feeding_gets_one_message_from_every_door(decoder):
    expected = r"input feeding needs a decoder that feeds its output back \(luong\)"
    for build in (
        lambda: build_model(decoder, 5, 5, hidden_size=8, input_feeding=True),
        lambda: TrainConfig(decoder=decoder, input_feeding=True),
    ):
        with pytest.raises(InputError, match=expected):
            build()
    with pytest.raises(TypeError, match="input_feeding"):  # its constructor takes only what it uses
        DECODERS[decoder].decoder(8, 5, input_feeding=True)
