"""`azure-aks-kms-etcd`: AKS without the Key Vault KMS plugin keeps Kubernetes Secrets under platform-managed keys only,
which the EKS and GKE rules report for their clusters. Cases are planned through the typed SDK classes, so the rule
reads the wire shape the engine sends."""

from __future__ import annotations

import pulumi_azure_native as azure
import pytest
from helpers import platform_dict
from policy_helpers import RULES, UNKNOWN, run_resource, unknown_reported

from aiinfra.plan.runtime import run_program
from components.compose import build_platform
from components.spec import load_platform

RULE = "azure-aks-kms-etcd"
AKS = "azure-native:containerservice:ManagedCluster"
MESSAGE = "Kubernetes Secrets in etcd are not encrypted with a customer-managed Key Vault key (azureKeyVaultKms is off)"
KEY_ID = "https://kv.vault.azure.net/keys/cmk/0123456789abcdef0123456789abcdef"
VAULT_ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv"


def violations(kms: azure.containerservice.AzureKeyVaultKmsArgs | None) -> list[str]:
    def build() -> None:
        azure.containerservice.ManagedCluster(
            "aks", resource_group_name="rg",
            security_profile=azure.containerservice.ManagedClusterSecurityProfileArgs(azure_key_vault_kms=kms))
    [inputs] = [r.inputs for r in run_program(build, project="p", stack="s").resources if r.name == "aks"]
    return run_resource(RULE, AKS, inputs, resource_name="aks")


@pytest.mark.parametrize(("kms", "found"), [
    (None, [MESSAGE]),
    (azure.containerservice.AzureKeyVaultKmsArgs(enabled=False), [MESSAGE]),
    (azure.containerservice.AzureKeyVaultKmsArgs(enabled=True, key_id=KEY_ID, key_vault_network_access="Private",
                                                 key_vault_resource_id=VAULT_ID), []),
])
def test_a_cluster_is_reported_unless_the_kms_plugin_is_on(kms: azure.containerservice.AzureKeyVaultKmsArgs | None,
                                                           found: list[str]) -> None:
    assert violations(kms) == found


def test_an_unknown_setting_is_reported_not_passed() -> None:
    props = {"securityProfile": {"azureKeyVaultKms": {"enabled": UNKNOWN}}}
    assert "securityProfile.azureKeyVaultKms.enabled" in unknown_reported(RULE, AKS, props)


def test_the_rule_is_an_encryption_rule_like_its_eks_and_gke_counterparts() -> None:
    rule = RULES[RULE]
    assert rule.types == (AKS,) and rule.severity == RULES["aws-eks-secrets-encryption"].severity
    assert rule.frameworks == {**RULES["aws-eks-secrets-encryption"].frameworks, "CIS": ("AKS 5.3.1",)}
    assert "API Server VNet Integration" in rule.remediation


@pytest.mark.parametrize(("etcd_encryption", "found"), [
    ({}, [MESSAGE]),  # the default, platform_key: reported on every plan, as advice
    ({"etcd_encryption": "customer_key"}, []),  # the KMS plugin is on, with the region's etcd key
])
def test_the_toolkits_own_clusters_are_reported_unless_they_use_the_customer_key(etcd_encryption: dict[str, str],
                                                                                 found: list[str]) -> None:
    # customer_key costs the cluster's VNet its encryption (API Server VNet Integration doesn't support it), so it is
    # an opt-in, and the default keeps AKS's platform-managed keys (README: Known limits).
    region = {"network": {"cidr": "10.50.0.0/16", "transit_encryption": "monitor"}, "cluster": {}}
    azure = {"regions": {"westus3": region}, **etcd_encryption}
    spec = load_platform(platform_dict({"azure": azure}, addons={"enabled": False}))
    plan = run_program(lambda: build_platform(spec), project="ai-infra", stack="test")
    clusters = [r.inputs for r in plan.resources if r.type == AKS]
    assert clusters and all(run_resource(RULE, AKS, inputs) == found for inputs in clusters)
