"""The corpus counts the course prose states, written to `results/corpus/counts.json`.

Usage:

    python scripts/corpus_counts.py           # write results/corpus/counts.json
    python scripts/corpus_counts.py --check   # compare a fresh count with the committed file, write nothing

The site renders these numbers (hooks/course_values.py) instead of typing them; tests/site/test_course_values.py
fails, naming this command, when the committed file no longer matches the bundled corpus and the split rules.
"""

import argparse
import json
import sys
from pathlib import Path

from seq2seq_attention.core.files import json_text, write_json
from seq2seq_attention.translation.corpus import (
    CORPUS_PATH,
    build_vocabularies,
    load_pairs,
    read_lines,
    split_pairs,
    target_overlap,
)

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "results" / "corpus" / "counts.json"
COMMAND = "python scripts/corpus_counts.py"


def counts() -> dict:
    """Every count, from the bundled corpus and the package's own filter, splits and vocabularies."""
    pairs = load_pairs()
    document: dict = {"command": COMMAND, "lines": sum(1 for _ in read_lines(CORPUS_PATH)), "pairs": len(pairs)}
    splits = {}
    for split in ("by_english", "by_french"):
        train, test = split_pairs(pairs, split)
        dev_train, dev = split_pairs(pairs, split, eval_split="dev")
        splits[split] = {
            "train": len(train),
            "test": len(test),
            "dev": len(dev),
            "train_without_dev": len(dev_train),
            "test_targets_in_train": sum(p.target in {q.target for q in train} for p in test),
            "target_overlap": target_overlap(train, test),
        }
    document["splits"] = splits
    vocabularies = {}
    for name, chosen in (("all_pairs", pairs), ("train_by_english", split_pairs(pairs)[0])):
        vocabs = build_vocabularies(chosen)
        vocabularies[name] = {"source_entries": len(vocabs.source), "target_entries": len(vocabs.target)}
    document["vocabularies"] = vocabularies
    return document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    arguments = parser.parse_args(argv)
    fresh = counts()
    if arguments.check:
        committed = json.loads(OUTPUT.read_text(encoding="utf-8"))
        if committed != fresh:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: re-create it with `{COMMAND}`", file=sys.stderr)
            return 1
        print(f"{OUTPUT.relative_to(ROOT)} matches the corpus")
        return 0
    write_json(OUTPUT, fresh)
    print(json_text(fresh))
    return 0


if __name__ == "__main__":
    sys.exit(main())
