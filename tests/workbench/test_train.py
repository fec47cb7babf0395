"""Model registry, training loop, schedules, evaluation and translation after training, on tiny models (checkpoints:
`test_checkpoint.py`; greedy decoding: `test_search.py`)."""

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import refused, tiny_config
from torch import nn

from seq2seq_attention.core.checkpoint import load_checkpoint, save_checkpoint
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.model.decoders import AttnDecoderRNN, DecoderRNN
from seq2seq_attention.model.search import greedy_decode
from seq2seq_attention.model.seq2seq import DECODERS, Seq2Seq, build_model
from seq2seq_attention.model.tokens import PAD_IDX, SPECIAL_TOKENS
from seq2seq_attention.translation.corpus import Pair, TranslationDataset, build_vocabularies, collate, split_pairs
from seq2seq_attention.translation.evaluate import evaluate
from seq2seq_attention.translation.train import TrainConfig, initialize, train, train_step
from seq2seq_attention.translation.translator import translate

PAIRS = [
    Pair("je suis fatigue .", "i m tired ."),
    Pair("tu es grand .", "you re tall ."),
    Pair("il est la .", "he is here ."),
    Pair("nous sommes prets .", "we re ready ."),
    Pair("elle est fatiguee .", "she is tired ."),
    Pair("ils sont grands .", "they are tall ."),
    Pair("je suis la .", "i am here ."),
    Pair("vous etes prets .", "you are ready ."),
] * 4  # the split depends only on the French side: some of these land in the test split


pytestmark = pytest.mark.usefixtures("one_thread")


def quiet(_: str) -> None:
    pass


def test_registry_and_build_model():
    assert DECODERS["gru"].decoder is DecoderRNN and DECODERS["bahdanau"].decoder is AttnDecoderRNN
    model = build_model("bahdanau", 11, 13, hidden_size=8, dropout=0.2)
    assert isinstance(model, Seq2Seq) and model.config["tgt_vocab_size"] == 13
    assert model.decoder.dropout.p == 0.2 and model.encoder.dropout.p == 0.2
    with pytest.raises(ValueError, match="unknown decoder 'lstm'"):
        build_model("lstm", 11, 13)
    with pytest.raises(ValueError, match="hidden_size"):
        build_model("gru", 11, 13, hidden_size=0)


@pytest.mark.parametrize("decoder", sorted(DECODERS))
def test_forward_shapes(decoder: str):
    torch.manual_seed(0)
    model = build_model(decoder, 11, 13, hidden_size=8)
    source = torch.tensor([[4, 5, 6, 2, 0], [7, 8, 9, 10, 2]])  # (B=2, S=5)
    lengths = torch.tensor([4, 5])
    target = torch.tensor([[4, 5, 2], [6, 2, 0]])  # (B=2, T=3)
    log_probs, attentions = model(source, lengths, target)
    assert log_probs.shape == (2, 3, 13)
    assert torch.allclose(log_probs.exp().sum(-1), torch.ones(2, 3))
    if isinstance(model.decoder, DecoderRNN):
        assert attentions is None
    else:
        assert attentions.shape == (2, 3, 5)
        assert torch.all(attentions[0, :, 4] == 0)  # the padded source position gets no weight
    free, _ = model(source, lengths, max_length=4)
    assert free.shape == (2, 4, 13)


def test_loss_ignores_padding():
    torch.manual_seed(0)
    model = build_model("gru", 11, 13, hidden_size=8).eval()
    source, lengths = torch.tensor([[4, 5, 2]]), torch.tensor([3])
    criterion = nn.NLLLoss(ignore_index=PAD_IDX)
    short = torch.tensor([[4, 2]])
    padded = torch.tensor([[4, 2, PAD_IDX, PAD_IDX]])
    loss_short = criterion(model(source, lengths, short)[0].flatten(0, 1), short.flatten())
    loss_padded = criterion(model(source, lengths, padded)[0].flatten(0, 1), padded.flatten())
    assert torch.allclose(loss_short, loss_padded)


def test_train_step_clips_gradients():
    torch.manual_seed(0)
    vocabs = build_vocabularies(PAIRS)
    model = build_model("gru", len(vocabs.source), len(vocabs.target), hidden_size=8)
    batch = collate(TranslationDataset(PAIRS[:4], vocabs).examples)
    seen = []
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    original = optimizer.step

    def step():
        seen.append(torch.norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None])))
        original()

    optimizer.step = step
    loss = train_step(model, batch, optimizer, nn.NLLLoss(ignore_index=PAD_IDX), clip=0.01)
    assert loss > 0 and float(seen[0]) <= 0.01 + 1e-6


@pytest.mark.parametrize("decoder", sorted(DECODERS))
def test_same_seed_same_losses_bitwise(decoder: str):
    first = train(tiny_config(decoder), pairs=PAIRS, progress=False, log=quiet)
    second = train(tiny_config(decoder), pairs=PAIRS, progress=False, log=quiet)
    assert [h["loss"] for h in first.history] == [h["loss"] for h in second.history]
    other = train(tiny_config(decoder, seed=4), pairs=PAIRS, progress=False, log=quiet)
    assert [h["loss"] for h in other.history] != [h["loss"] for h in first.history]


def test_coin_per_step_and_logging():
    lines: list[str] = []
    result = train(tiny_config(coin_per_step=True, epochs=1), pairs=PAIRS, progress=False, log=lines.append)
    assert lines[0].startswith(f"{len(PAIRS)} pairs (") and "decoder=gru score=none H=8 device=cpu" in lines[0]
    assert len(result.history) == 1 and lines[1].startswith("| epoch:   1 | time:")
    assert "loss:" in lines[1] and "held-out loss:" in lines[1]


def test_time_budget_stops_between_epochs():
    lines: list[str] = []
    result = train(tiny_config(epochs=50, time_budget=1e-9), pairs=PAIRS, progress=False, log=lines.append)
    assert result.stopped_by_budget and len(result.history) == 1
    assert "time budget" in lines[-1]


@pytest.mark.parametrize(("clock", "epochs_run"), [("wall", 1), ("cpu", 3)])
def test_time_budget_counts_the_chosen_clock(monkeypatch, clock: str, epochs_run: int):
    ticks = iter(range(0, 10**9, 1000))  # every wall-clock reading is 1000 s after the last; CPU time runs as is
    monkeypatch.setattr("time.perf_counter", lambda: float(next(ticks)))
    config = tiny_config(epochs=3, time_budget=100.0, budget_clock=clock)
    result = train(config, pairs=PAIRS, progress=False, log=quiet, measure_bleu=False)
    assert len(result.history) == epochs_run and result.stopped_by_budget == (epochs_run < 3)


def test_dev_evaluation_reads_dev_only(tmp_path: Path):
    pairs = [Pair(f"phrase {i} .", f"i am number {i} .") for i in range(80)]
    rest, dev = split_pairs(pairs, eval_split="dev")
    _, test = split_pairs(pairs)
    assert dev and test
    config = tiny_config(epochs=1, eval_split="dev")
    result = train(config, pairs=pairs, checkpoint=tmp_path / "run", progress=False, log=quiet)
    assert result.evaluation["split"] == "by_english:dev" and result.evaluation["pairs"] == len(dev)
    trained_on = {word for pair in rest for word in pair.target.split()}
    assert set(result.vocabs.target.index2word[len(SPECIAL_TOKENS) :]) == trained_on  # neither dev nor test
    saved = load_checkpoint(tmp_path / "run").training
    assert saved["config"]["eval_split"] == "dev" and saved["evaluation"]["pairs"] == len(dev)
    with pytest.raises(InputError, match="eval_split: saved 'dev', now 'test'"):
        train(tiny_config(epochs=2), pairs=pairs, checkpoint=tmp_path / "run", resume=True, progress=False, log=quiet)


@settings(max_examples=10, deadline=None)
@given(decoder=st.sampled_from(sorted(DECODERS)), H=st.integers(1, 12), seed=st.integers(0, 100))
def test_xavier_draws_each_matrix_and_gate_within_its_glorot_bound(decoder: str, H: int, seed: int):
    torch.manual_seed(seed)
    model = build_model(decoder, 11, 13, hidden_size=H)
    embeddings = {n: p.clone() for n, p in model.named_parameters() if "embedding" in n}
    initialize(model, "xavier")
    for name, parameter in model.named_parameters():
        if "embedding" in name:
            assert torch.equal(parameter, embeddings[name]) and not parameter[PAD_IDX].any()
        elif parameter.dim() == 1:
            assert not parameter.any(), name
        else:
            gates = parameter.chunk(3) if ".gru." in name else (parameter,)
            for gate in gates:
                fan_out, fan_in = gate.shape
                assert gate.abs().max() <= math.sqrt(6 / (fan_in + fan_out)), name


def test_init_is_a_recorded_setting_that_changes_the_start(tmp_path: Path):
    quietly = {"pairs": PAIRS, "progress": False, "log": quiet}
    runs = {
        init: train(tiny_config("bahdanau", epochs=1, init=init), checkpoint=tmp_path / init, **quietly)
        for init in ("pytorch", "xavier")
    }
    assert runs["pytorch"].history[0]["loss"] != runs["xavier"].history[0]["loss"]
    assert load_checkpoint(tmp_path / "xavier").training["config"]["init"] == "xavier"
    again = train(tiny_config("bahdanau", epochs=1, init="xavier"), **quietly)
    assert again.history[0]["loss"] == runs["xavier"].history[0]["loss"]  # seeded: the same draw
    resumed = train(
        tiny_config("bahdanau", epochs=2, init="xavier"), checkpoint=tmp_path / "xavier", resume=True, **quietly
    )
    assert [h["epoch"] for h in resumed.history] == [1, 2]
    with pytest.raises(InputError, match="init must be one of pytorch, xavier"):
        TrainConfig(init="kaiming")


def test_config_is_checked():
    with pytest.raises(InputError, match="decoder must be one of bahdanau, gru, luong, got 'transformer'"):
        TrainConfig(decoder="transformer")
    with pytest.raises(InputError, match="teacher_forcing_ratio"):
        TrainConfig(teacher_forcing_ratio=1.5)
    with pytest.raises(InputError, match="batch_size"):
        TrainConfig(batch_size=0)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("schedule_over", "budget", "schedule_over='budget' spreads the schedule over the time budget"),
        ("batch_size", 0, r"batch_size must lie in \[1, 1000000\], got 0"),
        ("decoder", "transformer", "decoder must be one of bahdanau, gru, luong"),
        ("learning_rate", "fast", "learning_rate must be a number"),
    ],
)
def test_a_config_changed_after_it_was_built_is_checked_where_train_starts(tmp_path, field, value, message):
    config = tiny_config()
    setattr(config, field, value)
    with pytest.raises(InputError, match=message):
        train(config, pairs=PAIRS, checkpoint=tmp_path / "run", progress=False, log=quiet)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="config must be a TrainConfig, got dict"):
        train({"decoder": "gru"}, pairs=PAIRS, progress=False, log=quiet)


@pytest.mark.slow
def test_translate_and_evaluate_after_memorising():
    pairs = PAIRS[:8]
    config = tiny_config(
        "bahdanau", hidden_size=32, epochs=60, teacher_forcing_ratio=1.0, learning_rate=0.01, dropout=0.0
    )
    result = train(config, pairs=[p for p in pairs if p.source != "il est la ."] * 4, progress=False, log=quiet)
    seen, _ = split_pairs([p for p in pairs if p.source != "il est la ."], config.split)  # what it trained on
    scores = evaluate(result.model, result.vocabs, seen)
    assert scores.exact_match == 1.0 and scores.bleu == pytest.approx(100.0)
    assert translate(result.model, result.vocabs, ["Je suis fatigué."]) == ["i m tired ."]


@pytest.mark.parametrize(
    ("sentences", "message"),
    [
        (["   "], "sentence 1 is empty"),
        (["je suis fatigue .", ""], "sentence 2 is empty"),
        (["je suis un chat ."], "unknown fra word.*'un', 'chat'"),
        (["je suis la je suis la ."], "has 7 words.*at most 6"),
        ([], "no sentences"),
        ("je suis la .", "one string"),
    ],
)
def test_translate_rejects_bad_input(sentences, message: str):
    vocabs = build_vocabularies(PAIRS)
    model = build_model("gru", len(vocabs.source), len(vocabs.target), hidden_size=8)
    with pytest.raises(InputError, match=message):
        translate(model, vocabs, sentences)


@settings(max_examples=25, deadline=None)
@given(
    decoder=st.sampled_from(sorted(DECODERS)),
    B=st.integers(1, 4),
    S=st.integers(1, 6),
    T=st.integers(1, 5),
    H=st.integers(1, 9),
    V_src=st.integers(5, 12),
    V=st.integers(5, 12),
    data=st.data(),
)
def test_seq2seq_shapes_and_masks_property(decoder, B, S, T, H, V_src, V, data):
    torch.manual_seed(0)
    model = build_model(decoder, V_src, V, hidden_size=H).eval()
    lengths = torch.tensor(data.draw(st.lists(st.integers(1, S), min_size=B, max_size=B)))
    source = torch.randint(4, V_src, (B, S))
    source[torch.arange(S).unsqueeze(0) >= lengths.unsqueeze(1)] = PAD_IDX  # (B, S)
    target = torch.randint(4, V, (B, T))
    log_probs, attentions = model(source, lengths, target)
    assert log_probs.shape == (B, T, V) and torch.isfinite(log_probs).all()
    if attentions is not None:
        real = torch.arange(S).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
        assert attentions.shape == (B, T, S)
        assert torch.allclose(attentions.sum(-1), torch.ones(B, T), atol=1e-5)
        assert torch.all(attentions.masked_select(~real.unsqueeze(1).expand(B, T, S)) == 0)
    tokens, _ = greedy_decode(model, source, lengths, max_length=T)
    assert tokens.shape[0] == B and 1 <= tokens.shape[1] <= T


@settings(max_examples=300, deadline=None)
@given(
    k=st.floats(min_value=1.0, max_value=1e6),
    epoch=st.integers(min_value=1, max_value=1_000_000),
    ratio=st.floats(min_value=0.0, max_value=1.0),
)
def test_the_inverse_sigmoid_schedule_is_the_formula_and_never_overflows(k: float, epoch: int, ratio: float):
    """Any k and epoch that `TrainConfig` accepts (`--teacher-forcing-k 1 --epochs 800` once overflowed `exp`)."""
    from seq2seq_attention.translation.train import teacher_forcing_at

    value = teacher_forcing_at("inverse_sigmoid", ratio, k, epoch)
    assert 0.0 <= value <= ratio
    exponent = (epoch - 1) / k
    if exponent < 700:  # where the formula as written can be computed in floats
        assert value == pytest.approx(ratio * k / (k + math.exp(exponent)), rel=1e-9, abs=1e-300)
    later = teacher_forcing_at("inverse_sigmoid", ratio, k, epoch + 1)
    assert later <= value  # the schedule never rises


def test_a_long_schedule_trains_the_epochs_where_exp_overflowed():
    from seq2seq_attention.translation.corpus import make_loader
    from seq2seq_attention.translation.train import make_criterion, train_epoch

    config = tiny_config(epochs=800, teacher_forcing_schedule="inverse_sigmoid", teacher_forcing_k=1.0)
    vocabs = build_vocabularies(PAIRS)
    model = build_model("gru", len(vocabs.source), len(vocabs.target), hidden_size=8)
    loader = make_loader(TranslationDataset(PAIRS, vocabs), 4, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters())
    for epoch, expected in ((711, 0.5 * math.exp(-710)), (800, 0.0)):  # exp(710) overflowed in epoch 711
        loss, ratio = train_epoch(model, loader, optimizer, make_criterion(config), config, epoch)
        assert math.isfinite(loss) and ratio == pytest.approx(expected, rel=1e-6, abs=0.0)


def test_the_teacher_forcing_schedule_decays_trains_checkpoints_and_resumes(tmp_path: Path):
    from seq2seq_attention.translation.train import teacher_forcing_at

    rates = [teacher_forcing_at("inverse_sigmoid", 1.0, 5.0, epoch) for epoch in range(1, 31)]
    assert rates[0] == pytest.approx(5 / 6) and all(a > b for a, b in zip(rates, rates[1:], strict=False))
    assert rates[-1] < 0.02 and teacher_forcing_at("constant", 0.7, 5.0, 12) == 0.7
    config = tiny_config("gru", epochs=3, teacher_forcing_schedule="inverse_sigmoid", teacher_forcing_k=2.0)
    whole = train(config, pairs=PAIRS, progress=False, log=quiet, measure_bleu=False)
    assert [h["teacher_forcing_ratio"] for h in whole.history] == pytest.approx(
        [teacher_forcing_at("inverse_sigmoid", config.teacher_forcing_ratio, 2.0, e) for e in (1, 2, 3)]
    )
    first = tiny_config("gru", epochs=1, teacher_forcing_schedule="inverse_sigmoid", teacher_forcing_k=2.0)
    train(first, pairs=PAIRS, checkpoint=tmp_path, progress=False, log=quiet, measure_bleu=False)
    resumed = train(config, pairs=PAIRS, checkpoint=tmp_path, resume=True, progress=False, log=quiet)
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in whole.history]
    assert load_checkpoint(tmp_path).training["config"]["teacher_forcing_schedule"] == "inverse_sigmoid"
    with pytest.raises(InputError, match="config changed.*teacher_forcing_schedule"):
        train(tiny_config("gru", epochs=3), pairs=PAIRS, checkpoint=tmp_path, resume=True, log=quiet)


def test_load_translator_reads_the_length_limit_once_and_refuses_other_tasks(tmp_path: Path):
    from seq2seq_attention.core.vocabulary import Vocabularies
    from seq2seq_attention.model.classifier import build_classifier
    from seq2seq_attention.translation.translator import load_translator

    vocabs = build_vocabularies(PAIRS)
    model = build_model("gru", len(vocabs.source), len(vocabs.target), hidden_size=8)
    save_checkpoint(tmp_path / "t", model, vocabs, training={"config": {"max_words": 7}})
    assert load_translator(tmp_path / "t").max_words == 7
    save_checkpoint(tmp_path / "t", model, vocabs)
    assert load_translator(tmp_path / "t").max_words == TrainConfig().max_words
    for bad in ("six", 0, 10**9, True):
        save_checkpoint(tmp_path / "t", model, vocabs, training={"config": {"max_words": bad}})
        with pytest.raises(InputError, match="malformed training config: max_words must"):
            load_translator(tmp_path / "t")
    classifier = build_classifier("mean", len(vocabs.source), embedding_size=4, dense_size=3)
    save_checkpoint(tmp_path / "c", classifier, Vocabularies(vocabs.source))
    with pytest.raises(InputError, match="holds a 'sentiment' model, not a translator"):
        load_translator(tmp_path / "c")
    with pytest.raises(InputError, match="no config with a known task"):
        save_checkpoint(tmp_path / "x", nn.Linear(2, 2), vocabs)


def test_every_task_has_a_builder_and_a_name_and_both_models_follow_the_protocol():
    from seq2seq_attention.core.checkpoint import TASK_NAMES, Checkpointable, model_builders
    from seq2seq_attention.model.classifier import build_classifier

    assert model_builders() == {"translation": build_model, "sentiment": build_classifier}
    assert set(TASK_NAMES) == set(model_builders())
    translator = build_model("gru", 11, 13, hidden_size=8)
    classifier = build_classifier("mean", 11, embedding_size=4, dense_size=3)
    for model, task in ((translator, "translation"), (classifier, "sentiment")):
        assert isinstance(model, Checkpointable) and model.config["task"] == task
    assert translator.vocabulary_sizes == {"source": 11, "target": 13}
    assert classifier.vocabulary_sizes == {"source": 11}


def test_configs_refuse_non_finite_and_out_of_range_numbers():
    from seq2seq_attention.sentiment.train import SentimentConfig
    from seq2seq_attention.translation.train import TrainConfig

    for field, value in [("weight_decay", math.nan), ("learning_rate", math.inf), ("batch_size", 0), ("dropout", 1.0)]:
        refused(lambda field=field, value=value: TrainConfig(**{field: value}), field)
    refused(lambda: TrainConfig(epochs=2.5), "epochs", "integer")
    refused(lambda: SentimentConfig(batch_size=0), "batch_size")
    refused(lambda: SentimentConfig(sources=()), "sources")


def test_a_schedule_over_the_budget_follows_the_share_of_the_budget_spent():
    from seq2seq_attention.core.training import learning_rate_at
    from seq2seq_attention.translation.train import BUDGET_SCHEDULE_STEPS, budget_scheduler

    spent = iter([0.0, 0.5, 1.0])  # the share of the budget at construction, then after each step
    optimizer = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)
    scheduler = budget_scheduler(optimizer, "cosine", lambda: next(spent))
    rates = [optimizer.param_groups[0]["lr"]]
    for _ in range(2):
        optimizer.step()
        scheduler.step()
        rates.append(optimizer.param_groups[0]["lr"])
    total = BUDGET_SCHEDULE_STEPS
    assert rates[0] == pytest.approx(0.1 / (0.05 * total))  # the first warm-up step
    assert rates[1] == pytest.approx(learning_rate_at("cosine", 0.1, total // 2, total))
    assert rates[1] == pytest.approx(0.1 * 0.5 * (1 + math.cos(math.pi * 0.45 / 0.95)), rel=1e-3)
    assert 0 <= rates[2] < 1e-8  # the budget spent: the decay has reached zero


def test_a_budget_schedule_trains_within_its_budget_and_needs_one(monkeypatch):
    ticks = iter(range(0, 10**9, 10))  # every wall-clock reading is 10 s after the last
    monkeypatch.setattr("time.perf_counter", lambda: float(next(ticks)))
    config = tiny_config(epochs=1000, time_budget=300.0, schedule="cosine", schedule_over="budget")
    result = train(config, pairs=PAIRS, progress=False, log=quiet, measure_bleu=False)
    assert result.stopped_by_budget and 1 < len(result.history) < 1000
    with pytest.raises(InputError, match="time_budget"):
        tiny_config(schedule_over="budget")
    with pytest.raises(InputError, match="schedule_over"):
        tiny_config(schedule_over="steps")


def test_average_last_keeps_the_mean_of_the_last_epochs_weights():
    one = train(tiny_config("bahdanau", epochs=1), pairs=PAIRS, progress=False, log=quiet, measure_bleu=False)
    two = train(tiny_config("bahdanau", epochs=2), pairs=PAIRS, progress=False, log=quiet, measure_bleu=False)
    averaged = train(tiny_config("bahdanau", epochs=2, average_last=2), pairs=PAIRS, progress=False, log=quiet)
    assert [h["loss"] for h in averaged.history] == [h["loss"] for h in two.history]  # the same training
    first, last, mean = one.model.state_dict(), two.model.state_dict(), averaged.model.state_dict()
    assert any(not torch.equal(first[k], last[k]) for k in first)
    for k in mean:
        torch.testing.assert_close(mean[k], (first[k] + last[k]) / 2)
    kept = train(tiny_config("bahdanau", epochs=2, average_last=5), pairs=PAIRS, progress=False, log=quiet)
    for k in mean:  # fewer epochs than asked for: the mean of those there are
        torch.testing.assert_close(kept.model.state_dict()[k], mean[k])
    with pytest.raises(InputError, match="average_last"):
        tiny_config(average_last=0)


@pytest.mark.parametrize("finished", [False, True], ids=["interrupted", "finished"])
def test_a_run_that_averages_its_last_epochs_is_not_resumed(tmp_path, finished):
    """Resuming would restart the average empty (interrupted), or train on from the averaged weights beside the last
    epoch's Adam moments (finished): either way not the run it continues, so it is refused before any training."""
    checkpoint = tmp_path / "run"
    config = tiny_config("bahdanau", epochs=2 if finished else 3, average_last=2)
    epochs = 2 if finished else 1
    train(
        replace(config, epochs=epochs),
        pairs=PAIRS,
        checkpoint=checkpoint,
        log=quiet,
        progress=False,
        measure_bleu=False,
    )
    before = {p.name: p.read_bytes() for p in checkpoint.iterdir()}
    with pytest.raises(
        InputError, match=r"cannot resume from .*run: its run averages the weights of its last 2 epochs"
    ):
        train(replace(config, epochs=4), pairs=PAIRS, checkpoint=checkpoint, resume=True, log=quiet, progress=False)
    assert {p.name: p.read_bytes() for p in checkpoint.iterdir()} == before
    one = train(
        replace(config, average_last=1, epochs=1),
        pairs=PAIRS,
        checkpoint=tmp_path / "plain",
        log=quiet,
        progress=False,
        measure_bleu=False,
    )
    resumed = train(
        replace(config, average_last=1, epochs=2),
        pairs=PAIRS,
        checkpoint=tmp_path / "plain",
        resume=True,
        log=quiet,
        progress=False,
        measure_bleu=False,
    )
    assert [h["epoch"] for h in resumed.history] == [1, 2] and one.history == resumed.history[:1]  # plain: resumed
