"""Markdown extension `stepper`: step through an excerpt with the tensors each line made in recorded runs.

`scripts/record_traces.py` records what every line of the line-by-line pages' excerpts bound in five runs of the
packaged Bahdanau translator into ``docs/assets/traces/bahdanau.json`` (committed: the build runs no model). This
extension reads it once (`load`, against ``schemas/trace.schema.json``: a bad file stops the build with one line,
`TraceError`), marks each excerpt fence of a traced section with ``data-stepper="src/...py:section"`` (which
`pymdownx.highlight` puts on the code block) and writes the page's part of the trace into the page, as a
``<script type="application/json" id="__stepper-trace">`` (search skips it; the page works opened from disk).
As a MkDocs hook, `on_config` reads the trace before any page. `docs/assets/javascripts/stepper.js` does the rest.
"""

import json
import re
from pathlib import Path

import snippets
from engine import ROOT, page_of, per_version, relative, stop_build
from json_files import FileError, entry, fail, read
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

TRACE = Path("assets") / "traces" / "bahdanau.json"
"""The trace, under docs_dir."""
COMMAND = "python scripts/record_traces.py"
"""The command that records the trace (`scripts/record_traces.py`)."""
LIVE_PAGE = "live.html"
"""The live page in the built site, where a stepper's sentence opens (``#s=<sentence>&step.bahdanau=<t>``)."""
DATA_ID = "__stepper-trace"


TraceError = FileError
"""The trace cannot be read: one line naming the file, the entry, what was expected and how to re-record."""


def load(path: Path) -> dict | None:
    """The trace at `path`, valid against ``schemas/trace.schema.json`` (None when there is none); `TraceError` names
    the file, the entry (run, section, step, value), what was expected and the command that re-records it."""
    if not path.exists():
        return None
    trace = read(path, "trace", COMMAND)
    for name, run in trace["runs"].items():  # what a schema cannot say: a step's line is one of its section's lines
        for ref, section in run["sections"].items():
            for n, step in enumerate(section["steps"]):
                if step["line"] >= len(section["lines"]):
                    where, lines = entry(["runs", name, "sections", ref, "steps", n, "line"]), len(section["lines"])
                    fail(str(path), where, f"an index of the section's {lines} lines", str(step["line"]), COMMAND)
    return trace


def on_config(config) -> None:
    stop_build(load, Path(config.docs_dir) / TRACE)


_load = per_version(load)


def traced_sections(trace: dict) -> set[str]:
    """Every section some run holds."""
    return {ref for run in trace["runs"].values() for ref in run["sections"]}


def mark_fences(markdown: str, sections: set[str] | dict) -> tuple[str, list[str]]:
    """`markdown` with ``data-stepper`` on each excerpt fence of a traced section, and those sections in order."""
    found: list[str] = []

    def mark(match: re.Match) -> str:
        ref, options = match["ref"], match["options"]
        if not match["section"] or ref not in sections or "data-stepper=" in options:
            return match.group(0)
        found.append(ref)
        return f'{match["fence"]}{{{options} data-stepper="{ref}"}}\n--8<-- "{ref}"\n{match["fence"]}'

    return snippets.EXCERPT.sub(mark, markdown), list(dict.fromkeys(found))


def page_data(trace: dict, refs: list[str], live: str | None = None) -> dict:
    """What one page's steppers read: the model, the command, the live page's URL and, per run that holds one
    of the page's sections, the run (title, sentences, passes) with those sections."""
    runs = {}
    for name, run in trace["runs"].items():
        sections = {ref: run["sections"][ref] for ref in refs if ref in run["sections"]}
        if sections:
            runs[name] = {**{k: v for k, v in run.items() if k != "sections"}, "sections": sections}
    about = {"command": trace["command"], "model": trace["model"]["path"], "split": trace["split"]}
    return {**about, "live": live, "runs": runs}


def data_script(data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{DATA_ID}">{text}</script>'


class _Marks(Preprocessor):
    """Each excerpt fence of a traced section gets ``data-stepper`` (before pymdownx.snippets includes its code), and
    the page's part of the trace goes at its end as a raw HTML block (Python-Markdown's html_block keeps it whole)."""

    def __init__(self, md: Markdown, trace: Path, live: str) -> None:
        super().__init__(md)
        self.trace, self.live = trace, live

    def run(self, lines: list[str]) -> list[str]:
        trace = _load(self.trace)
        page = page_of(self.md)
        if not trace or page is None:
            return lines
        markdown, refs = mark_fences("\n".join(lines), traced_sections(trace))
        if refs:
            data = page_data(trace, refs, relative(self.live, page) if self.live else None)
            markdown += f"\n\n{data_script(data)}\n"
        return markdown.split("\n")


class StepperExtension(Extension):
    def __init__(self, **kwargs) -> None:
        self.config = {
            "trace": [str(ROOT / "docs" / TRACE), "the trace"],
            "live": [LIVE_PAGE, "the live page in the built site ('': none)"],
        }
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        marks = _Marks(md, Path(self.getConfig("trace")), self.getConfig("live"))
        md.preprocessors.register(marks, "stepper", 36)  # after the excerpt titles (38), before pymdownx.snippets (32)


makeExtension = StepperExtension  # noqa: N816 (Python-Markdown's name)
