"""Attention beyond translation: seed 004's BiLSTM + Bahdanau attention sentiment classifier.

The attention module is the translator's `BahdanauAttention`, with a query of size 2H (the
final states of both directions) and keys of size 2H (the bidirectional outputs).
"""

import copy
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from tqdm.auto import tqdm

from .attention import BahdanauAttention
from .checks import check_indices, check_module_device, check_same_device, check_tensor
from .errors import UserError
from .sentiment import SentimentData, Vocabulary, iterate_batches, lengths_to_mask
from .tokens import PAD_IDX, SPECIAL_TOKENS

CLASSIFIER_KINDS = ("attention", "bilstm", "mean")
"""`attention`: seed 004's model; `bilstm`: the same without attention; `mean`: averaged embeddings."""


def _check_inputs(module: nn.Module, input: torch.Tensor, lengths: torch.Tensor, vocab_size: int) -> dict[str, int]:
    sizes = check_tensor("input", input, ("B", "S"), dtype="long")
    check_indices("input", input, vocab_size)
    check_tensor("lengths", lengths, ("B",), sizes, dtype="long")
    if int(lengths.min()) < 1 or int(lengths.max()) > sizes["S"]:
        raise ValueError(f"lengths must lie in [1, S={sizes['S']}], got {lengths.tolist()}")
    check_module_device(module, check_same_device(input=input), "the inputs")
    return sizes


# --8<-- [start:run_lstm]
def run_lstm(
    lstm: nn.LSTM, inputs: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """Run a batch-first LSTM over packed sequences, so that it never reads padding.

    Shapes:
        inputs: (B, S, E).
        lengths: (B,) real lengths, on any device.
        outputs: (B, S, D*H), zero at padded positions (D = 2 for a bidirectional LSTM).
        h_n, c_n: (D, B, H), each direction's state after its last real token.
    """
    packed = pack_padded_sequence(inputs, lengths.cpu(), batch_first=True, enforce_sorted=False)
    packed_outputs, (h_n, c_n) = lstm(packed)  # h_n, c_n: (D, B, H)
    outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True, total_length=inputs.shape[1])  # (B, S, D*H)
    return outputs, (h_n, c_n)


# --8<-- [end:run_lstm]


class SentimentClassifier(nn.Module):
    """Embedding, two bidirectional LSTMs, Bahdanau attention, Dense(20, relu), Dropout, Dense(1).

    The query of the attention is the second LSTM's final states, forward and backward
    concatenated; the keys (and values) are its outputs at every position. Without attention
    (`use_attention=False`, the baseline) the concatenated final states go to the dense layer
    directly.

    Args:
        vocab_size: V.
        embedding_size: E (seed 004: 128).
        hidden_size: H per direction (seed 004: 64), so the outputs and the query have 2H.
        attention_size: the size of the tanh layer inside the attention (seed 004: 64).
        dense_size: units of the relu layer (seed 004: 20).
        dropout_p: dropout on the LSTMs' inputs and after the relu layer (seed 004: 0.5).
        use_attention: False gives the baseline without attention.

    Shapes:
        input: (B, S) token indices, padded on the right with `PAD_IDX`.
        lengths: (B,) long, the real lengths, each in [1, S].
        logits: (B,), the score of "positive" before the sigmoid.
        weights: (B, S), attention over the positions, exactly 0 on padding (None without attention).
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int = 128,
        hidden_size: int = 64,
        attention_size: int = 64,
        dense_size: int = 20,
        dropout_p: float = 0.5,
        use_attention: bool = True,
    ) -> None:
        super().__init__()
        self.config = {
            "vocab_size": vocab_size,
            "embedding_size": embedding_size,
            "hidden_size": hidden_size,
            "attention_size": attention_size,
            "dense_size": dense_size,
            "dropout_p": dropout_p,
            "use_attention": use_attention,
        }
        # --8<-- [start:init]
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=PAD_IDX)
        self.lstm1 = nn.LSTM(embedding_size, hidden_size, batch_first=True, bidirectional=True)
        self.lstm2 = nn.LSTM(2 * hidden_size, hidden_size, batch_first=True, bidirectional=True)
        self.attention = (
            BahdanauAttention(attention_size, query_size=2 * hidden_size, key_size=2 * hidden_size)
            if use_attention
            else None
        )
        self.dense = nn.Linear(2 * hidden_size, dense_size)
        self.dropout = nn.Dropout(dropout_p)
        self.output = nn.Linear(dense_size, 1)
        # --8<-- [end:init]

    # --8<-- [start:forward]
    def forward(self, input: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        sizes = _check_inputs(self, input, lengths, self.embedding.num_embeddings)
        mask = lengths_to_mask(lengths.to(input.device), sizes["S"])  # (B, S)

        embedded = self.embedding(input)  # (B, S, E)
        outputs1, _ = run_lstm(self.lstm1, self.dropout(embedded), lengths)  # (B, S, 2H)
        outputs, (h_n, _) = run_lstm(self.lstm2, self.dropout(outputs1), lengths)  # (B, S, 2H), (2, B, H)
        query = torch.cat([h_n[0], h_n[1]], dim=1)  # (B, 2H): forward and backward final states

        if self.attention is None:
            features, weights = query, None  # (B, 2H)
        else:
            context, weights = self.attention(query.unsqueeze(1), outputs, mask)  # (B, 1, 2H), (B, 1, S)
            features, weights = context.squeeze(1), weights.squeeze(1)  # (B, 2H), (B, S)

        hidden = self.dropout(F.relu(self.dense(features)))  # (B, 20)
        logits = self.output(hidden).squeeze(1)  # (B,)
        return logits, weights

    # --8<-- [end:forward]


class MeanEmbeddingClassifier(nn.Module):
    """The simplest baseline: the average of the real tokens' embeddings, Dense(relu), Dense(1).

    Args:
        vocab_size: V.
        embedding_size: E.
        dense_size: units of the relu layer.
        dropout_p: dropout after the relu layer.

    Shapes:
        input: (B, S) token indices, padded on the right with `PAD_IDX`.
        lengths: (B,) long, the real lengths, each in [1, S].
        logits: (B,); weights: always None (this model has no attention).
    """

    def __init__(self, vocab_size: int, embedding_size: int = 128, dense_size: int = 20, dropout_p: float = 0.5):
        super().__init__()
        self.config = {
            "vocab_size": vocab_size,
            "embedding_size": embedding_size,
            "dense_size": dense_size,
            "dropout_p": dropout_p,
        }
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=PAD_IDX)
        self.dense = nn.Linear(embedding_size, dense_size)
        self.dropout = nn.Dropout(dropout_p)
        self.output = nn.Linear(dense_size, 1)

    def forward(self, input: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, None]:
        sizes = _check_inputs(self, input, lengths, self.embedding.num_embeddings)
        lengths = lengths.to(input.device)
        mask = lengths_to_mask(lengths, sizes["S"])  # (B, S)
        embedded = self.embedding(input) * mask.unsqueeze(2)  # (B, S, E), zero on padding
        mean = embedded.sum(dim=1) / lengths.unsqueeze(1)  # (B, E)
        hidden = self.dropout(F.relu(self.dense(mean)))  # (B, 20)
        return self.output(hidden).squeeze(1), None  # (B,)


def build_classifier(kind: str, vocab_size: int, **options: object) -> nn.Module:
    """A classifier of the given kind (`CLASSIFIER_KINDS`) with the seed's sizes unless overridden."""
    if kind == "attention":
        return SentimentClassifier(vocab_size, **options)
    if kind == "bilstm":
        return SentimentClassifier(vocab_size, **options, use_attention=False)
    if kind == "mean":
        return MeanEmbeddingClassifier(vocab_size, **options)
    raise UserError(f"unknown classifier kind {kind!r}; choose from {list(CLASSIFIER_KINDS)}")


@torch.no_grad()
def predict(
    model: nn.Module, sequences: Sequence[Sequence[int]], batch_size: int = 256
) -> tuple[list[float], list[list[float]] | None]:
    """Probabilities of "positive" and, for the attention model, each sentence's attention weights.

    Runs in eval mode (no dropout) on the model's device and restores the previous mode.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    probs: list[float] = []
    weights: list[list[float]] = []
    for batch in iterate_batches(sequences, [0] * len(sequences), batch_size):
        batch = batch.to(device)
        logits, attn = model(batch.tokens, batch.lengths)  # (B,), (B, S) or None
        probs.extend(torch.sigmoid(logits).tolist())
        if attn is not None:
            weights.extend(row[:n].tolist() for row, n in zip(attn.cpu(), batch.lengths.tolist(), strict=True))
    model.train(was_training)
    return probs, (weights if weights else None)


def accuracy(model: nn.Module, sequences: Sequence[Sequence[int]], labels: Sequence[int]) -> float:
    """The share of sentences whose predicted label (probability >= 0.5) equals the true one."""
    if not sequences:
        raise UserError("cannot measure accuracy on an empty set")
    probs, _ = predict(model, sequences)
    return sum(int(p >= 0.5) == y for p, y in zip(probs, labels, strict=True)) / len(labels)


def train_classifier(
    model: nn.Module,
    data: SentimentData,
    epochs: int = 10,
    batch_size: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, float]]:
    """Adam on binary cross-entropy with logits; keeps the weights of the best validation epoch.

    The test split is never looked at here. After training the model holds the parameters of
    the epoch with the highest validation accuracy (the last epoch when there is no
    validation split).

    Returns:
        one record per epoch: ``epoch``, mean training ``loss``, ``valid_accuracy`` (or None).
    """
    if epochs < 1:
        raise UserError(f"epochs must be at least 1, got {epochs}")
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    history: list[dict[str, float]] = []
    best_accuracy, best_state = -1.0, None
    steps = -(-len(data.train) // batch_size)
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        batches = iterate_batches(data.train.ids, data.train.labels, batch_size, generator)
        bar = tqdm(batches, total=steps, desc=f"epoch {epoch}/{epochs}", disable=not progress, leave=False)
        for batch in bar:
            # --8<-- [start:train_step]
            batch = batch.to(device)
            logits, _ = model(batch.tokens, batch.lengths)  # (B,)
            loss = loss_fn(logits, batch.labels)  # BCEWithLogitsLoss: sigmoid and log in one stable step
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            # --8<-- [end:train_step]
            total += loss.item() * len(batch.labels)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        valid = accuracy(model, data.valid.ids, data.valid.labels) if len(data.valid) else None
        record = {"epoch": epoch, "loss": total / len(data.train), "valid_accuracy": valid}
        history.append(record)
        if log is not None:
            shown = "-" if valid is None else f"{valid:.3f}"
            log(f"epoch {epoch}: loss {record['loss']:.4f}, valid accuracy {shown}")
        if valid is None or valid > best_accuracy:
            best_accuracy, best_state = (valid or 0.0), copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return history


def save_classifier(path: Path, model: nn.Module, kind: str, vocab: Vocabulary, sources: Sequence[str]) -> None:
    """Write the weights to a safetensors file, with the kind, sizes, vocabulary and sources as metadata."""
    metadata = {
        "kind": kind,
        "config": json.dumps({k: v for k, v in model.config.items() if k not in ("vocab_size", "use_attention")}),
        "vocab": json.dumps(vocab.itos),
        "sources": json.dumps(list(sources)),
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().cpu().contiguous() for name, tensor in model.state_dict().items()}
    save_file(state, str(path), metadata=metadata)


def load_classifier(path: Path) -> tuple[nn.Module, Vocabulary, dict[str, object]]:
    """Read a checkpoint written by `save_classifier`; returns the model (CPU, eval mode), vocabulary and metadata.

    Raises:
        UserError: the file is missing or is not a classifier checkpoint.
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"checkpoint {path} does not exist")
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
        state = load_file(str(path))
        itos = json.loads(metadata["vocab"])
        kind = metadata["kind"]
        config = json.loads(metadata["config"])
        sources = json.loads(metadata["sources"])
    except (KeyError, json.JSONDecodeError, OSError, RuntimeError, SafetensorError) as error:
        raise UserError(f"{path} is not a sentiment classifier checkpoint ({error})") from error
    vocab = Vocabulary(itos[len(SPECIAL_TOKENS) :])
    model = build_classifier(kind, len(vocab), **config)
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise UserError(f"{path} does not match a {kind!r} classifier: {str(error).splitlines()[0]}") from error
    model.eval()
    return model, vocab, {"kind": kind, "config": config, "sources": sources}
