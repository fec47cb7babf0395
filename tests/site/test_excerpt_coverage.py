"""The code a page shows is the code that runs: every line of every excerpted section runs.

The pages include source sections (`# --8<-- [start:name]` ... `[end:name]`) with snippet lines
such as ``--8<-- "src/seq2seq_attention/model/decoders.py:loop"``. This test runs a small
workload (tests/excerpt_workload.py: training, greedy and beam decoding, evaluation, a figure, the
ONNX export, the classifier) under coverage.py and fails on any statement of an included section
that never ran, except a statement that raises an input error (a bad input's path, which the
bad-input tests run).
"""

import re
from pathlib import Path

import pytest
import snippets  # hooks/snippets.py: the snippet syntax, read in one place
from support import ROOT

coverage = pytest.importorskip("coverage", reason="coverage is in the test extra")

SRC = ROOT / "src" / "seq2seq_attention"
RAISES_INPUT_ERROR = re.compile(r"^\s*raise (InputError|SentenceError)\b")
HANDLER = re.compile(r"^\s*except\b")


def raises_input_error(text: list[str], number: int) -> bool:
    """Line `number` raises an input error, or is an `except` clause whose first line does."""
    if HANDLER.match(text[number - 1]):
        return bool(RAISES_INPUT_ERROR.match(text[number]))
    return bool(RAISES_INPUT_ERROR.match(text[number - 1]))


def included_sections() -> dict[Path, set[str]]:
    """The (file, section) pairs some page includes."""
    sections: dict[Path, set[str]] = {}
    for page in (ROOT / "docs").rglob("*.md"):
        for path, name in snippets.includes(page.read_text(encoding="utf-8")):
            if path.startswith("src/") and name:
                sections.setdefault(ROOT / path, set()).add(name)
    return sections


def section_lines(path: Path, names: set[str]) -> dict[str, range]:
    """Line numbers (1-based) between each named section's markers."""
    marks = snippets.marks(path.read_text(encoding="utf-8"))
    spans = {
        name: range(marks[name]["start"] + 1, marks[name]["end"]) for name in names if len(marks.get(name, {})) == 2
    }
    assert set(spans) == names, f"{path}: sections {sorted(names - set(spans))} have no markers"
    return spans


def test_the_scan_finds_the_pages_sections():
    sections = included_sections()
    decoders = SRC / "model" / "decoders.py"
    assert {"loop", "forward_step", "step"} <= sections[decoders]
    spans = section_lines(decoders, {"loop"})
    text = decoders.read_text(encoding="utf-8").splitlines()
    assert any("for i in range(target_tensor.size(1))" in text[n - 1] for n in spans["loop"])


def test_every_line_of_every_excerpt_runs(excerpt_workload_coverage: Path):
    """`excerpt_workload_coverage` (tests/conftest.py) runs the workload under coverage.py, measuring src/."""
    measured = coverage.Coverage(data_file=str(excerpt_workload_coverage))
    measured.load()
    never_ran = []
    for path, names in sorted(included_sections().items()):
        _, statements, _, missing, _ = measured.analysis2(str(path))
        text = path.read_text(encoding="utf-8").splitlines()
        for name, lines in sorted(section_lines(path, names).items()):
            for number in sorted(set(missing) & set(lines)):
                if not raises_input_error(text, number):
                    never_ran.append(f"{path.relative_to(ROOT)}:{number} [{name}] {text[number - 1].strip()}")
        assert statements, f"{path} was not measured"
    assert never_ran == [], "lines a page shows that never ran:\n" + "\n".join(never_ran)


CHECK_CALL = re.compile(r"\b_?check\w*\(|^\s*raise (InputError|SentenceError)\b")


def code_lines(text: list[str], lines: range) -> list[str]:
    """The section's lines of code: no blank lines, comments or docstrings."""
    code, in_docstring = [], False
    for number in lines:
        stripped = text[number - 1].strip()
        if in_docstring:
            in_docstring = '"""' not in stripped
        elif stripped.startswith(('"""', 'r"""')):
            in_docstring = stripped.count('"""') == 1
        elif stripped and not stripped.startswith("#"):
            code.append(text[number - 1])
    return code


def check_lines(code: list[str]) -> int:
    """Lines that check input: a call of a check, a raise of an input error, and the `if` that guards one."""
    count = 0
    for index, line in enumerate(code):
        guards = (
            line.strip().startswith(("if ", "elif ")) and index + 1 < len(code) and CHECK_CALL.search(code[index + 1])
        )
        count += bool(CHECK_CALL.search(line) or guards)
    return count


def test_no_excerpt_is_more_than_a_quarter_input_checks():
    heavy = []
    for path, names in sorted(included_sections().items()):
        text = path.read_text(encoding="utf-8").splitlines()
        for name, lines in sorted(section_lines(path, names).items()):
            code = code_lines(text, lines)
            if code and check_lines(code) > len(code) / 4:
                heavy.append(f"{path.relative_to(ROOT)} [{name}]: {check_lines(code)} of {len(code)} lines check input")
    assert heavy == []


def test_the_quarter_rule_counts_checks():
    code = ["def f(x):", "    _check_x(x)", "    if x < 0:", "        raise InputError('x')", "    return x"]
    assert code_lines(["# c", '"""doc', 'more"""', *code], range(1, 9)) == code
    assert check_lines(code) == 3
