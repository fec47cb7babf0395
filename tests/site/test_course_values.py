"""The values the prose renders (hooks/course_values.py): read strictly from committed files that are current.

Each kind of bad results file (missing, empty, truncated, not strict JSON, an entry missing, a value of the
wrong kind or out of range) is planted in a copy of the files and must stop the reading with one line that
names the file, the entry, what was expected and the command that re-creates the file; through the
mkdocs-macros hook the same line becomes the build's error. The corpus counts file must match a fresh count.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import course_values
import pytest
from course_values import COMMANDS, CORPUS, ResultsFileError, values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT

PACKAGED = [course_values.PACKAGED.format(name=name) for name in course_values.PACKAGED_MODELS]
RECIPES = sorted(
    str(path.relative_to(ROOT))
    for folder in (course_values.RECIPE, f"{course_values.RECIPE}/final")
    for path in (ROOT / folder).glob("*-seed*.json")
)
FILES = [name for name in COMMANDS if name.endswith(".json") and "{" not in name]  # every single file it reads
FILES += ["results/sentiment/checkpoints/all_attention/checkpoint.json", *PACKAGED, *RECIPES]
LIVE_FILES = [
    f"{course_values.LIVE}/{name}" for name in (*course_values.LIVE_FIRST_FILES, *course_values.LIVE_LUONG_FILES)
]
FILES += LIVE_FILES  # the live page's downloads, one of whose sizes the prose states


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A root holding copies of every file the values are read from."""
    for relative in FILES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / relative, tmp_path / relative)
    return tmp_path


def edit(root: Path, relative: str, change) -> None:
    path = root / relative
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def refused(root: Path) -> str:
    with pytest.raises(ResultsFileError) as caught:
        values(root)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_the_copies_read_like_the_repository(copy: Path):
    assert values(copy) == values()


def test_the_live_files_are_those_the_page_names():
    """The files checked are what `live.md` says it downloads before and after the first translation."""
    page = (ROOT / "docs" / "live.md").read_text(encoding="utf-8")
    named = {
        phase: [name.removeprefix("live/") for name in json.loads(re.search(rf"data-{phase}-files='([^']*)'", page)[1])]
        for phase in ("first", "luong")
    }
    assert named == {"first": list(course_values.LIVE_FIRST_FILES), "luong": list(course_values.LIVE_LUONG_FILES)}


def test_a_missing_or_empty_live_page_file(copy: Path):
    (copy / LIVE_FILES[0]).write_bytes(b"")
    assert refused(copy) == (
        f"{LIVE_FILES[0]}: (the file): expected a non-empty file, found 0 bytes; "
        f"re-create it with `{COMMANDS[course_values.LIVE]}`"
    )
    shutil.copyfile(ROOT / LIVE_FILES[0], copy / LIVE_FILES[0])
    (copy / LIVE_FILES[-1]).unlink()
    assert refused(copy) == (
        f"{LIVE_FILES[-1]}: (the file): expected a file, found none; re-create it with `{COMMANDS[course_values.LIVE]}`"
    )


def test_a_missing_file(copy: Path):
    (copy / CORPUS).unlink()
    assert refused(copy) == (
        f"{CORPUS}: (the file): expected a file, found none; re-create it with `{COMMANDS[CORPUS]}`"
    )


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("", "an empty file"),
        ('{"lines": 135842, "pairs": 53', "Expecting ',' delimiter"),
        ("{'lines': 1}", "Expecting property name enclosed in double quotes"),
    ],
    ids=["empty", "truncated", "malformed"],
)
def test_an_empty_truncated_or_malformed_file(copy: Path, text: str, found: str):
    (copy / CORPUS).write_text(text, encoding="utf-8")
    message = refused(copy)
    assert message.startswith(f"{CORPUS}: (the file): expected a complete JSON document, found {found}")
    assert message.endswith(f"re-create it with `{COMMANDS[CORPUS]}`")


def test_not_strict_json(copy: Path):
    path = copy / CORPUS
    path.write_text(path.read_text(encoding="utf-8").replace('"target_overlap": 0.0', '"target_overlap": NaN'))
    assert "expected strict JSON (no NaN or Infinity), found NaN" in refused(copy)


@pytest.mark.parametrize(
    ("relative", "change", "entry", "expected", "found"),
    [
        (CORPUS, lambda d: d.pop("pairs"), "pairs", "a whole number >= 0", "none"),
        (CORPUS, lambda d: d.update(pairs="5318"), "pairs", "a whole number >= 0", "str '5318'"),
        (CORPUS, lambda d: d.update(pairs=True), "pairs", "a whole number >= 0", "bool True"),
        (
            CORPUS,
            lambda d: d["splits"]["by_french"].update(target_overlap=60.6),
            "splits.by_french.target_overlap",
            "a number between 0 and 1",
            "float 60.6",
        ),
        (
            course_values.COMPARE,
            lambda d: d["models"][4].update(bleu="27.06"),
            "models[4].bleu",
            "a finite number",
            "str '27.06'",
        ),
        (
            course_values.COMPARE,
            lambda d: d["heatmaps"][0]["bahdanau"]["weights"][1].pop(),
            "heatmaps[0].bahdanau.weights[1]",
            "6 numbers (the source words and <eos>)",
            "a list of 5",
        ),
        (
            course_values.COMPARE,
            lambda d: d.update(models=d["models"][:2]),
            "models",
            "a model for each of",
            "a list of 2",
        ),
        (
            PACKAGED[0],
            lambda d: d["training"]["evaluation"].update(split="by_french"),
            "training.evaluation.split",
            "'by_english'",
            "str 'by_french'",
        ),
    ],
    ids=["missing-entry", "string", "bool", "out-of-range", "mistyped-bleu", "short-row", "missing-model", "split"],
)
def test_a_mistyped_entry(copy: Path, relative: str, change, entry: str, expected: str, found: str):
    edit(copy, relative, change)
    message = refused(copy)
    assert message.startswith(f"{relative}: {entry}: expected {expected}"), message
    assert f"found {found}" in message, message
    command = COMMANDS.get(relative) or COMMANDS[course_values.PACKAGED].format(name="bahdanau")
    if relative.startswith(course_values.RECIPE):
        command = COMMANDS[course_values.RECIPE]
    assert message.endswith(f"; re-create it with `{command}`"), message


QUALITY = "results/quality/baseline-seed0.json"
SENTIMENT_FIGURE = "figures.all.sentences[0].weights"


@pytest.mark.parametrize(
    ("relative", "change", "entry", "expected", "found"),
    [
        (course_values.PROFILE, lambda d: d.update(gemm_share=0), "gemm_share", "a number > 0 and <= 1", "int 0"),
        (
            course_values.SENTIMENT,
            lambda d: d["table"][0].update(test_size=0),
            "table[0].test_size",
            "a whole number >= 1 (the build divides by it)",
            "int 0",
        ),
        (QUALITY, lambda d: d.update(cpu_seconds=0), "cpu_seconds", "a number > 0 (the build divides by it)", "int 0"),
        (
            course_values.SENTIMENT,
            lambda d: d["figures"]["all"]["sentences"][0]["weights"].__setitem__(0, "0.1"),
            SENTIMENT_FIGURE + "[0]",
            "a number between 0 and 1",
            "str '0.1'",
        ),
        (
            course_values.SENTIMENT,
            lambda d: d["figures"]["all"]["sentences"][0]["weights"].pop(),
            SENTIMENT_FIGURE,
            "10 weights (one per word)",
            "a list of 9",
        ),
    ],
    ids=["zero-gemm-share", "zero-test-size", "zero-cpu-seconds", "weights-as-strings", "weights-short"],
)
def test_a_value_the_build_would_divide_by_or_compute_with_is_checked(copy, relative, change, entry, expected, found):
    """Issue 53: a zero the build divides by, or a list of strings where it sums numbers, was a ZeroDivisionError or
    a TypeError traceback; now it is the line."""
    test_a_mistyped_entry(copy, relative, change, entry, expected, found)


KINDS_OF_FILE = [f for f in FILES if f.endswith(".json") and "live" not in f and f not in RECIPES[1:-1]]
"""Each kind of file once (the recipe runs: one of the dev split's and one of the test split's)."""
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 0.0, -0.5, 1.5, 10**300, -(10**300), 1e308, "", "1", [], {}, ["x"], [[]]]),
    st.text(max_size=3),
)
"""What a hand-edited or damaged file may hold where a value was."""


def places(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value that holds a number, a string or a list (a tuple of keys and indices)."""
    found = [prefix] if prefix and not isinstance(value, dict) else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += places(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += places(item, (*prefix, index))
    return found


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), wrong=WRONG)
def test_any_value_changed_reads_or_stops_with_one_line(copy: Path, data, wrong):
    """Issue 53's hostile file, generalised: any one value of any file the build reads, replaced by a wrong one, gives
    the values or one `ResultsFileError` line, never another exception (a ZeroDivisionError, a TypeError, an
    OverflowError from formatting a huge number)."""
    relative = data.draw(st.sampled_from(KINDS_OF_FILE))
    path = copy / relative
    document = json.loads(path.read_text(encoding="utf-8"))
    place = data.draw(st.sampled_from(places(document)))
    parent = document
    for key in place[:-1]:
        parent = parent[key]
    parent[place[-1]] = wrong
    original = path.read_text(encoding="utf-8")
    path.write_text(json.dumps(document), encoding="utf-8")
    try:
        found = values(copy)
    except ResultsFileError as error:
        message = str(error)
        # the benchmark's split must be the corpus counts' by_french split: a changed count is the benchmark's line
        named = (relative, course_values.BENCHMARK) if relative == CORPUS else (relative,)
        assert "\n" not in message and message.startswith(tuple(f"{name}: " for name in named)), message
    else:
        assert all(isinstance(value, str) for value in found.values())
    finally:
        path.write_text(original, encoding="utf-8")


def test_a_count_with_thousands_of_digits(copy: Path):
    """Issue 53: a count past Python's digit limit was a ValueError traceback from the JSON parser."""
    path = copy / CORPUS
    path.write_text(path.read_text(encoding="utf-8").replace('"pairs": 5318', '"pairs": ' + "9" * 5000))
    assert refused(copy) == (
        f"{CORPUS}: (the file): expected numbers of at most 300 digits, found an integer of 5,000 digits; "
        f"re-create it with `{COMMANDS[CORPUS]}`"
    )


@pytest.mark.parametrize("relative", [CORPUS, QUALITY, LIVE_FILES[0]])
def test_a_results_file_replaced_by_a_folder(copy: Path, relative: str):
    """Issue 53: a folder where a results file should be was an IsADirectoryError traceback."""
    (copy / relative).unlink()
    (copy / relative).mkdir()
    message = refused(copy)
    assert message.startswith(f"{relative}: (the file): expected a file, found a folder; re-create it with `"), message


def test_a_missing_seed_of_a_recipe(copy: Path):
    (copy / course_values.RECIPE / "final" / "baseline-seed4.json").unlink()
    assert refused(copy) == (
        "results/quality/final/baseline-seed*.json: (the files): expected 5 seeds, found 4; re-create them with "
        f"`{COMMANDS[course_values.RECIPE + '/final']}`"
    )


def test_the_build_hook_turns_a_bad_file_into_the_build_error(copy: Path, monkeypatch: pytest.MonkeyPatch):
    from mkdocs.exceptions import PluginError

    (copy / CORPUS).write_text("{", encoding="utf-8")
    monkeypatch.setattr(course_values, "ROOT", copy)
    monkeypatch.setattr(course_values.values, "__defaults__", (copy,))

    class Env:
        variables: dict = {}

    with pytest.raises(PluginError, match=rf"^{CORPUS}: \(the file\): expected a complete JSON document"):
        course_values.define_env(Env())


@pytest.mark.slow
def test_the_corpus_counts_are_current():
    """results/corpus/counts.json is what scripts/corpus_counts.py counts now (else: re-run it)."""
    run = subprocess.run(
        [sys.executable, "scripts/corpus_counts.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr


def test_values_are_named_model_recipe_split():
    """Every BLEU value names its model, its recipe (compare_h128, packaged_h*, benchmark_300s, recipe_*) and its split
    (test: the main split's held-out pairs; dev: the development pairs carved from training; by_french: the leaky
    split)."""
    bleu = [name for name in values() if name.startswith(("bleu_", "diff_", "exact_"))]
    assert len(bleu) > 20
    for name in bleu:
        recipes = ("_compare_h128", "_packaged_h", "_benchmark_300s", "_recipe_", "_script_h")
        assert any(recipe in name for recipe in recipes), name
        assert name.endswith(("_test", "_dev", "_by_french")), name
        assert any(f"_{model}_" in name for model in ("gru", "luong", "bahdanau", "project", "tutorial")), name


def test_every_value_is_one_a_page_renders():
    """No value that no page shows (issue 50): each value `values()` derives is rendered by a page as ``{{ name }}``
    (the pages' unknown names are tests/prose/test_prose_numbers.py's)."""
    rendered = set()
    for page in (ROOT / "docs").rglob("*.md"):
        rendered |= set(re.findall(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}", page.read_text(encoding="utf-8")))
    unshown = sorted(set(values()) - rendered)
    assert not unshown, f"values no page renders (derive only what a page shows): {unshown}"


def test_the_heatmap_statistics_read_the_figures_weights():
    """The heatmap page's numbers: diagonal ±1, subject and verb of the comparison models, from the weights the
    figures were drawn from; the Bahdanau model spreads over the diagonal band more than the dot-product one, and
    neither looks at the verb."""
    found = values()
    assert float(found["diagonal_bahdanau_compare_h128_seed0_heatmaps"]) > float(
        found["diagonal_luong_compare_h128_seed0_heatmaps"]
    )
    assert float(found["verb_bahdanau_compare_h128_seed0_heatmaps"]) < 0.05
    statistics = course_values.alignment_statistics([[1.0, 0.0, 0.0], [0.0, 0.25, 0.75], [0.0, 0.0, 1.0]])
    assert statistics == {"diagonal": 1.0, "subject": 1.0, "verb": 0.25}


def test_the_intervals_are_the_packages_and_read_without_torch():
    """One statistics implementation: the build's intervals are `stats.seed_interval`'s, from a module that needs
    no torch (the site builds without it: torch is made unimportable here)."""
    from seq2seq_attention.stats import seed_interval

    assert course_values.seed_interval is seed_interval
    script = (
        "import sys; sys.modules['torch'] = sys.modules['numpy'] = None; sys.path.insert(0, 'hooks'); "
        "import course_values; print(course_values.values()['bleu_mean_bahdanau_recipe_baseline_h256_300s_3seeds_dev'])"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == values()["bleu_mean_bahdanau_recipe_baseline_h256_300s_3seeds_dev"]
