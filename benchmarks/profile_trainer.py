"""Where one training step of the packaged Bahdanau recipe spends its CPU time, by part (torch.profiler, 1 thread).

    python -m benchmarks.profile_trainer --warmup 20 --steps 86 --out results/performance/profile.json
    python -m benchmarks.profile_trainer --recipe quality --warmup 20 --steps 150 \
        --out results/performance/profile-quality.json

`--recipe quality` profiles the recipe of the quality appendix instead (`QUALITY_CHANGES`: a bidirectional
encoder, batch 32, dropout 0); its useful FLOPs are counted as for the one-direction encoder of
the same H (`forward_flops`), so its `gemm_gflops_per_s` is an approximation.

The model, loader, optimizer and loss are the trainer's own (`benchmarks.run.PROJECT`, as in
`benchmarks.trainer_ab`: Bahdanau, H=256, batch 64, length buckets, dropout, label smoothing,
gradient clipping, fused Adam, the cosine schedule), on the main split's training pairs. After
`--warmup` steps, the same `--steps` batches (epoch 2's first ones) run twice: once plain, timed
with the thread's CPU time (`time.thread_time`), once under `torch.profiler` (CPU). The page's
machine is shared, so wall time there counts other jobs' turns; the profiler's events are wall
times, so each part is reported as its share of the profiler's self time, scaled to the profiled
pass's thread CPU time, and the plain pass says how much the profiler itself added.

Parts are found from where an operator ran: this script wraps the encoder, the decoder's
embedding, dropout, GRU and output layer, the attention's score and `attend`, the loss,
gradient clipping and the batch loader in `record_function` regions (no change to `src/`);
the optimizer's step and `zero_grad` carry the profiler's own labels. A backward operator is
charged to the region of the forward operator that made its autograd node (the two share a
sequence number). Matrix products (`aten::mm`, `addmm`, `bmm`) are also summed across parts,
with the step's useful FLOPs (`benchmarks.run.forward_flops`, x3 for the backward) and the
machine's sgemm peak on (1024, 1024) matrices measured in the same process, on the same clock.
"""

import argparse
import functools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch
from torch import nn
from torch.autograd.profiler import record_function
from torch.profiler import ProfilerActivity, profile

PARTS = {
    "encoder": "인코더 (임베딩 + GRU)",
    "embedding": "디코더 임베딩 + dropout",
    "gru": "디코더 GRU 셀",
    "attention": "어텐션 (점수, 마스크 소프트맥스, 가중합)",
    "output": "출력층 + log-softmax + 손실",
    "glue": "디코더 루프의 나머지 (cat, 자르기, 상태)",
}
"""Forward parts; each also has a backward part."""
OTHER_PARTS = {
    "accumulate": "역전파: 변화도 누적 (AccumulateGrad)",
    "backward_other": "역전파: 엔진과 나머지",
    "clip": "변화도 클리핑",
    "optimizer": "옵티마이저 step (fused Adam)",
    "zero_grad": "zero_grad",
    "data": "배치 만들기 (collate)",
    "other": "그 밖 (스케줄러, .item(), 영역 밖)",
}
REGION = "part:"
LOG_SOFTMAX = ("aten::log_softmax", "aten::_log_softmax")
GEMM = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mv", "aten::addmv")
"""Matrix products: the work itself; everything else is what a step spends around them."""


def regioned(function, name: str):
    """`function` with every call inside a profiler region named ``part:<name>``."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with record_function(REGION + name):
            return function(*args, **kwargs)

    return wrapped


def label_parts(model: nn.Module, criterion: nn.Module) -> None:
    """Wrap the model's pieces (instance attributes only) so that the profile names the part each op ran in."""
    decoder = model.decoder
    model.encoder.forward = regioned(model.encoder.forward, "encoder")
    decoder.embedding.forward = regioned(decoder.embedding.forward, "embedding")
    decoder.dropout.forward = regioned(decoder.dropout.forward, "embedding")
    decoder.gru.forward = regioned(decoder.gru.forward, "gru")
    decoder.out.forward = regioned(decoder.out.forward, "output")
    decoder.attention.forward = regioned(decoder.attention.forward, "attention")
    decoder.forward = regioned(decoder.forward, "glue")
    criterion.forward = regioned(criterion.forward, "output")


def region_of(event) -> str | None:
    """The innermost part region or optimizer label above `event` (itself included)."""
    while event is not None:
        name = event.name
        if name.startswith(REGION):
            return name[len(REGION) :]
        if name.startswith("Optimizer.step"):
            return "optimizer"
        if name.startswith("Optimizer.zero_grad"):
            return "zero_grad"
        event = event.cpu_parent
    return None


def backward_node_of(event):
    """The autograd node (``autograd::engine::evaluate_function: X``) `event` ran under, or None."""
    while event is not None:
        if event.name.startswith("autograd::engine::evaluate_function:"):
            return event
        event = event.cpu_parent
    return None


def parts_of(events) -> tuple[dict[str, float], dict[str, int]]:
    """Self CPU time (µs, the profiler's clock) and operator calls, by part."""
    forward_region = {}  # sequence number -> the part of the forward op that made the autograd node
    for event in events:
        if event.sequence_nr >= 0 and backward_node_of(event) is None:
            forward_region.setdefault(event.sequence_nr, region_of(event))
    time_us: dict[str, float] = defaultdict(float)
    time_us["gemm"] = 0.0  # counted apart too: not a part, a kind of operator across the parts
    calls: dict[str, int] = defaultdict(int)
    for event in events:
        if event.name.startswith(REGION):
            part = event.name[len(REGION) :]  # the wrapper's own Python time
        else:
            node = backward_node_of(event)
            if node is not None:
                if "AccumulateGrad" in node.name:
                    part = "accumulate"
                else:
                    forward = forward_region.get(node.sequence_nr)
                    part = "backward:" + forward if forward in PARTS else "backward_other"
            else:
                part = region_of(event) or "other"
                if part == "glue" and event.name in LOG_SOFTMAX:
                    part = "output"
        time_us[part] += event.self_cpu_time_total
        if event.name in GEMM:
            time_us["gemm"] += event.self_cpu_time_total
        if event.name.startswith("aten::") and (
            event.cpu_parent is None or not event.cpu_parent.name.startswith("aten::")
        ):
            calls[part] += 1  # top-level operator calls (not the ops an op calls inside)
    return dict(time_us), dict(calls)


def sgemm_peak(n: int = 1024, rounds: int = 5, reps: int = 5) -> float:
    """The best float32 (n, n) @ (n, n) rate of `rounds` rounds, in GFLOP/s of this thread's CPU time."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    best = 0.0
    for _ in range(rounds):
        tic = time.thread_time()
        for _ in range(reps):
            a @ b
        best = max(best, 2 * n**3 * reps / (time.thread_time() - tic) / 1e9)
    return best


QUALITY_CHANGES = {"bidirectional": True, "batch_size": 32, "dropout": 0.0}
"""The recipe of the quality appendix: `benchmarks.run.PROJECT` with round one's best changes (scripts/ablation.py's
combo-bi-b32-d0, which its round-two rows start from)."""


def build(warmup: int, steps: int, recipe: str = "project"):
    torch.set_num_threads(1)
    from benchmarks.run import PROJECT
    from seq2seq_attention.core.training import make_optimizer, make_scheduler
    from seq2seq_attention.model.seq2seq import build_model
    from seq2seq_attention.translation.corpus import (
        TranslationDataset,
        build_vocabularies,
        load_pairs,
        make_loader,
        split_pairs,
    )
    from seq2seq_attention.translation.train import TrainConfig, make_criterion

    train_pairs, _ = split_pairs(load_pairs())
    vocabs = build_vocabularies(train_pairs)
    dataset = TranslationDataset(train_pairs, vocabs)
    settings = {**PROJECT, **(QUALITY_CHANGES if recipe == "quality" else {})}
    config = TrainConfig(hidden_size=256, epochs=3, **settings)
    torch.manual_seed(0)
    model = build_model(
        config.decoder, len(vocabs.source), len(vocabs.target), 256, config.dropout, bidirectional=config.bidirectional
    )
    loader = make_loader(dataset, config.batch_size, seed=0)
    if max(warmup, steps) > len(loader):
        raise SystemExit(f"--warmup and --steps must each be at most {len(loader)} (batches per epoch)")
    optimizer = make_optimizer(model, config.learning_rate, config.weight_decay)
    scheduler = make_scheduler(optimizer, config.schedule, len(loader) * config.epochs)
    criterion = make_criterion(config)
    return config, model, loader, optimizer, scheduler, criterion


def run_steps(config, model, loader, optimizer, scheduler, criterion, epoch: int, steps: int) -> tuple[int, int]:
    """The first `steps` training steps of epoch `epoch` as `train_epoch` takes them; returns pairs and FLOPs."""
    from seq2seq_attention.translation.train import train_step

    model.train()
    loader.batch_sampler.set_epoch(epoch)
    batches = iter(loader)
    from benchmarks.run import forward_flops

    V = model.decoder.out.out_features
    pairs, flops = 0, 0
    for _ in range(steps):
        with record_function(REGION + "data"):
            batch = next(batches)
        train_step(model, batch, optimizer, criterion, 1.0, config.coin_per_step, config.clip)
        scheduler.step()
        pairs += batch.source.size(0)
        for S, T in zip(batch.lengths.tolist(), batch.target_lengths.tolist(), strict=True):
            flops += 3 * forward_flops(S, T, 256, V)  # backward: about twice the forward
    return pairs, flops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warmup", type=int, default=20, help="steps before anything is timed")
    parser.add_argument(
        "--steps",
        type=int,
        default=86,
        help="steps timed plain, then the same batches profiled (at most an epoch: 86 batches of 64, 152 of 32)",
    )
    parser.add_argument(
        "--recipe", choices=("project", "quality"), default="project", help="the settings profiled (default: project)"
    )
    parser.add_argument("--out", type=Path, help="write the parts as JSON here")
    args = parser.parse_args(argv)
    parts = build(args.warmup, args.steps, args.recipe)
    config, model, loader, optimizer, scheduler, criterion = parts
    clip = nn.utils.clip_grad_norm_  # `optimizer_step` looks it up through `nn.utils` at every call
    nn.utils.clip_grad_norm_ = regioned(clip, "clip")
    label_parts(model, criterion)
    run_steps(*parts, epoch=1, steps=args.warmup)  # warm-up
    tic = time.thread_time()
    pairs, flops = run_steps(*parts, epoch=2, steps=args.steps)
    plain_s = time.thread_time() - tic
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        tic, wall = time.thread_time(), time.perf_counter()
        run_steps(*parts, epoch=2, steps=args.steps)
        profiled_s, profiled_wall_s = time.thread_time() - tic, time.perf_counter() - wall
    nn.utils.clip_grad_norm_ = clip
    peak = sgemm_peak()
    time_us, calls = parts_of(prof.events())
    gemm_us = time_us.pop("gemm")
    total_us = sum(time_us.values())
    per_step_ms = 1000 * profiled_s / args.steps
    names = {**PARTS, **{f"backward:{k}": f"역전파: {v}" for k, v in PARTS.items()}, **OTHER_PARTS}
    order = [*PARTS, *(f"backward:{k}" for k in PARTS), *OTHER_PARTS]
    rows = [
        {
            "part": key,
            "label": names[key],
            "share": round(time_us.get(key, 0.0) / total_us, 4),
            "ms_per_step": round(per_step_ms * time_us.get(key, 0.0) / total_us, 3),
            "ops_per_step": round(calls.get(key, 0) / args.steps, 1),
        }
        for key in order
    ]
    result = {
        "command": "python -m benchmarks.profile_trainer " + " ".join(argv if argv is not None else sys.argv[1:]),
        "setting": (
            "bahdanau (benchmarks.run.PROJECT), H=256, batch 64, length buckets, 1 thread, "
            if args.recipe == "project"
            else "bahdanau (PROJECT + profile_trainer.QUALITY_CHANGES), bidirectional encoder, H=256, batch 32, "
            "dropout 0, length buckets, 1 thread, "
        )
        + "forward + backward + clipping + fused Adam + schedule",
        "clock": "thread CPU time (time.thread_time); parts are shares of the profiler's self time, scaled to it",
        "warmup_steps": args.warmup,
        "steps": args.steps,
        "pairs": pairs,
        "plain": {"thread_cpu_s": round(plain_s, 4), "ms_per_step": round(1000 * plain_s / args.steps, 3)},
        "profiled": {
            "thread_cpu_s": round(profiled_s, 4),
            "wall_s": round(profiled_wall_s, 4),
            "ms_per_step": round(per_step_ms, 3),
            "profiler_self_ms": round(total_us / 1000, 1),
        },
        "ops_per_step": round(sum(calls.values()) / args.steps, 1),
        "gemm_share": round(gemm_us / total_us, 4),
        "gemm_ms_per_step": round(per_step_ms * gemm_us / total_us, 3),
        "useful_gflop_per_step": round(flops / args.steps / 1e9, 4),
        "gemm_gflops_per_s": round(flops / (profiled_s * gemm_us / total_us) / 1e9, 1),
        "sgemm_peak_gflops": round(peak, 1),
        "parts": rows,
        "unassigned_parts": sorted(set(time_us) - set(order)),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        temporary = args.out.with_suffix(".tmp")
        temporary.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        temporary.replace(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
