"""`aiinfra plan --diff BASE.json` and `--markdown FILE`: what changed, by component, and the PR comment."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from helpers import PLAN_STACK_URN as STACK_URN, base_and_head as _plans, only_entry as _only_entry, plan_record as _record

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
    assert diff["counts"] == {"added": 2, "changed": 1, "replaced": 0, "removed": 2}
    group = diff["components"]["(outside components)"]
    assert sorted(e["urn"].split("::")[-1] for e in group["added"]) == ["renamed-subnet-0", "renamed-subnet-1"]
    assert sorted(e["urn"].split("::")[-1] for e in group["removed"]) == ["demo-subnet-0", "demo-subnet-1"]
    [entry] = group["changed"]
    assert (entry["urn"], entry["action"], entry["inputs"], entry["options"]) == (web["urn"], "update", ["instanceType"], ["protect"])
    assert entry["changes"] == [{"path": "instanceType", "old": '"t3.micro"', "new": '"t3.large"'}]
    text = render_diff_text(diff)
    assert "+2 added, ~1 changed, ±0 replaced, -2 removed" in text
    assert '    ~ web: instanceType "t3.micro" → "t3.large", protect' in text.splitlines()


def test_options_planned_since_the_base_are_no_change_but_a_changed_timeout_is(tmp_path: Path) -> None:
    """A base planned before the plan recorded deleteBeforeReplace, additionalSecretOutputs and customTimeouts lacks
    them: their unset values, not a change on every resource."""
    head = plan_json(tmp_path, "demo", "head")
    base = copy.deepcopy(head)
    for record in base["resources"]:
        for option in ("deleteBeforeReplace", "additionalSecretOutputs", "customTimeouts"):
            del record[option]
    assert diff_plans(base, head)["counts"] == {"added": 0, "changed": 0, "replaced": 0, "removed": 0}
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
    assert diff["counts"] == {"added": 0, "changed": 1, "replaced": 0, "removed": 0}
    [entry] = diff["components"]["New new"]["changed"]
    assert entry["inputs"] == ["acl"] and entry["options"] == ["moved from acme:index:Old$aws:s3/bucket:Bucket::data (aliased)"]
    # Without the alias it is what the engine would do too: a replacement.
    moved["aliases"] = []
    assert diff_plans(base, head)["counts"] == {"added": 1, "changed": 0, "replaced": 0, "removed": 1}


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
    assert "+2 added, ~1 changed, ±0 replaced, -2 removed" in body
    assert "`password` `(unset)` → `[secret]`" in body  # a new secret input: shown as one, its value never
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


def test_a_comment_still_over_the_limit_is_cut_section_by_section() -> None:
    comment = combine([_section("prod", 50, 10), "x" * GITHUB_COMMENT_LIMIT])
    assert len(comment) <= GITHUB_COMMENT_LIMIT
    assert comment.startswith(MARKER) and "### `prod`: ❌ blocked" in comment
    assert comment.count("| mandatory | `rule-") == 50  # the small section is whole; the huge one is cut
    assert "… cut to fit GitHub's comment limit; the job log has the rest.\n" in comment


def test_a_comment_within_the_limit_is_left_whole() -> None:
    sections = [_section("dev", 2, 20)]
    assert combine(sections) == "\n".join([MARKER, "## ai-infra plan", "", *sections])


# --- what the engine would do with a change: update, replace, ignore -------------------------------------------------


def test_a_change_under_the_records_own_replace_on_changes_is_a_replacement() -> None:
    """azure-native classes name the properties their API cannot update in replaceOnChanges (AgentPool osDiskSizeGB):
    the engine replaces the pool, and the diff must not read as an in-place change."""
    pool = _record("azure-native:containerservice:AgentPool", "gpu", {"osDiskSizeGB": 128, "maxCount": 4, "tags": {"a": "1"}},
                   replaceOnChanges=["osDiskSizeGB", "gpuProfile"])
    base, head = _plans(pool)
    head["resources"][1]["inputs"].update(osDiskSizeGB=256, maxCount=6)
    diff = diff_plans(base, head)
    assert diff["counts"] == {"added": 0, "changed": 0, "replaced": 1, "removed": 0}
    entry = _only_entry(diff)
    assert (entry["action"], entry["replaceBecause"]) == ("replace", ["osDiskSizeGB"])
    assert "    ± gpu replace: maxCount 4 → 6, osDiskSizeGB 128 → 256 (replaces)" in render_diff_text(diff).splitlines()
    body = render_markdown({**head, "diff": diff, "policy": {"pack": "p", "violations": []}})
    assert "- ± replaced `gpu`: `maxCount` `4` → `6`, `osDiskSizeGB` `128` → `256` (replaces)" in body
    assert "| component | added | changed | replaced | removed |" in body and "±1 replaced" in body
    # Only the other property: an update.
    head["resources"][1]["inputs"]["osDiskSizeGB"] = 128
    assert diff_plans(base, head)["counts"] == {"added": 0, "changed": 1, "replaced": 0, "removed": 0}


def test_bridged_types_replace_on_the_properties_their_provider_cannot_update() -> None:
    group = _record("aws:eks/nodeGroup:NodeGroup", "train", {"instanceTypes": ["p5.48xlarge"], "capacityType": "ON_DEMAND",
                                                            "scalingConfig": {"minSize": 0, "maxSize": 4}})
    bucket = _record("gcp:storage/bucket:Bucket", "data", {"name": "acme-data", "location": "US", "labels": {"team": "ml"}})
    pool = _record("gcp:container/nodePool:NodePool", "cpu", {"nodeConfig": {"machineType": "e2-standard-4", "spot": False}})
    claim = _record("kubernetes:core/v1:PersistentVolumeClaim", "train",
                    {"metadata": {"name": "train"}, "spec": {"storageClassName": "", "volumeName": "pv-a"}})
    base, head = _plans(group, bucket, pool, claim)
    group, bucket, pool, claim = head["resources"][1:]
    group["inputs"]["instanceTypes"] = ["p5e.48xlarge"]
    bucket["inputs"]["labels"]["team"] = "infra"
    pool["inputs"]["nodeConfig"]["machineType"] = "e2-standard-8"  # GKE resizes nodes in place
    claim["inputs"]["spec"]["volumeName"] = "pv-b"
    diff = diff_plans(base, head)["components"]["(outside components)"]
    assert [(e["urn"].split("::")[-1], e["replaceBecause"]) for e in diff["replaced"]] == [
        ("train", ["instanceTypes[0]"]), ("train", ["spec.volumeName"])]
    assert sorted(e["urn"].split("::")[-1] for e in diff["changed"]) == ["cpu", "data"]
    bucket["inputs"]["location"] = "EU"
    assert any(e["urn"].endswith("::data") for e in diff_plans(base, head)["components"]["(outside components)"]["replaced"])


def test_ignored_paths_are_no_change_as_the_engine_resets_them() -> None:
    """ignoreChanges paths as the plan records them (camelCase, `[i]` indexes): the engine keeps the base's value."""
    claim = _record("kubernetes:core/v1:PersistentVolumeClaim", "train",
                    {"spec": {"resources": {"requests": {"storage": "100Gi"}}, "storageClassName": ""}},
                    ignoreChanges=["spec.resources"])
    pool = _record("gcp:container/nodePool:NodePool", "gpu", {"initialNodeCount": 1, "nodeConfig": {"machineType": "a"}},
                   ignoreChanges=["initialNodeCount", "nodeCount"])
    aks = _record("azure-native:containerservice:ManagedCluster", "aks",
                  {"agentPoolProfiles": [{"count": 2, "maxCount": 5}]}, ignoreChanges=["agentPoolProfiles[0].count"])
    base, head = _plans(claim, pool, aks)
    claim, pool, aks = head["resources"][1:]
    claim["inputs"]["spec"]["resources"]["requests"]["storage"] = "200Gi"
    pool["inputs"]["initialNodeCount"] = 3
    aks["inputs"]["agentPoolProfiles"][0]["count"] = 4
    assert diff_plans(base, head)["counts"] == {"added": 0, "changed": 0, "replaced": 0, "removed": 0}
    aks["inputs"]["agentPoolProfiles"][0]["maxCount"] = 8  # the neighbour of an ignored path still counts
    entry = _only_entry(diff_plans(base, head))
    assert entry["inputs"] == ["agentPoolProfiles[0].maxCount"] and entry["changes"][0]["old"] == "5"


def test_ignore_changes_resets_as_the_engine_below_missing_keys_and_at_leaf_wildcards() -> None:
    """properties_path.go reset(): below a key the base lacks the ignored value is dropped from the head too, and a
    wildcard ending the path takes the base's whole object (keys only the head has go)."""
    role = _record("aws:iam/role:Role", "r", {"name": "r"}, ignoreChanges=["tags.foo"])
    labels = _record("kubernetes:core/v1:Namespace", "ns", {"metadata": {"labels": {"a": "1"}}},
                     ignoreChanges=["metadata.labels.*"])
    base, head = _plans(role, labels)
    role, labels = head["resources"][1:]
    role["inputs"]["tags"] = {"foo": "1"}
    labels["inputs"]["metadata"]["labels"] = {"b": "2"}
    diff = diff_plans(base, head)
    assert diff["counts"]["changed"] == 1  # tags appeared, but empty once foo is reset away
    assert _only_entry(diff)["inputs"] == ["tags"]
    role["inputs"]["tags"] = {"foo": "1", "team": "ml"}
    labels["inputs"]["metadata"]["labels"] = {"a": "1", "b": "2"}
    assert [c["new"] for c in _only_entry(diff_plans(base, head))["changes"]] == ['{"team":"ml"}']


def test_a_quoted_key_keeps_its_backslashes_as_the_engine_does() -> None:
    from aiinfra.plan.property_paths import parse_path

    assert parse_path('metadata.annotations["C:\\path"]') == ["metadata", "annotations", "C:\\path"]
    assert parse_path('a["say \\"hi\\""]') == ["a", 'say "hi"']
    assert parse_path('metadata.labels["app.kubernetes.io/name"]') == ["metadata", "labels", "app.kubernetes.io/name"]


def test_unprotecting_and_replacing_in_one_update_is_not_flagged() -> None:
    """The engine refuses a replacement only when the resource is protected before and after (step_generator.go)."""
    bucket = _record("aws:s3/bucket:Bucket", "data", {"bucket": "acme-data"}, protect=True)
    base, head = _plans(bucket)
    head["resources"][1].update(protect=False, inputs={"bucket": "acme-data-2"})
    entry = _only_entry(diff_plans(base, head))
    assert entry["action"] == "replace" and not entry.get("protected") and entry["notes"] == []
    head["resources"][1]["protect"] = True
    assert diff_plans(base, head)["protected"] == [bucket["urn"]]


def test_config_maps_and_gke_cluster_ranges_replace() -> None:
    cm = _record("kubernetes:core/v1:ConfigMap", "cfg", {"metadata": {"name": "cfg"}, "data": {"a": "1"}})
    gke = _record("gcp:container/cluster:Cluster", "gke", {"ipAllocationPolicy": {"servicesSecondaryRangeName": "s"}})
    base, head = _plans(cm, gke)
    cm, gke = head["resources"][1:]
    cm["inputs"]["data"]["a"] = "2"
    gke["inputs"]["ipAllocationPolicy"]["servicesSecondaryRangeName"] = "t"
    replaced = diff_plans(base, head)["components"]["(outside components)"]["replaced"]
    assert sorted(e["replaceBecause"][0] for e in replaced) == ["data.a", "ipAllocationPolicy.servicesSecondaryRangeName"]


def test_values_are_shown_masked_when_secret_and_cut_when_long() -> None:
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
    vpc = _record("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16", "password": secret, "note": "a"})
    base, head = _plans(vpc)
    inputs = head["resources"][1]["inputs"]
    inputs.update(cidrBlock="10.1.0.0/16", note="x" * 500, password={**secret, "value": "hunter3"})
    entry = _only_entry(diff_plans(base, head))
    changes = {c["path"]: (c["old"], c["new"]) for c in entry["changes"]}
    assert changes["cidrBlock"] == ('"10.0.0.0/16"', '"10.1.0.0/16"')
    assert "password" not in changes  # secrets are compared masked: a changed secret value cannot be told offline
    assert changes["note"][1].endswith("…") and len(changes["note"][1]) <= 60
    inputs["password"] = "plain"
    text = render_diff_text(diff_plans(base, head))
    assert 'password [secret] → "plain"' in text and "hunter" not in text


def test_deleting_or_replacing_a_protected_resource_is_flagged_and_the_verdict_warns() -> None:
    bucket = _record("aws:s3/bucket:Bucket", "data", {"bucket": "acme-data"}, protect=True, retainOnDelete=True)
    logs = _record("aws:cloudwatch/logGroup:LogGroup", "logs", {"name": "l"}, protect=True)
    scratch = _record("aws:s3/bucket:Bucket", "scratch", {"bucket": "acme-scratch"}, retainOnDelete=True)
    base, head = _plans(bucket, logs, scratch)
    head["resources"] = [head["resources"][0], head["resources"][1]]
    head["resources"][1]["inputs"]["bucket"] = "acme-data-2"
    diff = diff_plans(base, head)
    assert diff["protected"] == [logs["urn"], bucket["urn"]] or sorted(diff["protected"]) == sorted([logs["urn"], bucket["urn"]])
    lines = render_diff_text(diff).splitlines()
    assert "    - logs (aws:cloudwatch/logGroup:LogGroup) [protected: `pulumi up` will fail]" in lines
    assert "    - scratch (aws:s3/bucket:Bucket) [retained in the cloud, only dropped from state]" in lines
    assert any(line.startswith("    ± data replace: bucket") and "[protected: `pulumi up` will fail]" in line for line in lines)
    body = render_markdown({**head, "diff": diff, "policy": {"pack": "p", "violations": []}})
    heading = body.splitlines()[0]
    assert "✅" not in heading and "⚠️ 2 protected resources would be deleted or replaced: `pulumi up` will fail" in heading
    assert "- `scratch` (`aws:s3/bucket:Bucket`) (retained in the cloud, only dropped from state)" in body


def test_a_provider_whose_settings_change_says_what_it_reaches() -> None:
    provider = _record("pulumi:providers:gcp", "default_9_0_0", {"project": "acme-ml-prod"})
    bucket = _record("gcp:storage/bucket:Bucket", "data", {"name": "d"}, provider=f"{provider['urn']}::id")
    base, head = _plans(provider, bucket)
    head["resources"][1]["inputs"]["project"] = "acme-ml-prod-2"
    entry = _only_entry(diff_plans(base, head))
    assert entry["notes"] == ["provider settings changed: the 1 resource using this provider may update, or be "
                              "replaced where they cannot take the change in place"]


def test_without_policy_the_verdict_does_not_say_it_passes() -> None:
    body = render_markdown({"stack": "dev", "resources": []})
    assert body.splitlines()[0] == "### `dev`: policy not evaluated"
    assert "✅" not in body
    assert render_markdown({"stack": "dev", "resources": [], "policy": {"pack": "p", "violations": []}}).startswith(
        "### `dev`: ✅ passes")


def test_long_tables_and_lists_say_how_many_rows_were_left_out() -> None:
    records = [_record("aws:ec2/vpc:Vpc", f"vpc-{i:03}", {"cidrBlock": "10.0.0.0/16"}) for i in range(60)]
    for r in records:
        r["parent"] = f"urn:pulumi:prod::ai-infra::acme:index:Net::{r['name']}"
    comps = [{"urn": r["parent"], "type": "acme:index:Net", "name": r["name"], "parent": STACK_URN, "custom": False,
              "inputs": {}} for r in records]
    base, head = _plans(*comps, *records)
    for r in head["resources"]:
        if r["type"] == "aws:ec2/vpc:Vpc":
            r["inputs"]["cidrBlock"] = "10.9.0.0/16"
    body = render_markdown({**head, "diff": diff_plans(base, head)})
    assert "| … 10 more | | | | |" in body
    assert body.count("- ~ `vpc-") == 50 and "- … 10 more" in body


def test_each_changed_properties_line_is_capped() -> None:
    vpc = _record("aws:ec2/vpc:Vpc", "vpc", {f"key{i}": i for i in range(200)})
    base, head = _plans(vpc)
    head["resources"][1]["inputs"] = {f"key{i}": i + 1 for i in range(200)}
    body = render_markdown({**head, "diff": diff_plans(base, head)})
    line = next(x for x in body.splitlines() if x.startswith("- ~ `vpc`"))
    assert len(line) <= 600 and line.endswith("…") and line.count("`") % 2 == 0


def test_a_cut_comment_keeps_every_verdict_and_closes_what_it_opened() -> None:
    """Per-section cuts: one environment's long diff cannot push the others' verdict lines out, and a cut inside
    `<details>` closes it, so the rest of the comment does not fall into it."""
    records = [_record("aws:ec2/vpc:Vpc", f"vpc-{i:04}", {"tags": {f"k{j}": "x" * 20 for j in range(30)}})
               for i in range(200)]
    base, head = _plans(*records)
    for r in head["resources"][1:]:
        r["inputs"]["tags"] = {k: "y" * 20 for k in r["inputs"]["tags"]}
    diff = diff_plans(base, head)

    def section(stack: str, mandatory: int) -> str:
        return render_markdown({**head, "stack": stack, "diff": diff, "policy": {"pack": "p", "violations": [
            {"policy": f"rule-{i}", "enforcementLevel": "mandatory", "urn": f"urn:x::r{i}", "message": "m"}
            for i in range(mandatory)]}}, "summary line\n" * 500)

    sections = [section("dev", 0), section("staging", 2), _section("prod", 3, 10)]
    assert len("".join(sections)) > GITHUB_COMMENT_LIMIT
    comment = combine(sections, limit=40_000)
    assert len(comment) <= 40_000
    for stack, verdict in (("dev", "✅ passes"), ("staging", "❌ blocked"), ("prod", "❌ blocked")):
        assert f"### `{stack}`: {verdict}" in comment
    assert comment.count("<details") == comment.count("</details>") > 0
    assert comment.count("```") % 2 == 0
    assert comment.count("| mandatory | `rule-2` |") == 1  # the small section is whole
    assert comment.count("… cut to fit GitHub's comment limit; the job log has the rest.") == 2
    for part in comment.split("### ")[1:3]:  # each cut section ends its details before the note
        assert part.rstrip().endswith("</details>\n\n… cut to fit GitHub's comment limit; the job log has the rest.")


def test_a_replaced_cluster_warns_that_its_kubernetes_objects_are_not_recreated() -> None:
    """pulumi-kubernetes keeps every object of a provider whose clusterIdentifier is unchanged, even when the cluster
    behind it is replaced: the diff says so, and what re-creates them."""
    eks = _record("aws:eks/cluster:Cluster", "dev-eks", {"name": "dev", "version": "1.33"})
    other = _record("aws:eks/cluster:Cluster", "other-eks", {"name": "other"})
    k8s = _record("pulumi:providers:kubernetes", "dev-k8s", {"clusterIdentifier": "aws/dev"},
                  dependencies=[eks["urn"]])
    namespaces = [_record("kubernetes:core/v1:Namespace", f"team-{i}", {"metadata": {"name": f"team-{i}"}},
                          provider=f"{k8s['urn']}::k8s-id") for i in range(3)]
    base, head = _plans(eks, other, k8s, *namespaces)
    head["resources"][1]["inputs"]["version"] = "1.34"
    assert diff_plans(base, head)["stranded"] == []  # an update keeps the cluster and its objects
    head["resources"][1]["inputs"]["name"] = "dev2"  # EKS cannot rename a cluster: replaced
    head["resources"][2]["inputs"]["name"] = "other2"  # replaced too, but no provider depends on it
    diff = diff_plans(base, head)
    assert diff["stranded"] == [{"cluster": eks["urn"], "provider": k8s["urn"], "objects": 3}]
    assert ("  warning: cluster dev-eks is replaced, but the 3 Kubernetes object(s) on it are not re-created there"
            in render_diff_text(diff))
    body = render_markdown({**head, "diff": diff, "policy": {"pack": "p", "violations": []}})
    assert "⚠️ cluster `dev-eks` is replaced, but the 3 Kubernetes object(s) on it are not re-created there" in body
    assert "run `pulumi up --refresh`" in body


def test_a_resource_replaced_with_another_is_replaced_too_down_the_chain() -> None:
    """The engine replaces a resource whose replaceWith names a replaced one (step_generator.go, diff): the diff too,
    whether the resource changed or not, and through a chain of them."""
    pv = _record("kubernetes:core/v1:PersistentVolume", "pv", {"metadata": {"name": "lustre"}})
    claim = _record("kubernetes:core/v1:PersistentVolumeClaim", "claim", {"metadata": {"name": "c"}, "x": 1},
                    replaceWith=[pv["urn"]], retainOnDelete=True)
    pod = _record("kubernetes:core/v1:Pod", "pod", {"metadata": {"name": "p"}}, replaceWith=[claim["urn"]])
    other = _record("kubernetes:core/v1:Pod", "other", {"metadata": {"name": "o"}})
    base, head = _plans(pv, claim, pod, other)
    head["resources"][2]["inputs"]["x"] = 2  # an update of its own...
    assert diff_plans(base, head)["counts"] == {"added": 0, "changed": 1, "replaced": 0, "removed": 0}
    head["resources"][1]["inputs"]["metadata"]["name"] = "lustre2"  # ...until the volume it is replaced with is replaced
    diff = diff_plans(base, head)
    assert diff["counts"] == {"added": 0, "changed": 0, "replaced": 3, "removed": 0}
    entries = {e["urn"].split("::")[-1]: e for g in diff["components"].values() for e in g["replaced"]}
    assert entries["claim"]["notes"] == ["replaced with pv (replaceWith)",
                                         "the replaced one is retained in the cloud, only dropped from state"]
    assert entries["claim"]["inputs"] == ["x"]
    assert entries["pod"]["notes"] == ["replaced with claim (replaceWith)"] and entries["pod"]["changes"] == []
    lines = render_diff_text(diff).splitlines()
    assert "    ± pod replace [replaced with claim (replaceWith)]" in lines
    assert ("    ± claim replace: x 1 → 2 [replaced with pv (replaceWith)] [the replaced one is retained in the cloud, only "
            "dropped from state]") in lines


def test_the_plan_records_replace_with_and_deleted_with_as_the_engine_gets_them() -> None:
    import pulumi

    from aiinfra.plan.runtime import run_program

    def program() -> None:
        vault = pulumi.CustomResource("test:index:Vault", "vault", {})
        key = pulumi.CustomResource("test:index:Key", "key", {}, opts=pulumi.ResourceOptions(deleted_with=vault))
        pulumi.CustomResource("test:index:Use", "use", {}, opts=pulumi.ResourceOptions(replace_with=[key, vault]))

    records = {r.name: r for r in run_program(program, project="p", stack="s").resources}
    assert records["key"].deletedWith == records["vault"].urn and records["vault"].deletedWith == ""
    assert records["use"].replaceWith == sorted([records["key"].urn, records["vault"].urn])
    assert records["key"].replaceWith == []


def test_a_lustre_links_new_bucket_or_prefix_is_a_replacement() -> None:
    link = _record("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "scratch-s3-link",
                   {"dataRepositoryPath": "s3://datasets/train/", "fileSystemPath": "/", "importedFileChunkSize": 1024})
    base, head = _plans(link)
    link = head["resources"][1]
    link["inputs"]["importedFileChunkSize"] = 2048  # FSx updates it in place
    assert _only_entry(diff_plans(base, head))["action"] == "update"
    link["inputs"]["dataRepositoryPath"] = "s3://datasets/eval/"
    assert _only_entry(diff_plans(base, head))["replaceBecause"] == ["dataRepositoryPath"]
