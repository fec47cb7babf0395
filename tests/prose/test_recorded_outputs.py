"""Every recorded fence output teaches: labelled values, whole error messages, the glossary's words.

The outputs shown under the fences (docs/fence-runs.json, the CPU or device-free run) are read by a learner.
A line must not be

- only values: numbers, tuples, lists, True/False with no word saying what they are ("0.279 0.818 1.0");
- an echo of an assert: a True/False right after a shape or a number, with no label of its own ("(2, 5) True");
- in words the glossary rules out (a Hangul variant such as 에포크; "loss" or "epoch" as a label where the course
  says 손실, 에폭), an English verdict (better, worse, tie, significant) where the course says 나아짐, 나빠짐, 동률,
  or "seed 기준" for the tutorial's numbers.

And no fence prints an error message cut to a number of characters (``message[:40]``): it prints the message
whole, or its first sentence.
"""

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support import ROOT
from test_glossary import VARIANTS, variants_in

DOCS = ROOT / "docs"
RECORD = DOCS / "fence-runs.json"
HANGUL = re.compile(r"[가-힣]")
KOREAN_VARIANTS = {variant: term for variant, term in VARIANTS.items() if HANGUL.search(variant)}

_MARKS = r"[\s\d.,:;+\-=()\[\]{}'\"/<>|·×e]*"
VALUES_ONLY = re.compile(rf"{_MARKS}(?:(?:True|False|None|nan|inf){_MARKS})*")
ECHO = re.compile(r"(?:\)|\]|\d)\s+(?:True|False)\b")
ENGLISH_VERDICT = re.compile(r"\b(better|worse|tie|significant)\b")
ENGLISH_LABEL = re.compile(r"\b(loss|losses|epoch|epochs)\b")  # as a label; an identifier (test_loss) is one word
CUT = re.compile(r"\b(?:message|msg|error|err|text|str\([^)]*\))\s*\[\s*:\s*\d+\s*\]")


def outputs() -> list[tuple[str, int, str]]:
    """(page, fence number on the page, output) of every recorded CPU or device-free run."""
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    found = []
    for page, fences in record["pages"].items():
        for index, fence in enumerate(fences):
            run = fence["runs"].get("cpu") or fence["runs"].get("no-device")
            if run:
                found.append((page, index + 1, run["output"]))
    return found


def problems(output: str) -> list[str]:
    """What is wrong with one output, line by line."""
    found = []
    for number, line in enumerate(output.splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        if VALUES_ONLY.fullmatch(text):
            found.append(f"line {number} is only values, no label: {text[:80]!r}")
        elif ECHO.search(text):
            found.append(f"line {number} echoes an assert (True/False after a value, no label): {text[:80]!r}")
        for match in ENGLISH_VERDICT.finditer(text):
            found.append(f"line {number}: English verdict {match.group(1)!r} (write 나아짐, 나빠짐, 동률, 유의)")
        for match in ENGLISH_LABEL.finditer(text):
            found.append(f"line {number}: {match.group(1)!r} as a label (write 손실, 에폭: docs/glossary.md)")
        if "seed 기준" in text:
            found.append(f"line {number}: 'seed 기준' (say whose numbers: 튜토리얼의 값)")
    for number, word, term in variants_in(output, KOREAN_VARIANTS):
        found.append(f"line {number}: {word!r} -> write {term!r} (docs/glossary.md)")
    return found


@pytest.mark.parametrize("page", sorted({page for page, _, _ in outputs()}))
def test_recorded_outputs_teach(page: str):
    found = [
        f"{page} fence {index}: {problem}"
        for name, index, output in outputs()
        if name == page
        for problem in problems(output)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=lambda p: str(p.relative_to(DOCS)))
def test_no_fence_prints_a_cut_error_message(path: Path):
    text = path.read_text(encoding="utf-8")
    found = [
        f"{path.relative_to(DOCS)}:{token.map[0] + 1}: {match.group(0)!r} cuts a message; print it whole or its "
        "first sentence"
        for token in MarkdownIt("commonmark").parse(text)
        if token.type == "fence" and token.map
        for match in CUT.finditer(token.content)
    ]
    assert not found, "\n".join(found)


def test_the_checks_find_planted_outputs():
    assert problems("0.279 0.818 1.0") == ["line 1 is only values, no label: '0.279 0.818 1.0'"]
    assert problems("(2, 5) (2, 5) True")[0].startswith("line 1 is only values")
    assert problems("scores (2, 5) True") == [
        "line 1 echoes an assert (True/False after a value, no label): 'scores (2, 5) True'"
    ]
    assert problems("gru -> luong better")[0] == "line 1: English verdict 'better' (write 나아짐, 나빠짐, 동률, 유의)"
    assert problems("30 에포크 뒤 손실 0.5") == ["line 1: '에포크' -> write '에폭' (docs/glossary.md)"]
    assert problems("seed 기준 (2579, 1573)") == ["line 1: 'seed 기준' (say whose numbers: 튜토리얼의 값)"]
    assert problems("epoch 1 loss 2.5") == [
        "line 1: 'epoch' as a label (write 손실, 에폭: docs/glossary.md)",
        "line 1: 'loss' as a label (write 손실, 에폭: docs/glossary.md)",
    ]
    assert problems("최저 test_loss 1.9") == []  # an identifier
    # labelled values, a labelled comparison and code identifiers are fine
    assert problems("scores (B, T, S) = (2, 1, 5)\n모듈과 같다: True\n행 합 [1.0, 1.0]") == []
    assert CUT.search("print(tuple(context.shape), message[:40])")
    assert CUT.search("print(str(caught.value)[:50])")
    assert not CUT.search("print(str(caught.value).split('. ')[0])")
