"""The numbers the course prose states about a run, read from the committed files that hold them.

A page writes ``{{ bleu_bahdanau_packaged_h256_test }}`` where it would otherwise type 37.56; the mkdocs-macros
plugin (mkdocs.yml) renders it at build time from `values()`. Each name says what the value is, which model and
recipe it belongs to and on which split it was measured:

    <quantity>_<model>_<recipe>_<split>        e.g. bleu_luong_compare_h128_test, pairs_test_by_french

- recipe ``packaged_h256`` / ``packaged_h128``: the checkpoints shipped in ``src/seq2seq_attention/pretrained/``
  (``scripts/train_seq2seq.sh``); their held-out evaluation is in each ``checkpoint.json``.
- recipe ``compare_h128``: the chapter 3 comparison (``results/attention/results.json``, H=128, 30 epochs, three
  seeds, mean over seeds unless the name says ``seed0``).
- split ``test``: the held-out pairs of the main split (``by_english``); ``by_french`` names the leaky split.
- the corpus counts (pairs, splits, vocabulary sizes) come from ``results/corpus/counts.json``
  (``python scripts/corpus_counts.py``, checked against the bundled corpus by tests/test_course_values.py).

Every file goes through a validating reader: a missing, malformed, truncated or mistyped file stops the build with
one line that names the file, the entry, what was expected and the command that re-creates the file
(`ResultsFileError`). Reading needs only the standard library, so the site builds without torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

COMPARE = "results/attention/results.json"
CORPUS = "results/corpus/counts.json"
BENCHMARK = "results/performance/benchmark.json"
BENCHMARK_2 = "results/performance/threads2/benchmark.json"
RECIPE = "results/quality"
EXTERNAL = "results/quality/external/{name}.json"
SEQ2SEQ = "results/seq2seq/metrics.json"
FENCE_RECORD = "docs/fence-runs.json"
SENTIMENT = "results/sentiment/accuracy.json"
PROFILE = "results/performance/profile.json"
ONE_PATH = "results/performance/one_path.json"
PACKAGED = "src/seq2seq_attention/pretrained/{name}/checkpoint.json"
LIVE = "docs/assets/live"
LIVE_RUNTIME = "docs/assets/onnxruntime-web/ort-wasm.wasm"

COMMANDS = {
    COMPARE: "python scripts/compare_attention.py --epochs 30 --time-budget 240 --hidden-size 128 --batch-size 64 "
    "--learning-rate 0.002 --seeds 0 1 2 --threads 1",
    CORPUS: "python scripts/corpus_counts.py",
    BENCHMARK: "python -m benchmarks.run --threads 1 --out results/performance",
    BENCHMARK_2: "python -m benchmarks.run --threads 2 --skip-quality --out results/performance/threads2",
    SENTIMENT: "python scripts/train_sentiment.py --threads 1",
    PROFILE: "python -m benchmarks.profile_trainer --warmup 20 --steps 86 --out results/performance/profile.json",
    ONE_PATH: "python -m benchmarks.trainer_ab --rounds 5 (results/performance/README.md)",
    FENCE_RECORD: "python -m pytest docs --record-fences (on a GPU machine: add --devices=cuda)",
    SEQ2SEQ: "scripts/train_seq2seq.sh && python scripts/seq2seq_report.py",
    RECIPE: "OMP_NUM_THREADS=1 python scripts/ablation.py run --seeds 0 1 2",
    f"{RECIPE}/final": "OMP_NUM_THREADS=1 python scripts/ablation.py final --seeds 0 1 2 3 4",
    **{
        EXTERNAL.format(name=name): "no command: numbers measured elsewhere with Joey NMT, copied from the issue that "
        "the file's source names"
        for name in ("joey-transformer", "joey-recurrent")
    },
    PACKAGED: "scripts/train_seq2seq.sh {name}",
    LIVE: "seq2seq-attention export-onnx --out docs/assets/live --overwrite (docs/live.md: the Luong graphs)",
    LIVE_RUNTIME: "copy ort-wasm.wasm of onnxruntime-web 1.17.3 from npm (README)",
}
"""How each file is re-created (results/*/README.md says the same)."""

COMPARE_DECODERS = {
    "gru": "gru",
    "luong": "luong",
    "luong:scaled_dot": "luong_scaled",
    "luong:general": "luong_general",
    "bahdanau": "bahdanau",
}
"""The comparison's decoders and the model part of their names."""

PACKAGED_MODELS = {
    "bahdanau": "bahdanau_packaged_h256",
    "bahdanau-bi": "bahdanau_bi_packaged_h256",
    "gru": "gru_packaged_h128",
}
"""The packaged checkpoints (folder name) and the model and recipe part of their names."""

SPECIAL_TOKENS = ("<pad>", "<sos>", "<eos>", "<unk>")


class ResultsFileError(ValueError):
    """A results file the prose reads is missing, malformed, truncated or holds a value of the wrong kind."""


def _fail(relative: str, entry: str, expected: str, found: str, command: str, them: str = "it") -> None:
    """Stop the build with the one line that names the file, the entry, what was expected and the command."""
    raise ResultsFileError(
        f"{relative}: {entry}: expected {expected}, found {found}; re-create {them} with `{command}`"
    )


class Reader:
    """One results file, parsed strictly; `get` walks to an entry and checks its kind."""

    def __init__(self, relative: str, command: str, root: Path = ROOT) -> None:
        self.relative = relative
        self.command = command
        path = root / relative
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.fail("(the file)", "a file", "none")
        except UnicodeDecodeError as error:
            self.fail("(the file)", "UTF-8 text", f"bytes that are not UTF-8 at byte {error.start}")

        def constant(name: str) -> None:
            self.fail("(the file)", "strict JSON (no NaN or Infinity)", name)

        try:
            self.data = json.loads(text, parse_constant=constant)
        except json.JSONDecodeError as error:
            found = "an empty file" if not text.strip() else f"{error.msg} at line {error.lineno} column {error.colno}"
            self.fail("(the file)", "a complete JSON document", found + " (truncated or malformed?)")

    def fail(self, entry: str, expected: str, found: str) -> None:
        _fail(self.relative, entry, expected, found, self.command)

    def get(self, *keys: str | int, kind: str = "number") -> Any:
        """The entry at `keys`, checked to be of `kind` (number, fraction, count, text, list, dict)."""
        value: Any = self.data
        walked: list[str] = []
        for key in keys:
            walked.append(f"[{key}]" if isinstance(key, int) else str(key))
            where = ".".join(walked).replace(".[", "[")
            if isinstance(key, int):
                if not isinstance(value, list) or not -len(value) <= key < len(value):
                    self.fail(where, f"a list with an entry {key}", _describe(value))
            elif not isinstance(value, dict) or key not in value:
                self.fail(where, f"an object with the key {key!r}", _describe(value))
            value = value[key]
        where = ".".join(walked).replace(".[", "[") or "(the file)"
        check, expected = KINDS[kind]
        if not check(value):
            self.fail(where, expected, _describe(value))
        return value

    def indices(self, *keys: str | int) -> range:
        """The indices of the non-empty list at `keys`."""
        return range(len(self.get(*keys, kind="list")))

    def each(self, *keys: str | int, kind: str = "number") -> list[Any]:
        """Every entry of the non-empty list at `keys`, each checked to be of `kind`."""
        return [self.get(*keys, index, kind=kind) for index in self.indices(*keys)]


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "number": (_number, "a finite number"),
    "fraction": (lambda v: _number(v) and 0 <= v <= 1, "a number between 0 and 1"),
    "count": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a whole number >= 0"),
    "text": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "list": (lambda v: isinstance(v, list) and len(v) > 0, "a non-empty list"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
}


def _describe(value: object) -> str:
    if isinstance(value, dict):
        return f"an object with keys {sorted(value)[:6]}" + (" ..." if len(value) > 6 else "")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return f"{type(value).__name__} {value!r}"[:80]


def count(value: int) -> str:
    """A count as the prose writes it: 5,318."""
    return f"{value:,}"


def score(value: float) -> str:
    """A BLEU score to two decimals, as sacrebleu reports it."""
    return f"{value:.2f}"


def percent(fraction: float, digits: int = 1) -> str:
    """A fraction as a percentage without the sign: 0.1828 -> 18.3."""
    return f"{100 * fraction:.{digits}f}"


def alignment_statistics(weights: list[list[float]]) -> dict[str, float]:
    """What a heatmap shows, in three numbers (the same formulas as the fence on docs/attention/heatmaps.md).

    - ``diagonal``: the mean over output words t of the weight within one column of the diagonal (|j - t| <= 1).
    - ``subject``: the weight the first output word (i, he) puts on the first source token (je, il).
    - ``verb``: the weight the second output word (m, is) puts on the second source token (suis, est, me).
    """
    rows = len(weights)
    diagonal = sum(w for t, row in enumerate(weights) for j, w in enumerate(row) if abs(j - t) <= 1) / rows
    return {"diagonal": diagonal, "subject": weights[0][0], "verb": weights[1][1]}


def _compare(values: dict[str, str], root: Path) -> None:
    reader = Reader(COMPARE, COMMANDS[COMPARE], root)
    for key in ("pairs", "train", "held_out"):
        reader.get("data", key, kind="count")
    settings = reader.get("settings", kind="dict")
    if settings.get("split") != "by_english":
        reader.fail("settings.split", "'by_english' (the prose names it the main split)", repr(settings.get("split")))
    values["hidden_compare_h128"] = str(reader.get("settings", "hidden_size", kind="count"))
    values["epochs_compare_h128"] = str(reader.get("settings", "epochs", kind="count"))
    found = set()
    for index in reader.indices("models"):
        decoder = reader.get("models", index, "decoder", kind="text")
        if decoder not in COMPARE_DECODERS:
            continue
        found.add(decoder)
        name = COMPARE_DECODERS[decoder]
        values[f"bleu_{name}_compare_h128_test"] = score(reader.get("models", index, "bleu"))
        values[f"bleu_std_{name}_compare_h128_test"] = score(reader.get("models", index, "bleu_std"))
        for seed, bleu in enumerate(reader.each("models", index, "bleu_per_seed")):
            values[f"bleu_{name}_compare_h128_seed{seed}_test"] = score(bleu)
        values[f"exact_{name}_compare_h128_test"] = percent(reader.get("models", index, "exact_match", kind="fraction"))
        if decoder != "gru":
            peak = reader.get("models", index, "mean_max_weight", kind="fraction")
            values[f"peak_{name}_compare_h128_test"] = f"{peak:.2f}"
    missing = set(COMPARE_DECODERS) - found
    if missing:
        reader.fail("models", f"a model for each of {sorted(COMPARE_DECODERS)}", f"none for {sorted(missing)}")
    values["batch_compare_h128"] = str(reader.get("settings", "batch_size", kind="count"))
    values["learning_rate_compare_h128"] = f"{reader.get('settings', 'learning_rate'):g}"
    values["teacher_forcing_percent_compare_h128"] = percent(
        reader.get("settings", "teacher_forcing_ratio", kind="fraction"), 0
    )
    values["time_budget_compare_h128"] = f"{reader.get('settings', 'time_budget'):g}"
    bleu = {d: float(values[f"bleu_{COMPARE_DECODERS[d]}_compare_h128_test"]) for d in COMPARE_DECODERS}
    for index in reader.indices("comparisons"):
        baseline = reader.get("comparisons", index, "baseline", kind="text")
        system = reader.get("comparisons", index, "system", kind="text")
        if baseline not in COMPARE_DECODERS or system not in COMPARE_DECODERS:
            reader.fail(f"comparisons[{index}]", f"decoders among {sorted(COMPARE_DECODERS)}", f"{baseline}, {system}")
        name = f"{COMPARE_DECODERS[system]}_vs_{COMPARE_DECODERS[baseline]}_compare_h128"
        differences = reader.each("comparisons", index, "difference_per_seed")
        for seed, difference in enumerate(differences):
            values[f"diff_{name}_seed{seed}_test"] = f"{difference:+.2f}"
        # the mean difference is that of the two means as the table shows them
        _paired(values, f"{name}_test", differences, mean=bleu[system] - bleu[baseline])
        values[f"p_max_{name}_test"] = f"{max(reader.each('comparisons', index, 'p_value_per_seed')):g}"
    for decoder in ("bahdanau", "luong"):
        stats = []
        for index in reader.indices("heatmaps"):
            weights = reader.get("heatmaps", index, decoder, "weights", kind="list")
            source = reader.get("heatmaps", index, "source", kind="text")
            if len(weights) < 2:
                reader.fail(f"heatmaps[{index}].{decoder}.weights", "two rows or more", _describe(weights))
            for t, row in enumerate(weights):
                if not isinstance(row, list) or len(row) != len(source.split()) + 1 or not all(map(_number, row)):
                    reader.fail(
                        f"heatmaps[{index}].{decoder}.weights[{t}]",
                        f"{len(source.split()) + 1} numbers (the source words and <eos>)",
                        _describe(row),
                    )
            stats.append(alignment_statistics(weights))
        name = COMPARE_DECODERS[decoder]
        for key in ("diagonal", "subject", "verb"):
            values[f"{key}_{name}_compare_h128_seed0_heatmaps"] = f"{sum(s[key] for s in stats) / len(stats):.2f}"


def _corpus(values: dict[str, str], root: Path) -> None:
    reader = Reader(CORPUS, COMMANDS[CORPUS], root)
    values["lines_corpus_raw"] = count(reader.get("lines", kind="count"))
    values["pairs_total"] = count(reader.get("pairs", kind="count"))
    for split in ("by_english", "by_french"):
        values[f"pairs_train_{split}"] = count(reader.get("splits", split, "train", kind="count"))
        values[f"pairs_test_{split}"] = count(reader.get("splits", split, "test", kind="count"))
        values[f"pairs_dev_{split}"] = count(reader.get("splits", split, "dev", kind="count"))
        values[f"overlap_pairs_{split}"] = count(reader.get("splits", split, "test_targets_in_train", kind="count"))
        values[f"overlap_percent_{split}"] = percent(reader.get("splits", split, "target_overlap", kind="fraction"))
    for side in ("source", "target"):
        entries = reader.get("vocabularies", "all_pairs", f"{side}_entries", kind="count")
        words = entries - len(SPECIAL_TOKENS)
        values[f"vocab_words_{side}_all_pairs"] = count(words)
        values[f"tutorial_n_words_{side}_all_pairs"] = count(words + 2)  # the tutorial's Lang counts SOS and EOS


def _packaged(values: dict[str, str], root: Path) -> None:
    for name, label in PACKAGED_MODELS.items():
        relative = PACKAGED.format(name=name)
        reader = Reader(relative, COMMANDS[PACKAGED].format(name=name), root)
        split = reader.get("training", "evaluation", "split", kind="text")
        if split != "by_english":
            reader.fail("training.evaluation.split", "'by_english'", repr(split))
        values[f"bleu_{label}_test"] = score(reader.get("training", "evaluation", "bleu"))
        values[f"exact_{label}_test"] = percent(reader.get("training", "evaluation", "exact_match", kind="fraction"))
        values[f"pairs_test_{label}"] = count(reader.get("training", "evaluation", "pairs", kind="count"))
        values[f"hidden_{label}"] = str(reader.get("config", "hidden_size", kind="count"))
        reader.get("training", "config", kind="dict")
        for key, short in (("batch_size", "batch"), ("epochs", "epochs_cap"), ("learning_rate", "learning_rate")):
            values[f"{short}_{label}"] = f"{reader.get('training', 'config', key):g}"
        for key in ("time_budget", "label_smoothing", "dropout"):
            values[f"{key}_{label}"] = f"{reader.get('training', 'config', key):g}"
        values[f"epochs_{label}"] = str(reader.get("training", "epoch", kind="count"))
        values[f"size_mb_{label}"] = f"{reader.get('files', 'model', 'bytes', kind='count') / 1e6:.1f}"
        if name == "bahdanau":
            words = reader.get("vocabularies", "source", "index2word", kind="list")
            target = reader.get("vocabularies", "target", "index2word", kind="list")
            if list(words[: len(SPECIAL_TOKENS)]) != list(SPECIAL_TOKENS):
                reader.fail("vocabularies.source.index2word", f"to start with {list(SPECIAL_TOKENS)}", str(words[:4]))
            values["vocab_entries_source_packaged"] = count(len(words))
            values["vocab_words_source_packaged"] = count(len(words) - len(SPECIAL_TOKENS))
            values["vocab_entries_target_packaged"] = count(len(target))


SEQ2SEQ_RUNS = {
    "gru": "gru_packaged_h128",
    "gru-mixed": "gru_mixed_script_h128",
    "bahdanau": "bahdanau_packaged_h256",
    "bahdanau-bi": "bahdanau_bi_packaged_h256",
}
"""The runs of scripts/train_seq2seq.sh that the prose compares (seed 0 each) and their names."""


def _seq2seq(values: dict[str, str], root: Path) -> None:
    """The paired comparisons of the packaged translators' runs (results/seq2seq/metrics.json, one seed each)."""
    reader = Reader(SEQ2SEQ, COMMANDS[SEQ2SEQ], root)
    for run, name in SEQ2SEQ_RUNS.items():
        if reader.get("runs", run, "split", kind="text") != "by_english":
            reader.fail(f"runs.{run}.split", "'by_english'", repr(reader.get("runs", run, "split")))
        values[f"best_test_loss_{name}_test"] = f"{reader.get('runs', run, 'best_test_loss'):.2f}"
    for index in reader.indices("comparisons"):
        runs = [reader.get("comparisons", index, side, kind="text") for side in ("baseline", "system")]
        names = [run.removesuffix(" (greedy)") for run in runs]
        if not all(run.endswith(" (greedy)") for run in runs) or not all(n in SEQ2SEQ_RUNS for n in names):
            continue
        name = f"{SEQ2SEQ_RUNS[names[1]]}_vs_{SEQ2SEQ_RUNS[names[0]]}"
        values[f"diff_{name}_seed0_test"] = f"{reader.get('comparisons', index, 'difference'):+.2f}"
        values[f"p_{name}_seed0_test"] = f"{reader.get('comparisons', index, 'p_value', kind='fraction'):g}"


def _fence_record(values: dict[str, str], root: Path) -> None:
    """When and where the fences' GPU runs were last recorded (the newest CUDA run in the record)."""
    reader = Reader(FENCE_RECORD, COMMANDS[FENCE_RECORD], root)
    newest = None
    for page in reader.get("pages", kind="dict"):
        for index in reader.indices("pages", page):
            runs = reader.get("pages", page, index, "runs", kind="dict")
            if "cuda" in runs:
                run = tuple(
                    reader.get("pages", page, index, "runs", "cuda", key, kind="text")
                    for key in ("date", "device", "torch")
                )
                newest = max(newest or run, run)
    if newest is None:
        reader.fail("pages", "at least one fence run recorded on CUDA", "none")
    values["gpu_record_date"], values["gpu_record_device"], values["gpu_record_torch"] = newest


def _sentiment(values: dict[str, str], root: Path) -> None:
    """Chapter 5: the classifiers' data sizes, mean test accuracy over seeds and the figure's first sentence."""
    reader = Reader(SENTIMENT, COMMANDS[SENTIMENT], root)
    for index in reader.indices("table"):
        setup = reader.get("table", index, "setup", kind="text")
        kind = reader.get("table", index, "kind", kind="text")
        test = reader.get("table", index, "test_size", kind="count")
        values[f"test_sentences_sentiment_{setup}"] = count(test)
        values[f"train_sentences_sentiment_{setup}"] = count(reader.get("table", index, "train_size", kind="count"))
        values[f"points_per_sentence_sentiment_{setup}_test"] = f"{100 / test:.1f}"
        values[f"accuracy_mean_{kind}_sentiment_{setup}_test"] = (
            f"{reader.get('table', index, 'mean', kind='fraction'):.2f}"
        )
        parameters = reader.get("table", index, "parameters", kind="count")
        values[f"parameters_ten_thousands_{kind}_sentiment_{setup}"] = str(round(parameters / 10_000))
    recipe = Reader("results/sentiment/checkpoints/all_attention/checkpoint.json", COMMANDS[SENTIMENT], root)
    values["batch_attention_sentiment"] = str(recipe.get("training", "config", "batch_size", kind="count"))
    values["learning_rate_attention_sentiment"] = f"{recipe.get('training', 'config', 'learning_rate'):g}"
    values["clip_attention_sentiment"] = f"{recipe.get('training', 'config', 'clip'):g}"
    reader.get("figures", "all", "sentences", kind="list")
    for setup in ("imdb", "all"):  # what the two attention figures show, measured on the weights they draw
        shown = reader.indices("figures", setup, "sentences")
        rows = [reader.get("figures", setup, "sentences", i, "weights", kind="list") for i in shown]
        tokens = [reader.get("figures", setup, "sentences", i, "words", kind="list") for i in shown]
        values[f"sentences_sentiment_{setup}_figure"] = str(len(rows))
        values[f"first_over_last_sentiment_{setup}_figure"] = str(sum(row[0] > row[-1] for row in rows))
        values[f"decreasing_sentiment_{setup}_figure"] = str(
            sum(all(a >= b for a, b in zip(row, row[1:], strict=False)) for row in rows)
        )
        halves = [sum(row[: len(row) // 2]) for row in rows]
        values[f"first_half_share_sentiment_{setup}_figure"] = f"{sum(halves) / len(halves):.2f}"
        values[f"argmax_words_sentiment_{setup}_figure"] = ", ".join(
            words[max(range(len(row)), key=row.__getitem__)].rstrip("*")
            for row, words in zip(rows, tokens, strict=True)
        )
    words = reader.get("figures", "all", "sentences", 0, "words", kind="list")
    if "best" not in words:
        reader.fail("figures.all.sentences[0].words", "the word 'best' (the page discusses it)", str(words)[:60])
    weight = reader.get("figures", "all", "sentences", 0, "weights", words.index("best"), kind="fraction")
    values["best_weight_attention_sentiment_all_figure"] = f"{weight:.2f}"
    values["p_positive_attention_sentiment_all_figure"] = (
        f"{reader.get('figures', 'all', 'sentences', 0, 'p_positive', kind='fraction'):.2f}"
    )


def _profile(values: dict[str, str], root: Path) -> None:
    """Chapter 6's profile of one epoch of training steps, and the one-loop trainer's speed over the tutorial loop."""
    reader = Reader(PROFILE, COMMANDS[PROFILE], root)
    values["ops_per_step_profile"] = count(round(reader.get("ops_per_step")))
    share = reader.get("gemm_share", kind="fraction")
    values["gemm_percent_profile"] = f"{100 * share:.0f}"
    values["gemm_only_speedup_profile"] = f"{1 / share:.1f}"
    over_peak = reader.get("gemm_gflops_per_s") / reader.get("sgemm_peak_gflops")
    values["gemm_percent_of_sgemm_profile"] = f"{100 * over_peak:.0f}"
    one_path = Reader(ONE_PATH, COMMANDS[ONE_PATH], root)
    ratio = one_path.get("trainer_ab", "median_trainer_over_tutorial", "this")
    values["trainer_over_tutorial_one_path"] = f"{ratio:.1f}"


def _benchmark(values: dict[str, str], root: Path) -> None:
    """Chapter 6's quality run: our trainer and the tutorial loop, 300 s each, on the leaky by_french split."""
    reader = Reader(BENCHMARK, COMMANDS[BENCHMARK], root)
    train, test = reader.get("data", "train", kind="count"), reader.get("data", "test", kind="count")
    corpus = Reader(CORPUS, COMMANDS[CORPUS], root)
    if (train, test) != (corpus.get("splits", "by_french", "train"), corpus.get("splits", "by_french", "test")):
        reader.fail("data", "the by_french split's train/test counts (the chapter says so)", f"{train}/{test}")
    values["pairs_test_benchmark_by_french"] = count(test)
    values["batch_project_benchmark_300s"] = str(reader.get("project_settings", "batch_size", kind="count"))
    for key in ("learning_rate", "dropout", "label_smoothing"):
        values[f"{key}_project_benchmark_300s"] = f"{reader.get('project_settings', key):g}"
    values["epochs_planned_project_benchmark_300s"] = str(reader.get("quality_epochs_planned", kind="count"))
    values["pairs_train_benchmark_by_french"] = count(train)
    values["vocab_target_benchmark_by_french"] = count(reader.get("data", "V", kind="count"))
    values["torch_benchmark"] = reader.get("machine_before", "torch", kind="text")
    values["load_1min_benchmark"] = f"{reader.get('machine_before', 'load_average_1_5_15', 0):.2f}"
    threads2 = Reader(BENCHMARK_2, COMMANDS[BENCHMARK_2], root)
    values["load_1min_benchmark_2_threads"] = f"{threads2.get('machine_before', 'load_average_1_5_15', 0):.2f}"
    values["sgemm_peak_gflops_benchmark"] = f"{reader.get('sgemm_peak', 'gflops'):.1f}"
    values["useful_gflop_per_epoch_benchmark"] = f"{reader.get('flop_model', 'useful_gflop_per_epoch'):.0f}"
    values["useful_mflop_per_pair_benchmark"] = f"{reader.get('flop_model', 'useful_mflop_per_pair'):.1f}"
    for trainer in ("project", "tutorial"):
        scores = [reader.get("quality", trainer, index, "bleu") for index in reader.indices("quality", trainer)]
        best = max(range(len(scores)), key=scores.__getitem__)
        values[f"bleu_best_{trainer}_benchmark_300s_by_french"] = score(scores[best])
        values[f"seconds_best_{trainer}_benchmark_300s_by_french"] = f"{reader.get('quality', trainer, best, 'at_s'):g}"


RECIPE_ROWS = {"baseline": "recipe_baseline", "combo-b32-d0": "recipe_b32_d0", "combo-bi-b32-d0": "recipe_bi_b32_d0"}
"""The appendix's recipes that must be there (results/quality rows) and the recipe part of their names."""


def recipe_name(row: str) -> str:
    """A results/quality row's name part: combo-bi-b32-d0-60s-fit -> recipe_bi_b32_d0_fit (the budget goes after H)."""
    return "recipe_" + row.removeprefix("combo-").replace("-60s", "").replace("-", "_").replace(".", "")


OTHER_REFERENCE = {
    "combo-bi-b32-d0": ("combo-b32-d0",),
    "luong-feeding": ("luong",),
    "bi-budget": ("combo-bi-b32-d0",),
    "bi-budget-beam-5": ("bi-budget",),
    "bi-budget-beam-5-lp-0.6": ("bi-budget",),
}
"""Rows the appendix also pairs with a row other than the baseline (seed by seed): the name gets ``_vs_<that row>``."""


BASELINE_SETTINGS = ("hidden_size", "batch_size", "learning_rate", "epochs", "dropout", "label_smoothing")
"""The baseline recipe's settings the appendix states (``<setting>_bahdanau_recipe_baseline``, from its dev runs)."""


T_975 = {1: 12.706, 2: 4.303, 4: 2.776}
"""Student-t 97.5% quantiles for 2, 3 and 5 seeds or runs (1, 2 and 4 degrees of freedom): `evaluate.T_975`, as the
intervals use."""


def _recipes(values: dict[str, str], root: Path) -> None:
    """The appendix's recipe runs (H=256; the decoder from each run's config): three seeds a row on the dev split, five
    on the test split."""
    for folder, split, key, seeds in ((RECIPE, "dev", "dev", 3), (f"{RECIPE}/final", "test", "test", 5)):
        rows = {path.name.rsplit("-seed", 1)[0] for path in (root / folder).glob("*-seed*.json")}
        by_row: dict[str, list[float]] = {}
        cpu_by_row: dict[str, list[float]] = {}
        decoders: dict[str, str] = {}
        for row in sorted(rows | set(RECIPE_ROWS)):
            pattern = f"{row}-seed*.json"
            paths = sorted((root / folder).glob(pattern))
            if len(paths) != seeds:
                _fail(f"{folder}/{pattern}", "(the files)", f"{seeds} seeds", str(len(paths)), COMMANDS[folder], "them")
            bleus, cpu, wall, epochs = [], [], [], []
            for path in paths:
                reader = Reader(str(path.relative_to(root)), COMMANDS[folder], root)
                found = reader.get(key, "split", kind="text")
                expected = "by_english" if key == "test" else "by_english:dev"
                if found != expected:
                    reader.fail(f"{key}.split", repr(expected), repr(found))
                bleus.append(reader.get(key, "bleu"))
                cpu.append(reader.get("cpu_seconds"))
                wall.append(reader.get("wall_seconds"))
                epochs.append(reader.get("epochs", kind="count"))
                decoder = reader.get("config", "decoder", kind="text")
                if row == "baseline" and key == "dev":
                    for setting in BASELINE_SETTINGS:
                        values[f"{setting}_bahdanau_recipe_baseline"] = f"{reader.get('config', setting):g}"
            budget = "60s" if "-60s" in row else "300s"
            label = f"{decoder}_{recipe_name(row)}_h256_{budget}_{len(bleus)}seeds_{split}"
            _mean_and_interval(values, "bleu", label, bleus)
            for seed, bleu in enumerate(bleus):
                values[f"bleu_seed{seed}_{label}"] = score(bleu)
            # how long the seeds ran: the CPU time the budget counts, the wall-clock time and the epochs finished
            values[f"cpu_seconds_min_{label}"] = count(round(min(cpu)))
            values[f"cpu_seconds_max_{label}"] = count(round(max(cpu)))
            values[f"cpu_seconds_mean_{label}"] = count(round(sum(cpu) / len(cpu)))
            values[f"wall_seconds_min_{label}"] = count(round(min(wall)))
            values[f"wall_seconds_max_{label}"] = count(round(max(wall)))
            values[f"epochs_min_{label}"] = str(min(epochs))
            values[f"epochs_max_{label}"] = str(max(epochs))
            by_row[row] = bleus
            cpu_by_row[row] = cpu
            decoders[row] = decoder
        for row, bleus in by_row.items():  # seed-paired differences against the baseline of the same budget
            baseline = "baseline-60s" if "-60s" in row else "baseline"
            pairs = [("", baseline)] + [
                (f"_vs_{recipe_name(b).removeprefix('recipe_')}", b) for b in OTHER_REFERENCE.get(row, ())
            ]
            for suffix, reference in pairs:
                if row == reference or reference not in by_row:
                    continue
                budget = "60s" if "-60s" in row else "300s"
                label = f"{decoders[row]}_{recipe_name(row)}{suffix}_h256_{budget}_{len(bleus)}seeds_{split}"
                _paired(values, label, [a - b for a, b in zip(bleus, by_row[reference], strict=True)])
                more = sum(cpu_by_row[row]) / sum(cpu_by_row[reference]) - 1
                values[f"cpu_percent_more_{label}"] = f"{100 * more:.0f}"


EXTERNAL_RUNS = {"joey-transformer": ("joey_transformer", 3), "joey-recurrent": ("joey_recurrent", 2)}
"""The external measurements the appendix reports (results/quality/external/<file>.json), the name part of their
values and how many runs each holds. Their values start with ``external_``: the model is not one of this project's."""


def _external(values: dict[str, str], root: Path) -> None:
    """The external measurements (Joey NMT, measured by others): greedy BLEU per run, mean and interval at about 300
    CPU-s on the test split, beam 5's mean, and the Transformer's one run at about 60 CPU-s."""
    for name, (model, runs) in EXTERNAL_RUNS.items():
        relative = EXTERNAL.format(name=name)
        reader = Reader(relative, COMMANDS[relative], root)
        found = reader.get("runs", kind="list")
        if len(found) != runs:
            reader.fail("runs", f"{runs} runs", f"{len(found)}")
        label = f"{model}_300s_{runs}runs_test"
        _mean_and_interval(values, "external_bleu", label, [reader.get("runs", i, "greedy_bleu") for i in range(runs)])
        if name == "joey-transformer":
            beams = [reader.get("runs", index, "beam5_bleu") for index in range(runs)]
            values[f"external_bleu_beam5_mean_{label}"] = score(sum(beams) / len(beams))
            values[f"external_bleu_{model}_60s_1run_test"] = score(reader.get("at_60s", "greedy_bleu"))


def _interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the 95% Student-t interval of a mean over seeds, as evaluate.seed_interval."""
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    half = T_975[len(values) - 1] * spread / len(values) ** 0.5
    return mean, mean - half, mean + half


def _mean_and_interval(values: dict[str, str], quantity: str, label: str, samples: list[float]) -> None:
    """``<quantity>_mean_<label>``, ``_low_`` and ``_high_``: the BLEU mean over seeds or runs and its interval."""
    for bound, value in zip(("mean", "low", "high"), _interval(samples), strict=True):
        values[f"{quantity}_{bound}_{label}"] = score(value)


def _paired(values: dict[str, str], label: str, differences: list[float], mean: float | None = None) -> None:
    """``diff_<mean, min, max, low, high>_<label>``: seed-paired BLEU differences, their mean (unless `mean` is
    given), range and 95% interval."""
    average, low, high = _interval(differences)
    bounds = {"mean": average if mean is None else mean, "min": min(differences), "max": max(differences)}
    for bound, value in {**bounds, "low": low, "high": high}.items():
        values[f"diff_{bound}_{label}"] = f"{value:+.2f}"


LIVE_FIRST_FILES = ("encoder.onnx", "step.onnx", "vocabularies.json", "sentences.json")
"""What the live page needs before its first translation, besides the runtime (its `data-first-files`)."""
LIVE_LUONG_FILES = ("luong/encoder.onnx", "luong/step.onnx")


def _file_bytes(relative: str, command: str, root: Path) -> int:
    """The size of a committed file the prose states, which must be there and not empty."""
    path = root / relative
    if not path.is_file():
        _fail(relative, "(the file)", "a file", "none", command)
    size = path.stat().st_size
    if size == 0:
        _fail(relative, "(the file)", "a non-empty file", "0 bytes", command)
    return size


def _live(values: dict[str, str], root: Path) -> None:
    """The sizes of what the live page downloads: the committed runtime and exported graphs (MB = 10^6 bytes)."""
    runtime = _file_bytes(LIVE_RUNTIME, COMMANDS[LIVE_RUNTIME], root)
    first = {name: _file_bytes(f"{LIVE}/{name}", COMMANDS[LIVE], root) for name in LIVE_FIRST_FILES}
    luong = sum(_file_bytes(f"{LIVE}/{name}", COMMANDS[LIVE], root) for name in LIVE_LUONG_FILES)
    values["mb_runtime_live"] = f"{runtime / 1e6:.1f}"
    values["mb_first_translation_live"] = f"{(runtime + sum(first.values())) / 1e6:.1f}"
    values["mb_luong_live"] = f"{luong / 1e6:.1f}"
    values["mb_runtime_and_models_live"] = f"{(runtime + sum(first.values()) + luong) / 1e6:.1f}"
    values["kb_sentences_live"] = f"{first['sentences.json'] / 1e3:.0f}"


def values(root: Path = ROOT) -> dict[str, str]:
    """Every named value, formatted as the prose writes it (a string: "37.56", "5,318", "18.3")."""
    found: dict[str, str] = {"special_tokens": str(len(SPECIAL_TOKENS))}
    _compare(found, root)
    _corpus(found, root)
    _packaged(found, root)
    _benchmark(found, root)
    _recipes(found, root)
    _external(found, root)
    _seq2seq(found, root)
    _fence_record(found, root)
    _sentiment(found, root)
    _profile(found, root)
    _live(found, root)
    return found


def define_env(env: Any) -> None:
    """mkdocs-macros: every value becomes a page variable; a failed read stops the build with its one line."""
    from mkdocs.exceptions import PluginError

    try:
        env.variables.update(values())
    except ResultsFileError as error:
        raise PluginError(str(error)) from None
