"""The committed step-through trace (docs/assets/traces/bahdanau.json) is the run it claims to be.

`scripts/record_traces.py` records what each excerpted line of the line-by-line pages bound in one
run of the packaged Bahdanau translator on one held-out sentence; `hooks/stepper.py` puts it on the
pages. Here:

* a fresh run of the recorder equals the committed trace (every name, shape, letter and word, and
  every value within 1e-5), so the pages show what the code does today;
* every traced section is still excerpted by a line-by-line page and still holds every traced line,
  word for word, so that an edit of the source without a re-record fails here (without torch), with
  the command that fixes it;
* the trace is small (under 1 MB), names its sentence, which is a held-out (test split) pair of the
  checkpoint's corpus, and each page's stepper sections are marked by the hook.
"""

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from site_support import ROOT

SCRIPT = ROOT / "scripts" / "record_traces.py"
RERECORD = "python scripts/record_traces.py"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


recorder = _load("record_traces", SCRIPT)
stepper = _load("stepper_hook", ROOT / "hooks" / "stepper.py")


@pytest.fixture(scope="module")
def committed() -> dict:
    assert recorder.TRACE_PATH.is_file(), f"no {recorder.TRACE_PATH.relative_to(ROOT)}; record it: {RERECORD}"
    return json.loads(recorder.TRACE_PATH.read_text(encoding="utf-8"))


def stale_lines(trace: dict) -> list[str]:
    """Each traced section that no page excerpts or src lacks, and each traced line its section no longer holds."""
    problems = []
    excerpted = set(recorder.page_sections(tuple(trace["pages"])))
    for ref, steps in trace["sections"].items():
        if ref not in excerpted:
            problems.append(f"{ref} is traced but no line-by-line page excerpts it")
            continue
        path, section = ref.rsplit(":", 1)
        if not (ROOT / path).is_file() or f"# --8<-- [start:{section}]" not in (ROOT / path).read_text(
            encoding="utf-8"
        ):
            problems.append(f"{ref}: the section is gone from src")
            continue
        texts = recorder.section_texts(ref)
        for step in steps:
            n = len(step["text"])
            if not any(texts[k : k + n] == step["text"] for k in range(len(texts) - n + 1)):
                problems.append(f"{ref}: the traced line {step['text'][0]!r} is no longer in the section")
    return problems


def test_every_traced_line_is_still_in_its_excerpted_section(committed: dict):
    problems = stale_lines(committed)
    assert not problems, (
        "the step-through trace is stale; re-record it with `" + RERECORD + "`:\n" + "\n".join(problems)
    )


def test_the_staleness_check_sees_an_edited_line_and_a_dropped_section(committed: dict):
    edited = copy.deepcopy(committed)
    ref, steps = next(iter(edited["sections"].items()))
    steps[-1]["text"] = [steps[-1]["text"][0] + "  # edited"]
    edited["sections"]["src/seq2seq_attention/attention/attention.py:no_such_section"] = steps[:1]
    problems = stale_lines(edited)
    assert any(ref in p and "no longer in the section" in p for p in problems), problems
    assert any("no_such_section" in p for p in problems), problems


def test_the_trace_is_small_and_names_a_held_out_sentence(committed: dict):
    from seq2seq_attention.core.checkpoint import load_checkpoint
    from seq2seq_attention.translation.corpus import load_pairs, split_pairs

    assert recorder.TRACE_PATH.stat().st_size < 1_000_000
    assert sum(p.stat().st_size for p in recorder.TRACE_PATH.parent.iterdir()) < 1_000_000
    sentence = committed["sentence"]
    checkpoint = load_checkpoint(ROOT / committed["model"]["path"])
    config = checkpoint.training["config"]
    train, test = split_pairs(load_pairs(max_words=config["max_words"]), config["split"])
    assert (sentence["source"], sentence["reference"]) in {(p.source, p.target) for p in test}
    assert sentence["source"] not in {p.source for p in train}
    assert sentence["source_tokens"] == [*sentence["source"].split(), "<eos>"]
    print(sentence["source"], "->", sentence["translation"], f"({len(sentence['source_tokens'])} tokens)")
    # the pages' first decoding step: some line binds the attention over the sentence, and it sums to 1
    weights = [
        value
        for steps in committed["sections"].values()
        for step in steps
        for value in step["values"]
        if value.get("dims") == ["B=1", "T=1", f"S={len(sentence['source_tokens'])}"]
        and value.get("cols")
        and abs(sum(value["values"]) - 1) < 1e-5
    ]
    assert weights, "no traced line binds attention weights over the sentence"
    assert all(value["cols"] == sentence["source_tokens"] for value in weights)


def test_the_one_step_page_names_the_traced_sentence(committed: dict):
    text = (ROOT / "docs" / "attention" / "one-step.md").read_text(encoding="utf-8")
    assert f"«{committed['sentence']['source']}»" in text, (
        f"docs/attention/one-step.md names another sentence than the trace's {committed['sentence']['source']!r}"
    )


def test_the_committed_trace_equals_a_fresh_run(committed: dict, tmp_path: Path):
    fresh_path = tmp_path / "fresh.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(fresh_path)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = json.loads(fresh_path.read_text(encoding="utf-8"))
    problems = recorder.differences(committed, fresh)
    assert not problems, f"the committed trace differs from a fresh run; re-record it with `{RERECORD}`:\n" + "\n".join(
        problems
    )
    # every page excerpt that ran is traced; the rest are named
    assert set(fresh["sections"]) | set(fresh["not_run"]) == set(recorder.page_sections(tuple(fresh["pages"])))
    assert len(fresh["sections"]) >= 5


def test_the_comparison_sees_a_value_a_shape_and_a_line_that_changed(committed: dict):
    changed = copy.deepcopy(committed)
    tensors = [
        (ref, i, value)
        for ref, steps in changed["sections"].items()
        for i, step in enumerate(steps)
        for value in step["values"]
        if value["kind"] == "tensor"
        and isinstance(value.get("values"), list)
        and not isinstance(value["values"][0], list)
    ]
    ref, i, value = next(t for t in tensors if abs(t[2]["values"][0]) < 0.5)  # tolerance 1e-5 (and 1e-5 relative)
    value["values"][0] += 2e-5
    assert any("more than 1e-05 apart" in p for p in recorder.differences(committed, changed))
    value["values"][0] -= 2e-5 - 5e-6  # within the tolerance
    assert recorder.differences(committed, changed) == []
    value["shape"] = [*value["shape"], 1]
    changed["sections"][ref][i]["text"] = ["x = y  # (B, S)"]
    problems = recorder.differences(committed, changed)
    assert any(".shape" in p for p in problems) and any(".text" in p for p in problems), problems


@pytest.mark.parametrize(
    ("line", "shapes"),
    [
        ("scores = self.score.compare(query, proj_keys)  # (B, T, S)", [["B", "T", "S"]]),
        ("query = state.hidden.permute(1, 0, 2)  # (1, B, H) -> (B, 1, H): s_{t-1}", [["B", "1", "H"]]),
        (")  # (B, 1, H), (B, 1, S)", [["B", "1", "H"], ["B", "1", "S"]]),
        (
            "return self.Va(torch.tanh(q + k)).squeeze(-1)  # (B, T, S, H) -> (B, T, S, 1) -> (B, T, S)",
            [["B", "T", "S"]],
        ),
        ("input_gru = torch.cat((embedded, context), dim=2)  # (B, 1, 2H)", [["B", "1", "2H"]]),
        ("self.Wa = nn.Linear(self.query_size, hidden_size)  # W_a: projects the query (decoder state)", []),
        ("outputs.append(output)", []),
    ],
)
def test_shape_comments_are_read_as_the_line_states_them(line: str, shapes: list):
    assert recorder.shape_tuples(line) == shapes


def test_letters_fit_only_the_sizes_the_run_knows():
    known = {"B": 1, "S": 6, "H": 256, "V": 1511}
    assert recorder._fits(["B", "1", "2H"], (1, 1, 512), known)
    assert recorder._fits(["B", "T", "S"], (1, 5, 6), known)  # T is free
    assert not recorder._fits(["B", "1", "V"], (1, 1, 256), known)  # a (B, 1, V) comment on a (B, 1, H) value
    assert not recorder._fits(["B", "T", "T"], (1, 2, 3), known)  # one letter, two sizes
    assert not recorder._fits(["B", "S"], (1, 6, 1), known)
    assert recorder.letters(["B", "1", "2H"], (1, 1, 512)) == ["B=1", "1", "2H=512"]


def test_the_hook_marks_only_traced_excerpts_and_inlines_safe_json(committed: dict):
    ref = next(iter(committed["sections"]))
    page = (
        f'Text.\n\n```{{.python notest title="a · b"}}\n--8<-- "{ref}"\n```\n\n'
        '```{.python notest}\n--8<-- "src/seq2seq_attention/attention/scores.py:dot"\n```\n'
    )
    marked, refs = stepper.mark_fences(page, committed["sections"])
    assert refs == [ref]
    assert f'```{{.python notest title="a · b" data-stepper="{ref}"}}' in marked
    assert '```{.python notest}\n--8<-- "src/seq2seq_attention/attention/scores.py:dot"' in marked
    assert stepper.mark_fences(marked, committed["sections"])[0] == marked  # marked once
    data = stepper.page_data(committed, refs)
    data["sentence"] = {**data["sentence"], "source": "</script><b>"}
    script = stepper.data_script(data)
    assert script.count("</script>") == 1 and "<b>" not in script
    inner = script.split(">", 1)[1].rsplit("<", 1)[0]
    assert json.loads(inner)["sentence"]["source"] == "</script><b>"


def test_every_line_by_line_page_has_a_stepper(built_site):
    for page in recorder.PAGES:
        html = (built_site.root / page.removeprefix("docs/").replace(".md", ".html")).read_text(encoding="utf-8")
        assert 'data-stepper="src/' in html, f"{page} has no excerpt with a step-through"
        assert f'id="{stepper.DATA_ID}"' in html
