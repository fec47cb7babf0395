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
  (``python scripts/corpus_counts.py``, checked against the bundled corpus by tests/site/test_course_values.py).

Every file is read by the one validating reader (`json_files.read`) against its JSON Schema in ``schemas/``: a
missing, malformed, truncated or mistyped file, or a zero the build would divide by, stops the build with one line
that names the file, the entry, what was expected and the command that re-creates the file (`ResultsFileError`).
Reading needs no torch, so the site builds without it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from json_files import FileError, describe, fail, read

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))  # the package's statistics, which need no torch (the site builds without it)
from seq2seq_attention.stats import seed_interval  # noqa: E402

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
    LIVE: "seq2seq-attention export-weights --out docs/assets/live --overwrite (docs/live.md: the Luong weights)",
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


ResultsFileError = FileError
"""A results file the prose reads is missing, malformed, truncated or holds a value of the wrong kind (one line)."""


def _read(relative: str, schema: str, root: Path, command: str | None = None) -> Any:
    """The results file `relative` under `root`, valid against ``schemas/<schema>.schema.json``."""
    return read(root / relative, schema, command or COMMANDS[relative], relative)


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
    data = _read(COMPARE, "attention-results", root)
    settings = data["settings"]
    values["hidden_compare_h128"] = str(settings["hidden_size"])
    values["epochs_compare_h128"] = str(settings["epochs"])
    bleu = {}
    for model in data["models"]:
        decoder = model["decoder"]
        if decoder not in COMPARE_DECODERS:
            continue
        name = COMPARE_DECODERS[decoder]
        bleu[decoder] = float(score(model["bleu"]))  # the mean difference is that of the two means as the table shows
        values[f"bleu_{name}_compare_h128_test"] = score(model["bleu"])
        values[f"bleu_std_{name}_compare_h128_test"] = score(model["bleu_std"])
        for seed, value in enumerate(model["bleu_per_seed"]):
            values[f"bleu_{name}_compare_h128_seed{seed}_test"] = score(value)
        values[f"exact_{name}_compare_h128_test"] = percent(model["exact_match"])
        if decoder != "gru":
            # three decimals, as the comparison table prints it
            values[f"peak_{name}_compare_h128_test"] = f"{model['mean_max_weight']:.3f}"
    values["batch_compare_h128"] = str(settings["batch_size"])
    values["learning_rate_compare_h128"] = f"{settings['learning_rate']:g}"
    values["teacher_forcing_percent_compare_h128"] = percent(settings["teacher_forcing_ratio"], 0)
    values["time_budget_compare_h128"] = f"{settings['time_budget']:g}"
    for comparison in data["comparisons"]:
        baseline, system = comparison["baseline"], comparison["system"]
        name = f"{COMPARE_DECODERS[system]}_vs_{COMPARE_DECODERS[baseline]}_compare_h128"
        differences = comparison["difference_per_seed"]
        for seed, difference in enumerate(differences):
            values[f"diff_{name}_seed{seed}_test"] = f"{difference:+.2f}"
        _paired(values, f"{name}_test", differences, mean=bleu[system] - bleu[baseline])
        values[f"p_max_{name}_test"] = f"{max(comparison['p_value_per_seed']):g}"
    for decoder in ("bahdanau", "luong"):
        stats = []
        for index, heatmap in enumerate(data["heatmaps"]):
            width = len(heatmap["source"].split()) + 1
            for t, row in enumerate(heatmap[decoder]["weights"]):
                if len(row) != width:
                    wanted = f"{width} numbers (the source words and <eos>)"
                    fail(COMPARE, f"heatmaps[{index}].{decoder}.weights[{t}]", wanted, describe(row), COMMANDS[COMPARE])
            stats.append(alignment_statistics(heatmap[decoder]["weights"]))
        name = COMPARE_DECODERS[decoder]
        for key in ("diagonal", "subject", "verb"):
            values[f"{key}_{name}_compare_h128_seed0_heatmaps"] = f"{sum(s[key] for s in stats) / len(stats):.2f}"


def _corpus(values: dict[str, str], root: Path) -> None:
    data = _read(CORPUS, "corpus-counts", root)
    values["lines_corpus_raw"] = count(data["lines"])
    values["pairs_total"] = count(data["pairs"])
    for split in ("by_english", "by_french"):
        counts = data["splits"][split]
        values[f"pairs_train_{split}"] = count(counts["train"])
        values[f"pairs_test_{split}"] = count(counts["test"])
        values[f"pairs_dev_{split}"] = count(counts["dev"])
        values[f"overlap_pairs_{split}"] = count(counts["test_targets_in_train"])
        values[f"overlap_percent_{split}"] = percent(counts["target_overlap"])
    for side in ("source", "target"):
        words = data["vocabularies"]["all_pairs"][f"{side}_entries"] - len(SPECIAL_TOKENS)

        values[f"vocab_words_{side}_all_pairs"] = count(words)
        values[f"tutorial_n_words_{side}_all_pairs"] = count(words + 2)  # the tutorial's Lang counts SOS and EOS


def _packaged(values: dict[str, str], root: Path) -> None:
    for name, label in PACKAGED_MODELS.items():
        relative = PACKAGED.format(name=name)
        data = _read(relative, "packaged-checkpoint", root, COMMANDS[PACKAGED].format(name=name))
        training, evaluation = data["training"], data["training"]["evaluation"]
        values[f"bleu_{label}_test"] = score(evaluation["bleu"])
        values[f"exact_{label}_test"] = percent(evaluation["exact_match"])
        values[f"pairs_test_{label}"] = count(evaluation["pairs"])
        values[f"hidden_{label}"] = str(data["config"]["hidden_size"])
        for key, short in (("batch_size", "batch"), ("epochs", "epochs_cap"), ("learning_rate", "learning_rate")):
            values[f"{short}_{label}"] = f"{training['config'][key]:g}"
        for key in ("time_budget", "label_smoothing", "dropout"):
            values[f"{key}_{label}"] = f"{training['config'][key]:g}"
        values[f"epochs_{label}"] = str(training["epoch"])
        values[f"size_mb_{label}"] = f"{data['files']['model']['bytes'] / 1e6:.1f}"
        if name == "bahdanau":
            words = data["vocabularies"]["source"]["index2word"]
            values["vocab_entries_source_packaged"] = count(len(words))
            values["vocab_words_source_packaged"] = count(len(words) - len(SPECIAL_TOKENS))
            values["vocab_entries_target_packaged"] = count(len(data["vocabularies"]["target"]["index2word"]))


SEQ2SEQ_RUNS = {
    "gru": "gru_packaged_h128",
    "gru-mixed": "gru_mixed_script_h128",
    "bahdanau": "bahdanau_packaged_h256",
    "bahdanau-bi": "bahdanau_bi_packaged_h256",
}
"""The runs of scripts/train_seq2seq.sh that the prose compares (seed 0 each) and their names."""


def _seq2seq(values: dict[str, str], root: Path) -> None:
    """The paired comparisons of the packaged translators' runs (results/seq2seq/metrics.json, one seed each)."""
    data = _read(SEQ2SEQ, "seq2seq-metrics", root)
    for run, name in SEQ2SEQ_RUNS.items():
        values[f"best_test_loss_{name}_test"] = f"{data['runs'][run]['best_test_loss']:.2f}"
    for comparison in data["comparisons"]:
        runs = [comparison[side] for side in ("baseline", "system")]
        names = [run.removesuffix(" (greedy)") for run in runs]
        if not all(run.endswith(" (greedy)") for run in runs) or not all(n in SEQ2SEQ_RUNS for n in names):
            continue
        name = f"{SEQ2SEQ_RUNS[names[1]]}_vs_{SEQ2SEQ_RUNS[names[0]]}"
        values[f"diff_{name}_seed0_test"] = f"{comparison['difference']:+.2f}"
        values[f"p_{name}_seed0_test"] = f"{comparison['p_value']:g}"


def _fence_record(values: dict[str, str], root: Path) -> None:
    """When and where the fences' GPU runs were last recorded (the newest CUDA run in the record)."""
    data = _read(FENCE_RECORD, "fence-runs", root)
    runs = [fence["runs"]["cuda"] for fences in data["pages"].values() for fence in fences if "cuda" in fence["runs"]]
    if not runs:
        fail(FENCE_RECORD, "pages", "at least one fence run recorded on CUDA", "none", COMMANDS[FENCE_RECORD])
    newest = max((run["date"], run["device"], run["torch"]) for run in runs)
    values["gpu_record_date"], values["gpu_record_device"], values["gpu_record_torch"] = newest


def _sentiment(values: dict[str, str], root: Path) -> None:
    """Chapter 5: the classifiers' data sizes, mean test accuracy over seeds and the figure's first sentence."""
    data = _read(SENTIMENT, "sentiment-accuracy", root)
    for row in data["table"]:
        setup, kind, test = row["setup"], row["kind"], row["test_size"]
        values[f"test_sentences_sentiment_{setup}"] = count(test)
        values[f"train_sentences_sentiment_{setup}"] = count(row["train_size"])
        values[f"points_per_sentence_sentiment_{setup}_test"] = f"{100 / test:.1f}"
        values[f"accuracy_mean_{kind}_sentiment_{setup}_test"] = f"{row['mean']:.2f}"
        values[f"parameters_ten_thousands_{kind}_sentiment_{setup}"] = str(round(row["parameters"] / 10_000))
    relative = "results/sentiment/checkpoints/all_attention/checkpoint.json"
    recipe = _read(relative, "sentiment-checkpoint", root, COMMANDS[SENTIMENT])["training"]["config"]
    values["batch_attention_sentiment"] = str(recipe["batch_size"])
    values["learning_rate_attention_sentiment"] = f"{recipe['learning_rate']:g}"
    values["clip_attention_sentiment"] = f"{recipe['clip']:g}"
    for setup in ("imdb", "all"):  # what the two attention figures show, measured on the weights they draw
        sentences = data["figures"][setup]["sentences"]
        for index, sentence in enumerate(sentences):
            if len(sentence["weights"]) != len(sentence["words"]):
                where, found = f"figures.{setup}.sentences[{index}].weights", describe(sentence["weights"])
                fail(SENTIMENT, where, f"{len(sentence['words'])} weights (one per word)", found, COMMANDS[SENTIMENT])
        rows = [sentence["weights"] for sentence in sentences]
        values[f"sentences_sentiment_{setup}_figure"] = str(len(rows))
        values[f"first_over_last_sentiment_{setup}_figure"] = str(sum(row[0] > row[-1] for row in rows))
        values[f"decreasing_sentiment_{setup}_figure"] = str(
            sum(all(a >= b for a, b in zip(row, row[1:], strict=False)) for row in rows)
        )
        halves = [sum(row[: len(row) // 2]) for row in rows]
        values[f"first_half_share_sentiment_{setup}_figure"] = f"{sum(halves) / len(halves):.2f}"
        values[f"argmax_words_sentiment_{setup}_figure"] = ", ".join(
            s["words"][max(range(len(s["weights"])), key=s["weights"].__getitem__)].rstrip("*") for s in sentences
        )
    first = data["figures"]["all"]["sentences"][0]
    values["best_weight_attention_sentiment_all_figure"] = f"{first['weights'][first['words'].index('best')]:.2f}"
    values["p_positive_attention_sentiment_all_figure"] = f"{first['p_positive']:.2f}"


def _profile(values: dict[str, str], root: Path) -> None:
    """Chapter 6's profile of one epoch of training steps, and the one-loop trainer's speed over the tutorial loop."""
    data = _read(PROFILE, "profile", root)
    values["ops_per_step_profile"] = count(round(data["ops_per_step"]))
    values["gemm_percent_profile"] = f"{100 * data['gemm_share']:.0f}"
    values["gemm_only_speedup_profile"] = f"{1 / data['gemm_share']:.1f}"
    values["gemm_percent_of_sgemm_profile"] = f"{100 * data['gemm_gflops_per_s'] / data['sgemm_peak_gflops']:.0f}"
    ratio = _read(ONE_PATH, "one-path", root)["trainer_ab"]["median_trainer_over_tutorial"]["this"]
    values["trainer_over_tutorial_one_path"] = f"{ratio:.1f}"


def _benchmark(values: dict[str, str], root: Path) -> None:
    """Chapter 6's quality run: our trainer and the tutorial loop, 300 s each, on the leaky by_french split."""
    data = _read(BENCHMARK, "benchmark", root)
    train, test = data["data"]["train"], data["data"]["test"]
    by_french = _read(CORPUS, "corpus-counts", root)["splits"]["by_french"]
    if (train, test) != (by_french["train"], by_french["test"]):
        wanted = "the by_french split's train/test counts (the chapter says so)"
        fail(BENCHMARK, "data", wanted, f"{train}/{test}", COMMANDS[BENCHMARK])
    settings = data["project_settings"]
    values["pairs_test_benchmark_by_french"] = count(test)
    values["batch_project_benchmark_300s"] = str(settings["batch_size"])
    for key in ("learning_rate", "dropout", "label_smoothing"):
        values[f"{key}_project_benchmark_300s"] = f"{settings[key]:g}"
    values["epochs_planned_project_benchmark_300s"] = str(data["quality_epochs_planned"])
    values["pairs_train_benchmark_by_french"] = count(train)
    values["vocab_target_benchmark_by_french"] = count(data["data"]["V"])
    values["torch_benchmark"] = data["machine_before"]["torch"]
    values["load_1min_benchmark"] = f"{data['machine_before']['load_average_1_5_15'][0]:.2f}"
    threads2 = _read(BENCHMARK_2, "benchmark-machine", root)
    values["load_1min_benchmark_2_threads"] = f"{threads2['machine_before']['load_average_1_5_15'][0]:.2f}"
    values["sgemm_peak_gflops_benchmark"] = f"{data['sgemm_peak']['gflops']:.1f}"
    values["useful_gflop_per_epoch_benchmark"] = f"{data['flop_model']['useful_gflop_per_epoch']:.0f}"
    values["useful_mflop_per_pair_benchmark"] = f"{data['flop_model']['useful_mflop_per_pair']:.1f}"
    for trainer in ("project", "tutorial"):
        best = max(data["quality"][trainer], key=lambda point: point["bleu"])
        values[f"bleu_best_{trainer}_benchmark_300s_by_french"] = score(best["bleu"])
        values[f"seconds_best_{trainer}_benchmark_300s_by_french"] = f"{best['at_s']:g}"


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
                fail(f"{folder}/{pattern}", "(the files)", f"{seeds} seeds", str(len(paths)), COMMANDS[folder], "them")
            bleus, cpu, wall, epochs = [], [], [], []
            for path in paths:
                data = _read(str(path.relative_to(root)), f"quality-{key}", root, COMMANDS[folder])
                bleus.append(data[key]["bleu"])
                cpu.append(data["cpu_seconds"])
                wall.append(data["wall_seconds"])
                epochs.append(data["epochs"])
                decoder = data["config"]["decoder"]
                if row == "baseline" and key == "dev":
                    for setting in BASELINE_SETTINGS:
                        values[f"{setting}_bahdanau_recipe_baseline"] = f"{data['config'][setting]:g}"
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
        data = _read(relative, "external-runs", root)
        if len(data["runs"]) != runs:
            fail(relative, "runs", f"{runs} runs", str(len(data["runs"])), COMMANDS[relative])
        label = f"{model}_300s_{runs}runs_test"
        _mean_and_interval(values, "external_bleu", label, [run["greedy_bleu"] for run in data["runs"]])
        if name == "joey-transformer":
            beams = [run["beam5_bleu"] for run in data["runs"]]
            values[f"external_bleu_beam5_mean_{label}"] = score(sum(beams) / len(beams))
            values[f"external_bleu_{model}_60s_1run_test"] = score(data["at_60s"]["greedy_bleu"])


def _mean_and_interval(values: dict[str, str], quantity: str, label: str, samples: list[float]) -> None:
    """``<quantity>_mean_<label>``, ``_low_`` and ``_high_``: the BLEU mean over seeds or runs and its interval."""
    for bound, value in zip(("mean", "low", "high"), seed_interval(samples), strict=True):
        values[f"{quantity}_{bound}_{label}"] = score(value)


def _paired(values: dict[str, str], label: str, differences: list[float], mean: float | None = None) -> None:
    """``diff_<mean, min, max, low, high>_<label>``: seed-paired BLEU differences, their mean (unless `mean` is
    given), range and 95% interval."""
    average, low, high = seed_interval(differences)
    bounds = {"mean": average if mean is None else mean, "min": min(differences), "max": max(differences)}
    for bound, value in {**bounds, "low": low, "high": high}.items():
        values[f"diff_{bound}_{label}"] = f"{value:+.2f}"


LIVE_FIRST_FILES = ("weights.bin", "vocabularies.json", "sentences.json")
"""What the live page downloads for its first translation (its `data-first-files`), besides its scripts."""
LIVE_LUONG_FILES = ("luong/weights.bin",)
"""What it downloads after the first translation (its `data-luong-files`)."""


def _file_bytes(relative: str, command: str, root: Path) -> int:
    """The size of a committed file the prose states, which must be there and not empty."""
    path = root / relative
    if not path.is_file():
        fail(relative, "(the file)", "a file", "a folder" if path.is_dir() else "none", command)
    size = path.stat().st_size
    if size == 0:
        fail(relative, "(the file)", "a non-empty file", "0 bytes", command)
    return size


def _live(values: dict[str, str], root: Path) -> None:
    """The size of the live page's sentence list, once every file the page downloads is there and not empty."""
    sizes = {name: _file_bytes(f"{LIVE}/{name}", COMMANDS[LIVE], root) for name in LIVE_FIRST_FILES + LIVE_LUONG_FILES}
    values["kb_sentences_live"] = f"{sizes['sentences.json'] / 1e3:.0f}"


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
    except FileError as error:
        raise PluginError(str(error)) from None
