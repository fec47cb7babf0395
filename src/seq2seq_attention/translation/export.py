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

The live page runs neither graph: it computes the encoder and the decoder step in plain JavaScript
(`docs/assets/live/model.js`) from `weights.bin`, which `export_weights` writes (one gzip-compressed file
per model: a JSON header naming each tensor, its shape and its encoding, then the tensors). A weight
matrix is stored as int8 with a float16 scale per row, or per block of 64, 32 or 16 columns of a row, where the
model's greedy and beam translations of the parity sentences stay those of the float16 model (`choose_encodings`,
the fewest scales that hold), as float16 elsewhere;
`read_weights` reads the file back into the PyTorch model, which is then exactly the page's model.
`seq2seq-attention export-weights --out DIR` writes it (with `vocabularies.json` and `sentences.json`),
beside `seq2seq-attention export-onnx`.
"""

import contextlib
import copy
import gzip
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
from ..core.files import EXPORT_FILES, WEIGHTS_NAMES, check_destination, staged_writes
from ..core.vocabulary import Vocabularies
from ..model import attention as attention_module
from ..model.decoders import DECODERS, DecoderState
from ..model.encoder import join_directions
from ..model.scores import SCORES
from ..model.search import MAX_LENGTH, beam_search_decode, greedy_decode
from ..model.seq2seq import Seq2Seq
from ..model.tokens import EOS_IDX, SOS_IDX
from .corpus import MAX_WORDS, load_pairs, split_pairs
from .translator import check_translator

IR_VERSION = 9
"""The newest ONNX IR version onnxruntime-web 1.17.3 reads (the runtime the live page used before `weights.bin`);
opset 20 fits it."""

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
    vocab_path.write_text(_vocabularies_json(vocabs, max_words), encoding="utf-8")


# --8<-- [end:write_export]


def _vocabularies_json(vocabs: Vocabularies, max_words: int) -> str:
    """vocabularies.json of an export: both word lists and the length limits the page applies."""
    document = {
        "source": vocabs.source.index2word,
        "target": vocabs.target.index2word,
        "max_length": MAX_LENGTH,
        "max_words": max_words,
    }
    return json.dumps(document, ensure_ascii=False, allow_nan=False)


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


WEIGHTS_NAME = WEIGHTS_NAMES[0]
"""The live page's file of one model's weights (`export_weights`); the page reads it with `model.js`."""

WEIGHTS_FORMAT = "seq2seq-attention/weights"
WEIGHTS_VERSION = 2
"""Version 2: an int8 matrix has a float16 scale per block of columns (version 1: a float32 scale per row)."""

PARITY_SENTENCES = 80
"""How many held-out sentences a weight's int8 encoding must leave translated as before (`choose_encodings`)."""

PARITY_BEAMS = (1, 2, 3, 4, 5)
"""The beam sizes whose results an int8 encoding must leave as they were (the live page offers these)."""

MIN_INT8 = 4096
"""Matrices with fewer entries stay float16: not worth a check."""


def parity_sentences(vocabs: Vocabularies, count: int = PARITY_SENTENCES, split: str = "by_english") -> list[str]:
    """The first `count` distinct held-out French sentences of `split` whose words the source vocabulary knows."""
    held_out = dict.fromkeys(pair.source for pair in split_pairs(load_pairs(), split)[1])
    known = [s for s in held_out if all(word in vocabs.source.word2index for word in s.split())]
    return known[:count]


def _translations(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str]) -> list[list[str]]:
    """The greedy translations of `sentences`, then those of beam search for each of `PARITY_BEAMS`."""
    return list(_each_translation(model, vocabs, sentences))


def _each_translation(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str]):
    """`_translations`, one search at a time (a caller that compares can stop at the first that differs)."""
    from ..core.batching import collate

    batch = collate([(vocabs.source.encode(sentence), [EOS_IDX]) for sentence in sentences])
    with torch.no_grad():
        for k in (None, *PARITY_BEAMS):
            if k is None:
                tokens = greedy_decode(model, batch.source, batch.lengths)[0]  # (B, T)
            else:
                tokens = beam_search_decode(model, batch.source, batch.lengths, beam_size=k)[0]  # (B, T)
            yield [vocabs.target.decode(row) for row in tokens.tolist()]


INT8_BLOCKS = (64, 32, 16)
"""The scale blocks `choose_encodings` tries after a whole row, widest first: columns that share one scale."""

ROWS_BLOCK = 64
"""The scale block of a matrix stored int8 with some rows kept float16 (`choose_encodings`' last try)."""

MAX_FLOAT16_ROWS = 16
"""The most rows of an int8 matrix kept float16; a matrix that needs more stays float16."""

MAX_CHANGED = 8
"""The most sentences whose translations a matrix's int8 may change for rows to be kept float16 in it: more is no
knife edge (the matrix stays float16, without a search)."""


def _int8_blocks(matrix: torch.Tensor, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(R, C) float to (R, C) int8 values and (R, C / block) float16-exact scales, one per `block` columns of a row:
    matrix ~ values * scales repeated over each block (largest magnitude of a block -> 127; an all-zero block keeps
    the scale 1)."""
    rows, columns = matrix.shape
    if block < 1 or columns % block:
        raise ValueError(f"a scale block of {block} columns does not divide a row of {columns}")
    blocks = matrix.float().reshape(rows, columns // block, block)  # (R, C/block, block)
    scales = (blocks.abs().amax(dim=2) / 127).half().float()  # (R, C/block), stored as float16
    scales = torch.where(scales > 0, scales, torch.ones_like(scales))
    values = torch.round(blocks / scales[..., None]).clamp(-127, 127).to(torch.int8)  # (R, C/block, block)
    return values.reshape(rows, columns), scales


def _dequantized(values: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """int8 values (R, C) times their block's scale (R, C / block): float32 products (what model.js computes)."""
    block = values.size(1) // scales.size(1)
    return values.float() * scales.repeat_interleave(block, dim=1)  # (R, C)


def _encoding_of(tensor: torch.Tensor, encoding: dict) -> torch.Tensor:
    """`tensor` as `encoding` stores it, back as float32."""
    half = tensor.detach().float().half().float()
    if encoding["encoding"] != "int8":
        return half
    stored = _dequantized(*_int8_blocks(tensor.detach(), encoding["block"]))
    rows = encoding.get("float16_rows", [])
    stored[rows] = half[rows]
    return stored


FLOAT16 = {"encoding": "float16"}


def choose_encodings(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str]) -> dict[str, dict]:
    """Each weight's encoding, the smallest of these that leaves the model's translations the float16 model's:

    - ``{"encoding": "int8", "block": b}``: one scale per row (b = the row's length), else per `b` columns of a row
      for b in `INT8_BLOCKS`;
    - ``{"encoding": "int8", "block": ROWS_BLOCK, "float16_rows": [...]}``: a few rows (at most `MAX_FLOAT16_ROWS`)
      kept float16 (the rows a knife-edge translation hangs on, such as the output rows of two near-tied words),
      found by halving on the sentences whose translations changed (`_float16_rows`; at most `MAX_CHANGED` of
      them), then checked on all;
    - ``{"encoding": "float16"}`` otherwise, and for vectors and small matrices.

    Matrices are tried largest first, one by one (cumulatively): the greedy translations of `sentences` and their
    beam search results for k in `PARITY_BEAMS` must be unchanged. `model` is not changed.
    """
    reference = half_precision(copy.deepcopy(model))
    trial = half_precision(copy.deepcopy(model))
    parameters = dict(trial.named_parameters())
    original = model.state_dict()  # quantized from the checkpoint's values, as `weights_bytes` writes them
    encodings = {name: FLOAT16 for name in trial.state_dict()}
    expected: dict[tuple[str, ...], list[list[str]]] = {}

    def changed(on: list[str]) -> list[str]:
        """The sentences of `on` whose translations differ from the float16 model's (stops at the first search that
        differs)."""
        key = tuple(on)
        if key not in expected:
            expected[key] = _translations(reference, vocabs, on)
        for found, wanted in zip(_each_translation(trial, vocabs, on), expected[key], strict=False):
            differ = [s for s, a, b in zip(on, found, wanted, strict=True) if a != b]
            if differ:
                return differ
        return []

    def holds(name: str, values: torch.Tensor, on: list[str]) -> bool:
        with torch.no_grad():
            parameters[name].copy_(values)
        return not changed(on)

    def with_float16_rows(name: str, half: torch.Tensor) -> dict | None:
        """int8 with a few rows float16 where that holds: rows found on the changed sentences, then checked on all
        (rows found on some sentences may change others: those are added and the rows searched again, twice)."""
        encoding = {"encoding": "int8", "block": ROWS_BLOCK}
        quantized = _encoding_of(original[name], encoding)
        with torch.no_grad():
            parameters[name].copy_(quantized)
        failing = changed(sentences)
        for _ in range(3 if len(failing) <= MAX_CHANGED else 0):
            kept = _float16_rows(
                lambda keep, on=failing: holds(name, torch.where(keep[:, None], half, quantized), on), half.size(0)
            )
            if kept is None:
                return None
            with torch.no_grad():
                parameters[name].copy_(_encoding_of(original[name], {**encoding, "float16_rows": kept}))
            more = [s for s in changed(sentences) if s not in failing]
            if not more:
                return {**encoding, "float16_rows": kept}
            failing = failing + more
        return None

    matrices = sorted((p.numel(), name) for name, p in parameters.items() if p.dim() == 2 and p.numel() >= MIN_INT8)
    for _, name in reversed(matrices):
        half = parameters[name].detach().clone()
        rows, columns = half.shape
        tried = [{"encoding": "int8", "block": b} for b in dict.fromkeys((columns, *INT8_BLOCKS)) if columns % b == 0]
        encodings[name] = next((e for e in tried if holds(name, _encoding_of(original[name], e), sentences)), FLOAT16)
        if encodings[name] is FLOAT16 and columns % ROWS_BLOCK == 0:
            encodings[name] = with_float16_rows(name, half) or FLOAT16
        with torch.no_grad():
            parameters[name].copy_(_encoding_of(original[name], encodings[name]))
    return encodings


def _float16_rows(holds, count: int) -> list[int] | None:
    """The rows to keep float16 so that `holds(keep)` (keep: a (count,) bool mask, True = float16), found by halving:
    a half of the rows still float16 is made int8 when `holds`, else split again; None when more than
    `MAX_FLOAT16_ROWS` rows would stay float16.

    Each accepted half is tested with exactly the rows then kept, so the last accepted test is the final mask."""
    keep = torch.ones(count, dtype=torch.bool)
    chunks, kept, accepted = [(0, count)], [], False
    while chunks:
        start, end = chunks.pop()
        keep[start:end] = False
        if holds(keep):
            accepted = True
            continue
        keep[start:end] = True
        if end - start == 1:
            kept.append(start)
            if len(kept) > MAX_FLOAT16_ROWS:
                return None
        else:
            middle = (start + end) // 2
            chunks += [(middle, end), (start, middle)]  # the first half next
    return sorted(kept) if accepted else None


def describe(model: Seq2Seq) -> dict:
    """What `model.js` needs to know of the architecture: decoder, score, sizes, directions, input feeding."""
    decoder = next(name for name, kind in DECODERS.items() if type(model.decoder) is kind.decoder)
    score = next(name for name, cls in SCORES.items() if type(model.decoder.attention) is cls)
    return {
        "decoder": decoder,
        "score": score,
        "hidden_size": model.decoder.hidden_size,
        "bidirectional": bool(model.encoder.bidirectional),
        "input_feeding": bool(model.decoder.input_feeding),
    }


def weights_bytes(model: Seq2Seq, encodings: dict[str, dict]) -> bytes:
    """The file `model.js` reads: gzip of (header length as uint32 LE, JSON header, the tensors one after another).

    Each tensor's header entry names it and gives its shape, its encoding and where its bytes start (`offset`):

    - ``"float16"``: its float16 values as two byte planes (every low byte, then every high byte: gzip finds the
      repeats of the high bytes);
    - ``"int8"`` (a matrix (R, C), with ``"block": b``): R * C int8 values, row by row, then R * C / b float16
      scales (little-endian), one per `b` columns of a row; value = int8 * its block's scale (a float32 product).
      With ``"float16_rows": [r, ...]`` the float16 values of those rows follow (little-endian, row by row) and
      replace the int8 ones.
    """
    tensors, parts, offset = [], [], 0
    for name, tensor in model.state_dict().items():
        encoding = encodings[name]
        if encoding["encoding"] == "int8":
            values, scales = _int8_blocks(tensor, encoding["block"])
            data = values.numpy().tobytes() + scales.numpy().astype("<f2").tobytes()
            data += tensor.float().numpy()[encoding.get("float16_rows", [])].astype("<f2").tobytes()
        else:
            half = np.frombuffer(tensor.float().numpy().astype("<f2").tobytes(), np.uint8).reshape(-1, 2)  # (N, 2)
            data = half[:, 0].tobytes() + half[:, 1].tobytes()
        tensors.append({"name": name, "shape": list(tensor.shape), **encoding, "offset": offset})
        parts.append(data)
        offset += len(data)
    header = {"format": WEIGHTS_FORMAT, "version": WEIGHTS_VERSION, "model": describe(model), "tensors": tensors}
    encoded = json.dumps(header, allow_nan=False).encode("utf-8")
    return gzip.compress(len(encoded).to_bytes(4, "little") + encoded + b"".join(parts), compresslevel=9, mtime=0)


def read_weights(path: str | Path) -> tuple[dict, dict[str, torch.Tensor]]:
    """The header of a `weights.bin` and its tensors as float32, by name (what `model.js` computes with).

    Raises:
        InputError: the file is not a weights file of this format's version (export it again).
    """
    data = gzip.decompress(Path(path).read_bytes())
    length = int.from_bytes(data[:4], "little")
    header = json.loads(data[4 : 4 + length].decode("utf-8"))
    if header.get("format") != WEIGHTS_FORMAT or header.get("version") != WEIGHTS_VERSION:
        raise InputError(
            f"{path} is not a {WEIGHTS_FORMAT} file of version {WEIGHTS_VERSION}; write it again with export-weights"
        )
    payload = memoryview(data)[4 + length :]
    tensors = {}
    for entry in header["tensors"]:
        shape, count = entry["shape"], int(np.prod(entry["shape"]))
        start = entry["offset"]
        if entry["encoding"] == "int8":
            rows, columns = shape
            values = np.frombuffer(payload, np.int8, count, start).reshape(shape)
            scales = np.frombuffer(payload, "<f2", count // entry["block"], start + count)
            scales = scales.astype(np.float32).reshape(rows, columns // entry["block"])
            tensor = _dequantized(torch.from_numpy(values.copy()), torch.from_numpy(scales))
            kept = entry.get("float16_rows", [])
            half = np.frombuffer(payload, "<f2", len(kept) * columns, start + count + 2 * (count // entry["block"]))
            tensor[kept] = torch.from_numpy(half.astype(np.float32).reshape(len(kept), columns))
        else:
            planes = np.frombuffer(payload, np.uint8, 2 * count, start).reshape(2, count)
            tensor = torch.from_numpy(planes.T.copy().view("<f2").astype(np.float32).reshape(shape))
        tensors[entry["name"]] = tensor
    return header, tensors


def page_model(model: Seq2Seq, path: str | Path) -> Seq2Seq:
    """`model` (in place; returned) with the weights of the `weights.bin` at `path`: the live page's model."""
    _, tensors = read_weights(path)
    model.load_state_dict(tensors)
    return model.eval()


def export_weights(
    model: Seq2Seq, vocabs: Vocabularies, out: str | Path, max_words: int = MAX_WORDS, split: str = "by_english"
) -> list[Path]:
    """Write `weights.bin`, `vocabularies.json` and `sentences.json` of a Bahdanau or Luong translator to `out`.

    The encodings are chosen on the held-out sentences of `split` (`choose_encodings`). The files land
    together or not at all (`core.files.staged_writes`). `model` is not changed.

    Raises:
        InputError: as `export_onnx` (a model without attention, a bad `out` or `max_words`, `out` holding
            something else than a weights export), or `split` is not a split's name.
    """
    check_translator(model, vocabs)
    if not is_int(max_words) or not 1 <= max_words <= MAX_SOURCE - 1:
        raise InputError(f"max_words must be an int from 1 to {MAX_SOURCE - 1}, got {echo(max_words)}")
    if model.decoder.attention is None:
        raise InputError("the live page draws attention weights; export a bahdanau or luong model")
    out = _check_out(out)
    check_destination(out, "a weights export", overwrite=True, what="out")
    sentences = parity_sentences(vocabs, split=split)
    encodings = choose_encodings(model, vocabs, sentences)
    with staged_writes(*(out / name for name in WEIGHTS_NAMES)) as (weights, vocabularies, _):
        weights.write_bytes(weights_bytes(model, encodings))
        vocabularies.write_text(_vocabularies_json(vocabs, max_words), encoding="utf-8")
        export_sentences(weights.parent, split)
    return [out / name for name in WEIGHTS_NAMES]
