"""The values the prose renders (hooks/course_values.py): read strictly from committed files that are current.

Each kind of bad results file (missing, empty, truncated, not strict JSON, an entry missing, a value of the
wrong kind or out of range) is planted in a copy of the files and must stop the reading with one line that
names the file, the entry, what was expected and the command that re-creates the file; through the
mkdocs-macros hook the same line becomes the build's error. The corpus counts file must match a fresh count.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import course_values
import pytest
from course_values import COMMANDS, CORPUS, ResultsFileError, values
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
FILES += [course_values.LIVE_RUNTIME, *LIVE_FILES]  # the live page's downloads, whose sizes the prose states


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


def test_a_missing_or_empty_live_page_file(copy: Path):
    (copy / course_values.LIVE_RUNTIME).write_bytes(b"")
    assert refused(copy) == (
        f"{course_values.LIVE_RUNTIME}: (the file): expected a non-empty file, found 0 bytes; "
        f"re-create it with `{COMMANDS[course_values.LIVE_RUNTIME]}`"
    )
    shutil.copyfile(ROOT / course_values.LIVE_RUNTIME, copy / course_values.LIVE_RUNTIME)
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
        (CORPUS, lambda d: d.pop("pairs"), "pairs", "an object with the key 'pairs'", "an object with keys"),
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
            "none for",
        ),
        (
            PACKAGED[0],
            lambda d: d["training"]["evaluation"].update(split="by_french"),
            "training.evaluation.split",
            "'by_english'",
            "'by_french'",
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
    assert message.endswith(f"; re-create it with `{command}`"), message


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


def test_the_recipe_intervals_use_the_packages_t_quantiles():
    """The reader reads without torch, so it keeps its own two Student-t quantiles: they are the package's."""
    from seq2seq_attention.stats import t_975

    for degrees, quantile in course_values.T_975.items():
        assert quantile == t_975(degrees)
