"""MkDocs hook: step through an excerpt with the tensors each line made in recorded runs.

`scripts/record_traces.py` records, for the excerpts of the line-by-line pages, what every line bound each time
it ran in five runs of the packaged Bahdanau translator (one sentence translated, every decoding step; a padded
batch of two; the training loop fed its own guesses; one training step; beam search), in
``docs/assets/traces/bahdanau.json`` (committed; the build never runs the model, so the site builds without
torch). At build time this hook

* reads the trace once, through `load`, which checks all of it first: a truncated, malformed or mistyped file
  stops the build with one line (`TraceError`: the file, the entry, what was expected, the command that
  re-records it), never a `KeyError` halfway through, nor a stepper that breaks in the browser;
* marks every excerpt fence whose section a run holds (``--8<-- "src/...py:section"``) with
  ``data-stepper="src/...py:section"``, which `pymdownx.highlight` puts on the code block;
* writes the part of the trace a page needs into the page itself, as a
  ``<script type="application/json" id="__stepper-trace">`` at the end of its body (after the
  search index has read the page, so that numbers are not indexed), so that the page works opened
  from disk, where a browser may not fetch a JSON file.

`docs/assets/javascripts/stepper.js` turns each marked block into a stepper (runs, passes, lines, keys, the
tensors of the highlighted line, a link to the live page).
"""

import json
import logging
import re
from pathlib import Path

import snippets
from fence_runs import read_json, short  # the record's reader reads the file and shows a value the same way
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

TRACE = Path("assets") / "traces" / "bahdanau.json"
"""The trace, under docs_dir."""
COMMAND = "python scripts/record_traces.py"
"""The command that records the trace (`scripts/record_traces.py`)."""
FORMAT, VERSION = "seq2seq-attention/traces", 2
LIVE_PAGE = "live.md"
"""The live page, where a stepper's sentence opens (its URL fragment: ``#s=<sentence>&step.bahdanau=<t>``)."""
DATA_ID = "__stepper-trace"

log = logging.getLogger("mkdocs.hooks.stepper")
_trace: dict | None = None


# ---------------------------------------------------------------------------------------------------
# The one reader of the trace


class TraceError(ValueError):
    """The trace cannot be read: one line naming the file, the entry, what was expected and how to re-record
    (the site build stops with it)."""


def _message(path: Path, where: list[str], problem: str) -> str:
    place = "".join(f", {part}" for part in where)
    return (
        f"{path}{place}: {problem}. The trace is written by `{COMMAND}`: restore the committed one "
        f"(git checkout -- {path}) or re-record it with `{COMMAND}`"
    )


def load(path: Path) -> dict | None:
    """The trace at `path`, checked against its shape in full (None when there is none).

    Raises:
        TraceError: the file is not JSON (truncated, hand-broken, a merge conflict left in it) or not the
            trace's shape; the message names the file, the entry (run, section, step, value), what was expected and
            the command that re-records it.
    """
    if not path.is_file():
        return None
    trace = read_json(path, lambda problem: TraceError(_message(path, [], problem)))
    _check(path, trace)
    return trace


_NUMBER = (int, float)
_CELL = (int, float, bool, str)  # a value: a number, a bool (a mask), "nan"/"inf"


def _is(value: object, kind: type | tuple) -> bool:
    if isinstance(value, bool) and kind in (int, float, _NUMBER):
        return False
    return isinstance(value, kind)


def _list_of(value: object, kind: type | tuple, depth: int = 1) -> bool:
    """A list (of lists, `depth` deep) of `kind`; the innermost level may also be a list one deeper."""
    if not isinstance(value, list):
        return False
    if depth == 1:
        return all(_is(item, kind) for item in value)
    return all(_list_of(item, kind, depth - 1) for item in value)


def _nested(value: object, kind: type | tuple, depths: tuple[int, ...]) -> bool:
    return any(_list_of(value, kind, depth) for depth in depths)


def _check_value(value: object) -> str | None:
    """What is wrong with one recorded value (None: nothing)."""
    if not isinstance(value, dict) or not _is(value.get("name"), str):
        return 'expected a value {"name": str, "kind": ...}, got ' + short(value)
    kind = value.get("kind")
    if kind == "tensor":
        if not _list_of(value.get("shape"), int):
            return f'"shape" must be a list of integers, got {short(value.get("shape"))}'
        if not _is(value.get("dtype"), str):
            return f'"dtype" must be a string, got {short(value.get("dtype"))}'
        if "dims" in value and not _list_of(value["dims"], str):
            return f'"dims" must be a list of strings, got {short(value["dims"])}'
        if "values" in value and not _nested(value["values"], _CELL, (1, 2)):
            return f'"values" must be a list (of rows) of numbers, got {short(value["values"])}'
        if "words" in value and not _nested(value["words"], str, (1, 2)):
            return f'"words" must be a list (of rows) of strings, got {short(value["words"])}'
        if "top" in value:
            top = value["top"]  # [word, number] pairs, or rows of them
            rows = top if top and isinstance(top[0], list) and top[0] and isinstance(top[0][0], list) else [top]
            if not all(
                isinstance(row, list)
                and all(isinstance(p, list) and len(p) == 2 and _is(p[0], str) and _is(p[1], _CELL) for p in row)
                for row in rows
            ):
                return f'"top" must be (rows of) [word, number] pairs, got {short(top)}'
        for key in ("cols", "rows"):
            if key in value and not _list_of(value[key], str):
                return f'"{key}" must be a list of strings, got {short(value[key])}'
        if "value" in value and not _is(value["value"], _CELL):
            return f'"value" must be a number, got {short(value["value"])}'
        return None
    if kind == "module":
        if not _is(value.get("repr"), str) or not isinstance(value.get("params"), dict):
            return 'a module needs "repr" (a string) and "params" ({name: shape}), got ' + short(value)
        if not all(_list_of(shape, int) for shape in value["params"].values()):
            return f'"params" must map names to shapes (lists of integers), got {short(value["params"])}'
        return None
    if kind == "object":
        if not _is(value.get("type"), str) or not isinstance(value.get("fields"), dict):
            return 'an object needs "type" (a string) and "fields" ({name: shape or repr}), got ' + short(value)
        return None
    if kind == "value":
        return None if _is(value.get("repr"), str) else f'"repr" must be a string, got {short(value.get("repr"))}'
    return f'"kind" must be one of tensor, module, object, value, got {short(kind)}'


def _check_training_step(step: object) -> str | None:
    """What is wrong with a training step's numbers (None: nothing)."""
    if not isinstance(step, dict) or not _is(step.get("loss"), _NUMBER):
        return 'expected {"loss": number, "grad_norms": {name: number}, "calls": [...]}, got ' + short(step)
    norms = step.get("grad_norms")
    if not isinstance(norms, dict) or not all(_is(v, _NUMBER) for v in norms.values()):
        return f'"grad_norms" must map parameter names to numbers, got {short(norms)}'
    calls = step.get("calls")
    kinds = {"schedule": str, "ratio": _NUMBER, "k": _NUMBER, "epoch": int, "result": _NUMBER}
    if not isinstance(calls, list) or not all(
        isinstance(call, dict) and all(_is(call.get(key), kind) for key, kind in kinds.items()) for call in calls
    ):
        return (
            '"calls" must be a list of {"schedule": str, "ratio": number, "k": number, "epoch": int, "result": '
            f"number}}, got {short(calls)}"
        )
    return None


def _check(path: Path, trace: object) -> None:
    """Raise `TraceError` at the first place `trace` differs from the trace's shape."""

    def fail(where: list[str], problem: str) -> None:
        raise TraceError(_message(path, where, problem))

    if not isinstance(trace, dict):
        fail([], f"expected an object, got {type(trace).__name__}")
    if trace.get("format") != FORMAT or trace.get("version") != VERSION:
        fail(
            [],
            f'expected "format": "{FORMAT}", "version": {VERSION}, got {short(trace.get("format"))}, '
            f"{short(trace.get('version'))}",
        )
    for key, kind in (("command", str), ("split", str), ("model", dict), ("runs", dict), ("pages", list)):
        if not isinstance(trace.get(key), kind):
            expected = {str: "a string", dict: "an object", list: "a list"}[kind]
            fail([], f'"{key}" must be {expected}, got {short(trace.get(key))}')
    if not _is(trace["model"].get("path"), str):
        fail(["model"], f'"path" must be a string, got {short(trace["model"].get("path"))}')
    for name, run in trace["runs"].items():
        where = [f"run {name!r}"]
        if not isinstance(run, dict) or not _is(run.get("title"), str) or not isinstance(run.get("sections"), dict):
            fail(where, 'expected {"title": str, "sentences": [...], "sections": {...}}, got ' + short(run))
        sentences = run.get("sentences")
        if not isinstance(sentences, list) or not sentences:
            fail(where, f'"sentences" must be a non-empty list, got {short(sentences)}')
        for n, sentence in enumerate(sentences, start=1):
            ok = isinstance(sentence, dict) and all(_is(sentence.get(k), str) for k in ("source", "reference"))
            if not ok or not _list_of(sentence.get("source_tokens"), str):
                fail(
                    [*where, f"sentence {n}"],
                    f'expected {{"source": str, "source_tokens": [str], "reference": str, ...}}, got {short(sentence)}',
                )
        if "training_step" in run:
            problem = _check_training_step(run["training_step"])
            if problem:
                fail([*where, "training_step"], problem)
        for n, one in enumerate(run.get("passes", []), start=1):
            if not isinstance(one, dict) or not _is(one.get("t"), int):
                fail([*where, f"pass {n}"], f'expected {{"t": int, "fed": [str], "chosen": [str]}}, got {short(one)}')
            for key in ("fed", "chosen", "target"):
                if key in one and not _list_of(one[key], str):
                    fail([*where, f"pass {n}"], f'"{key}" must be a list of words, got {short(one[key])}')
        for ref, section in run["sections"].items():
            at = [*where, f"section {ref!r}"]
            if not isinstance(section, dict) or not isinstance(section.get("lines"), list):
                fail(at, 'expected {"lines": [...], "steps": [...]}, got ' + short(section))
            for n, line in enumerate(section["lines"]):
                if not isinstance(line, dict) or not _list_of(line.get("text"), str) or not _is(line.get("at"), int):
                    fail([*at, f"line {n}"], f'expected {{"text": [str], "at": int}}, got {short(line)}')
            steps = section.get("steps")
            if not isinstance(steps, list) or not steps:
                fail(at, f'"steps" must be a non-empty list, got {short(steps)}')
            for n, step in enumerate(steps, start=1):
                here = [*at, f"step {n}"]
                if not isinstance(step, dict) or not _is(step.get("line"), int) or not _is(step.get("t"), int):
                    fail(here, f'expected {{"line": int, "t": int, "values": [...]}}, got {short(step)}')
                if not 0 <= step["line"] < len(section["lines"]):
                    fail(here, f'"line" must index "lines" (0 to {len(section["lines"]) - 1}), got {step["line"]}')
                if not isinstance(step.get("values"), list):
                    fail(here, f'"values" must be a list, got {short(step.get("values"))}')
                for value in step["values"]:
                    problem = _check_value(value)
                    if problem:
                        name = value.get("name") if isinstance(value, dict) else None
                        fail([*here, f"value {name!r}"] if isinstance(name, str) else here, problem)


# ---------------------------------------------------------------------------------------------------
# The build


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _trace
    path = Path(config.docs_dir) / TRACE
    try:
        _trace = load(path)
    except TraceError as error:  # a malformed trace stops the build with its one line
        raise PluginError(str(error)) from None
    if _trace is None:
        log.info("no %s: the excerpts get no step-through (record it: %s)", path, COMMAND)
    return config


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
    return {
        "command": trace["command"],
        "model": trace["model"]["path"],
        "split": trace["split"],
        "live": live,
        "runs": runs,
    }


def data_script(data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{DATA_ID}">{text}</script>'


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if not _trace:
        return markdown
    markdown, refs = mark_fences(markdown, traced_sections(_trace))
    page.meta["stepper_sections"] = refs
    live = files.get_file_from_path(LIVE_PAGE)
    page.meta["stepper_live"] = get_relative_url(live.url, page.url) if live is not None else None
    return markdown


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    refs = page.meta.get("stepper_sections") if _trace else None
    if not refs:
        return output
    script = data_script(page_data(_trace, refs, page.meta.get("stepper_live")))
    at = output.rfind("</body>")
    return output[:at] + script + output[at:] if at >= 0 else output + script
