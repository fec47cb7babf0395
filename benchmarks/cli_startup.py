"""How long the command line takes to answer: `seq2seq-attention --help` and `translate` of one sentence.

    python -m benchmarks.cli_startup              # 5 rounds of each, medians printed
    python -m benchmarks.cli_startup --rounds 10

Each round starts a fresh interpreter (`python -m seq2seq_attention ...`, what the installed
command runs) and measures its wall-clock time to exit, imports included. Issue 41 asks for
`--help` under 0.5 s and `translate` of one sentence under 3 s on a quiet machine; this prints the
times and the load average, and asserts nothing (a test never checks wall-clock time). It also
prints the modules `--help` loaded of torch and matplotlib (expected: none).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "--help": ["--help"],
    "--version": ["--version"],
    "models": ["models"],
    "translate one sentence": ["translate", "je suis fatigue ."],
}

PROBE = (
    "import contextlib, io, sys\n"
    "from seq2seq_attention.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'matplotlib')))\n"
)


def seconds(argv: list[str]) -> float:
    tic = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "seq2seq_attention", *argv], capture_output=True, text=True)
    elapsed = time.perf_counter() - tic
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command (default: 5)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    loaded = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.strip()
    print(
        f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}; --help loads of torch/matplotlib: "
        f"{loaded}"
    )
    seconds(["--version"])  # a first run fills the file cache; not counted
    medians = {}
    for name, argv in COMMANDS.items():
        times = [seconds(argv) for _ in range(args.rounds)]
        medians[name] = statistics.median(times)
        print(json.dumps({"command": name, "seconds": [round(t, 3) for t in times], "median": round(medians[name], 3)}))
    print(
        f"median: --help {medians['--help']:.2f} s (goal 0.5 s), translate of one sentence "
        f"{medians['translate one sentence']:.2f} s (goal 3 s), load average now {os.getloadavg()[0]:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
