"""The settings of a translation training run (`TrainConfig`), apart from the training code.

A checkpoint saves them; `load_translator` reads the length limit back through them, and the
command line builds its options from their fields, so reading them needs no training module, and
no torch: the names and limits come from `defaults` (the model's rules are checked in
`__post_init__`, which imports the model).
"""

from dataclasses import dataclass

from ..core.config import SCHEDULES, check_config, setting
from ..core.errors import InputError
from ..model.defaults import DROPOUT, EVAL_SPLITS, HIDDEN_SIZE, MAX_WORDS, SPLITS
from ..model.names import ATTENTION_DECODERS, DECODER_NAMES, SCORE_NAMES
from ..model.rules import MAX_SIZE

BUDGET_CLOCKS = {"wall": "perf_counter", "cpu": "process_time"}
"""What `time_budget` counts: wall-clock seconds, or this process's CPU seconds (steady on a shared machine)."""

INITIALIZATIONS = ("pytorch", "xavier")
"""How the weights start (`initialize`)."""

SCHEDULE_SPANS = ("epochs", "budget")
"""What the learning-rate schedule spans (`schedule_over`): the steps of `epochs` epochs, or the time budget."""

TEACHER_FORCING_SCHEDULES = ("constant", "inverse_sigmoid")
"""How the teacher-forcing ratio changes over the epochs (`teacher_forcing_at`)."""


@dataclass
class TrainConfig:
    """Everything that decides a training run (saved in the checkpoint).

    Every field's default, range and help text is written here once: the command line
    (`seq2seq-attention train --help`) is built from these fields, and `__post_init__`
    checks them, so a bad value is one `InputError` wherever it comes from.
    """

    decoder: str = setting(
        "gru",
        f"the decoder: {', '.join(n for n in DECODER_NAMES if n not in ATTENTION_DECODERS)} (no attention), "
        f"{' or '.join(ATTENTION_DECODERS)}",
        choices=tuple(sorted(DECODER_NAMES)),
    )
    score: str | None = setting(
        None, "the attention's score function (default: the decoder's own, see DECODERS)", choices=SCORE_NAMES
    )
    hidden_size: int = setting(HIDDEN_SIZE, "H, the size of embeddings and GRU states", low=1, high=MAX_SIZE)
    dropout: float = setting(DROPOUT, "dropout on the embeddings", low=0.0, high=1.0, high_open=True)
    batch_size: int = setting(32, "sentence pairs per batch", low=1, high=1_000_000)
    learning_rate: float = setting(1e-3, "Adam's step size", low=0.0, high=10.0, low_open=True)
    epochs: int = setting(40, "passes over the training split", low=1, high=1_000_000)
    teacher_forcing_ratio: float = setting(
        1.0,
        "chance of feeding the true previous word (1: teacher forcing, 0.5: the tutorial's mixed training)",
        low=0.0,
        high=1.0,
    )
    teacher_forcing_schedule: str = setting(
        "constant",
        "constant: the ratio every epoch; inverse_sigmoid: ratio * k / (k + exp((epoch - 1) / k)) (scheduled sampling)",
        choices=TEACHER_FORCING_SCHEDULES,
    )
    teacher_forcing_k: float = setting(
        5.0, "k of the inverse sigmoid decay: larger keeps teacher forcing longer", low=1.0, high=1e6
    )
    coin_per_step: bool = setting(False, "toss the teacher-forcing coin at every step, not once per sentence")
    clip: float = setting(1.0, "largest gradient norm (0: no clipping)", low=0.0, high=1e6)
    seed: int = setting(0, "seeds the weights, dropout, the coins and the batch order", low=0, high=2**32 - 1)
    max_words: int = setting(MAX_WORDS, "the data filter's length limit (both sides)", low=1, high=1000)
    split: str = setting(
        "by_english", "the held-out rule: by_english (no target on both sides) or by_french", choices=tuple(SPLITS)
    )
    time_budget: float | None = setting(
        None,
        "seconds; after the first epoch no epoch starts that would overrun it",
        low=0.0,
        high=1e9,
        low_open=True,
    )
    budget_clock: str = setting(
        "wall",
        "what the time budget counts: wall-clock seconds, or this process's CPU seconds",
        choices=tuple(BUDGET_CLOCKS),
    )
    eval_split: str = setting(
        "test",
        "where the held-out loss and BLEU are measured: test, or dev (carved from the training split, which then "
        "trains without it; the test split is not read)",
        choices=EVAL_SPLITS,
    )
    label_smoothing: float = setting(
        0.0, "weight moved from the true word to all words in the loss", low=0.0, high=1.0, high_open=True
    )
    schedule: str = setting("constant", "learning-rate schedule (cosine: warm-up, then decay)", choices=SCHEDULES)
    schedule_over: str = setting(
        "epochs",
        "what the schedule spans: the steps of all the epochs, or the time budget (each step's rate is that of the "
        "share of time_budget spent, in budget_clock; the run may stop before its epochs)",
        choices=SCHEDULE_SPANS,
    )
    average_last: int = setting(
        1, "the weights kept are the mean of the last N epochs' weights (1: the last epoch's)", low=1, high=1000
    )
    weight_decay: float = setting(0.0, "AdamW's decoupled weight decay (0: plain Adam)", low=0.0, high=10.0)
    bidirectional: bool = setting(False, "a bidirectional encoder: two GRUs of H/2 read the sentence both ways")
    tie_embeddings: bool = setting(False, "the decoder's output layer shares its weight with the target embedding")
    input_feeding: bool = setting(
        False, "the luong decoder feeds its previous attentional vector into the GRU with the next token"
    )
    init: str = setting(
        "pytorch",
        "how the weights start: pytorch (each layer's own default) or xavier (Glorot-uniform matrices, zero biases)",
        choices=INITIALIZATIONS,
    )

    def __post_init__(self) -> None:
        check_config(self)
        if self.schedule_over == "budget" and self.time_budget is None:
            raise InputError("schedule_over='budget' spreads the schedule over the time budget: set time_budget")
        # the model's rules, with torch: after parsing, never for --help
        from ..model.decoders import check_input_feeding, choose_score
        from ..model.encoder import check_bidirectional

        choose_score(self.decoder, self.score)  # the name only: `build_model` resolves the default
        check_input_feeding(self.decoder, self.input_feeding)
        check_bidirectional(self.hidden_size, self.bidirectional)

    RESUMABLE_CHANGES = ("epochs", "time_budget", "budget_clock")
    """Fields that may differ between a run and the run it resumes."""
    LEGACY_DEFAULTS = {"split": "by_french", "teacher_forcing_schedule": "constant", "teacher_forcing_k": 5.0}
    """Values of fields that a checkpoint saved before the field existed had in effect."""


def not_resumable_when_averaged(average_last: int) -> str:
    """Why a run that averages its last epochs' weights cannot be resumed (the decision, said once)."""
    return (
        f"its run averages the weights of its last {average_last} epochs (average_last), and a checkpoint keeps "
        "neither that running average nor, once averaged, the weights the optimizer state belongs to, so a resumed "
        "run would not be the run it continues"
    )
