"""The fast training path, the learning-rate schedule and the tutorial's loops (issue 6), on tiny models; the
benchmarks' FLOP model and tables (beam search: `test_search.py`)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import random_batch

from benchmarks.fused import fused_log_probs
from benchmarks.run import epoch_flops, forward_flops
from benchmarks.tutorial_loops import MAX_LENGTH, PerSentenceTrainer, TutorialTrainer, pad_to_max_length
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.training import learning_rate_at, make_optimizer
from seq2seq_attention.model.scores import SCORES
from seq2seq_attention.model.seq2seq import build_model
from seq2seq_attention.model.tokens import EOS_IDX, PAD_IDX, SOS_IDX
from seq2seq_attention.translation.train import TrainConfig, _check_resumable, make_criterion

pytestmark = pytest.mark.usefixtures("one_thread")


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 1000),
    B=st.integers(1, 4),
    S=st.integers(1, 6),
    T=st.integers(1, 5),
    padded=st.booleans(),
    score=st.sampled_from(sorted(SCORES)),
)
def test_the_old_fused_path_equals_the_loop(seed: int, B: int, S: int, T: int, padded: bool, score: str):
    """benchmarks/fused.py, the hand-written GRU the package trained with before issue 18, is the same function."""
    torch.manual_seed(seed)
    model = build_model("bahdanau", 11, 13, hidden_size=8, score=score).double().eval()  # eval: no dropout
    batch = random_batch(seed, B, S, T, padded=padded)
    reference, _ = model(batch.source, batch.lengths, batch.target)  # (B, T, V): the decoder's own loop
    reference[batch.target != PAD_IDX].sum().backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad()
    fused = fused_log_probs(model, batch.source, batch.lengths, batch.target, batch.source_mask)  # (B, T, V)
    assert fused.shape == reference.shape == (B, batch.target.size(1), 13)
    torch.testing.assert_close(fused, reference, rtol=1e-10, atol=1e-10)
    fused[batch.target != PAD_IDX].sum().backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(p.grad, expected[name], rtol=1e-9, atol=1e-10, msg=name)


def step_by_step(model, batch, feed_own: bool = False) -> torch.Tensor:
    """The tutorial's loop written out: `forward_step` per position, the true (or own) previous token fed back."""
    state = model.decoder.init_state(*model.encode(batch.source, batch.lengths))
    token = torch.full_like(batch.target[:, :1], SOS_IDX)  # (B, 1)
    logits = []
    for i in range(batch.target.size(1)):
        step_logits, state, _ = model.decoder.forward_step(token, state)  # (B, 1, V)
        logits.append(step_logits)
        token = step_logits.argmax(dim=-1) if feed_own else batch.target[:, i : i + 1]  # (B, 1)
    return torch.log_softmax(torch.cat(logits, dim=1), dim=-1)  # (B, T, V)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), padded=st.booleans(), kind=st.sampled_from(["gru", "bahdanau", "luong"]))
def test_the_training_loop_is_forward_step_at_every_position(seed: int, padded: bool, kind: str):
    """Embedding all inputs at once and the output layer once change nothing: values and gradients, float64."""
    torch.manual_seed(seed)
    model = build_model(kind, 11, 13, hidden_size=8).double().eval()
    batch = random_batch(seed, 3, 5, 4, padded=padded)
    loop, _ = model(batch.source, batch.lengths, batch.target)  # (B, T, V)
    loop[batch.target != PAD_IDX].sum().backward()
    expected = {name: p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad()
    reference = step_by_step(model, batch)
    torch.testing.assert_close(loop, reference, rtol=1e-10, atol=1e-10)
    reference[batch.target != PAD_IDX].sum().backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(expected[name], p.grad, rtol=1e-9, atol=1e-10, msg=name)
    own, _ = model(batch.source, batch.lengths, batch.target, teacher_forcing_ratio=0.0)  # the mixed schedule at 0
    torch.testing.assert_close(own, step_by_step(model, batch, feed_own=True), rtol=1e-10, atol=1e-10)


def test_cosine_schedule_warms_up_then_decays_to_zero():
    rates = [learning_rate_at("cosine", 0.01, step, 100) for step in range(100)]
    assert rates[0] == pytest.approx(0.01 / 5) and rates[4] == pytest.approx(0.01)  # 5 warm-up steps
    assert all(a >= b for a, b in zip(rates[4:], rates[5:], strict=False))
    assert rates[-1] < 1e-4 and max(rates) == pytest.approx(0.01)
    assert learning_rate_at("constant", 0.01, 77, 100) == 0.01


def test_new_settings_are_validated_and_old_checkpoints_still_resume():
    with pytest.raises(InputError, match="label_smoothing"):
        TrainConfig(label_smoothing=1.0)
    with pytest.raises(InputError, match="schedule"):
        TrainConfig(schedule="linear")
    with pytest.raises(InputError, match="weight_decay"):
        TrainConfig(weight_decay=-1)
    saved = {k: v for k, v in vars(TrainConfig()).items() if k not in ("label_smoothing", "schedule", "weight_decay")}
    _check_resumable(TrainConfig(), saved, "old")  # saved before these fields existed: their defaults apply
    with pytest.raises(InputError, match="label_smoothing"):
        _check_resumable(TrainConfig(label_smoothing=0.1), saved, "old")


def test_label_smoothing_criterion_and_adamw():
    config = TrainConfig(label_smoothing=0.2, weight_decay=0.01)
    criterion = make_criterion(config)
    log_probs = torch.log_softmax(torch.randn(4, 6), dim=-1)  # (N, V)
    target = torch.tensor([1, 2, PAD_IDX, 3])
    real = target != PAD_IDX
    expected = -(0.8 * log_probs[real, target[real]] + 0.2 * log_probs[real].mean(dim=1)).mean()
    torch.testing.assert_close(criterion(log_probs, target), expected)
    optimizer = make_optimizer(build_model("gru", 11, 13, hidden_size=8), config.learning_rate, config.weight_decay)
    assert isinstance(optimizer, torch.optim.AdamW) and optimizer.defaults["weight_decay"] == 0.01


EXAMPLES = [([4, 5, EOS_IDX], [4, 6, 7, EOS_IDX]), ([6, EOS_IDX], [5, EOS_IDX]), ([7, 8, 9, 10, EOS_IDX], [8, EOS_IDX])]


@pytest.mark.slow
def test_tutorial_loops_train_and_pad_like_the_tutorial():
    padded = pad_to_max_length([s for s, _ in EXAMPLES])
    assert padded.shape == (3, MAX_LENGTH) and padded[1].tolist() == [6, EOS_IDX] + [PAD_IDX] * (MAX_LENGTH - 2)
    tutorial = TutorialTrainer(EXAMPLES * 4, 11, 13, hidden_size=8, batch_size=4)
    losses = [tutorial.epoch() for _ in range(15)]
    assert losses[-1] < losses[0] and all(math.isfinite(x) for x in losses)
    assert all(len(t) <= MAX_LENGTH for t in tutorial.translate([s for s, _ in EXAMPLES]))
    per_sentence = PerSentenceTrainer(EXAMPLES, 11, 13, hidden_size=8, learning_rate=0.1)
    first = [per_sentence.step(i) for i in range(3)]
    for _ in range(20):
        last = [per_sentence.step(i) for i in range(3)]
    assert sum(last) < sum(first)


def test_flop_model():
    H, V = 256, 1507
    assert forward_flops(6, 6, H, V) == 12 * H * H * 6 + 2 * H * H * 6 + 6 * (20 * H * H + 4 * H * 6 + 2 * H * V)
    assert forward_flops(6, 6, H, V, keys_every_step=True) - forward_flops(6, 6, H, V) == 5 * 2 * H * H * 6
    examples = [([1] * 6, [1] * 6), ([1] * 5, [1] * 7)]
    assert epoch_flops(examples, H, V) == 3 * (forward_flops(6, 6, H, V) + forward_flops(5, 7, H, V))
    assert epoch_flops(examples, H, V, padded_to=8) == 2 * 3 * forward_flops(8, 8, H, V)


def test_the_performance_tables_are_what_the_benchmark_json_makes():
    from benchmarks import tables

    committed = (tables.OUT / "tables.ko.md").read_text(encoding="utf-8")
    assert committed == tables.render(*tables.load()), "run python -m benchmarks.tables"
    one, two, _, _, _ = tables.load()
    rendered = tables.summary(one, two)
    # chapter 6 reports measurements as measurements: two columns, no verdict against a target
    assert rendered[0] == "| 측정 | 값 |" and all(row.count("|") == 3 for row in rendered)
    assert not any(word in row for row in rendered for word in ("달성", "목표", "아니오"))
