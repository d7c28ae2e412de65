"""What a deploy installs and signs in to: the locked dependencies (Makefile, Pulumi's uv toolchain, the policy pack's
requirements), the tests before dev, the clouds each run logs in to, the credential plugins' versions, the Azure
credential the state backend uses, and Dependabot's directories."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = {p.stem: yaml.safe_load(p.read_text()) for p in sorted((ROOT / ".github" / "workflows").glob("*.yml"))}
SCRIPT = ROOT / ".github" / "scripts" / "stack-clouds.sh"
BIN = Path(sys.executable).parent
UV_VERSION = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)[1]
LOCK = {p["name"]: p for p in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}


def _action(step: dict) -> str:
    return str(step.get("uses", "")).split("@")[0]


def _steps(flow: str, job: str) -> list[dict]:
    return WORKFLOWS[flow]["jobs"][job]["steps"]


def _pulumi_steps() -> list[dict]:
    return [s for flow in WORKFLOWS.values() for job in flow["jobs"].values() for s in job.get("steps", [])
            if _action(s) == "pulumi/actions"]


# --- the locked dependencies -------------------------------------------------------------------------------------------


def _closure(*roots: str) -> dict[str, str]:
    found: dict[str, str] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in found:
            found[name] = LOCK[name]["version"]
            todo += [d["name"] for d in LOCK[name].get("dependencies", [])]
    return found


def test_the_policy_packs_requirements_pin_uv_locks_versions_of_everything_the_pack_installs() -> None:
    """pip and `uv pip` read no uv.lock: with ranges, `make policy-pack` took the newest grpcio and protobuf of the day,
    not what the tests ran the pack with."""
    lines = [line for line in (ROOT / "policies" / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    pins = dict(line.split("==") for line in lines)
    assert all(re.fullmatch(r"[a-z0-9-]+==[\w.]+", line) for line in lines), lines
    assert pins == _closure("pulumi-policy", "pulumi")
    assert {"pulumi", "pulumi-policy", "grpcio", "protobuf"} <= set(pins)


def test_nothing_installs_or_runs_from_a_lock_that_no_longer_matches_pyproject() -> None:
    """`--frozen` installs uv.lock as it is, stale or not; `--locked` stops when pyproject.toml moved without it."""
    makefile = "\n".join(line for line in (ROOT / "Makefile").read_text().splitlines() if not line.startswith("#"))
    assert "--frozen" not in makefile
    assert re.search(r"^\t\$\(UV\) sync --locked$", makefile, re.MULTILINE)
    assert all("--locked" in line for line in makefile.splitlines() if "$(UV) run" in line)
    runs = [(flow, str(s.get("run", ""))) for flow, w in WORKFLOWS.items() for job in w["jobs"].values()
            for s in job.get("steps", [])]
    frozen = [(flow, run) for flow, run in runs if "--frozen" in run]
    # Only the pull request's base, the reference of its diff, plans as it was merged.
    assert [run.splitlines()[0] for _, run in frozen] == [
        "# A base that cannot be set up or planned counts as empty: the head's diff then lists everything as added."]
    assert all("--locked" in line for _, run in runs for line in run.splitlines()
               if "uv run" in line and "--frozen" not in line)


def test_pulumis_uv_toolchain_may_not_re_lock_at_deploy() -> None:
    """Pulumi.yaml's `toolchain: uv` runs `uv sync` (sdk/python/toolchain/uv.go) with the step's environment."""
    assert yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"]["toolchain"] == "uv"
    steps = _pulumi_steps()
    assert len(steps) == 3 and all(s["env"]["UV_LOCKED"] == "1" for s in steps)


def _uv() -> str:
    found = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    if not Path(found).exists():
        pytest.skip("no uv")
    return found


def test_uv_stops_on_a_stale_lock_under_uv_locked_and_below_the_required_version(tmp_path: Path) -> None:
    """What the settings above rely on, with the uv on PATH (CI's is the pinned one)."""
    uv = _uv()
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = []\n'
        '[tool.uv]\npackage = false\n')
    assert subprocess.run([uv, "lock", "--offline", "-q"], cwd=project, capture_output=True).returncode == 0
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text().replace("0.1.0", "0.2.0"))
    done = subprocess.run([uv, "sync", "--offline", "--inexact"], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "UV_LOCKED": "1"})
    # uv wraps its messages to the terminal's width: compare with the line breaks taken out.
    assert done.returncode != 0 and "needs to be updated, but `UV_LOCKED=1` was provided" in " ".join(done.stderr.split())
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text() + 'required-version = ">=999"\n')
    done = subprocess.run([uv, "sync", "--offline"], cwd=project, capture_output=True, text=True)
    assert done.returncode != 0 and "Required uv version `>=999` does not match" in " ".join(done.stderr.split())


def test_the_required_uv_is_the_one_ci_installs() -> None:
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["required-version"]
    assert required == f">={UV_VERSION}"
    setups = [s for w in WORKFLOWS.values() for job in w["jobs"].values() for s in job.get("steps", [])
              if _action(s) == "astral-sh/setup-uv"]
    assert len(setups) == 4 and {s["with"]["version"] for s in setups} == {UV_VERSION}


# --- tests before the first deploy -------------------------------------------------------------------------------------


def test_the_merged_commit_passes_the_tests_before_dev_deploys() -> None:
    jobs = WORKFLOWS["deploy"]["jobs"]
    test = jobs["test"]
    assert jobs["dev"]["needs"] == "test" and jobs["staging"]["needs"] == "dev" and jobs["prod"]["needs"] == "staging"
    assert [str(s.get("run")) for s in test["steps"] if "run" in s] == ["make test"]
    assert test["permissions"] == {"contents": "read"}  # no OIDC token: nothing here reaches a cloud
    uses = [_action(s) for s in test["steps"]]
    assert uses.index("astral-sh/setup-uv") < len(uses) - 1  # `make test` needs uv on PATH (or .tools/bin, off it)
    assert test["steps"][0]["with"]["persist-credentials"] is False


# --- the clouds a run signs in to --------------------------------------------------------------------------------------


CLOUD_STEPS = {"aws": ["aws-actions/configure-aws-credentials"],
               "gcp": ["google-github-actions/auth", "google-github-actions/setup-gcloud"],
               "azure": ["azure/login", "azure/use-kubelogin"]}


@pytest.mark.parametrize(("flow", "job"), [("pulumi-up", "up"), ("preview", "pulumi-preview")])
def test_each_login_runs_only_for_a_cloud_the_run_needs_and_checks_every_setting_it_reads(flow: str, job: str) -> None:
    steps = _steps(flow, job)
    [check] = [i for i, s in enumerate(steps) if s.get("id") == "clouds"]
    assert steps[check]["run"] == "bash .github/scripts/stack-clouds.sh"
    assert steps[check]["env"]["CHECK_ALWAYS"] == "PULUMI_BACKEND_URL"
    assert "PULUMI_BACKEND_URL" in {s["with"]["cloud-url"].split("vars.")[1].rstrip(" }") for s in steps
                                    if _action(s) == "pulumi/actions"}
    setup = next(i for i, s in enumerate(steps) if "make setup" in str(s.get("run", "")))
    assert setup < check  # `aiinfra validate` runs from the project's virtualenv
    for cloud, actions in CLOUD_STEPS.items():
        checked = set(steps[check]["env"][f"CHECK_{cloud.upper()}"].split())
        for step in (s for s in steps if _action(s) in actions):
            assert steps.index(step) > check
            assert step["if"] == f"steps.clouds.outputs.{cloud} == 'true'", step
            read = set(re.findall(r"vars\.([A-Z_]+)", str(step.get("with", {}))))
            assert read <= checked, (step, read - checked)  # a login never runs with an unset setting
        for name in checked:
            assert steps[check]["env"][name] == f"${{{{ vars.{name} }}}}"
    start = next(s for s in steps if s.get("run") == "scripts/azure-login-refresh.sh start")
    assert start["if"] == "steps.clouds.outputs.azure == 'true'"


def _fake_uv(tmp_path: Path, text: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "uv").write_text(text)
    (bin_dir / "uv").chmod(0o755)
    return bin_dir


def _real_uv(tmp_path: Path) -> Path:
    """`uv run --locked aiinfra ...` runs this virtualenv's aiinfra."""
    return _fake_uv(tmp_path, f'#!/bin/sh\n[ "$1 $2" = "run --locked" ] || exit 9\nshift 2\nexec {BIN}/"$@"\n')


DEPLOY_CHECK = next(s for s in _steps("pulumi-up", "up") if s.get("id") == "clouds")
SET = {"PULUMI_BACKEND_URL": "s3://acme-ml-pulumi-state?region=us-east-1", "AWS_DEPLOY_ROLE_ARN": "arn:aws:iam::1:role/d",
       "GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/locations/global/workloadIdentityPools/p/providers/p",
       "GCP_DEPLOY_SERVICE_ACCOUNT": "deploy@p.iam.gserviceaccount.com"}


def _check(tmp_path: Path, bin_dir: Path, stack: str, cwd: Path = ROOT, **values: str) -> tuple[int, str, dict]:
    output = tmp_path / "github_output"
    output.write_text("")
    env = {k: v for k, v in DEPLOY_CHECK["env"].items() if "${{" not in v}
    env.update(PATH=f"{bin_dir}:/usr/bin:/bin", GITHUB_OUTPUT=str(output), STACK=stack,
               HINT=DEPLOY_CHECK["env"]["HINT"].replace("${{ inputs.environment }}", stack), **values)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", DEPLOY_CHECK["run"].replace(
        ".github/scripts/stack-clouds.sh", str(SCRIPT))], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr, dict(line.split("=") for line in output.read_text().split())


def test_dev_signs_in_to_aws_and_gcp_only_and_needs_no_azure_identity(tmp_path: Path) -> None:
    """The real `aiinfra validate` of stacks/Pulumi.dev.yaml: the deploy used to demand all three clouds' identities."""
    code, out, clouds = _check(tmp_path, _real_uv(tmp_path), "dev", **SET)
    assert code == 0, out
    assert clouds == {"aws": "true", "gcp": "true", "azure": "false"}
    assert "stack dev signs in to aws gcp" in out


def test_an_azure_state_backend_needs_the_azure_login_for_a_stack_without_azure(tmp_path: Path) -> None:
    code, out, clouds = _check(tmp_path, _real_uv(tmp_path), "dev",
                               **{**SET, "PULUMI_BACKEND_URL": "azblob://pulumi-state?storage_account=acmemlstate"})
    assert clouds["azure"] == "true" and code == 1
    assert ("::error::stack dev signs in to aws gcp azure: set AZURE_CLIENT_ID AZURE_TENANT_ID AZURE_SUBSCRIPTION_ID "
            "as variables of the GitHub environment dev") in out


def test_an_unset_backend_stops_the_job_before_any_login(tmp_path: Path) -> None:
    bin_dir = _fake_uv(tmp_path, '#!/bin/sh\necho "ok: dev (aws)"\n')
    code, out, clouds = _check(tmp_path, bin_dir, "dev", **{**SET, "PULUMI_BACKEND_URL": ""})
    assert code == 1 and "set PULUMI_BACKEND_URL as variables of the GitHub environment dev" in out
    assert clouds == {"aws": "true", "gcp": "false", "azure": "false"}


@pytest.mark.parametrize(("provider", "cloud"), [
    ("awskms://alias/acme-ml-pulumi?region=us-east-1", "aws"),
    ('"gcpkms://projects/p/locations/global/keyRings/r/cryptoKeys/pulumi-state"', "gcp"),
    ("azurekeyvault://kvacmemlstate.vault.azure.net/keys/pulumi-state/0123", "azure"),
])
def test_the_secrets_providers_cloud_is_signed_in_to(tmp_path: Path, provider: str, cloud: str) -> None:
    """`pulumi stack init --secrets-provider` writes `secretsprovider:` into the stack file; its key is in that cloud."""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.x.yaml").write_text(f"secretsprovider: {provider}\nconfig: {{}}\n")
    bin_dir = _fake_uv(tmp_path, '#!/bin/sh\necho "warning: something"\necho "ok: x (gcp)"\n')
    _, _, clouds = _check(tmp_path, bin_dir, "x", cwd=tmp_path, **{**SET, "PULUMI_BACKEND_URL": "file://~"})
    assert clouds[cloud] == "true" and clouds["gcp"] == "true"
    assert sum(v == "true" for v in clouds.values()) == len({cloud, "gcp"})


@pytest.mark.parametrize(("uv", "message"), [
    ('#!/bin/sh\necho "error: platform.clouds.aws.regions: required" >&2\nexit 1\n', "platform.clouds.aws.regions"),
    ('#!/bin/sh\necho "all good"\n', "could not read the clouds of stack dev"),
])
def test_a_stack_that_does_not_validate_stops_the_job(tmp_path: Path, uv: str, message: str) -> None:
    code, out, _ = _check(tmp_path, _fake_uv(tmp_path, uv), "dev", **SET)
    assert code != 0 and message in out


# --- pinned tools and the Azure credential -----------------------------------------------------------------------------


def test_the_credential_plugins_are_fixed_versions_the_same_in_every_job() -> None:
    """Both actions default to "latest"; use-kubelogin's also needs a GITHUB_TOKEN to look it up."""
    steps = [s for w in WORKFLOWS.values() for job in w["jobs"].values() for s in job.get("steps", [])]
    gcloud = {s["with"]["version"] for s in steps if _action(s) == "google-github-actions/setup-gcloud"}
    kubelogin = {s["with"]["kubelogin-version"] for s in steps if _action(s) == "azure/use-kubelogin"}
    assert len(gcloud) == 1 and re.fullmatch(r"\d+\.\d+\.\d+", gcloud.pop())
    assert len(kubelogin) == 1 and re.fullmatch(r"v\d+\.\d+\.\d+", kubelogin.pop())


def test_the_azure_backend_and_secrets_provider_use_the_cli_login_never_a_managed_identity() -> None:
    """gocloud's azblob and azurekeyvault build azidentity's DefaultAzureCredential, which tries a managed identity
    before the Azure CLI: on a runner VM with one it would act as the VM. AZURE_TOKEN_CREDENTIALS names the one
    credential it may use (one of its type names, or dev/prod: azidentity's default_azure_credential.go)."""
    steps = _pulumi_steps()
    assert {s["env"]["AZURE_TOKEN_CREDENTIALS"] for s in steps} == {"AzureCLICredential"}
    # azure/login's (refreshed) CLI login precedes every run that may need it.
    for flow, job in (("pulumi-up", "up"), ("preview", "pulumi-preview")):
        uses = [_action(s) for s in _steps(flow, job)]
        assert uses.index("azure/login") < uses.index("pulumi/actions")


# --- Dependabot --------------------------------------------------------------------------------------------------------


def test_dependabot_updates_every_requirements_file_in_the_repository() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    [pip] = [u for u in config["updates"] if u["package-ecosystem"] == "pip"]
    skip = {".venv", ".tools", "venv", "node_modules", ".git"}
    found = {"/" + str(p.parent.relative_to(ROOT)) for p in ROOT.rglob("requirements.txt")
             if not skip & set(p.relative_to(ROOT).parts)}
    assert set(pip["directories"]) == found
    assert {"/policies", "/bootstrap", "/templates/gpu-training", "/templates/inference-endpoint",
            "/templates/tpu-research"} <= found
