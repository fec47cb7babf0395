"""The layers of src/ (import-linter's contracts in pyproject.toml), and the read-only commands never load a
training module.

import-linter reads the package's imports (at the top of a module or inside a function; imports under
``if TYPE_CHECKING:`` name types for annotations and never run, so they are not counted) and checks the contracts
of ``[tool.importlinter]``: the model imports torch, the standard library and the shape annotations only, and each
layer imports only the layers below it.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

SRC = ROOT / "src"
PACKAGE = "seq2seq_attention"


def lint_imports(config: Path, path: Path) -> subprocess.CompletedProcess:
    """`lint-imports` with `config`, the package found on `path`."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--config", str(config), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin", "HOME": str(path)},
        cwd=ROOT,
    )


def test_the_layer_contracts_are_kept():
    result = lint_imports(ROOT / "pyproject.toml", SRC)
    assert result.returncode == 0 and "0 broken" in result.stdout, result.stdout + result.stderr


def test_a_model_module_that_imports_the_workbench_breaks_a_contract(tmp_path: Path):
    """The same contracts on an empty copy of the package where the model imports `core`: import-linter says so."""
    for module in (SRC / PACKAGE).rglob("*.py"):  # every module, empty: the contracts name some of them
        copy = tmp_path / module.relative_to(SRC)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text("")
    (tmp_path / PACKAGE / "model" / "encoder.py").write_text("from ..core import files\n")
    config = tmp_path / "pyproject.toml"
    config.write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    result = lint_imports(config, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "seq2seq_attention.model.encoder -> seq2seq_attention.core.files" in result.stdout, result.stdout


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
