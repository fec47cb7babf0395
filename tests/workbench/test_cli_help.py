"""Every command's --help: a description, each default stated once, the --score choices listed, required options
shown as required; one --threads default for both trainers, stated the same way in both."""

import re

import pytest
import torch

from seq2seq_attention.cli import main
from seq2seq_attention.model.decoders import DECODERS
from seq2seq_attention.model.names import ATTENTION_DECODERS, DEFAULT_SCORES, SCORE_NAMES
from seq2seq_attention.model.scores import SCORES


def help_of(capsys, *command: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def commands(capsys) -> list[str]:
    listing = help_of(capsys).split("positional arguments:", 1)[1].split("options:", 1)[0]
    return re.findall(r"^    (\S+)", listing, flags=re.M)


def test_each_command_has_a_description_and_states_each_default_once(capsys):
    names = commands(capsys)
    assert {"train", "translate", "models", "plot-attention", "sentiment-predict"} <= set(names)
    for name in names:
        text = help_of(capsys, name)
        description = text.split("\n\n", 2)[1]  # usage, then the description paragraph
        assert not description.startswith(("positional arguments:", "options:")) and len(description) > 40, name
        flat = " ".join(text.split())
        assert "(default: None)" not in flat, name
        assert not re.search(r"\(default: [^)]*\)[^-]*?\(default:", flat), name  # no option states two defaults


def test_score_help_lists_the_choices_of_each_decoder(capsys):
    help_text = " ".join(help_of(capsys, "train").split())
    assert "DECODERS" not in help_text
    for name, kind in DECODERS.items():
        if kind.scores:
            assert f"{name}: {', '.join(kind.scores)} (default {kind.scores[0]})" in help_text
        else:
            assert f"{name} has no attention" in help_text


def test_the_names_help_reads_without_torch_are_the_registries_names():
    """`--help` and `TrainConfig` take the decoders' and scores' names from `model.names` (no torch); the
    tables that hold the classes must name the same ones, in the same order, and the same default scores."""
    assert tuple(SCORES) == SCORE_NAMES
    assert DEFAULT_SCORES == {name: DECODERS[name].default_score for name in ATTENTION_DECODERS}


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["translate", "--modle", "gru", "x"],
            "translate: error: unrecognized arguments: --modle; did you mean --model?",
        ),
        (["train", "--checkpoint", "c", "--hiden-size", "8"], "did you mean --hidden-size?"),
        (["tarnslate", "x"], "did you mean 'translate'?"),
        (["translate", "--model", "bahdnau", "x"], "did you mean 'bahdanau'?"),
        (
            ["export-onnx", "--model", "gru", "--out", "x"],
            "invalid choice: 'gru' (choose from 'bahdanau', 'bahdanau-bi')",
        ),
    ],
)
def test_a_mistyped_option_or_choice_gets_a_suggestion_in_one_line(argv, said, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and said in err, err


def test_required_options_are_shown_as_required(capsys):
    assert "required arguments:\n  --out" in help_of(capsys, "export-onnx")
    assert "required arguments:\n  --checkpoint" in help_of(capsys, "sentiment-attention-figure")


class _Stop(Exception):
    """Raised where the trainer would load its data: the thread count is set by then."""


@pytest.mark.usefixtures("one_thread")
def test_both_trainers_train_on_one_thread_by_default_and_say_why(capsys, monkeypatch, tmp_path):
    seen = {}

    def stop(name):
        def loader(*args, **kwargs):
            seen[name] = torch.get_num_threads()
            raise _Stop

        return loader

    monkeypatch.setattr("seq2seq_attention.translation.train.load_pairs", stop("train"))
    monkeypatch.setattr("seq2seq_attention.sentiment.train.prepare_data", stop("sentiment-train"))
    for argv in (["train", "--checkpoint", str(tmp_path / "t")], ["sentiment-train"]):
        torch.set_num_threads(2)
        with pytest.raises(_Stop):
            main(argv)
    assert seen == {"train": 1, "sentiment-train": 1}
    helps = [
        " ".join(help_of(capsys, name).split("--threads THREADS", 2)[2].split("\n  --", 1)[0].split())
        for name in ("train", "sentiment-train")
    ]
    assert helps[0] == helps[1] and "(default: 1" in helps[0] and "measured" in helps[0], helps


@pytest.mark.slow
def test_one_rule_for_missing_folders_every_writer_creates_them_and_a_failure_leaves_none(tmp_path, capsys):
    """`plot-attention` and `train` alike create the folders they write into, and remove them when they fail."""
    target = tmp_path / "missing" / "dir" / "a.png"
    assert main(["plot-attention", "je suis un xylophoniste .", "-o", str(target)]) == 2  # refused sentence
    assert "xylophoniste" in capsys.readouterr().err and not (tmp_path / "missing").exists()
    assert main(["plot-attention", "je suis fatigue .", "-o", str(target)]) == 0
    assert target.is_file() and str(target) in capsys.readouterr().out
    checkpoint = tmp_path / "nodir" / "x" / "mine"
    assert main(["train", "--checkpoint", str(checkpoint), "--max-words", "1", "--no-progress"]) == 2  # no pairs
    assert "no training pairs" in capsys.readouterr().err and not (tmp_path / "nodir").exists()
    for command in ("plot-attention", "train", "sentiment-attention-figure", "export-onnx", "sentiment-train"):
        text = " ".join(help_of(capsys, command).split())
        assert "existing folder" not in text and "create it first" not in text, command
