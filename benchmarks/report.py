"""The JSON an interleaved A/B benchmark prints and commits: its command, its runs, then what it derives."""

import json
import sys
from pathlib import Path


def ab_result(module: str, argv: list[str] | None, rounds: int, rates: dict[str, list[float]], **derived) -> dict:
    """The command that made the runs, the per-round pairs/s of each arm, and the figures derived from them."""
    return {
        "command": f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:]),
        "rounds": rounds,
        "pairs_per_s": {name: [round(x, 1) for x in values] for name, values in rates.items()},
        **derived,
    }


def emit(result: dict, out: Path | None) -> int:
    """Print the result as one JSON line and, with `out`, write it there too (the committed results file)."""
    print(json.dumps(result))
    if out:
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
