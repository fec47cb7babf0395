"""The two search loops, greedy and beam, and the batch decoders built on them (`greedy_decode`, `beam_search_decode`).

The loops drive any step function with the decoders' interface (`Step`: a `StepDecoder`'s
`forward_step`, or the exported graphs' adapter) and a state with `keys` and `select`; they import
no decoder (the decoders import no search either: a decoder's `forward` is the training loop), and
`Seq2Seq.forward` without a target decodes through `greedy_search` too. Sentences are turned into
batches, and the search's numbers checked, by the translator.
"""

from typing import TYPE_CHECKING, Annotated, Protocol, runtime_checkable

import torch
from jaxtyping import Float, Int64
from torch import Tensor

from .defaults import MAX_BEAM, MAX_LENGTH, MAX_LENGTH_PENALTY, MAX_STEPS
from .tensors import annotations_checked, within
from .tokens import EOS_IDX, PAD_IDX, SOS_IDX

if TYPE_CHECKING:  # names for the annotations only: this module runs without the decoders and the model
    from .decoders import DecoderState
    from .seq2seq import Seq2Seq

Steps = Annotated[int, within(1, MAX_STEPS)]
"""How many steps a search may take (`max_length`)."""
Beams = Annotated[int, within(1, MAX_BEAM)]
"""How many hypotheses a beam search keeps per sentence (`beam_size`)."""
LengthPenalty = Annotated[float | int, within(-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY)]
"""Beam search's alpha (a finite number: `nan` lies in no range)."""


@runtime_checkable
class SearchState(Protocol):
    """What the loops read of a decoder's state (a `DecoderState`): the keys and `select`."""

    keys: Tensor

    def select(self, rows: Tensor) -> "SearchState": ...


@runtime_checkable
class Step(Protocol):
    """The decoder's step interface: `forward_step` of a `StepDecoder`, or of the exported graphs' adapter."""

    def __call__(
        self, input: torch.Tensor, state: "DecoderState"
    ) -> tuple[torch.Tensor, "DecoderState", torch.Tensor | None]: ...


@annotations_checked
# --8<-- [start:greedy_search]
def greedy_search(
    step: Step, state: SearchState, max_length: Steps = MAX_LENGTH, prefix: Int64[Tensor, "B P"] | None = None
) -> tuple[Int64[Tensor, "B T"], Float[Tensor, "B T V"], Float[Tensor, "B T S"] | None, SearchState]:
    """Feed each step's most likely word back in, until every sentence has said `<eos>`.

    The one free-running loop of the package: `greedy_decode`, a `Seq2Seq` called without a
    target and the exported graphs all decode through it. With a `prefix`, its P words are
    the first P outputs whatever the model prefers (teacher forcing by hand, as on the live
    page), and the model continues greedily from there (P <= max_length). The tokens (T <= max_length)
    end at each row's first `<eos>`, then `PAD_IDX`; the attentions are None for a decoder without attention.
    """
    batch_size, device = state.keys.size(0), state.keys.device
    forced = 0 if prefix is None else prefix.size(1)  # P
    decoder_input = torch.full((batch_size, 1), SOS_IDX, dtype=torch.long, device=device)  # (B, 1)
    finished = torch.zeros(batch_size, 1, dtype=torch.bool, device=device)  # (B, 1)
    tokens, logits, attentions = [], [], []
    for t in range(max_length):
        step_logits, state, weights = step(decoder_input, state)  # (B, 1, V), (B, 1, S) or None
        choice = prefix[:, t : t + 1] if t < forced else step_logits.argmax(dim=-1)  # (B, 1): forced or the best
        prediction = choice.masked_fill(finished, PAD_IDX)  # (B, 1): PAD once finished
        tokens.append(prediction)
        logits.append(step_logits)
        attentions.append(weights)
        finished = finished | (prediction == EOS_IDX)  # (B, 1)
        if bool(finished.all()):
            break
        decoder_input = prediction  # (B, 1): our own guess is the next input
    tokens = torch.cat(tokens, dim=1)  # (B, T)
    logits = torch.cat(logits, dim=1)  # (B, T, V)
    attentions = None if attentions[0] is None else torch.cat(attentions, dim=1)  # (B, T, S)
    return tokens, logits, attentions, state


# --8<-- [end:greedy_search]


# --8<-- [start:beam_search]
def beam_search(
    step: Step,
    state: "DecoderState",
    beam_size: int = 5,
    max_length: int = MAX_LENGTH,
    length_penalty: float = 1.0,
) -> tuple[Int64[Tensor, "B T"], Float[Tensor, " B"]]:
    """Keep the `beam_size` most likely prefixes of every sentence, all sentences in one batch.

    At each step every live prefix is extended by every word; the `beam_size` best-scoring
    extensions that do not end in `<eos>` live on, and an extension that ends in `<eos>` and
    ranks among the `beam_size` best is a finished hypothesis. Hypotheses are compared by
    their log-probability divided by ``length ** length_penalty`` (length with `<eos>`), so
    that short translations are not preferred just because they multiply fewer
    probabilities. A sentence is done once it has `beam_size` finished hypotheses; one that
    has none after `max_length` steps takes its best live prefix. With ``beam_size=1`` this is
    exactly `greedy_search`. Returns each sentence's tokens (T <= max_length, ending at its `<eos>`,
    then `PAD_IDX`) and its chosen hypothesis's length-normalised log-probability.
    """
    B, k, device = state.keys.size(0), beam_size, state.keys.device
    state = state.select(torch.arange(B, device=device).repeat_interleave(k))  # (B*k) rows: k per sentence
    scores = torch.full((B, k), float("-inf"), device=device)  # (B, k): log-probability of each prefix
    scores[:, 0] = 0.0  # one live prefix (<sos>) at the start
    prefixes = torch.empty(B, k, 0, dtype=torch.long, device=device)  # (B, k, t)
    decoder_input = torch.full((B * k, 1), SOS_IDX, dtype=torch.long, device=device)  # (B*k, 1)
    best = torch.full((B,), float("-inf"), device=device)  # (B,): best finished, normalised
    best_tokens = torch.full((B, max_length), PAD_IDX, dtype=torch.long, device=device)  # (B, max_length)
    best_length = torch.zeros(B, dtype=torch.long, device=device)  # (B,)
    n_finished = torch.zeros(B, dtype=torch.long, device=device)  # (B,)
    rank = torch.arange(2 * k, device=device).expand(B, 2 * k)  # (B, 2k)
    offsets = (torch.arange(B, device=device) * k).unsqueeze(1)  # (B, 1): first row of each sentence
    for t in range(max_length):
        logits, state, _ = step(decoder_input, state)  # (B*k, 1, V)
        log_probs = torch.log_softmax(logits.squeeze(1), dim=-1).view(B, k, -1)  # (B, k, V)
        V = log_probs.size(-1)
        candidates = (scores.unsqueeze(2) + log_probs).view(B, k * V)  # (B, k*V)
        top_scores, top_index = candidates.topk(min(2 * k, k * V), dim=1)  # (B, 2k), (B, 2k)
        top_beam, top_token = top_index // V, top_index % V  # (B, 2k), (B, 2k)
        top_prefixes = torch.cat(
            (prefixes.gather(1, top_beam.unsqueeze(2).expand(-1, -1, t)), top_token.unsqueeze(2)), dim=2
        )  # (B, 2k, t+1)
        # finished: <eos> among the k best, for sentences still searching
        is_eos = top_token == EOS_IDX  # (B, 2k)
        ends = is_eos & (rank[:, : is_eos.size(1)] < k) & torch.isfinite(top_scores) & (n_finished < k).unsqueeze(1)
        normalised = top_scores / float(t + 1) ** length_penalty  # (B, 2k)
        ending = normalised.masked_fill(~ends, float("-inf"))  # (B, 2k)
        candidate_best, which = ending.max(dim=1)  # (B,), (B,)
        better = candidate_best > best  # (B,)
        best = torch.where(better, candidate_best, best)  # (B,)
        chosen = top_prefixes[torch.arange(B, device=device), which]  # (B, t+1)
        best_tokens[better, : t + 1] = chosen[better]
        best_length[better] = t + 1
        n_finished = n_finished + ends.sum(dim=1)  # (B,)
        if bool((n_finished >= k).all()):
            break
        # live: the k best extensions that do not end in <eos>
        live_scores, live = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=1)  # (B, k), (B, k)
        scores = live_scores  # (B, k)
        prefixes = top_prefixes.gather(1, live.unsqueeze(2).expand(-1, -1, t + 1))  # (B, k, t+1)
        origin = (offsets + top_beam.gather(1, live)).flatten()  # (B*k,): the row each new prefix extends
        state = state.select(origin)  # (B*k) rows, reordered
        decoder_input = top_token.gather(1, live).reshape(B * k, 1)  # (B*k, 1)
    unfinished = n_finished == 0  # (B,): take the best live prefix
    if bool(unfinished.any()):
        steps = prefixes.size(2)
        best[unfinished] = scores[unfinished, 0] / float(max(steps, 1)) ** length_penalty
        best_tokens[unfinished, :steps] = prefixes[unfinished, 0]
        best_length[unfinished] = steps
    return best_tokens[:, : int(best_length.max())], best


# --8<-- [end:beam_search]


@annotations_checked
# --8<-- [start:greedy]
@torch.inference_mode()
def greedy_decode(
    model: "Seq2Seq", source: Int64[Tensor, "B S"], lengths: Int64[Tensor, " B"], max_length: Steps = MAX_LENGTH
) -> tuple[Int64[Tensor, "B T"], Float[Tensor, "B T S"] | None]:
    """Greedy translation of a batch: encode, then `greedy_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (call `model.eval()` first: dropout stays on otherwise).
        source: padded source indices.
        lengths: the real source lengths.
        max_length: at most this many steps (`<eos>` included).

    Returns the tokens, each row ending at its first `<eos>`, then `PAD_IDX`, and the attention
    weights (None for a decoder without attention).
    """
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    tokens, _, attentions, _ = greedy_search(model.decoder.forward_step, state, max_length)  # (B, T), (B, T, S)
    return tokens, attentions


# --8<-- [end:greedy]


@annotations_checked
# --8<-- [start:beam]
@torch.inference_mode()
def beam_search_decode(
    model: "Seq2Seq",
    source: Int64[Tensor, "B S"],
    lengths: Int64[Tensor, " B"],
    beam_size: Beams = 5,
    max_length: Steps = MAX_LENGTH,
    length_penalty: LengthPenalty = 1.0,
) -> tuple[Int64[Tensor, "B T"], Float[Tensor, " B"]]:
    """Beam-search translation of a batch: encode, then `beam_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (in eval mode).
        source: padded source indices.
        lengths: the real source lengths.
        beam_size: k, the prefixes kept per sentence; 1 gives `greedy_decode`'s tokens.
        max_length: at most this many steps (`<eos>` included).
        length_penalty: alpha; 0 compares raw log-probabilities, 1 per-word averages.

    Returns the tokens, each row ending at its `<eos>`, then `PAD_IDX`, and the chosen
    hypotheses' length-normalised log-probabilities.
    """
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    return beam_search(model.decoder.forward_step, state, beam_size, max_length, length_penalty)  # (B, T), (B,)


# --8<-- [end:beam]
