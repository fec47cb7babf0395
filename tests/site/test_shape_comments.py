"""Shape comments are specs: every shape comment on an excerpted line agrees with a traced run.

`tests/shape_trace.py` finds the lines of the sections the pages include whose trailing comment
states a shape (``scores = ...  # (B, T, S)``), runs `tests/excerpt_workload.py` under a tracer
in a fresh Python (once per device of ``--devices``, like the spec fences; ``cuda`` is skipped
without CUDA) and checks what each line bound against its comment, with every letter bound per
function execution (see that module's docstring for the grammar and the binding rule). The
tests below it plant wrong comments in a copy of a module and check that the checker names them.
"""

import re
import shutil
import sys
from pathlib import Path

import pytest
import shape_trace
import torch
from shape_trace import ROOT, Line, check, discover, letter, parse_comment


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" not in metafunc.fixturenames:
        return
    chosen = [d.strip() for d in metafunc.config.getoption("--devices").split(",") if d.strip()]
    no_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")
    params = [pytest.param(d, marks=[no_cuda] if d == "cuda" else []) for d in chosen]
    metafunc.parametrize("device", params, scope="module")


@pytest.fixture(scope="module")
def traced(device: str, shape_trace_frames) -> list[dict]:
    """The workload's frame records on `device`: one run per device, started in the background when collection ended
    (`shape_trace_frames`, tests/conftest.py), shared by the tests below."""
    return shape_trace_frames(device)


def test_every_shape_comment_of_an_excerpt_agrees_with_the_run(traced: list[dict], device: str):
    lines = discover()
    result = check(traced, lines)
    print(
        f"{device}: {len(lines)} shape comments on excerpted lines, {len(result.checked)} checked, "
        f"{sum(result.executions.values())} executions"
    )
    assert len(lines) > 0
    assert result.failures == [], "shape comments that disagree with the run:\n" + "\n".join(result.failures)
    assert set(result.checked) == {line.where for line in lines}


def _planted(tmp_path: Path, line: Line, comment: str) -> dict[str, str]:
    """A copy of `line`'s module in `tmp_path` with `comment` in place of the line's comment, as planted text."""
    copy = tmp_path / Path(line.path).name
    shutil.copyfile(ROOT / line.path, copy)
    text = copy.read_text(encoding="utf-8").splitlines(keepends=True)
    assert text[line.number - 1].rstrip().endswith(line.comment)
    text[line.number - 1] = text[line.number - 1].rstrip()[: -len(line.comment)] + comment + "\n"
    copy.write_text("".join(text), encoding="utf-8")
    return {line.path: copy.read_text(encoding="utf-8")}


def _letters(line: Line) -> list[str]:
    return [letter(d) for spec in parse_comment(line.comment) for d in spec.dims or () if letter(d)]


def test_a_swapped_pair_of_letters_in_one_comment_fails_and_names_its_line(
    traced: list[dict], device: str, tmp_path: Path
):
    """`scores = ...  # (B, T, S)` planted as `# (B, S, T)` in a copy of the attention module."""
    candidates = [
        line
        for line in discover()
        if line.path.startswith("src/seq2seq_attention/model/attention")
        and line.role == "bind"
        and {"T", "S"} <= set(_letters(line))
    ]
    assert candidates, "no assignment in the attention package states a (.., T, .., S ..) shape"
    # The `scores` line of `Attention.forward`, the one forward of every attention: its two other commented lines
    # bind S and T, so the run outvotes one wrong comment (where the other lines leave a letter open, as in
    # `masked_softmax`, whose `keep` is (B, 1, S), a swapped comment is a tie and both lines are named).
    (line,) = [line for line in candidates if line.function and line.function[0] == "forward"]
    swapped = re.sub(r"\b[TS]\b", lambda m: "S" if m.group() == "T" else "T", line.comment)
    planted = discover(_planted(tmp_path, line, swapped))
    failures = check(traced, planted).failures
    print(f"planted `{swapped}` at {line.where}:", *failures, sep="\n")
    assert len(failures) == 1 and failures[0].startswith(f"{line.where} ") and swapped in failures[0]
    assert "T should be" in failures[0] or "S should be" in failures[0]


def test_a_comment_that_leaves_out_none_fails(traced: list[dict], device: str, tmp_path: Path):
    """A `(B, 1, S) or None` whose line did bind None, planted without `or None`."""
    lines = discover()
    bound_none = {
        f"{record['path']}:{number}" for record in traced for number, values, _ in record["lines"] if None in values
    }
    line = next(line for line in lines if " or None" in line.comment and line.where in bound_none)
    planted = discover(_planted(tmp_path, line, line.comment.replace(" or None", "")))
    failures = check(traced, planted).failures
    assert len(failures) == 1 and failures[0].startswith(line.where)
    assert "the line bound None where the comment says" in failures[0]


def test_a_commented_line_that_never_ran_fails(traced: list[dict], device: str):
    lines = discover()
    dropped = lines[len(lines) // 2]
    records = [
        {**record, "lines": [entry for entry in record["lines"] if f"{record['path']}:{entry[0]}" != dropped.where]}
        for record in traced
    ]
    assert check(records, lines).failures == [f"{dropped.where}: `{dropped.comment}` never ran in the workload"]


# The grammar and the binding rule on made-up records: no workload needed.


def _shapes(comment: str) -> list[str] | None:
    specs = parse_comment(comment)
    return None if specs is None else [str(spec) for spec in specs]


def test_the_comment_grammar():
    assert _shapes("# (B, T, S)") == ["(B, T, S)"]
    assert _shapes("# (B, T, Hk), (B, T, S)") == ["(B, T, Hk)", "(B, T, S)"]
    assert _shapes("# (B,): best finished, normalised") == ["(B,)"]
    assert _shapes("# (): mean over (B*T, V) vs (B*T,), PAD ignored") == ["()"]
    assert _shapes("# (B, 1, H), (B, 1, S) or None") == ["(B, 1, H)", "(B, 1, S) or None"]
    assert _shapes("# (B, S, H) zero on padding, (D, B, H/D)") == ["(B, S, H)", "(D, B, H/D)"]
    assert _shapes("# (B, T, H) @ (B, H, S) -> (B, T, S)") == ["(B, T, S)"]
    assert _shapes("# (1, B, H) -> (B, 1, H): s_{t-1}") == ["(B, 1, H)"]
    assert _shapes("# (B, S, D*H), state") == ["(B, S, D*H)", "(any)"]
    assert _shapes("# (B, 2H), None") == ["(B, 2H)", "None"]
    assert _shapes("# (1, B', H)") == ["(1, B', H)"]
    assert _shapes("# (B, 2k) each") == ["(B, 2k)"]  # a label: a line that binds two values states both
    for prose in ("# (B*k) rows: k per sentence", "# (train without dev, dev)", "# maps (B, 1, H) to (B, 1, S)"):
        assert _shapes(prose) is None
    two_h = parse_comment("# (B, 2H, t+1, H/D, B')")[0].dims
    assert [shape_trace.dim_size(d, {"B": 3, "H": 8, "t": 4, "D": 2, "B_prime": 6}) for d in two_h] == [3, 16, 5, 4, 6]
    assert shape_trace.dim_size("2H", {"B": 3}) is None


def _line(number: int, comment: str, targets: list[str]) -> Line:
    return Line("made/up.py", number, comment, "bind", function=("f", 1), span=(number, number), reads=targets)


def _frame(*lines: tuple[int, list], seeds: dict | None = None) -> dict:
    return {"path": "made/up.py", "function": "f", "seeds": seeds or {}, "lines": [[n, v, {}] for n, v in lines]}


def test_the_comment_that_disagrees_with_the_rest_of_its_function_is_the_one_named():
    lines = [_line(1, "# (B, S)", ["a"]), _line(2, "# (S, B)", ["b"]), _line(3, "# (B, S, H)", ["c"])]
    result = check([_frame((1, [[2, 5]]), (2, [[2, 5]]), (3, [[2, 5, 8]]))], lines)
    assert len(result.failures) == 1 and result.failures[0].startswith("made/up.py:2 in f: `# (S, B)`")
    assert "S should be 5, the run made 2" in result.failures[0]


def test_an_annotation_seed_outranks_the_lines():
    lines = [_line(1, "# (S, B)", ["a"])]
    assert check([_frame((1, [[2, 5]]))], lines).failures == []  # alone, the line binds its own letters
    seeded = check([_frame((1, [[2, 5]]), seeds={"B": [2, "source"]})], lines).failures
    assert len(seeded) == 1 and "B=2 (argument source, as its annotation says)" in seeded[0]


def test_an_execution_whose_letters_coincide_checks_nothing():
    lines = [_line(1, "# (B, 1, H), (1, B, H)", ["output", "hidden"])]
    one_sentence = _frame((1, [[1, 1, 8], [1, 1, 8]]))
    assert check([one_sentence], lines).failures == [
        "made/up.py:1: `# (B, 1, H), (1, B, H)` ran 1 times, never with its dims at sizes that tell them apart "
        "(give the workload other sizes)"
    ]
    assert check([one_sentence, _frame((1, [[3, 1, 8], [1, 3, 8]]))], lines).failures == []


def test_a_value_count_or_a_rank_that_differs_fails():
    lines = [_line(1, "# (B, T)", ["a", "b"]), _line(2, "# (B, T)", ["c"])]
    failures = check([_frame((1, [[2, 5], [2, 5]]), (2, [[2, 5, 1]]))], lines).failures
    assert "the comment states 1 value(s), the line bound 2" in failures[0]
    assert "rank 3 (2, 5, 1) where the comment says (B, T)" in failures[1]


MODULE = """\
from jaxtyping import Float
from torch import Tensor


def f(x: Float[Tensor, " B"], n):
    # --8<-- [start:s]
    y = x.unsqueeze(0)  # (1, B)
    for i in range(n):
        z = x[: i + 1]  # (i+1,)
    x.add_(0)  # (B,)
    a, b = (
        x.sum(),
        x,
    )  # (), (B,)
    return y, z  # (1, B), (n,)
    # --8<-- [end:s]
"""


def test_the_tracer_reads_each_line_after_it_ran(tmp_path: Path):
    """A made-up module traced in this process: targets are read after their line, a loop per pass, a return's value;
    the annotation binds B."""
    import importlib.util

    module_path = tmp_path / "made_up.py"
    module_path.write_text(MODULE, encoding="utf-8")
    lines = shape_trace.file_lines(module_path, {"s"})
    assert [(line.number, line.role) for line in lines] == [
        (7, "bind"),
        (9, "bind"),
        (10, "unreadable"),
        (14, "bind"),
        (15, "return"),
    ]
    spec = importlib.util.spec_from_file_location("made_up", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tracer = shape_trace.Tracer(lines)
    before = sys.gettrace()
    sys.settrace(tracer.global_trace)
    try:
        module.f(torch.zeros(4), 3)
    finally:
        sys.settrace(before)
    [frame] = tracer.frames
    assert frame["seeds"] == {"B": [4, "x"]}  # from the annotation
    assert [(number, values) for number, values, _ in frame["lines"]] == [
        (7, [[1, 4]]),
        (9, [[1]]),
        (9, [[2]]),
        (9, [[3]]),
        (14, [[], [4]]),
        (15, [[1, 4], [3]]),
    ]
    where = str(module_path)
    assert check(tracer.frames, lines).failures == [
        f"{where}:10: `# (B,)` cannot be checked: an expression statement binds nothing"
    ]
    lines[0].comment = "# (B, 1)"
    failures = check(tracer.frames, lines).failures
    assert failures[0].startswith(f"{where}:7 in f: `# (B, 1)` disagrees with the run: B should be 4, the run made 1")
