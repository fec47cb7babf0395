"""`seq2seq-attention train` and `translate`: help, the packaged checkpoint, one-line errors with exit code 2."""

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seq2seq_attention.cli import main
from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR, default_checkpoint

pytestmark = pytest.mark.usefixtures("one_thread")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["train", "translate"])
def test_help(command: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: seq2seq-attention {command}" in out and "--checkpoint" in out


def test_packaged_checkpoints_load():
    assert default_checkpoint().parent == PRETRAINED_DIR
    for name in ("gru", "bahdanau"):
        checkpoint = load_checkpoint(PRETRAINED_DIR / name)
        assert checkpoint.config["decoder"] == name
        assert checkpoint.training["config"]["max_words"] == 6


def test_translate_with_the_packaged_checkpoint(capsys):
    code, out, err = run(capsys, "translate", "je suis fatigue .", "Nous sommes en retard.")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2 and all(line.split()[-1] in {".", "!", "?"} for line in lines)
    assert lines[0].startswith("i ")
    code, out, _ = run(capsys, "translate", "--json", "je suis fatigue .")
    assert code == 0 and json.loads(out)[0]["source"] == "je suis fatigue ."


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        ("je suis un xylophoniste .", "unknown fra word(s) 'xylophoniste'"),
        ("", "sentence 1 is empty"),
        ("   ", "sentence 1 is empty"),
        ("je suis tres tres tres tres fatigue .", "has 8 words"),
        ("我很累", "letters outside the Latin alphabet (很我累)"),
        ("Я устал.", "letters outside the Latin alphabet"),
        ("je suis 피곤 .", "letters outside the Latin alphabet (곤피)"),
    ],
)
def test_translate_bad_input_is_one_line_and_exit_2(sentence: str, message: str, capsys):
    code, out, err = run(capsys, "translate", sentence)
    assert code == 2 and out == "\n"  # the refused sentence's (empty) line keeps the output aligned
    assert err.count("\n") == 1 and err.startswith("seq2seq-attention translate: error: ")
    assert message in err
    code, out, err = run(capsys, "translate", "--all-or-nothing", sentence)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_translate_reads_stdin_and_skips_blank_lines(capsys, monkeypatch: pytest.MonkeyPatch):
    import io
    import sys

    text = "je suis fatigue .\n\nil est grand .\n\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    code, out, err = run(capsys, "translate")
    assert code == 0 and err == ""
    lines = out.split("\n")[:-1]
    assert len(lines) == 4 and lines[1] == lines[3] == "" and lines[0] and lines[2]  # blank in, blank out


def test_translate_bad_checkpoint(tmp_path: Path, capsys):
    code, _, err = run(capsys, "translate", "--checkpoint", str(tmp_path / "none"), "je suis fatigue .")
    assert code == 2 and "does not exist" in err and err.count("\n") == 1
    broken = tmp_path / "broken"
    shutil.copytree(PRETRAINED_DIR / "gru", broken)
    weights = next(broken.glob("model-*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:1000])
    code, _, err = run(capsys, "translate", "--checkpoint", str(broken), "je suis fatigue .")
    assert code == 2 and "corrupted or truncated" in err and err.count("\n") == 1


def test_train_then_translate(tmp_path: Path, capsys):
    checkpoint = tmp_path / "tiny"
    code, out, err = run(
        capsys,
        "train",
        "--decoder",
        "bahdanau",
        "--hidden-size",
        "8",
        "--epochs",
        "1",
        "--batch-size",
        "512",
        "--checkpoint",
        str(checkpoint),
        "--no-progress",
        "--device",
        "cpu",
        "--schedule",
        "cosine",
        "--label-smoothing",
        "0.1",
    )
    assert code == 0, err
    assert "5318 pairs (4853 train, 465 held out)" in out and "| epoch:   1 |" in out and "held-out BLEU" in out
    assert (checkpoint / "checkpoint.json").is_file()
    saved = json.loads((checkpoint / "checkpoint.json").read_text(encoding="utf-8"))
    assert '"schedule": "cosine"' in json.dumps(saved) and '"label_smoothing": 0.1' in json.dumps(saved)
    assert list(checkpoint.glob("training-*")) == []  # weights only unless --keep-training-state
    code, out, err = run(capsys, "translate", "--checkpoint", str(checkpoint), "je suis fatigue .")
    assert code == 0 and len(out.splitlines()) == 1


def test_beam_search_from_the_cli(capsys):
    sentences = ["je suis fatigue .", "il est tres intelligent ."]
    code, greedy, err = run(capsys, "translate", *sentences)
    assert code == 0 and err == ""
    code, beam1, _ = run(capsys, "translate", "--beam-size", "1", *sentences)
    assert beam1 == greedy, "a beam of width 1 is greedy decoding"
    code, beam, err = run(capsys, "translate", "--beam-size", "4", "--length-penalty", "0.5", *sentences)
    assert code == 0 and err == "" and len(beam.splitlines()) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", "--beam-size", "0", *sentences])
    assert exit_info.value.code == 2 and "argument --beam-size: must lie in [1, 1000], got 0" in capsys.readouterr().err


def test_bad_train_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--checkpoint", "x", "--teacher-forcing-ratio", "2"])
    assert exit_info.value.code == 2
    assert "must lie in [0, 1]" in capsys.readouterr().err


def test_console_script_runs_as_a_process():
    result = subprocess.run(
        [sys.executable, "-m", "seq2seq_attention.cli", "translate", "je suis un xylophoniste ."],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "xylophoniste" in result.stderr


def test_translate_reads_stdin(capsys, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("je suis fatigue .\nil est jeune .\n"))
    code, out, err = run(capsys, "translate")
    assert code == 0, err
    assert len(out.splitlines()) == 2


class _Terminal(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def test_translate_at_a_terminal_says_it_reads_standard_input_and_how_to_end_it(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Terminal(io.BytesIO(b"je suis fatigue .\n"), encoding="utf-8"))
    code, out, err = run(capsys, "translate")
    assert code == 0 and out.startswith("i ") and err.count("\n") == 1
    assert "reading French sentences from standard input, one per line" in err and "end with Ctrl-D" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"je suis fatigue .\n"), encoding="utf-8"))
    assert run(capsys, "translate")[2] == ""  # a pipe: nothing said


def test_plot_attention_offers_only_models_with_attention_and_titles_them_as_models_does(tmp_path, capsys, monkeypatch):
    from matplotlib.axes import Axes

    from seq2seq_attention.translation.pretrained import packaged_names

    with pytest.raises(SystemExit):
        main(["plot-attention", "--help"])
    choices = capsys.readouterr().out.split("--model {", 1)[1].split("}", 1)[0].split(",")
    assert choices == list(packaged_names(attention=True)) and "gru" not in choices and "bahdanau-bi" in choices
    with pytest.raises(SystemExit) as exit_info:
        main(["plot-attention", "--model", "gru", "je suis fatigue ."])
    assert exit_info.value.code == 2 and "invalid choice: 'gru'" in capsys.readouterr().err
    assert "gru" in packaged_names()  # translate still takes it
    titles = []
    real = Axes.set_title
    monkeypatch.setattr(Axes, "set_title", lambda self, title, **k: titles.append(title) or real(self, title, **k))
    for name in ("bahdanau", "bahdanau-bi"):
        code, out, err = run(
            capsys, "plot-attention", "--model", name, "je suis fatigue .", "-o", str(tmp_path / "a.svg"), "--overwrite"
        )
        assert code == 0, err
    assert [title.split(":")[0] for title in titles] == ["bahdanau", "bahdanau-bi"]


def test_ctrl_c_while_plotting_says_nothing_was_written_and_leaves_the_old_image(tmp_path, capsys, monkeypatch):
    from matplotlib.figure import Figure

    target = tmp_path / "figures" / "a.png"
    target.parent.mkdir()
    target.write_bytes(b"old")

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", interrupt)
    code, out, err = run(capsys, "plot-attention", "je suis fatigue .", "-o", str(target), "--overwrite")
    assert (
        code == 130
        and err
        == f"seq2seq-attention plot-attention: interrupted: nothing was written to {target} "
        "(an image lands whole or not at all)\n"
    )
    assert target.read_bytes() == b"old" and sorted(p.name for p in target.parent.iterdir()) == ["a.png"]
