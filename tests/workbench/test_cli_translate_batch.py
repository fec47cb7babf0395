"""`translate` works line by line: the good lines are translated, output line i belongs to input line i, every
refused line is named on stderr, and the exit code is 2 when any was refused (`--all-or-nothing`: nothing)."""

import io
import json
import sys

import pytest

from seq2seq_attention.cli import main

pytestmark = pytest.mark.usefixtures("one_thread")

BATCH = "je suis fatigue .\nje suis un xylophoniste .\n\nil est grand .\nje suis tres tres tres tres fatigue .\n"


def _stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def test_a_mixed_batch_translates_the_good_lines_aligned(monkeypatch, capsys):
    _stdin(monkeypatch, BATCH)
    assert main(["translate"]) == 2
    captured = capsys.readouterr()
    out = captured.out.split("\n")
    assert out[-1] == "" and len(out[:-1]) == 5, out  # one output line per input line
    assert out[0].startswith("i ") and out[3].startswith("he ")
    assert out[1] == out[2] == out[4] == ""  # refused, blank, refused
    errors = captured.err.splitlines()
    assert len(errors) == 2
    assert "line 2 of standard input has unknown fra word(s) 'xylophoniste'" in errors[0]
    assert errors[1].startswith("seq2seq-attention translate: error: line 5 of standard input has 8 words")


def test_the_good_lines_are_translated_as_they_would_be_alone(monkeypatch, capsys):
    _stdin(monkeypatch, BATCH)
    main(["translate"])
    mixed = capsys.readouterr().out.split("\n")
    assert main(["translate", "je suis fatigue .", "il est grand ."]) == 0
    alone = capsys.readouterr().out.split("\n")
    assert [mixed[0], mixed[3]] == alone[:2]


def test_all_or_nothing_keeps_the_old_behaviour(monkeypatch, capsys):
    _stdin(monkeypatch, BATCH)
    assert main(["translate", "--all-or-nothing"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "line 2 of standard input" in captured.err
    assert captured.err.rstrip().endswith("nothing was translated: --all-or-nothing held back the other 3 sentence(s)")


def test_a_blank_stdin_line_is_no_sentence_but_an_empty_argument_is_refused_and_help_says_so(monkeypatch, capsys):
    _stdin(monkeypatch, "je suis fatigue .\n\n")
    assert main(["translate"]) == 0
    assert capsys.readouterr().out.split("\n")[1:] == ["", ""]
    assert main(["translate", ""]) == 2
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "A blank input line is no sentence: its output line is blank and the exit code stays 0" in help_text
    assert 'an empty argument ("")' in help_text and "('i m tired .' is \"I'm tired.\")" in help_text


def test_a_question_mark_is_refused_with_the_reason(capsys):
    assert main(["translate", "es-tu fatigue ?"]) == 2
    err = capsys.readouterr().err
    assert "'?' is unknown because every training pair is a statement ending in '.' or '!'" in err
    assert main(["translate", "je suis un xylophoniste ."]) == 2
    assert "statement" not in capsys.readouterr().err  # the reason is given where '?' is the unknown word only


def test_arguments_are_sentences_and_an_empty_one_is_refused(capsys):
    assert main(["translate", "je suis fatigue .", "", "il est grand ."]) == 2
    captured = capsys.readouterr()
    lines = captured.out.split("\n")[:-1]
    assert len(lines) == 3 and lines[1] == "" and lines[0] and lines[2]
    assert captured.err.count("\n") == 1 and "sentence 2 is empty" in captured.err


def test_json_names_the_refused_sentences(capsys):
    assert main(["translate", "--json", "je suis fatigue .", "je suis un xylophoniste ."]) == 2
    good, bad = json.loads(capsys.readouterr().out)
    assert good["source"] == "je suis fatigue ." and good["translation"].startswith("i ") and "error" not in good
    assert bad["translation"] is None and "xylophoniste" in bad["error"]


def test_a_batch_of_good_lines_exits_0(monkeypatch, capsys):
    _stdin(monkeypatch, "je suis fatigue .\nil est grand .\n")
    assert main(["translate"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and len(captured.out.splitlines()) == 2
