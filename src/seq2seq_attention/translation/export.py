"""The packaged translator as ONNX, for the live page: an encoder graph and a decoder-step graph.

`export_onnx` writes `encoder.onnx` (tokens -> keys, first hidden state, projected keys),
`step.onnx` (token, hidden, keys, projected keys -> logits, next hidden, attention weights and the
raw scores e_tj before the softmax) and `vocabularies.json` (with the training data's length limit);
`export_sentences` writes `sentences.json`, the normalised French sentences
of the training and held-out split, so that the page can say which one a typed sentence is. The
weights are stored as float16 (cast back to float32 inside the graph), so the two graphs compute
exactly what `half_precision(model)` computes in PyTorch: the model with every weight rounded to
float16 and back. `GraphDecoder` puts the graphs behind the decoder's step interface, so that
`greedy_search` and `beam_search` decode with them.
"""

import contextlib
import json
import logging
import os
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from torch import nn

from ..core.checks import is_int
from ..core.errors import InputError, echo
from ..core.files import EXPORT_FILES, check_destination, staged_writes
from ..core.vocabulary import Vocabularies
from ..model import attention as attention_module
from ..model.decoders import DecoderState
from ..model.encoder import join_directions
from ..model.search import MAX_LENGTH
from ..model.seq2seq import Seq2Seq
from ..model.tokens import EOS_IDX, SOS_IDX
from .corpus import MAX_WORDS, load_pairs, split_pairs
from .translator import check_translator

IR_VERSION = 9
"""The newest ONNX IR version the vendored onnxruntime-web (1.17.3) reads; opset 20 fits it."""

SMALL = 64
"""Initializers with fewer elements stay float32: not worth a Cast node."""

MAX_SOURCE = 64
"""The longest source (tokens, `<eos>` included) the step graph takes."""


def half_precision(model: Seq2Seq) -> Seq2Seq:
    """The model with every floating-point weight rounded to float16 and back (in place; returned)."""
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(parameter.half().float())
    return model.eval()


class EncoderGraph(nn.Module):
    """One sentence, no padding: tokens (1, S) -> keys (1, S, H), hidden (1, 1, H), proj_keys (1, S, Hp)."""

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__()
        self.encoder, self.attention = model.encoder, model.decoder.attention

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        keys, hidden = self.encoder.gru(self.encoder.embedding(tokens))  # (1, S, H), (D, 1, H/D)
        hidden = join_directions(hidden)  # (1, 1, H)
        return keys, hidden, self.attention.project_keys(keys)  # proj_keys: (1, S, Hp), once per sentence


# --8<-- [start:step_graph]
@contextlib.contextmanager
def recorded_scores():
    """Within the block, every raw score tensor e_tj that an attention hands to `attend`, before its softmax.

    Yields the list the scores are appended to, one (B, T, S) tensor per attention call; every
    attention's `forward` ends in `attend(scores, keys, mask)`, so the decoders' code is left as it is
    (the recording `attend` is put back on exit).
    """
    attend = attention_module.attend
    scores: list[torch.Tensor] = []

    def recording(
        raw: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        scores.append(raw)  # e_tj as the attention computed it
        return attend(raw, keys, mask)  # the context and the weights, unchanged

    attention_module.attend = recording
    try:
        yield scores
    finally:
        attention_module.attend = attend


class StepGraph(nn.Module):
    """The decoder's `forward_step`: token (1, 1), hidden (1, 1, H), keys, proj_keys -> logits, next hidden, weights,
    and the raw scores e_tj (1, 1, S) whose softmax the weights are."""

    def __init__(self, model: Seq2Seq) -> None:
        super().__init__()
        self.decoder = model.decoder

    def forward(self, token, hidden, keys, proj_keys) -> tuple[torch.Tensor, ...]:
        with recorded_scores() as scores:
            logits, state, weights = self.decoder.forward_step(token, DecoderState(hidden, keys, None, proj_keys))
        return logits, state.hidden, weights, scores[0]  # (1, 1, V), (1, 1, H), (1, 1, S), (1, 1, S)


# --8<-- [end:step_graph]


@contextlib.contextmanager
def _quiet_exporter():
    """The exporters' known notes on a successful export (tracer, deprecation, torchvision), silenced; nothing else."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)  # "torchvision is not installed. Skipping torchvision::nms" and the like
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", FutureWarning)
        for message in (
            "Exporting a model to ONNX with a batch_size other than 1",
            "The tensor attributes",
            "# The axis name",
        ):
            warnings.filterwarnings("ignore", message=message, category=UserWarning)
        for message in ("You are using the legacy TorchScript-based ONNX export", "The feature will be removed"):
            warnings.filterwarnings("ignore", message=message, category=DeprecationWarning)
        try:
            yield
        finally:
            logger.setLevel(level)


def _store_half(path: Path, sizes: dict[str, int]) -> None:
    """Rewrite large float32 initializers as float16 plus a Cast back to float32 (exact: they are float16 values).

    The vocabulary sizes go into the graph's metadata, so that `GraphDecoder` can check token indices.
    """
    import onnx
    from onnx import helper, numpy_helper

    graph_model = onnx.load(str(path))
    graph = graph_model.graph
    casts = []
    for initializer in list(graph.initializer):
        if initializer.data_type != onnx.TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(initializer)
        if values.size < SMALL:
            continue
        half = values.astype(np.float16)
        if not np.array_equal(half.astype(np.float32), values):
            raise ValueError(f"initializer {initializer.name} is not float16-exact; call half_precision first")
        stored = numpy_helper.from_array(half, initializer.name + "_fp16")
        graph.initializer.remove(initializer)
        graph.initializer.append(stored)
        casts.append(helper.make_node("Cast", [stored.name], [initializer.name], to=onnx.TensorProto.FLOAT))
    for node in reversed(casts):
        graph.node.insert(0, node)
    for node in graph.node:  # names and notes of the exporter: bytes the page would download for nothing
        node.doc_string = ""
        del node.metadata_props[:]
    del graph_model.metadata_props[:]
    onnx.helper.set_model_props(graph_model, {name: str(size) for name, size in sizes.items()})
    graph_model.ir_version = min(graph_model.ir_version, IR_VERSION)
    onnx.checker.check_model(graph_model)
    onnx.save(graph_model, str(path))


def export_onnx(model: Seq2Seq, vocabs: Vocabularies, out: str | Path, max_words: int = MAX_WORDS) -> list[Path]:
    """Write `encoder.onnx`, `step.onnx` and `vocabularies.json` of a Bahdanau or Luong translator to `out`.

    The model is rounded to float16 first (`half_precision`, in place). The three files are
    written to a staging folder and renamed into `out` only when all three were written
    (`core.files.staged_writes`): a failure leaves a previous export as it was.
    `max_words` is the length limit of the model's training data (`Translator.max_words`):
    the page refuses longer sentences, as `translate` does.

    Raises:
        InputError: a decoder without attention (the page draws the attention weights), or
            `out` holds something else than an export (a checkpoint, a file, a folder named
            like one of the export's files), or `max_words` is not an int of at least 1.
    """
    check_translator(model, vocabs)
    if not is_int(max_words) or not 1 <= max_words <= MAX_SOURCE - 1:
        raise InputError(f"max_words must be an int from 1 to {MAX_SOURCE - 1}, got {echo(max_words)}")
    if model.decoder.attention is None:
        raise InputError("the live page draws attention weights; export a bahdanau or luong model")
    if model.decoder.input_feeding:
        raise InputError("the step graph carries no attentional vector; export a model trained without input feeding")
    out = _check_out(out)
    check_destination(out, "an ONNX export", overwrite=True, what="out")
    with staged_writes(*(out / name for name in EXPORT_FILES)) as staged, _quiet_exporter():
        _write_export(model, vocabs, max_words, *staged)
    for name in ("encoder.onnx", "step.onnx"):  # external data left by an older exporter
        (out / (name + ".data")).unlink(missing_ok=True)
    return [out / name for name in EXPORT_FILES]


def _check_out(out: object) -> Path:
    if not isinstance(out, str | os.PathLike) or isinstance(out, bytes) or out == "":
        raise InputError(f"out must be a directory name (str or Path), got {echo(out, 80)}")
    return Path(out)


# --8<-- [start:write_export]
def _write_export(
    model: Seq2Seq, vocabs: Vocabularies, max_words: int, encoder_path: Path, step_path: Path, vocab_path: Path
) -> None:
    model = half_precision(model)
    sentence = torch.tensor([[4, 5, 6, EOS_IDX]])  # (1, S): any tokens, the graphs take any S
    encoder_graph, step_graph = EncoderGraph(model).eval(), StepGraph(model).eval()  # no dropout in either
    keys, hidden, proj_keys = encoder_graph(sentence)
    length = torch.export.Dim("S", min=1, max=MAX_SOURCE)
    with torch.no_grad():
        # The TorchScript exporter writes the GRU as one ONNX GRU node that takes any S; torch.export
        # would unroll it for the example's length.
        torch.onnx.export(
            encoder_graph,
            (sentence,),
            encoder_path,
            input_names=["tokens"],
            output_names=["keys", "hidden", "proj_keys"],
            dynamo=False,
            dynamic_axes={"tokens": {1: "S"}, "keys": {1: "S"}, "proj_keys": {1: "S"}},
            opset_version=18,
        )
        # torch.export here: the TorchScript exporter miswrites this step's GRU (its output differed by 0.5).
        torch.onnx.export(
            step_graph,
            (torch.tensor([[SOS_IDX]]), hidden, keys, proj_keys),
            step_path,
            input_names=["token", "hidden", "keys", "proj_keys"],
            output_names=["logits", "next_hidden", "weights", "scores"],
            dynamo=True,
            dynamic_shapes={"token": None, "hidden": None, "keys": {1: length}, "proj_keys": {1: length}},
            verbose=False,
        )
    sizes = {"source_size": len(vocabs.source), "target_size": len(vocabs.target)}
    for path in (encoder_path, step_path):
        _store_half(path, sizes)
    model.eval()
    document = {
        "source": vocabs.source.index2word,
        "target": vocabs.target.index2word,
        "max_length": MAX_LENGTH,
        "max_words": max_words,
    }
    vocab_path.write_text(json.dumps(document, ensure_ascii=False, allow_nan=False), encoding="utf-8")


# --8<-- [end:write_export]


def export_sentences(out: str | Path, split: str = "by_english") -> Path:
    """Write `sentences.json`: the distinct normalised French sentences of each side of `split`, sorted.

    A French sentence can be on both sides (the main split keys on the English sentence, and
    several English sentences share a French one); the page calls such a sentence trained-on.

    Raises:
        InputError: `out` is not a directory name, `split` is not a split's name, or
            `out/sentences.json` is a directory.
    """
    path = _check_out(out) / "sentences.json"
    train, held_out = split_pairs(load_pairs(), split)
    document = {
        "split": split,
        "train": sorted({pair.source for pair in train}),
        "held_out": sorted({pair.source for pair in held_out}),
    }
    with staged_writes(path) as (staged,):
        staged.write_text(
            json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False), encoding="utf-8"
        )
    return path


class Session(Protocol):
    """What `GraphDecoder` uses of an `onnxruntime.InferenceSession`."""

    def run(self, output_names: None, feed: dict[str, np.ndarray]) -> list[np.ndarray]: ...

    def get_modelmeta(self) -> object: ...


class GraphDecoder:
    """The two exported graphs behind the decoder's step interface, so that `search.py` decodes with them.

    `init_state` runs the encoder graph on one sentence; `forward_step` runs the step graph once per
    row (the graph takes one sentence), so `greedy_search` and `beam_search` (which copies and
    reorders rows) drive the graphs exactly as they drive a `StepDecoder`. Token indices are
    checked against the vocabulary sizes the export wrote into the graphs' metadata before they
    reach onnxruntime (which would stop the process on an empty sentence, refuse an index past the
    vocabulary with its own error and silently read index -1 as the last row).

    Args:
        encoder: an onnxruntime session of `encoder.onnx`.
        step: an onnxruntime session of `step.onnx`.

    Attributes:
        scores: the raw scores e_tj (B, 1, S) of the last `forward_step`, whose softmax over S are its weights.
    """

    def __init__(self, encoder: Session, step: Session) -> None:
        self.encoder, self.step = encoder, step
        self.source_size = _vocabulary_size(encoder, "source_size")
        self.target_size = _vocabulary_size(step, "target_size")
        self.scores: torch.Tensor | None = None

    def init_state(self, tokens: list[int]) -> DecoderState:
        """The state of one encoded sentence: hidden (1, 1, H), keys (1, S, H), proj_keys (1, S, Hp).

        Raises:
            InputError: `tokens` is not a non-empty list of at most 64 source token indices.
        """
        _check_indices("tokens", tokens, self.source_size, "source")
        keys, hidden, proj_keys = self.encoder.run(None, {"tokens": np.array([list(tokens)], dtype=np.int64)})
        return DecoderState(torch.from_numpy(hidden), torch.from_numpy(keys), None, torch.from_numpy(proj_keys))

    def forward_step(self, input: torch.Tensor, state: DecoderState) -> tuple[torch.Tensor, DecoderState, torch.Tensor]:
        """(B, 1) tokens and the state to (B, 1, V) logits, the next state and (B, 1, S) weights.

        Raises:
            InputError: `input` is not a (B, 1) torch.long tensor of target token indices.
        """
        if not isinstance(input, torch.Tensor) or input.dtype != torch.long or input.dim() != 2 or input.size(1) != 1:
            raise InputError(f"input must be (B, 1) target token indices as torch.long, got {echo(input, 80)}")
        _check_indices("input", input.flatten().tolist(), self.target_size, "target", longest=None)
        rows = [
            self.step.run(
                None,
                {
                    "token": input[b : b + 1].numpy(),
                    "hidden": state.hidden[:, b : b + 1].numpy(),
                    "keys": state.keys[b : b + 1].numpy(),
                    "proj_keys": state.proj_keys[b : b + 1].numpy(),
                },
            )
            for b in range(input.size(0))
        ]
        logits = torch.from_numpy(np.concatenate([row[0] for row in rows]))  # (B, 1, V)
        hidden = torch.from_numpy(np.concatenate([row[1] for row in rows], axis=1))  # (1, B, H)
        weights = torch.from_numpy(np.concatenate([row[2] for row in rows]))  # (B, 1, S)
        self.scores = torch.from_numpy(np.concatenate([row[3] for row in rows]))  # (B, 1, S)
        return logits, replace(state, hidden=hidden), weights


def _vocabulary_size(session: Session, name: str) -> int:
    meta = session.get_modelmeta().custom_metadata_map
    if not str(meta.get(name, "")).isdigit():
        raise InputError(f"the graph has no {name} in its metadata; export it again with export-onnx")
    return int(meta[name])


def _check_indices(name: str, tokens: object, size: int, side: str, longest: int | None = MAX_SOURCE) -> None:
    if isinstance(tokens, torch.Tensor | np.ndarray):
        tokens = tokens.tolist()
    if not isinstance(tokens, list | tuple) or not all(is_int(token) for token in tokens):
        raise InputError(f"{name} must be a list of {side} token indices (ints), got {echo(tokens, 80)}")
    if not tokens or (longest is not None and len(tokens) > longest):
        raise InputError(
            f"{name} must hold 1 to {longest} token indices (a sentence ending in <eos>), got {len(tokens)}"
        )
    bad = [token for token in tokens if not 0 <= token < size]
    if bad:
        raise InputError(
            f"{name} must be {side} token indices from 0 to {size - 1} (the {side} vocabulary), got {echo(bad, 80)}"
        )
