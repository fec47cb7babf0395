"""`seq2seq-attention plot-attention`: the attention heatmap of one translated sentence."""

import argparse
from pathlib import Path

from ..core.files import check_destination
from ..model.defaults import MAX_LENGTH, MAX_STEPS
from ..translation.pretrained import DEFAULT_PRETRAINED, model_title
from . import COMMANDS
from .options import add_model_options, check_output_file, chosen_checkpoint, positive_int


def run_plot_attention(args: argparse.Namespace) -> int:
    from ..translation.plotting import plot_attention, save_figure, sentence_attention  # torch, matplotlib: to run
    from ..translation.translator import load_translator

    check_output_file(args.output, "--output", (".png", ".svg", ".pdf"))
    args.interrupted = lambda: f"nothing was written to {args.output} (an image lands whole or not at all)"
    translator = load_translator(chosen_checkpoint(args, DEFAULT_PRETRAINED), "cpu")
    source_words, output_words, weights = sentence_attention(
        translator.model, translator.vocabs, args.sentence, max_words=translator.max_words, max_length=args.max_length
    )  # weights: (T, S)
    # after the sentence's own checks (a bad sentence is reported first), before anything is drawn
    check_destination(args.output, "a file", overwrite=args.overwrite, what="--output")
    title = args.title or f"{model_title(translator.config)}: {' '.join(output_words)}"
    figure = plot_attention(weights, source_words, output_words, title=title)
    path = save_figure(figure, args.output)
    print(f"{' '.join(output_words)}\nwrote {path}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `plot-attention` command."""
    parser = subparsers.add_parser(
        "plot-attention",
        help=COMMANDS["plot-attention"][1],
        description=(
            "Translate one French sentence greedily with a trained attention model (luong or bahdanau) and "
            "draw its attention weights: source words across, generated words down. The image's folder is "
            "created when missing, like every command's output folder."
        ),
    )
    parser.add_argument("sentence", help="a French sentence, e.g. 'je suis fatigue .'")
    add_model_options(parser, DEFAULT_PRETRAINED, attention=True)
    parser.add_argument(
        "--output",
        "-o",
        type=Path,
        default=Path("attention.png"),
        help="image file to write: .png, .svg or .pdf (default: attention.png)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace the image that --output names")
    parser.add_argument(
        "--title",
        default=None,
        help="title over the heatmap (default: the model as `models` names it, and the translation)",
    )
    parser.add_argument(
        "--max-length",
        type=positive_int(MAX_STEPS),
        default=MAX_LENGTH,
        help=f"most output words, <eos> included (default: {MAX_LENGTH})",
    )
    parser.set_defaults(func=run_plot_attention)
