"""Attention beyond translation: the course notes' BiLSTM + Bahdanau attention sentiment classifier.

The attention module is the translator's `BahdanauAttention`, with a query of size 2H (the
final states of both directions) and keys of size 2H (the bidirectional outputs).
"""

from typing import Annotated

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int64
from torch import Tensor, nn

from .attention import BahdanauAttention
from .names import CLASSIFIER_KINDS
from .rules import MAX_SIZE, InputError, check_parameter_budget, echo, require
from .tensors import Dropout, Size, annotations_checked, lengths_to_mask, run_packed, within
from .tokens import PAD_IDX


class Classifier(nn.Module):
    """What both classifiers have: an embedding of one vocabulary, and the `config` a checkpoint saves."""

    embedding: nn.Embedding

    @property
    def vocabulary_sizes(self) -> dict[str, int]:
        """The vocabulary size the model was built for (checked against a checkpoint's vocabulary)."""
        return {"source": self.embedding.num_embeddings}


class SentimentClassifier(Classifier):
    """Embedding, two bidirectional LSTMs, Bahdanau attention, Dense(20, relu), Dropout, Dense(1).

    The query of the attention is the second LSTM's final states, forward and backward
    concatenated; the keys (and values) are its outputs at every position. Without attention
    (`use_attention=False`, the baseline) the concatenated final states go to the dense layer
    directly.

    Args:
        vocab_size: V.
        embedding_size: E (course notes: 128).
        hidden_size: H per direction (course notes: 64), so the outputs and the query have 2H.
        attention_size: the size of the tanh layer inside the attention (course notes: 64).
        dense_size: units of the relu layer (course notes: 20).
        dropout_p: dropout on the LSTMs' inputs and after the relu layer (course notes: 0.5).
        use_attention: False gives the baseline without attention.

    `forward` takes token indices padded on the right with `PAD_IDX` and the real lengths, each in
    [1, S]; it returns the score of "positive" before the sigmoid and the attention over the
    positions, exactly 0 on padding (None without attention).
    """

    @annotations_checked
    def __init__(
        self,
        vocab_size: Size,
        embedding_size: Size = 128,
        hidden_size: Size = 64,
        attention_size: Size = 64,
        dense_size: Size = 20,
        dropout_p: Dropout = 0.5,
        use_attention: bool = True,
    ) -> None:
        super().__init__()
        self.config: dict = {}  # set by `build_classifier`: what a checkpoint saves to rebuild the model
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

    @annotations_checked
    # --8<-- [start:forward]
    def forward(
        self, input: Int64[Tensor, "B S"], lengths: Int64[Tensor, " B"]
    ) -> tuple[Float[Tensor, " B"], Float[Tensor, "B S"] | None]:
        mask = lengths_to_mask(lengths.to(input.device), input.size(1))  # (B, S)

        embedded = self.embedding(input)  # (B, S, E)
        outputs1, _ = run_packed(self.lstm1, self.dropout(embedded), lengths)  # (B, S, 2H)
        outputs, (h_n, _) = run_packed(self.lstm2, self.dropout(outputs1), lengths)  # (B, S, 2H), (2, B, H)
        query = torch.cat([h_n[0], h_n[1]], dim=1)  # (B, 2H): forward and backward final states

        if self.attention is None:
            features, weights = query, None  # (B, 2H), None
        else:
            context, weights = self.attention(query.unsqueeze(1), outputs, mask)  # (B, 1, 2H), (B, 1, S)
            features, weights = context.squeeze(1), weights.squeeze(1)  # (B, 2H), (B, S)

        hidden = self.dropout(F.relu(self.dense(features)))  # (B, 20)
        logits = self.output(hidden).squeeze(1)  # (B,)
        return logits, weights

    # --8<-- [end:forward]


class MeanEmbeddingClassifier(Classifier):
    """The simplest baseline: the average of the real tokens' embeddings, Dense(relu), Dense(1).

    Args:
        vocab_size: V.
        embedding_size: E.
        dense_size: units of the relu layer.
        dropout_p: dropout after the relu layer.

    `forward` takes what `SentimentClassifier.forward` takes; its weights are always None (this model
    has no attention).
    """

    @annotations_checked
    def __init__(
        self, vocab_size: Size, embedding_size: Size = 128, dense_size: Size = 20, dropout_p: Dropout = 0.5
    ) -> None:
        super().__init__()
        self.config: dict = {}  # set by `build_classifier`
        self.embedding = nn.Embedding(vocab_size, embedding_size, padding_idx=PAD_IDX)
        self.dense = nn.Linear(embedding_size, dense_size)
        self.dropout = nn.Dropout(dropout_p)
        self.output = nn.Linear(dense_size, 1)

    @annotations_checked
    def forward(self, input: Int64[Tensor, "B S"], lengths: Int64[Tensor, " B"]) -> tuple[Float[Tensor, " B"], None]:
        lengths = lengths.to(input.device)
        mask = lengths_to_mask(lengths, input.size(1))  # (B, S)
        embedded = self.embedding(input) * mask.unsqueeze(2)  # (B, S, E), zero on padding
        mean = embedded.sum(dim=1) / lengths.unsqueeze(1)  # (B, E)
        hidden = self.dropout(F.relu(self.dense(mean)))  # (B, 20)
        return self.output(hidden).squeeze(1), None  # (B,)


@annotations_checked
def build_classifier(
    kind: str, vocab_size: Size, **options: Annotated[int | float, within(0, MAX_SIZE)]
) -> SentimentClassifier | MeanEmbeddingClassifier:
    """A classifier of the given kind (`CLASSIFIER_KINDS`) with the course notes' sizes unless overridden.

    The model's `config` (saved in checkpoints) records the kind, the vocabulary size and the options.

    Raises:
        InputError: an unknown kind, an option the kind does not take, a size outside [1, 2^20] or a dropout
            outside [0, 1).
    """
    require(kind in CLASSIFIER_KINDS, f"unknown classifier kind {echo(kind)}; choose from {list(CLASSIFIER_KINDS)}")
    sizes = {"embedding_size": 128, "hidden_size": 64, "attention_size": 64, "dense_size": 20, **options}
    E, H, A = sizes["embedding_size"], sizes["hidden_size"], sizes["attention_size"]
    check_parameter_budget(f"a {kind} classifier", vocab_size * E + 8 * H * (E + 3 * H) + 12 * H * A)
    try:
        if kind == "mean":
            model = MeanEmbeddingClassifier(vocab_size, **options)
        else:
            model = SentimentClassifier(vocab_size, **options, use_attention=kind == "attention")
    except TypeError as error:
        raise InputError(f"a {kind!r} classifier does not take {echo(sorted(options))}: {error}") from None
    model.config = {"task": "sentiment", "kind": kind, "vocab_size": vocab_size, **options}
    return model
