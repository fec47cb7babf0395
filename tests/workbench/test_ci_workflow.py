"""The GitHub Actions workflow tests on CPU with README's command and deploys the strict build from main."""

import re
import subprocess
import sys
from pathlib import Path

import yaml
from support import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"


def _workflow() -> dict:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads a bare `on` as True
    return workflow


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Run all tests", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return block.strip()


def _runs(job: dict) -> list[str]:
    return [step.get("run", "") for step in job["steps"]]


def _uses(job: dict) -> list[str]:
    return [step.get("uses", "").split("@")[0] for step in job["steps"]]


def test_tests_run_on_cpu_with_the_readme_command():
    jobs = _workflow()["jobs"]
    command = _readme_test_command()
    testing = [name for name, job in jobs.items() if any(command == run.strip() for run in _runs(job))]
    assert testing, f"no job runs README's test command as a step of its own: {command}"
    runs = _runs(jobs[testing[0]])
    first_torch = next((i for i, run in enumerate(runs) if "pip install" in run and "torch" in run), None)
    assert first_torch is not None and CPU_INDEX in runs[first_torch], "install the CPU wheel of torch first"
    assert first_torch <= runs.index(next(run for run in runs if run.strip() == command))
    installs = " ".join(runs)
    assert "chromium" in installs and "chromium-driver" in installs, "the browser test would skip in CI"


def test_site_is_built_strictly_and_published_from_main_only_with_its_zip():
    workflow = _workflow()
    assert "main" in workflow["on"]["push"]["branches"]
    jobs = workflow["jobs"]
    assert any("mkdocs build --strict" in run for run in _runs(jobs["site"]))  # every push and pull request
    (deploy_name, deploy), *others = [
        (n, j) for n, j in jobs.items() if any("push" in r and "gh-pages" in r for r in _runs(j))
    ]
    assert not others
    assert "refs/heads/main" in deploy["if"] and "push" in deploy["if"]
    assert set(deploy["permissions"]) == {"contents"} and deploy["permissions"]["contents"] == "write"
    build = next(run for run in _runs(deploy) if "mkdocs build" in run)
    assert "mkdocs build --strict --site-dir site" in build and "zipfile -c seq2seq-attention-site.zip site/" in build
    testing = [name for name, job in jobs.items() if _readme_test_command() in [r.strip() for r in _runs(job)]]
    assert set(testing) <= set(deploy["needs"]), f"{deploy_name} must wait for the tests"


def test_a_gpu_job_runs_the_readme_gpu_line_on_cuda_when_a_runner_is_named():
    """README's GPU line is its test command without the CPU wheel's install (pip then takes the CUDA build)."""
    jobs = _workflow()["jobs"]
    command = _readme_test_command()
    cpu_wheel = next(part.strip() for part in command.split("&&") if CPU_INDEX in part)
    expected = command.replace(f"{cpu_wheel} && ", "") + " --devices=cuda"
    gpu = [job for job in jobs.values() if any(r.strip() == expected for r in _runs(job))]
    assert len(gpu) == 1
    assert gpu[0]["runs-on"] == "${{ vars.GPU_RUNNER }}" and gpu[0]["if"] == "vars.GPU_RUNNER != ''"


def test_no_job_uses_an_action_or_keeps_a_credential():
    workflow = _workflow()
    assert workflow["permissions"] == {}  # nothing by default; each job asks for what it needs
    for name, job in workflow["jobs"].items():
        assert all("uses" not in step for step in job["steps"]), f"{name} uses an action"
        assert set(job["permissions"]) == {"contents"}, name
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), f"{name}: expressions go through env, not into scripts"
            config_lines = [line for line in step.get("run", "").splitlines() if "git config" in line]
            assert not any("http." in line for line in config_lines), f"{name} stores the token in git's config"


def _zizmor(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "zizmor"), "--offline", "--no-progress", "--format", "plain", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_workflow_linter_finds_nothing():
    result = _zizmor(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


def test_the_workflow_linter_would_see_an_unpinned_action(tmp_path: Path):
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n",
        encoding="utf-8",
    )
    result = _zizmor(bad)
    assert result.returncode != 0 and "unpinned-uses" in result.stdout + result.stderr
