"""Every page's notebook, as the site build wrote it, runs top to bottom in a fresh kernel on the CPU.

Each notebook runs in an empty working directory with `SEQ2SEQ_ATTENTION_DEVICE=cpu`; its first
cell must find everything importable and install nothing (it says what it installed).
"""

import json
import os

import fence_record
import fence_runs
import nbformat
import pytest
from nbclient import NotebookClient
from site_support import ROOT, BuiltSite

from seq2seq_attention.core.device import DEVICE_ENV

PAGES = sorted(fence_runs.pages_with_fences(ROOT / "docs"))


@pytest.mark.parametrize("page", PAGES)
def test_the_page_s_notebook_runs_top_to_bottom(built_site: BuiltSite, page: str, tmp_path, monkeypatch):
    path = built_site.root / fence_record.notebook_path(page)
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert len(code) == 1 + len(fence_runs.pages_with_fences(ROOT / "docs")[page]), "one cell per spec fence"
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    monkeypatch.setenv("MPLBACKEND", "agg")
    assert not os.listdir(tmp_path)
    NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    installed = "".join(output.get("text", "") for output in code[0].outputs)
    assert installed.startswith("설치함: 없음"), f"the first cell installed something: {installed!r}"
    errors = [json.dumps(output)[:500] for cell in code for output in cell.outputs if output.output_type == "error"]
    assert not errors
