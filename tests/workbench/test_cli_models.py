"""Packaged models by name from any directory (`--model`), the `models` listing read from the checkpoints'
own records, and `python -m seq2seq_attention`."""

import json
import re
import subprocess
import sys

import pytest
from support import ROOT

from seq2seq_attention.cli import main
from seq2seq_attention.translation.pretrained import (
    DEFAULT_PRETRAINED,
    PRETRAINED_DIR,
    packaged_max_words,
    packaged_names,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_packaged_models_are_the_folders_that_hold_a_checkpoint():
    names = packaged_names()
    assert DEFAULT_PRETRAINED in names and len(names) >= 2
    assert all((PRETRAINED_DIR / name / "checkpoint.json").is_file() for name in names)


@pytest.mark.slow
def test_translate_by_model_name_from_the_root_directory():
    result = subprocess.run(
        [sys.executable, "-m", "seq2seq_attention", "translate", "--model", "bahdanau-bi", "je suis fatigue ."],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    assert line.startswith("i ") and line.endswith(" ."), line


@pytest.mark.slow
def test_module_help_lists_every_command():
    result = subprocess.run(
        [sys.executable, "-m", "seq2seq_attention", "--help"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and result.stdout.startswith("usage: seq2seq-attention")
    for command in ("train", "translate", "models", "plot-attention", "export-onnx", "sentiment-train"):
        assert f"    {command}" in result.stdout, command


@pytest.mark.parametrize("name", packaged_names())
def test_each_model_translates_by_name(name, capsys):
    assert main(["translate", "--model", name, "il est grand ."]) == 0
    assert capsys.readouterr().out.strip().startswith("he ")


def test_model_and_checkpoint_exclude_each_other_and_an_unknown_name_lists_the_choices(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "--model", "gru", "--checkpoint", str(tmp_path), "je suis la ."])
    assert exit_info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "--model", "transformer", "je suis la ."])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "invalid choice: 'transformer'" in err
    assert all(name in err for name in packaged_names())


def test_models_lists_each_model_with_the_bleu_its_checkpoint_records(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100  # readable in a terminal of 100 columns
    table, limits = out.split("\n\n")
    head, *lines = table.splitlines()
    assert "BLEU [its 95% bootstrap interval]" in head and len(lines) == 2 * len(packaged_names())
    for name, first, second in zip(packaged_names(), lines[::2], lines[1::2], strict=True):
        record = json.loads((PRETRAINED_DIR / name / "checkpoint.json").read_text(encoding="utf-8"))
        evaluation, config = record["training"]["evaluation"], record["config"]
        low, high = evaluation["bleu_interval"]
        assert first.split()[0].rstrip(":") == name and (("(default)" in first) is (name == DEFAULT_PRETRAINED))
        assert second.startswith(f"    BLEU {evaluation['bleu']:.2f} [{low:.2f}, {high:.2f}]")
        assert f"exact match {evaluation['exact_match']:.3f}" in second
        assert f"H={config['hidden_size']}" in first and f"{evaluation['pairs']} pairs" in second
        assert ("no attention" in first) is (config["decoder"] == "gru")
        assert ("bidirectional" in first) is bool(config.get("bidirectional"))
        assert second.endswith(f"at most {record['training']['config']['max_words']} words")
    assert limits.startswith(f"The packaged models take sentences of at most {packaged_max_words()} words")


def test_the_limits_are_said_in_models_translate_help_and_readme_and_their_examples_translate(capsys):
    """`models`, `translate --help` and README say what the packaged models take, with the limit their records hold;
    the two examples they give translate with every packaged model, and a longer sentence is still refused."""
    longest = packaged_max_words()
    assert main(["models"]) == 0
    limits = " ".join(capsys.readouterr().out.split("\n\n")[1].split())
    examples = re.findall(r"'([^']+)'", limits.split("Two that work:", 1)[1])
    assert len(examples) == 2
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert limits in help_text  # the same paragraph
    assert f"at most {longest} words, punctuation counted" in limits and "no questions" in limits
    assert f"at most {longest} words, punctuation counted" in readme and "no questions" in readme
    assert all(f"`{example}`" in readme for example in examples)
    for name in packaged_names():
        assert main(["translate", "--model", name, *examples]) == 0
        assert all(line.strip() for line in capsys.readouterr().out.splitlines())
    too_long = "je suis " + " ".join(["tres"] * (longest - 2)) + " ."
    assert main(["translate", too_long]) == 2
    assert f"the model was trained on at most {longest}" in capsys.readouterr().err
