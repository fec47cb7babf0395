"""Record what every excerpted line made in real runs, for the pages' step-through (hooks/stepper.py).

The line-by-line pages (`PAGES`) show source excerpts (`--8<-- "src/...py:section"`); this script
finds those sections on the pages, runs the packaged Bahdanau translator under `sys.settrace`, and
records, for each line of a section, every time it ran, what the line bound (an assignment its
targets, a `return` line its value) and the decoding step it ran in (the pass ``t``: a call of
`forward_step` or a pass of the training loop starts the next one; ``t = 0`` is before the first).
Five runs (`RUNS`), each traced on its own:

* ``sentence``: the checkpoint loaded (the `__init__` sections), the attention module called on its own
  with the first step's query (its `forward` with `proj_keys` None), then the greedy translation of one
  held-out sentence, every decoding step (B = 1);
* ``batch``: two held-out sentences of different lengths translated together (B = 2, the shorter one
  first): the mask, `hide_padding` and the weight exactly 0 on padding;
* ``free``: the training loop fed the model's own guesses (teacher forcing ratio 0: `guess` and
  `torch.where` run);
* ``training``: one training step: the epoch's teacher-forcing ratio (`teacher_forcing_at`, the
  checkpoint's schedule, and the decaying one at a later epoch), the loop fed the target, the loss per
  token and, after the backward pass, the gradient norms of a few parameters (`GRADIENTS`);
* ``beam``: beam search, for `DecoderState.select` (the state excerpt).

Each run also records, per pass, the token fed and the word chosen (the training step: the target and
the loss too), so that the page can say what a pass did.

A tensor is recorded with its shape, the letters of the line's trailing shape comment where they fit
(`# (B, T, S)` -> ``B=1, T=1, S=6``) and a small slice of its values (at most two dimensions: inner
dimensions of size 1 dropped, then leading ones indexed at 0; at most `ROWS` rows and `COLS` columns;
over the target vocabulary V the `TOP` largest, with their words), rounded to `DECIMALS` decimals (an
exact 0 stays 0, a tiny value keeps 3 significant digits). The output is one compact JSON file, keyed
by run, snippet reference and each line's text, so that it matches what the page shows; the build
reads it through `hooks/stepper.py`'s checking reader (the site builds without torch),
`tests/site/test_traces.py` compares it with a fresh run.

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
    "docs/attention/one-step.md",
)
"""The line-by-line pages whose excerpts get a step-through (chapter 4 and the one-step page)."""
LUONG_PAGE = "docs/attention/dot-product.md"
"""The page of Luong's decoder: its excerpts get the step-through of the ``luong`` run (input feeding)."""
LOOP = tuple(f"src/seq2seq_attention/model/decoders.py:{name}" for name in ("forward", "loop", "after_loop"))
"""The training loop's excerpts (the decoder page shows the one step's too): the runs that drive the loop record
these."""
TABLES = ("src/seq2seq_attention/model/decoders.py:decoders",)
"""Excerpts that are tables, not lines that run one after another: no step-through, nothing to trace."""
TRACE_PATH = ROOT / "docs" / "assets" / "traces" / "bahdanau.json"
MODEL = "src/seq2seq_attention/pretrained/bahdanau"
COMMAND = "python scripts/record_traces.py"
SOURCE_TOKENS = 6
"""S of the default sentence: five words and `<eos>`."""
ROWS, COLS, TOP = 6, 8, 5
DECIMALS = 6
"""Values are stored to 6 decimals (the page rounds them to 4): a fresh run agrees within 1e-5."""
TOLERANCE = 1e-5
TARGET_INDICES = ("sos", "guess")
"""Names of target-word indices without a T in their shape ((B, 1)): their values are shown with their words too."""
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
    """6 decimals; a value that is not 0 but rounds to 0 keeps 3 significant digits (an exact 0, a masked
    weight, stays 0.0 and is told apart on the page)."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value == 0:
        return 0.0
    rounded = round(value, DECIMALS)
    return float(f"{value:.3g}") if rounded == 0 else rounded


@dataclass
class Context:
    """What labels a slice: the sentences' tokens (over S, one list per batch row, padded with `<pad>`), the
    target words (over V), the sizes known."""

    source_tokens: list[list[str]]
    source_words: list[str]
    target_words: list[str]
    known: dict[str, int]


def describe_tensor(tensor, dims: list[str] | None, ctx: Context, name: str = "") -> dict:
    """Shape, letters and a small rounded slice of `tensor`.

    A slice keeps at most two dimensions: inner dimensions of size 1 go first (so that a batch's (B, 1, S)
    weights keep one row per sentence), then leading ones are indexed at 0.
    """
    import torch

    shape = tuple(tensor.shape)
    record: dict = {"kind": "tensor", "shape": list(shape), "dtype": str(tensor.dtype).removeprefix("torch.")}
    if dims is not None:
        record["dims"] = letters(dims, shape)
    data = tensor.detach().to("cpu")
    names = list(dims) if dims is not None else [None] * len(shape)
    if _attention_weights(data, names):
        record["scale"] = "weights"  # drawn on the 0-1 grey scale of the heatmaps and the live page
    index = [":"] * len(shape)
    kept = list(range(len(shape)))  # the dimensions of `data`, as positions in `shape`
    while data.dim() > 2 and any(data.size(d) == 1 for d in range(1, data.dim())):
        d = next(d for d in range(1, data.dim()) if data.size(d) == 1)
        index[kept.pop(d)] = "0"
        data, names = data.select(d, 0), names[:d] + names[d + 1 :]
    while data.dim() > 2 or (data.dim() > 1 and data.size(0) == 1):
        index[kept.pop(0)] = "0"
        data, names = data[0], names[1:]
    if "0" in index:
        while index and index[-1] == ":":
            index.pop()
        record["slice"] = "[" + ", ".join(index) + "]"
    if data.dim() == 0:
        record["value"] = _round(float(data)) if data.is_floating_point() else data.item()
        return record
    rows = data.unsqueeze(0) if data.dim() == 1 else data
    row_dim = None if data.dim() == 1 else names[0]
    col_dim = names[-1]
    batch_rows = data.dim() == 2 and row_dim == "B"  # one row per sentence of the batch
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
        if name in TARGET_INDICES:
            vocabulary = ctx.target_words
        if vocabulary is not None and not shown.is_floating_point() and shown.dtype != torch.bool:
            record["words"] = [
                [vocabulary[v] if 0 <= v < len(vocabulary) else "?" for v in row] for row in shown.tolist()
            ]
        elif col_dim == "S" and batch_rows and shown.size(1) == len(ctx.source_tokens[0]):
            record["words"] = [list(ctx.source_tokens[b]) for b in range(shown.size(0))]  # each row its own tokens
        if col_dim == "S" and shown.size(1) == len(ctx.source_tokens[0]) and len(ctx.source_tokens) == 1:
            record["cols"] = ctx.source_tokens[0]
    if row_dim == "S" and rows.size(0) <= len(ctx.source_tokens[0]):
        record["rows"] = ctx.source_tokens[0][: rows.size(0)]  # a slice over S is of the first sentence
    if col_dim == "V" and "top" in record and bool((data <= 0).all()):
        record["scale"] = "log"  # log-probabilities: the most likely (nearest 0) is the emphasised end
    if data.dim() == 1:  # a vector: one flat list
        for key in ("values", "top", "words"):
            if key in record:
                record[key] = record[key][0]
    return record


def _attention_weights(data, names: list) -> bool:
    """Whether a tensor holds attention weights: floats over S (its last letter) in [0, 1], each row summing to 1."""
    import torch

    if not data.is_floating_point() or data.dim() == 0 or names[-1] != "S" or data.numel() == 0:
        return False
    values = data.double()
    sums = values.sum(dim=-1)
    return bool((values >= 0).all() and (values <= 1).all() and torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


def describe(value, dims: list[str] | None, ctx: Context, name: str = "") -> dict:
    """A tensor (`describe_tensor`), a module (class, parameter shapes), an object of tensors, or a plain value."""
    import torch
    from torch import nn

    if isinstance(value, torch.Tensor):
        return describe_tensor(value, dims, ctx, name)
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


def _in_body(node: ast.stmt, line: int | None) -> bool:
    """Whether `line` is in the body of the loop `node` (after its header runs: another pass, not the exit)."""
    return line is not None and node.body[0].lineno <= line <= (node.body[-1].end_lineno or node.body[-1].lineno)


class Recorder:
    """`sys.settrace` over the sections: every run of each of their lines, with what it bound and its pass.

    The pass ``t`` counts decoding steps: a call of `forward_step` (greedy decoding, beam search) or a pass of a
    ``for`` loop in a section (the training loop) starts the next one; what runs before the first is ``t = 0``.
    A loop header's last evaluation (the one that ends the loop) is no pass and is not recorded.
    """

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
        self.pending: dict[int, tuple[str, Statement, int, int]] = {}  # id(frame) -> statement, its start, its pass
        self.started = 0  # statements started so far: a line's place in the run is when it starts, not when it ends
        self.dims: dict[int, dict[str, tuple]] = {}  # id(frame) -> name -> (shape, letters) bound in this call
        self.t = 0

    def _where(self, filename: str, statement: Statement) -> list[tuple[str, int, int]]:
        return [s for s in self.sections.get(filename, []) if s[1] <= statement.first and statement.last <= s[2]]

    def _finish(self, frame, returned: object = None, has_return: bool = False, next_line: int | None = None) -> None:
        filename, statement, started, t = self.pending.pop(id(frame), (None, None, 0, 0))
        if statement is None:
            return
        node = statement.node
        if isinstance(node, ast.For | ast.While) and not _in_body(node, next_line):
            self.t -= isinstance(node, ast.For)  # the loop ended: that evaluation started no pass
            return
        lines = Path(filename).read_text(encoding="utf-8").splitlines()
        # a multi-line statement's shape comment is on its last line (`)  # (B, 1, H), (B, 1, S)`)
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
            values.append({"name": name, **describe(value, dims, self.ctx, name)})
        for reference, first, _ in self._where(filename, statement):
            self.steps[reference].append(
                {"text": text, "at": statement.first - first, "t": t, "values": values, "_": started}
            )

    def section(self, reference: str) -> dict | None:
        """The section's lines (each text once) and its steps in the order they started, or None if none ran."""
        steps = sorted(self.steps[reference], key=lambda step: step["_"])
        if not steps:
            return None
        lines: list[dict] = []
        index: dict[tuple, int] = {}
        out = []
        for step in steps:
            key = (tuple(step["text"]), step["at"])
            if key not in index:
                index[key] = len(lines)
                lines.append({"text": step["text"], "at": step["at"]})
            out.append({"line": index[key], "t": step["t"], "values": step["values"]})
        return {"lines": lines, "steps": out}

    def local(self, frame, event, arg):
        filename = frame.f_code.co_filename
        if event == "line":
            statement = self.files[filename].get(frame.f_lineno)
            running = self.pending.get(id(frame))
            if running is not None and statement is running[1]:
                return self.local
            self._finish(frame, next_line=frame.f_lineno)
            if statement is not None and self._where(filename, statement):
                self.started += 1
                if isinstance(statement.node, ast.For):
                    self.t += 1  # a pass of the loop (undone if it is the evaluation that ends it)
                self.pending[id(frame)] = (filename, statement, self.started, self.t)
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
        if frame.f_code.co_name == "forward_step":
            self.t += 1  # greedy decoding and beam search: one call, one decoding step
        start = frame.f_code.co_firstlineno
        end = max((line for _, _, line in frame.f_code.co_lines() if line is not None), default=start)
        if any(first <= end and start <= last for _, first, last in self.sections[filename]):
            return self.local
        return None

    def trace(self, workload) -> object:
        """Run `workload()` under this recorder (from ``t = 0``); what it returns."""
        self.t = 0
        previous = sys.gettrace()
        sys.settrace(self.call)
        try:
            return workload()
        finally:
            sys.settrace(previous)


def _pairs(checkpoint):
    from seq2seq_attention.translation.corpus import load_pairs, split_pairs

    config = checkpoint.training["config"]
    return split_pairs(load_pairs(max_words=config["max_words"]), config["split"])


def held_out(checkpoint, tokens: int, exclude: tuple[str, ...] = ()) -> tuple[str, str]:
    """The first held-out pair (the checkpoint's split) with S = `tokens` that the model translates exactly."""
    from seq2seq_attention.translation.translator import translate

    for pair in _pairs(checkpoint)[1]:
        words = pair.source.split()
        if len(words) + 1 != tokens or pair.source in exclude:
            continue
        if any(w not in checkpoint.vocabs.source.word2index for w in words):
            continue
        if translate(checkpoint.model, checkpoint.vocabs, [pair.source])[0] == pair.target:
            return pair.source, pair.target
    raise SystemExit(f"no held-out sentence of {tokens} tokens is translated exactly; pass --sentence")


def default_sentence(checkpoint) -> tuple[str, str]:
    """The first held-out pair with S = `SOURCE_TOKENS` that the model translates exactly."""
    return held_out(checkpoint, SOURCE_TOKENS)


RUNS = {
    "sentence": "문장 하나: 탐욕적 번역",
    "batch": "두 문장 배치: 패딩과 마스크",
    "free": "자유 생성: 자기 예측을 입력으로",
    "training": "훈련 스텝: 교사 강요",
    "beam": "빔 서치: 상태 고르기",
    "luong": "루옹 디코더: input feeding (학습 전 모델)",
}
"""The recorded runs, as the stepper's switch names them (in this order)."""
BATCH_SHORT = 5
"""S of the batch's other sentence (four words and `<eos>`): one padded position next to the default one (a sentence
of at most this length gets a companion one token longer)."""
BEAM_SIZE = 3
DECAY_EPOCH = 10
"""The training step also asks `teacher_forcing_at` for the decaying schedule's ratio at this epoch."""
GRADIENTS = (
    "encoder.embedding.weight",
    "encoder.gru.weight_ih_l0",
    "decoder.attention.Wa.weight",
    "decoder.attention.Ua.weight",
    "decoder.attention.Va.weight",
    "decoder.gru.weight_ih_l0",
    "decoder.out.weight",
)
"""The parameters whose gradient norm the training step shows (those the model has)."""


def _sentence(vocabs, source: str, reference: str, translation: str | None) -> dict:
    return {
        "source": source,
        "source_tokens": [vocabs.source.index2word[i] for i in vocabs.source.encode(source)],
        "reference": reference,
        "target_tokens": [vocabs.target.index2word[i] for i in vocabs.target.encode(reference)],
        "translation": translation,
    }


def record(sentence: str | None = None, pages: tuple[str, ...] = (*PAGES, LUONG_PAGE)) -> dict:
    """Run the workloads under the tracer; the trace as the JSON-ready dict that `main` writes.

    Five runs, each its own recorder: ``sentence`` (the checkpoint loaded, the attention module called on its
    own with the first query, then the greedy translation of one held-out sentence, every step), ``batch`` (two
    held-out sentences of different lengths translated together: the mask, padding weighted 0), ``free``
    (the training loop fed its own guesses: teacher forcing ratio 0), ``training`` (one training step with
    the checkpoint's teacher-forcing schedule: the loss per token and gradient norms) and ``beam`` (beam search,
    for `DecoderState.select`), and ``luong``: Luong's decoder with input feeding, built with the checkpoint's
    sizes and vocabularies and seeded weights, untrained (no Luong checkpoint feeds its output back), translating
    the same sentence greedily: what flows through `luong_step`, each step's vector fed to the next.
    """
    import torch
    from torch import nn

    from seq2seq_attention.core.batching import collate
    from seq2seq_attention.core.checkpoint import load_checkpoint
    from seq2seq_attention.model.search import greedy_decode
    from seq2seq_attention.model.seq2seq import build_model
    from seq2seq_attention.model.tokens import PAD_IDX, SOS_IDX
    from seq2seq_attention.translation.train import teacher_forcing_at
    from seq2seq_attention.translation.translator import translate

    torch.manual_seed(0)
    checkpoint = load_checkpoint(ROOT / MODEL)
    vocabs, config = checkpoint.vocabs, checkpoint.config
    training = checkpoint.training["config"]
    if sentence is None:
        source, reference = default_sentence(checkpoint)
    else:
        match = [pair for pair in _pairs(checkpoint)[1] if pair.source == sentence]
        if not match:
            raise SystemExit(f"{sentence!r} is not a held-out (test split) source sentence of the checkpoint's corpus")
        source, reference = match[0]
    length = len(vocabs.source.encode(source))
    other = held_out(checkpoint, BATCH_SHORT if length > BATCH_SHORT else length + 1, exclude=(source,))
    references = [ref for ref in page_sections(pages) if ref not in TABLES]
    on_page = {page: set(page_sections((page,))) for page in pages}
    loop_sections = {ref for ref in references if ref in LOOP}
    target = vocabs.target.index2word

    def context(pairs: list[tuple[str, str]]) -> tuple[Context, object]:
        batch = collate([(vocabs.source.encode(s), vocabs.target.encode(r)) for s, r in pairs])
        tokens = [[vocabs.source.index2word[i] for i in row] for row in batch.source.tolist()]
        ctx = Context(
            source_tokens=tokens,
            source_words=list(vocabs.source.index2word),
            target_words=list(target),
            known={
                "B": len(pairs),
                "S": batch.source.size(1),
                "H": config["hidden_size"],
                "E": config["hidden_size"],
                "V": config["tgt_vocab_size"],
            },
        )
        return ctx, batch

    def words(column) -> list[str]:
        return [target[i] for i in column.tolist()]

    def greedy_passes(model, batch) -> list[dict]:
        with torch.inference_mode():
            tokens, _ = greedy_decode(model, batch.source, batch.lengths)  # (B, T)
        fed = torch.cat((torch.full_like(tokens[:, :1], SOS_IDX), tokens[:, :-1]), dim=1)  # (B, T)
        return [{"t": t + 1, "fed": words(fed[:, t]), "chosen": words(tokens[:, t])} for t in range(tokens.size(1))]

    runs: dict[str, dict] = {}

    def keep(name: str, recorder: Recorder, only: set[str], pairs, translations, **extra) -> None:
        sections = {ref: recorder.section(ref) for ref in references if ref in only}
        runs[name] = {
            "title": RUNS[name],
            "sentences": [_sentence(vocabs, s, r, tr) for (s, r), tr in zip(pairs, translations, strict=True)],
            "sections": {ref: section for ref, section in sections.items() if section is not None},
            **extra,
        }

    # 1. one sentence, translated greedily: the checkpoint rebuilt (the `__init__` sections), the attention module
    #    called on its own with the first step's query (`proj_keys` None), then every decoding step
    ctx, batch = context([(source, reference)])
    recorder = Recorder(references, ctx)

    def load_and_translate():
        traced = load_checkpoint(ROOT / MODEL)
        model = traced.model.eval()
        attention = getattr(model.decoder, "attention", None)
        if attention is not None:
            with torch.inference_mode():
                keys, hidden, _ = model.encode(batch.source, batch.lengths)  # (B, S, H), (1, B, H)
                attention(hidden.permute(1, 0, 2), keys)  # query s_0: (B, 1, H)
        return translate(model, traced.vocabs, [source])

    translation = recorder.trace(load_and_translate)
    model = checkpoint.model.eval()
    keep("sentence", recorder, set(references), [(source, reference)], translation, passes=greedy_passes(model, batch))

    # 2. a padded batch: the shorter sentence first, so that a slice of the first sentence shows its padding
    pairs = sorted([other, (source, reference)], key=lambda pair: len(pair[0].split()))
    ctx, batch = context(pairs)
    recorder = Recorder(references, ctx)
    translations = recorder.trace(lambda: translate(model, vocabs, [s for s, _ in pairs]))
    inits = {ref for ref in references if ref.endswith(":init")}
    keep("batch", recorder, set(references) - inits, pairs, translations, passes=greedy_passes(model, batch))

    # 3. the training loop fed the model's own guesses (teacher forcing ratio 0: every coin says "guess")
    ctx, batch = context([(source, reference)])
    recorder = Recorder(references, ctx)

    def free_running():
        with torch.inference_mode():
            return model(batch.source, batch.lengths, batch.target, teacher_forcing_ratio=0.0)[0]  # (B, T, V)

    log_probs = recorder.trace(free_running)
    chosen = log_probs.argmax(dim=-1)  # (B, T)
    fed = torch.cat((torch.full_like(chosen[:, :1], SOS_IDX), chosen[:, :-1]), dim=1)  # (B, T)
    passes = [{"t": t + 1, "fed": words(fed[:, t]), "chosen": words(chosen[:, t])} for t in range(chosen.size(1))]
    keep("free", recorder, loop_sections, [(source, reference)], [translation[0]], passes=passes)

    # 4. one training step: the epoch's teacher-forcing ratio (the checkpoint's schedule, then the decaying one at a
    #    later epoch, for its other branch), the loop fed the target, the loss per token, the gradients
    recorder = Recorder(references, ctx)
    schedule = (training["teacher_forcing_schedule"], training["teacher_forcing_ratio"], training["teacher_forcing_k"])
    model.train()
    model.zero_grad()

    calls = [(*schedule, 1), ("inverse_sigmoid", schedule[1], schedule[2], DECAY_EPOCH)]
    ratios = []

    def training_step():
        ratios.extend(teacher_forcing_at(*call) for call in calls)  # the step's own ratio, then the other branch
        return model(batch.source, batch.lengths, batch.target, teacher_forcing_ratio=ratios[0])[0]  # (B, T, V)

    log_probs = recorder.trace(training_step)
    per_token = nn.NLLLoss(ignore_index=PAD_IDX, reduction="none")(
        log_probs.flatten(0, 1), batch.target.flatten()
    ).view_as(batch.target)  # (B, T)
    loss = per_token.sum() / (batch.target != PAD_IDX).sum()
    loss.backward()
    named = dict(model.named_parameters())
    norms = {name: _round(float(named[name].grad.norm())) for name in GRADIENTS if name in named}
    model.zero_grad()
    model.eval()
    chosen = log_probs.detach().argmax(dim=-1)  # (B, T)
    fed = torch.cat((torch.full_like(batch.target[:, :1], SOS_IDX), batch.target[:, :-1]), dim=1)  # (B, T)
    passes = [
        {
            "t": t + 1,
            "fed": words(fed[:, t]),
            "chosen": words(chosen[:, t]),
            "target": words(batch.target[:, t]),
            "loss": [_round(float(v)) for v in per_token[:, t].tolist()],
        }
        for t in range(chosen.size(1))
    ]
    step = {
        "calls": [
            {"schedule": name, "ratio": ratio, "k": k, "epoch": epoch, "result": _round(result)}
            for (name, ratio, k, epoch), result in zip(calls, ratios, strict=True)
        ],
        "loss": _round(float(loss.detach())),
        "grad_norms": norms,
    }
    only = loop_sections | {ref for ref in references if ref.endswith("train.py:teacher_forcing_at")}
    keep("training", recorder, only, [(source, reference)], [translation[0]], passes=passes, training_step=step)

    # 5. beam search, for the state's `select` (each step copies and reorders the beams' rows)
    recorder = Recorder(references, ctx)
    beams = recorder.trace(lambda: translate(model, vocabs, [source], beam_size=BEAM_SIZE))
    state = {ref for ref in references if ref.endswith("decoders.py:state")}
    keep("beam", recorder, state, [(source, reference)], beams, beam_size=BEAM_SIZE)

    # 6. Luong's decoder with input feeding: untrained (seeded), the checkpoint's sizes and vocabularies
    recorder = Recorder(references, ctx)
    luong = {"decoder": "luong", "score": "dot", "input_feeding": True, "hidden_size": config["hidden_size"]}

    def luong_translation():
        torch.manual_seed(0)
        built = build_model(
            "luong",
            config["src_vocab_size"],
            config["tgt_vocab_size"],
            hidden_size=luong["hidden_size"],
            score=luong["score"],
            input_feeding=True,
        ).eval()
        return built, translate(built, vocabs, [source])

    luong_model, luong_words = recorder.trace(luong_translation)
    on_luong_page = {ref for ref in on_page[LUONG_PAGE] if ref not in TABLES}
    passes = greedy_passes(luong_model, batch)
    keep("luong", recorder, on_luong_page, [(source, reference)], luong_words, passes=passes, model=luong)

    ran = {ref for run in runs.values() for ref in run["sections"]}
    return {
        "format": "seq2seq-attention/traces",
        "version": 2,
        "command": COMMAND,
        "model": {"path": MODEL, "decoder": config["decoder"], "score": config["score"], "files": checkpoint.files},
        "split": f"test ({training['split']})",
        "pages": list(pages),
        "runs": runs,
        "not_run": [ref for ref in references if ref not in ran],
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
        print(f"{args.out} matches a fresh run ({len(fresh['runs'])} runs)")
        return 0
    _write(args.out, fresh)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    for name, run in fresh["runs"].items():
        steps = sum(len(section["steps"]) for section in run["sections"].values())
        sentences = "; ".join(f"{s['source']!r} -> {s['translation']!r}" for s in run["sentences"])
        print(
            f"{name}: {len(run['sections'])} sections, {steps} steps, {len(run.get('passes', []))} passes: {sentences}"
        )
    if fresh["not_run"]:
        print("excerpts that did not run (no step-through): " + ", ".join(fresh["not_run"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
