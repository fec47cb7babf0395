"""Runs pages' notebooks top to bottom, each in a fresh kernel and an empty working directory.

tests/conftest.py runs it on the built site's notebooks (`executed_notebooks`, in the site tests' pytest-xdist
group); tests/site/test_fence_notebooks.py checks what it wrote:
``python tests/notebook_runner.py OUT NAME=NOTEBOOK ...`` writes OUT/NAME/executed.ipynb (the notebook with
its outputs) and, when a cell failed, OUT/NAME/error.txt (the traceback).
"""

import os
import sys
import traceback
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(out: Path, jobs: list[str]) -> None:
    parent = os.getppid()
    for job in jobs:
        if os.getppid() != parent:  # the test session that started this has ended
            return
        name, _, source = job.partition("=")
        folder = out / name
        (folder / "cwd").mkdir(parents=True)  # empty: the notebook's working directory
        book = nbformat.read(source, as_version=4)
        try:
            resources = {"metadata": {"path": str(folder / "cwd")}}
            NotebookClient(book, timeout=600, kernel_name="python3", resources=resources).execute()
        except Exception:
            (folder / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        nbformat.write(book, folder / "executed.ipynb")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
