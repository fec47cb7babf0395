"""Convert checkpoints of format version 1 (before the package was split by concern) to the current version.

    python scripts/convert_checkpoints.py DIR_OR_FILE [DIR_OR_FILE ...] [--out OUT]

Version 1 had two formats: translator directories (`checkpoint.json` + safetensors) and sentiment
classifiers as single `.safetensors` files with metadata. Version 2 is one directory format for
both: the config names its `task` (and a translator's attention `score`). The attention's layers
keep their version-1 names (`decoder.attention.Wa`), which are the current ones again (version 3).
The weights themselves are copied unchanged, so a converted model computes exactly what it did.
A translator directory is converted in place unless `--out` is given; a sentiment file becomes a
directory of the same name without `.safetensors` (or `--out`).
"""

import argparse
import json
from pathlib import Path

from safetensors import safe_open
from safetensors.torch import load_file

from seq2seq_attention import Vocabularies, Vocabulary, build_classifier, build_model, save_checkpoint

DEFAULT_SCORES = {"gru": None, "bahdanau": "additive", "luong": "dot"}


def rename(weights: dict) -> dict:
    """The version-1 tensors under their current names: every name is unchanged."""
    return dict(weights)


def convert_translator(directory: Path, out: Path) -> None:
    document = json.loads((directory / "checkpoint.json").read_text(encoding="utf-8"))
    if document.get("version") != 1:
        raise SystemExit(f"{directory}: version {document.get('version')}, expected 1")
    config = dict(document["config"])
    config.setdefault("score", DEFAULT_SCORES[config["decoder"]])
    model = build_model(**config)
    model.load_state_dict(rename(load_file(str(directory / document["files"]["model"]["name"]))))
    vocabs = Vocabularies(*(Vocabulary.from_dict(document["vocabularies"][side]) for side in ("source", "target")))
    training = dict(document.get("training") or {})
    training.pop("optimizer", None)  # version 1 packaged checkpoints keep no optimizer state
    save_checkpoint(out, model, vocabs, training=training)


def convert_classifier(path: Path, out: Path) -> None:
    with safe_open(str(path), framework="pt") as handle:
        metadata = handle.metadata()
    words = json.loads(metadata["vocab"])
    vocab = Vocabulary("words")
    for word in words[4:]:
        vocab.word2index[word] = len(vocab.index2word)
        vocab.index2word.append(word)
    model = build_classifier(metadata["kind"], len(vocab), **json.loads(metadata["config"]))
    model.load_state_dict(rename(load_file(str(path))))
    config = {"kind": metadata["kind"], "sources": json.loads(metadata["sources"])}
    save_checkpoint(out, model, Vocabularies(vocab), training={"config": config})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="version 1 checkpoint directories or sentiment files")
    parser.add_argument("--out", type=Path, default=None, help="where to write (only with one path)")
    args = parser.parse_args(argv)
    if args.out is not None and len(args.paths) != 1:
        parser.error("--out takes one path")
    for path in args.paths:
        if path.is_dir():
            convert_translator(path, args.out or path)
        else:
            convert_classifier(path, args.out or path.with_suffix(""))
            if args.out is None:
                path.unlink()
        print(f"converted {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
