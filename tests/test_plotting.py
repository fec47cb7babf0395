"""plot_attention: the figure holds the matrix and the words, and bad input is a clear error."""

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from seq2seq_attention.errors import UserError
from seq2seq_attention.plotting import plot_attention, save_figure

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


def test_gradient_tensors_are_accepted():
    w = weights().requires_grad_()
    plot_attention(w * 1, SOURCE, OUTPUT)


@pytest.mark.parametrize(
    ("w", "src", "out", "message"),
    [
        (torch.ones(2, 3, 4), SOURCE, OUTPUT, r"weights must be \(T, S\), got shape \(2, 3, 4\)"),
        (torch.ones(5, 5), SOURCE[:4], OUTPUT, r"\(T, S\) = \(5, 5\) but got 5 output words and 4 source words"),
        (torch.ones(5, 5), SOURCE, OUTPUT[:2], r"but got 2 output words"),
    ],
)
def test_mismatches_are_user_errors(w, src, out, message):
    with pytest.raises(UserError, match=message):
        plot_attention(w, src, out)
