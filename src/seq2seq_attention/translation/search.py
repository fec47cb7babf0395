"""The two search loops, greedy and beam, and the batch decoders built on them (`greedy_decode`, `beam_search_decode`).

The loops drive any step function with the decoders' interface (`Step`: a `StepDecoder`'s
`forward_step`, or the exported graphs' adapter) and a state with `keys` and `select`; they import
no decoder (the decoders import no search either: a decoder's `forward` is the training loop), and
`Seq2Seq.forward` without a target decodes through `greedy_search` too. What a user passes in is
checked by the `_check_*` function just above each loop, where the user calls (`checked`); sentences
are turned into batches by `translator.py`.
"""

import math
from typing import TYPE_CHECKING, Protocol

import torch

from ..core.checks import Call, check_count, check_tensor, check_tokens, checked, is_number
from ..core.errors import InputError, echo
from ..core.tokens import EOS_IDX, PAD_IDX, SOS_IDX
from .defaults import MAX_BEAM, MAX_LENGTH, MAX_LENGTH_PENALTY, MAX_STEPS

if TYPE_CHECKING:  # names for the annotations only: this module runs without the decoders and the model
    from .decoders import DecoderState
    from .model import Seq2Seq


def check_length_penalty(length_penalty: object) -> None:
    """Beam search's alpha: a finite number in [-`MAX_LENGTH_PENALTY`, `MAX_LENGTH_PENALTY`]."""
    if not is_number(length_penalty):
        raise InputError(f"length_penalty must be a number, got {echo(length_penalty)}")
    if not math.isfinite(length_penalty) or abs(length_penalty) > MAX_LENGTH_PENALTY:
        bound = f"{MAX_LENGTH_PENALTY:g}"
        raise InputError(f"length_penalty must be a finite number in [-{bound}, {bound}], got {length_penalty}")


def check_steps(max_length: object, beam_size: object = 1, length_penalty: object = 1.0) -> None:
    """A search's numbers: `max_length` in [1, `MAX_STEPS`], `beam_size` in [1, `MAX_BEAM`], a finite
    `length_penalty` (the defaults: a greedy search, with nothing to check for a beam)."""
    check_length_penalty(length_penalty)
    check_count("max_length", max_length, MAX_STEPS)
    check_count("beam_size", beam_size, MAX_BEAM)


class Step(Protocol):
    """The decoder's step interface: `forward_step` of a `StepDecoder`, or of the exported graphs' adapter."""

    def __call__(
        self, input: torch.Tensor, state: "DecoderState"
    ) -> tuple[torch.Tensor, "DecoderState", torch.Tensor | None]: ...


def _check_greedy_search(call: Call) -> None:
    state, max_length, prefix = call.state, call.max_length, call.prefix
    max_length = MAX_LENGTH if max_length is None else max_length
    check_steps(max_length)
    if prefix is None:
        return
    sizes = check_tensor("prefix", prefix, ("B", "P"), {"B": state.keys.size(0)}, dtype="long")
    if sizes["P"] > max_length:
        raise InputError(f"prefix must have at most max_length={max_length} words, got P={sizes['P']}")


@checked(_check_greedy_search)
# --8<-- [start:greedy_search]
def greedy_search(
    step: Step, state: "DecoderState", max_length: int = MAX_LENGTH, prefix: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, "DecoderState"]:
    """Feed each step's most likely word back in, until every sentence has said `<eos>`.

    The one free-running loop of the package: `greedy_decode`, a `Seq2Seq` called without a
    target and the exported graphs all decode through it. With a `prefix`, its P words are
    the first P outputs whatever the model prefers (teacher forcing by hand, as on the live
    page), and the model continues greedily from there.

    Shapes:
        state: a `DecoderState` of B sentences (`init_state`).
        prefix: (B, P) long, P <= max_length, the forced first words; optional.
        tokens: (B, T) long, T <= max_length; each row ends at its first `<eos>`, then `PAD_IDX`.
        logits: (B, T, V), the logits of every step.
        attentions: (B, T, S), or None for a decoder without attention.
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


def _check_beam_search(call: Call) -> None:
    beam_size, max_length, length_penalty = call.beam_size, call.max_length, call.length_penalty
    check_steps(MAX_LENGTH if max_length is None else max_length, beam_size, length_penalty)


@checked(_check_beam_search)
# --8<-- [start:beam_search]
def beam_search(
    step: Step,
    state: "DecoderState",
    beam_size: int = 5,
    max_length: int = MAX_LENGTH,
    length_penalty: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the `beam_size` most likely prefixes of every sentence, all sentences in one batch.

    At each step every live prefix is extended by every word; the `beam_size` best-scoring
    extensions that do not end in `<eos>` live on, and an extension that ends in `<eos>` and
    ranks among the `beam_size` best is a finished hypothesis. Hypotheses are compared by
    their log-probability divided by ``length ** length_penalty`` (length with `<eos>`), so
    that short translations are not preferred just because they multiply fewer
    probabilities. A sentence is done once it has `beam_size` finished hypotheses; one that
    has none after `max_length` steps takes its best live prefix. With ``beam_size=1`` this is
    exactly `greedy_search`.

    Shapes:
        state: a `DecoderState` of B sentences (`init_state`).
        tokens: (B, T) long, T <= max_length; each row ends at its `<eos>`, then `PAD_IDX`.
        scores: (B,) the chosen hypotheses' length-normalised log-probabilities.
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
        top_scores, top_index = candidates.topk(min(2 * k, k * V), dim=1)  # (B, 2k) each
        top_beam, top_token = top_index // V, top_index % V  # (B, 2k) each
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
        live_scores, live = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=1)  # (B, k) each
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


def _check_decode(call: Call) -> None:
    """`greedy_decode`'s and `beam_search_decode`'s arguments, with what the encoder reads checked here once."""
    source, lengths, model, max_length = call.source, call.lengths, call.model, call.max_length
    sizes = check_tensor("source", source, ("B", "S"), dtype="long")
    beam = {name: call[name] for name in ("beam_size", "length_penalty") if name in call}  # beam search's only
    check_steps(MAX_LENGTH if max_length is None else max_length, **beam)
    if sizes["B"] == 0:
        raise InputError("source must hold at least one sentence, got B=0")
    check_tensor("lengths", lengths, (sizes["B"],), dtype="long")
    check_tokens(model.encoder, source, lengths, model.encoder.embedding.num_embeddings)


@checked(_check_decode)
# --8<-- [start:greedy]
@torch.inference_mode()
def greedy_decode(
    model: "Seq2Seq", source: torch.Tensor, lengths: torch.Tensor, max_length: int = MAX_LENGTH
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Greedy translation of a batch: encode, then `greedy_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (call `model.eval()` first: dropout stays on otherwise).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        max_length: at most this many steps (`<eos>` included).

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its first `<eos>`, then `PAD_IDX`.
        attentions: (B, T, S) attention weights, or None for a decoder without attention.
    """
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    tokens, _, attentions, _ = greedy_search(model.decoder.forward_step, state, max_length)  # (B, T), (B, T, S)
    return tokens, attentions


# --8<-- [end:greedy]


@checked(_check_decode)
# --8<-- [start:beam]
@torch.inference_mode()
def beam_search_decode(
    model: "Seq2Seq",
    source: torch.Tensor,
    lengths: torch.Tensor,
    beam_size: int = 5,
    max_length: int = MAX_LENGTH,
    length_penalty: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Beam-search translation of a batch: encode, then `beam_search` with the model's decoder.

    Args:
        model: a trained `Seq2Seq` (in eval mode).
        source: (B, S) long, padded source indices.
        lengths: (B,) long, the real source lengths.
        beam_size: k, the prefixes kept per sentence; 1 gives `greedy_decode`'s tokens.
        max_length: at most this many steps (`<eos>` included).
        length_penalty: alpha; 0 compares raw log-probabilities, 1 per-word averages.

    Shapes:
        tokens: (B, T) long, T <= max_length; each row ends at its `<eos>`, then `PAD_IDX`.
        scores: (B,) the chosen hypotheses' length-normalised log-probabilities.
    """
    state = model.decoder.init_state(*model.encode(source, lengths))  # keys projected once
    return beam_search(model.decoder.forward_step, state, beam_size, max_length, length_penalty)  # (B, T), (B,)


# --8<-- [end:beam]
