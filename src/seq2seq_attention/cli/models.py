"""`seq2seq-attention models`: the packaged translators, what each is and what sentences it takes.

This module imports neither torch nor matplotlib: it reads the checkpoints' records only
(`translation.pretrained`), so `models` answers at once.
"""

import argparse
import textwrap

from ..translation.pretrained import DEFAULT_PRETRAINED, describe_packaged, packaged_max_words, packaged_names
from . import COMMANDS

EXAMPLES = ("je suis fatigue .", "il est en retard .")
"""Two sentences every packaged model translates (a test runs them)."""


def limits() -> str:
    """What the packaged models accept, with the longest sentence read from their records (`--help`, `models`)."""
    longest = packaged_max_words()
    return (
        f"The packaged models take sentences of at most {longest} words, punctuation counted ('je suis fatigue .' "
        "is 4), made of the words of their training pairs: short French statements about a person, as the "
        "tutorial's filter keeps them (English side starting 'i am', 'he is', 'she is', 'we are', 'you are', "
        "'they are'), such as 'je suis ...', 'il est ...', 'elle est ...', 'nous sommes ...'; no questions, and "
        "capitals and accents are dropped. Two that work: " + " and ".join(f"'{e}'" for e in EXAMPLES) + "."
    )


LIMITS = limits()


WIDTH = 100
"""The widest line `models` prints: each model is two lines, its paragraph is wrapped."""


def run_models(args: argparse.Namespace) -> int:
    """List the packaged models, two lines each: name and what it is; the BLEU its own record holds, the exact
    match, where they were measured and the longest sentence it takes. Then what they accept."""
    print("The packaged models (--model NAME); BLEU [its 95% bootstrap interval] on the held-out split:")
    for name in packaged_names():
        model = describe_packaged(name)
        shown = f"{name} (default)" if name == DEFAULT_PRETRAINED else name
        scores = "BLEU -" if model.bleu is None else f"BLEU {model.bleu:.2f}"
        if model.bleu_interval is not None:
            scores += f" [{model.bleu_interval[0]:.2f}, {model.bleu_interval[1]:.2f}]"
        if model.exact_match is not None:
            scores += f", exact match {model.exact_match:.3f}"
        longest = "" if model.max_words is None else f"; at most {model.max_words} words"
        print(f"{shown}: {model.summary}\n    {scores} on {model.split}{longest}")
    print("\n" + textwrap.fill(LIMITS, WIDTH, break_on_hyphens=False))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `models` command."""
    models_parser = subparsers.add_parser(
        "models",
        help=COMMANDS["models"][1],
        description=(
            "List the translators shipped in the package (the names --model takes), what each is, the BLEU "
            "and exact match measured on its held-out split when it was trained (read from its checkpoint), "
            "and the longest sentence it takes. " + LIMITS
        ),
    )
    models_parser.set_defaults(func=run_models)
