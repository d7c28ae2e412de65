"""The GitHub workflows validate offline (GitHub's workflow schema and actionlint) and say what they promise."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
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


def _script(job: dict) -> str:
    return "\n".join(str(s.get("run", "")) + str(s.get("with", {}).get("script", "")) for s in job["steps"])


def test_preview_plans_base_and_head_comments_once_and_fails_on_violations(flows: dict[str, dict]) -> None:
    preview = flows["preview"]
    assert "pull_request" in preview[True]  # PyYAML reads the `on:` key as True
    steps = preview["jobs"]["offline-plan"]["steps"]
    script = _script(preview["jobs"]["offline-plan"])
    assert "make test" in script and "--diff" in script and "--markdown" in script
    comment = _script(preview["jobs"]["comment"])
    assert "updateComment" in comment and "<!-- ai-infra-plan -->" in comment
    assert steps[-1]["if"] == "steps.plan.outputs.status != '0'"
    # A re-run uploads again in the same run: without overwrite upload-artifact v4 fails with a conflict, and the
    # comment job would post the first attempt's plans.
    upload = next(s for s in steps if _action(s) == "actions/upload-artifact")
    assert upload["with"]["name"] == "plans" and upload["with"]["overwrite"] is True
    real = preview["jobs"]["pulumi-preview"]
    assert real["if"] == "vars.PULUMI_PREVIEW_ENABLED == 'true' && " + SAME_REPOSITORY
    action = next(s for s in real["steps"] if _action(s) == "pulumi/actions")
    assert action["with"]["command"] == "preview" and action["with"]["policyPacks"] == "policies"
    assert action["with"]["refresh"] is True


SAME_REPOSITORY = "github.event.pull_request.head.repo.full_name == github.repository"


def _action(step: dict) -> str:
    """The action a step uses, without its ref: `actions/checkout` for `actions/checkout@<sha>`."""
    return str(step.get("uses", "")).split("@")[0]


def _uses(job: dict) -> list[str]:
    return [_action(s) for s in job["steps"]]


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
        assert pack < _uses(job).index("pulumi/actions")


def test_azure_oidc_names_client_tenant_and_subscription_and_previews_never_deploy(flows: dict[str, dict]) -> None:
    for job, client in ((flows["preview"]["jobs"]["pulumi-preview"], "AZURE_PREVIEW_CLIENT_ID"),
                        (flows["pulumi-up"]["jobs"]["up"], "AZURE_CLIENT_ID")):
        action = next(s for s in job["steps"] if _action(s) == "pulumi/actions")
        env = action["env"]
        assert env["ARM_USE_OIDC"] == "true"
        assert (env["ARM_CLIENT_ID"], env["ARM_TENANT_ID"], env["ARM_SUBSCRIPTION_ID"]) == (
            f"${{{{ vars.{client} }}}}", "${{ vars.AZURE_TENANT_ID }}", "${{ vars.AZURE_SUBSCRIPTION_ID }}")
        login = next(s for s in job["steps"] if _action(s) == "azure/login")
        assert login["with"]["client-id"] == env["ARM_CLIENT_ID"]
    preview = flows["preview"]["jobs"]["pulumi-preview"]
    assert all("DEPLOY" not in str(s.get("with", {})) for s in preview["steps"])
    # Refresh reads the clusters: the preview runs on runners of its own (PR code must not reach the deploy runners),
    # with the kubeconfigs' plugins.
    assert "vars.PREVIEW_RUNS_ON" in preview["runs-on"] and "DEPLOY" not in preview["runs-on"]
    assert {"google-github-actions/setup-gcloud", "azure/use-kubelogin"} <= set(_uses(preview))


def test_forks_get_a_job_summary_not_a_comment_and_deploys_come_from_main(flows: dict[str, dict]) -> None:
    steps = flows["preview"]["jobs"]["offline-plan"]["steps"]
    comment = flows["preview"]["jobs"]["comment"]
    assert comment["if"].endswith("&& " + SAME_REPOSITORY + " }}")  # a fork's token cannot comment: the job would fail
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
    deployed = [job["with"]["stack"] for job in flows["deploy"]["jobs"].values() if "uses" in job]  # not the tests
    assert deployed == preview["env"]["ENVIRONMENTS"].split()  # in promotion order


FAKE_UV_HEAD = """#!/bin/bash
# `uv run --locked aiinfra plan ... --markdown FILE ...` writes FILE; `uv run --locked python -m aiinfra.plan.markdown
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
    action = next(s for s in up["steps"] if _action(s) == "pulumi/actions" and s["with"]["command"] == "up")
    assert action["with"]["command"] == "up"
    assert action["with"]["policyPackConfigs"] == "policies/config/${{ inputs.stack }}.json"
    # ignore_changes keeps the stored value; only a refresh makes that the autoscaler's current pool size.
    assert action["with"]["refresh"] is True
    # Private API servers: the runner is the repository's choice (a self-hosted one in a network that reaches them),
    # and it has the credential plugins the kubeconfigs call before `pulumi up` runs.
    assert up["runs-on"] == """${{ fromJSON(vars.DEPLOY_RUNS_ON || '"ubuntu-latest"') }}"""
    uses = _uses(up)
    plugins = [uses.index("google-github-actions/setup-gcloud"), uses.index("azure/use-kubelogin")]
    assert max(plugins) < uses.index("pulumi/actions")
    gcloud = up["steps"][plugins[0]]
    assert gcloud["with"]["install_components"] == "gke-gcloud-auth-plugin"


# --- who may write, and what a pull request's code can reach -----------------------------------------------------------


def test_jobs_that_run_pull_request_code_cannot_write_and_keep_no_token(flows: dict[str, dict]) -> None:
    """The offline plan and the real preview run the pull request's code (make test, the Pulumi program): a read-only
    token, not left in .git/config. Only the comment job may write to the pull request, and it runs none of that code."""
    preview = flows["preview"]
    jobs = preview["jobs"]
    assert preview["permissions"] == {"contents": "read"}
    assert jobs["offline-plan"]["permissions"] == {"contents": "read"}
    assert jobs["pulumi-preview"]["permissions"] == {"contents": "read", "id-token": "write"}
    assert jobs["comment"]["permissions"] == {"pull-requests": "write"}
    assert jobs["comment"]["needs"] == "offline-plan"
    assert _uses(jobs["comment"]) == ["actions/download-artifact", "actions/github-script"]
    assert not any("run" in s for s in jobs["comment"]["steps"])
    assert jobs["comment"]["steps"][0]["with"]["name"] == "plans"  # what offline-plan uploads
    upload = next(s for s in jobs["offline-plan"]["steps"] if _action(s) == "actions/upload-artifact")
    assert upload["with"]["name"] == "plans" and "comment.md" in upload["with"]["path"]
    # After a failing plan too (mandatory violations: the comment says which), but only once the plans ran.
    assert jobs["comment"]["if"].startswith("${{ !cancelled() && needs.offline-plan.outputs.status != ''")
    assert jobs["offline-plan"]["outputs"]["status"] == "${{ steps.plan.outputs.status }}"
    # pulumi/actions would need pull-requests: write to comment; its output goes to the job summary instead.
    action = next(s for s in jobs["pulumi-preview"]["steps"] if _action(s) == "pulumi/actions")
    assert action["with"].get("comment-on-pr") in (None, False) and action["with"]["comment-on-summary"] is True
    for name, flow in flows.items():
        for job in flow["jobs"].values():
            for step in job.get("steps", []):
                if _action(step) == "actions/checkout":
                    assert step["with"]["persist-credentials"] is False, name


NODE_HARNESS = """
const calls = [];
const comments = JSON.parse(process.env.COMMENTS);
const github = {
  paginate: async (list, args) => { calls.push(['list', args.issue_number]); return comments; },
  rest: { issues: { listComments: 'listComments',
                    updateComment: async a => { calls.push(['update', a.comment_id, a.body]); },
                    createComment: async a => { calls.push(['create', a.issue_number, a.body]); } } },
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { pull_request: { number: 7 } } };
(async () => {
SCRIPT
})().then(() => console.log(JSON.stringify(calls)), e => { console.error(e); process.exit(1); });
"""
MARKER = "<!-- ai-infra-plan -->"
BOT = {"login": "github-actions[bot]", "type": "Bot"}


@pytest.mark.parametrize(("comments", "expected"), [
    ([], ["create", 7]),
    ([{"id": 1, "user": {"login": "mallory", "type": "User"}, "body": MARKER + "\nplanted"}], ["create", 7]),
    ([{"id": 1, "user": {"login": "github-actions[bot]", "type": "User"}, "body": MARKER}], ["create", 7]),
    ([{"id": 1, "user": BOT, "body": "another workflow's comment"}], ["create", 7]),
    ([{"id": 1, "user": {"login": "mallory", "type": "User"}, "body": MARKER + "\nplanted"},
      {"id": 2, "user": BOT, "body": MARKER + "\nlast push's plan"}], ["update", 2]),
])
def test_the_plan_comment_updated_is_only_the_bots_own(flows: dict[str, dict], tmp_path: Path, comments: list,
                                                      expected: list) -> None:
    """Anyone can post a comment starting with the marker; the job must not edit it (and so hide the plan in a
    comment whose author anyone would trust)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    step = next(s for s in flows["preview"]["jobs"]["comment"]["steps"] if _action(s) == "actions/github-script")
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "comment.md").write_text(MARKER + "\nthe new plan")
    (tmp_path / "harness.js").write_text(NODE_HARNESS.replace("SCRIPT", step["with"]["script"]))
    done = subprocess.run([node, "harness.js"], cwd=tmp_path, env={**os.environ, "COMMENTS": json.dumps(comments)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)
    assert calls[0] == ["list", 7] and len(calls) == 2
    assert calls[1] == [*expected, MARKER + "\nthe new plan"]


# --- pinning -----------------------------------------------------------------------------------------------------------


def test_every_action_is_pinned_to_a_commit_with_its_version_and_the_same_everywhere() -> None:
    """Jobs holding id-token: write run these actions: a moved tag must not change what runs. Dependabot
    (.github/dependabot.yml) updates the SHA and the comment together."""
    pins: dict[str, set[str]] = {}
    for path in WORKFLOWS:
        for line in path.read_text().splitlines():
            found = re.match(r"\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
            if not found or found[1].startswith("./"):
                continue
            pinned = re.fullmatch(r"([\w.-]+/[\w.-]+)@([0-9a-f]{40})", found[1])
            assert pinned, f"{path.name}: {line.strip()} is not pinned to a full commit SHA"
            version = re.fullmatch(r"\s+# (v\d+(?:\.\d+){1,2})", found[2])
            assert version, f"{path.name}: {line.strip()} has no `# vX.Y.Z` comment"
            pins.setdefault(pinned[1], set()).add(f"{pinned[2]} {version[1]}")
    assert {name for name, versions in pins.items() if len(versions) > 1} == set()
    assert {"actions/checkout", "pulumi/actions", "azure/login", "aws-actions/configure-aws-credentials"} <= set(pins)


def test_the_pulumi_cli_is_the_version_of_the_pulumi_sdk_in_uv_lock(flows: dict[str, dict]) -> None:
    lock = re.search(r'^name = "pulumi"\nversion = "([^"]+)"$', (ROOT / "uv.lock").read_text(), re.MULTILINE)
    assert lock is not None
    actions = [s for flow in flows.values() for job in flow["jobs"].values() for s in job.get("steps", [])
               if _action(s) == "pulumi/actions"]
    assert len(actions) == 3  # the pull request's preview, the deploy's preview and its up
    assert {a["with"]["pulumi-version"] for a in actions} == {lock[1]}


def test_dependabot_updates_the_actions_and_the_python_lock() -> None:
    config = ROOT / ".github" / "dependabot.yml"
    done = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.dependabot", str(config)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    ecosystems = {u["package-ecosystem"] for u in yaml.safe_load(config.read_text())["updates"]}
    assert {"github-actions", "uv"} <= ecosystems


# --- cloud sessions that outlast the job -------------------------------------------------------------------------------


def test_the_aws_deploy_session_lasts_as_long_as_the_job(flows: dict[str, dict]) -> None:
    """configure-aws-credentials' session defaults to one hour; the deploy job may run two."""
    up = flows["pulumi-up"]["jobs"]["up"]
    aws = next(s for s in up["steps"] if _action(s) == "aws-actions/configure-aws-credentials")
    assert aws["with"]["role-duration-seconds"] >= up["timeout-minutes"] * 60


def _refresh_steps(job: dict) -> tuple[int, dict, int, dict]:
    steps = job["steps"]
    # Both workflows run the one script (scripts/azure-login-refresh.sh), so the script tested below is theirs.
    start = next(i for i, s in enumerate(steps) if s.get("run") == "scripts/azure-login-refresh.sh start")
    stop = next(i for i, s in enumerate(steps) if s.get("run") == "scripts/azure-login-refresh.sh stop")
    return start, steps[start], stop, steps[stop]


@pytest.mark.parametrize(("flow", "job", "client"), [("pulumi-up", "up", "AZURE_CLIENT_ID"),
                                                    ("preview", "pulumi-preview", "AZURE_PREVIEW_CLIENT_ID")])
def test_the_azure_cli_login_is_renewed_for_the_life_of_the_job(flows: dict[str, dict], flow: str, job: str,
                                                                client: str) -> None:
    """az login --federated-token cannot renew itself (Azure/azure-cli#28708): kubelogin and the azblob backend would
    fail mid-run with AADSTS700024. A background loop logs in again from right after azure/login to the last step."""
    steps = flows[flow]["jobs"][job]["steps"]
    uses = _uses(flows[flow]["jobs"][job])
    start, refresh, stop, halt = _refresh_steps(flows[flow]["jobs"][job])
    assert start == uses.index("azure/login") + 1
    assert start < uses.index("azure/use-kubelogin") < uses.index("pulumi/actions") < stop == len(steps) - 1
    assert halt["if"] == "always()"
    assert refresh["env"] == {"CLIENT_ID": f"${{{{ vars.{client} }}}}", "TENANT_ID": "${{ vars.AZURE_TENANT_ID }}",
                              "SUBSCRIPTION_ID": "${{ vars.AZURE_SUBSCRIPTION_ID }}"}


FAKE_SLEEP = """#!/bin/sh
# Records each wait; the third ends the loop (`while sleep`), as the end of the job would.
echo "$1" >> "$LOGS/waits"
[ "$(wc -l < "$LOGS/waits")" -lt 3 ]
"""
FAKE_CURL = """#!/bin/sh
# GitHub's OIDC token endpoint: fails the first request, then answers with a numbered token.
echo "$@" >> "$LOGS/curl"
n=$(wc -l < "$LOGS/curl")
[ "$n" -gt 1 ] || exit 22
echo '{"count": 1, "value": "jwt-'"$n"'"}'
"""
FAKE_AZ = """#!/bin/sh
echo "$@" >> "$LOGS/az"
"""


def _run_step(step: dict, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    # GitHub runs `run:` scripts with `bash --noprofile --norc -eo pipefail`.
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=30)


def _refresh_env(tmp_path: Path, fakes: dict[str, str]) -> dict[str, str]:
    bin_dir, logs, runner_temp = tmp_path / "bin", tmp_path / "logs", tmp_path / "runner-temp"
    for folder in (bin_dir, logs, runner_temp):
        folder.mkdir()
    for tool, text in fakes.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOGS": str(logs), "RUNNER_TEMP": str(runner_temp),
            "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example/?api-version=2.0",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token",
            "CLIENT_ID": "client-id", "TENANT_ID": "tenant-id", "SUBSCRIPTION_ID": "subscription-id"}


def _wait_for(condition, seconds: float = 20) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_refresh_loop_logs_in_again_with_a_fresh_token_every_four_minutes(flows: dict[str, dict],
                                                                              tmp_path: Path) -> None:
    _, refresh, _, _ = _refresh_steps(flows["pulumi-up"]["jobs"]["up"])
    env = _refresh_env(tmp_path, {"sleep": FAKE_SLEEP, "curl": FAKE_CURL, "az": FAKE_AZ})
    done = _run_step(refresh, env, ROOT)  # a job runs its steps at the checkout's root
    assert done.returncode == 0, done.stderr  # the step returns at once: the loop runs on in the background
    logs = tmp_path / "logs"
    _wait_for(lambda: (logs / "waits").exists() and len((logs / "waits").read_text().split()) == 3)
    assert (logs / "waits").read_text().split() == ["240"] * 3  # well inside the GitHub token's 5 to 10 minutes
    # The token request: GitHub's URL with azure/login's audience, authorized with the job's request token.
    for request in (logs / "curl").read_text().splitlines():
        assert "https://token.example/?api-version=2.0&audience=api%3A%2F%2FAzureADTokenExchange" in request
        assert "Authorization: bearer request-token" in request
    # The first token request failed: no login with an empty token, and the loop went on.
    assert (logs / "az").read_text().splitlines() == [
        "login --service-principal --username client-id --tenant tenant-id --federated-token jwt-2 --output none",
        "account set --subscription subscription-id"]
    log = (tmp_path / "runner-temp" / "azure-login-refresh.log").read_text()  # also curl's and python's errors
    assert re.findall(r"^\d\d:\d\d:\d\d (.*)$", log, re.MULTILINE) == [
        "could not log in again; next try in 4 minutes", "logged in again"]


def _live_members(group: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def test_the_last_step_stops_the_refresh_loop_and_its_children(flows: dict[str, dict], tmp_path: Path) -> None:
    """Stopped before azure/login's post-job `az account clear`, so no login is left behind on the runner."""
    _, refresh, _, halt = _refresh_steps(flows["pulumi-up"]["jobs"]["up"])
    env = _refresh_env(tmp_path, {"sleep": "#!/bin/sh\nexec /bin/sleep 30\n", "az": FAKE_AZ})
    assert _run_step(refresh, env, ROOT).returncode == 0
    pidfile = tmp_path / "runner-temp" / "azure-login-refresh.pid"
    _wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    group = int(pidfile.read_text())
    _wait_for(lambda: len(_live_members(group)) == 2)  # the loop and its sleep
    done = _run_step(halt, env, ROOT)
    assert done.returncode == 0, done.stderr
    _wait_for(lambda: _live_members(group) == [], seconds=5)
    assert _run_step(halt, {**env, "RUNNER_TEMP": str(tmp_path)}, ROOT).returncode == 0  # nothing started: no-op


# --- one identity per environment, and every setting documented --------------------------------------------------------


DEPLOY_IDENTITIES = ("AWS_DEPLOY_ROLE_ARN", "GCP_DEPLOY_SERVICE_ACCOUNT", "AZURE_CLIENT_ID")


def test_deploy_identities_are_read_only_in_the_job_that_names_its_environment(flows: dict[str, dict],
                                                                               tmp_path: Path) -> None:
    """GitHub reads `vars.X` from the job's environment first: each environment deploys with its own identities,
    which trust only repo:<owner>/<repo>:environment:<env>. The preview (no environment) never sees them."""
    texts = {p.stem: p.read_text() for p in WORKFLOWS}
    for name in DEPLOY_IDENTITIES:
        assert [stem for stem, text in texts.items() if f"vars.{name} " in text] == ["pulumi-up"]
    up = flows["pulumi-up"]["jobs"]["up"]
    assert up["environment"] == "${{ inputs.environment }}"
    deploys = [job for job in flows["deploy"]["jobs"].values() if "uses" in job]
    assert {job["with"]["environment"] for job in deploys} == {"dev", "staging", "prod"}
    # The job stops, naming the environment and what it lacks, when an identity of a cloud the stack (here all three:
    # `aiinfra validate` says so) signs in to is not set there. tests/delivery/test_review6_delivery.py: the rest.
    check = next(s for s in up["steps"] if set(DEPLOY_IDENTITIES) <= set(s.get("env", {})))
    assert up["steps"].index(check) < _uses(up).index("aws-actions/configure-aws-credentials")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text('#!/bin/sh\necho "ok: staging (aws, gcp, azure)"\n')
    (bin_dir / "uv").chmod(0o755)
    env = {**{k: v for k, v in check["env"].items() if "${{" not in v}, "PATH": f"{bin_dir}:/usr/bin:/bin",
           "GITHUB_OUTPUT": str(tmp_path / "output"), "STACK": "staging",
           "HINT": check["env"]["HINT"].replace("${{ inputs.environment }}", "staging"), "PULUMI_BACKEND_URL": "s3://state",
           "GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/1/locations/global/workloadIdentityPools/p/providers/p",
           "AZURE_TENANT_ID": "tenant", "AZURE_SUBSCRIPTION_ID": "subscription",
           "AWS_DEPLOY_ROLE_ARN": "arn:aws:iam::1:role/staging", "GCP_DEPLOY_SERVICE_ACCOUNT": "", "AZURE_CLIENT_ID": ""}
    done = _run_step(check, env, ROOT)  # the job runs its steps at the checkout's root
    assert done.returncode == 1
    assert "set GCP_DEPLOY_SERVICE_ACCOUNT AZURE_CLIENT_ID as variables of the GitHub environment staging" in done.stdout
    assert _run_step(check, {**env, "GCP_DEPLOY_SERVICE_ACCOUNT": "sa", "AZURE_CLIENT_ID": "id"}, ROOT).returncode == 0


README_CI_SECTION = "## CI credentials: OIDC trust, environments and variables"


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [text for key, value in node.items() for text in _strings(key) + _strings(value)]
    if isinstance(node, list):
        return [text for item in node for text in _strings(item)]
    return [node] if isinstance(node, str) else []


def test_every_variable_and_secret_the_workflows_read_is_documented(flows: dict[str, dict]) -> None:
    """README's CI section has one table row per `vars.X` and `secrets.X` the workflows read, no more, and says which
    are set per environment."""
    read = {name for flow in flows.values() for text in _strings(flow)
            for name in re.findall(r"\b(?:vars|secrets)\.([A-Za-z_][A-Za-z0-9_]*)", text)}  # not the YAML comments
    assert {"PULUMI_BACKEND_URL", "GCP_WORKLOAD_IDENTITY_PROVIDER", "PULUMI_CONFIG_PASSPHRASE"} <= read
    readme = (ROOT / "README.md").read_text()
    assert README_CI_SECTION + "\n" in readme, f"README.md has no section {README_CI_SECTION!r}"
    section = readme.split(README_CI_SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([A-Z0-9_]+)` \| ([^|]+) \|", section, re.MULTILINE))
    assert set(rows) == read
    assert {name for name, where in rows.items() if where.startswith("environment variable")} == set(DEPLOY_IDENTITIES)
    for subject in ("repo:<owner>/<repo>:environment:<env>", "repo:<owner>/<repo>:pull_request"):
        assert subject in section


def test_the_deploy_previews_with_the_same_stack_pack_and_credentials_before_it_updates(flows: dict[str, dict]) -> None:
    """pulumi/actions' `up` skips the preview (the Automation API runs `pulumi up --yes --skip-preview`), so the checks
    the components make at preview would run inside the update; a preview step of its own stops the job first."""
    steps = [s for s in flows["pulumi-up"]["jobs"]["up"]["steps"] if _action(s) == "pulumi/actions"]
    assert [s["with"]["command"] for s in steps] == ["preview", "up"]
    preview, up = steps
    for key in ("stack-name", "pulumi-version", "refresh", "cloud-url", "policyPacks", "policyPackConfigs"):
        assert preview["with"][key] == up["with"][key], key
    assert preview["env"] == up["env"]
