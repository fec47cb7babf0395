"""Figures of the sentiment classifier: the attention over the words of a few test sentences."""

import math
from collections.abc import Sequence
from pathlib import Path

import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.errors import InputError, echo
from ..core.files import staged_writes
from ..core.plotting import hangul_font
from .data import Example, encode_tokens, prepare_data, tokenize
from .predict import checkpoint_sources, load_classifier, predict


def pick_examples(examples: Sequence[Example], count: int, max_words: int) -> list[Example]:
    """The first `count` test sentences of 4 to `max_words` tokens, alternating negative and positive."""
    wanted = [e for e in examples if 4 <= len(tokenize(e.text)) <= max_words]
    negatives = [e for e in wanted if e.label == 0]
    positives = [e for e in wanted if e.label == 1]
    chosen = [e for pair in zip(negatives, positives, strict=False) for e in pair]
    return chosen[:count]


def _check_rows(words: object, weights: object, titles: object) -> None:
    """Sentences of words, one finite weight per word, one title per sentence; every row non-empty."""
    for name, value in (("words", words), ("weights", weights), ("titles", titles)):
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise InputError(f"{name} must be a list with one entry per sentence, got {type(value).__name__}")
    if not words or len(words) != len(weights) or len(words) != len(titles):
        raise InputError(
            f"need as many weight rows and titles as sentences (at least one), got {len(words)} sentences, "
            f"{len(weights)} weight rows and {len(titles)} titles"
        )
    for number, (row_words, row_weights, title) in enumerate(zip(words, weights, titles, strict=True), start=1):
        if isinstance(row_words, str | bytes) or not isinstance(row_words, Sequence):
            raise InputError(f"sentence {number}: words must be a list of strings, got {type(row_words).__name__}")
        if not all(isinstance(word, str) for word in row_words):
            raise InputError(f"sentence {number}: every word must be a string, got {echo(list(row_words))}")
        if not isinstance(title, str):
            raise InputError(f"sentence {number}: the title must be a string, got {type(title).__name__}")
        if isinstance(row_weights, str | bytes) or not isinstance(row_weights, Sequence):
            raise InputError(f"sentence {number}: weights must be a list of numbers, got {type(row_weights).__name__}")
        if not row_words or not row_weights:
            raise InputError(f"sentence {number} ({echo(title)}) has no words to draw: its attention row is empty")
        if len(row_words) != len(row_weights):
            raise InputError(f"{len(row_words)} words but {len(row_weights)} weights in {echo(title)}")
        numbers = [w for w in row_weights if isinstance(w, int | float) and not isinstance(w, bool)]
        if len(numbers) != len(row_weights) or not all(math.isfinite(w) and w >= 0 for w in numbers):
            raise InputError(f"sentence {number}: weights must be finite numbers >= 0, got {echo(list(row_weights))}")


def plot_word_attention(
    words: Sequence[Sequence[str]], weights: Sequence[Sequence[float]], titles: Sequence[str], path: Path
) -> None:
    """One row of coloured cells per sentence: the attention weight on each word, written in the cell.

    The figure is built with the object-oriented API on the Agg canvas, like `plot_attention`: no pyplot state.
    """
    _check_rows(words, weights, titles)
    width = max(len(w) for w in words)
    top = max(max(row) for row in weights)  # one colour scale for every row, so rows compare
    # about the site's column width (8 in at 110 dpi), so that words and weights stay readable there
    fig = Figure(figsize=(8.0, 1.25 * len(words)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(words), 1, squeeze=False)
    font = {"fontfamily": hangul_font()} if hangul_font() else {}
    for ax, row_words, row_weights, title in zip(axes[:, 0], words, weights, titles, strict=True):
        cells = torch.full((1, width), float("nan"))
        cells[0, : len(row_weights)] = torch.tensor(row_weights)
        ax.imshow(cells.numpy(), cmap="Oranges", vmin=0.0, vmax=top, aspect="auto")
        for j, weight in enumerate(row_weights):
            color = "white" if weight > 0.6 * top else "black"
            ax.text(j, 0, f"{weight:.2f}", ha="center", va="center", fontsize=11, color=color)
        ax.set_xticks(range(len(row_words)), row_words, fontsize=11, rotation=25, ha="right")
        ax.tick_params(length=0)
        ax.set_yticks([])
        ax.set_title(title, fontsize=12, loc="left", **font)
    fig.tight_layout()
    with staged_writes(Path(path)) as (staged,):
        fig.savefig(staged, dpi=110)


def attention_figure(checkpoint: Path, out: Path, count: int = 6, max_words: int = 12) -> list[dict[str, object]]:
    """Draw the attention over the words of a few test sentences of the checkpoint's sources.

    Returns one record per sentence (text, label, probability, words, weights). The sentences are
    read with the checkpoint's own vocabulary (today's tokenizer may give a word the model never saw:
    the figure shows it, marked); words outside that vocabulary (read by the model as `<unk>`) are
    marked with a trailing ``*``.
    """
    loaded = load_classifier(checkpoint)
    model, vocab = loaded.model, loaded.vocabs.source
    if loaded.config["kind"] != "attention":
        raise InputError(f"{checkpoint} holds a {loaded.config['kind']!r} classifier, which has no attention to draw")
    data = prepare_data(checkpoint_sources(loaded))
    chosen = pick_examples(data.test.examples, count, max_words)
    if not chosen:
        raise InputError(f"no test sentence of 4 to {max_words} words")
    tokens = [tokenize(e.text) for e in chosen]
    probs, weights = predict(model, [encode_tokens(vocab, t) for t in tokens])
    words = [[w if w in vocab.word2index else f"{w}*" for w in row] for row in tokens]
    titles = [
        f"정답 {'긍정' if e.label else '부정'}, P(긍정) = {p:.2f}"
        if hangul_font()
        else f"label {'positive' if e.label else 'negative'}, P(positive) = {p:.2f}"
        for e, p in zip(chosen, probs, strict=True)
    ]
    plot_word_attention(words, weights, titles, out)
    return [
        {"text": e.text, "label": e.label, "p_positive": round(p, 4), "words": w, "weights": [round(x, 4) for x in a]}
        for e, p, w, a in zip(chosen, probs, words, weights, strict=True)
    ]
