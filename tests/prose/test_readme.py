"""README's two commands are single fenced blocks, CI runs the test command word for word, and the site command
installs only the site's tools (requirements-docs.txt, the same list as pyproject's `docs` extra), not PyTorch."""

import json
import re
import tomllib

import course_values
from support import ROOT


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


CPU_WHEEL = "pip install --no-deps torch==2.13.0+cpu --index-url https://download.pytorch.org/whl/cpu"


def test_the_test_command_installs_the_cpu_wheel_of_torch():
    """Without it pip takes PyPI's torch, on Linux the CUDA build with about 2.8 GB of CUDA wheels, on a machine
    without a GPU. The CPU wheel comes alone (`--no-deps`) from PyTorch's CPU index, before the package, so that
    the package's `torch>=2.4` is already satisfied; its dependencies then come from PyPI with the package."""
    command = _section_command("Run all tests")
    installs = [part.strip() for part in command.split("&&") if part.strip().startswith("pip install")]
    assert installs == [CPU_WHEEL, 'pip install -e ".[dev]"'], f"the CPU wheel first, then the package: {installs}"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    other = [line for line in ci if "pip install" in line and line != command and not line.lstrip().startswith("#")]
    assert not other, f".ci/run installs with pip only through README's command, found {other}"


def test_the_gpu_command_is_the_test_command_without_the_cpu_wheel():
    command = _section_command("Run all tests")
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Run all tests", 1)[1].split("\n## ", 1)[0]
    gpu = command.replace(f"{CPU_WHEEL} && ", "")
    assert gpu != command and f"`{gpu}`" in section, f"README's one line for a GPU machine must be: {gpu}"


def test_the_gpu_claim_matches_the_fence_record():
    """CONTRIBUTING says what docs/fence-runs.json shows about GPU runs: none yet, or the date of the last one."""
    readme = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    record = json.loads((ROOT / "docs" / "fence-runs.json").read_text(encoding="utf-8"))
    dates = sorted(
        run["date"]
        for fences in record["pages"].values()
        for fence in fences
        for device, run in fence["runs"].items()
        if device == "cuda"
    )
    flat = " ".join(readme.split())
    # the site says it too, on its verification appendix (the home page's first screen is for learners)
    home = " ".join((ROOT / "docs" / "appendix" / "verification.md").read_text(encoding="utf-8").split())
    if dates:
        assert f"last GPU run of the fences is recorded on {dates[-1]}" in flat, dates[-1]
        assert "holds no GPU run yet" not in flat
        # the page renders the date from the record (hooks/course_values.py)
        assert "GPU 실행은 {{ gpu_record_date }}" in home and "GPU 실행은 아직 기록되지 않았습니다" not in home
        assert course_values.values()["gpu_record_date"] == dates[-1]
    else:
        assert "holds no GPU run yet" in flat
        assert "GPU 실행은 아직 기록되지 않았습니다" in home


def test_install_comes_first_with_a_cpu_line_and_a_gpu_line_and_the_home_page_links_it():
    """README's first section installs the package: one line for a machine without a GPU (PyTorch's CPU wheel first,
    as the test command does) and one for a GPU machine (the package alone); every command comes after it. The home
    page says the same two lines and points to README's section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    titles = re.findall(r"^## (.+)$", readme, flags=re.M)
    assert titles[0] == "Install", titles
    section = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    cpu_line = f"{CPU_WHEEL} && pip install -e ."
    assert block.splitlines()[1:] == [cpu_line, "pip install -e ."], block
    assert re.findall(r"```bash\n(.*?)```", readme, flags=re.S)[0] == block  # no command comes before it
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert cpu_line in home and "\npip install -e .\n" in home and '`README.md`,\n"Install" 절' in home


def test_readme_is_for_users_and_contributing_keeps_the_maintainers_material():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for maintainers in ("--record-fences", "record_traces.py", "course_values.py", "last GPU run of the fences"):
        assert maintainers not in readme and maintainers in contributing, maintainers
    assert "CONTRIBUTING.md" in readme


class _Stop(Exception):
    """Raised where a command would load its training data: it was parsed and its checks passed."""


def test_the_command_line_section_shows_commands_that_work(tmp_path, monkeypatch, capsys):
    """Each `seq2seq-attention` line of README's "Command line" section runs (training stops where it would load
    its data), and they show the packaged models by name, the models list, translate, plot-attention, train and
    resume."""
    import io
    import shlex
    import sys

    import torch

    from seq2seq_attention.cli import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    lines = [line for line in block.splitlines() if line.strip()]
    shown = {shlex.split(line.split("|")[-1])[1] for line in lines}
    assert {"models", "translate", "plot-attention", "train"} <= shown, shown
    flat = " ".join(lines)
    assert "--model " in flat and "--resume" in flat and "--checkpoint" in flat

    def stop(*args, **kwargs):
        raise _Stop

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("seq2seq_attention.translation.train.load_pairs", stop)
    threads = torch.get_num_threads()
    try:
        for line in lines:
            pipe, _, command = line.rpartition("|")
            words = shlex.split(command)
            assert words[0] == "seq2seq-attention", line
            stdin = shlex.split(pipe)[1].encode().decode("unicode_escape") if pipe else ""
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
            try:
                code = main(words[1:])
            except _Stop:
                continue
            except SystemExit as exit_info:  # argparse refused the line
                raise AssertionError(f"{line}: {capsys.readouterr().err}") from exit_info
            out, err = capsys.readouterr()
            if "--checkpoint runs/mine" in line and words[1] == "translate":
                assert code == 2 and "no checkpoint at runs/mine" in err  # not trained here
            elif "xylophoniste" in line:
                assert code == 2 and out.split("\n")[1] == "" and "line 2 of standard input" in err, (out, err)
            else:
                assert code == 0, f"{line}: {err}"
    finally:
        torch.set_num_threads(threads)
    assert (tmp_path / "attention.png").is_file()
