"""The GitHub workflows validate offline (GitHub's workflow schema and actionlint) and say what they promise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def test_workflows_match_githubs_schema() -> None:
    done = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_nothing() -> None:
    done = subprocess.run([str(BIN / "actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def flows() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text()) for p in WORKFLOWS}


def test_preview_plans_base_and_head_comments_once_and_fails_on_violations(flows: dict[str, dict]) -> None:
    preview = flows["preview"]
    assert "pull_request" in preview[True]  # PyYAML reads the `on:` key as True
    steps = preview["jobs"]["offline-plan"]["steps"]
    script = "\n".join(str(s.get("run", "")) + str(s.get("with", {}).get("script", "")) for s in steps)
    assert "make test" in script and "--diff" in script and "--markdown" in script
    assert "updateComment" in script and "<!-- ai-infra-plan -->" in script
    assert steps[-1]["if"] == "steps.plan.outputs.status != '0'"
    real = preview["jobs"]["pulumi-preview"]
    assert real["if"] == "vars.PULUMI_PREVIEW_ENABLED == 'true' && " + SAME_REPOSITORY
    action = next(s for s in real["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert action["with"]["command"] == "preview" and action["with"]["policyPacks"] == "policies"
    assert action["with"]["refresh"] is True


SAME_REPOSITORY = "github.event.pull_request.head.repo.full_name == github.repository"


def _uses(job: dict) -> list[str]:
    return [str(s.get("uses", "")) for s in job["steps"]]


def test_every_job_that_runs_uv_or_pulumi_installs_the_pinned_uv_first(flows: dict[str, dict]) -> None:
    """The hosted runner image has no uv, and `make` would install it under .tools/bin, off PATH: every `uv run` and
    the Pulumi CLI itself (Pulumi.yaml's `toolchain: uv`) need it on PATH."""
    pinned = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert pinned is not None
    jobs = [flows["preview"]["jobs"]["offline-plan"], flows["preview"]["jobs"]["pulumi-preview"], flows["pulumi-up"]["jobs"]["up"]]
    for job in jobs:
        steps = job["steps"]
        first_use = next(i for i, s in enumerate(steps)
                         if "uv " in str(s.get("run", "")) or "make " in str(s.get("run", "")) or "pulumi/actions" in str(s.get("uses", "")))
        setup = next(i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("astral-sh/setup-uv@"))
        assert setup < first_use
        assert steps[setup]["with"]["version"] == pinned[1]


def test_the_real_pulumi_runs_have_the_policy_packs_virtualenv(flows: dict[str, dict]) -> None:
    """A local pack runs from PulumiPolicy.yaml's `virtualenv`, which the CLI does not create."""
    assert yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())["runtime"]["options"]["virtualenv"] == "venv"
    assert "policies/venv/.installed:" in (ROOT / "Makefile").read_text()
    for job in (flows["preview"]["jobs"]["pulumi-preview"], flows["pulumi-up"]["jobs"]["up"]):
        steps = job["steps"]
        pack = next(i for i, s in enumerate(steps) if "policy-pack" in str(s.get("run", "")).split())
        assert pack < _uses(job).index("pulumi/actions@v7")


def test_azure_oidc_names_client_tenant_and_subscription_and_previews_never_deploy(flows: dict[str, dict]) -> None:
    for job, client in ((flows["preview"]["jobs"]["pulumi-preview"], "AZURE_PREVIEW_CLIENT_ID"),
                        (flows["pulumi-up"]["jobs"]["up"], "AZURE_CLIENT_ID")):
        action = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
        env = action["env"]
        assert env["ARM_USE_OIDC"] == "true"
        assert (env["ARM_CLIENT_ID"], env["ARM_TENANT_ID"], env["ARM_SUBSCRIPTION_ID"]) == (
            f"${{{{ vars.{client} }}}}", "${{ vars.AZURE_TENANT_ID }}", "${{ vars.AZURE_SUBSCRIPTION_ID }}")
        login = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("azure/login"))
        assert login["with"]["client-id"] == env["ARM_CLIENT_ID"]
    preview = flows["preview"]["jobs"]["pulumi-preview"]
    assert all("DEPLOY" not in str(s.get("with", {})) for s in preview["steps"])
    # Refresh reads the clusters: the preview runs on runners of its own (PR code must not reach the deploy runners),
    # with the kubeconfigs' plugins.
    assert "vars.PREVIEW_RUNS_ON" in preview["runs-on"] and "DEPLOY" not in preview["runs-on"]
    assert {"google-github-actions/setup-gcloud@v2", "azure/use-kubelogin@v1"} <= set(_uses(preview))


def test_forks_get_a_job_summary_not_a_comment_and_deploys_come_from_main(flows: dict[str, dict]) -> None:
    steps = flows["preview"]["jobs"]["offline-plan"]["steps"]
    comment = next(s for s in steps if str(s.get("uses", "")).startswith("actions/github-script"))
    assert comment["if"] == SAME_REPOSITORY  # a fork's token cannot comment: the step would fail the job
    assert any('"$GITHUB_STEP_SUMMARY"' in str(s.get("run", "")) for s in steps)
    assert flows["deploy"]["jobs"]["dev"]["if"] == "github.ref == 'refs/heads/main'"


FAKE_UV = """#!/bin/sh
# `uv run --frozen aiinfra plan --stack ENV --no-policy --json FILE -q`: plans fail for the stack in FAIL_STACK
while [ $# -gt 0 ]; do
  case "$1" in --stack) stack="$2"; shift ;; --json) out="$2"; shift ;; esac
  shift
done
[ "$stack" = "$FAIL_STACK" ] && exit 1
echo '{"project": "ai-infra", "stack": "'"$stack"'", "resources": [{"urn": "urn:x", "type": "t"}], "outputs": {}}' > "$out"
"""


@pytest.mark.parametrize(("setup_code", "fail_stack", "empty"), [
    (1, "", {"dev", "staging", "prod"}),  # the base cannot be set up at all
    (0, "prod", {"prod"}),  # the base predates an environment
    (0, "", set()),
])
def test_the_base_plan_step_always_leaves_a_base_the_head_can_diff(
        flows: dict[str, dict], tmp_path: Path, setup_code: int, fail_stack: str, empty: set[str]) -> None:
    from aiinfra.cli import _read_base_plan

    step = next(s for s in flows["preview"]["jobs"]["offline-plan"]["steps"] if s.get("working-directory") == "base")
    bin_dir, base = tmp_path / "bin", tmp_path / "base"
    bin_dir.mkdir()
    base.mkdir()
    (bin_dir / "make").write_text(f"#!/bin/sh\nexit {setup_code}\n")
    (bin_dir / "uv").write_text(FAKE_UV)
    for tool in ("make", "uv"):
        (bin_dir / tool).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAIL_STACK": fail_stack, **flows["preview"]["env"]}
    # GitHub runs `run:` scripts with `bash --noprofile --norc -eo pipefail`.
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=base, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for stack in ("dev", "staging", "prod"):
        document = _read_base_plan(str(tmp_path / f"base-{stack}.json"))  # what the head's --diff accepts
        assert document["stack"] == stack
        assert (document["resources"] == []) == (stack in empty)


def test_every_environment_is_previewed_and_deployed(flows: dict[str, dict]) -> None:
    """Adding a stack file without adding it to the workflows would leave it out of PR previews and deploys."""
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    preview = flows["preview"]
    assert sorted(preview["env"]["ENVIRONMENTS"].split()) == stacks
    assert preview["jobs"]["pulumi-preview"]["strategy"]["matrix"]["env"] == preview["env"]["ENVIRONMENTS"].split()
    deployed = [job["with"]["stack"] for job in flows["deploy"]["jobs"].values()]
    assert deployed == preview["env"]["ENVIRONMENTS"].split()  # in promotion order


FAKE_UV_HEAD = """#!/bin/bash
# `uv run --frozen aiinfra plan ... --markdown FILE ...` writes FILE; `uv run --frozen python -m aiinfra.plan.markdown
# FILES` prints the files it was given, in order.
if [ "$5" = aiinfra.plan.markdown ]; then shift 5; echo "$@"; exit 0; fi
while [ $# -gt 0 ]; do [ "$1" = --markdown ] && echo "### $2" > "$2"; shift; done
"""


def test_the_head_plan_step_comments_on_every_environment_in_order(flows: dict[str, dict], tmp_path: Path) -> None:
    step = next(s for s in flows["preview"]["jobs"]["offline-plan"]["steps"] if s.get("id") == "plan")
    bin_dir, head = tmp_path / "bin", tmp_path / "head"
    bin_dir.mkdir()
    head.mkdir()
    (bin_dir / "uv").write_text(FAKE_UV_HEAD)
    (bin_dir / "uv").chmod(0o755)
    output = tmp_path / "github_output"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "GITHUB_OUTPUT": str(output), **flows["preview"]["env"]}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=head, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    order = flows["preview"]["env"]["ENVIRONMENTS"].split()
    assert (tmp_path / "comment.md").read_text().split() == [f"../comment-{e}.md" for e in order]
    assert output.read_text() == "status=0\n"


def test_deploy_goes_dev_then_staging_then_prod_with_protection(flows: dict[str, dict]) -> None:
    deploy = flows["deploy"]
    assert deploy[True]["push"]["branches"] == ["main"]
    jobs = deploy["jobs"]
    assert jobs["staging"]["needs"] == "dev" and jobs["prod"]["needs"] == "staging"
    assert {jobs[e]["with"]["environment"] for e in ("staging", "prod")} == {"staging", "prod"}
    up = flows["pulumi-up"]["jobs"]["up"]
    assert up["environment"] == "${{ inputs.environment }}"
    action = next(s for s in up["steps"] if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert action["with"]["command"] == "up"
    assert action["with"]["policyPackConfigs"] == "policies/config/${{ inputs.stack }}.json"
    # ignore_changes keeps the stored value; only a refresh makes that the autoscaler's current pool size.
    assert action["with"]["refresh"] is True
    # Private API servers: the runner is the repository's choice (a self-hosted one in a network that reaches them),
    # and it has the credential plugins the kubeconfigs call before `pulumi up` runs.
    assert up["runs-on"] == """${{ fromJSON(vars.DEPLOY_RUNS_ON || '"ubuntu-latest"') }}"""
    uses = [str(s.get("uses", "")) for s in up["steps"]]
    plugins = [uses.index("google-github-actions/setup-gcloud@v2"), uses.index("azure/use-kubelogin@v1")]
    assert max(plugins) < uses.index(action["uses"])
    gcloud = up["steps"][plugins[0]]
    assert gcloud["with"]["install_components"] == "gke-gcloud-auth-plugin"
