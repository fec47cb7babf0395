"""How long the command line takes to answer: every kind of `--help`, an argument error, and `translate` of one
sentence.

    python -m benchmarks.cli_startup              # 5 rounds of each, medians printed
    python -m benchmarks.cli_startup --rounds 10

Each round starts a fresh interpreter (`python -m seq2seq_attention ...`, what the installed
command runs) and measures its wall-clock time to exit, imports included. The goals (issues 41 and 52): every
`--help` and every argument error under 0.5 s (parsing imports no torch), and `translate` of one
sentence under 3 s on a quiet machine. This prints the times and the load average, and asserts
nothing (a test never checks wall-clock time). It also prints the modules `translate --help` loaded
of torch and matplotlib (expected: none).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "--help": (["--help"], 0),
    "--version": (["--version"], 0),
    "models": (["models"], 0),
    "translate --help": (["translate", "--help"], 0),
    "train --help": (["train", "--help"], 0),
    "an argument error": (["train", "--checkpoint", "c", "--epochs", "0"], 2),
    "translate one sentence": (["translate", "je suis fatigue ."], 0),
}
"""Each measured command: its arguments and the exit status it must end with."""

FAST = [name for name in COMMANDS if name != "translate one sentence"]
"""The commands whose goal is 0.5 s (no torch)."""

PROBE = (
    "import contextlib, io, sys\n"
    "from seq2seq_attention.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n        main(['translate', '--help'])\n    except SystemExit:\n        pass\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib')))\n"
)


def seconds(argv: list[str], status: int = 0) -> float:
    tic = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "seq2seq_attention", *argv], capture_output=True, text=True)
    elapsed = time.perf_counter() - tic
    if result.returncode != status:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}, not {status}: {result.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (default: 5)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    loaded = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.strip()
    print(
        f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}; translate --help loads of "
        "torch/matplotlib: "
        f"{loaded}"
    )
    seconds(["--version"])  # a first run fills the file cache; not counted
    medians = {}
    for name, (argv, status) in COMMANDS.items():
        times = [seconds(argv, status) for _ in range(args.rounds)]
        medians[name] = statistics.median(times)
        print(json.dumps({"command": name, "seconds": [round(t, 3) for t in times], "median": round(medians[name], 3)}))
    slowest = max(FAST, key=medians.get)
    print(
        f"median: slowest of {', '.join(FAST)}: {slowest} {medians[slowest]:.2f} s (goal 0.5 s); translate of one "
        f"sentence {medians['translate one sentence']:.2f} s (goal 3 s); load average now {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
