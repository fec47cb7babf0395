"""README's two commands are single fenced blocks, CI runs the test command word for word, and the site command
installs only the site's tools (requirements-docs.txt, the same list as pyproject's `docs` extra), not PyTorch."""

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
