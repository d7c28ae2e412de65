"""`aiinfra plan --diff BASE.json` and `--markdown FILE`: what changed, by component, and the PR comment."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from aiinfra.cli import main
from aiinfra.plan.diff import diff_plans, render_diff_text
from aiinfra.plan.markdown import GITHUB_COMMENT_LIMIT, MARKER, combine, render_markdown

PROGRAM = Path(__file__).resolve().parents[1] / "data" / "programs" / "invokes"


def plan_json(tmp_path: Path, prefix: str, name: str) -> dict:
    program = tmp_path / f"program-{name}"
    shutil.copytree(PROGRAM, program)
    stack_file = program / "Pulumi.demo.yaml"
    stack_file.write_text(stack_file.read_text().replace("prefix: demo", f"prefix: {prefix}"))
    out = tmp_path / f"{name}.json"
    assert main(["plan", "--program", str(program), "--stack", "demo", "--no-policy", "--json", str(out), "-q"]) == 0
    return json.loads(out.read_text())


def test_diff_finds_added_removed_and_changed_inputs(tmp_path: Path) -> None:
    base = plan_json(tmp_path, "demo", "base")
    head = plan_json(tmp_path, "renamed", "head")  # subnet names derive from the prefix: replaced
    web = next(r for r in head["resources"] if r["name"] == "web")
    web["inputs"]["instanceType"] = "t3.large"
    web["protect"] = True
    diff = diff_plans(base, head)
    assert diff["counts"] == {"added": 2, "changed": 1, "removed": 2}
    group = diff["components"]["(outside components)"]
    assert sorted(e["urn"].split("::")[-1] for e in group["added"]) == ["renamed-subnet-0", "renamed-subnet-1"]
    assert sorted(e["urn"].split("::")[-1] for e in group["removed"]) == ["demo-subnet-0", "demo-subnet-1"]
    assert group["changed"] == [{"urn": web["urn"], "type": "aws:ec2/instance:Instance", "inputs": ["instanceType"], "options": ["protect"]}]
    text = render_diff_text(diff)
    assert "+2 added, ~1 changed, -2 removed" in text and "web: instanceType, protect" in text


def test_options_planned_since_the_base_are_no_change_but_a_changed_timeout_is(tmp_path: Path) -> None:
    """A base planned before the plan recorded deleteBeforeReplace, additionalSecretOutputs and customTimeouts lacks
    them: their unset values, not a change on every resource."""
    head = plan_json(tmp_path, "demo", "head")
    base = copy.deepcopy(head)
    for record in base["resources"]:
        for option in ("deleteBeforeReplace", "additionalSecretOutputs", "customTimeouts"):
            del record[option]
    assert diff_plans(base, head)["counts"] == {"added": 0, "changed": 0, "removed": 0}
    web = next(r for r in head["resources"] if r["name"] == "web")
    web["customTimeouts"], web["deleteBeforeReplace"] = {"create": 1800.0}, True
    [entry] = diff_plans(base, head)["components"]["(outside components)"]["changed"]
    assert entry["options"] == ["deleteBeforeReplace", "customTimeouts"]


def test_a_provider_setting_recorded_as_json_text_is_no_change_against_its_parsed_form() -> None:
    """Plans now record a provider's object settings as the engine passes them, JSON text; a base planned before held
    the parsed object. Same value, no change; another value is still one."""
    provider = {"urn": "p", "type": "pulumi:providers:aws", "name": "default_7_51_1", "parent": "", "custom": True,
                "inputs": {"region": "us-east-1", "defaultTags": {"tags": {"team": "ml"}}}}
    head = copy.deepcopy(provider)
    head["inputs"]["defaultTags"] = '{"tags":{"team":"ml"}}'
    assert diff_plans({"resources": [provider]}, {"resources": [head]})["counts"]["changed"] == 0
    head["inputs"]["defaultTags"] = '{"tags":{"team":"infra"}}'
    [entry] = diff_plans({"resources": [provider]}, {"resources": [head]})["components"]["(outside components)"]["changed"]
    assert entry["inputs"] == ["defaultTags.tags.team"]


def test_a_resource_moved_with_an_alias_is_shown_moved_not_replaced() -> None:
    """The engine takes a resource at one of its aliases for the same resource and updates it in place: the PR diff
    must not show it removed and added (it reads as a replacement, and for a namespace, as data loss)."""
    import pulumi

    from aiinfra.plan.runtime import run_program

    def program(moved: bool) -> None:
        old = pulumi.ComponentResource("acme:index:Old", "old")
        new = pulumi.ComponentResource("acme:index:New", "new")
        parent, name = (new, "bucket") if moved else (old, "data")
        aliases = [pulumi.Alias(name="data", parent=old)] if moved else []
        pulumi.CustomResource("aws:s3/bucket:Bucket", name, {"bucket": "acme-data", "acl": "private" if moved else None},
                              pulumi.ResourceOptions(parent=parent, aliases=aliases))

    base = run_program(lambda: program(False), project="p", stack="s").to_json()
    head = run_program(lambda: program(True), project="p", stack="s").to_json()
    moved = next(r for r in head["resources"] if r["name"] == "bucket")
    old_urn = "urn:pulumi:s::p::acme:index:Old$aws:s3/bucket:Bucket::data"
    assert old_urn in moved["aliases"]  # the alias spec resolved to the URN the base has
    diff = diff_plans(base, head)
    assert diff["counts"] == {"added": 0, "changed": 1, "removed": 0}
    [entry] = diff["components"]["New new"]["changed"]
    assert entry["inputs"] == ["acl"] and entry["options"] == ["moved from acme:index:Old$aws:s3/bucket:Bucket::data (aliased)"]
    # Without the alias it is what the engine would do too: a replacement.
    moved["aliases"] = []
    assert diff_plans(base, head)["counts"] == {"added": 1, "changed": 0, "removed": 1}


def test_diff_groups_by_top_level_component() -> None:
    stack = {"urn": "s", "type": "pulumi:pulumi:Stack", "name": "s", "parent": "", "custom": False, "inputs": {}}
    comp = {"urn": "c", "type": "ai-infra:aws:Network", "name": "prod-us-east-1", "parent": "s", "custom": False, "inputs": {}}
    child = {"urn": "v", "type": "aws:ec2/vpc:Vpc", "name": "vpc", "parent": "c", "custom": True, "inputs": {"cidrBlock": "10.0.0.0/16"}}
    base = {"stack": "prod", "resources": [stack, comp, child]}
    head = copy.deepcopy(base)
    head["resources"][2]["inputs"]["cidrBlock"] = "10.1.0.0/16"
    diff = diff_plans(base, head)
    assert diff["components"]["Network prod-us-east-1"]["changed"][0]["inputs"] == ["cidrBlock"]


def test_markdown_shows_counts_and_failing_rules_but_never_secret_values(tmp_path: Path) -> None:
    base = plan_json(tmp_path, "demo", "base")
    head = plan_json(tmp_path, "renamed", "head")
    head["resources"][1]["inputs"]["password"] = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
    head["diff"] = diff_plans(base, head)
    head["policy"] = {"pack": "ai-infra-compliance@v0.1.0", "violations": [
        {"policy": "aws-ec2-no-public-ip", "enforcementLevel": "mandatory", "urn": "urn:x::web", "message": "Checks…\nthe instance gets a public IP address"},
        {"policy": "required-tags", "enforcementLevel": "advisory", "urn": "urn:x::vpc", "message": "missing tags: team"}]}
    body = render_markdown(head)
    assert "`demo`: ❌ blocked" in body
    assert "+2 added, ~1 changed, -2 removed" in body
    assert "| mandatory | `aws-ec2-no-public-ip` | `web` | the instance gets a public IP address |" in body
    assert "hunter2" not in body
    comment = combine([body, render_markdown(base)])
    assert comment.startswith(MARKER) and comment.count("### `demo`") == 2


def test_cli_writes_the_comment_and_stores_the_diff(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"project": "invokes-demo", "stack": "demo", "resources": [], "outputs": {}}))
    out, comment = tmp_path / "head.json", tmp_path / "comment.md"
    code = main(["plan", "--program", str(PROGRAM), "--stack", "demo", "--diff", str(base), "--json", str(out),
                 "--markdown", str(comment), "-q"])
    document = json.loads(out.read_text())
    assert document["diff"]["counts"]["added"] == len(document["resources"])
    assert code == (2 if any(v["enforcementLevel"] == "mandatory" for v in document["policy"]["violations"]) else 0)
    assert "aws-launch-template-imdsv2" in comment.read_text()  # the demo instance allows IMDSv1
    # the grouped summary, folded away: the instance's subnets as the terminal shows them
    assert "<details><summary>What the plan creates</summary>" in comment.read_text()
    assert "    2 x aws:ec2/subnet:Subnet" in comment.read_text()


def _section(stack: str, violations: int, summary_lines: int) -> str:
    document = {"stack": stack, "resources": [], "policy": {"pack": "p@v1", "violations": [
        {"policy": f"rule-{i}", "enforcementLevel": "mandatory", "urn": f"urn:x::r{i}", "message": "m"}
        for i in range(violations)]}}
    return render_markdown(document, "\n".join(f"    Bucket {stack}-{i}  (7 resources)" for i in range(summary_lines)))


def test_a_comment_over_githubs_limit_drops_the_summaries_first() -> None:
    sections = [_section(stack, 3, 1500) for stack in ("dev", "staging", "prod")]
    assert len("".join(sections)) > GITHUB_COMMENT_LIMIT
    comment = combine(sections)
    assert len(comment) <= GITHUB_COMMENT_LIMIT
    assert "Bucket" not in comment and "Plan summaries left out" in comment
    for stack in ("dev", "staging", "prod"):  # every verdict and rule row stays
        assert f"### `{stack}`: ❌ blocked" in comment
    assert comment.count("| mandatory | `rule-2` |") == 3


def test_a_comment_still_over_the_limit_is_cut_at_the_end() -> None:
    comment = combine([_section("prod", 50, 10), "x" * GITHUB_COMMENT_LIMIT])
    assert len(comment) <= GITHUB_COMMENT_LIMIT
    assert comment.startswith(MARKER) and "### `prod`: ❌ blocked" in comment
    assert comment.endswith("… cut to fit GitHub's comment limit; the job log has the rest.\n")


def test_a_comment_within_the_limit_is_left_whole() -> None:
    sections = [_section("dev", 2, 20)]
    assert combine(sections) == "\n".join([MARKER, "## ai-infra plan", "", *sections])
