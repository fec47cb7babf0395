"""Excerpts read like the math: no `raise` and no check call in a section a page shows, a short Bahdanau.

Checks live in `_check_*` functions that run where a user calls (`checked`, a decorator written
above a section's start marker, outside the excerpt); inside a section the core trusts its tensors.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
import snippets  # hooks/snippets.py: the snippet syntax, read in one place
from support import ROOT

SRC = ROOT / "src" / "seq2seq_attention"
CHECK_CALL = re.compile(r"\b(_?check_\w*|checked)\s*\(")


def sections(path: Path) -> dict[str, list[tuple[int, str]]]:
    """Each section of a file: its (line number, line) pairs between the markers, nested markers left out."""
    found: dict[str, list[tuple[int, str]]] = {}
    open_sections: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = snippets.MARK.match(line)
        if match:
            kind, name = match["kind"], match["name"]
            (open_sections.add if kind == "start" else open_sections.discard)(name)
            found.setdefault(name, [])
            continue
        for name in open_sections:
            found[name].append((number, line))
    return found


def code_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines that hold code: not blank, not a comment, not inside a docstring."""
    text = "\n".join(line for _, line in lines)
    numbers = [number for number, _ in lines]
    strings: set[int] = set()
    tokens = list(tokenize.generate_tokens(io.StringIO(_dedented(text)).readline))
    for index, token in enumerate(tokens):
        previous = tokens[index - 1].type if index else tokenize.NEWLINE
        if token.type == tokenize.STRING and previous in (tokenize.INDENT, tokenize.NEWLINE, tokenize.DEDENT):
            strings |= set(range(token.start[0], token.end[0] + 1))
    return [
        (numbers[i - 1], line)
        for i, (_, line) in enumerate(lines, start=1)
        if line.strip() and not line.strip().startswith("#") and i not in strings
    ]


def _dedented(text: str) -> str:
    lines = text.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines) + "\n"


def excerpted() -> list:
    return [
        pytest.param(path, name, lines, id=f"{path.relative_to(SRC)}:{name}")
        for path in sorted(SRC.rglob("*.py"))
        for name, lines in sections(path).items()
    ]


def problems(lines: list[tuple[int, str]]) -> list[str]:
    """The code lines of a section that raise or call a check helper."""
    return [
        f"{number}: {line.strip()}"
        for number, line in code_lines(lines)
        if re.search(r"\braise\b", line) or CHECK_CALL.search(line)
    ]


@pytest.mark.parametrize(("path", "name", "lines"), excerpted())
def test_no_excerpt_raises_or_calls_a_check(path: Path, name: str, lines: list[tuple[int, str]]):
    assert problems(lines) == [], f"{path.relative_to(ROOT)}:{name}"


def test_the_rule_sees_a_raise_and_a_check_call_but_not_a_docstring_or_a_comment():
    lines = list(
        enumerate(
            [
                "def f(x):",
                '    """We raise nothing here; check(x) is prose."""',
                "    # raise in a comment",
                "    check_tensor('x', x, ('B',))",
                "    if x is None:",
                "        raise InputError('x')",
                "    return x",
            ],
            start=1,
        )
    )
    assert problems(lines) == ["4: check_tensor('x', x, ('B',))", "6: raise InputError('x')"]


def test_bahdanau_attention_excerpt_is_at_most_25_lines_of_code():
    path = SRC / "model" / "attention.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BahdanauAttention"]
    inside = range(cls.lineno, cls.end_lineno + 1)
    parts = {name: lines for name, lines in sections(path).items() if lines and lines[0][0] in inside}
    assert {"init", "project_keys", "score"} <= set(parts)  # the pages show its __init__, project_keys and score
    count = sum(len(code_lines(lines)) for lines in parts.values())
    assert count <= 25, f"{count} lines of code in {sorted(parts)}"
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert methods == {"__init__", "project_keys", "score"}  # its forward is Attention's, as Luong's are
    assigned = {
        t.attr for n in ast.walk(cls) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Attribute)
    }
    assert {"Wa", "Ua", "Va"} <= assigned  # it owns its layers


def test_attention_has_no_descriptor_and_no_attribute_hook():
    for path in (SRC / "model" / "attention.py", SRC / "model" / "scores.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not defined & {"__get__", "__set__", "__set_name__", "__getattr__", "__getattribute__"}, path.name
