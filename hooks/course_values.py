"""The numbers the course prose states about a run, read from the committed files that hold them.

A page writes ``{{ bleu_bahdanau_packaged_h256_test }}`` where it would otherwise type 37.56; mkdocs-macros renders
it from `values()`. A name says what the value is, its model, recipe and split: ``<quantity>_<model>_<recipe>_<split>``
(recipes: ``packaged_h256``/``packaged_h128``, the shipped checkpoints; ``compare_h128``, chapter 3's comparison;
``recipe_*``, the appendix's runs; splits: ``test``, the main split's held-out pairs, ``dev``, ``by_french``, the leaky
split). Only the values a page renders are derived; the statistics are `seq2seq_attention.stats`' (no torch).
Every file is read by `json_files.read` against its schema in ``schemas/``: a bad file, or a zero the build would
divide by, stops the build with one line naming the file, the entry, what was expected and the command that
re-creates the file (`ResultsFileError`).
"""

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
EXTERNAL_RUNS = {"joey-transformer": 3, "joey-recurrent": 2}  # Joey NMT's runs (`EXTERNAL`): values ``external_*``
JOEY = "no command: numbers measured elsewhere with Joey NMT, copied from the issue that the file's source names"

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
    **{EXTERNAL.format(name=name): JOEY for name in EXTERNAL_RUNS},
    PACKAGED: "scripts/train_seq2seq.sh {name}",
    LIVE: "seq2seq-attention export-weights --out docs/assets/live --overwrite (docs/live.md: the Luong weights)",
}
"""How each file is re-created (results/*/README.md says the same)."""

RUNS = {
    "gru": "gru_packaged_h128",
    "gru-mixed": "gru_mixed_script_h128",
    "bahdanau": "bahdanau_packaged_h256",
    "bahdanau-bi": "bahdanau_bi_packaged_h256",
}
"""The runs of scripts/train_seq2seq.sh (seed 0 each) and the model and recipe part of their names."""
PACKAGED_MODELS = ("bahdanau", "bahdanau-bi", "gru")  # the packaged checkpoints' folders (`PACKAGED`)

ResultsFileError = FileError  # a results file the prose reads is missing, malformed or mistyped (one line)


def _read(relative: str, schema: str, root: Path, command: str | None = None) -> Any:
    """The results file `relative` under `root`, valid against ``schemas/<schema>.schema.json``."""
    return read(root / relative, schema, command or COMMANDS[relative], relative)


def score(value: float) -> str:
    """A BLEU score to two decimals, as sacrebleu reports it."""
    return f"{value:.2f}"


def _interval(samples: list[float]) -> dict[str, str]:
    """The BLEU mean over seeds or runs and its 95% interval (`stats.seed_interval`): mean, low, high."""
    return dict(zip(("mean", "low", "high"), map(score, seed_interval(samples)), strict=True))


def _paired(differences: list[float], mean: float | None = None) -> dict[str, str]:
    """Seed-paired BLEU differences: their mean (unless `mean` is given), min, max and 95% interval (low, high)."""
    average, low, high = seed_interval(differences)
    bounds = {"mean": average if mean is None else mean, "min": min(differences), "max": max(differences)}
    return {bound: f"{value:+.2f}" for bound, value in {**bounds, "low": low, "high": high}.items()}


def alignment_statistics(weights: list[list[float]]) -> dict[str, float]:
    """What a heatmap shows, as the fence on docs/attention/heatmaps.md computes it: ``diagonal``, the mean over output
    words t of the weight within one column of the diagonal (|j - t| <= 1); ``subject``, the first output word's (i,
    he) weight on the first source token (je, il); ``verb``, the second's (m, is) on the second (suis, est, me)."""
    rows = len(weights)
    diagonal = sum(w for t, row in enumerate(weights) for j, w in enumerate(row) if abs(j - t) <= 1) / rows
    return {"diagonal": diagonal, "subject": weights[0][0], "verb": weights[1][1]}


COMPARE_DECODERS = {"luong:scaled_dot": "luong_scaled", "luong:general": "luong_general"}  # else the decoder itself
COMPARE_SEEDS = (("bahdanau", 0), ("luong", 0), ("gru", 1), ("gru", 2))  # the single-seed BLEU scores a page shows
COMPARISONS_SHOWN = {
    "bahdanau_vs_luong": ("min", "max", "low", "high", "p_max"),
    "luong_scaled_vs_luong": ("min", "max", "low", "high"),
    "bahdanau_vs_gru": ("mean",),
    "luong_vs_gru": ("mean",),
    "luong_general_vs_luong": ("seed0", "seed1", "seed2"),
}
"""The comparison's paired differences the pages show: ``diff_<bound>_<name>_compare_h128_test`` (mean, min, max,
low, high), ``diff_<name>_compare_h128_seed<n>_test`` and ``p_max_<name>_compare_h128_test``."""


def _compare(values: dict[str, str], root: Path) -> None:
    """Chapter 3's comparison: its settings, the models' BLEU, their paired differences, the heatmaps' statistics."""
    data = _read(COMPARE, "attention-results", root)
    settings = data["settings"]
    values["hidden_compare_h128"] = str(settings["hidden_size"])
    values["epochs_compare_h128"] = str(settings["epochs"])
    values["batch_compare_h128"] = str(settings["batch_size"])
    values["learning_rate_compare_h128"] = f"{settings['learning_rate']:g}"
    values["teacher_forcing_percent_compare_h128"] = f"{100 * settings['teacher_forcing_ratio']:.0f}"
    models = {COMPARE_DECODERS.get(m["decoder"], m["decoder"]): m for m in data["models"]}
    for name in ("gru", "luong", "luong_scaled", "luong_general", "bahdanau"):
        values[f"bleu_{name}_compare_h128_test"] = score(models[name]["bleu"])
        if name in ("bahdanau", "luong", "luong_scaled"):  # three decimals, as the comparison table prints it
            values[f"peak_{name}_compare_h128_test"] = f"{models[name]['mean_max_weight']:.3f}"
    for name, seed in COMPARE_SEEDS:
        if seed < len(models[name]["bleu_per_seed"]):
            values[f"bleu_{name}_compare_h128_seed{seed}_test"] = score(models[name]["bleu_per_seed"][seed])
    for comparison in data["comparisons"]:
        system, baseline = (COMPARE_DECODERS.get(comparison[s], comparison[s]) for s in ("system", "baseline"))
        name, diffs = f"{system}_vs_{baseline}", comparison["difference_per_seed"]
        if name not in COMPARISONS_SHOWN:
            continue
        # the mean difference is that of the two means as the table shows them
        mean = float(score(models[system]["bleu"])) - float(score(models[baseline]["bleu"]))
        shown = {b: (f"diff_{b}_{name}_compare_h128_test", v) for b, v in _paired(diffs, mean).items()}
        shown |= {f"seed{n}": (f"diff_{name}_compare_h128_seed{n}_test", f"{d:+.2f}") for n, d in enumerate(diffs)}
        shown["p_max"] = (f"p_max_{name}_compare_h128_test", f"{max(comparison['p_value_per_seed']):g}")
        values.update(shown[wanted] for wanted in COMPARISONS_SHOWN[name] if wanted in shown)
    for decoder, keys in (("bahdanau", ("diagonal", "subject", "verb")), ("luong", ("diagonal", "subject"))):
        stats = []
        for index, heatmap in enumerate(data["heatmaps"]):
            width = len(heatmap["source"].split()) + 1
            for t, row in enumerate(heatmap[decoder]["weights"]):
                if len(row) != width:
                    wanted = f"{width} numbers (the source words and <eos>)"
                    fail(COMPARE, f"heatmaps[{index}].{decoder}.weights[{t}]", wanted, describe(row), COMMANDS[COMPARE])
            stats.append(alignment_statistics(heatmap[decoder]["weights"]))
        for key in keys:
            values[f"{key}_{decoder}_compare_h128_seed0_heatmaps"] = f"{sum(s[key] for s in stats) / len(stats):.2f}"


def _corpus(values: dict[str, str], root: Path) -> None:
    """The corpus: its lines and pairs, the splits' sizes and the words of its vocabularies."""
    data = _read(CORPUS, "corpus-counts", root)
    splits = data["splits"]
    values["lines_corpus_raw"], values["pairs_total"] = f"{data['lines']:,}", f"{data['pairs']:,}"
    for split, keys in (("by_english", ("train", "test", "dev")), ("by_french", ("train", "test"))):
        values |= {f"pairs_{key}_{split}": f"{splits[split][key]:,}" for key in keys}
    values["overlap_pairs_by_french"] = f"{splits['by_french']['test_targets_in_train']:,}"
    values["overlap_percent_by_french"] = f"{100 * splits['by_french']['target_overlap']:.1f}"
    for side in ("source", "target"):
        words = data["vocabularies"]["all_pairs"][f"{side}_entries"] - 4  # <pad>, <sos>, <eos> and <unk>
        values[f"vocab_words_{side}_all_pairs"] = f"{words:,}"
        values[f"tutorial_n_words_{side}_all_pairs"] = f"{words + 2:,}"  # the tutorial's Lang counts SOS and EOS


def _packaged(values: dict[str, str], root: Path) -> None:
    """The packaged checkpoints: their sizes, and the test BLEU and recipe of the two the pages use."""
    for name in PACKAGED_MODELS:
        label = RUNS[name]
        data = _read(PACKAGED.format(name=name), "packaged-checkpoint", root, COMMANDS[PACKAGED].format(name=name))
        values[f"size_mb_{label}"] = f"{data['files']['model']['bytes'] / 1e6:.1f}"
        if name == "bahdanau-bi":
            continue  # the pages show its size only
        training, evaluation, config = data["training"], data["training"]["evaluation"], data["training"]["config"]
        values[f"bleu_{label}_test"] = score(evaluation["bleu"])
        values[f"pairs_test_{label}"] = f"{evaluation['pairs']:,}"
        values[f"hidden_{label}"] = str(data["config"]["hidden_size"])
        for short, key in (
            ("batch", "batch_size"),
            ("epochs_cap", "epochs"),
            ("learning_rate",) * 2,
            ("time_budget",) * 2,
        ):
            values[f"{short}_{label}"] = f"{config[key]:g}"
        if name == "bahdanau":
            values[f"exact_{label}_test"] = f"{100 * evaluation['exact_match']:.1f}"
            values[f"epochs_{label}"] = str(training["epoch"])
            values |= {f"{key}_{label}": f"{config[key]:g}" for key in ("label_smoothing", "dropout")}


SEQ2SEQ_COMPARISONS = (("gru (greedy)", "gru-mixed (greedy)"), ("bahdanau (greedy)", "bahdanau-bi (greedy)"))


def _seq2seq(values: dict[str, str], root: Path) -> None:
    """The packaged translators' runs (scripts/train_seq2seq.sh, one seed each): their best held-out loss, and the
    paired comparisons the prose shows (`SEQ2SEQ_COMPARISONS`: baseline, system)."""
    data = _read(SEQ2SEQ, "seq2seq-metrics", root)
    for run in ("gru", "bahdanau", "bahdanau-bi"):
        values[f"best_test_loss_{RUNS[run]}_test"] = f"{data['runs'][run]['best_test_loss']:.2f}"
    for comparison in data["comparisons"]:
        runs = (comparison["baseline"], comparison["system"])
        if runs in SEQ2SEQ_COMPARISONS:
            name = "_vs_".join(RUNS[run.removesuffix(" (greedy)")] for run in reversed(runs))
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
    """Chapter 5: the classifiers' data sizes, the attention classifier's size and test accuracy, the recipe, and what
    the two attention figures show, measured on the weights they draw."""
    data = _read(SENTIMENT, "sentiment-accuracy", root)
    for row in data["table"]:
        setup, kind, test = row["setup"], row["kind"], row["test_size"]
        values[f"test_sentences_sentiment_{setup}"] = f"{test:,}"
        values[f"train_sentences_sentiment_{setup}"] = f"{row['train_size']:,}"
        if (setup, kind) == ("imdb", "attention"):
            values["points_per_sentence_sentiment_imdb_test"] = f"{100 / test:.1f}"
            values["parameters_ten_thousands_attention_sentiment_imdb"] = str(round(row["parameters"] / 10_000))
        if (setup, kind) == ("all", "attention"):
            values["accuracy_mean_attention_sentiment_all_test"] = f"{row['mean']:.2f}"
    relative = "results/sentiment/checkpoints/all_attention/checkpoint.json"
    recipe = _read(relative, "sentiment-checkpoint", root, COMMANDS[SENTIMENT])["training"]["config"]
    values["batch_attention_sentiment"] = str(recipe["batch_size"])
    values["learning_rate_attention_sentiment"] = f"{recipe['learning_rate']:g}"
    values["clip_attention_sentiment"] = f"{recipe['clip']:g}"
    for setup in ("imdb", "all"):
        for index, s in enumerate(data["figures"][setup]["sentences"]):
            if len(s["weights"]) != len(s["words"]):
                where, found = f"figures.{setup}.sentences[{index}].weights", describe(s["weights"])
                fail(SENTIMENT, where, f"{len(s['words'])} weights (one per word)", found, COMMANDS[SENTIMENT])
        halves = [sum(s["weights"][: len(s["weights"]) // 2]) for s in data["figures"][setup]["sentences"]]
        values[f"first_half_share_sentiment_{setup}_figure"] = f"{sum(halves) / len(halves):.2f}"
    imdb = [sentence["weights"] for sentence in data["figures"]["imdb"]["sentences"]]
    values["sentences_sentiment_imdb_figure"] = str(len(imdb))
    values["first_over_last_sentiment_imdb_figure"] = str(sum(row[0] > row[-1] for row in imdb))
    decreasing = sum(all(a >= b for a, b in zip(row, row[1:], strict=False)) for row in imdb)
    values["decreasing_sentiment_imdb_figure"] = str(decreasing)
    sentences = data["figures"]["all"]["sentences"]
    argmax = (s["words"][s["weights"].index(max(s["weights"]))].rstrip("*") for s in sentences)
    values["argmax_words_sentiment_all_figure"] = ", ".join(argmax)
    first = sentences[0]
    values["best_weight_attention_sentiment_all_figure"] = f"{first['weights'][first['words'].index('best')]:.2f}"
    values["p_positive_attention_sentiment_all_figure"] = f"{first['p_positive']:.2f}"


def _benchmark(values: dict[str, str], root: Path) -> None:
    """Chapter 6: the quality run (our trainer and the tutorial loop, 300 s each, on the leaky by_french split), the
    profile of one epoch of training steps, and the one-loop trainer's speed over the tutorial loop."""
    data = _read(BENCHMARK, "benchmark", root)
    counts, settings, flop = data["data"], data["project_settings"], data["flop_model"]
    by_french = _read(CORPUS, "corpus-counts", root)["splits"]["by_french"]
    if (counts["train"], counts["test"]) != (by_french["train"], by_french["test"]):
        wanted = "the by_french split's train/test counts (the chapter says so)"
        fail(BENCHMARK, "data", wanted, f"{counts['train']}/{counts['test']}", COMMANDS[BENCHMARK])
    values["pairs_test_benchmark_by_french"] = f"{counts['test']:,}"
    values["pairs_train_benchmark_by_french"] = f"{counts['train']:,}"
    values["vocab_target_benchmark_by_french"] = f"{counts['V']:,}"
    values["batch_project_benchmark_300s"] = str(settings["batch_size"])
    for key in ("learning_rate", "dropout", "label_smoothing"):
        values[f"{key}_project_benchmark_300s"] = f"{settings[key]:g}"
    values["epochs_planned_project_benchmark_300s"] = str(data["quality_epochs_planned"])
    values["torch_benchmark"] = data["machine_before"]["torch"]
    values["load_1min_benchmark"] = f"{data['machine_before']['load_average_1_5_15'][0]:.2f}"
    threads2 = _read(BENCHMARK_2, "benchmark-machine", root)["machine_before"]
    values["load_1min_benchmark_2_threads"] = f"{threads2['load_average_1_5_15'][0]:.2f}"
    values["sgemm_peak_gflops_benchmark"] = f"{data['sgemm_peak']['gflops']:.1f}"
    values["useful_gflop_per_epoch_benchmark"] = f"{flop['useful_gflop_per_epoch']:.0f}"
    values["useful_mflop_per_pair_benchmark"] = f"{flop['useful_mflop_per_pair']:.1f}"
    best = max(data["quality"]["project"], key=lambda point: point["bleu"])
    values["bleu_best_project_benchmark_300s_by_french"] = score(best["bleu"])
    values["seconds_best_project_benchmark_300s_by_french"] = f"{best['at_s']:g}"
    profile = _read(PROFILE, "profile", root)
    values["ops_per_step_profile"] = f"{round(profile['ops_per_step']):,}"
    values["gemm_percent_profile"] = f"{100 * profile['gemm_share']:.0f}"
    values["gemm_only_speedup_profile"] = f"{1 / profile['gemm_share']:.1f}"
    values["gemm_percent_of_sgemm_profile"] = f"{100 * profile['gemm_gflops_per_s'] / profile['sgemm_peak_gflops']:.0f}"
    ratio = _read(ONE_PATH, "one-path", root)["trainer_ab"]["median_trainer_over_tutorial"]["this"]
    values["trainer_over_tutorial_one_path"] = f"{ratio:.1f}"


def recipe_name(row: str) -> str:
    """A results/quality row's name part: combo-bi-b32-d0-60s-fit -> recipe_bi_b32_d0_fit (the budget goes after H)."""
    return "recipe_" + row.removeprefix("combo-").replace("-60s", "").replace("-", "_").replace(".", "")


SEEDS_FIVE = tuple(f"bleu_seed{seed}" for seed in range(5))
RECIPES_SHOWN = {
    "dev": {
        "baseline": ("bleu_mean", "cpu_seconds_min", "cpu_seconds_max", "wall_seconds_min", "wall_seconds_max"),
        "combo-b32-d0": ("bleu_mean", "epochs_min", "epochs_max"),
        "batch-10": ("bleu_mean", "epochs_min", "epochs_max", "diff_min", "diff_max"),
        "bidirectional": ("bleu_mean", "diff_min", "diff_max"),
        "combo-bi-b32-d0": ("bleu_mean", "epochs_min", "epochs_max", "diff_min", "diff_low", "diff_high"),
        "combo-bi-b32-d0-60s": ("bleu_mean",),
        "combo-bi-b32-d0-60s-fit": ("bleu_mean",),
        "bi-budget": ("bleu_mean", "epochs_min", "epochs_max"),
        "bi-budget vs combo-bi-b32-d0": ("diff_mean", "diff_low", "diff_high"),
        "init-xavier": ("diff_mean",),
        "tied": ("diff_mean",),
        "luong": ("cpu_seconds_mean",),
        "luong-feeding": ("cpu_seconds_mean",),
        "luong-feeding vs luong": ("diff_min", "diff_max", "diff_low", "diff_high", "cpu_percent_more"),
    },
    "test": {
        "baseline": ("bleu_mean", "bleu_low", "bleu_high"),
        "baseline-60s": ("bleu_mean", "bleu_low", "bleu_high"),
        "combo-bi-b32-d0-60s-fit": ("bleu_mean", "bleu_low", "bleu_high"),
        "combo-b32-d0": ("bleu_mean", "bleu_low", "bleu_high", "diff_min", "diff_max"),
        "combo-bi-b32-d0": ("bleu_mean", "bleu_low", "bleu_high", *SEEDS_FIVE),
        "combo-bi-b32-d0 vs combo-b32-d0": ("diff_mean", "diff_low", "diff_high"),
    },
}
"""What the appendix shows of each recipe row (results/quality, dev split; results/quality/final, test split):
``<quantity>_<decoder>_<recipe>_h256_<budget>_<n>seeds_<split>``. A row is compared seed by seed with the baseline
of its budget, or with the row after ``vs`` (then the name gets ``_vs_<that recipe>``)."""
# the baseline recipe's settings the appendix states (``<setting>_bahdanau_recipe_baseline``, from its dev runs)
BASELINE_SETTINGS = ("hidden_size", "batch_size", "learning_rate", "epochs", "dropout", "label_smoothing")


def _seed_quantities(runs: list[dict], split: str, reference: list[dict]) -> dict[str, str]:
    """A recipe row's BLEU (mean, interval, per seed), how long its seeds ran (the CPU time the budget counts, the
    wall-clock time, the epochs finished) and its seed-paired differences with `reference`'s."""
    bleus = [run[split]["bleu"] for run in runs]
    cpu, wall, epochs = ([run[key] for run in runs] for key in ("cpu_seconds", "wall_seconds", "epochs"))
    found = {f"bleu_{bound}": value for bound, value in _interval(bleus).items()}
    found |= {f"bleu_seed{seed}": score(bleu) for seed, bleu in enumerate(bleus)}
    found |= {
        f"cpu_seconds_{k}": f"{round(f(cpu)):,}"
        for k, f in (("min", min), ("max", max), ("mean", lambda x: seed_interval(x)[0]))
    }
    found |= {f"wall_seconds_{k}": f"{round(f(wall)):,}" for k, f in (("min", min), ("max", max))}
    found |= {"epochs_min": str(min(epochs)), "epochs_max": str(max(epochs))}
    paired = [a - b[split]["bleu"] for a, b in zip(bleus, reference, strict=True)]
    found |= {f"diff_{bound}": value for bound, value in _paired(paired).items()}
    found["cpu_percent_more"] = f"{100 * (sum(cpu) / sum(run['cpu_seconds'] for run in reference) - 1):.0f}"
    return found


def _recipes(values: dict[str, str], root: Path) -> None:
    """The appendix's recipe runs (H=256; the decoder from each run's config): three seeds a row on the dev split, five
    on the test split. Every row's files are read (and must hold that many seeds); the pages show `RECIPES_SHOWN`.
    Then the external measurements (Joey NMT, measured by others): greedy BLEU per run, mean and interval at about
    300 CPU-s on the test split, beam 5's mean, and the Transformer's one run at about 60 CPU-s."""
    for split, folder, seeds in (("dev", RECIPE, 3), ("test", f"{RECIPE}/final", 5)):
        shown = {}  # (row, the row it is compared with) -> quantities
        for key, quantities in RECIPES_SHOWN[split].items():
            row, _, other = key.partition(" vs ")
            shown[row, other or ("baseline-60s" if "-60s" in row else "baseline")] = quantities
        rows = {path.name.rsplit("-seed", 1)[0] for path in (root / folder).glob("*-seed*.json")}
        runs: dict[str, list[dict]] = {}
        for row in sorted(rows | {row for key in shown for row in key}):
            paths, pattern = sorted((root / folder).glob(f"{row}-seed*.json")), f"{folder}/{row}-seed*.json"
            if len(paths) != seeds:
                fail(pattern, "(the files)", f"{seeds} seeds", str(len(paths)), COMMANDS[folder], "them")
            runs[row] = [_read(str(p.relative_to(root)), f"quality-{split}", root, COMMANDS[folder]) for p in paths]
        if split == "dev":
            for setting in BASELINE_SETTINGS:
                values[f"{setting}_bahdanau_recipe_baseline"] = f"{runs['baseline'][-1]['config'][setting]:g}"
        for (row, reference), quantities in shown.items():
            versus = "" if reference.startswith("baseline") else f"_vs_{recipe_name(reference).removeprefix('recipe_')}"
            budget = "60s" if "-60s" in row else "300s"
            decoder = runs[row][-1]["config"]["decoder"]
            label = f"{decoder}_{recipe_name(row)}{versus}_h256_{budget}_{seeds}seeds_{split}"
            found = _seed_quantities(runs[row], split, runs[reference])
            values.update((f"{quantity}_{label}", found[quantity]) for quantity in quantities)
    for name, count in EXTERNAL_RUNS.items():
        relative, model = EXTERNAL.format(name=name), name.replace("-", "_")
        data = _read(relative, "external-runs", root)
        if len(data["runs"]) != count:
            fail(relative, "runs", f"{count} runs", str(len(data["runs"])), COMMANDS[relative])
        label = f"{model}_300s_{count}runs_test"
        greedy = _interval([run["greedy_bleu"] for run in data["runs"]])
        values |= {f"external_bleu_{bound}_{label}": value for bound, value in greedy.items()}
        if name == "joey-transformer":
            beam5 = seed_interval([run["beam5_bleu"] for run in data["runs"]])[0]
            values[f"external_bleu_beam5_mean_{label}"] = score(beam5)
            values[f"external_bleu_{model}_60s_1run_test"] = score(data["at_60s"]["greedy_bleu"])


LIVE_FIRST_FILES = ("weights.bin", "vocabularies.json", "sentences.json")  # the live page's `data-first-files`
LIVE_LUONG_FILES = ("luong/weights.bin",)  # and its `data-luong-files`, downloaded after the first translation


def _live(values: dict[str, str], root: Path) -> None:
    """The size of the live page's sentence list, once every file the page downloads is there and not empty."""
    for name in LIVE_FIRST_FILES + LIVE_LUONG_FILES:
        path = root / LIVE / name
        if not path.is_file():
            fail(f"{LIVE}/{name}", "(the file)", "a file", "a folder" if path.is_dir() else "none", COMMANDS[LIVE])
        if not path.stat().st_size:
            fail(f"{LIVE}/{name}", "(the file)", "a non-empty file", "0 bytes", COMMANDS[LIVE])
    values["kb_sentences_live"] = f"{(root / LIVE / 'sentences.json').stat().st_size / 1e3:.0f}"


def values(root: Path = ROOT) -> dict[str, str]:
    """Every named value, formatted as the prose writes it (a string: "37.56", "5,318", "18.3")."""
    found: dict[str, str] = {}
    for part in (_compare, _corpus, _packaged, _benchmark, _recipes, _seq2seq, _fence_record, _sentiment, _live):
        part(found, root)
    return found


def define_env(env: Any) -> None:
    """mkdocs-macros: every value becomes a page variable; a failed read stops the build with its one line."""
    from mkdocs.exceptions import PluginError

    try:
        env.variables.update(values())
    except FileError as error:
        raise PluginError(str(error)) from None
