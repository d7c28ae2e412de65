"""`k8s-no-privileged-pods` with `privilegedWorkloads`: a workload named `namespace/kind/name` may run privileged on
the host network; the same spec under any other name, namespace or kind is flagged, hostPID/hostIPC stay flagged, and
a name the rule needs but cannot know during preview is reported, never passed."""

from __future__ import annotations

import copy

import pytest
from policy_helpers import RULES, UNKNOWN, run_resource, unknown_reported
from pulumi_policy.proxy import UnknownValueError

RULE = "k8s-no-privileged-pods"
DAEMONSET, DEPLOYMENT = "kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1:Deployment"
ENTRY = "kube-system/DaemonSet/csi-azurelustre-node-jammy"
CONFIG = {"privilegedWorkloads": [ENTRY]}
FLAGGED = ["hostNetwork is on", "container azurelustre is privileged"]


def node_plugin(namespace: str | None = "kube-system", name: str = "csi-azurelustre-node-jammy", **pod: object) -> dict:
    metadata = {"name": name, **({"namespace": namespace} if namespace is not None else {})}
    return {"metadata": metadata, "spec": {"template": {"spec": {
        "hostNetwork": True, **pod,
        "containers": [{"name": "node-driver-registrar"}, {"name": "azurelustre", "securityContext": {"privileged": True}}]}}}}


def test_the_default_exempts_nothing():
    assert RULES[RULE].config["privilegedWorkloads"]["default"] == []
    assert run_resource(RULE, DAEMONSET, node_plugin()) == FLAGGED


def test_the_named_workload_passes():
    assert run_resource(RULE, DAEMONSET, node_plugin(), CONFIG) == []


@pytest.mark.parametrize(("type_", "props"), [
    (DAEMONSET, node_plugin(name="csi-azurelustre-node-jammy2")),
    (DAEMONSET, node_plugin(name="csi-azurelustre-node-noble")),
    (DAEMONSET, node_plugin(namespace="research")),
    (DAEMONSET, node_plugin(namespace="kube-system-x")),
    (DEPLOYMENT, node_plugin()),  # same namespace and name, another kind
    (DAEMONSET, node_plugin(namespace=None)),  # no namespace: where it lands is the provider's default, unverifiable
])
def test_the_same_spec_under_another_identity_is_flagged(type_, props):
    assert run_resource(RULE, type_, props, CONFIG) == FLAGGED


def test_host_pid_and_ipc_stay_flagged_for_a_named_workload():
    assert run_resource(RULE, DAEMONSET, node_plugin(hostPID=True, hostIPC=True), CONFIG) == ["hostPID is on", "hostIPC is on"]


def test_a_named_workload_that_is_not_privileged_passes_and_others_are_unaffected():
    plain = copy.deepcopy(node_plugin(name="other"))
    plain["spec"]["template"]["spec"] = {"containers": [{"name": "c"}]}
    assert run_resource(RULE, DAEMONSET, plain, CONFIG) == []


@pytest.mark.parametrize("field", ["name", "namespace"])
def test_an_identity_unknown_during_preview_is_reported_not_passed(field):
    props = node_plugin()
    props["metadata"][field] = UNKNOWN
    assert unknown_reported(RULE, DAEMONSET, props, CONFIG) == f"string value at .metadata.{field} can't be known during preview"


def test_an_unknown_identity_is_not_needed_when_nothing_is_exempt_or_nothing_is_privileged():
    props = node_plugin(name=UNKNOWN)
    assert run_resource(RULE, DAEMONSET, props) == FLAGGED  # no exemptions configured: the name is never read
    plain = node_plugin(name=UNKNOWN)
    plain["spec"]["template"]["spec"] = {"containers": [{"name": "c"}]}
    assert run_resource(RULE, DAEMONSET, plain, CONFIG) == []


def test_an_unknown_privileged_flag_is_reported_as_before():
    props = node_plugin()
    props["spec"]["template"]["spec"]["hostNetwork"] = UNKNOWN
    with pytest.raises(UnknownValueError):
        run_resource(RULE, DAEMONSET, props, CONFIG)
