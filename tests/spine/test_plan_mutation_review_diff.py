"""`aiinfra plan --diff` (aiinfra/plan/diff.py, property_paths.py, force_new.py): what the diff tells a reviewer the
engine will do with each change, in the cases a mutation review found no other test pinning down."""

from __future__ import annotations

import pytest
from helpers import PLAN_STACK_URN as STACK_URN, base_and_head as _plans, plan_record as _record

from aiinfra.plan.diff import diff_plans, render_diff_text

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"}
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # what the plan records for a value known only after apply


def _head(head: dict, name: str) -> dict:
    return next(r for r in head["resources"] if r["name"] == name)


def _entries(diff: dict, kind: str) -> dict[str, dict]:
    return {e["urn"].split("::")[-1]: e for g in diff["components"].values() for e in g[kind]}


def _only_entry(diff: dict) -> dict:
    [entry] = [e for kind in ("changed", "replaced") for e in _entries(diff, kind).values()]
    return entry


def test_a_secret_object_made_plain_is_one_change_shown_masked() -> None:
    """A secret input that becomes a plain object is one change of the whole value: walking into the secret would list
    the engine's signature key as a removed input and `[secret]` as a changed one."""
    vpc = _record("aws:ec2/vpc:Vpc", "vpc", {"settings": SECRET})
    base, head = _plans(vpc)
    _head(head, "vpc")["inputs"]["settings"] = {"mode": "open"}
    assert _only_entry(diff_plans(base, head))["changes"] == [
        {"path": "settings", "old": "[secret]", "new": '{"mode":"open"}'}]


def test_an_element_added_to_a_list_is_a_change_and_a_node_group_given_a_subnet_is_replaced() -> None:
    """EKS cannot move a node group to other subnets (subnetIds is ForceNew): a list that only grows still changes."""
    group = _record("aws:eks/nodeGroup:NodeGroup", "train", {"subnetIds": ["subnet-a"]})
    base, head = _plans(group)
    _head(head, "train")["inputs"]["subnetIds"] = ["subnet-a", "subnet-b"]
    entry = _only_entry(diff_plans(base, head))
    assert entry["action"] == "replace" and entry["replaceBecause"] == ["subnetIds[1]"]
    assert entry["changes"] == [{"path": "subnetIds[1]", "old": "(unset)", "new": '"subnet-b"'}]


def test_values_known_only_after_apply_are_shown_as_unknown() -> None:
    """The plan's unknown marker is an internal UUID; the reader sees `[unknown]`, alone or inside an object."""
    vm = _record("aws:ec2/instance:Instance", "vm", {"ami": "ami-1"})
    base, head = _plans(vm)
    _head(head, "vm")["inputs"].update(ami=UNKNOWN, tags={"ami": UNKNOWN})
    diff = diff_plans(base, head)
    assert _only_entry(diff)["changes"] == [{"path": "ami", "old": '"ami-1"', "new": "[unknown]"},
                                            {"path": "tags", "old": "(unset)", "new": '{"ami":[unknown]}'}]
    assert UNKNOWN not in render_diff_text(diff)


def test_a_value_exactly_as_wide_as_the_limit_is_shown_whole() -> None:
    """Values are cut past 60 characters; one of exactly 60 is shown as it is, with no `…`."""
    vpc = _record("aws:ec2/vpc:Vpc", "vpc", {"note": "a"})
    base, head = _plans(vpc)
    _head(head, "vpc")["inputs"]["note"] = "x" * 58  # 60 characters with its quotes
    assert _only_entry(diff_plans(base, head))["changes"][0]["new"] == '"' + "x" * 58 + '"'


def test_added_and_removed_components_are_grouped_under_their_own_name() -> None:
    """A component the stack parents heads its own group, with its children, whether it is added or removed."""
    net = {"urn": "urn:pulumi:prod::ai-infra::acme:index:Net::edge", "type": "acme:index:Net", "name": "edge",
           "parent": STACK_URN, "custom": False, "inputs": {}}
    vpc = _record("aws:ec2/vpc:Vpc", "edge-vpc", {"cidrBlock": "10.0.0.0/16"}, parent=net["urn"])
    empty, _ = _plans()
    full, _ = _plans(net, vpc)
    added = diff_plans(empty, full)
    assert list(added["components"]) == ["Net edge"]
    assert sorted(_entries(added, "added")) == ["edge", "edge-vpc"]
    removed = diff_plans(full, empty)
    assert list(removed["components"]) == ["Net edge"]
    assert sorted(_entries(removed, "removed")) == ["edge", "edge-vpc"]


def test_a_provider_list_setting_recorded_as_json_text_is_no_change_against_its_parsed_form() -> None:
    """As for object settings: a list setting recorded as the engine's JSON text equals the parsed list a base
    planned before held."""
    provider = _record("pulumi:providers:aws", "default", {"region": "us-east-1", "allowedAccountIds": ["123"]})
    base, head = _plans(provider)
    _head(head, "default")["inputs"]["allowedAccountIds"] = '["123"]'
    assert diff_plans(base, head)["counts"]["changed"] == 0


def test_the_heads_ignore_changes_and_replace_on_changes_are_the_ones_the_engine_applies() -> None:
    """The engine reads ignoreChanges and replaceOnChanges from the program being deployed (the head), so adding one
    in the same change as the edit it covers already takes effect."""
    role = _record("aws:iam/role:Role", "r", {"tags": {"team": "ml"}})
    bucket = _record("aws:s3/bucket:Bucket", "b", {"bucket": "acme", "acl": "private"})
    base, head = _plans(role, bucket)
    _head(head, "r").update(ignoreChanges=["tags"], inputs={"tags": {"team": "infra"}})
    _head(head, "b").update(replaceOnChanges=["acl"], inputs={"bucket": "acme", "acl": "public-read"})
    diff = diff_plans(base, head)
    role_entry = _entries(diff, "changed")["r"]
    assert role_entry["inputs"] == [] and role_entry["options"] == ["ignoreChanges"]
    assert _entries(diff, "replaced")["b"]["replaceBecause"] == ["acl"]


@pytest.mark.parametrize(("node_config", "action", "because"), [
    ({"machineType": "e2-standard-8"}, "update", []),  # GKE resizes nodes in place
    ({"machineType": "e2-standard-8", "spot": True}, "replace", ["nodeConfig"]),  # spot is ForceNew
])
def test_a_whole_object_added_replaces_only_when_it_sets_a_field_the_provider_cannot_update(
        node_config: dict, action: str, because: list) -> None:
    pool = _record("gcp:container/nodePool:NodePool", "cpu", {"name": "cpu"})
    base, head = _plans(pool)
    _head(head, "cpu")["inputs"]["nodeConfig"] = node_config
    entry = _only_entry(diff_plans(base, head))
    assert (entry["action"], entry["replaceBecause"]) == (action, because)


def test_an_fsx_capacity_known_only_after_apply_is_an_update_not_a_crash() -> None:
    """A smaller storageCapacity replaces an FSx file system; one computed from another resource is unknown in a plan
    and cannot be compared, so it is shown as an update."""
    fs = _record("aws:fsx/lustreFileSystem:LustreFileSystem", "fs", {"storageCapacity": 4800})
    base, head = _plans(fs)
    _head(head, "fs")["inputs"]["storageCapacity"] = UNKNOWN
    entry = _only_entry(diff_plans(base, head))
    assert entry["action"] == "update"
    assert entry["changes"] == [{"path": "storageCapacity", "old": "4800", "new": "[unknown]"}]


def test_the_provider_note_follows_a_settings_change_and_counts_its_resources() -> None:
    provider = _record("pulumi:providers:gcp", "gcp", {"project": "acme"})
    base, head = _plans(provider)
    _head(head, "gcp")["protect"] = True  # an option alone changes nothing the provider's resources get
    entry = _only_entry(diff_plans(base, head))
    assert entry["options"] == ["protect"] and entry["notes"] == []
    _head(head, "gcp")["inputs"]["project"] = "acme-2"
    assert _only_entry(diff_plans(base, head))["notes"] == [
        "provider settings changed: the 0 resources using this provider may update, or be replaced where they cannot "
        "take the change in place"]


def test_a_removed_resource_records_protected_and_retained_in_the_json() -> None:
    """`aiinfra plan --json` stores the diff: tools read the flags, not the note text."""
    bucket = _record("aws:s3/bucket:Bucket", "data", {"bucket": "acme"}, protect=True, retainOnDelete=True)
    base, head = _plans(bucket)
    head["resources"] = head["resources"][:1]
    [entry] = _entries(diff_plans(base, head), "removed").values()
    assert entry["protected"] is True and entry["retained"] is True


@pytest.mark.parametrize(("type_", "inputs", "edit"), [
    ("aws:eks/cluster:Cluster", {"name": "dev"}, {"name": "dev2"}),
    ("gcp:container/cluster:Cluster", {"name": "dev"}, {"name": "dev2"}),
    ("azure-native:containerservice:ManagedCluster", {"resourceGroupName": "rg", "dnsPrefix": "dev"},
     {"resourceGroupName": "rg", "dnsPrefix": "dev2"}),
])
def test_every_cloud_warns_that_a_replaced_clusters_kubernetes_objects_stay_in_state(
        type_: str, inputs: dict, edit: dict) -> None:
    """EKS, GKE and AKS clusters alike: replacing one leaves the objects its Kubernetes provider created in state."""
    cluster = _record(type_, "dev-cluster", inputs)
    k8s = _record("pulumi:providers:kubernetes", "dev-k8s", {"clusterIdentifier": "dev"},
                  dependencies=[cluster["urn"]])
    ns = _record("kubernetes:core/v1:Namespace", "team", {"metadata": {"name": "team"}}, provider=f"{k8s['urn']}::id")
    base, head = _plans(cluster, k8s, ns)
    _head(head, "dev-cluster")["inputs"] = edit
    assert diff_plans(base, head)["stranded"] == [{"cluster": cluster["urn"], "provider": k8s["urn"], "objects": 1}]


def test_a_kubernetes_provider_with_no_objects_strands_nothing() -> None:
    """The warning is about objects left behind: a provider that created none has nothing to warn about."""
    cluster = _record("aws:eks/cluster:Cluster", "dev-eks", {"name": "dev"})
    k8s = _record("pulumi:providers:kubernetes", "dev-k8s", {"clusterIdentifier": "dev"},
                  dependencies=[cluster["urn"]])
    base, head = _plans(cluster, k8s)
    _head(head, "dev-eks")["inputs"]["name"] = "dev2"
    diff = diff_plans(base, head)
    assert diff["counts"]["replaced"] == 1 and diff["stranded"] == []
    assert "warning" not in render_diff_text(diff)


def test_protecting_a_resource_in_the_update_that_replaces_it_is_not_flagged() -> None:
    """The engine refuses a replacement only when the state already holds `protect` (step_generator.go checks
    `new.Protect && old.Protect`): turning it on while replacing goes through."""
    bucket = _record("aws:s3/bucket:Bucket", "data", {"bucket": "acme-data"})
    base, head = _plans(bucket)
    _head(head, "data").update(protect=True, inputs={"bucket": "acme-data-2"})
    diff = diff_plans(base, head)
    entry = _only_entry(diff)
    assert entry["action"] == "replace" and not entry.get("protected") and entry["notes"] == []
    assert diff["protected"] == []


def test_only_a_base_that_retains_on_delete_leaves_the_replaced_resource_in_the_cloud() -> None:
    """The delete half of a replacement reads the old state's retainOnDelete (step.go, DeleteStep.Apply)."""
    retained = _record("aws:s3/bucket:Bucket", "old-retained", {"bucket": "a"}, retainOnDelete=True)
    newly = _record("aws:s3/bucket:Bucket", "new-retained", {"bucket": "b"})
    base, head = _plans(retained, newly)
    _head(head, "old-retained").update(retainOnDelete=False, inputs={"bucket": "a2"})
    _head(head, "new-retained").update(retainOnDelete=True, inputs={"bucket": "b2"})
    replaced = _entries(diff_plans(base, head), "replaced")
    assert replaced["old-retained"]["notes"] == ["the replaced one is retained in the cloud, only dropped from state"]
    assert replaced["new-retained"]["notes"] == []


def test_a_replace_with_chain_is_followed_whatever_order_its_urns_sort_in() -> None:
    """a is replaced with b, b with c: replacing c replaces all three, though a's URN sorts before b's."""
    c = _record("kubernetes:core/v1:PersistentVolume", "c", {"metadata": {"name": "c"}})
    b = _record("kubernetes:core/v1:PersistentVolume", "b", {"metadata": {"name": "b"}}, replaceWith=[c["urn"]])
    a = _record("kubernetes:core/v1:PersistentVolume", "a", {"metadata": {"name": "a"}}, replaceWith=[b["urn"]])
    base, head = _plans(a, b, c)
    _head(head, "c")["inputs"]["metadata"]["name"] = "c2"
    diff = diff_plans(base, head)
    assert sorted(_entries(diff, "replaced")) == ["a", "b", "c"]
    assert _entries(diff, "replaced")["a"]["notes"] == ["replaced with b (replaceWith)"]


def test_replace_with_added_in_the_head_already_replaces() -> None:
    """The engine reads replaceWith from the program being deployed, so adding it replaces in the same update."""
    pv = _record("kubernetes:core/v1:PersistentVolume", "pv", {"metadata": {"name": "pv"}})
    pod = _record("kubernetes:core/v1:Pod", "pod", {"metadata": {"name": "pod"}})
    base, head = _plans(pv, pod)
    _head(head, "pv")["inputs"]["metadata"]["name"] = "pv2"
    _head(head, "pod")["replaceWith"] = [pv["urn"]]
    assert sorted(_entries(diff_plans(base, head), "replaced")) == ["pod", "pv"]


@pytest.mark.parametrize(("changed", "shown", "more"), [(12, 12, None), (13, 12, "… 1 more")])
def test_the_text_diff_shows_twelve_changes_of_a_resource_then_counts_the_rest(
        changed: int, shown: int, more: str | None) -> None:
    """`plan --diff` prints at most 12 changes of a resource, then how many more: twelve are all shown, and the
    count of the rest matches what was left out."""
    vpc = _record("aws:ec2/vpc:Vpc", "vpc", {f"k{i:02}": 0 for i in range(changed)})
    base, head = _plans(vpc)
    _head(head, "vpc")["inputs"] = {f"k{i:02}": 1 for i in range(changed)}
    [line] = [x for x in render_diff_text(diff_plans(base, head)).splitlines() if x.startswith("    ~ vpc:")]
    parts = line.split(": ", 1)[1].split(", ")
    assert parts[:shown] == [f"k{i:02} 0 → 1" for i in range(shown)]
    assert parts[shown:] == ([more] if more else [])


def test_the_text_diff_counts_the_protected_resources_it_warns_about() -> None:
    """The terminal's warning says how many protected resources stop `pulumi up`."""
    buckets = [_record("aws:s3/bucket:Bucket", f"data-{i}", {"bucket": f"d{i}"}, protect=True) for i in range(2)]
    base, head = _plans(*buckets)
    head["resources"] = head["resources"][:1]
    assert ("  warning: 2 protected resource(s) would be deleted or replaced; `pulumi up` will fail until they are "
            "unprotected") in render_diff_text(diff_plans(base, head)).splitlines()


def test_turning_retain_on_delete_on_is_reported() -> None:
    """retainOnDelete decides whether deleting the resource deletes it in the cloud: a change to it is shown."""
    bucket = _record("aws:s3/bucket:Bucket", "data", {"bucket": "acme"})
    base, head = _plans(bucket)
    _head(head, "data")["retainOnDelete"] = True
    entry = _only_entry(diff_plans(base, head))
    assert (entry["action"], entry["inputs"], entry["options"]) == ("update", [], ["retainOnDelete"])


def test_an_ignored_path_with_a_two_digit_index_is_ignored() -> None:
    """ignoreChanges paths index lists with any number of digits (`agentPoolProfiles[10].count`)."""
    aks = _record("azure-native:containerservice:ManagedCluster", "aks",
                  {"agentPoolProfiles": [{"count": 1} for _ in range(11)]},
                  ignoreChanges=["agentPoolProfiles[10].count"])
    base, head = _plans(aks)
    _head(head, "aks")["inputs"]["agentPoolProfiles"][10]["count"] = 5
    assert diff_plans(base, head)["counts"]["changed"] == 0


def test_a_list_that_appears_shorter_than_a_replace_paths_index_is_an_update() -> None:
    """replaceOnChanges may index a list (`volumes[1]`): a list that appears without that element changes nothing
    there, so it is an update (and the diff does not fail looking past the list's end)."""
    pod = _record("kubernetes:core/v1:Pod", "pod", {"metadata": {"name": "p"}}, replaceOnChanges=["volumes[1]"])
    base, head = _plans(pod)
    _head(head, "pod")["inputs"]["volumes"] = ["scratch"]
    entry = _only_entry(diff_plans(base, head))
    assert (entry["action"], entry["inputs"]) == ("update", ["volumes"])


def test_a_wildcard_over_a_list_ignores_that_field_of_every_element() -> None:
    """`agentPoolProfiles[*].count`: the autoscaler owns every pool's count; another field still shows."""
    aks = _record("azure-native:containerservice:ManagedCluster", "aks",
                  {"agentPoolProfiles": [{"count": 1, "maxCount": 3}, {"count": 2, "maxCount": 3}]},
                  ignoreChanges=["agentPoolProfiles[*].count"])
    base, head = _plans(aks)
    profiles = _head(head, "aks")["inputs"]["agentPoolProfiles"]
    profiles[0]["count"], profiles[1]["count"] = 4, 5
    assert diff_plans(base, head)["counts"]["changed"] == 0
    profiles[1]["maxCount"] = 6
    assert _only_entry(diff_plans(base, head))["inputs"] == ["agentPoolProfiles[1].maxCount"]


def test_a_wildcard_in_replace_on_changes_matches_every_element() -> None:
    """replaceOnChanges `spec.containers[*].image` (the engine's PropertyPath.Contains): any container's new image
    replaces."""
    pod = _record("kubernetes:core/v1:Pod", "pod", {"spec": {"containers": [{"image": "a:1"}, {"image": "b:1"}]}},
                  replaceOnChanges=["spec.containers[*].image"])
    base, head = _plans(pod)
    _head(head, "pod")["inputs"]["spec"]["containers"][1]["image"] = "b:2"
    entry = _only_entry(diff_plans(base, head))
    assert (entry["action"], entry["replaceBecause"]) == ("replace", ["spec.containers[1].image"])


@pytest.mark.parametrize(("type_", "inputs", "edit", "because"), [
    ("aws:fsx/lustreFileSystem:LustreFileSystem", {"deploymentType": "PERSISTENT_1"},
     {"deploymentType": "PERSISTENT_2"}, "deploymentType"),
    ("gcp:container/nodePool:NodePool", {"nodeConfig": {"spot": False}}, {"nodeConfig": {"spot": True}},
     "nodeConfig.spot"),
    ("gcp:lustre/instance:Instance", {"perUnitStorageThroughput": 125}, {"perUnitStorageThroughput": 250},
     "perUnitStorageThroughput"),
    ("kubernetes:apps/v1:Deployment", {"spec": {"selector": {"matchLabels": {"app": "a"}}}},
     {"spec": {"selector": {"matchLabels": {"app": "b"}}}}, "spec.selector.matchLabels.app"),
    ("kubernetes:core/v1:Service", {"spec": {"clusterIP": "10.0.0.10"}}, {"spec": {"clusterIP": "10.0.0.11"}},
     "spec.clusterIP"),
    ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", {"roleRef": {"name": "view"}},
     {"roleRef": {"name": "edit"}}, "roleRef.name"),
    ("kubernetes:helm.sh/v3:Release", {"name": "ingress", "chart": "c"}, {"name": "ingress-2", "chart": "c"}, "name"),
])
def test_the_provider_replaces_what_it_cannot_update_in_place(
        type_: str, inputs: dict, edit: dict, because: str) -> None:
    """force_new.py, read from each provider's source: the diff must say `replace` for these, or a reviewer approves
    what reads as an edit and the resource (a file system, a node pool, a Service's IP) is recreated."""
    resource = _record(type_, "r", inputs)
    base, head = _plans(resource)
    _head(head, "r")["inputs"] = edit
    entry = _only_entry(diff_plans(base, head))
    assert (entry["action"], entry["replaceBecause"]) == ("replace", [because])
