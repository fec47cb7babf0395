"""Shape comments are specs: read them on the excerpted lines, trace a run, compare.

A line of a section the pages include (``--8<-- "src/...py:NAME"``) whose trailing comment starts with a shape
tuple in the notation of `docs/notation.md` is a spec of what the line makes::

    output, hidden = self.gru(embedded, state.hidden)  # (B, 1, H), (1, B, H): s_t first

`discover` finds those lines, `trace` runs `tests/excerpt_workload.py` under `sys.settrace` restricted to their
functions (a fresh Python: ``python tests/shape_trace.py OUT.json WORKDIR DEVICE``; `torch.onnx.export` runs
untraced) and `check` compares every recorded execution with its comment; tests/site/test_shape_comments.py runs it.

The comment (`parse_comment`): a tuple of dims (a name such as ``B``, ``Hk``, ``B'``; a whole number; arithmetic
such as ``2H``, ``B*k``, ``t+1``); prose after the first ``:`` is ignored. A comma outside parentheses separates the
shapes of a tuple result; a shape may be followed by a label, ``or None``, or ``each`` (every value bound has that
shape); ``None`` is a value that is None, other words a value not checked. In a chain (``(B, S, Hk) -> (B, S, Hq)``,
``@``) the last shape is the result. ``(B*k) rows`` (no comma) is no tuple, hence no shape comment.

What a line binds (`file_lines`, `Tracer`): an assignment its targets (``_`` left out), a ``return`` the returned
value (a tuple element-wise); the comment of a multi-line statement sits on its first or last line, and a comment
strictly inside one describes the one side-effect-free call argument on that line (`is_pure`), evaluated just
before the statement runs. Targets are read at the next line event outside the statement or at the frame's return;
a statement that raised is dropped. A line that cannot be read so (a header, a call that binds nothing, a subscript
target, an argument with side effects) fails with the reason. A value written ``x if c else None`` may be None.

Letters (`check`) are bound per frame execution: first an ``int`` local of that name, then the size the function's
(or its class's) docstring or jaxtyping annotation gives an argument (``query: (B, T, Hq)``), then the sizes the
most executed lines of the frame agree with (ties name the failing line, with a note). A line fails on a dim,
rank, count or None that disagrees; an execution checks a comment only when its dims have pairwise different sizes
(`SHAPE_SIZES` makes most do), and a commented line that never ran, or never with its dims told apart, fails too.
"""

from __future__ import annotations

import ast
import inspect
import io
import itertools
import json
import math
import re
import sys
import tokenize
import typing
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "hooks"))  # as pytest's `pythonpath` (pyproject.toml)
sys.path.insert(2, str(Path(__file__).resolve().parent / "site"))  # test_excerpt_coverage.py, as pytest imports it

from support import ROOT  # noqa: E402
from test_excerpt_coverage import included_sections, section_lines  # noqa: E402  (the excerpts' own parsing)

# ---------------------------------------------------------------------------------------------
# The comment grammar


@dataclass(frozen=True)
class Dim:
    text: str
    """As written: ``B``, ``2H``, ``t+1``."""
    expr: ast.expression = field(compare=False, repr=False)

    @property
    def letter(self) -> str | None:
        """The name, when the dim is one name."""
        body = self.expr.body
        return body.id if isinstance(body, ast.Name) else None

    @property
    def names(self) -> set[str]:
        return {node.id for node in ast.walk(self.expr) if isinstance(node, ast.Name)}

    def value(self, binding: dict[str, int]) -> float | None:
        """The dim's size under `binding`; None when one of its names is unbound."""
        if not self.names <= set(binding):
            return None
        return eval(compile(self.expr, "<dim>", "eval"), {"__builtins__": {}}, dict(binding))  # noqa: S307


@dataclass(frozen=True)
class Spec:
    """What a comment says about one value: a shape (`dims`), None (`dims` None), or anything (`wild`)."""

    dims: tuple[Dim, ...] | None = None
    nullable: bool = False
    wild: bool = False

    def __str__(self) -> str:
        if self.wild:
            return "(any)"
        if self.dims is None:
            return "None"
        text = "(" + ", ".join(d.text for d in self.dims) + ("," if len(self.dims) == 1 else "") + ")"
        return text + (" or None" if self.nullable else "")


_ALLOWED = (ast.Expression, ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.UnaryOp, ast.USub)
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)


def _dim(text: str) -> Dim | None:
    source = re.sub(r"(\d)\s*([A-Za-z_])", r"\1*\2", text.strip().replace("'", "_prime"))
    try:
        expr = ast.parse(source, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(expr):
        if isinstance(node, _OPERATORS):
            continue
        if not isinstance(node, _ALLOWED) or (isinstance(node, ast.Constant) and type(node.value) is not int):
            return None
    return Dim(text.strip(), expr)


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis that closes the one at `start` (-1 if none)."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return -1


def _tuple(text: str) -> tuple[tuple[Dim, ...], str] | None:
    """The shape tuple at the start of `text` and the rest, or None."""
    if not text.startswith("("):
        return None
    end = _closing(text, 0)
    if end < 0:
        return None
    inner = text[1:end].strip()
    if not inner:
        return (), text[end + 1 :]
    if "," not in inner:
        return None  # (B*k) is a parenthesised expression, not a tuple
    parts = inner.split(",")
    if parts[-1].strip() == "":
        parts = parts[:-1]
    dims = tuple(_dim(part) for part in parts)
    if not dims or any(d is None for d in dims):
        return None
    return dims, text[end + 1 :]


def _split(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == separator and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def parse_comment(comment: str) -> list[Spec] | None:
    """The specs a trailing comment states, one per value; None when it is not a shape comment."""
    body = comment.lstrip("#").strip()
    if not body.startswith("("):
        return None
    body = _split(body, ":")[0]
    specs: list[Spec] = []
    for number, item in enumerate(_split(body, ",")):
        item = item.strip()
        if item == "None":
            specs.append(Spec())
            continue
        parsed = _tuple(item)
        if parsed is None:
            if number == 0:
                return None
            specs.append(Spec(wild=True))
            continue
        dims, rest = parsed
        while True:  # a chain: the shape after the last `->` is the result
            rest = rest.strip()
            operator = next((op for op in ("->", "@") if rest.startswith(op)), None)
            if operator is None:
                break
            following = _tuple(rest[len(operator) :].strip())
            if following is None:
                break
            if operator == "->":
                dims = following[0]
            rest = following[1]
        specs.append(Spec(dims, nullable=" or None" in f" {rest}"))
    return specs


def comment_says_each(comment: str) -> bool:
    """``(B, 2k) each``: the one shape is that of every value the line binds."""
    body = _split(comment.lstrip("#").strip(), ":")[0]
    parsed = _tuple(body.strip())
    return parsed is not None and parsed[1].split()[:1] == ["each"]


# ---------------------------------------------------------------------------------------------
# Finding the commented lines


PURE_METHODS = set("index_select transpose unsqueeze squeeze permute view reshape flatten size contiguous".split())
"""Methods an argument line may call and still be evaluated ahead of its statement."""
_PURE_NODES = tuple(
    getattr(ast, name)
    for name in "Name Attribute Subscript Slice Constant IfExp Compare BoolOp UnaryOp Tuple Load Is IsNot Not Invert "
    "And Or USub keyword".split()
)


def is_pure(expr: ast.expr) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Attribute) and node.func.attr in PURE_METHODS):
                return False
        elif not isinstance(node, _PURE_NODES):
            return False
    return True


@dataclass
class Line:
    """One commented line of an included section: its file (relative to the repository), number, comment, section
    and `role`: ``bind`` (assignment `targets`, ``name`` or ``self.attr``), ``return``, ``argument`` (one call
    argument, its source in `expression`) or ``unreadable`` (`why`). `function` is the enclosing function's name and
    first line, `start`/`end` the statement's lines; `may_be_none`: the code writes ``x if c else None``."""

    path: str
    number: int
    comment: str
    section: str
    role: str
    why: str = ""
    function: tuple[str, int] | None = None
    start: int = 0
    end: int = 0
    targets: list[str] = field(default_factory=list)
    expression: str = ""
    may_be_none: bool = False

    @property
    def where(self) -> str:
        return f"{self.path}:{self.number}"


def trailing_comments(text: str) -> dict[int, str]:
    """Line number -> trailing comment (a comment after code on its line)."""
    comments, code_lines = {}, set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            if token.start[0] in code_lines:
                comments[token.start[0]] = token.string
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_lines.update(range(token.start[0], token.end[0] + 1))
    return comments


_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _flat_targets(target: ast.expr) -> list[ast.expr] | None:
    if isinstance(target, ast.Tuple | ast.List):
        flat = []
        for element in target.elts:
            inner = _flat_targets(element)
            if inner is None:
                return None
            flat.extend(inner)
        return flat
    if isinstance(target, ast.Name):
        return [] if target.id == "_" else [target]
    if isinstance(target, ast.Attribute):
        node = target
        while isinstance(node, ast.Attribute):
            node = node.value
        return [target] if isinstance(node, ast.Name) else None
    return None


def _none_branch(value: ast.expr) -> bool:
    """``x if c else None`` or ``None if c else x``."""
    return isinstance(value, ast.IfExp) and any(
        isinstance(branch, ast.Constant) and branch.value is None for branch in (value.body, value.orelse)
    )


def _first_line(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([function.lineno, *(d.lineno for d in function.decorator_list)])


def file_lines(path: Path, sections: set[str], text: str | None = None) -> list[Line]:
    """The lines with a trailing comment that starts with ``(`` in `path`'s `sections`.

    `text` replaces the file's text (a planted copy); the sections are read from the file at
    `path`, so a copy with the same lines keeps them.
    """
    text = path.read_text(encoding="utf-8") if text is None else text
    relative = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    spans = section_lines(path, sections)
    inside = {number: name for name, lines in spans.items() for number in lines}
    tree = ast.parse(text)
    statements: list[tuple[ast.stmt, ast.AST | None]] = []

    def visit(node: ast.AST, function: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                statements.append((child, function))
            visit(child, child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function)

    visit(tree, None)
    found = []
    for number, comment in sorted(trailing_comments(text).items()):
        if number not in inside or not comment.lstrip("#").strip().startswith("("):
            continue
        line = Line(relative, number, comment, inside[number], "unreadable")
        containing = [
            (stmt, function)
            for stmt, function in statements
            if stmt.lineno <= number <= stmt.end_lineno and not isinstance(stmt, _COMPOUND)
        ]
        if not containing:
            line.why = "the comment is on a line that is not a simple statement (a header binds nothing)"
            found.append(line)
            continue
        stmt, function = min(containing, key=lambda pair: pair[0].end_lineno - pair[0].lineno)
        line.start, line.end = stmt.lineno, stmt.end_lineno
        if function is None:
            line.why = "module-level code runs at import, before the trace"
            found.append(line)
            continue
        line.function = (function.name, _first_line(function))
        if number in (stmt.lineno, stmt.end_lineno):
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                line.role = "return"
            elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and getattr(stmt, "value", None):
                target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
                flat = _flat_targets(target)
                if flat is None:
                    line.why = "a target that is not a name or an attribute cannot be read back"
                else:
                    line.role, line.targets = "bind", [ast.unparse(t) for t in flat]
                    line.may_be_none = len(flat) == 1 and _none_branch(stmt.value)
            else:
                kind = "an expression" if isinstance(stmt, ast.Expr) else f"a `{type(stmt).__name__.lower()}`"
                line.why = f"{kind} statement binds nothing"
        else:
            arguments = [
                argument
                for call in ast.walk(stmt)
                if isinstance(call, ast.Call)
                for argument in [*call.args, *(keyword.value for keyword in call.keywords)]
                if argument.lineno == argument.end_lineno == number
            ]
            arguments = [  # the outermost: `self.keys.index_select(0, rows)`, not its `0` and `rows`
                argument
                for argument in arguments
                if not any(other is not argument and argument in ast.walk(other) for other in arguments)
            ]
            if len(arguments) != 1:
                line.why = "a comment inside a statement must sit on a line that holds one call argument"
            elif not is_pure(arguments[0]):
                line.why = "the argument on this line has side effects: it cannot be evaluated ahead of its statement"
            else:
                line.role, line.expression = "argument", ast.unparse(arguments[0])
                line.may_be_none = _none_branch(arguments[0])
        found.append(line)
    return found


def discover(texts: dict[str, str] | None = None) -> list[Line]:
    """Every commented line of every section a page includes (`texts`: planted sources by relative path)."""
    texts = texts or {}
    lines = []
    for path, names in sorted(included_sections().items()):
        relative = str(path.relative_to(ROOT))
        lines.extend(file_lines(path, names, texts.get(relative)))
    return lines


# ---------------------------------------------------------------------------------------------
# The trace


def describe(value: object) -> object:
    """A value as the record keeps it: a shape (list), None, or the name of its type."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(shape, property) and hasattr(value, "ndim"):
        return [int(size) for size in shape]
    if value is None:
        return None
    return type(value).__name__


_UNBOUND = "<unbound>"
_DOC_SHAPE = re.compile(r"\b([A-Za-z_]\w*): \(([^()]*)\)")


def docstring_seeds(docs: list[str], arguments: dict[str, list[int]]) -> dict[str, list]:
    """Letter -> [size, argument] from ``name: (B, S, H)`` lines of `docs` for tensor `arguments`."""
    seeds: dict[str, list] = {}
    for doc in docs:
        for name, inner in _DOC_SHAPE.findall(doc or ""):
            shape = arguments.get(name)
            parsed = _tuple(f"({inner})")
            if shape is None or parsed is None or len(parsed[0]) != len(shape):
                continue
            dims = parsed[0]
            if any(d.letter is None and (d.names or d.value({}) != size) for d, size in zip(dims, shape, strict=True)):
                continue  # arithmetic, or a whole number that does not match: this line describes another case
            for dim, size in zip(dims, shape, strict=True):
                if dim.letter is not None and dim.letter not in seeds:
                    seeds[dim.letter] = [size, name]
    return seeds


def annotated_shapes(function: object) -> str:
    """A function's jaxtyping annotations as ``name: (B, T, Hq)`` lines (what `docstring_seeds` reads)."""
    found = []
    for name, hint in getattr(inspect.unwrap(function), "__annotations__", {}).items() if function else ():
        for option in typing.get_args(hint) or (hint,):
            dims = getattr(option, "dim_str", None)
            if isinstance(dims, str):
                found.append(f"{name}: ({', '.join(dims.split())})")
    return "\n".join(found)


class Tracer:
    """`sys.settrace` over the functions that hold commented lines; collects one record per frame execution."""

    def __init__(self, lines: list[Line]) -> None:
        self.functions: dict[tuple[str, str, int], dict] = {}
        for line in lines:
            if line.role == "unreadable" or line.function is None:
                continue
            key = (str(ROOT / line.path), *line.function)
            watch = self.functions.setdefault(key, {"statements": {}, "arguments": {}, "path": line.path})
            statement = watch["statements"].setdefault((line.start, line.end), {"lines": set(), "bind": None})
            if line.role == "argument":
                watch["arguments"].setdefault((line.start, line.end), []).append(
                    (line.number, compile(line.expression, line.where, "eval"))
                )
            else:
                statement["bind"] = line
            statement["lines"].add(line.number)
        for watch in self.functions.values():
            watch["at"] = {number: span for span in watch["statements"] for number in range(span[0], span[1] + 1)}
        self.files = {key[0] for key in self.functions}
        self.docs: dict[tuple, list[str]] = {}
        self.frames: list[dict] = []

    def global_trace(self, frame, event, arg):
        code = frame.f_code
        if code.co_filename not in self.files:
            return None
        watch = self.functions.get((code.co_filename, code.co_name, code.co_firstlineno))
        if watch is None:
            return None
        return _Frame(self, watch, frame).trace

    def docstrings(self, frame) -> list[str]:
        """The docstring of the frame's function and, for a method, those of its object's classes; first, the
        function's shape annotations written as a docstring would (``query: (B, T, Hq)``)."""
        code = frame.f_code
        owner = frame.f_locals.get("self")
        key = (code, type(owner))
        if key not in self.docs:
            if owner is None:
                function, classes = frame.f_globals.get(code.co_name), []
            else:
                function = getattr(type(owner), code.co_name, None)
                classes = [cls.__doc__ or "" for cls in type(owner).__mro__ if cls.__module__.startswith("seq2seq")]
            self.docs[key] = [annotated_shapes(function), getattr(function, "__doc__", None) or "", *classes]
        return self.docs[key]


class _Frame:
    def __init__(self, tracer: Tracer, watch: dict, frame) -> None:
        self.tracer, self.watch = tracer, watch
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        arguments = {}
        for name in names:
            shape = describe(frame.f_locals.get(name))
            if isinstance(shape, list):
                arguments[name] = shape
        self.record = {
            "path": watch["path"],
            "function": code.co_qualname,
            "seeds": docstring_seeds(tracer.docstrings(frame), arguments),
            "lines": [],
        }
        self.pending: tuple[int, int] | None = None

    def trace(self, frame, event, arg):
        if event == "line":
            number = frame.f_lineno
            if self.pending is not None and not self.pending[0] <= number <= self.pending[1]:
                self.complete(frame, None, returned=False)
            span = self.watch["at"].get(number)
            if span is not None and self.pending is None:
                self.pending = span
                self.arguments(frame, span)
        elif event == "return":
            if self.pending is not None:
                self.complete(frame, arg, returned=True)
            if self.record["lines"]:
                self.tracer.frames.append(self.record)
        elif event == "exception":
            self.pending = None  # the statement raised: nothing was bound
        return self.trace

    def ints(self, frame) -> dict[str, int]:
        return {name: value for name, value in frame.f_locals.items() if type(value) is int}

    def arguments(self, frame, span: tuple[int, int]) -> None:
        for number, code in self.watch["arguments"].get(span, []):
            try:
                value = eval(code, frame.f_globals, dict(frame.f_locals))  # noqa: S307 (checked side-effect free)
            except Exception as error:  # noqa: BLE001
                value = f"<error {type(error).__name__}: {error}>"
            self.record["lines"].append([number, [describe(value)], self.ints(frame)])

    def complete(self, frame, value, returned: bool) -> None:
        span, self.pending = self.pending, None
        line = self.watch["statements"][span]["bind"]
        if line is None:
            return
        if line.role == "return":
            if not returned:
                return  # left the return line without returning: it raised
            values = list(value) if type(value) is tuple else [value]
            self.record["lines"].append([line.number, [describe(v) for v in values], self.ints(frame)])
            return
        values = []
        local = frame.f_locals
        for target in line.targets:
            first, *attributes = target.split(".")
            current = local.get(first, _UNBOUND)
            for attribute in attributes:
                current = getattr(current, attribute, _UNBOUND) if current is not _UNBOUND else current
            values.append(_UNBOUND if current is _UNBOUND else describe(current))
        self.record["lines"].append([line.number, values, self.ints(frame)])


SHAPE_SIZES = dict(
    hidden=16,
    batch=5,
    beam=2,
    sentences=("je ne suis pas fatigue .", "il est medecin .", "nous sommes la ."),  # B=3, S=7, T=6
    evaluated=12,
    free_running=(4, 5, 6, 7),  # S=5, T=4
    plotted="il est medecin .",  # S=5, T=6
    classifier_embedding=6,
    classifier_hidden=7,
    classifier_attention=9,
    classifier_batch=41,
)
"""The workload's sizes for the trace: no two of H, B, k, E, 2H, ... alike (the data sets S, T, V)."""


def trace(out: Path, workdir: Path, device: str) -> None:
    """Run the workload under the tracer on `device`; write the records to `out` (JSON)."""
    import excerpt_workload
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    tracer = Tracer(discover())
    sizes = excerpt_workload.Sizes(**SHAPE_SIZES)
    export = torch.onnx.export

    def untraced_export(*args, **kwargs):
        """The exporter runs the model on fake tensors with symbolic sizes, and slowly under a tracer: untraced."""
        sys.settrace(None)
        try:
            return export(*args, **kwargs)
        finally:
            sys.settrace(tracer.global_trace)

    torch.onnx.export = untraced_export
    sys.settrace(tracer.global_trace)
    try:
        excerpt_workload.run(workdir, sizes, device)
    finally:
        sys.settrace(None)
        torch.onnx.export = export
    out.write_text(json.dumps({"device": device, "frames": tracer.frames}), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The check


@dataclass
class Result:
    failures: list[str]
    checked: dict[str, int]
    """Commented line -> executions that told its dims apart."""
    executions: dict[str, int]
    """Commented line -> executions."""


def _align(values: list, specs: list[Spec], each: bool) -> list[tuple[object, Spec]] | str:
    if each and len(specs) == 1:
        specs = specs * len(values)
    if len(values) != len(specs):
        kept = [v for v in values if v is None or isinstance(v, list)]
        if len(kept) != len(specs):
            return f"the comment states {len(specs)} value(s), the line bound {len(values)}: {_show(values)}"
        values = kept
    return list(zip(values, specs, strict=True))


def _show(values: list) -> str:
    def one(value: object) -> str:
        if isinstance(value, list):
            return "(" + ", ".join(map(str, value)) + ("," if len(value) == 1 else "") + ")"
        return "None" if value is None else str(value)

    return ", ".join(one(v) for v in values)


def _judge(aligned: list | str, binding: dict[str, int], may_be_none: bool) -> tuple[str | None, dict[str, float]]:
    """The first disagreement of one execution with its comment (None if none), and the dims' sizes."""
    if isinstance(aligned, str):
        return aligned, {}
    problem, sizes = None, {}
    for value, spec in aligned:
        if spec.wild:
            continue
        if value is None:
            if spec.dims is not None and not (spec.nullable or may_be_none):
                problem = problem or f"the line bound None where the comment says {spec}"
            continue
        if not isinstance(value, list):
            if spec.dims is not None:
                problem = problem or f"the line bound {value}, not a tensor, where the comment says {spec}"
            continue
        if spec.dims is None:
            problem = problem or f"the line bound a tensor {_show([value])} where the comment says None"
            continue
        if len(spec.dims) != len(value):
            problem = problem or f"rank {len(value)} {_show([value])} where the comment says {spec}"
            continue
        for dim, size in zip(spec.dims, value, strict=True):
            expected = dim.value(binding)
            if expected is None:
                continue
            sizes[dim.text] = expected
            if expected != size:
                problem = problem or f"{dim.text} should be {expected:g}, the run made {size}"
    return problem, sizes


def _claims(aligned: list | str, fixed: set[str]) -> dict[str, int]:
    """What one execution says about the letters that nothing else binds: letter -> size."""
    claims: dict[str, int] = {}
    if isinstance(aligned, str):
        return claims
    for value, spec in aligned:
        if isinstance(value, list) and spec.dims is not None and len(spec.dims) == len(value):
            for dim, size in zip(spec.dims, value, strict=True):
                if dim.letter and dim.letter not in fixed:
                    claims.setdefault(dim.letter, size)
    return claims


MAX_BINDINGS = 4096
"""Candidate bindings tried per frame execution; beyond it letters take their most common size."""


def _best_bindings(claims: list[dict[str, int]]) -> list[dict[str, int]]:
    """The bindings of the free letters that the most executed lines agree with (several on a tie)."""
    candidates: dict[str, Counter] = defaultdict(Counter)
    for claim in claims:
        for letter, size in claim.items():
            candidates[letter][size] += 1
    letters = sorted(candidates)
    options = [sorted(candidates[letter], key=lambda size, c=candidates[letter]: -c[size]) for letter in letters]
    if math.prod(len(option) for option in options) > MAX_BINDINGS:
        return [{letter: option[0] for letter, option in zip(letters, options, strict=True)}]
    scored = []
    for sizes in itertools.product(*options):
        binding = dict(zip(letters, sizes, strict=True))
        agree = sum(all(binding[letter] == size for letter, size in claim.items()) for claim in claims)
        scored.append((agree, binding))
    top = max(agree for agree, _ in scored)
    return [binding for agree, binding in scored if agree == top]


def check(records: list[dict], lines: list[Line]) -> Result:
    """Compare every recorded execution with its line's comment (see the module docstring)."""
    by_where = {line.where: line for line in lines}
    specs = {line.where: parse_comment(line.comment) for line in lines}
    eaches = {line.where: comment_says_each(line.comment) for line in lines}
    failures: dict[str, list[str]] = defaultdict(list)
    checked: Counter[str] = Counter()
    executions: Counter[str] = Counter()
    for record in records:
        path = record["path"]
        seeds = {letter: size for letter, (size, _) in record["seeds"].items()}
        observed = []
        for number, values, ints in record["lines"]:
            where = f"{path}:{number}"
            if specs.get(where) is None:
                continue
            aligned = _align(values, specs[where], eaches[where])
            observed.append((where, values, ints, aligned, _claims(aligned, set(seeds) | set(ints))))
        bindings = _best_bindings([claim for *_, claim in observed])
        for where, values, ints, aligned, _ in observed:
            executions[where] += 1
            judged = [
                (_judge(aligned, {**voted, **seeds, **ints}, by_where[where].may_be_none), voted) for voted in bindings
            ]
            wrong = [(problem, voted) for (problem, _), voted in judged if problem is not None]
            if wrong:
                problem, voted = wrong[0]
                letters = sorted({d.letter for s in specs[where] if s.dims for d in s.dims if d.letter})
                told = ", ".join(
                    f"{letter.replace('_prime', chr(39))}={_source(letter, seeds, ints, voted, record)}"
                    for letter in letters
                )
                tie = " (a tie: the run cannot tell whether this line or another of its function is wrong)"
                failures[where].append(
                    f"{where} in {record['function']}: `{by_where[where].comment}` disagrees with the run: {problem}; "
                    f"recorded {_show(values)}; letters {told or '(none)'}" + (tie if len(wrong) < len(judged) else "")
                )
            elif len(set(judged[0][0][1].values())) == len(judged[0][0][1]):
                checked[where] += 1
    messages = []
    for line in lines:
        if specs[line.where] is None:
            continue
        if line.role == "unreadable":
            messages.append(f"{line.where}: `{line.comment}` cannot be checked: {line.why}")
        elif failures.get(line.where):
            more = len(failures[line.where]) - 1
            messages.append(failures[line.where][0] + (f" (and {more} more executions)" if more else ""))
        elif not executions[line.where]:
            messages.append(f"{line.where}: `{line.comment}` never ran in the workload")
        elif not checked[line.where]:
            messages.append(
                f"{line.where}: `{line.comment}` ran {executions[line.where]} times, never with its dims "
                "at sizes that tell them apart (give the workload other sizes)"
            )
    return Result(messages, dict(checked), dict(executions))


def _source(letter: str, seeds: dict, ints: dict, voted: dict, record: dict) -> str:
    if letter in ints:
        return f"{ints[letter]} (the local variable)"
    if letter in seeds:
        return f"{seeds[letter]} (argument {record['seeds'][letter][1]}, as the docstring says)"
    if letter in voted:
        return f"{voted[letter]} (the size most lines of the function agree with)"
    return "unbound"


def shape_lines(lines: list[Line]) -> list[Line]:
    """The lines whose comment is a shape comment."""
    return [line for line in lines if parse_comment(line.comment) is not None]


if __name__ == "__main__":
    trace(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
