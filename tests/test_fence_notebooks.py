"""Every page's notebook, as the site build wrote it, runs top to bottom in a fresh kernel on the CPU.

Each notebook runs in an empty working directory with `SEQ2SEQ_ATTENTION_DEVICE=cpu`; its first
cell must find everything importable and install nothing (it says what it installed). A small page
shows how prose, excerpts, blocks and fences become cells.
"""

import json
import re

import fence_notebooks
import fence_record
import fence_runs
import nbformat
import pytest
from site_support import ROOT, BuiltSite
from support import notebook_run

PAGES = sorted(fence_runs.pages_with_fences(ROOT / "docs"))
DRAWS = re.compile(r"\bplot_attention\(|\bFigure\(|\bplt\.|\w+_figure\(")
"""Code that makes a matplotlib figure."""
DRAWING = sorted(
    page
    for page, fences in fence_runs.pages_with_fences(ROOT / "docs").items()
    if any(DRAWS.search(fence.code) for fence in fences)
)


@pytest.mark.parametrize("page", PAGES)
def test_the_page_s_notebook_runs_top_to_bottom(built_site: BuiltSite, executed_notebooks, page: str):
    """`executed_notebooks` (tests/conftest.py) ran the notebook with tests/notebook_runner.py, in the background."""
    nbformat.validate(nbformat.read(built_site.root / fence_record.notebook_path(page), as_version=4))
    book, failed = notebook_run(executed_notebooks, page)
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
    book, failed = notebook_run(executed_notebooks, page)
    assert not failed, failed
    drawing = [cell for cell in book.cells if cell.cell_type == "code" and DRAWS.search(cell.source)]
    assert drawing
    for cell in drawing:
        images = [output for output in cell.outputs if "image/png" in output.get("data", {})]
        assert len(images) >= 1, f"no image under the cell that draws: {cell.source[:200]!r}"
    install = book.cells[0]
    assert "seq2seq_attention 0." in "".join(output.get("text", "") for output in install.outputs)  # import checked


def test_the_first_cell_installs_from_the_checkout_without_an_address_or_says_how(tmp_path, monkeypatch):
    """Without the repository's address the first cell installs the checkout the notebook lies in (`pip install
    -e`), and outside any checkout it stops with the commands to run."""
    import subprocess

    source = fence_notebooks.install_cell((), ROOT, None)
    assert "NEEDED = {'seq2seq_attention': None}" in source and "pip install -e ./seq2seq-attention" in source
    code = compile(source.replace("importlib.util.find_spec(module) is None", "True"), "cell", "exec")  # none there
    commands = []
    monkeypatch.setattr(subprocess, "run", lambda command, check: commands.append(command))
    monkeypatch.chdir(ROOT / "docs")  # inside the checkout: installs it
    exec(code, {"__name__": "cell"})
    assert commands and commands[-1][-2:] == ["-e", str(ROOT)], commands
    monkeypatch.chdir(tmp_path)  # outside any checkout: the exact commands
    with pytest.raises(ModuleNotFoundError, match="git clone .* && pip install -e ./seq2seq-attention"):
        exec(code, {"__name__": "cell"})


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
            root=ROOT,
            snippets={"base_path": [str(tmp_path)], "check_paths": True, "dedent_subsections": True},
            site_url="https://owner.github.io/site/",
            repo_url="https://github.com/owner/site",
            runs={first.key: {"no-device": passed}},
            block_titles={"solution": "풀이"},
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
