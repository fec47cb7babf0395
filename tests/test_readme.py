"""README's two commands are single fenced blocks, CI runs the test command word for word, and the site command
installs only the site's tools (requirements-docs.txt, the same list as pyproject's `docs` extra), not PyTorch."""

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _section_command(title: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"README section {title!r} must hold exactly one bash block, found {len(blocks)}"
    lines = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(lines) == 1, f"README section {title!r} must be one command line, found {lines}"
    return lines[0]


def test_ci_runs_the_readme_test_command():
    command = _section_command("Run all tests")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci, f".ci/run must run README's test command as a line of its own: {command}"


def test_site_command_builds_strictly():
    assert "mkdocs build --strict" in _section_command("Build and serve the site")


def test_site_command_installs_only_the_site_tools():
    command = _section_command("Build and serve the site")
    assert "pip install -r requirements-docs.txt" in command, command
    assert "-e ." not in command and '".[' not in command, (
        f"the site command installs the package (and torch): {command}"
    )
    listed = [
        line.strip()
        for line in (ROOT / "requirements-docs.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"][
        "docs"
    ]
    assert listed == extra, "requirements-docs.txt and the docs extra of pyproject.toml differ"
    assert not [name for name in listed if re.match(r"(torch|seq2seq-attention)\b", name)], listed


def test_the_test_command_installs_the_cpu_wheel_of_torch():
    """`torch==2.13.0` is the CPU wheel in CI (`2.13.0+cpu`); without a pin pip takes the newest torch and its
    CUDA wheels (about 2.8 GB) on a machine without a GPU. The pin rides in the same pip call as the package."""
    command = _section_command("Run all tests")
    installs = [part.strip() for part in command.split("&&") if part.strip().startswith("pip install")]
    assert len(installs) == 1, f"one pip call installs torch and the package: {installs}"
    words = installs[0].split()
    assert "torch==2.13.0" in words and words.index("torch==2.13.0") < words.index("-e"), installs[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    other = [line for line in ci if "pip install" in line and line != command and not line.lstrip().startswith("#")]
    assert not other, f".ci/run installs with pip only through README's command, found {other}"


def test_the_gpu_command_is_the_test_command_without_the_pin():
    command = _section_command("Run all tests")
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Run all tests", 1)[1].split("\n## ", 1)[0]
    gpu = command.replace("pip install torch==2.13.0 ", "pip install ")
    assert f"`{gpu}`" in section, f"README's one line for a GPU machine must be the command without the pin: {gpu}"


def test_the_gpu_claim_matches_the_fence_record():
    """README says what docs/fence-runs.json shows about GPU runs: none yet, or the date of the last one."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    record = json.loads((ROOT / "docs" / "fence-runs.json").read_text(encoding="utf-8"))
    dates = sorted(
        run["date"]
        for fences in record["pages"].values()
        for fence in fences
        for device, run in fence["runs"].items()
        if device == "cuda"
    )
    flat = " ".join(readme.split())
    if dates:
        assert f"last GPU run of the fences is recorded on {dates[-1]}" in flat, dates[-1]
        assert "holds no GPU run yet" not in flat
    else:
        assert "holds no GPU run yet" in flat


def test_the_command_line_section_shows_commands_that_parse():
    """Each `seq2seq-attention` line of README's "Command line" section is a command the parser accepts, and they
    show the packaged models by name, the models list, translate, plot-attention, train and resume."""
    import shlex

    from seq2seq_attention.cli import build_parser

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    commands = [shlex.split(line.split("|")[-1]) for line in block.splitlines() if line.strip()]
    assert all(words[0] == "seq2seq-attention" for words in commands), commands
    for words in commands:
        build_parser().parse_args(words[1:])  # an unknown option or command exits 2 and fails the test
    shown = {words[1] for words in commands}
    assert {"models", "translate", "plot-attention", "train"} <= shown, shown
    flat = [word for words in commands for word in words]
    assert "--model" in flat and "--resume" in flat and "--checkpoint" in flat
