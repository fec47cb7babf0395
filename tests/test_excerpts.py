"""Excerpts and imports: every section in src/ is on a page, and a page imports each name from one place."""

import ast
import re
from pathlib import Path

import pytest

import seq2seq_attention

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "seq2seq_attention"
DOCS = ROOT / "docs"
SECTION = re.compile(r"--8<-- \[start:([\w-]+)\]")
INCLUDE = re.compile(r'^--8<-- "(src/[^"]+\.py):([\w-]+)"$', re.M)
FENCE = re.compile(r"^```(?:python|\{\.python[^}]*\})\n(.*?)^```", re.M | re.S)


def _sections() -> set[str]:
    return {
        f"{path.relative_to(ROOT)}:{name}"
        for path in SRC.rglob("*.py")
        for name in SECTION.findall(path.read_text(encoding="utf-8"))
    }


def _included(pages: list[Path]) -> set[str]:
    return {f"{path}:{name}" for page in pages for path, name in INCLUDE.findall(page.read_text(encoding="utf-8"))}


def test_every_excerpt_section_in_src_is_included_by_a_page():
    pages = sorted(DOCS.rglob("*.md"))
    assert sorted(_sections() - _included(pages)) == []


def test_the_section_check_sees_a_dead_section():
    pages = [p for p in DOCS.rglob("*.md") if "core/batching.py:mask" not in p.read_text(encoding="utf-8")]
    assert "src/seq2seq_attention/core/batching.py:mask" in _sections() - _included(pages)


def _defined(module: str) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments), not those it imports."""
    path = SRC / (module.removeprefix("seq2seq_attention.").replace(".", "/") + ".py")
    if not path.is_file():
        path = path.with_suffix("") / "__init__.py"
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def import_problems(code: str) -> list[str]:
    """Imports from the package that a reader following them would not land on the definition with.

    A name the package exports (`seq2seq_attention.__all__`) is imported from `seq2seq_attention`;
    any other name from the module that defines it, never through a module that only imports it.
    """
    exported = set(seq2seq_attention.__all__)
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a notest fence that shows something other than Python (a traceback, a wrong line)
        return []
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "seq2seq_attention"):
            continue
        for name in (alias.name for alias in node.names):
            if node.module == "seq2seq_attention" and name not in exported:
                problems.append(f"{name} is not exported by seq2seq_attention")
            elif node.module != "seq2seq_attention" and name in exported:
                problems.append(f"{name}: import it from seq2seq_attention, not {node.module}")
            elif node.module != "seq2seq_attention" and name not in _defined(node.module):
                problems.append(f"{name} is not defined in {node.module}")
    return problems


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_pages_import_each_name_from_one_place(page: Path):
    problems = [
        problem
        for fence in FENCE.findall(page.read_text(encoding="utf-8"))
        if not fence.lstrip().startswith("--8<--")
        for problem in import_problems(fence)
    ]
    assert problems == []


def test_the_import_check_sees_a_re_export_and_an_exported_name_from_its_module():
    assert import_problems("from seq2seq_attention.translation.corpus import Vocabulary") == [
        "Vocabulary: import it from seq2seq_attention, not seq2seq_attention.translation.corpus"
    ]
    assert import_problems("from seq2seq_attention.translation.corpus import TranslationDataset, Pair") == []
    assert import_problems("from seq2seq_attention.translation.corpus import checksum_split") == [
        "checksum_split is not defined in seq2seq_attention.translation.corpus"
    ]
    assert import_problems("from seq2seq_attention import build_model, TrainConfig") == [
        "TrainConfig is not exported by seq2seq_attention"
    ]
