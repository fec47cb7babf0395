"""plot_attention: the figure holds the matrix and the words, and bad input is a clear error."""

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from support import tiny_translator

from seq2seq_attention.core.errors import InputError
from seq2seq_attention.translation.plotting import plot_attention, save_figure

SOURCE = ["je", "suis", "fatigue", ".", "<eos>"]
OUTPUT = ["i", "m", "tired", ".", "<eos>"]


def weights(T=5, S=5):
    torch.manual_seed(0)
    return torch.softmax(torch.randn(T, S), dim=-1)


def test_returns_a_figure_with_the_matrix_and_the_words():
    w = weights()
    figure = plot_attention(w, SOURCE, OUTPUT, title="dot")
    assert isinstance(figure, Figure)
    assert isinstance(figure.canvas, FigureCanvasAgg)
    ax = figure.axes[0]
    np.testing.assert_allclose(ax.images[0].get_array(), w.numpy())
    assert ax.images[0].get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == SOURCE
    assert [t.get_text() for t in ax.get_yticklabels()] == OUTPUT
    assert ax.get_title() == "dot"


def test_rectangular_and_numpy_and_into_given_axes(tmp_path):
    figure = Figure()
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    w = weights(T=3, S=5).numpy()
    assert plot_attention(w, SOURCE, OUTPUT[:3], ax=right) is figure
    assert right.images and not left.images
    path = save_figure(figure, tmp_path / "sub" / "map.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gradient_tensors_are_accepted_and_drawn_as_they_are():
    w = weights().requires_grad_()
    figure = plot_attention(w * 1, SOURCE, OUTPUT)
    drawn = figure.axes[0].images[0].get_array()
    assert drawn.shape == (5, 5) and torch.allclose(torch.as_tensor(drawn), w.detach())
    assert w.grad is None  # drawing does not touch the graph


def test_axis_labels_are_korean_with_a_hangul_font_and_english_without(monkeypatch):
    from seq2seq_attention.core import plotting as fonts

    axis = plot_attention(weights(), SOURCE, OUTPUT).axes[0]
    korean = fonts.hangul_font() is not None
    assert axis.get_xlabel() == ("원문 (프랑스어)" if korean else "source")
    monkeypatch.setattr(fonts, "hangul_font", lambda: None)
    assert plot_attention(weights(), SOURCE, OUTPUT).axes[0].get_ylabel() == "output"


@pytest.mark.parametrize(
    ("w", "src", "out", "message"),
    [
        (torch.ones(2, 3, 4), SOURCE, OUTPUT, r"weights must be \(T, S\), got shape \(2, 3, 4\)"),
        (torch.ones(5, 5), SOURCE[:4], OUTPUT, r"\(T, S\) = \(5, 5\) but got 5 output words and 4 source words"),
        (torch.ones(5, 5), SOURCE, OUTPUT[:2], r"but got 2 output words"),
    ],
)
def test_mismatches_are_user_errors(w, src, out, message):
    with pytest.raises(InputError, match=message):
        plot_attention(w, src, out)


def tiny_checkpoint(tmp_path, decoder):
    from seq2seq_attention.core.checkpoint import save_checkpoint
    from seq2seq_attention.translation.corpus import Pair, build_vocabularies

    pairs = [Pair("je suis fatigue .", "i m tired ."), Pair("il est grand .", "he is tall .")]
    vocabs = build_vocabularies(pairs)
    model = tiny_translator(decoder, vocabs)
    return save_checkpoint(tmp_path / decoder, model, vocabs), model, vocabs


@pytest.mark.parametrize("decoder", ["luong", "bahdanau"])
def test_sentence_attention_rows_are_distributions(tmp_path, decoder):
    from seq2seq_attention.translation.plotting import sentence_attention

    _, model, vocabs = tiny_checkpoint(tmp_path, decoder)
    source, output, w = sentence_attention(model, vocabs, "Je suis fatigué.", max_length=4)
    assert source == ["je", "suis", "fatigue", ".", "<eos>"]
    assert 1 <= len(output) <= 4
    assert w.shape == (len(output), 5)
    torch.testing.assert_close(w.sum(-1), torch.ones(len(output)))


def test_the_cli_draws_a_heatmap_and_rejects_bad_input(tmp_path, capsys):
    from seq2seq_attention.cli import main

    path, _, _ = tiny_checkpoint(tmp_path, "bahdanau")
    out = tmp_path / "map.png"
    assert main(["plot-attention", "il est grand .", "--checkpoint", str(path), "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert f"wrote {out}" in capsys.readouterr().out

    gru, _, _ = tiny_checkpoint(tmp_path, "gru")
    cases = [
        (["il est grand .", "--checkpoint", str(gru)], "DecoderRNN decoder has no attention"),
        (["il est petit .", "--checkpoint", str(path)], "unknown fra word(s) 'petit'"),
        (["   ", "--checkpoint", str(path)], "empty after normalisation"),
        (["il est grand .", "--checkpoint", str(tmp_path / "nothing")], "no checkpoint at"),
        (["il est grand .", "--checkpoint", str(path), "-o", str(tmp_path / "x.txt")], "must end in .png"),
    ]
    for argv, message in cases:
        assert main(["plot-attention", *argv, "-o", str(out)] if "-o" not in argv else ["plot-attention", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("seq2seq-attention plot-attention: error:") and message in err, err
        assert "\n" not in err


@pytest.mark.parametrize("name", ["a" * 300 + ".png", "a" * 252 + ".png"])  # the second leaves no room to set aside
def test_save_figure_refuses_a_name_too_long_before_writing(tmp_path, name):
    figure = plot_attention(weights(), SOURCE, OUTPUT)
    with pytest.raises(InputError, match=rf"the name .* is {len(name)} bytes long; names here hold at most"):
        save_figure(figure, tmp_path / "figures" / name)
    assert list(tmp_path.iterdir()) == []
