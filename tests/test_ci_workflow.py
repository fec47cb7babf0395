"""The GitHub Actions workflow tests on CPU with README's command and deploys the strict build from main."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
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
    assert first_torch < runs.index(next(run for run in runs if run.strip() == command))
    installs = " ".join(runs)
    assert "chromium" in installs and "chromium-driver" in installs, "the browser test would skip in CI"


def test_site_is_built_strictly_and_deployed_from_main_only():
    workflow = _workflow()
    assert "main" in workflow["on"]["push"]["branches"]
    jobs = workflow["jobs"]
    (build,) = [job for job in jobs.values() if "actions/upload-pages-artifact" in _uses(job)]
    build_run = next(run for run in _runs(build) if "mkdocs build" in run)
    assert "mkdocs build --strict" in build_run
    site_dir = re.search(r"--site-dir\s+(\S+)", build_run)
    upload = next(step for step in build["steps"] if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert site_dir and upload["with"]["path"].strip("./") == site_dir.group(1).strip("./")
    (deploy_name, deploy), *others = [(n, j) for n, j in jobs.items() if "actions/deploy-pages" in _uses(j)]
    assert not others
    assert "refs/heads/main" in deploy["if"] and "push" in deploy["if"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    testing = [name for name, job in jobs.items() if _readme_test_command() in [r.strip() for r in _runs(job)]]
    assert set(testing) <= set(deploy["needs"]), f"{deploy_name} must wait for the tests"
