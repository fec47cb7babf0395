"""What the live page's tests share: its two models, held-out sentences, PyTorch references.

The page computes with the weights of its `weights.bin` files (float16, and int8 with a float16 scale per row or per
block of columns, a few rows float16, where the export found the translations unchanged); the references here run the
PyTorch models with exactly those weights (`page_model`, read back by `read_weights`) through `search.py`'s greedy and
beam loops, one sentence at a time as the page does. `weights="float16"` gives the references of the ONNX graphs
(`half_precision`), which `test_live_parity.py` exports afresh.
"""

import functools
import json
import re
from pathlib import Path

import torch
from support import ROOT, tiny_translator

from seq2seq_attention import collate, load_checkpoint
from seq2seq_attention.model.search import beam_search_decode, greedy_search
from seq2seq_attention.model.tokens import EOS_IDX
from seq2seq_attention.translation.export import (
    WEIGHTS_NAME,
    half_precision,
    page_model,
    parity_sentences,
    recorded_scores,
)
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

LIVE = ROOT / "docs" / "assets" / "live"
CHECKPOINTS = {
    "bahdanau": PRETRAINED_DIR / "bahdanau",
    "luong": ROOT / "results" / "attention" / "checkpoints" / "luong-scaled_dot",
}
"""The page's two models: the packaged Bahdanau translator and the Luong (scaled dot) model of the comparison."""
WEIGHTS = {"bahdanau": LIVE / WEIGHTS_NAME, "luong": LIVE / "luong" / WEIGHTS_NAME}
"""Each model's weights file, as the page fetches it."""
PAGE_FILES = [WEIGHTS["bahdanau"], LIVE / "vocabularies.json", LIVE / "sentences.json", WEIGHTS["luong"]]
"""Every file the live page fetches besides the site's own pages, scripts and fonts."""
PARITY_COUNT = 80
"""The held-out sentences every parity check runs on (the export chose its int8 weights on the same ones)."""
TOP_K = 5
BEAM_SIZES = (1, 2, 3, 4, 5)


@functools.cache
def live_model(name: str, weights: str = "page"):
    """The model `name` as the page computes it (`weights="page"`: the weights of its `weights.bin`) or as the ONNX
    graphs do (`weights="float16"`: every weight rounded to float16), and its vocabularies."""
    checkpoint = load_checkpoint(CHECKPOINTS[name])
    if weights == "page":
        return page_model(checkpoint.model, WEIGHTS[name]), checkpoint.vocabs
    return half_precision(checkpoint.model), checkpoint.vocabs


def held_out_sentences(count: int = PARITY_COUNT) -> list[str]:
    """The first `count` distinct held-out French sentences (main split) whose words the vocabulary has."""
    known = parity_sentences(live_model("bahdanau")[1], count)
    assert len(known) == count
    return known


def encode(sentence: str) -> list[int]:
    return live_model("bahdanau")[1].source.encode(sentence)


def _state(model, ids: list[int]):
    batch = collate([(ids, [EOS_IDX])])
    encoder_outputs, encoder_hidden, mask = model.encode(batch.source, batch.lengths)  # (1, S, H), (1, 1, H)
    return model.decoder.init_state(encoder_outputs, encoder_hidden, mask)


def reference_greedy(name: str, ids: list[int], prefix: list[int] = (), weights: str = "page") -> dict:
    """PyTorch's greedy decoding of one sentence after the forced `prefix`: tokens, (T, V) logits, (T, S) weights,
    and the (T, S) raw scores e_tj that the attention gave before its softmax.

    Computed once per session for each input (test_live_parity.py and test_live_browser.py check the graphs and the
    page against the same references); the tensors are inference tensors, which no caller can change in place.
    """
    result = _reference_greedy(name, tuple(ids), tuple(prefix), weights)
    return {**result, "tokens": list(result["tokens"])}


@functools.cache
@torch.inference_mode()
def _reference_greedy(name: str, ids: tuple[int, ...], prefix: tuple[int, ...], weights: str) -> dict:
    model, _ = live_model(name, weights)
    forced = torch.tensor([list(prefix)], dtype=torch.long) if prefix else None  # (1, P)
    with recorded_scores() as scores:
        tokens, logits, weights, _ = greedy_search(model.decoder.forward_step, _state(model, list(ids)), prefix=forced)
    scores = torch.cat(scores, dim=1)[0]  # (T, S): one (1, 1, S) per step
    return {"tokens": tokens[0].tolist(), "logits": logits[0], "weights": weights[0], "scores": scores}


def reference_beam(name: str, ids: list[int], beam_size: int, weights: str = "page") -> tuple[list[int], float]:
    """`beam_search_decode` of one sentence: the chosen tokens (with `<eos>`) and their normalised score (once per
    session for each input, like `reference_greedy`)."""
    tokens, score = _reference_beam(name, tuple(ids), beam_size, weights)
    return list(tokens), score


@functools.cache
def _reference_beam(name: str, ids: tuple[int, ...], beam_size: int, weights: str) -> tuple[tuple[int, ...], float]:
    model, _ = live_model(name, weights)
    batch = collate([(list(ids), [EOS_IDX])])
    tokens, scores = beam_search_decode(model, batch.source, batch.lengths, beam_size=beam_size)  # (1, T), (1,)
    return tuple(tokens[0].tolist()), float(scores[0])


def forced_prefix(name: str, ids: list[int], weights: str = "page") -> list[int]:
    """A prefix the model would not produce itself: its greedy output up to the middle, then the runner-up word."""
    greedy = reference_greedy(name, ids, weights=weights)
    t = len(greedy["tokens"]) // 2
    runner_up = int(greedy["logits"][t].topk(2).indices[1])
    return greedy["tokens"][:t] + [runner_up]


def vocabularies_document() -> dict:
    return json.loads((LIVE / "vocabularies.json").read_text(encoding="utf-8"))


def stated_files() -> dict[str, dict[str, int]]:
    """The byte sizes the live page states for each loading phase (`data-first-files`, `data-luong-files`)."""
    page = (ROOT / "docs" / "live.md").read_text(encoding="utf-8")
    return {
        phase: json.loads(re.search(rf"data-{phase}-files='([^']*)'", page).group(1)) for phase in ("first", "luong")
    }


def checkpoint_with_max_words(path: Path, max_words: int) -> Path:
    """A small Bahdanau translator (H = 8, seeded, the packaged vocabularies) whose training config says `max_words`.

    Its vocabularies are the packaged model's, so that its export can stand in for the page's Bahdanau model
    beside the shipped Luong weights (which share them).
    """
    from seq2seq_attention import save_checkpoint

    vocabs = load_checkpoint(CHECKPOINTS["bahdanau"]).vocabs
    model = tiny_translator("bahdanau", vocabs)
    save_checkpoint(path, model, vocabs, training={"config": {"max_words": max_words, "split": "by_english"}})
    return path
