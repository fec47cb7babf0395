"""The old hand-fused teacher-forced path of the Bahdanau decoder, kept as a measured experiment.

Until issue 18, `AttnDecoderRNN.teacher_forced` trained every default model: it wrote the GRU's
gates out by hand and, with the additive score, did the query's `W_a s` and the GRU's `W_hh s` as
one matrix product. The package now trains through the decoder's one loop (`StepDecoder.forward`:
the real `Attention` and `nn.GRU` at every step, the output layer once). `fused_log_probs` is the
old path, the same function of the same parameters (tests/workbench/test_performance.py checks it against
the loop in float64, values and gradients); `python -m benchmarks.fused` times both in one run.

    python -m benchmarks.fused --rounds 5 --out results/performance/fused_vs_loop.json
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from benchmarks.report import ab_result, emit
from seq2seq_attention.core.training import make_optimizer
from seq2seq_attention.model.attention import BahdanauAttention, masked_softmax
from seq2seq_attention.model.seq2seq import Seq2Seq, build_model
from seq2seq_attention.model.tokens import SOS_IDX
from seq2seq_attention.translation.corpus import (
    TranslationDataset,
    build_vocabularies,
    load_pairs,
    make_loader,
    split_pairs,
)


def fused_log_probs(
    model: Seq2Seq,
    source: torch.Tensor,
    lengths: torch.Tensor,
    target: torch.Tensor,
    source_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """(B, T, V) teacher-forced log-probabilities of a Bahdanau `Seq2Seq`, with the GRU written out by hand."""
    encoder_outputs, encoder_hidden, source_mask = model.encode(source, lengths, source_mask)
    decoder = model.decoder
    if source_mask is not None and bool(source_mask.all()):
        source_mask = None  # a length bucket: nothing to mask
    state = decoder.init_state(encoder_outputs, encoder_hidden, source_mask)
    keys, proj_keys, score, gru, H = (
        state.keys,
        state.proj_keys,
        decoder.attention,
        decoder.gru,
        model.decoder.hidden_size,
    )
    sos = torch.full_like(target[:, :1], SOS_IDX)  # (B, 1)
    inputs = torch.cat((sos, target[:, :-1]), dim=1)  # (B, T): teacher forcing, shifted right
    embedded = decoder.dropout(decoder.embedding(inputs))  # (B, T, H)
    w_embedded, w_context = gru.weight_ih_l0.split(H, dim=1)  # (3H, H) each: GRU input = [embedded; context]
    gates_embedded = F.linear(embedded, w_embedded, gru.bias_ih_l0)  # (B, T, 3H), all steps at once
    additive = isinstance(score, BahdanauAttention)
    softmax = masked_softmax.__wrapped__  # the function without its user-facing check, as the model's loop runs it
    w_state = torch.cat((score.Wa.weight, gru.weight_hh_l0)) if additive else gru.weight_hh_l0  # (4H or 3H, H)
    b_state = torch.cat((score.Wa.bias, gru.bias_hh_l0)) if additive else gru.bias_hh_l0  # (4H or 3H,)
    if source_mask is not None:
        keys = keys.masked_fill(~source_mask.unsqueeze(2), 0.0)  # (B, S, H): as `Attention`, padding never leaks
    hidden = state.hidden[0]  # (B, H)
    states = []
    for t in range(target.size(1)):
        projected = F.linear(hidden, w_state, b_state)  # (B, 4H) or (B, 3H)
        if additive:
            query, gates_hidden = projected.split((H, 3 * H), dim=1)  # (B, H), (B, 3H)
            scores = score.Va(torch.tanh(query.unsqueeze(1) + proj_keys)).squeeze(2)  # (B, S)
        else:
            gates_hidden = projected  # (B, 3H)
            scores = score.score(hidden.unsqueeze(1), proj_keys).squeeze(1)  # (B, S)
        weights = softmax(scores.unsqueeze(1), source_mask).squeeze(1)  # (B, S)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # (B, H)
        gates_input = gates_embedded[:, t] + F.linear(context, w_context)  # (B, 3H)
        i_r, i_z, i_n = gates_input.chunk(3, dim=1)  # (B, H) each
        h_r, h_z, h_n = gates_hidden.chunk(3, dim=1)  # (B, H) each
        reset = torch.sigmoid(i_r + h_r)  # (B, H)
        update = torch.sigmoid(i_z + h_z)  # (B, H)
        candidate = torch.tanh(i_n + reset * h_n)  # (B, H)
        hidden = candidate + update * (hidden - candidate)  # (B, H): (1 - z) n + z s
        states.append(hidden)
    logits = decoder.out(torch.stack(states, dim=1))  # (B, T, V), one product for all steps
    return F.log_softmax(logits, dim=-1)  # (B, T, V)


def loop_log_probs(
    model: Seq2Seq,
    source: torch.Tensor,
    lengths: torch.Tensor,
    target: torch.Tensor,
    source_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The package's path: the model's own forward (the decoder's one teacher-forced loop)."""
    return model(source, lengths, target, source_mask=source_mask)[0]  # (B, T, V)


PATHS = {"fused": fused_log_probs, "loop": loop_log_probs}


def epoch_seconds(path, model, batches, optimizer) -> float:
    """CPU seconds of one pass of forward + backward + Adam over `batches` with the given forward path."""
    model.train()
    tic = time.process_time()
    for batch in batches:
        optimizer.zero_grad()
        log_probs = path(model, batch.source, batch.lengths, batch.target, batch.source_mask)  # (B, T, V)
        loss = F.nll_loss(log_probs.flatten(0, 1), batch.target.flatten(), ignore_index=0)
        loss.backward()
        optimizer.step()
    return time.process_time() - tic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40, help="batches per timed pass")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    train_pairs, _ = split_pairs(load_pairs())
    vocabs = build_vocabularies(train_pairs)
    loader = make_loader(TranslationDataset(train_pairs, vocabs), 64, seed=0)
    batches = [batch for _, batch in zip(range(args.batches), loader, strict=False)]
    torch.manual_seed(0)
    model = build_model("bahdanau", len(vocabs.source), len(vocabs.target), 256, 0.3)
    optimizer = make_optimizer(model, 2e-3, 0.0)
    pairs = sum(batch.source.size(0) for batch in batches)
    for path in PATHS.values():  # warm-up
        epoch_seconds(path, model, batches[:5], optimizer)
    rates: dict[str, list[float]] = {name: [] for name in PATHS}
    for _ in range(args.rounds):
        for name, path in PATHS.items():
            rates[name].append(pairs / epoch_seconds(path, model, batches, optimizer))
            print(json.dumps({"path": name, "pairs_per_s": round(rates[name][-1], 1)}), flush=True)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    result = ab_result(
        "benchmarks.fused",
        argv,
        args.rounds,
        rates,
        setting=f"bahdanau H=256, batch 64, {args.batches} batches per pass, 1 thread, forward+backward+Adam",
        median_pairs_per_s={name: round(value, 1) for name, value in medians.items()},
        loop_over_fused=round(medians["loop"] / medians["fused"], 4),
    )
    return emit(result, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
