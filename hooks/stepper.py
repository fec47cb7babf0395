"""MkDocs hook: step through an excerpt with the tensors each line made in one recorded run.

`scripts/record_traces.py` records, for the excerpts of the line-by-line pages, what every line that
ran bound in one run of the packaged Bahdanau translator on one held-out sentence, in
``docs/assets/traces/bahdanau.json`` (committed; the build never runs the model, so the site
builds without torch). At build time this hook

* marks every excerpt fence whose section the trace holds (``--8<-- "src/...py:section"``) with
  ``data-stepper="src/...py:section"``, which `pymdownx.highlight` puts on the code block;
* writes the part of the trace a page needs into the page itself, as a
  ``<script type="application/json" id="__stepper-trace">`` at the end of its body (after the
  search index has read the page, so that numbers are not indexed), so that the page works opened
  from disk, where a browser may not fetch a JSON file.

`docs/assets/javascripts/stepper.js` turns each marked block into a stepper (buttons, keys, the
tensors of the highlighted line).
"""

import json
import logging
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

TRACE = Path("assets") / "traces" / "bahdanau.json"
"""The trace, under docs_dir."""
FENCE = re.compile(
    r'^(?P<fence>```+)\{(?P<options>[^}\n]*)\}\n--8<-- "(?P<ref>src/[^"\n]+\.py:[\w-]+)"\n(?P=fence)$', re.M
)
DATA_ID = "__stepper-trace"

log = logging.getLogger("mkdocs.hooks.stepper")
_trace: dict | None = None


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _trace
    path = Path(config.docs_dir) / TRACE
    _trace = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if _trace is None:
        log.info("no %s: the excerpts get no step-through (record it: python scripts/record_traces.py)", path)
    return config


def mark_fences(markdown: str, sections: dict) -> tuple[str, list[str]]:
    """`markdown` with ``data-stepper`` on each excerpt fence of a traced section, and those sections in order."""
    found: list[str] = []

    def mark(match: re.Match) -> str:
        ref, options = match["ref"], match["options"]
        if ref not in sections or "data-stepper=" in options:
            return match.group(0)
        found.append(ref)
        return f'{match["fence"]}{{{options} data-stepper="{ref}"}}\n--8<-- "{ref}"\n{match["fence"]}'

    return FENCE.sub(mark, markdown), list(dict.fromkeys(found))


def page_data(trace: dict, refs: list[str]) -> dict:
    """What one page's steppers read: the run (model, sentence, command) and the page's sections."""
    return {
        "command": trace["command"],
        "model": trace["model"]["path"],
        "sentence": trace["sentence"],
        "sections": {ref: trace["sections"][ref] for ref in refs},
    }


def data_script(data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{DATA_ID}">{text}</script>'


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not _trace:
        return markdown
    markdown, refs = mark_fences(markdown, _trace["sections"])
    page.meta["stepper_sections"] = refs
    return markdown


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    refs = page.meta.get("stepper_sections") if _trace else None
    if not refs:
        return output
    script = data_script(page_data(_trace, refs))
    at = output.rfind("</body>")
    return output[:at] + script + output[at:] if at >= 0 else output + script
