"""The import graph of src/: no cycle, and the read-only commands never load a training module.

The graph is read from the source with `ast`: every `import` and `from ... import` of a
`seq2seq_attention` module, at the top of a module or inside a function, is an edge; imports under
``if TYPE_CHECKING:`` name types for annotations and never run, so they are not.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

SRC = ROOT / "src"
PACKAGE = "seq2seq_attention"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            found += [n for child in node.orelse for n in _imports(ast.Module(body=[child], type_ignores=[]))]
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        found += _imports(node)
    return found


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that the file at `path` imports (a name imported from a package counts as
    its submodule when one of that name exists, else as the package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            stem = node.module or ""
            base = (f"{base}.{stem}" if node.level else stem).strip(".")
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        edges |= {target for target in targets if target in modules and target != name}
    return edges


def import_graph(root: Path = SRC / PACKAGE) -> dict[str, set[str]]:
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imported_modules(path, modules) for path in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a list of modules (first == last), or None. A package's `__init__` importing
    its own submodules is not a cycle, nor is a submodule importing its parent package (Python loads the
    parent first)."""
    edges = {
        node: {t for t in targets if not (t.startswith(node + ".") or node.startswith(t + "."))}
        for node, targets in graph.items()
    }
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_src_has_no_import_cycle():
    assert find_cycle(import_graph()) is None


def test_the_cycle_finder_sees_a_cycle_and_a_lazy_import(tmp_path: Path):
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from .a import x\n")
    (package / "a.py").write_text("from .sub.b import y\nx = 1\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("def y():\n    from ..a import x\n    return x\n")
    (package / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\n"
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        graph = import_graph(package)
    finally:
        SRC = saved
    assert graph[f"{PACKAGE}.sub.c"] == set()  # a TYPE_CHECKING import never runs
    assert find_cycle(graph) == [f"{PACKAGE}.a", f"{PACKAGE}.sub.b", f"{PACKAGE}.a"]


def test_the_search_loops_and_the_decoders_and_the_translator_sit_in_layers():
    graph = import_graph()
    search, decoders = f"{PACKAGE}.translation.search", f"{PACKAGE}.translation.decoders"
    model, translator = f"{PACKAGE}.translation.model", f"{PACKAGE}.translation.translator"
    assert graph[search].isdisjoint({decoders, model, translator})  # the loops drive any step function
    assert translator in graph[f"{PACKAGE}.translation.train"] and graph[translator].isdisjoint(
        {f"{PACKAGE}.translation.train"}
    )
    assert not any(
        module.startswith(f"{PACKAGE}.translation") or module.startswith(f"{PACKAGE}.sentiment")
        for module in graph[f"{PACKAGE}.core.checkpoint"]
    )  # the tasks register themselves


READ_ONLY = [
    ["translate", "je suis fatigue ."],
    ["plot-attention", "je suis fatigue .", "--out", "{tmp}/attention.png"],
    ["--help"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: c[0])
def test_the_read_only_commands_do_not_import_the_training_modules(tmp_path: Path, command: list[str]):
    argv = [part.format(tmp=tmp_path) for part in command]
    report = "print('LOADED', sorted(m for m in sys.modules if m.endswith(('translation.train', 'sentiment.train'))))"
    result = _cli_in_a_fresh_python(tmp_path, argv, report)
    assert "LOADED []" in result.stdout, result.stdout + result.stderr


def _cli_in_a_fresh_python(tmp_path: Path, argv: list[str], report: str) -> subprocess.CompletedProcess:
    """`seq2seq-attention ARGV` in a fresh Python with only src/ on its path; then `report` runs (`code`: the exit
    status) and prints what the test reads."""
    code = (
        "import sys\n"
        "from seq2seq_attention.cli import main\n"
        f"try:\n    code = main({argv!r})\nexcept SystemExit as stop:\n    code = stop.code\n"
        f"{report}\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)},
    )


def test_load_translator_is_exported_at_the_top():
    from seq2seq_attention import Translator, load_translator
    from seq2seq_attention.translation.translator import load_translator as defined

    assert load_translator is defined and Translator.__module__ == f"{PACKAGE}.translation.translator"


AT_ONCE = {
    "--help": 0,
    "--version": 0,
    "models": 0,
    "tarnslate x": 2,
    "": 2,
    "translate --help": 0,
    "train --help": 0,
    "train --checkpoint c --epochs 0": 2,
    "train --checkpoint c --decoder gur": 2,
    "train --hidden-size": 2,
    "translate --beam-size 0 x": 2,
    "translate --modle bahdanau x": 2,
    "plot-attention": 2,
    "export-weights": 2,
    "export-onnx": 2,
    "sentiment-train --kind nope": 2,
    "sentiment-predict": 2,
    "sentiment-attention-figure --count x": 2,
}
"""What answers without torch or matplotlib, with its exit status: the help of every command, the version, the
models list, a mistyped command, and an argument error of every command (parsing imports no torch)."""


@pytest.mark.parametrize("command", AT_ONCE, ids=lambda c: c or "nothing")
def test_help_version_models_and_argument_errors_import_neither_torch_nor_matplotlib(tmp_path, command):
    report = (
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'numpy'))\n"
        "print('CODE', code, 'HEAVY', heavy)"
    )
    result = _cli_in_a_fresh_python(tmp_path, command.split(), report)
    assert f"CODE {AT_ONCE[command]} HEAVY []" in result.stdout, result.stdout + result.stderr
    if AT_ONCE[command] == 2 and command:
        assert result.stderr.count("\n") == 1 and ": error: " in result.stderr, result.stderr
    if command == "models":
        assert "bahdanau (default)" in result.stdout
    if command.startswith("tarnslate"):
        assert "invalid choice: 'tarnslate'" in result.stderr


def test_the_help_of_every_command_imports_neither_torch_nor_matplotlib(tmp_path):
    """Every command that the top-level `--help` lists, asked for its own `--help` in one fresh Python."""
    report = (
        "import contextlib, io, re\n"
        "listing = io.StringIO()\n"
        "with contextlib.redirect_stdout(listing):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "names = re.findall(r'^    (\\S+)', listing.getvalue().split('positional arguments:')[1], re.M)\n"
        "for name in names:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n            main([name, '--help'])\n        except SystemExit as stop:\n"
        "            assert stop.code == 0, name\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib', 'numpy'))\n"
        "print('NAMES', len(names), 'HEAVY', heavy)"
    )
    result = _cli_in_a_fresh_python(tmp_path, ["--version"], report)
    assert re.search(r"NAMES ([89]|\d\d+) HEAVY \[\]", result.stdout), result.stdout + result.stderr


@pytest.mark.slow
def test_importing_the_package_loads_its_names_on_first_use(tmp_path):
    code = (
        "import sys\n"
        "import seq2seq_attention\n"
        "before = 'torch' in sys.modules\n"
        "translate = seq2seq_attention.translate\n"
        "print('BEFORE', before, 'AFTER', 'torch' in sys.modules, translate.__module__)\n"
        "try:\n    seq2seq_attention.nothing_here\nexcept AttributeError as error:\n    print('MISSING', error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert f"BEFORE False AFTER True {PACKAGE}.translation.translator" in result.stdout, result.stdout + result.stderr
    assert "has no attribute 'nothing_here'" in result.stdout


def test_no_decoder_module_imports_the_search():
    """The step does not know the loop: a module of `translation/` that defines a decoder (a `StepDecoder`) imports
    no search module; the model drives the search, and the search needs no decoder to run."""
    graph = import_graph()
    search = f"{PACKAGE}.translation.search"
    defining = [
        name
        for name in graph
        if name.startswith(f"{PACKAGE}.translation.")
        and "(StepDecoder)" in (SRC / Path(*name.split("."))).with_suffix(".py").read_text(encoding="utf-8")
    ]
    assert defining == [f"{PACKAGE}.translation.decoders"]
    assert all(search not in graph[name] for name in defining), {name: graph[name] for name in defining}
    assert search in graph[f"{PACKAGE}.translation.model"]  # `Seq2Seq` without a target decodes through it
