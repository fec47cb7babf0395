"""The tutorial's own training loops (the notes' per-sentence loop and the PyTorch tutorial's batched one),
re-implemented faithfully for timing and for an equal-time comparison.

* `PerSentenceTrainer`: seed 001's loop. One pair per step, SGD (lr 0.01, one optimizer per
  module), teacher forcing, the encoder called once per source word and the decoder once per
  target word (a Python call per GRU step), the encoder outputs written into a zero
  (8, H) buffer, the loss summed over the target words. The decoder is the tutorial's
  Bahdanau decoder at batch 1 (the seed task with the Bahdanau decoder), keys re-projected at
  every step and the zero rows of the buffer attended to, as in the seed.
* `TutorialTrainer`: seed 000 / the PyTorch tutorial's batched loop. Every sentence padded to
  MAX_LENGTH, batches of 32 drawn at random, Adam 1e-3 (one optimizer per module), the decoder
  run for MAX_LENGTH steps with `Ua(keys)` recomputed at every step, no source mask, the loss
  over all MAX_LENGTH positions padding included (the tutorial's NLLLoss has no ignore_index).

Both use the project's vocabularies (`<pad>`=0, `<sos>`=1, `<eos>`=2) so that every contender
reads exactly the same index sequences.
"""

import torch
import torch.nn.functional as F
from torch import nn

from seq2seq_attention.model.tokens import EOS_IDX, PAD_IDX, SOS_IDX

MAX_LENGTH = 10
"""The tutorial's (and seed 000's) `MAX_LENGTH = 10`: sources and targets are padded to it and the decoder
runs this many steps (the longest sentence here has 7 indices with `<eos>`)."""

SEED_MAX_LENGTH = 8
"""Seed 001's `MAX_LENGTH = 6 + 2`: the rows of its zero `encoder_outputs` buffer (the attention reads all of them)."""


class TutorialEncoder(nn.Module):
    """The tutorial's encoder: embedding, dropout, GRU, no packing."""

    def __init__(self, input_size: int, hidden_size: int, dropout_p: float = 0.1) -> None:
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedded = self.dropout(self.embedding(input))  # (B, S, H)
        return self.gru(embedded)  # (B, S, H), (1, B, H)


class TutorialAttention(nn.Module):
    """The tutorial's BahdanauAttention: `Ua(keys)` inside forward, no mask."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))  # (B, S, 1): keys projected again
        scores = scores.squeeze(2).unsqueeze(1)  # (B, 1, S)
        weights = F.softmax(scores, dim=-1)  # (B, 1, S)
        context = torch.bmm(weights, keys)  # (B, 1, H)
        return context, weights


class TutorialAttnDecoder(nn.Module):
    """The tutorial's AttnDecoderRNN: a Python loop over MAX_LENGTH steps (or T with a target)."""

    def __init__(self, hidden_size: int, output_size: int, dropout_p: float = 0.1) -> None:
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = TutorialAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward_step(
        self, input: torch.Tensor, hidden: torch.Tensor, encoder_outputs: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        embedded = self.dropout(self.embedding(input))  # (B, 1, H)
        query = hidden.permute(1, 0, 2)  # (B, 1, H)
        context, _ = self.attention(query, encoder_outputs)  # (B, 1, H)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)  # (B, 1, H), (1, B, H)
        return self.out(output), hidden  # (B, 1, V), (1, B, H)

    def forward(
        self, encoder_outputs: torch.Tensor, encoder_hidden: torch.Tensor, target: torch.Tensor | None = None
    ) -> torch.Tensor:
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.full((batch_size, 1), SOS_IDX, dtype=torch.long)  # (B, 1)
        hidden = encoder_hidden  # (1, B, H)
        outputs = []
        for i in range(MAX_LENGTH if target is None else target.size(1)):
            output, hidden = self.forward_step(decoder_input, hidden, encoder_outputs)  # (B, 1, V)
            outputs.append(output)
            if target is not None:
                decoder_input = target[:, i].unsqueeze(1)  # (B, 1): teacher forcing
            else:
                decoder_input = output.argmax(-1).detach()  # (B, 1)
        return F.log_softmax(torch.cat(outputs, dim=1), dim=-1)  # (B, T, V)


def pad_to_max_length(sequences: list[list[int]]) -> torch.Tensor:
    """The tutorial's `np.zeros((n, MAX_LENGTH))` batches: every sequence padded (or cut) to MAX_LENGTH."""
    padded = torch.full((len(sequences), MAX_LENGTH), PAD_IDX, dtype=torch.long)  # (N, MAX_LENGTH)
    for row, sequence in enumerate(sequences):
        sequence = sequence[:MAX_LENGTH]
        padded[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
    return padded


class TutorialTrainer:
    """Seed 000 / the PyTorch tutorial: padded batches of 32, Adam 1e-3, NLLLoss over every position.

    Args:
        examples: (source indices, target indices) pairs, each ending in `<eos>`.
        src_vocab_size, tgt_vocab_size: V_src and V.
        hidden_size: H.
        batch_size: 32 in the tutorial.
        learning_rate: 1e-3 in the tutorial.
        seed: seeds the weights and the batch order.
    """

    def __init__(
        self,
        examples: list[tuple[list[int], list[int]]],
        src_vocab_size: int,
        tgt_vocab_size: int,
        hidden_size: int = 256,
        batch_size: int = 32,
        learning_rate: float = 1e-3,
        seed: int = 0,
    ) -> None:
        torch.manual_seed(seed)
        self.encoder = TutorialEncoder(src_vocab_size, hidden_size)
        self.decoder = TutorialAttnDecoder(hidden_size, tgt_vocab_size)
        self.encoder_optimizer = torch.optim.Adam(self.encoder.parameters(), lr=learning_rate)
        self.decoder_optimizer = torch.optim.Adam(self.decoder.parameters(), lr=learning_rate)
        self.criterion = nn.NLLLoss()
        self.sources = pad_to_max_length([s for s, _ in examples])  # (N, MAX_LENGTH)
        self.targets = pad_to_max_length([t for _, t in examples])  # (N, MAX_LENGTH)
        self.batch_size = batch_size
        self.generator = torch.Generator().manual_seed(seed)

    def batches(self) -> list[torch.Tensor]:
        """Index tensors of one epoch's batches (a `RandomSampler` order)."""
        order = torch.randperm(len(self.sources), generator=self.generator)
        return list(order.split(self.batch_size))

    def step(self, indices: torch.Tensor) -> float:
        """One optimisation step on the pairs `indices`; returns the loss."""
        self.encoder.train()
        self.decoder.train()
        source, target = self.sources[indices], self.targets[indices]  # (B, MAX_LENGTH) each
        self.encoder_optimizer.zero_grad()
        self.decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = self.encoder(source)  # (B, MAX_LENGTH, H), (1, B, H)
        log_probs = self.decoder(encoder_outputs, encoder_hidden, target)  # (B, MAX_LENGTH, V)
        loss = self.criterion(log_probs.flatten(0, 1), target.flatten())
        loss.backward()
        self.encoder_optimizer.step()
        self.decoder_optimizer.step()
        return loss.item()

    def epoch(self) -> float:
        """One pass over the pairs; returns the mean batch loss."""
        losses = [self.step(indices) for indices in self.batches()]
        return sum(losses) / len(losses)

    @torch.inference_mode()
    def translate(self, sources: list[list[int]], batch_size: int = 256) -> list[list[int]]:
        """Greedy translations (index lists cut at `<eos>`), sources padded to MAX_LENGTH as in training."""
        self.encoder.eval()
        self.decoder.eval()
        results = []
        for start in range(0, len(sources), batch_size):
            source = pad_to_max_length(sources[start : start + batch_size])  # (B, MAX_LENGTH)
            encoder_outputs, encoder_hidden = self.encoder(source)
            tokens = self.decoder(encoder_outputs, encoder_hidden).argmax(-1)  # (B, MAX_LENGTH)
            for row in tokens.tolist():
                results.append(row[: row.index(EOS_IDX)] if EOS_IDX in row else row)
        return results


class SeedEncoder(nn.Module):
    """Seed 001's EncoderRNN: one word per call, (1, 1, H) in and out."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, input: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedded = self.embedding(input).view(1, 1, -1)  # (1, 1, H)
        return self.gru(embedded, hidden)  # (1, 1, H), (1, 1, H)

    def init_hidden(self) -> torch.Tensor:
        return torch.zeros(1, 1, self.hidden_size)


class PerSentenceTrainer:
    """Seed 001's loop with the Bahdanau decoder: one pair per SGD step, a Python call per word.

    Args:
        examples: (source indices, target indices) pairs, each ending in `<eos>`.
        src_vocab_size, tgt_vocab_size: V_src and V.
        hidden_size: H (256 in the seed).
        learning_rate: SGD's step size (0.01 in the seed).
        seed: seeds the weights.
    """

    def __init__(
        self,
        examples: list[tuple[list[int], list[int]]],
        src_vocab_size: int,
        tgt_vocab_size: int,
        hidden_size: int = 256,
        learning_rate: float = 0.01,
        seed: int = 0,
    ) -> None:
        torch.manual_seed(seed)
        self.hidden_size = hidden_size
        self.encoder = SeedEncoder(src_vocab_size, hidden_size)
        self.decoder = TutorialAttnDecoder(hidden_size, tgt_vocab_size)
        self.encoder_optimizer = torch.optim.SGD(self.encoder.parameters(), lr=learning_rate)
        self.decoder_optimizer = torch.optim.SGD(self.decoder.parameters(), lr=learning_rate)
        self.criterion = nn.NLLLoss()
        self.pairs = [
            (torch.tensor(s[:SEED_MAX_LENGTH]).view(-1, 1), torch.tensor(t).view(-1, 1)) for s, t in examples
        ]  # the seed's (L, 1) tensors

    def step(self, index: int) -> float:
        """Seed 001's `train(...)` on pair `index`; returns the loss per target word."""
        self.encoder.train()
        self.decoder.train()
        input_tensor, target_tensor = self.pairs[index]
        self.encoder_optimizer.zero_grad()
        self.decoder_optimizer.zero_grad()
        encoder_hidden = self.encoder.init_hidden()  # (1, 1, H)
        encoder_outputs = torch.zeros(SEED_MAX_LENGTH, self.hidden_size)  # (8, H)
        for ei in range(input_tensor.size(0)):
            encoder_output, encoder_hidden = self.encoder(input_tensor[ei], encoder_hidden)  # (1, 1, H)
            encoder_outputs[ei] += encoder_output[0, 0]
        keys = encoder_outputs.unsqueeze(0)  # (1, 8, H)
        decoder_input = torch.tensor([[SOS_IDX]])  # (1, 1)
        decoder_hidden = encoder_hidden  # (1, 1, H)
        loss = 0.0
        for di in range(target_tensor.size(0)):
            output, decoder_hidden = self.decoder.forward_step(decoder_input, decoder_hidden, keys)  # (1, 1, V)
            loss = loss + self.criterion(F.log_softmax(output[0], dim=-1), target_tensor[di])
            decoder_input = target_tensor[di].view(1, 1)  # teacher forcing
        loss.backward()
        self.encoder_optimizer.step()
        self.decoder_optimizer.step()
        return loss.item() / target_tensor.size(0)
