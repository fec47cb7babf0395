"""scripts/compare_attention.py: the sentence choice, the per-seed summary and the markdown table."""

import json
import re

import pytest
from support import ROOT, load_script

from seq2seq_attention.translation.corpus import Pair, build_vocabularies


@pytest.fixture(scope="module")
def compare():
    return load_script("compare_attention")


def run(decoder, seed, bleu, exact, peak=None):
    return {
        "decoder": decoder,
        "score": {"luong": "dot", "bahdanau": "additive"}.get(decoder),
        "seed": seed,
        "parameters": 100,
        "epochs": 30,
        "train_seconds": 10.0 + seed,
        "bleu": bleu,
        "bleu_interval": [bleu - 2, bleu + 2],
        "exact_match": exact,
        "bleu_signature": "sig",
        "attention": None if peak is None else {"mean_max_weight": peak},
    }


def test_heatmap_sentences_are_distinct_known_and_five_or_six_words(compare):
    train = [Pair("je suis tres tres fatigue .", "i m very tired ."), Pair("il est la .", "he s here .")]
    vocabs = build_vocabularies(train)
    test = [
        Pair("il est la .", "he s here ."),  # 4 words: too short
        Pair("je suis tres fatigue .", "i m very tired ."),
        Pair("je suis tres fatigue .", "i am very tired ."),  # the same French again
        Pair("je suis tres malade .", "i m very sick ."),  # 'malade' is unknown
        Pair("il est tres fatigue .", "he s very tired ."),
    ]
    chosen = compare.heatmap_sentences(test, vocabs, 5)
    assert [p.source for p in chosen] == ["je suis tres fatigue .", "il est tres fatigue ."]
    assert compare.heatmap_sentences(test, vocabs, 1) == chosen[:1]


def test_summary_is_the_mean_over_seeds_and_the_table_says_so(compare):
    runs = [run("luong", 0, 47.0, 0.30, 0.9), run("luong", 1, 49.0, 0.34, 0.8)]
    row = compare.summarise("luong", runs)
    assert row["bleu"] == 48.0 and row["bleu_per_seed"] == [47.0, 49.0]
    assert row["bleu_std"] == pytest.approx(1.41, abs=0.01)
    assert row["exact_match"] == pytest.approx(0.32)
    assert row["mean_max_weight"] == pytest.approx(0.85)
    assert row["score"] == "dot" and row["seeds"] == [0, 1]
    gru = compare.summarise("gru", [run("gru", 0, 45.0, 0.3), run("gru", 1, 46.0, 0.31)])
    assert "mean_max_weight" not in gru
    document = {
        "command": "python scripts/compare_attention.py --seeds 0 1",
        "machine": "test machine",
        "data": {"pairs": 3, "train": 2, "held_out": 1, "split": "by_english"},
        "settings": {"seeds": [0, 1]},
        "models": [gru, row],
    }
    table = compare.markdown(document)
    assert "| dot-product (Luong) | dot | 100 | 30 | 10 | 48.00 ± 1.41 | 45.0 – 49.0 | 0.320 ± 0.028 | 0.850 |" in table
    assert "| seq2seq (no attention) | - |" in table and "| - |" in table.splitlines()[2]
    assert "python scripts/compare_attention.py --seeds 0 1" in table
    assert "BLEU per seed: gru 45.00, 46.00; luong 47.00, 49.00." in table


def test_verdicts_are_the_one_rule(compare):
    row = {"difference_per_seed": [1.0, 2.0, 1.5], "p_value_per_seed": [0.01, 0.001, 0.02]}
    assert compare.verdict_text(row) == "better (p < 0.05 in 3 of 3 seeds)"
    assert compare.korean_verdict(row) == "나아짐 (p < 0.05인 시드 3/3)"
    mixed = {"difference_per_seed": [1.0, -2.0, 0.5], "p_value_per_seed": [0.01, 0.01, 0.01]}
    assert compare.verdict_text(mixed).startswith("tie")
    two = {"difference_per_seed": [1.0, 2.0, 1.5], "p_value_per_seed": [0.01, 0.3, 0.02]}
    assert compare.verdict_text(two).startswith("better") and "2/3" in compare.korean_verdict(two)
    one = {"difference_per_seed": [1.0, 2.0, 1.5], "p_value_per_seed": [0.01, 0.3, 0.2]}
    assert compare.korean_verdict(one).startswith("동률")


def test_the_committed_korean_tables_are_what_the_writers_make_of_results_json(compare):
    """results.ko.md (the chapter) and statistics.ko.md (the appendix) are regenerated, never edited by hand:
    `python scripts/compare_attention.py --tables-only` writes them from the committed results.json."""
    out = ROOT / "results" / "attention"
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    chapter = (out / "results.ko.md").read_text(encoding="utf-8")
    appendix = (out / "statistics.ko.md").read_text(encoding="utf-8")
    assert chapter == compare.korean(document)
    assert appendix == compare.korean_statistics(document)
    # the chapter reads in plain terms: means, values per seed, verdict words; the evidence is the appendix's
    assert not re.search(r"구간|bootstrap|\bp\b", chapter)
    assert "| 내적 (루옹) | 크기 조정 내적 (루옹) | +1.44, +4.45, +3.54 | +3.14 | 동률 |" in chapter
    assert "| 내적 (루옹) | 덧셈형 (바다나우) | +3.02, +4.86, +2.43 | +3.44 (+0.29 ~ +6.59) |" in appendix
