"""Markdown extension `fence_record`: what each spec fence printed, under it, and a stamp of the last verified runs;
and the MkDocs hook that writes a notebook per page.

Everything comes from the committed record `docs/fence-runs.json` (`hooks/fence_runs.py`), written by
`python -m pytest --record-fences`; the build runs no code. On a page with spec fences: under each fence, the output
its last CPU run printed (and the GPU's, where that differs), or "아직 실행하지 않음" for code with no recorded run;
under the title, the `mark`, linked to the appendix page saying what ran where (a lesson names no machine), and the
page's notebook (`hooks/fence_notebooks.py`), with an "Open in Colab" link when the repository is on GitHub.

The outputs and the mark are the extension's (a preprocessor, before pymdownx.snippets), so any engine that renders
Python-Markdown shows them. The notebooks need the whole site: this module is also a MkDocs hook, whose `on_files`
adds them and tells the extension to link them (Zensical runs no MkDocs hooks: no notebooks there), and whose
`on_config` stops a build on a malformed record with its one line before any page is rendered.
"""

import html
import posixpath
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

import fence_notebooks
import fence_runs
from engine import ROOT, page_of, per_version, stop_build
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

NOT_RUN = "아직 실행하지 않음"
VERIFICATION_PAGE = "appendix/verification.md"
"""The page that says what ran where (its #record section): the mark under each title links there."""

_notebooks: dict[str, str] = {}
"""The notebook of each page with spec fences, when the MkDocs hook made them: page path in docs -> notebook path."""


def notebook_path(page: str) -> str:
    """Where a page's notebook is published: `attention/scores.md` -> `attention/scores.ipynb`."""
    return str(PurePosixPath(page).with_suffix(".ipynb"))


def mark(fences: Sequence[fence_runs.Fence], runs: dict[str, dict[str, dict]]) -> str:
    """The short mark under a page's title: the devices its fences last ran on and the latest date ("CPU·GPU에서 실행 ·
    2026-11-27"), then what failed or has no run; a page none of whose fences ran says so."""
    cpu = [runs.get(f.key, {}).get(f.cpu_tag) for f in fences]
    gpu = [runs.get(f.key, {}).get("cuda") for f in fences if f.picks_device]
    ran = [run for run in (*cpu, *gpu) if run is not None]
    if not ran:
        return NOT_RUN
    devices = "·".join(name for name, part in (("CPU", cpu), ("GPU", gpu)) if any(part))
    text = f"{devices}에서 실행 · {max(run['date'] for run in ran)}"
    failed = sum(run["outcome"] != "passed" for run in ran)
    missing = len(cpu) + len(gpu) - len(ran)
    notes = [f"{count}개 {what}" for count, what in ((failed, "실패"), (missing, NOT_RUN)) if count]
    return text + (f" ({', '.join(notes)})" if notes else "")


def _block(kind: str, label: str, text: str | None = None) -> str:
    """One line of HTML, which Markdown leaves whole (newlines in the output are written as &#10;)."""
    body = f"<pre><code>{html.escape(text)}</code></pre>".replace("\n", "&#10;") if text else ""
    head = f'<p class="fence-output__label">{html.escape(label)}</p>'
    return f'<div class="fence-output fence-output--{kind}">{head}{body}</div>'


def output_blocks(fence: fence_runs.Fence, runs: dict[str, dict[str, dict]]) -> list[str]:
    """What goes under a fence: its recorded output (or failure) per device, or that it has not run."""
    recorded = runs.get(fence.key, {})
    cpu = recorded.get(fence.cpu_tag)
    if cpu is None:
        return [_block("missing", f"{NOT_RUN}: 이 코드는 기록된 실행 뒤에 바뀌었거나 새로 생겼습니다")]
    blocks = []
    for name, run in (("CPU", cpu), ("GPU", recorded.get("cuda") if fence.picks_device else None)):
        if run is None:
            continue
        if run["outcome"] != "passed":
            blocks.append(_block("failed", f"{name}에서 마지막 실행 실패 ({run['date']})", run.get("error")))
        elif run["output"] and (name == "CPU" or run["output"] != cpu["output"]):
            blocks.append(_block("printed", f"출력 · {name}", run["output"]))
    return blocks


runs_in = per_version(fence_runs.load)
"""The record at `path`, read once per version of the file."""


def page_markdown(markdown: str, page: str, runs: dict, repo_url: str | None) -> str:
    """`markdown` (the page `page`, a path in docs) with each fence's recorded output under it and the mark under its
    title (and the notebook links, when there is a notebook of the page)."""
    if not (fences := fence_runs.spec_fences(markdown)):
        return markdown
    lines = markdown.split("\n")
    for fence in reversed(fences):
        if blocks := output_blocks(fence, runs):
            lines[fence.end : fence.end] = ["", *blocks, ""]
    appendix = posixpath.relpath(VERIFICATION_PAGE, posixpath.dirname(page) or ".")
    parts = [f"[{html.escape(mark(fences, runs))}]({appendix}#record)"]
    if notebook := _notebooks.get(page):
        parts.append(f"[노트북으로 받기]({PurePosixPath(notebook).name}){{ download }}")
        if colab := fence_notebooks.colab_url(repo_url, notebook):
            parts.append(f"[Colab에서 열기]({colab})")
    line = f'<p class="fence-record" markdown>{" · ".join(parts)}</p>'
    title = next((i for i, text in enumerate(lines) if text.startswith("# ")), -1)
    lines[title + 1 : title + 1] = ["", line, ""]
    return "\n".join(lines)


class _Outputs(Preprocessor):
    def __init__(self, md: Markdown, record: Path, repo_url: str | None) -> None:
        super().__init__(md)
        self.record, self.repo_url = record, repo_url

    def run(self, lines: list[str]) -> list[str]:
        if (page := page_of(self.md)) is None:
            return lines
        return page_markdown("\n".join(lines), page.path, runs_in(self.record), self.repo_url).split("\n")


class FenceRecordExtension(Extension):
    def __init__(self, **kwargs) -> None:
        self.config = {
            "record": [str(ROOT / "docs" / fence_runs.RECORD_NAME), "the fence record"],
            "repo_url": ["", "the repository (a GitHub one gets Colab links)"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        outputs = _Outputs(md, Path(self.getConfig("record")), self.getConfig("repo_url") or None)
        md.preprocessors.register(outputs, "fence_record", 37)  # after excerpts (38), before pymdownx.snippets (32)


makeExtension = FenceRecordExtension  # noqa: N816 (Python-Markdown's name)


# ---------------------------------------------------------------------------------------------------
# The MkDocs hook: the record checked before any page, and the notebooks (they need the whole site)


def on_config(config) -> None:
    stop_build(fence_runs.load, Path(config.docs_dir) / fence_runs.RECORD_NAME)


def on_files(files, config):
    import fence_record  # the module the extension runs in: MkDocs loads this hook as a second copy of it
    from mkdocs.structure.files import File

    runs = runs_in(Path(config.docs_dir) / fence_runs.RECORD_NAME)
    site = {"site_url": config.site_url, "repo_url": config.repo_url, "extensions": config.mdx_configs}
    fence_record._notebooks.clear()
    for file in list(files.documentation_pages()):
        if fence_runs.spec_fences(file.content_string):
            path = notebook_path(file.src_uri)
            content = fence_notebooks.notebook(file.content_string, page=file.src_uri, runs=runs, **site)
            files.append(File.generated(config, path, content=content))
            fence_record._notebooks[file.src_uri] = path
    return files
