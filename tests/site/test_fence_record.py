"""The committed fence record is current, and the site shows it: outputs under fences, a stamp, a notebook.

The record (`docs/fence-runs.json`, `hooks/fence_runs.py`) is written by `python -m pytest --record-fences`
(tests/site/test_fence_machinery.py tests the writing); the site build reads it (`hooks/fence_record.py`).
"""

import html
import os
import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path

import fence_notebooks
import fence_record
import fence_runs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_markdown_docs.plugin import extract_fence_tests
from site_support import ROOT, BuiltSite

DOCS = ROOT / "docs"
RECORD = DOCS / fence_runs.RECORD_NAME
PAGES = fence_runs.pages_with_fences(DOCS)


def test_the_record_is_current_on_cpu(request: pytest.FixtureRequest):
    if request.config.getoption("--record-fences"):
        pytest.skip("--record-fences rewrites the record at the end of this run and checks it then (conftest.py)")
    problems = fence_runs.stale(DOCS, fence_runs.load(RECORD))
    assert not problems, (
        f"docs/{fence_runs.RECORD_NAME} is stale for these fences; re-record with `{fence_runs.RECORD_COMMAND}` "
        "(or `python -m pytest docs --record-fences` for the fences alone) and commit the record:\n"
        + "\n".join(problems)
    )


def test_the_record_reads_fences_with_the_plugins_own_parser(request: pytest.FixtureRequest):
    """One parser of fences: the record's are pytest-markdown-docs' tests (`extract_fence_tests`), read with the
    parser this pytest run gives the plugin (its `pytest_markdown_docs_markdown_it` hook), so they cannot disagree."""
    assert fence_runs.extract_fence_tests is extract_fence_tests
    used = request.config.hook.pytest_markdown_docs_markdown_it()
    assert fence_runs.PARSER.options == used.options
    assert fence_runs.PARSER.block.ruler.get_active_rules() == used.block.ruler.get_active_rules()


def test_a_fence_s_key_follows_its_code_and_what_it_continues():
    page = "# p\n\n```python\nx = 1\n```\n\ntext\n\n```{.python continuation}\nassert x == 1\n```\n"
    first, second = fence_runs.spec_fences(page)
    moved = fence_runs.spec_fences(page.replace("text", "more\n\ntext moved the fences down"))
    assert [f.key for f in moved] == [first.key, second.key], "prose around a fence does not change its key"
    changed = fence_runs.spec_fences(page.replace("x = 1", "x = 1  # changed"))
    assert changed[0].key != first.key and changed[1].key != second.key, "a change reaches every continuation"
    alone = fence_runs.spec_fences(page.replace("{.python continuation}", "python"))
    assert alone[1].key != second.key, "the same code run on its own is another fence"


run_strategy = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "outcome": st.sampled_from(["passed", "failed"]),
            "output": st.just(""),
            "seconds": st.just(0.1),
            "torch": st.sampled_from(["2.4.0", "2.13.0+cpu"]),
            "device": st.sampled_from(["AMD EPYC", "NVIDIA H100"]),
            "date": st.sampled_from(["2026-11-20", "2026-11-24"]),
        }
    ),
)


@given(st.lists(st.tuples(st.booleans(), run_strategy, run_strategy), min_size=1, max_size=6))
def test_the_mark_claims_only_what_the_record_holds(spec: list[tuple[bool, dict | None, dict | None]]):
    """The mark under a page's title: the devices that ran, the latest date, what failed and what has no run; no
    machine, no PyTorch version (a lesson names no machine: the appendix says what ran where)."""
    fences = [
        fence_runs.Fence(line=i, end=i, code="", key=f"k{i}", picks_device=device)
        for i, (device, _, _) in enumerate(spec)
    ]
    runs = {}
    for fence, (_, cpu, gpu) in zip(fences, spec, strict=True):
        runs[fence.key] = {tag: run for tag, run in ((fence.cpu_tag, cpu), ("cuda", gpu)) if run}
    shown = fence_record.mark(fences, runs)
    cpu = [cpu for _, cpu, _ in spec]
    gpu = [gpu for device, _, gpu in spec if device]
    ran = [run for run in (*cpu, *gpu) if run]
    if not ran:
        assert shown == fence_record.NOT_RUN
        return
    devices = "·".join(name for name, part in (("CPU", cpu), ("GPU", gpu)) if any(part))
    assert shown.startswith(f"{devices}에서 실행 · {max(run['date'] for run in ran)}"), shown
    failed = sum(run["outcome"] == "failed" for run in ran)
    assert (f"{failed}개 실패" in shown) == bool(failed), shown
    missing = len(cpu) + len(gpu) - len(ran)
    assert (f"{missing}개 {fence_record.NOT_RUN}" in shown) == bool(missing), shown
    assert re.findall(r"\d{4}-\d\d-\d\d", shown) == [max(run["date"] for run in ran)], shown
    assert not any(value in shown for value in ("2.4.0", "2.13.0+cpu", "AMD EPYC", "NVIDIA H100")), shown


def test_colab_links_only_for_a_github_repository():
    expected = "https://colab.research.google.com/github/owner/repo/blob/gh-pages/attention/scores.ipynb"
    for repo in (
        "https://github.com/owner/repo",
        "https://github.com/owner/repo/",
        "https://github.com/owner/repo.git",
    ):
        assert fence_notebooks.colab_url(repo, "attention/scores.ipynb") == expected
    for repo in (None, "", "https://gitlab.com/owner/repo", "https://github.com/owner"):
        assert fence_notebooks.colab_url(repo, "attention/scores.ipynb") is None


def _built(site: BuiltSite, page: str) -> str:
    name = Path(page).with_suffix(".html")
    return (site.root / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_built_page_shows_the_record(built_site: BuiltSite, page: str):
    built = _built(built_site, page)
    runs = fence_runs.load(RECORD)
    fences = PAGES[page]
    stamp = re.search(r'<p class="fence-record">(.*?)</p>', built)
    assert stamp, "no verification stamp under the title"
    assert html.unescape(re.sub(r"<[^>]+>", "", stamp[1])).startswith(fence_record.mark(fences, runs))
    appendix = posixpath.relpath(fence_record.VERIFICATION_PAGE, posixpath.dirname(page) or ".")
    assert f'href="{appendix.removesuffix(".md")}.html#record"' in stamp[1]  # the mark leads to what ran where
    notebook = fence_record.notebook_path(page)
    assert f'href="{Path(notebook).name}"' in stamp[1] and (built_site.root / notebook).is_file()
    colabs = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', stamp[1])
    assert colabs in ([], [fence_notebooks.colab_url(_repo_url(built_site), notebook)])
    assert bool(colabs) == bool(fence_notebooks.colab_url(_repo_url(built_site), notebook))
    missing = sum(fence.key not in runs or fence.cpu_tag not in runs[fence.key] for fence in fences)
    assert built.count("fence-output--missing") == missing
    text = html.unescape(re.sub(r"<[^>]+>", "", built))  # other hooks may wrap words of code in spans
    for fence in fences:
        output = runs.get(fence.key, {}).get(fence.cpu_tag, {}).get("output")
        if output:
            assert f"출력 · CPU{output}" in text, f"line {fence.line}: its recorded output is not under it"


def _repo_url(site: BuiltSite) -> str | None:
    """The repository URL the build used: Material shows it as the header's source link."""
    match = re.search(r'<a href="([^"]+)" title="[^"]*" class="md-source"', (site.root / "index.html").read_text())
    return match[1] if match else None


def _build(project: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "hooks")},  # the site's Markdown extensions
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return (project / "site" / "attention" / "one-step.html").read_text(encoding="utf-8")


def test_a_changed_fence_shows_not_yet_run_and_makes_the_record_stale(tmp_path: Path):
    """A temporary copy of a page and of the committed record: unchanged, then with one fence changed."""
    docs = tmp_path / "docs"
    (docs / "attention").mkdir(parents=True)
    page = docs / "attention" / "one-step.md"
    shutil.copy(DOCS / "attention" / "one-step.md", page)
    shutil.copy(RECORD, docs / fence_runs.RECORD_NAME)
    (tmp_path / "mkdocs.yml").write_text(
        f"""site_name: copy
docs_dir: {docs}
site_dir: {tmp_path / "site"}
use_directory_urls: false
validation:
  links:
    not_found: info  # the copied page links to pages the copy leaves out
hooks:
  - {ROOT / "hooks" / "fence_record.py"}
markdown_extensions:
  - attr_list
  - md_in_html
  - pymdownx.superfences
  - fence_record:
      record: {docs / fence_runs.RECORD_NAME}
""",
        encoding="utf-8",
    )
    runs = fence_runs.load(docs / fence_runs.RECORD_NAME)
    first, second, third = fence_runs.spec_fences(page.read_text(encoding="utf-8"))
    assert fence_runs.stale(docs, runs) == [], "the committed record is stale for this page (see the test above)"
    built = _build(tmp_path)
    assert "fence-output--missing" not in built and "e_2j     (2, 1, 4)" in built

    text = page.read_text(encoding="utf-8")
    changed = text.replace("assert p_2.shape == (B, 1, V)\n", "assert p_2.shape == (B, 1, V)  # !\n")
    assert changed != text, "the line this test changes is no longer on the page"
    page.write_text(changed)
    built = _build(tmp_path)
    assert fence_runs.stale(docs, runs) == [
        f"attention/one-step.md:{second.line}: no cpu run recorded for this code",
        f"attention/one-step.md:{third.line}: no cpu run recorded for this code",  # it continues the changed one
    ]
    assert built.count("fence-output--missing") == 2 and fence_record.NOT_RUN in built
    assert "e_2j     (2, 1, 4)" not in built, "a changed fence shows no output from before the change"
    shown = fence_record.mark(fence_runs.spec_fences(changed), runs)  # the short mark counts what has no run
    assert shown in built and f"개 {fence_record.NOT_RUN})" in shown
