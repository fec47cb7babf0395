"""Record what every excerpted line made in one real run, for the pages' step-through (hooks/stepper.py).

The line-by-line pages (`PAGES`) show source excerpts (`--8<-- "src/...py:section"`); this script
finds those sections on the pages, runs the packaged Bahdanau translator on one held-out sentence
under `sys.settrace`, and records, for each line of a section that ran, what the line bound: an
assignment its targets, a `return` line its value. Only the first time a line runs counts, so a
loop shows its first iteration and the decoder its first step. Four workloads run, in this order:
loading the checkpoint (the `__init__` sections), the attention module called on its own with the first
step's query (its `forward`), greedy translation (`translate`: the keys projected once, then the
first decoding step) and one teacher-forced pass with the reference
translation as the target (the training loop: `forward`, `loop`, `after_loop`).

A tensor is recorded with its shape, the letters of the line's trailing shape comment where they fit
(`# (B, T, S)` -> ``B=1, T=1, S=6``) and a small slice of its values (leading dimensions of size 1
dropped, at most `ROWS` rows and `COLS` columns; over the target vocabulary V the `TOP` largest,
with their words), rounded to `DECIMALS` decimals. The output is one compact JSON file, keyed by
snippet reference and by each line's text, so that it matches what the page shows; the build reads
it (the site builds without torch), `tests/test_traces.py` compares it with a fresh run.

Run it after changing an excerpted section (and commit the result):

    python scripts/record_traces.py

`--check` records afresh and compares with the committed file instead of writing (exit status 1,
with the differences, when they disagree); `--out` writes elsewhere; `--sentence` picks another
held-out sentence (by default the first of the test split with S = 6 tokens that the model
translates exactly).
"""

import argparse
import ast
import json
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "hooks"))
from excerpts import section_lines  # noqa: E402  (the site's own reading of a section's markers)

PAGES = (
    "docs/bahdanau/attention.md",
    "docs/bahdanau/decoder.md",
    "docs/bahdanau/forward_step.md",
    "docs/bahdanau/loop.md",
    "docs/attention/one-step.md",
)
"""The line-by-line pages whose excerpts get a step-through (chapter 4 and the one-step page)."""
TRACE_PATH = ROOT / "docs" / "assets" / "traces" / "bahdanau.json"
MODEL = "src/seq2seq_attention/pretrained/bahdanau"
COMMAND = "python scripts/record_traces.py"
SOURCE_TOKENS = 6
"""S of the default sentence: five words and `<eos>`."""
ROWS, COLS, TOP = 6, 8, 5
DECIMALS = 6
"""Values are stored to 6 decimals (the page rounds them to 4): a fresh run agrees within 1e-5."""
TOLERANCE = 1e-5
SNIPPET = re.compile(r'^--8<-- "(?P<path>src/[^"]+\.py):(?P<section>[\w-]+)"\s*$', re.M)
SHAPE_TUPLE = re.compile(r"\(([^()]*)\)")
DIM = re.compile(r"^(?P<times>\d*)(?P<letter>[A-Za-z][\w']*)$|^(?P<size>\d+)$")


# ---------------------------------------------------------------------------------------------------
# Sections and statements (no torch needed: the test of staleness uses these too)


def page_sections(pages: tuple[str, ...] = PAGES) -> list[str]:
    """The snippet references (``path:section``) of the source excerpts on `pages`, in page order, once each."""
    found: dict[str, None] = {}
    for page in pages:
        for match in SNIPPET.finditer((ROOT / page).read_text(encoding="utf-8")):
            found[f"{match['path']}:{match['section']}"] = None
    return list(found)


def section_texts(reference: str) -> list[str]:
    """The section's lines as the page shows them, stripped of their indentation."""
    path, section = reference.rsplit(":", 1)
    first, last = section_lines(path, section)
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines[first - 1 : last]]


@dataclass(frozen=True)
class Statement:
    """One statement's own lines (a compound statement: its header), and what it binds."""

    first: int
    last: int
    node: ast.stmt = field(compare=False, hash=False)


def _header_end(node: ast.stmt) -> int:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and not isinstance(node, ast.FunctionDef | ast.ClassDef):
        return body[0].lineno - 1
    return node.end_lineno or node.lineno


def statements(path: Path) -> dict[int, Statement]:
    """Each line of the file to the innermost statement it belongs to."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    owner: dict[int, Statement] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            statement = Statement(node.lineno, max(node.lineno, _header_end(node)), node)
            for line in range(statement.first, statement.last + 1):
                known = owner.get(line)
                if known is None or known.last - known.first >= statement.last - statement.first:
                    owner[line] = statement
    return owner


# ---------------------------------------------------------------------------------------------------
# Values


def shape_tuples(line: str) -> list[list[str]]:
    """The shapes a trailing comment states for the line's result: ``# (B, 1, H), (B, 1, S) or None`` -> two."""
    if "#" not in line:
        return []
    comment = line.split("#", 1)[1].rsplit("->", 1)[-1]
    shapes = []
    for inside in SHAPE_TUPLE.findall(comment):
        dims = [d.strip() for d in inside.split(",") if d.strip()]
        if dims and all(DIM.match(d) for d in dims):
            shapes.append(dims)
    return shapes


def _fits(dims: list[str], shape: tuple[int, ...], known: dict[str, int]) -> bool:
    if len(dims) != len(shape):
        return False
    seen: dict[str, int] = {}
    for dim, size in zip(dims, shape, strict=True):
        match = DIM.match(dim)
        if match["size"] is not None:
            if int(match["size"]) != size:
                return False
            continue
        times = int(match["times"] or 1)
        letter = match["letter"]
        if size % times:
            return False
        base = size // times
        if known.get(letter, base) != base or seen.setdefault(letter, base) != base:
            return False
    return True


def letters(dims: list[str], shape: tuple[int, ...]) -> list[str]:
    """``["B", "1", "S"]`` and (1, 1, 6) -> ``["B=1", "1", "S=6"]``."""
    return [dim if dim.isdigit() else f"{dim}={size}" for dim, size in zip(dims, shape, strict=True)]


def _round(value: float) -> float | str:
    if math.isnan(value) or math.isinf(value):
        return str(value)
    rounded = round(value, DECIMALS)
    return 0.0 if rounded == 0 else rounded


@dataclass
class Context:
    """What labels a slice: the sentence's tokens (over S), the target words (over V), the sizes known."""

    source_tokens: list[str]
    source_words: list[str]
    target_words: list[str]
    known: dict[str, int]


def describe_tensor(tensor, dims: list[str] | None, ctx: Context) -> dict:
    """Shape, letters and a small rounded slice of `tensor`."""
    import torch

    shape = tuple(tensor.shape)
    record: dict = {"kind": "tensor", "shape": list(shape), "dtype": str(tensor.dtype).removeprefix("torch.")}
    if dims is not None:
        record["dims"] = letters(dims, shape)
    data = tensor.detach().to("cpu")
    names = list(dims) if dims is not None else [None] * len(shape)
    index = []
    while data.dim() > 2 or (data.dim() > 1 and data.size(0) == 1):
        index.append(0)
        data, names = data[0], names[1:]
    if index:
        record["slice"] = "[" + ", ".join(map(str, index)) + "]"
    if data.dim() == 0:
        record["value"] = _round(float(data)) if data.is_floating_point() else data.item()
        return record
    rows = data.unsqueeze(0) if data.dim() == 1 else data
    row_dim = None if data.dim() == 1 else names[0]
    col_dim = names[-1]
    if data.dim() == 2 and rows.size(0) > ROWS:
        record["rows_shown"] = ROWS
    rows = rows[:ROWS]
    if col_dim == "V" and rows.size(1) > COLS and rows.is_floating_point():
        best = torch.topk(rows.float(), TOP, dim=-1)
        record["top"] = [
            [[ctx.target_words[i], _round(float(v))] for v, i in zip(vs.tolist(), ix.tolist(), strict=True)]
            for vs, ix in zip(best.values, best.indices, strict=True)
        ]
    else:
        if rows.size(1) > COLS:
            record["cols_shown"] = COLS
        shown = rows[:, :COLS]
        convert = (lambda v: _round(float(v))) if shown.is_floating_point() else (lambda v: v)
        record["values"] = [[convert(v) for v in row] for row in shown.tolist()]
        vocabulary = {"S": ctx.source_words, "T": ctx.target_words}.get(col_dim)
        if vocabulary is not None and not shown.is_floating_point() and shown.dtype != torch.bool:
            record["words"] = [
                [vocabulary[v] if 0 <= v < len(vocabulary) else "?" for v in row] for row in shown.tolist()
            ]
        if col_dim == "S" and shown.size(1) == len(ctx.source_tokens):
            record["cols"] = ctx.source_tokens
    if row_dim == "S" and rows.size(0) <= len(ctx.source_tokens):
        record["rows"] = ctx.source_tokens[: rows.size(0)]
    if data.dim() == 1:  # a vector: one flat list
        for key in ("values", "top", "words"):
            if key in record:
                record[key] = record[key][0]
    return record


def describe(value, dims: list[str] | None, ctx: Context) -> dict:
    """A tensor (`describe_tensor`), a module (class, parameter shapes), an object of tensors, or a plain value."""
    import torch
    from torch import nn

    if isinstance(value, torch.Tensor):
        return describe_tensor(value, dims, ctx)
    if isinstance(value, nn.Module):
        shapes = {name: list(p.shape) for name, p in value.named_parameters(recurse=False)}
        return {"kind": "module", "repr": _short(repr(value)), "params": shapes}
    fields = getattr(value, "__dataclass_fields__", None)
    if fields:
        parts = {}
        for name in fields:
            item = getattr(value, name)
            parts[name] = list(item.shape) if isinstance(item, torch.Tensor) else _short(repr(item))
        return {"kind": "object", "type": type(value).__name__, "fields": parts}
    if isinstance(value, float):
        return {"kind": "value", "repr": repr(_round(value))}
    return {"kind": "value", "repr": _short(repr(value))}


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------------
# Tracing


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AugAssign | ast.AnnAssign) and getattr(node, "value", None) is not None:
        return [node.target]
    if isinstance(node, ast.For):
        return [node.target]
    return []


def _bindings(node: ast.stmt, frame, returned: object, has_return: bool) -> list[tuple[str, object]]:
    """What the statement bound, as (name, value) pairs: its assignment targets, or its return value."""
    if isinstance(node, ast.Return):
        if not has_return or node.value is None:
            return []
        if isinstance(node.value, ast.Tuple) and isinstance(returned, tuple) and len(returned) == len(node.value.elts):
            return [(ast.unparse(e), v) for e, v in zip(node.value.elts, returned, strict=True)]
        if isinstance(returned, tuple) and not hasattr(returned, "_fields"):  # `return self.attend(...)`: a pair
            return [(f"return[{i}]", v) for i, v in enumerate(returned)]
        return [("return", returned)]
    found: list[tuple[str, object]] = []

    def bind(target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                bind(element)
        elif isinstance(target, ast.Name) and target.id != "_":
            if target.id in frame.f_locals:
                found.append((target.id, frame.f_locals[target.id]))
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = frame.f_locals.get(target.value.id)
            if owner is not None and hasattr(owner, target.attr):
                found.append((ast.unparse(target), getattr(owner, target.attr)))

    for target in _targets(node):
        bind(target)
    return found


class Recorder:
    """`sys.settrace` over the sections: the first run of each of their lines, with what it bound."""

    def __init__(self, references: list[str], ctx: Context) -> None:
        self.ctx = ctx
        self.files: dict[str, dict[int, Statement]] = {}
        self.sections: dict[str, list[tuple[str, int, int]]] = {}  # file -> (reference, first, last)
        for reference in references:
            path, section = reference.rsplit(":", 1)
            filename = str((ROOT / path).resolve())
            first, last = section_lines(path, section)
            self.sections.setdefault(filename, []).append((reference, first, last))
            if filename not in self.files:
                self.files[filename] = statements(ROOT / path)
        self.steps: dict[str, list[dict]] = {reference: [] for reference in references}
        self.done: set[tuple[str, int]] = set()
        self.pending: dict[int, tuple[str, Statement, int]] = {}  # id(frame) -> the statement running, its start
        self.started = 0  # statements started so far: a line's place in the run is when it starts, not when it ends
        self.dims: dict[int, dict[str, tuple]] = {}  # id(frame) -> name -> (shape, letters) bound in this call

    def _where(self, filename: str, statement: Statement) -> list[tuple[str, int, int]]:
        return [s for s in self.sections.get(filename, []) if s[1] <= statement.first and statement.last <= s[2]]

    def _finish(self, frame, returned: object = None, has_return: bool = False) -> None:
        filename, statement, started = self.pending.pop(id(frame), (None, None, 0))
        if statement is None:
            return
        lines = Path(filename).read_text(encoding="utf-8").splitlines()
        # a multi-line statement's shape comment is on its last line (`)  # (B, 1, H), (B, 1, S)`)
        node = statement.node
        end = statement.last if isinstance(node, ast.If | ast.For | ast.While | ast.With) else node.end_lineno
        text = [line.strip() for line in lines[statement.first - 1 : end]]
        shapes = shape_tuples(lines[end - 1])
        values = []
        named = self.dims.setdefault(id(frame), {})
        for name, value in _bindings(node, frame, returned, has_return):
            dims = None
            shape = tuple(getattr(value, "shape", ()))
            if hasattr(value, "shape"):
                for candidate in shapes:
                    if _fits(candidate, shape, self.ctx.known):
                        dims = candidate
                        shapes.remove(candidate)
                        break
                else:  # `return context, weights`: the letters of the line that made them, in this call
                    earlier = named.get(name)
                    dims = earlier[1] if earlier is not None and earlier[0] == shape else None
                if dims is not None:
                    named[name] = (shape, dims)
            values.append({"name": name, **describe(value, dims, self.ctx)})
        for reference, first, _ in self._where(filename, statement):
            if (reference, statement.first) in self.done:
                continue
            self.done.add((reference, statement.first))
            self.steps[reference].append({"text": text, "at": statement.first - first, "values": values, "_": started})

    def in_order(self, reference: str) -> list[dict]:
        """The section's lines in the order they started (a line that calls into the section ends after its callee)."""
        steps = sorted(self.steps[reference], key=lambda step: step["_"])
        return [{key: value for key, value in step.items() if key != "_"} for step in steps]

    def local(self, frame, event, arg):
        filename = frame.f_code.co_filename
        if event == "line":
            statement = self.files[filename].get(frame.f_lineno)
            running = self.pending.get(id(frame))
            if running is not None and statement is running[1]:
                return self.local
            self._finish(frame)
            if statement is not None and self._where(filename, statement):
                self.started += 1
                self.pending[id(frame)] = (filename, statement, self.started)
        elif event == "return":
            running = self.pending.get(id(frame))
            is_return = running is not None and isinstance(running[1].node, ast.Return)
            self._finish(frame, arg, is_return)
            self.dims.pop(id(frame), None)
        return self.local

    def call(self, frame, event, arg):
        filename = frame.f_code.co_filename
        if filename not in self.sections or frame.f_code.co_name.startswith("<"):
            return None  # a comprehension or lambda runs inside its statement, which its own frame records
        start = frame.f_code.co_firstlineno
        end = max((line for _, _, line in frame.f_code.co_lines() if line is not None), default=start)
        if any(first <= end and start <= last for _, first, last in self.sections[filename]):
            return self.local
        return None


def default_sentence(checkpoint) -> tuple[str, str]:
    """The first held-out pair (the checkpoint's split) with S = `SOURCE_TOKENS` that the model translates exactly."""
    from seq2seq_attention.translation.corpus import load_pairs, split_pairs
    from seq2seq_attention.translation.translator import translate

    config = checkpoint.training["config"]
    _, test = split_pairs(load_pairs(max_words=config["max_words"]), config["split"])
    for pair in test:
        words = pair.source.split()
        if len(words) + 1 != SOURCE_TOKENS or any(w not in checkpoint.vocabs.source.word2index for w in words):
            continue
        if translate(checkpoint.model, checkpoint.vocabs, [pair.source])[0] == pair.target:
            return pair.source, pair.target
    raise SystemExit(f"no held-out sentence of {SOURCE_TOKENS} tokens is translated exactly; pass --sentence")


def record(sentence: str | None = None, pages: tuple[str, ...] = PAGES) -> dict:
    """Run the workloads under the tracer; the trace as the JSON-ready dict that `main` writes."""
    import torch

    from seq2seq_attention.core.batching import collate
    from seq2seq_attention.core.checkpoint import load_checkpoint
    from seq2seq_attention.translation.corpus import load_pairs, split_pairs
    from seq2seq_attention.translation.translator import translate

    torch.manual_seed(0)
    checkpoint = load_checkpoint(ROOT / MODEL)
    vocabs, config = checkpoint.vocabs, checkpoint.config
    training = checkpoint.training["config"]
    if sentence is None:
        source, reference = default_sentence(checkpoint)
    else:
        _, test = split_pairs(load_pairs(max_words=training["max_words"]), training["split"])
        match = [pair for pair in test if pair.source == sentence]
        if not match:
            raise SystemExit(f"{sentence!r} is not a held-out (test split) source sentence of the checkpoint's corpus")
        source, reference = match[0]
    source_ids = vocabs.source.encode(source)
    target_ids = vocabs.target.encode(reference)
    ctx = Context(
        source_tokens=[vocabs.source.index2word[i] for i in source_ids],
        source_words=list(vocabs.source.index2word),
        target_words=list(vocabs.target.index2word),
        known={
            "B": 1,
            "S": len(source_ids),
            "H": config["hidden_size"],
            "E": config["hidden_size"],
            "V": config["tgt_vocab_size"],
        },
    )
    references = page_sections(pages)
    recorder = Recorder(references, ctx)
    batch = collate([(source_ids, target_ids)])
    previous = sys.gettrace()
    sys.settrace(recorder.call)
    try:
        traced = load_checkpoint(ROOT / MODEL)  # the `__init__` sections run while the model is rebuilt
        model = traced.model.eval()
        attention = getattr(model.decoder, "attention", None)
        if attention is not None:  # the attention module called on its own (its `forward`), with the first step's query
            with torch.inference_mode():
                keys, hidden, _ = model.encode(batch.source, batch.lengths)  # (B, S, H), (1, B, H)
                attention(hidden.permute(1, 0, 2), keys)  # query s_0: (B, 1, H)
        (translation,) = translate(model, traced.vocabs, [source])  # greedy: keys projected once, then the steps
        with torch.inference_mode():
            model(batch.source, batch.lengths, batch.target)  # teacher forcing: the training loop's first step
    finally:
        sys.settrace(previous)
    return {
        "format": "seq2seq-attention/traces",
        "version": 1,
        "command": COMMAND,
        "model": {"path": MODEL, "decoder": config["decoder"], "score": config["score"], "files": checkpoint.files},
        "sentence": {
            "split": f"test ({training['split']})",
            "source": source,
            "source_tokens": ctx.source_tokens,
            "reference": reference,
            "target_tokens": [vocabs.target.index2word[i] for i in target_ids],
            "translation": translation,
        },
        "pages": list(pages),
        "sections": {reference: recorder.in_order(reference) for reference, steps in recorder.steps.items() if steps},
        "not_run": [reference for reference, steps in recorder.steps.items() if not steps],
    }


# ---------------------------------------------------------------------------------------------------
# Comparing two traces


def differences(committed: dict, fresh: dict, tolerance: float = TOLERANCE) -> list[str]:
    """Where two traces disagree: sections, lines, names, shapes, letters, or a value by more than `tolerance`."""
    problems: list[str] = []

    def walk(a: object, b: object, where: str) -> None:
        if len(problems) > 40:
            return
        if (
            isinstance(a, bool)
            or isinstance(b, bool)
            or not isinstance(a, int | float)
            or not isinstance(b, int | float)
        ):
            if isinstance(a, dict) and isinstance(b, dict):
                for key in sorted(set(a) | set(b)):
                    if key not in a or key not in b:
                        problems.append(
                            f"{where}: {key!r} only in the {'fresh run' if key in b else 'committed trace'}"
                        )
                    else:
                        walk(a[key], b[key], f"{where}.{key}")
            elif isinstance(a, list) and isinstance(b, list):
                if len(a) != len(b):
                    problems.append(f"{where}: {len(a)} items committed, {len(b)} in the fresh run")
                for i, (x, y) in enumerate(zip(a, b, strict=False)):
                    walk(x, y, f"{where}[{i}]")
            elif a != b:
                problems.append(f"{where}: committed {a!r}, fresh run {b!r}")
            return
        if not math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance):
            problems.append(f"{where}: committed {a!r}, fresh run {b!r} (more than {tolerance} apart)")

    walk(committed, fresh, "trace")
    return problems


def _write(path: Path, document: dict) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Record the tensors each excerpted line of the line-by-line pages made in one run of the "
        "packaged Bahdanau translator (the pages' step-through reads the result at build time).",
    )
    parser.add_argument(
        "--out", type=Path, default=TRACE_PATH, help=f"where to write (default: {TRACE_PATH.relative_to(ROOT)})"
    )
    parser.add_argument("--sentence", help="a held-out French source sentence, normalised (default: chosen by rule)")
    parser.add_argument("--check", action="store_true", help="compare a fresh run with --out instead of writing it")
    args = parser.parse_args(argv)
    fresh = record(args.sentence)
    if args.check:
        if not args.out.is_file():
            print(f"{args.out} does not exist; record it with: {COMMAND}", file=sys.stderr)
            return 1
        problems = differences(json.loads(args.out.read_text(encoding="utf-8")), fresh)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(f"the committed trace is stale; re-record it with: {COMMAND}", file=sys.stderr)
            return 1
        print(f"{args.out} matches a fresh run ({len(fresh['sections'])} sections)")
        return 0
    _write(args.out, fresh)
    lines = sum(len(steps) for steps in fresh["sections"].values())
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes): {len(fresh['sections'])} sections, {lines} lines")
    print(f"sentence: {fresh['sentence']['source']!r} -> {fresh['sentence']['translation']!r}")
    if fresh["not_run"]:
        print("excerpts that did not run (no step-through): " + ", ".join(fresh["not_run"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
