"""The committed step-through trace (docs/assets/traces/bahdanau.json) is the run it claims to be.

`scripts/record_traces.py` records what each excerpted line of the line-by-line pages bound, every time it
ran, in five runs of the packaged Bahdanau translator (one held-out sentence translated greedily, a padded
batch of two, the training loop fed its own guesses, one training step, beam search); `hooks/stepper.py`
reads it (its one validating reader, `load`) and puts it on the pages. Here:

* a fresh run of the recorder equals the committed trace (every name, shape, letter and word, and
  every value within 1e-5), so the pages show what the code does today;
* every traced section is still excerpted by a line-by-line page and still holds every traced line,
  word for word, so that an edit of the source without a re-record fails here (without torch), with
  the command that fixes it;
* the runs show what the pages teach: every pass of the decoding loop, the word chosen at each, the
  input-choosing lines in both the free-running and the teacher-forced loop, a padded position weighted
  exactly 0, a training step's loss and gradient norms, and every excerpt of the pages traced;
* the trace is small (under 1 MB), names held-out sentences, and a truncated, malformed or mistyped
  file stops the build with one line that names the file, the entry, what was expected and the command.
"""

import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mkdocs.exceptions import PluginError
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
LOOP = "src/seq2seq_attention/model/decoders.py:loop"
MASKED_SOFTMAX = "src/seq2seq_attention/model/attention.py:masked_softmax"
FORWARD_STEP = "src/seq2seq_attention/model/decoders.py:forward_step"
TOP, TOP_VALUE = 1, 0
"""The sentence run's second forward_step step binds, first, a tensor shown by its top words."""


@pytest.fixture(scope="module")
def committed() -> dict:
    assert recorder.TRACE_PATH.is_file(), f"no {recorder.TRACE_PATH.relative_to(ROOT)}; record it: {RERECORD}"
    return stepper.load(recorder.TRACE_PATH)  # the build's reader: it checks the whole file


def steps_of(trace: dict, run: str, ref: str) -> list[tuple[dict, list[str]]]:
    """A run's steps of a section, each with its line's text."""
    section = trace["runs"][run]["sections"][ref]
    return [(step, section["lines"][step["line"]]["text"]) for step in section["steps"]]


def stale_lines(trace: dict) -> list[str]:
    """Each traced section that no page excerpts or src lacks, and each traced line its section no longer holds."""
    problems = []
    excerpted = set(recorder.page_sections(tuple(trace["pages"])))
    for name, run in trace["runs"].items():
        for ref, section in run["sections"].items():
            if ref not in excerpted:
                problems.append(f"{ref} is traced (run {name}) but no line-by-line page excerpts it")
                continue
            path, part = ref.rsplit(":", 1)
            if not (ROOT / path).is_file() or f"# --8<-- [start:{part}]" not in (ROOT / path).read_text(
                encoding="utf-8"
            ):
                problems.append(f"{ref}: the section is gone from src")
                continue
            texts = recorder.section_texts(ref)
            for line in section["lines"]:
                n = len(line["text"])
                if not any(texts[k : k + n] == line["text"] for k in range(len(texts) - n + 1)):
                    problems.append(f"{ref}: the traced line {line['text'][0]!r} is no longer in the section")
    return problems


def test_every_traced_line_is_still_in_its_excerpted_section(committed: dict):
    problems = stale_lines(committed)
    assert not problems, (
        "the step-through trace is stale; re-record it with `" + RERECORD + "`:\n" + "\n".join(problems)
    )


def test_the_staleness_check_sees_an_edited_line_and_a_dropped_section(committed: dict):
    edited = copy.deepcopy(committed)
    sections = edited["runs"]["sentence"]["sections"]
    ref, section = next(iter(sections.items()))
    section["lines"][-1]["text"] = [section["lines"][-1]["text"][0] + "  # edited"]
    sections["src/seq2seq_attention/model/attention.py:no_such_section"] = section
    problems = stale_lines(edited)
    assert any(ref in p and "no longer in the section" in p for p in problems), problems
    assert any("no_such_section" in p for p in problems), problems


def test_the_trace_is_small_and_names_held_out_sentences(committed: dict):
    from seq2seq_attention.core.checkpoint import load_checkpoint
    from seq2seq_attention.translation.corpus import load_pairs, split_pairs

    assert recorder.TRACE_PATH.stat().st_size < 1_000_000
    assert sum(p.stat().st_size for p in recorder.TRACE_PATH.parent.iterdir()) < 1_000_000
    checkpoint = load_checkpoint(ROOT / committed["model"]["path"])
    config = checkpoint.training["config"]
    train, test = split_pairs(load_pairs(max_words=config["max_words"]), config["split"])
    for name, run in committed["runs"].items():
        for sentence in run["sentences"]:
            assert (sentence["source"], sentence["reference"]) in {(p.source, p.target) for p in test}, name
            assert sentence["source"] not in {p.source for p in train}
            assert sentence["source_tokens"] == [*sentence["source"].split(), "<eos>"]
    print({name: [s["source"] for s in run["sentences"]] for name, run in committed["runs"].items()})
    # the first decoding step of the sentence: a line binds the attention over the sentence, and it sums to 1
    tokens = committed["runs"]["sentence"]["sentences"][0]["source_tokens"]
    weights = [
        value
        for section in committed["runs"]["sentence"]["sections"].values()
        for step in section["steps"]
        for value in step["values"]
        if value.get("dims") == ["B=1", "T=1", f"S={len(tokens)}"]
        and value.get("cols")
        and abs(sum(value["values"]) - 1) < 1e-5
    ]
    assert weights, "no traced line binds attention weights over the sentence"
    assert all(value["cols"] == tokens for value in weights)


def test_the_one_step_page_names_the_traced_sentence(committed: dict):
    text = (ROOT / "docs" / "attention" / "one-step.md").read_text(encoding="utf-8")
    source = committed["runs"]["sentence"]["sentences"][0]["source"]
    assert f"«{source}»" in text, f"docs/attention/one-step.md names another sentence than the trace's {source!r}"


def test_the_loop_is_traced_at_every_pass_with_the_word_chosen_and_the_token_fed(committed: dict):
    for name in ("free", "training"):
        run = committed["runs"][name]
        sentence = run["sentences"][0]
        T = len(sentence["target_tokens"])
        steps = steps_of(committed, name, LOOP)
        headers = [step["t"] for step, text in steps if text[0].startswith("for i in")]
        assert headers == list(range(1, T + 1)), (name, headers)  # the loop ran T times; its exit is no pass
        assert [p["t"] for p in run["passes"]] == list(range(1, T + 1))
        chosen = [p["chosen"][0] for p in run["passes"]]
        assert chosen == [*sentence["translation"].split(), "<eos>"], (name, chosen)  # the packaged model's output
        fed = [p["fed"][0] for p in run["passes"]]
        if name == "free":  # its own guess: the word chosen one pass earlier
            assert fed == ["<sos>", *chosen[:-1]]
        else:  # teacher forcing: the target
            assert fed == ["<sos>", *sentence["target_tokens"][:-1]]
        lit = {(step["t"], text[0].split("  #")[0]) for step, text in steps}
        assert all((t, "step_input = embedded[:, i : i + 1]") in lit for t in range(1, T + 1))
        guesses = {t for t, text in lit if text.startswith("guess = self.out(outputs[-1])")}
        wheres = {t for t, text in lit if text.startswith("step_input = torch.where(")}
        if name == "free":  # every pass after the first feeds the argmax
            assert guesses == wheres == set(range(2, T + 1))
        else:
            assert guesses == wheres == set()
    from seq2seq_attention.translation.train import teacher_forcing_at

    step = committed["runs"]["training"]["training_step"]
    for call in step["calls"]:  # the epoch's ratio (the checkpoint's schedule), and the decaying branch
        expected = teacher_forcing_at(call["schedule"], call["ratio"], call["k"], call["epoch"])
        assert call["result"] == pytest.approx(expected, abs=1e-6)
    assert [call["schedule"] for call in step["calls"]] == ["constant", "inverse_sigmoid"]
    assert step["loss"] > 0 and len(step["grad_norms"]) >= 5 and all(v > 0 for v in step["grad_norms"].values())
    losses = [p["loss"][0] for p in committed["runs"]["training"]["passes"]]
    assert sum(losses) / len(losses) == pytest.approx(step["loss"], abs=1e-5)  # the mean of the per-token losses


def test_the_padded_batch_weighs_its_padding_exactly_zero(committed: dict):
    run = committed["runs"]["batch"]
    lengths = [len(s["source_tokens"]) for s in run["sentences"]]
    assert len(lengths) == 2 and lengths[0] < lengths[1]
    returns = [
        value
        for step, text in steps_of(committed, "batch", MASKED_SOFTMAX)
        if text[0].startswith("return F.softmax(scores, dim=-1).masked_fill")
        for value in step["values"]
    ]
    assert len(returns) == len(run["passes"]) >= 2  # the mask's branch, at every step
    for value in returns:
        assert value["dims"] == ["B=2", "T=1", f"S={lengths[1]}"]
        padded = value["values"][0][lengths[0] :]
        assert padded and all(w == 0.0 for w in padded) and value["words"][0][lengths[0] :] == ["<pad>"] * len(padded)
        assert all(w > 0 for w in value["values"][1])
        assert all(abs(sum(row) - 1) < 1e-5 for row in value["values"])
    hidden = [text for _, text in steps_of(committed, "batch", "src/seq2seq_attention/model/attention.py:hide_padding")]
    assert hidden, "hide_padding did not run in the batch"


@pytest.mark.slow
def test_the_committed_trace_equals_a_fresh_run(committed: dict, tmp_path: Path):
    fresh_path = tmp_path / "fresh.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(fresh_path)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = stepper.load(fresh_path)
    problems = recorder.differences(committed, fresh)
    assert not problems, f"the committed trace differs from a fresh run; re-record it with `{RERECORD}`:\n" + "\n".join(
        problems
    )
    # every excerpt of the line-by-line pages ran in some run: each has a stepper
    ran = stepper.traced_sections(fresh)
    assert fresh["not_run"] == [] and ran == set(recorder.page_sections(tuple(fresh["pages"]))) - set(recorder.TABLES)


def test_the_comparison_sees_a_value_a_shape_and_a_line_that_changed(committed: dict):
    changed = copy.deepcopy(committed)
    tensors = [
        (section, value)
        for run in changed["runs"].values()
        for section in run["sections"].values()
        for step in section["steps"]
        for value in step["values"]
        if value["kind"] == "tensor"
        and isinstance(value.get("values"), list)
        and not isinstance(value["values"][0], list)
    ]
    section, value = next(t for t in tensors if 1e-3 < abs(t[1]["values"][0]) < 0.5)  # tolerance 1e-5 (and relative)
    value["values"][0] += 2e-5
    assert any("more than 1e-05 apart" in p for p in recorder.differences(committed, changed))
    value["values"][0] -= 2e-5 - 5e-6  # within the tolerance
    assert recorder.differences(committed, changed) == []
    value["shape"] = [*value["shape"], 1]
    section["lines"][0]["text"] = ["x = y  # (B, S)"]
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


def test_values_keep_an_exact_zero_apart_from_a_tiny_one():
    assert recorder._round(0.0) == 0.0 and recorder._round(-0.0) == 0.0
    assert recorder._round(3.2e-8) == pytest.approx(3.2e-8) and recorder._round(3.2e-8) != 0
    assert recorder._round(0.12345678) == 0.123457


def test_the_hook_marks_only_traced_excerpts_and_inlines_safe_json(committed: dict):
    ref = next(iter(committed["runs"]["sentence"]["sections"]))
    traced = stepper.traced_sections(committed)
    page = (
        f'Text.\n\n```{{.python notest title="a · b"}}\n--8<-- "{ref}"\n```\n\n'
        '```{.python notest}\n--8<-- "src/seq2seq_attention/model/scores.py:dot"\n```\n'
    )
    marked, refs = stepper.mark_fences(page, traced)
    assert refs == [ref]
    assert f'```{{.python notest title="a · b" data-stepper="{ref}"}}' in marked
    assert '```{.python notest}\n--8<-- "src/seq2seq_attention/model/scores.py:dot"' in marked
    assert stepper.mark_fences(marked, traced)[0] == marked  # marked once
    data = stepper.page_data(committed, refs, "../live.html")
    assert data["live"] == "../live.html" and all(set(run["sections"]) == {ref} for run in data["runs"].values())
    data["runs"]["sentence"]["sentences"][0]["source"] = "</script><b>"
    script = stepper.data_script(data)
    assert script.count("</script>") == 1 and "<b>" not in script
    inner = script.split(">", 1)[1].rsplit("<", 1)[0]
    assert json.loads(inner)["runs"]["sentence"]["sentences"][0]["source"] == "</script><b>"


# ---------------------------------------------------------------------------------------------------
# A broken trace stops the build with one line


def _planted(tmp_path: Path, text: str) -> tuple[SimpleNamespace, Path]:
    path = tmp_path / stepper.TRACE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return SimpleNamespace(docs_dir=str(tmp_path)), path


def _build_error(config: SimpleNamespace) -> str:
    with pytest.raises(PluginError) as caught:
        stepper.on_config(config)
    message = str(caught.value)
    assert "\n" not in message, message  # one line
    assert message.endswith(f"; re-create it with `{RERECORD}`"), message
    return message


def test_a_truncated_trace_stops_the_build_with_one_line(tmp_path: Path):
    text = recorder.TRACE_PATH.read_text(encoding="utf-8")
    config, path = _planted(tmp_path, text[: len(text) // 2])
    message = _build_error(config)
    assert message.startswith(f"{path}: (the file): expected a complete JSON document"), message


def _mistyped(tmp_path: Path, committed: dict, change) -> tuple[str, Path]:
    broken = copy.deepcopy(committed)
    change(broken)
    config, path = _planted(tmp_path, json.dumps(broken, ensure_ascii=False))
    return _build_error(config), path


def at(run: str, ref: str, step: int | None = None) -> str:
    """How the line names a run's section (and a step of it)."""
    return f'runs.{run}.sections["{ref}"]' + ("" if step is None else f".steps[{step}]")


def test_a_shape_that_is_a_string_stops_the_build_naming_the_entry(committed: dict, tmp_path: Path):
    def change(trace: dict) -> None:
        step = trace["runs"]["batch"]["sections"][MASKED_SOFTMAX]["steps"][2]
        step["values"][0]["shape"] = "(2, 1, 6)"

    message, path = _mistyped(tmp_path, committed, change)
    assert message.startswith(
        f"{path}: {at('batch', MASKED_SOFTMAX, 2)}.values[0].shape: expected a shape (a list of whole numbers), "
        "found str '(2, 1, 6)'"
    ), message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda t: t.update(version=1), "version: expected 2, found int 1"),
        (lambda t: t["runs"]["sentence"].pop("sections"), "runs.sentence.sections: expected an object, found none"),
        (
            lambda t: t["runs"]["free"]["sections"][LOOP]["steps"][0].update(line=999),
            f"{at('free', LOOP, 0)}.line: expected an index of the section's",
        ),
        (lambda t: t["runs"]["free"]["sections"][LOOP]["steps"][1].update(t="1"), f"{at('free', LOOP, 1)}.t: expected"),
        (
            lambda t: t["runs"]["training"]["training_step"]["grad_norms"].update(big="1e3"),
            "runs.training.training_step.grad_norms.big: expected a finite number, found str '1e3'",
        ),
        (
            lambda t: t["runs"]["training"]["passes"][0].update(chosen="i"),
            "runs.training.passes[0].chosen: expected a list of strings, found str 'i'",
        ),
        (
            lambda t: t["runs"]["sentence"]["sections"][MASKED_SOFTMAX]["steps"][1]["values"][0].update(kind="tensr"),
            f'{at("sentence", MASKED_SOFTMAX, 1)}.values[0].kind: expected one of "tensor", "module"',
        ),
        # issue 53: these were TypeError tracebacks in the build
        (lambda t: t["runs"]["free"].update(passes=3), "runs.free.passes: expected a list, found int 3"),
        (
            lambda t: t["runs"]["sentence"]["sections"][FORWARD_STEP]["steps"][TOP]["values"][TOP_VALUE].update(top=5),
            f"{at('sentence', FORWARD_STEP, TOP)}.values[{TOP_VALUE}].top: expected (rows of) [word, number] pairs",
        ),
    ],
    ids=[
        "version",
        "no-sections",
        "line-out-of-range",
        "t-string",
        "norm-string",
        "chosen-string",
        "kind",
        "passes-3",
        "top-5",
    ],  # fmt: skip
)
def test_each_mistyped_entry_is_named(committed: dict, tmp_path: Path, change, expected: str):
    message, path = _mistyped(tmp_path, committed, change)
    assert message.startswith(f"{path}: {expected}"), message


def test_a_bare_nan_in_a_tensor_stops_the_build(committed: dict, tmp_path: Path):
    """Issue 53: a bare NaN built, and the browser's JSON.parse then refused the page's trace (the stepper died). The
    recorder writes a non-finite value as the string "nan"; a bare one stops the build."""
    text = json.dumps(committed, ensure_ascii=False)
    number = re.compile(r'(?<="values": \[)-?[0-9.e-]+(?=[],])')  # a tensor's first value
    assert number.search(text)
    config, path = _planted(tmp_path, number.sub("NaN", text, count=1))
    message = _build_error(config)
    assert message.startswith(f"{path}: (the file): expected strict JSON (no NaN or Infinity), found NaN"), message
    config, path = _planted(tmp_path, number.sub("1e999", text, count=1))
    assert _build_error(config).startswith(f"{path}: (the file): expected numbers a float can hold, found 1e999")


def test_a_folder_where_the_trace_should_be_stops_the_build(tmp_path: Path):
    """Issue 53: a folder where a file the build reads should be was an IsADirectoryError traceback."""
    path = tmp_path / stepper.TRACE
    path.mkdir(parents=True)
    message = _build_error(SimpleNamespace(docs_dir=str(tmp_path)))
    assert message.startswith(f"{path}: (the file): expected a file, found a folder"), message


WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
"""JSON values that are none of: a list (a shape, letters), an integer (a line, a pass)."""


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), wrong=WRONG)
def test_any_mistyped_step_or_tensor_is_one_line_naming_its_entry(committed: dict, tmp_path: Path, data, wrong):
    broken = copy.deepcopy(committed)
    name = data.draw(st.sampled_from(sorted(broken["runs"])))
    ref = data.draw(st.sampled_from(sorted(broken["runs"][name]["sections"])))
    steps = broken["runs"][name]["sections"][ref]["steps"]
    n = data.draw(st.integers(0, len(steps) - 1))
    tensors = [index for index, value in enumerate(steps[n]["values"]) if value["kind"] == "tensor"]
    where = data.draw(st.sampled_from(["line", "t"] + (["shape", "dims"] if tensors else [])))
    if where in ("line", "t"):
        steps[n][where] = wrong
        place = f"{at(name, ref, n)}.{where}: expected "
    else:
        index = data.draw(st.sampled_from(tensors))
        steps[n]["values"][index][where] = wrong
        place = f"{at(name, ref, n)}.values[{index}].{where}: expected "
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(stepper.TraceError) as caught:
        stepper.load(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: {place}"), message
    assert message.endswith(f"re-create it with `{RERECORD}`"), message


def test_log_probabilities_are_shaded_by_likelihood(committed: dict):
    outputs = [
        value
        for run in ("free", "training")
        for step, text in steps_of(committed, run, "src/seq2seq_attention/model/decoders.py:after_loop")
        if text[0].startswith("decoder_outputs = F.log_softmax")
        for value in step["values"]
    ]
    assert len(outputs) == 2 and all(value["scale"] == "log" for value in outputs)
    assert all(pair[1] <= 0 for value in outputs for row in value["top"] for pair in row)
    logits = [
        v
        for s, _ in steps_of(committed, "sentence", "src/seq2seq_attention/model/decoders.py:forward_step")
        for v in s["values"]
        if "top" in v
    ]
    assert logits and not any("scale" in v for v in logits)  # logits: by magnitude


def test_no_trace_builds_without_steppers(tmp_path: Path):
    config = SimpleNamespace(docs_dir=str(tmp_path))
    assert stepper.on_config(config) is None and stepper.load(tmp_path / stepper.TRACE) is None


def test_every_line_by_line_page_has_a_stepper_for_every_excerpt(built_site, committed: dict):
    for page in recorder.PAGES:
        html = (built_site.root / page.removeprefix("docs/").replace(".md", ".html")).read_text(encoding="utf-8")
        assert f'id="{stepper.DATA_ID}"' in html
        for ref in recorder.page_sections((page,)):
            assert f'data-stepper="{ref}"' in html, f"{page}: the excerpt {ref} has no step-through"


def test_a_luong_run_shows_input_feeding_step_by_step(committed: dict):
    """Luong's decoder with input feeding (`luong`, untrained and said so): at every pass the GRU reads the token's
    embedding beside the fed vector, (B, 1, 2H), and the vector fed on is that step's attentional vector."""
    run = committed["runs"]["luong"]
    assert run["model"]["input_feeding"] is True and "input feeding" in run["title"] and "학습 전" in run["title"]
    steps = steps_of(committed, "luong", "src/seq2seq_attention/model/decoders.py:luong_step")
    H = run["model"]["hidden_size"]
    fed = [step for step, text in steps if text[0].startswith("embedded = torch.cat((embedded, state.feed)")]
    assert len(fed) == len(run["passes"]) and all(step["values"][0]["shape"] == [1, 1, 2 * H] for step in fed)
    made = {step["t"]: step["values"][0]["values"] for step, text in steps if text[0].startswith("attentional = ")}
    kept = {step["t"]: step["values"][0]["values"] for step, text in steps if text[0].startswith("feed = ")}
    assert made and kept == made  # h~_t, fed to step t + 1
    weights = [v for step, _ in steps for v in step["values"] if v["name"] == "attn_weights"]
    assert weights and all(v.get("scale") == "weights" for v in weights)
