"""The performance page's tables, in Korean, generated from the benchmark's JSON (never copied by hand).

    python -m benchmarks.tables

reads `results/performance/benchmark.json`, `threads2/benchmark.json`, `tuning.jsonl` and `one_path.json`
(`benchmarks.trainer_ab` and `benchmarks.fused`, issue 18) and `profile.json`
(`benchmarks.profile_trainer`, issue 22) and writes
`results/performance/tables.ko.md`, whose snippet sections the page includes at build time.
`tests/workbench/test_performance.py` checks that the committed file is what this module makes of the JSON.
"""

import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "performance"
LABELS = {
    "per_sentence": "문장 단위 (튜토리얼의 예전 판)",
    "tutorial": "튜토리얼 (배치 루프)",
    "project": "우리 학습기 (배치 64)",
}
TUTORIAL_BATCH = 32
"""The tutorial loop's batch size in the quality race (`benchmarks.quality`)."""


def section(name: str, lines: list[str]) -> list[str]:
    return [f"--8<-- [start:{name}]", *lines, f"--8<-- [end:{name}]", ""]


def speed(run: dict) -> list[str]:
    peak = run["sgemm_peak"]["gflops"]
    lines = [
        f"| 참가자 | pairs/s | 초/에폭 | 쓸모 있는 GFLOP/s | sgemm 최고({peak:.1f}) 대비 |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, contender in run["contenders"].items():
        lines.append(
            f"| {LABELS[key]} | {contender['pairs_per_s']:,.0f} | {contender['epoch_s']:.2f} "
            f"| {contender['useful_gflops_per_s']:.1f} | {contender['useful_fraction_of_sgemm_peak']:.0%} |"
        )
    ratios = run["ratios"]
    lines.append(
        f"| 우리 학습기 (배치 {ratios['fastest_batch_size']}, 가장 빠름) | - | - | - "
        f"| {ratios['fastest_batch_fraction_of_sgemm_peak']:.0%} |"
    )
    lines += [
        "",
        f"에폭 시간의 비({run['threads']} 스레드): 우리 학습기(배치 64)는 튜토리얼 루프보다 "
        f"**{ratios['project_vs_tutorial']:.2f}배**, 문장 단위 루프보다 **{ratios['project_vs_per_sentence']:.1f}배** "
        f"빠르고, 배치 {ratios['fastest_batch_size']}에서는 {ratios['fastest_batch_vs_tutorial']:.2f}배와 "
        f"{ratios['fastest_batch_vs_per_sentence']:.1f}배입니다.",
    ]
    return lines


def batch_sweep(run: dict) -> list[str]:
    tutorial = run["contenders"]["tutorial"]["epoch_s"]
    lines = ["| 배치 크기 | pairs/s | 초/에폭 | 튜토리얼 대비 |", "|---:|---:|---:|---:|"]
    for row in run["batch_sweep"]:
        ratio = tutorial / row["epoch_s"]
        lines.append(f"| {row['batch_size']} | {row['pairs_per_s']:,.0f} | {row['epoch_s']:.2f} | {ratio:.2f}배 |")
    return lines


def quality(run: dict) -> list[str]:
    project = {q["at_s"]: q for q in run["quality"]["project"]}
    tutorial_batches = math.ceil(run["data"]["train"] / TUTORIAL_BATCH)  # the tutorial's steps per epoch
    lines = ["| 학습 시간(초) | 튜토리얼 BLEU | 에폭 | 우리 BLEU | 에폭 |", "|---:|---:|---:|---:|---:|"]
    for peer in run["quality"]["tutorial"]:
        ours = project[peer["at_s"]]
        lines.append(
            f"| {peer['at_s']:.0f} | {peer['bleu']:.2f} | {peer['steps'] / tutorial_batches:.1f} | {ours['bleu']:.2f} "
            f"| {ours.get('epochs', 0):.1f} |"
        )
    return lines


def decoding(run: dict) -> list[str]:
    lines = ["| 디코딩 | 평가용 BLEU | 문장/초 |", "|---|---:|---:|"]
    for row in run["decoding"]:
        name = row["decoder"].replace("greedy", "탐욕적").replace("beam", "빔").replace("alpha", "α")
        lines.append(f"| {name} | {row['bleu']:.2f} | {row['sentences_per_s']:,.0f} |")
    return lines


def tuning(rows: list[dict]) -> list[str]:
    lines = ["| 예산(초) | 배치 | 학습률 | 스케줄 | dropout | label smoothing | 끝의 BLEU | 끝의 BLEU, 빔 k=5 |"]
    lines.append("|---:|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        settings, last = row["settings"], row["results"][-1]
        beam = f"{last['beam_bleu']:.2f}" if "beam_bleu" in last else "-"
        lines.append(
            f"| {row['budget_s']:.0f} | {settings['batch_size']} | {settings['learning_rate']:g} "
            f"| {settings.get('schedule', 'constant')} | {settings.get('dropout', 0.1)} "
            f"| {settings.get('label_smoothing', 0.0)} | {last['bleu']:.2f} | {beam} |"
        )
    return lines


def summary(one: dict, two: dict) -> list[str]:
    """The page's measurements in one table: what was measured and its value, nothing judged against a target."""
    r1, r2 = one["ratios"], two["ratios"]
    speed_tutorial = [r1["project_vs_tutorial"], r1["fastest_batch_vs_tutorial"], r2["project_vs_tutorial"]]
    speed_tutorial.append(r2["fastest_batch_vs_tutorial"])
    speed_sentence = [r1["project_vs_per_sentence"], r1["fastest_batch_vs_per_sentence"]]
    speed_sentence += [r2["project_vs_per_sentence"], r2["fastest_batch_vs_per_sentence"]]
    peaks = [one["contenders"]["project"]["useful_fraction_of_sgemm_peak"], r1["fastest_batch_fraction_of_sgemm_peak"]]
    peaks += [two["contenders"]["project"]["useful_fraction_of_sgemm_peak"], r2["fastest_batch_fraction_of_sgemm_peak"]]
    bleu = {q["at_s"]: q["bleu"] for q in one["quality"]["project"]}
    peer = {q["at_s"]: q["bleu"] for q in one["quality"]["tutorial"]}
    best_at = max(bleu, key=bleu.get)
    best_beam = max(d["bleu"] for d in one["decoding"])

    def four(values: list[float], unit: str, digits: int) -> str:
        a, b, c, d = (f"{v:.{digits}f}{unit}" for v in values)
        return f"1 스레드 {a}(배치 64), {b}(가장 빠른 배치); 2 스레드 {c}, {d}"

    return [
        "| 측정 | 값 |",
        "|---|---|",
        f"| 에폭 시간: 튜토리얼 루프 대비 몇 배 빠른가 | {four(speed_tutorial, '배', 2)} |",
        f"| 에폭 시간: 문장 단위 루프 대비 몇 배 빠른가 | {four(speed_sentence, '배', 1)} |",
        f"| 쓸모 있는 GFLOP/s ÷ sgemm 최고 속도 | {four([100 * p for p in peaks], '%', 0)} |",
        f"| 60초 학습 후 평가용 BLEU | {bleu[60.0]:.2f} (튜토리얼 루프 {peer[60.0]:.2f}) |",
        f"| 300초 안의 최고 평가용 BLEU | {bleu[best_at]:.2f}({best_at:.0f}초, 탐욕적), {best_beam:.2f}(300초, 빔) |",
    ]


def one_path(run: dict) -> list[str]:
    """The one teacher-forced loop against the old hand-fused path and the trainer before and after (issue 18)."""
    ab, fused = run["trainer_ab"], run["fused"]
    ratios, speeds = ab["median_trainer_over_tutorial"], fused["median_pairs_per_s"]
    return [
        "| 측정 (1 스레드, 배치 64, H=256, CPU 시간) | 전 | 후 | 후 ÷ 전 |",
        "|---|---:|---:|---:|",
        f"| 학습기 pairs/s ÷ 튜토리얼 루프 pairs/s (중앙값, {ab['rounds']}회 번갈아) "
        f"| {ratios['baseline']:.2f} | {ratios['this']:.2f} | {ab['this_over_baseline']:.3f} |",
        f"| 학습 한 번(순전파+역전파+Adam)의 pairs/s: 손으로 쓴 fused 경로 → 하나의 루프 "
        f"(중앙값, {fused['rounds']}회 번갈아) | {speeds['fused']:,.0f} | {speeds['loop']:,.0f} "
        f"| {fused['loop_over_fused']:.3f} |",
        "",
        f"명령: `{ab['command']}`, `{fused['command']}`",
    ]


def profile(run: dict, one_path_run: dict) -> list[str]:
    """Where a training step's CPU time goes, by part, and what that leaves for the next factor (issue 22)."""
    parts = {row["part"]: row for row in run["parts"]}
    forward = [key for key in parts if f"backward:{key}" in parts]
    lines = [
        "| 부분 | 순전파 ms/스텝 | 역전파 ms/스텝 | 몫 | 연산 호출/스텝 |",
        "|---|---:|---:|---:|---:|",
    ]
    for key in forward:
        row, back = parts[key], parts[f"backward:{key}"]
        lines.append(
            f"| {row['label']} | {row['ms_per_step']:.2f} | {back['ms_per_step']:.2f} "
            f"| {row['share'] + back['share']:.1%} | {row['ops_per_step'] + back['ops_per_step']:.0f} |"
        )
    for key, row in parts.items():
        if key not in forward and not key.startswith("backward:"):
            backward = row["label"].startswith("역전파")
            fwd, bwd = ("-", f"{row['ms_per_step']:.2f}") if backward else (f"{row['ms_per_step']:.2f}", "-")
            lines.append(f"| {row['label']} | {fwd} | {bwd} | {row['share']:.1%} | {row['ops_per_step']:.0f} |")
    profiled, plain = run["profiled"], run["plain"]
    lines.append(f"| **합** | | | 100% | {run['ops_per_step']:.0f} |")
    ratio = one_path_run["trainer_ab"]["median_trainer_over_tutorial"]["this"]
    bound = ratio / run["gemm_share"]
    lines += [
        "",
        f"한 스텝: 프로파일 없이 {plain['ms_per_step']:.1f} ms, 프로파일러를 켜고 {profiled['ms_per_step']:.1f} ms"
        f"(스레드 CPU 시간, {run['steps']}스텝, 쌍 {run['pairs']:,}개). 행렬 곱(`mm`, `addmm`, `bmm`)이 "
        f"**{run['gemm_share']:.0%}**({run['gemm_ms_per_step']:.1f} ms)이고, 이 곱들은 쓸모 있는 FLOP로 "
        f"{run['gemm_gflops_per_s']:.0f} GFLOP/s, 같은 프로세스의 sgemm 최고 {run['sgemm_peak_gflops']:.0f} GFLOP/s의 "
        f"{run['gemm_gflops_per_s'] / run['sgemm_peak_gflops']:.0%}로 돕니다. 행렬 곱이 아닌 시간을 모두 없애도 "
        f"튜토리얼 대비 비는 {ratio:.2f}배 ÷ {run['gemm_share']:.2f} ≈ **{bound:.1f}배**에서 멈추고, 곱마저 sgemm "
        f"최고 속도로 돈다 해도 {bound * run['sgemm_peak_gflops'] / run['gemm_gflops_per_s']:.1f}배입니다.",
        "",
        f"명령: `{run['command']}`",
    ]
    return lines


def render(one: dict, two: dict, tuning_rows: list[dict], one_path_run: dict, profile_run: dict) -> str:
    lines = [
        "<!-- made by `python -m benchmarks.tables` from benchmark.json, threads2/benchmark.json, tuning.jsonl,"
        " one_path.json, profile.json -->",
        "",
    ]
    lines += section("speed", speed(one))
    lines += section("batch_sweep", batch_sweep(one))
    lines += section("speed_threads2", speed(two))
    lines += section("quality", quality(one))
    lines += section("tuning", tuning(tuning_rows))
    lines += section("decoding", decoding(one))
    lines += section("summary", summary(one, two))
    lines += section("one_path", one_path(one_path_run))
    lines += section("profile", profile(profile_run, one_path_run))
    return "\n".join(lines)


def load() -> tuple[dict, dict, list[dict], dict, dict]:
    one = json.loads((OUT / "benchmark.json").read_text(encoding="utf-8"))
    two = json.loads((OUT / "threads2" / "benchmark.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (OUT / "tuning.jsonl").read_text(encoding="utf-8").splitlines() if line]
    one_path_run = json.loads((OUT / "one_path.json").read_text(encoding="utf-8"))
    profile_run = json.loads((OUT / "profile.json").read_text(encoding="utf-8"))
    return one, two, rows, one_path_run, profile_run


def main() -> int:
    (OUT / "tables.ko.md").write_text(render(*load()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
