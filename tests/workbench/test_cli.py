"""The command line: `train` and `translate`, the packaged checkpoint, lines of standard input, and bad arguments.

A bad argument gets one line on stderr, exit code 2, no traceback and nothing on disk changed, and every argument and
path is checked before data are loaded or a model is trained (a wrong `--checkpoint` must not cost an epoch): in
those tests the library's data loading, training epochs and decoding loops are replaced by functions that fail the
test when called. A line of standard input ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` only, whatever Unicode
line separator it holds; every ``--help`` states the ranges its command enforces.
"""

import io
import json
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention.cli import main
from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.translation.corpus import split_lines
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# Bad arguments: one line on stderr, exit code 2, no traceback, nothing on disk changed, before any work ------

CASES = {
    "device-mps": ["translate", "--device", "mps", "je suis la ."],
    "device-meta": ["translate", "--device", "meta", "je suis la ."],
    "device-cuda-99": ["translate", "--device", "cuda:99", "je suis la ."],
    "max-length-float": ["translate", "--max-length", "1e3", "je suis la ."],
    "max-length-huge": ["translate", "--max-length", "1000000000000", "je suis la ."],
    "length-penalty-nan": ["translate", "--beam-size", "2", "--length-penalty", "nan", "je suis la ."],
    "length-penalty-inf": ["translate", "--length-penalty", "inf", "je suis la ."],
    "beam-size-zero": ["translate", "--beam-size", "0", "je suis la ."],
    "weight-decay-nan": ["train", "--checkpoint", "{tmp}/c", "--weight-decay", "nan"],
    "dropout-one": ["train", "--checkpoint", "{tmp}/c", "--dropout", "1.0"],
    "batch-size-zero": ["train", "--checkpoint", "{tmp}/c", "--batch-size", "0"],
    "score-for-gru": ["train", "--checkpoint", "{tmp}/c", "--score", "dot"],
    "checkpoint-is-a-file": ["train", "--checkpoint", "{tmp}/file"],
    "checkpoint-under-a-file": ["train", "--checkpoint", "{tmp}/file/c"],
    "sentiment-threads-zero": ["sentiment-train", "--threads", "0"],
    "sentiment-batch-size-zero": ["sentiment-train", "--batch-size", "0"],
    "sentiment-unknown-source": ["sentiment-train", "--sources", "twitter"],
    "sentiment-out-is-a-file": ["sentiment-train", "--out", "{tmp}/file"],
    "predict-top-negative": ["sentiment-predict", "--checkpoint", "{tmp}", "--top", "-1", "fine"],
    "predict-checkpoint-is-a-file": ["sentiment-predict", "--checkpoint", "{tmp}/file", "fine"],
    "plot-output-directory": ["plot-attention", "je suis la .", "--output", "{tmp}/dir.png"],
    "plot-output-under-a-file": ["plot-attention", "je suis la .", "--output", "{tmp}/file/x.png"],
    "plot-output-suffix": ["plot-attention", "je suis la .", "--output", "{tmp}/x.jpg"],
    "translate-checkpoint-is-a-file": ["translate", "--checkpoint", "{tmp}/file", "je suis la ."],
    "translate-model-and-checkpoint": ["translate", "--model", "gru", "--checkpoint", "{tmp}", "je suis la ."],
    "translate-unknown-model": ["translate", "--model", "transformer", "je suis la ."],
    "train-resume-nothing-to-resume-from-a-file": ["train", "--checkpoint", "{tmp}/file", "--resume"],
    "figure-json-suffix": [
        "sentiment-attention-figure",
        "--checkpoint",
        "{tmp}",
        "--out",
        "{tmp}/a.png",
        "--json",
        "{tmp}/a",
    ],
}


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"" for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_arguments_get_one_line_and_exit_2_before_any_work(case, tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    (tmp_path / "dir.png").mkdir()
    before = files(tmp_path)
    argv = [a.format(tmp=tmp_path) for a in CASES[case]]
    for target in WORK:
        monkeypatch.setattr(target, _no_work(target))
    with pytest.raises(SystemExit) if _is_argparse(case) else _returns():
        code = main(argv)
        assert code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and err.startswith("seq2seq-attention") and "error:" in err, err
    assert "Traceback" not in err and len(err) < 700
    assert files(tmp_path) == before


WORK = [
    "seq2seq_attention.translation.train.load_pairs",
    "seq2seq_attention.translation.train.train_epoch",
    "seq2seq_attention.sentiment.train.prepare_data",
    "seq2seq_attention.model.search.greedy_decode",
    "seq2seq_attention.model.search.beam_search_decode",
    "seq2seq_attention.translation.plotting.greedy_decode",
]
"""What costs time behind the commands (a corpus loaded, an epoch, a decoding loop): a bad argument is refused
before any of it."""


def _no_work(name: str):
    def called(*args, **kwargs):
        raise AssertionError(f"{name} ran although an argument was bad")

    return called


ARGPARSE = {
    "max-length-float",
    "max-length-huge",
    "length-penalty-nan",
    "length-penalty-inf",
    "beam-size-zero",
    "weight-decay-nan",
    "dropout-one",
    "batch-size-zero",
    "sentiment-threads-zero",
    "sentiment-batch-size-zero",
    "sentiment-unknown-source",
    "predict-top-negative",
    "translate-model-and-checkpoint",
    "translate-unknown-model",
}


def _is_argparse(case: str) -> bool:
    return case in ARGPARSE


class _returns:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_error_line_says_what_was_expected(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--max-length", "1e3", "je suis la ."])
    assert "argument --max-length: expected an integer, got '1e3'" in capsys.readouterr().err


def test_stdin_errors_name_the_real_line_number(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("je suis fatigue .\n\n\n\n\nje suis un xylophoniste .\n"))
    assert main(["translate"]) == 2
    err = capsys.readouterr().err
    assert "line 6 of standard input has unknown fra word(s) 'xylophoniste'" in err and err.count("\n") == 1


def test_a_huge_word_is_echoed_only_in_part(capsys):
    assert main(["translate", "je suis " + "x" * 100_000 + " ."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 700


# Lines of standard input ------------------------------------------------------------------------------

LINE_BREAKS = sorted(c for c in map(chr, range(sys.maxunicode + 1)) if len(f"a{c}b".splitlines()) == 2)
"""Every character `str.splitlines` breaks at: \\n, \\r, VT, FF, FS, GS, RS, NEL, LS, PS."""


INSIDE = [c for c in LINE_BREAKS if c not in "\n\r"]
"""The separators that stay inside a line: all but \\n and \\r (a lone \\r ends a line, as in old Mac files)."""


def test_the_separator_table_is_the_whole_class():
    assert set(LINE_BREAKS) == set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(blacklist_characters="\n\r"), max_size=12), min_size=1, max_size=5),
    end=st.sampled_from(["\n", "\r\n", "\r"]),  # one kind per text: "\r" then an empty "\n" line reads as "\r\n"
    last_newline=st.booleans(),
)
def test_a_line_ends_at_newline_crlf_or_a_lone_cr_only(lines, end, last_newline):
    text = end.join(lines) + (end if last_newline else "")
    expected = lines if last_newline or lines[-1] else lines[:-1]  # "a\n" is one line, with or without a last ""
    assert split_lines(text) == expected


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"], ids=["lone CR", "CRLF", "LF"])
def test_old_mac_line_ends_translate_line_by_line_and_refusals_keep_their_line_number(end, capsys, monkeypatch):
    text = end.join(["je suis fatigue .", "il est grand .", "je suis un xylophoniste .", "", "nous sommes en retard ."])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((text + end).encode("utf-8")), encoding="utf-8"))
    code = main(["translate"])
    out, err = capsys.readouterr()
    lines = out.split("\n")
    assert code == 2 and len(lines) == 6 and lines[5] == "", out  # five output lines, one per input line
    assert lines[0].startswith("i ") and lines[1].startswith("he ") and lines[2:4] == ["", ""] and lines[4]
    assert err.count("\n") == 1 and "line 3 of standard input" in err and "xylophoniste" in err


def test_translate_help_says_which_line_ends_it_reads(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    assert "(a line ends at \\n, \\r\\n or a lone \\r)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("separator", INSIDE, ids=[unicodedata.name(c, f"U+{ord(c):04X}") for c in INSIDE])
def test_every_unicode_line_separator_stays_inside_its_line(separator, capsys, monkeypatch):
    text = f"je suis{separator}la .\nil est grand .\r\n"
    assert split_lines(text) == [f"je suis{separator}la .", "il est grand ."]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    code = main(["translate", "--json"])
    captured = capsys.readouterr()
    if code == 0:  # normalised like any other non-letter: one translation per input line
        assert [row["source"] for row in json.loads(captured.out)] == [f"je suis{separator}la .", "il est grand ."]
    else:  # or refused with the line it is on
        assert code == 2 and captured.err.count("\n") == 1 and "line 1 of standard input" in captured.err


# Every command and the ranges its --help states ---------------------------------------------------------

COMMANDS = ["train", "translate", "export-onnx", "plot-attention", "sentiment-train", "sentiment-predict"]


COMMANDS += ["sentiment-attention-figure", "models", "export-weights"]


def test_the_command_list_is_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = re.findall(r"^ {4}([a-z][a-z-]+)(?: |$)", capsys.readouterr().out, re.M)
    assert sorted(listed) == sorted(COMMANDS)


def _refusal(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """The error argparse gives for `argv`; "--help" after it stops a valid value from running anything."""
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_states_the_ranges_its_command_enforces(command, capsys):
    """Each numeric option (one that refuses "abc" as a number) is given a huge and a hugely
    negative number: the range it refuses them with must be written in the command's --help."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    options = sorted(set(re.findall(r"(--[a-z][a-z-]*) [A-Z_]+", text)))
    not_a_number = re.compile(r"expected (an integer|a number)")
    numeric = [o for o in options if not_a_number.search(_refusal([command, o, "abc"], capsys))]
    for option in numeric:
        for value in ("99999999999999999999", "-99999999999999999999"):
            err = _refusal([command, option, value], capsys)
            found = re.search(r"must lie in ([\[(][^\])]*[\])])", err)
            assert found, (command, option, value, err)  # a number must not pass unbounded
            assert found.group(1) in text, (command, option, found.group(1))
    assert numeric or command in ("export-weights", "export-onnx", "models"), f"{command}: no numeric option found"
