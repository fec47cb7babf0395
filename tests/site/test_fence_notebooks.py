"""Every page's notebook, as the site build wrote it, runs top to bottom in a fresh kernel on the CPU.

Each notebook runs in an empty working directory with `SEQ2SEQ_ATTENTION_DEVICE=cpu`; its first
cell must find everything importable and install nothing (it says what it installed). A small page
shows how prose, excerpts, blocks and fences become cells.
"""

import json
import re
from pathlib import Path

import fence_notebooks
import fence_record
import fence_runs
import nbformat
import pytest
from site_support import ROOT, BuiltSite

PAGES = sorted(fence_runs.pages_with_fences(ROOT / "docs"))
DRAWS = re.compile(r"\bplot_attention\(|\bFigure\(|\bplt\.|\w+_figure\(")
"""Code that makes a matplotlib figure."""
DRAWING = sorted(
    page
    for page, fences in fence_runs.pages_with_fences(ROOT / "docs").items()
    if any(DRAWS.search(fence.code) for fence in fences)
)


def extensions(base: Path) -> dict:
    """The build's `mdx_configs` a notebook reads: pymdownx.snippets' (files under `base`) and the solution block's."""
    snippets = {"base_path": [str(base)], "check_paths": True, "dedent_subsections": True}
    solution = {"name": "solution", "class": "note", "title": "풀이"}
    return {"pymdownx.snippets": snippets, "pymdownx.blocks.details": {"types": [solution]}}


@pytest.mark.parametrize("page", PAGES)
def test_the_page_s_notebook_runs_top_to_bottom(built_site: BuiltSite, executed_notebooks, page: str):
    """`executed_notebooks` (tests/conftest.py) ran the notebook."""
    nbformat.validate(nbformat.read(built_site.root / fence_record.notebook_path(page), as_version=4))
    book, failed = executed_notebooks[page]
    assert not failed, failed
    code = [cell for cell in book.cells if cell.cell_type == "code" and cell.source != fence_notebooks.TRY_FIRST_CELL]
    assert len(code) == 1 + len(fence_runs.pages_with_fences(ROOT / "docs")[page]), "one cell per spec fence"
    installed = "".join(output.get("text", "") for output in code[0].outputs)
    assert installed.startswith("설치함: 없음"), f"the first cell installed something: {installed!r}"
    errors = [json.dumps(output)[:500] for cell in code for output in cell.outputs if output.output_type == "error"]
    assert not errors


def test_the_pages_that_draw_are_found():
    assert "attention/heatmaps.md" in DRAWING


@pytest.mark.parametrize("page", DRAWING)
def test_a_cell_that_draws_shows_its_figure_in_the_notebook(built_site: BuiltSite, executed_notebooks, page: str):
    """The first cell shows, as a PNG under the cell, each matplotlib figure a cell leaves in a name."""
    book, failed = executed_notebooks[page]
    assert not failed, failed
    drawing = [cell for cell in book.cells if cell.cell_type == "code" and DRAWS.search(cell.source)]
    assert drawing
    for cell in drawing:
        images = [output for output in cell.outputs if "image/png" in output.get("data", {})]
        assert len(images) >= 1, f"no image under the cell that draws: {cell.source[:200]!r}"
    install = book.cells[0]
    assert "seq2seq_attention 0." in "".join(output.get("text", "") for output in install.outputs)  # import checked


def test_the_first_cell_installs_the_checkout_else_the_repository_and_never_shows_a_placeholder(tmp_path, monkeypatch):
    """The first cell installs PyTorch first (the CPU build without an NVIDIA GPU), then the package: from the
    checkout the notebook lies in (a regular install, which the running kernel imports), else from the repository's
    address; with neither it says to open the notebook in a checkout, with no placeholder address."""
    import subprocess

    commands = []
    monkeypatch.setattr(subprocess, "run", lambda command, check: commands.append(command[4:]))
    for repo_url in (None, "https://github.com/owner/site"):
        source = fence_notebooks.install_cell((), repo_url)
        assert "‹" not in source and "<저장소" not in source and "pip install -e" not in source
        code = compile(source.replace("importlib.util.find_spec(module) is None", "True"), "cell", "exec")
        monkeypatch.chdir(ROOT / "docs")  # inside the checkout: installs it
        exec(code, {"__name__": "cell"})
        assert commands[-1] == ["-q", str(ROOT)], commands
        commands.clear()
        monkeypatch.chdir(tmp_path)  # outside any checkout: from the repository, or the reason it cannot
        if repo_url is None:
            with pytest.raises(ModuleNotFoundError, match="저장소를 받은 폴더 안에서 이 노트북을 열고"):
                exec(code, {"__name__": "cell"})
        else:
            exec(code, {"__name__": "cell"})
            assert commands[-1] == ["-q", f"git+{repo_url}"], commands


def test_the_notebooks_install_the_torch_that_readme_s_cpu_line_installs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pip install {' '.join(fence_notebooks.CPU_TORCH)} && pip install -e ." in readme


LISTING = "import torch, importlib.metadata as m; print(torch.__version__, *(d.name for d in m.distributions()))"
"""What the environment holds after the run: torch's version, then every distribution's name."""

FIRST_RUN = """
import sys
import nbformat
from nbclient import NotebookClient

book = nbformat.read(sys.argv[1], as_version=4)
try:
    NotebookClient(book, timeout=900, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
finally:
    nbformat.write(book, sys.argv[3])
"""
"""Runs a notebook in a kernel of the Python that runs this (the fresh environment's), in the folder it lies in."""


@pytest.mark.slow
def test_a_built_notebook_runs_on_its_first_try_in_a_fresh_environment(tmp_path):
    """A page's notebook, built as the site build builds it (no repository address: a local build), lying in a
    copy of the repository, run by nbclient in a new virtual environment that has Jupyter's kernel and nothing else:
    its first cell installs PyTorch's CPU build (this machine has no NVIDIA GPU) and the package, the same kernel
    imports them, and every cell runs, on the first try. Offline, pip takes the wheels from its configured folders."""
    import os
    import shutil
    import subprocess
    import sys

    page = "attention/one-step.md"
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "src", checkout / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    folder = checkout / "site" / "attention"
    folder.mkdir(parents=True)
    notebook = folder / "one-step.ipynb"
    notebook.write_text(
        fence_notebooks.notebook(
            (ROOT / "docs" / page).read_text(encoding="utf-8"),
            page=page,
            site_url=None,
            repo_url=None,
            runs=fence_runs.load(ROOT / "docs" / fence_runs.RECORD_NAME),
            extensions=extensions(ROOT),
        ),
        encoding="utf-8",
    )
    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True, timeout=300)
    python = str(environment / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"SEQ2SEQ_ATTENTION_DEVICE": "cpu", "MPLBACKEND": "Agg"}
    jupyter = [python, "-m", "pip", "install", "-q", "ipykernel", "nbclient", "nbformat"]
    subprocess.run(jupyter, check=True, timeout=900, env=env, capture_output=True)
    before = subprocess.run([python, "-c", "import torch"], env=env, capture_output=True)
    assert before.returncode != 0, "the fresh environment must start without PyTorch"
    executed = tmp_path / "executed.ipynb"
    run = subprocess.run(
        [python, "-c", FIRST_RUN, str(notebook), str(folder), str(executed)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    book = nbformat.read(executed, as_version=4)
    errors = [output for cell in book.cells for output in cell.get("outputs", []) if output.output_type == "error"]
    assert not errors, errors
    said = "".join(output.get("text", "") for output in book.cells[0].outputs if output.output_type == "stream")
    assert "설치함: torch==2.13.0+cpu, seq2seq_attention" in said, said
    installed = subprocess.run(
        [
            python,
            "-c",
            "import torch, importlib.metadata as m; print(torch.__version__, *(d.name for d in m.distributions()))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert installed[0].endswith("+cpu") and not [name for name in installed if name.startswith(("nvidia", "triton"))]


PAGE = """# Title { #top }

Prose with a [link](../other.md#part) and $x_i$.

!!! note "A note"

    Inside the note.

After the note.

```{.python notest}
--8<-- "pyproject.toml:nothing"
```

```python
import pytest

print("shown")
```

/// solution
```{.python continuation}
assert True
```
///
"""


def test_a_page_becomes_cells_of_prose_and_fences(tmp_path):
    (tmp_path / "excerpt.py").write_text("# --8<-- [start:part]\nvalue = 1\n# --8<-- [end:part]\n")
    page = PAGE.replace("pyproject.toml:nothing", "excerpt.py:part")
    first, second = fence_runs.spec_fences(page)
    passed = {"outcome": "passed", "output": "shown", "seconds": 0.1, "torch": "2", "device": "c", "date": "d"}
    book = nbformat.reads(
        fence_notebooks.notebook(
            page,
            page="attention/page.md",
            site_url="https://owner.github.io/site/",
            repo_url="https://github.com/owner/site",
            runs={first.key: {"no-device": passed}},
            extensions=extensions(tmp_path),
        ),
        as_version=4,
    )
    kinds = [cell.cell_type for cell in book.cells]
    assert kinds == ["code", "markdown", "code", "code", "markdown", "code"]
    install, prose, fence, try_first, solution, continuation = book.cells
    assert try_first.source == fence_notebooks.TRY_FIRST_CELL  # the reader tries before the answer
    assert "NEEDED = {'seq2seq_attention': 'git+https://github.com/owner/site', 'pytest': 'pytest'}" in install.source
    assert prose.source.startswith("# Title\n")
    assert "[link](https://owner.github.io/site/other.html#part)" in prose.source
    assert "> **A note**\n>\n> Inside the note.\n\nAfter the note." in prose.source
    assert "*excerpt.py:part*\n\n```python\nvalue = 1\n```" in prose.source
    assert fence.source == 'import pytest\n\nprint("shown")' and fence.outputs[0].text == "shown\n"
    assert solution.source == "**풀이**"
    assert continuation.source == "assert True" and continuation.outputs == []
