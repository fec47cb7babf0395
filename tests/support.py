"""Helpers several test modules share: what a folder holds, a script of scripts/ loaded as a module, a notebook run.

(The hooks in hooks/ need no loader: pyproject.toml puts hooks/ on pytest's path, so `import excerpts` works.)
"""

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def files_of(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (recursively), by its path relative to it, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def load_script(name: str) -> ModuleType:
    """`scripts/<name>.py` as a fresh module (scripts/ is not a package, so it cannot be imported by name)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook_name(page: str) -> str:
    """The folder of a page's notebook run (tests/notebook_runner.py): `a/b.md` -> `a__b.md`."""
    return page.replace("/", "__")


def notebook_run(folder: Path, page: str) -> tuple[dict, str]:
    """The page's notebook as tests/notebook_runner.py ran it into `folder`, and the traceback of the cell that
    failed ("" when none did)."""
    import nbformat

    run = folder / notebook_name(page)
    error = run / "error.txt"
    failed = error.read_text(encoding="utf-8") if error.exists() else ""
    return nbformat.read(run / "executed.ipynb", as_version=4), failed
