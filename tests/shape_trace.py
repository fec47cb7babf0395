"""Shape comments are specs: read them on the excerpted lines, trace a run, compare.

A line of a section the pages include (``--8<-- "src/...py:NAME"``) whose trailing comment starts with a shape
tuple in the notation of `docs/notation.md` is a spec of what the line makes::

    output, hidden = self.gru(embedded, state.hidden)  # (B, 1, H), (1, B, H): s_t first

`discover` finds those lines, `trace` runs `tests/excerpt_workload.py` under `sys.settrace` restricted to their
functions (a fresh Python: ``python tests/shape_trace.py OUT.json WORKDIR DEVICE``; `torch.onnx.export` runs
untraced) and `check` compares every recorded execution with its comment; tests/site/test_shape_comments.py runs it.

The comment (`parse_comment`): prose after the first ``:`` is ignored, of a chain (``(B, S, Hk) -> (B, S, Hq)``)
only what follows the last ``->`` counts. Commas outside parentheses separate the values of a tuple result: each a
shape, ``None`` (a value that is None) or other words (not checked). A shape is a tuple of dims (a name: ``B``,
``Hk``, ``B'``; a whole number; arithmetic: ``2H``, ``B*k``, ``t+1``), then perhaps a label or ``or None``.
``(B*k) rows`` (no comma) is no tuple, hence no shape comment.

What a line binds (`file_lines`, `Tracer`): an assignment its targets (``_`` left out), read once the statement is
done; a ``return`` the returned value (a tuple element-wise); a statement that raised binds nothing. A comment
strictly inside a multi-line statement describes the one side-effect-free call argument on its line (`is_pure`),
evaluated before the statement runs. A line that cannot be read so (a header, a call that binds nothing, a subscript
target, an argument with side effects) fails with the reason. A value written ``x if c else None`` may be None.

Letters (`check`) are bound per frame execution: first an ``int`` local of that name, then the size an argument's
jaxtyping annotation gives it (``query: Float[Tensor, "B T Hq"]``), then the size most executions of the frame's
commented lines agree with (a tie names the failing line, with a note). A line fails on a dim, rank, count or None
that disagrees; an execution checks a comment only when its dims have pairwise different sizes (the workload's
sizes make most do), and a commented line that never ran, or never with its dims told apart, fails too.
"""

from __future__ import annotations

import ast
import functools
import io
import itertools
import json
import re
import sys
import tokenize
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

TESTS = Path(__file__).resolve().parent  # on the path: tests/, hooks/ (pytest's `pythonpath`), tests/site/
sys.path[:0] = [str(TESTS), str(TESTS.parent / "hooks"), str(TESTS / "site")]

from support import ROOT  # noqa: E402
from test_excerpt_coverage import included_sections, section_lines  # noqa: E402  (the excerpts' own parsing)

# ---------------------------------------------------------------------------------------------
# The comment grammar


@functools.cache
def dim_code(dim: str) -> object | None:
    """The compiled expression of a dim as written (``2H`` is ``2*H``, ``B'`` is ``B_prime``); None if it is none."""
    if not re.fullmatch(r"[\w' +*/-]+", dim):
        return None
    try:
        return compile(re.sub(r"(\d)\s*([A-Za-z_])", r"\1*\2", dim.replace("'", "_prime")), "<dim>", "eval")
    except SyntaxError:
        return None


def dim_size(dim: str, binding: dict[str, int]) -> float | None:
    """The dim's size under `binding`; None when one of its names is unbound."""
    code = dim_code(dim)
    return eval(code, {"__builtins__": {}}, binding) if set(code.co_names) <= binding.keys() else None  # noqa: S307


def letter(dim: str) -> str | None:
    """The name of a dim that is one name (``B'`` as ``B_prime``, the name a binding knows it by)."""
    name = dim.strip().replace("'", "_prime")
    return name if name.isidentifier() else None


@dataclass(frozen=True)
class Spec:
    """What a comment says about one value: a shape (`dims`), None (`dims` None), or anything (`wild`)."""

    dims: tuple[str, ...] | None = None
    nullable: bool = False
    wild: bool = False

    def __str__(self) -> str:
        if self.wild or self.dims is None:
            return "(any)" if self.wild else "None"
        return _show([list(self.dims)]) + (" or None" if self.nullable else "")


def _dims(inner: str) -> tuple[str, ...] | None:
    """The dims of a tuple's inside (``B, T, S``); None for no tuple (``B*k`` has no comma)."""
    parts = [part.strip() for part in inner.split(",")]
    if inner.strip() and len(parts) == 1:
        return None
    parts = parts[:-1] if parts[-1] == "" else parts
    return tuple(parts) if all(dim_code(part) for part in parts) else None


def parse_comment(comment: str) -> list[Spec] | None:
    """The specs a trailing comment states, one per value; None when it is not a shape comment."""
    body = comment.lstrip("#").strip()
    if not body.startswith("("):
        return None
    specs: list[Spec] = []
    for item in re.split(r",(?![^(]*\))", body.split(":")[0].split("->")[-1]):
        match = re.fullmatch(r"\((.*?)\)(.*)", item.strip())
        dims = _dims(match[1]) if match else None
        if dims is not None:
            specs.append(Spec(dims, nullable="or None" in match[2]))
        elif not specs:
            return None
        else:
            specs.append(Spec(wild=item.strip() != "None"))
    return specs


# ---------------------------------------------------------------------------------------------
# Finding the commented lines


PURE_METHODS = set("index_select transpose unsqueeze squeeze permute view reshape flatten size contiguous".split())
"""Methods an argument line may call and still be evaluated ahead of its statement."""
PURE_NODES = set("Name Attribute Subscript Slice Constant IfExp Compare BoolOp UnaryOp Tuple Load keyword".split())
PURE_NODES |= set("Is IsNot Not Invert And Or USub".split())  # operators


def is_pure(expr: ast.expr) -> bool:
    """Nothing but reading: no call but of `PURE_METHODS`, no node but `PURE_NODES`."""
    return all(
        type(node).__name__ in PURE_NODES
        or isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in PURE_METHODS
        for node in ast.walk(expr)
    )


@dataclass
class Line:
    """A shape-commented line of an included section. `role`: ``bind`` (`reads` its targets), ``return``,
    ``argument`` (`reads` its one call argument) or ``unreadable`` (`why`); `function`: the enclosing function's name
    and first line, `span`: the statement's first and last lines, `annotations`: the function's arguments' dims."""

    path: str
    number: int
    comment: str
    role: str = "unreadable"
    why: str = ""
    function: tuple[str, int] | None = None
    span: tuple[int, int] = (0, 0)
    reads: list[str] = field(default_factory=list)
    annotations: dict[str, list[str]] = field(default_factory=dict)
    may_be_none: bool = False

    @property
    def where(self) -> str:
        return f"{self.path}:{self.number}"


def trailing_comments(text: str) -> dict[int, str]:
    """Line number -> trailing comment (a comment after code on its line)."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return {t.start[0]: t.string for t in tokens if t.type == tokenize.COMMENT and t.line[: t.start[1]].strip()}


def _targets(target: ast.expr) -> list[str] | None:
    """The names and attributes an assignment target binds (``_`` left out); None for another target."""
    if isinstance(target, ast.Tuple | ast.List):
        parts = [_targets(element) for element in target.elts]
        return None if None in parts else [name for part in parts for name in part]
    source = ast.unparse(target)
    return [] if source == "_" else [source] if re.fullmatch(r"\w+(\.\w+)*", source) else None


def _none_branch(value: ast.expr) -> bool:
    """``x if c else None`` or ``None if c else x``."""
    return isinstance(value, ast.IfExp) and any(
        isinstance(branch, ast.Constant) and branch.value is None for branch in (value.body, value.orelse)
    )


def _annotations(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[str]]:
    """Argument -> the dims its jaxtyping annotation names (``keys: Float[Tensor, "B S Hk"]`` gives B, S, Hk)."""
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    found = {a.arg: re.search(r"\[\w+, '([\w ]+)'\]", ast.unparse(a.annotation)) for a in arguments if a.annotation}
    return {name: match[1].split() for name, match in found.items() if match}


def _read(line: Line, stmt: ast.stmt) -> None:
    """Set `line`'s role and what it reads, or why it cannot be read."""
    if line.number in (stmt.lineno, stmt.end_lineno):
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            line.role = "return"
        elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign) and stmt.value is not None:
            targets = _targets(stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target)
            if targets is None:
                line.why = "a target that is not a name or an attribute cannot be read back"
            else:
                line.role, line.reads = "bind", targets
                line.may_be_none = len(targets) == 1 and _none_branch(stmt.value)
        else:
            kind = "an expression" if isinstance(stmt, ast.Expr) else f"a `{type(stmt).__name__.lower()}`"
            line.why = f"{kind} statement binds nothing"
        return
    arguments = [
        argument
        for call in ast.walk(stmt)
        if isinstance(call, ast.Call)
        for argument in [*call.args, *(keyword.value for keyword in call.keywords)]
        if argument.lineno == argument.end_lineno == line.number
    ]
    arguments = [  # the outermost: `self.keys.index_select(0, rows)`, not its `0` and `rows`
        argument for argument in arguments if not any(o is not argument and argument in ast.walk(o) for o in arguments)
    ]
    if len(arguments) != 1:
        line.why = "a comment inside a statement must sit on a line that holds one call argument"
    elif not is_pure(arguments[0]):
        line.why = "the argument on this line has side effects: it cannot be evaluated ahead of its statement"
    else:
        line.role, line.reads = "argument", [ast.unparse(arguments[0])]
        line.may_be_none = _none_branch(arguments[0])


def file_lines(path: Path, sections: set[str], text: str | None = None) -> list[Line]:
    """The lines of `path`'s `sections` with a shape comment. `text` replaces the file's text (a planted copy); the
    sections are read from the file at `path`, so a copy with the same lines keeps them."""
    text = path.read_text(encoding="utf-8") if text is None else text
    relative = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    inside = {number for lines in section_lines(path, sections).values() for number in lines}
    nodes = list(ast.walk(ast.parse(text)))
    functions = [node for node in nodes if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    simple = [node for node in nodes if isinstance(node, ast.stmt) and not hasattr(node, "body")]
    found = []
    for number, comment in sorted(trailing_comments(text).items()):
        if number not in inside or parse_comment(comment) is None:
            continue
        line = Line(relative, number, comment)
        found.append(line)
        stmt = next((stmt for stmt in simple if stmt.lineno <= number <= stmt.end_lineno), None)
        if stmt is None:
            line.why = "the comment is on a line that is not a simple statement (a header binds nothing)"
            continue
        line.span = (stmt.lineno, stmt.end_lineno)
        around = [function for function in functions if function.lineno <= stmt.lineno <= function.end_lineno]
        if not around:
            line.why = "code outside a function runs at import, before the trace"
            continue
        function = max(around, key=lambda function: function.lineno)  # the innermost
        first = min([function.lineno, *(decorator.lineno for decorator in function.decorator_list)])
        line.function, line.annotations = (function.name, first), _annotations(function)
        _read(line, stmt)
    return found


def discover(texts: dict[str, str] | None = None) -> list[Line]:
    """Every shape-commented line of every section a page includes (`texts`: planted sources by relative path)."""
    texts = {ROOT / path: text for path, text in (texts or {}).items()}
    sections = sorted(included_sections().items())
    return [line for path, names in sections for line in file_lines(path, names, texts.get(path))]


# ---------------------------------------------------------------------------------------------
# The trace


def describe(value: object) -> object:
    """A value as the record keeps it: a shape (list), None, or the name of its type."""
    if hasattr(value, "shape") and hasattr(value, "ndim") and not isinstance(value, type):
        return [int(size) for size in value.shape]
    return None if value is None else type(value).__name__


def _evaluate(code: object, frame) -> object:
    try:
        return describe(eval(code, frame.f_globals, dict(frame.f_locals)))  # noqa: S307 (a target, or a pure argument)
    except Exception as error:  # noqa: BLE001
        return f"<error {type(error).__name__}: {error}>"


def seeds(annotations: dict[str, list[str]], local: dict) -> dict[str, list]:
    """Letter -> [size, argument] from the arguments' annotations (one that a size contradicts describes another
    case: skipped)."""
    found: dict[str, list] = {}
    for name, dims in annotations.items():
        shape = describe(local.get(name))
        pairs = list(zip(dims, shape, strict=True)) if isinstance(shape, list) and len(shape) == len(dims) else []
        if all(int(dim) == size for dim, size in pairs if dim.isdigit()):
            for dim, size in pairs:
                if dim.isidentifier():
                    found.setdefault(dim, [size, name])
    return found


class Tracer:
    """`sys.settrace` over the functions that hold commented lines; collects one record per frame execution."""

    def __init__(self, lines: list[Line]) -> None:
        self.functions: dict[tuple[str, str, int], tuple[Line, dict, dict]] = {}
        for line in lines:
            if line.role != "unreadable":
                key = (str(ROOT / line.path), *line.function)
                _, spans, at = self.functions.setdefault(key, (line, defaultdict(list), {}))
                spans[line.span].append((line, [compile(source, line.where, "eval") for source in line.reads]))
                at.update(dict.fromkeys(range(line.span[0], line.span[1] + 1), line.span))
        self.frames: list[dict] = []

    def global_trace(self, frame, event, arg):
        code = frame.f_code
        watched = self.functions.get((code.co_filename, code.co_name, code.co_firstlineno))
        if watched is None:
            return None
        first, spans, at = watched
        found = seeds(first.annotations, frame.f_locals)
        record = {"path": first.path, "function": code.co_qualname, "seeds": found, "lines": []}
        pending = None

        def add(line: Line, frame, values: list) -> None:
            ints = {name: value for name, value in frame.f_locals.items() if type(value) is int}
            record["lines"].append([line.number, values, ints])

        def local(frame, event, arg):
            nonlocal pending
            if event == "exception":
                pending = None  # the statement raised: nothing was bound
            elif pending and (event == "return" or not pending[0] <= frame.f_lineno <= pending[1]):
                for line, codes in spans[pending]:
                    if line.role == "bind":
                        add(line, frame, [_evaluate(code, frame) for code in codes])
                    elif line.role == "return" and event == "return":  # left without returning, it raised
                        add(line, frame, [describe(v) for v in (arg if type(arg) is tuple else [arg])])
                pending = None
            if event == "line" and pending is None and frame.f_lineno in at:
                pending = at[frame.f_lineno]
                for line, codes in spans[pending]:
                    if line.role == "argument":
                        add(line, frame, [_evaluate(codes[0], frame)])
            if event == "return" and record["lines"]:
                self.frames.append(record)
            return local

        return local


def trace(out: Path, workdir: Path, device: str) -> None:
    """Run the workload under the tracer on `device`; write the records to `out` (JSON)."""
    import excerpt_workload
    import torch

    tracer = Tracer(discover())
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
        excerpt_workload.run(workdir, device)
    finally:
        sys.settrace(None)
        torch.onnx.export = export
    out.write_text(json.dumps({"device": device, "frames": tracer.frames}), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# The check


class Result(NamedTuple):
    failures: list[str]
    checked: dict[str, int]  # commented line -> executions that told its dims apart
    executions: dict[str, int]  # commented line -> executions


def _show(values: list) -> str:
    """Values as a comment writes them: ``(2, 5), None``."""
    return ", ".join(
        f"({', '.join(map(str, v))}{',' * (len(v) == 1)})" if isinstance(v, list) else str(v) for v in values
    )


def _judge(
    values: list, specs: list[Spec], binding: dict[str, int], may_be_none: bool
) -> tuple[str | None, dict, dict]:
    """The first disagreement of one execution with its comment (None if none), its dims' sizes, and the sizes it
    gives the letters `binding` leaves unbound."""
    kept = values if len(values) == len(specs) else [v for v in values if v is None or isinstance(v, list)]
    if len(kept) != len(specs):  # more values than the comment states: those neither tensors nor None left out
        return f"the comment states {len(specs)} value(s), the line bound {len(values)}: {_show(values)}", {}, {}
    problems, sizes, claims = [], {}, {}
    for value, spec in zip(kept, specs, strict=True):
        if spec.wild or value is None and (spec.dims is None or spec.nullable or may_be_none):
            continue
        if not isinstance(value, list) or spec.dims is None:
            problems.append(f"the line bound {_show([value])} where the comment says {spec}")
        elif len(spec.dims) != len(value):
            problems.append(f"rank {len(value)} {_show([value])} where the comment says {spec}")
        else:
            for dim, size in zip(spec.dims, value, strict=True):
                expected = dim_size(dim, binding)
                if expected is None and letter(dim):
                    claims.setdefault(letter(dim), size)
                elif expected is not None:
                    sizes[dim] = expected
                    if expected != size:
                        problems.append(f"{dim} should be {expected:g}, the run made {size}")
    return (problems[0] if problems else None), sizes, claims


def _votes(claims: list[dict[str, int]]) -> list[dict[str, int]]:
    """The size of each free letter that the most executions claim; on a tie the combinations of the tied sizes (at
    most 4096)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for claim in claims:
        for name, size in claim.items():
            counts[name][size] += 1
    options = [[(name, size) for size, n in c.items() if n == max(c.values())] for name, c in sorted(counts.items())]
    return [dict(choice) for choice in itertools.islice(itertools.product(*options), 4096)]


def check(records: list[dict], lines: list[Line]) -> Result:
    """Compare every recorded execution with its line's comment (see the module docstring)."""
    by_where = {line.where: line for line in lines}
    specs = {line.where: parse_comment(line.comment) for line in lines}
    failures: dict[str, list[str]] = defaultdict(list)
    checked: Counter[str] = Counter()
    executions: Counter[str] = Counter()
    for record in records:
        seeds = {name: size for name, (size, _) in record["seeds"].items()}
        observed = [(f"{record['path']}:{number}", values, ints) for number, values, ints in record["lines"]]
        observed = [(where, values, ints) for where, values, ints in observed if where in by_where]
        claims = [_judge(values, specs[where], {**seeds, **ints}, True)[2] for where, values, ints in observed]
        bindings = _votes(claims)
        for where, values, ints in observed:
            executions[where] += 1
            line = by_where[where]
            judged = [_judge(values, specs[where], {**voted, **seeds, **ints}, line.may_be_none) for voted in bindings]
            wrong = [(problem, voted) for (problem, *_), voted in zip(judged, bindings, strict=True) if problem]
            if wrong:
                problem, voted = wrong[0]
                names = sorted({letter(d) for spec in specs[where] for d in spec.dims or () if letter(d)})
                told = ", ".join(
                    f"{n.replace('_prime', chr(39))}={_source(n, ints, voted, record['seeds'])}" for n in names
                )
                tie = " (a tie: the run cannot tell whether this line or another of its function is wrong)"
                failures[where].append(
                    f"{where} in {record['function']}: `{line.comment}` disagrees with the run: {problem}; "
                    f"recorded {_show(values)}; letters {told or '(none)'}" + (tie if len(wrong) < len(judged) else "")
                )
            elif len(set(judged[0][1].values())) == len(judged[0][1]):
                checked[where] += 1
    messages = []
    for line in lines:
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


def _source(name: str, ints: dict, voted: dict, seeds: dict) -> str:
    if name in ints:
        return f"{ints[name]} (the local variable)"
    if name in seeds:
        return "{} (argument {}, as its annotation says)".format(*seeds[name])
    return f"{voted[name]} (the size most lines of the function agree with)" if name in voted else "unbound"


if __name__ == "__main__":
    trace(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
