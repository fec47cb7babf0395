"""Every command's --help: a description, each default stated once, the --score choices listed, required options
shown as required; one --threads default for both trainers."""

import argparse
import re

import pytest

from seq2seq_attention.cli import build_parser, main
from seq2seq_attention.cli.options import DEFAULT_THREADS
from seq2seq_attention.translation.decoders import DECODERS


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices)


@pytest.mark.parametrize("name", sorted(commands()))
def test_each_command_has_a_description_and_states_each_default_once(name):
    command = commands()[name]
    assert command.description and len(command.description) > 40, name
    text = " ".join(command.format_help().split())
    assert "(default: None)" not in text
    for action in command._actions:
        assert (action.help or "").count("(default:") <= 1, (name, action.dest, action.help)
    assert not re.search(r"\(default: [^)]*\) \(default:", text), name


def test_score_help_lists_the_choices_of_each_decoder():
    help_text = " ".join(commands()["train"].format_help().split())
    assert "DECODERS" not in help_text
    for name, kind in DECODERS.items():
        if kind.scores:
            assert f"{name}: {', '.join(kind.scores)} (default {kind.scores[0]})" in help_text
        else:
            assert f"{name} has no attention" in help_text


def test_required_options_are_shown_as_required():
    for name in ("export-onnx", "sentiment-attention-figure"):
        help_text = commands()[name].format_help()
        assert "required arguments:\n  --out" in help_text or "required arguments:\n  --checkpoint" in help_text, name


def test_both_trainers_share_one_thread_default_and_say_why():
    parsed = {
        name: build_parser().parse_args([name, *args])
        for name, args in (("train", ["--checkpoint", "x"]), ("sentiment-train", []))
    }
    assert parsed["train"].threads == parsed["sentiment-train"].threads == DEFAULT_THREADS
    helps = {name: next(a.help for a in commands()[name]._actions if a.dest == "threads") for name in parsed}
    assert helps["train"] == helps["sentiment-train"] and "measured" in helps["train"]


def test_plot_attention_refuses_a_missing_folder_and_creates_nothing(tmp_path, capsys):
    target = tmp_path / "missing" / "dir" / "a.png"
    assert main(["plot-attention", "je suis fatigue .", "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist; create it first" in err and str(target.parent) in err
    assert not (tmp_path / "missing").exists()
