"""A number the prose states about a run, a model or the data is rendered from a committed file, not typed.

The pages write ``{{ bleu_bahdanau_packaged_h256_test }}`` (hooks/course_values.py names every value); the
mkdocs-macros plugin renders it at build time. This module lists every number in a page's prose that looks
measured (a decimal, or a count above 20; outside fences, inline code, links and HTML tags) and fails on one
that is neither rendered nor reviewed:

- `REVIEWED`: a short list of constants per page, each with the reason it is not a measurement (a value the
  code fixes, the page's own example size, a setting of the tutorial's loop);
- years (19xx, 20xx) anywhere.

A measurement that no committed file holds (an old timing, a one-off experiment) has no place in a lesson: say it
without the number, or leave it out.
"""

import re
from pathlib import Path

import course_values
import pytest
from markdown_it import MarkdownIt
from support import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if not p.relative_to(DOCS).parts[0] == "api")

NUMBER = re.compile(r"(?<![0-9A-Za-z_.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![0-9A-Za-z_])")
RENDERED = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
YEAR = re.compile(r"(19|20)\d\d")

REVIEWED: dict[str, dict[str, str]] = {
    "attention/results.md": {
        "1.0": "the gradient clipping threshold compare_attention.py fixes (not in its settings record)",
        "0.1": "the dropout compare_attention.py fixes (not in its settings record)",
        "100": "BLEU's scale (0 to 100)",
    },
    "attention/index.md": {
        "50": "the length of a made-up long sentence in the bottleneck argument",
        "30": "the length of a made-up sentence in the bottleneck argument",
    },
    "attention/scores.md": {"256": "the page's own example size (H = 256 in the saturation example)"},
    "attention/heatmaps.md": {"5.2": "the section of Bahdanau et al. (2015) the page cites (5.2.1, alignment)"},
    "bahdanau/decoder.md": {
        "0.05": "the tolerance a fence on the page uses",
        "128": "the hidden size of the packaged GRU recipe the page repeats (H=128, a setting)",
        "40": "the epochs of that recipe (a setting)",
    },
    "seq2seq/data.md": {"2.0": "the corpus licence, CC-BY 2.0 FR"},
    "seq2seq/training.md": {
        "1.0": "the default of TrainConfig.clip (the code fixes it)",
        "0.01": "the SGD learning rate of the tutorial's per-sentence loop (its setting)",
        "0.5": "the teacher-forcing ratio of the mixed recipe, an argument the page explains",
    },
    "appendix/index.md": {"95": "the level of a confidence interval (95%)"},
    "classifier/index.md": {
        "10,000": "the Keras setup's vocabulary size (a setting)",
        "500": "the Keras setup's review length, and the dataset's 500 sentences per label",
        "3,000": "the dataset's published size (three sources of 1,000 sentences)",
        "1,000": "the dataset's sentences per source",
        "4.0": "the dataset's licence, CC BY 4.0",
        "0085": "the code point U+0085",
    },
    "classifier/model.md": {"500": "the Keras recipe's review length"},
    "classifier/results.md": {
        "500": "the Keras recipe's review length",
        "30": "the page's own example size (a vocabulary of 30 in a fence)",
    },
    "performance/index.md": {
        "32": "the tutorial loop's batch (benchmarks/tutorial_loops.py) and the recipe's batch the page names",
        "256": "H of the benchmark models, and the batch of the hand-fused path the page describes",
        "0.01": "the SGD learning rate of the tutorial's per-sentence loop (its setting)",
        "30": "an evaluation time of the quality run (a setting)",
        "60": "an evaluation time of the quality run (a setting)",
        "120": "an evaluation time of the quality run (a setting)",
        "180": "an evaluation time of the quality run (a setting)",
        "240": "an evaluation time of the quality run (a setting)",
        "300": "the quality run's training time (a setting)",
        "600": "the pairs the per-sentence loop is timed on (a setting of benchmarks/run.py)",
    },
    "performance/profile.md": {"64": "the batch the profile uses (a setting of benchmarks/profile_trainer.py)"},
    "appendix/performance.md": {
        "32": "the packaged recipe's batch (a setting)",
        "64": "batch sizes the page names (settings)",
        "128": "a batch size on the sweep's axis",
        "256": "a batch size of the hand-fused experiment (a setting)",
        "0.1": "the default dropout of TrainConfig (the code fixes it)",
        "0.3": "the dropout the single-seed run tried (a setting)",
        "60": "a training budget of the tuning runs (a setting)",
        "300": "a training budget of the tuning runs (a setting)",
    },
    "performance/beam.md": {
        "32": "a batch size in an exercise's question",
        "64": "a batch size in an exercise's question",
        "0.6": "the page's own beam-search example probabilities",
        "0.5": "the page's own beam-search example probabilities",
        "0.4": "the page's own beam-search example probabilities",
        "0.3": "the page's own beam-search example (0.6 × 0.5)",
        "1.0": "the page's own beam-search example probabilities",
        "300": "the quality run's training time (a setting)",
        "4,853": "the training pairs in an exercise's question (its fence asserts them)",
        "4853": "the same count inside the exercise's formula",
    },
    "live.md": {
        "0.01": "the percentage below which the page's script writes a probability as a power of ten (live.js)",
        "127": "the largest int8 of the weights file (export._int8_blocks: a block divided so that its largest is 127)",
        "64": "a scale block of the weights file's int8 (export.INT8_BLOCKS)",
        "32": "a scale block of the weights file's int8 (export.INT8_BLOCKS)",
    },
    "appendix/live-measurements.md": {
        "80": "the held-out sentences the parity tests check (live_support.PARITY_COUNT, tests/site/test_live_*.py)",
        "390": "the narrow screen width the browser test sets (set_window_size(390, 900))",
    },
    "index.md": {
        "2.0": "the Tatoeba licence, CC-BY 2.0 FR",
        "4.0": "the sentiment data's licence, CC BY 4.0",
        "3.11": "the Python version the package requires (pyproject.toml's requires-python)",
    },
    "appendix/verification.md": {"0.5": "benchmarks/run.py's quiet-load threshold (a setting of the script)"},
    "references.md": {"2.0": "the Tatoeba licence, CC-BY 2.0 FR", "4.0": "the sentiment data's licence, CC BY 4.0"},
    "appendix/recipe.md": {
        "64": "a batch size the recipes set (an argument of the rows)",
        "60": "a CPU-time budget the recipes set (seconds)",
        "300": "a CPU-time budget the recipes set (seconds)",
        "70": "the epochs the cosine schedule is planned for (a setting of the rows)",
        "95": "the level of the intervals (95%)",
        "4.303": "Student's t quantile for three seeds (evaluate.T_975)",
    },
    "appendix/recipe-results.md": {
        "32": "a batch size the recipes set (an argument of the rows)",
        "64": "a batch size the recipes set (an argument of the rows)",
        "60": "a CPU-time budget the recipes set (seconds)",
        "300": "a CPU-time budget the recipes set (seconds)",
        "70": "the epochs the cosine schedule is planned for (a setting of the rows)",
        "0.3": "the baseline's dropout, a setting the rows change",
        "0.1": "dropout and label smoothing values the rows set",
        "0.002": "the learning rate the constant-schedule row fixes",
    },
    "appendix/recipe-structure.md": {
        "32": "a batch size the recipes set (an argument of the rows)",
        "64": "a batch size the recipes set (an argument of the rows)",
        "60": "a CPU-time budget the recipes set (seconds)",
        "300": "a CPU-time budget the recipes set (seconds)",
        "70": "the epochs the cosine schedule is planned for (a setting of the rows)",
        "0.1": "dropout and label smoothing values the rows set",
    },
    "appendix/recipe-final.md": {
        "32": "a batch size the recipes set (an argument of the rows)",
        "60": "a CPU-time budget the recipes set (seconds)",
        "300": "a CPU-time budget the recipes set (seconds)",
        "0.1": "dropout and label smoothing values the rows set",
        "95": "the level of the intervals (95%)",
        "0.05": "the significance level (evaluate.ALPHA)",
        "2.776": "Student's t quantile for five seeds (evaluate.T_975)",
        "38": "the BLEU target the final runs were set (a goal, not a measurement)",
        "30": "the BLEU target the 60-second final runs were set (a goal, not a measurement)",
    },
    "appendix/statistics.md": {
        "95": "the level of the intervals (95%)",
        "1,000": "the bootstrap's resamples, a setting of evaluate.py",
        "2.5": "the lower percentile of a 95% interval",
        "97.5": "the upper percentile of a 95% interval",
        "0.05": "the significance level (evaluate.ALPHA)",
        "0.975": "the quantile of a two-sided 95% t-interval",
        "4.303": "Student's t quantile for three seeds (evaluate.T_975)",
        "0.5": "the teacher-forcing ratio of the mixed recipe, an argument the page explains",
    },
}


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the prose: fences, indented code and HTML blocks out; inline code, link targets and
    tags blanked."""
    skipped: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block", "html_block") and token.map:
            skipped.update(range(*token.map))
    lines = []
    for index, line in enumerate(text.splitlines()):
        if index in skipped or line.lstrip().startswith("--8<--"):
            continue
        line = re.sub(r"`[^`]*`", " ", line)
        line = re.sub(r"\]\([^)]*\)", "]", line)
        line = re.sub(r"<[^>]+>", " ", line)
        lines.append((index + 1, line))
    return lines


def typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) for each number in the prose that looks measured: a decimal, or a whole number above 20."""
    found = []
    for number, line in prose_lines(text):
        line = RENDERED.sub(" ", line)
        for match in NUMBER.finditer(line):
            whole, fraction = match.group(1), match.group(2)
            if fraction or int(whole.replace(",", "")) > 20:
                if not fraction and YEAR.fullmatch(whole):
                    continue
                found.append((number, match.group(0)))
    return found


def unbound(page: str, text: str) -> list[str]:
    """What is wrong on one page: the typed numbers that are not reviewed."""
    reviewed = REVIEWED.get(page, {})
    problems = []
    for line, number in typed_numbers(text):
        if number in reviewed:
            continue
        problems.append(
            f"{page}:{line}: {number} is typed; render it from its file ({{{{ name }}}}, hooks/course_values.py) "
            "or, if it is a constant, add it to REVIEWED with the reason"
        )
    return problems


@pytest.fixture(scope="module")
def names() -> set[str]:
    return set(course_values.values())


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_prose_numbers_are_rendered_or_reviewed(path: Path):
    page = str(path.relative_to(DOCS))
    problems = unbound(page, path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_rendered_name_exists_and_no_other_template_syntax(path: Path, names):
    text = path.read_text(encoding="utf-8")
    unknown = sorted(set(RENDERED.findall(text)) - names)
    assert not unknown, f"{path.relative_to(DOCS)}: no value named {unknown} (hooks/course_values.py)"
    # mkdocs-macros renders every page with Jinja: a stray {% or {# in prose or a fence would break the build
    stray = [m.group(0) for m in re.finditer(r"\{[%#]|\{\{(?!\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\})", text)]
    assert not stray, f"{path.relative_to(DOCS)}: template syntax other than {{{{ name }}}}: {stray[:3]}"


def test_reviewed_names_only_pages_that_exist_and_every_entry_has_a_reason():
    assert set(REVIEWED) <= {str(p.relative_to(DOCS)) for p in PAGES}
    assert all(reason.strip() for page in REVIEWED.values() for reason in page.values())


@pytest.mark.parametrize("page", sorted(REVIEWED))
def test_every_reviewed_number_is_still_typed_on_its_page(page: str):
    typed = {number for _, number in typed_numbers((DOCS / page).read_text(encoding="utf-8"))}
    stale = sorted(set(REVIEWED[page]) - typed)
    assert not stale, f"{page}: {stale} reviewed but no longer typed there: remove them from REVIEWED"


def test_a_planted_typed_number_fails_and_rendered_reviewed_and_code_numbers_do_not():
    page = "seq2seq/evaluation.md"
    text = (DOCS / page).read_text(encoding="utf-8")
    assert not unbound(page, text)
    planted = text + "\n패키지의 바다나우 번역기는 BLEU 37.56을 얻습니다.\n"
    (problem,) = unbound(page, planted)
    assert problem.startswith(f"{page}:{len(planted.splitlines())}: 37.56 is typed; render it from its file"), problem
    count = text + "\n평가용 쌍은 465개입니다.\n"
    assert len(unbound(page, count)) == 1
    # the same value rendered, in code, a small count and a year pass
    fine = text + "\nBLEU {{ bleu_bahdanau_packaged_h256_test }}, `37.56`, 문장 6개, 2015년\n"
    fine += "\n```python\nx = 37.56\n```\n"
    assert not unbound(page, fine)
    # a reviewed constant passes on its own page only
    assert not unbound("seq2seq/training.md", "클리핑 1.0")
    assert unbound(page, text + "\n클리핑 1.0\n")


def test_korean_particles_do_not_hide_a_number():
    assert typed_numbers("필터를 거치면 5,318쌍이 남고 BLEU는 37.56입니다.") == [(1, "5,318"), (1, "37.56")]
    assert typed_numbers("[링크](../a/b-128.md), <span id='x-300'>, `4853`") == []
