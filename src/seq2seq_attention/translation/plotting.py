"""Attention heatmaps: which source word each generated word looked at.

Figures are built with the object-oriented API on the Agg canvas (`matplotlib.figure.Figure`
with `FigureCanvasAgg`): no pyplot state, no display needed, safe in scripts and tests.
"""

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.batching import collate
from ..core.checks import Call, checked, checks_of
from ..core.errors import InputError, echo
from ..core.files import staged_writes
from ..core.plotting import label
from ..core.vocabulary import Vocabularies
from ..model.search import MAX_LENGTH, greedy_decode
from ..model.seq2seq import Seq2Seq
from ..model.tokens import EOS_IDX
from .corpus import MAX_WORDS
from .translator import check_steps, check_translator, prepare_sentences

ATTENTION_CMAP = "gray"
"""The heatmaps' colormap: the site's one grey scale (0 black, 1 white), which `docs/assets/javascripts/greyscale.js`
draws the same way for the stepper and the live page."""


def _check_words(source_words: object, output_words: object) -> None:
    for name, words in (("source_words", source_words), ("output_words", output_words)):
        if isinstance(words, str | bytes) or not isinstance(words, Sequence):
            raise InputError(f"{name} must be a list of strings, got {type(words).__name__}")
        if not all(isinstance(word, str) for word in words):
            raise InputError(f"{name} must be a list of strings, got {echo(list(words), 80)}")


def _check_plot(call: Call) -> None:
    """The weights (T, S) as a tensor or array, and T output words and S source words to label them."""
    weights, source_words, output_words = call.weights, call.source_words, call.output_words
    _check_words(source_words, output_words)
    matrix = weights.detach().float().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
    if matrix.ndim != 2:
        raise InputError(f"weights must be (T, S), got shape {tuple(matrix.shape)}")
    T, S = matrix.shape
    if len(output_words) != T or len(source_words) != S:
        raise InputError(
            f"weights are (T, S) = ({T}, {S}) but got {len(output_words)} output words "
            f"and {len(source_words)} source words"
        )


@checked(_check_plot)
# --8<-- [start:plot_attention]
def plot_attention(
    weights: torch.Tensor | np.ndarray,
    source_words: Sequence[str],
    output_words: Sequence[str],
    *,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw an attention matrix as a heatmap: source words across, generated words down.

    Row i is the attention distribution of output step i over the source positions (the course
    notes' figure): dark is weight 0, bright is weight 1, the colour scale is fixed to [0, 1]
    so that two heatmaps can be compared by eye. The axis labels are Korean where a Hangul font
    is installed (`core.plotting`), English otherwise.

    Args:
        weights: the attention of one sentence, e.g. `attentions[b, :T, :S]` from a decoder.
        source_words: the S source tokens (columns), `<eos>` included if it was encoded.
        output_words: the T generated tokens (rows).
        title: optional title over the axes.
        ax: draw into these axes (e.g. one panel of a side-by-side figure); a new figure
            is made when None.

    Returns:
        The figure that holds the heatmap.

    Shapes:
        weights: (T, S).

    Raises:
        InputError: weights that are not 2-D, or word lists that do not match its sizes.
    """
    matrix = weights.detach().float().cpu().numpy() if isinstance(weights, torch.Tensor) else np.asarray(weights)
    T, S = matrix.shape
    if ax is None:
        figure = Figure(figsize=(0.6 * S + 2.0, 0.5 * T + 1.5), layout="constrained")
        FigureCanvasAgg(figure)
        ax = figure.add_subplot()
    figure = ax.get_figure()

    image = ax.imshow(matrix, cmap=ATTENTION_CMAP, vmin=0.0, vmax=1.0, aspect="auto")  # one grey cell per weight
    ax.set_xticks(range(S), labels=list(source_words), rotation=90)
    ax.set_yticks(range(T), labels=list(output_words))
    xlabel, font = label("원문 (프랑스어)", "source")
    ax.set_xlabel(xlabel, **font)
    ax.set_ylabel(*label("번역 (영어)", "output"))
    if title:
        ax.set_title(title, **font)
    figure.colorbar(image, ax=ax, fraction=0.05)
    return figure


# --8<-- [end:plot_attention]


def save_figure(figure: Figure, path: str | Path, dpi: int = 120) -> Path:
    """Write a figure to `path` (PNG by extension), creating the parent folder.

    The image is written to a staging folder and renamed over `path` once complete
    (`core.files.staged_writes`), so a failure leaves an older image as it was.
    """
    path = Path(path)
    with staged_writes(path) as (staged,):
        figure.savefig(staged, dpi=dpi)
    return path


def _check_sentence_attention(call: Call) -> None:
    """A translator with attention, its vocabularies, one sentence and the numbers `translate` takes."""
    model = call.model
    check_translator(model, call.vocabs)
    if model.decoder.attention is None:
        raise InputError(f"the {type(model.decoder).__name__} decoder has no attention to plot; use an attention model")
    check_steps(call.max_length)
    checks_of(prepare_sentences, call.vocabs, [call.sentence], call.max_words, call.unknown)


@checked(_check_sentence_attention)
# --8<-- [start:sentence_attention]
def sentence_attention(
    model: Seq2Seq,
    vocabs: Vocabularies,
    sentence: str,
    *,
    max_words: int = MAX_WORDS,
    max_length: int = MAX_LENGTH,
    unknown: str = "error",
) -> tuple[list[str], list[str], torch.Tensor]:
    """Translate one French sentence greedily and return what each output word attended to.

    Args:
        model: a trained `Seq2Seq` whose decoder has attention (`luong`, `bahdanau`).
        vocabs: its vocabularies.
        sentence: a French sentence; normalised like the training data.
        max_words: the longest sentence accepted (the training filter's limit).
        max_length: the most output words, `<eos>` included.
        unknown: ``"error"`` rejects an unknown word, ``"unk"`` reads it as `<unk>`.

    Returns:
        The S source tokens (with `<eos>`), the T output tokens (up to and with the first
        `<eos>`), and their attention weights.

    Shapes:
        weights: (T, S), on the CPU; every row sums to 1.

    Raises:
        InputError: a bad sentence (see `translator.prepare_sentences`), or a decoder without attention.
    """
    (indices,) = prepare_sentences(vocabs, [sentence], max_words, unknown)
    device = next(model.parameters()).device
    model.eval()
    batch = collate([(indices, [EOS_IDX])]).to(device)
    tokens, attentions = greedy_decode(model, batch.source, batch.lengths, max_length)  # (1, T), (1, T, S)
    row = tokens[0].tolist()
    steps = row.index(EOS_IDX) + 1 if EOS_IDX in row else len(row)
    source_words = [vocabs.source.index2word[i] for i in indices]
    output_words = [vocabs.target.index2word[i] for i in row[:steps]]
    return source_words, output_words, attentions[0, :steps].cpu()  # (T, S)


# --8<-- [end:sentence_attention]
