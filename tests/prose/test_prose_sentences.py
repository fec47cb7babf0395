"""The French sentences the prose quotes as inputs are in the data (or marked new), and the translations it
attributes to a model are that model's output.

A quoted French sentence (in "…", “…”, `…` or a figure's alt text, outside fences and HTML) is a source
sentence of the filtered pairs, or its line says it is new ("새 문장", "데이터에 없", "어디에도 없"), or it is
on the short `NOT_INPUTS` list of quotes that are no input (with the reason). A translation the prose
attributes to a model, written ``FR -> EN`` (a figure's alt text; ``EN / EN`` for the models left to right)
or ``FR ... `EN`으로 옮깁니다``, is what a committed checkpoint produces by greedy decoding on CPU (unknown words read
as <unk>, as the sample table does): the packaged
ones (src/seq2seq_attention/pretrained/) and the comparison's seed-0 checkpoints (results/attention/checkpoints/).
"""

import re
from functools import cache
from pathlib import Path

import pytest
import torch
from markdown_it import MarkdownIt
from support import ROOT

from seq2seq_attention import load_checkpoint, load_pairs, split_pairs, translate
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))

QUOTE = re.compile(r'"([^"\n]{3,120})"|“([^”\n]{3,120})”|`([^`\n]{3,120})`|!\[([^\]\n]{3,120})\]')
FRENCH = re.compile(r"^(je|j|il|elle|nous|vous|tu|ils|elles|c|on|t)\s+[a-z ]*[a-z]\s[.!]$")
ENGLISH = r"[a-z][a-z ]*[a-z] [.!]"
ARROW = re.compile(rf"^(?P<source>.+?) -> (?P<outputs>{ENGLISH}(?: / {ENGLISH})*)$")
RENDERS = re.compile(rf"`(?P<output>{ENGLISH})`(?:으로|로) 옮")
NEW = ("새 문장", "데이터에 없", "어디에도 없")

NOT_INPUTS = {
    "live.md": {"je suis fatigue .": "the tokens a normalisation example ends with, not a claim about the data"},
}

MODELS = {
    "gru (packaged)": PRETRAINED_DIR / "gru",
    "bahdanau (packaged)": PRETRAINED_DIR / "bahdanau",
    "bahdanau-bi (packaged)": PRETRAINED_DIR / "bahdanau-bi",
    "bahdanau (comparison, H=128, seed 0)": ROOT / "results/attention/checkpoints/bahdanau",
    "luong (comparison, H=128, seed 0)": ROOT / "results/attention/checkpoints/luong",
}


def prose(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each prose paragraph: fences, indented code and HTML blocks out."""
    skipped: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block", "html_block") and token.map:
            skipped.update(range(*token.map))
    paragraphs: list[tuple[int, str]] = []
    start, lines = 0, []
    for index, line in enumerate([*text.splitlines(), ""]):
        if index in skipped or not line.strip():
            if lines:
                paragraphs.append((start + 1, " ".join(lines)))
            lines = []
            continue
        if not lines:
            start = index
        lines.append(line.strip())
    return paragraphs


def quoted(text: str):
    """(line number, line, quote) for every quote in the prose."""
    for number, line in prose(text):
        for match in QUOTE.finditer(line):
            yield number, line, next(group for group in match.groups() if group).strip()


def french_inputs(text: str) -> list[tuple[int, str, str]]:
    """(line, sentence, the line's text) for each quoted French sentence (the part before `->` of a mapping)."""
    found = []
    for number, line, quote in quoted(text):
        source = quote.split(" -> ")[0].strip()
        if FRENCH.match(source):
            found.append((number, source, line))
    return found


def attributions(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, French source, [English outputs]) for each translation the prose attributes to a model."""
    found = []
    for number, _line, quote in quoted(text):
        arrow = ARROW.match(quote)
        if arrow and FRENCH.match(arrow["source"]):
            found.append((number, arrow["source"], arrow["outputs"].split(" / ")))
    for number, line in prose(text):
        sources = [s for _, s, _ in french_inputs(line)]
        for match in RENDERS.finditer(line):
            before = [s for s in sources if line.find(s) < match.start()]
            if before:
                found.append((number, before[-1], [match["output"]]))
    return found


@cache
def sources() -> dict[str, set[str]]:
    """Every source sentence of the filtered pairs and the sides of the main split (by_english) it is on: the
    split keys on the English target, so one French sentence can be on both (with different targets)."""
    train, test = split_pairs(load_pairs())
    found: dict[str, set[str]] = {}
    for side, pairs in (("train", train), ("test", test)):
        for pair in pairs:
            found.setdefault(pair.source, set()).add(side)
    return found


@cache
def checkpoint(name: str):
    return load_checkpoint(MODELS[name], torch.device("cpu"))


@cache
def outputs(sentence: str) -> dict[str, str]:
    """Each committed checkpoint's greedy translation of `sentence` on CPU."""
    found = {}
    for name in MODELS:
        checkpoint_ = checkpoint(name)
        (found[name],) = translate(checkpoint_.model, checkpoint_.vocabs, [sentence], unknown="unk")
    return found


def input_problems(page: str, text: str) -> list[str]:
    problems = []
    for number, sentence, line in french_inputs(text):
        if sentence in sources() or any(marker in line for marker in NEW):
            continue
        if sentence in NOT_INPUTS.get(page, {}):
            continue
        problems.append(
            f"{page}:{number}: {sentence!r} is not a source sentence of the data; quote one, or mark it new"
        )
    return problems


def attribution_problems(page: str, text: str) -> list[str]:
    problems = []
    paragraphs = dict(prose(text))
    for number, sentence, claimed in attributions(text):
        produced = outputs(sentence)
        every = "세 모델 모두" in paragraphs.get(number, "")  # the three packaged models
        for english in claimed:
            if english not in produced.values():
                problems.append(
                    f"{page}:{number}: no committed model translates {sentence!r} as {english!r}: {produced}"
                )
            elif every and any(produced[name] != english for name in produced if "packaged" in name):
                problems.append(f"{page}:{number}: not every packaged model translates {sentence!r} as {english!r}")
    return problems


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_quoted_french_inputs_are_in_the_data_or_marked_new(path: Path):
    page = str(path.relative_to(DOCS))
    problems = input_problems(page, path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_translations_attributed_to_a_model_are_its_output(path: Path):
    page = str(path.relative_to(DOCS))
    problems = attribution_problems(page, path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_heatmap_figures_name_each_model_in_order():
    """The heatmap page's alt texts give the comparison's Bahdanau translation first (left), the dot-product one
    second (right): each is that model's output, not just some model's."""
    text = (DOCS / "attention/heatmaps.md").read_text(encoding="utf-8")
    figures = [a for a in attributions(text) if "](../assets/figures/attention/" in text.splitlines()[a[0] - 1]]
    assert len(figures) == 4
    for _, sentence, claimed in figures:
        produced = outputs(sentence)
        left = produced["bahdanau (comparison, H=128, seed 0)"]
        right = produced["luong (comparison, H=128, seed 0)"]
        assert claimed == ([left] if left == right else [left, right]), (sentence, claimed, produced)
    print({sentence: claimed for _, sentence, claimed in figures})


def test_the_checks_find_planted_sentences():
    planted = '모델은 "je suis un xylophoniste ."를 읽습니다.\n'
    assert input_problems("x.md", planted) == [
        "x.md:1: 'je suis un xylophoniste .' is not a source sentence of the data; quote one, or mark it new"
    ]
    assert input_problems("x.md", '"je suis un xylophoniste ."는 데이터에 없는 새 문장입니다.\n') == []
    assert input_problems("x.md", '"je suis malade ."\n') == []  # a test-split sentence
    wrong = "`je suis malade .`을 세 모델 모두 `i m happy .`으로 옮깁니다.\n"
    (problem,) = attribution_problems("x.md", wrong)
    assert problem.startswith("x.md:1: no committed model translates 'je suis malade .' as 'i m happy .'")
    assert attribution_problems("x.md", "![je suis malade . -> i m sick .](a.png)\n") == []
    assert attribution_problems("x.md", "![je suis malade . -> i m sick . / i am sad .](a.png)\n")
    assert not attribution_problems("x.md", "`je fais la fete .`를 바다나우는 `i m being promoted .`로 옮깁니다.\n")
    (problem,) = attribution_problems("x.md", "`je fais la fete .`를 세 모델 모두 `i m being promoted .`로 옮깁니다.\n")
    assert "not every packaged model" in problem
