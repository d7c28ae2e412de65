"""Every resource rule: a compliant case and a violating case, with props wrapped as the policy SDK wraps them."""

from __future__ import annotations

import json

import pytest
from policy_helpers import RULES, UNKNOWN, run_resource, unknown_reported

KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ALLOW_ALL = json.dumps({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
ALLOW_ONE = json.dumps({"Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::b/*"}]})
EKS_POOL = {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"minSize": 0, "maxSize": 2}, "capacityType": "SPOT",
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}
TPU_VM = "gcp:tpu/v2Vm:V2Vm"
TPU_QR = "gcp:tpu/v2QueuedResource:V2QueuedResource"
QR_NODE = {"acceleratorType": "v6e-16", "runtimeVersion": "v2-alpha-tpuv6e",
           "networkConfig": {"network": "n", "subnetwork": "s", "enableExternalIps": False, "canIpForward": False}}


def queued_resource(node: dict) -> dict:
    """A V2QueuedResource's props as the engine sends them (one single-node spec, as ai-infra makes it)."""
    return {"zone": "europe-west4-a", "tpu": {"nodeSpecs": [{"parent": "projects/p/locations/europe-west4-a", "nodeId": "qr-0",
                                                             "node": node}]}}


POD = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}

# rule -> (resource type, compliant props, violating props, config, expected fragment of the violation)
CASES = {
    "aws-vpc-transit-encryption-enforced": ("aws:ec2/vpcEncryptionControl:VpcEncryptionControl",
        {"vpcId": "vpc-1", "mode": "enforce"}, {"vpcId": "vpc-1", "mode": "monitor"}, {}, "'monitor'"),
    "azure-vnet-transit-encryption-enforced": ("azure-native:network:VirtualNetwork",
        {"encryption": {"enabled": True, "enforcement": "DropUnencrypted"}},
        {"encryption": {"enabled": True, "enforcement": "AllowUnencrypted"}}, {}, "AllowUnencrypted"),
    "aws-s3-public-access-block": ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        dict.fromkeys(["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"], True),
        {"blockPublicAcls": True, "blockPublicPolicy": False, "ignorePublicAcls": True, "restrictPublicBuckets": True}, {}, "blockPublicPolicy"),
    "aws-s3-kms-encryption": ("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": KEY}}]},
        {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]}, {}, "AES256"),
    "aws-eks-private-endpoint": ("aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": False}},
        {"vpcConfig": {"endpointPublicAccess": True}}, {}, "public"),
    "aws-eks-secrets-encryption": ("aws:eks/cluster:Cluster", {"encryptionConfig": {"resources": ["secrets"]}}, {}, {}, "secrets"),
    "aws-eks-control-plane-logs": ("aws:eks/cluster:Cluster", {"enabledClusterLogTypes": ["api", "audit", "authenticator"]},
        {"enabledClusterLogTypes": ["api"]}, {}, "audit"),
    "aws-eks-access-entries": ("aws:eks/cluster:Cluster",
        {"accessConfig": {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}},
        {"accessConfig": {"authenticationMode": "API"}}, {}, "bootstrapClusterCreatorAdminPermissions is true"),
    "aws-launch-template-encrypted-volumes": (LT, {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "kmsKeyId": KEY}}]},
        {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}]}, {}, "/dev/xvda"),
    "aws-launch-template-imdsv2": (LT, {"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1}},
        {"metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 2}}, {}, "hop limit is 2"),
    "aws-ec2-no-public-ip": ("aws:ec2/instance:Instance", {"associatePublicIpAddress": False}, {"associatePublicIpAddress": True}, {}, "public IP"),
    "aws-subnet-no-public-ip-on-launch": ("aws:ec2/subnet:Subnet", {"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/24", "mapPublicIpOnLaunch": False},
        {"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/24", "mapPublicIpOnLaunch": True}, {}, "mapPublicIpOnLaunch is true"),
    "aws-eks-nodegroup-no-ssh": ("aws:eks/nodeGroup:NodeGroup", {}, {"remoteAccess": {"ec2SshKey": "k"}}, {}, "SSH"),
    "aws-efs-encryption": ("aws:efs/fileSystem:FileSystem", {"encrypted": True, "kmsKeyId": KEY}, {"encrypted": False}, {},
        "not encrypted at rest"),
    "aws-fsx-lustre-cmk": ("aws:fsx/lustreFileSystem:LustreFileSystem", {"deploymentType": "PERSISTENT_2", "kmsKeyId": KEY},
        {"deploymentType": "PERSISTENT_2"}, {}, "AWS-managed"),
    "aws-kms-key-rotation": ("aws:kms/key:Key", {"enableKeyRotation": True}, {"enableKeyRotation": False}, {}, "rotation"),
    "aws-security-group-no-open-admin-ingress": ("aws:ec2/securityGroup:SecurityGroup",
        {"ingress": [{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["0.0.0.0/0"]}]},
        {"ingress": [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["0.0.0.0/0"]}]}, {}, "port 22"),
    "aws-lb-listener-tls": ("aws:lb/listener:Listener", {"protocol": "HTTPS", "sslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06"},
        {"protocol": "HTTPS", "sslPolicy": "ELBSecurityPolicy-2016-08"}, {}, "below 1.2"),
    "aws-iam-no-wildcard-policy": ("aws:iam/rolePolicy:RolePolicy", {"policy": ALLOW_ONE}, {"policy": ALLOW_ALL}, {}, "every action"),
    "aws-iam-no-admin-attachment": ("aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        {"policyArn": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"}, {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess"}, {}, "AdministratorAccess"),
    "gcp-gke-private-cluster": ("gcp:container/cluster:Cluster",
        {"privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": True}},
        {"privateClusterConfig": {"enablePrivateNodes": False, "enablePrivateEndpoint": True}}, {}, "public IPs"),
    "gcp-gke-secrets-encryption": ("gcp:container/cluster:Cluster", {"databaseEncryption": {"state": "ENCRYPTED", "keyName": "k"}},
        {"databaseEncryption": {"state": "DECRYPTED"}}, {}, "secrets"),
    "gcp-gke-workload-identity": ("gcp:container/cluster:Cluster", {"workloadIdentityConfig": {"workloadPool": "p.svc.id.goog"}}, {}, {}, "Workload Identity"),
    "gcp-gke-node-service-account": ("gcp:container/nodePool:NodePool", {"nodeConfig": {"serviceAccount": "nodes@p.iam.gserviceaccount.com"}},
        {"nodeConfig": {"serviceAccount": "123-compute@developer.gserviceaccount.com"}}, {}, "default compute"),
    "gcp-tpu-vm-explicit-service-account": (TPU_VM, {"serviceAccount": {"email": "tpu@p.iam.gserviceaccount.com"}},
        {"serviceAccount": {"email": "123-compute@developer.gserviceaccount.com"}}, {}, "Compute Engine default service account 123-"),
    "gcp-tpu-vm-no-external-ip": (TPU_VM, {"networkConfig": {"enableExternalIps": False}},
        {"networkConfig": {"enableExternalIps": True}}, {}, "enableExternalIps True"),
    "gcp-compute-no-public-ip": ("gcp:compute/instance:Instance", {"networkInterfaces": [{"subnetwork": "s"}]},
        {"networkInterfaces": [{"network": "default", "accessConfigs": [{}]}]}, {}, "network interface 0 has accessConfigs"),
    "gcp-gke-shielded-nodes": ("gcp:container/nodePool:NodePool", {"nodeConfig": {"shieldedInstanceConfig": {"enableSecureBoot": True}}},
        {"nodeConfig": {}}, {}, "secure boot"),
    "gcp-storage-bucket-private": ("gcp:storage/bucket:Bucket", {"uniformBucketLevelAccess": True, "publicAccessPrevention": "enforced"},
        {"uniformBucketLevelAccess": True, "publicAccessPrevention": "inherited"}, {}, "not enforced"),
    "gcp-storage-bucket-cmek": ("gcp:storage/bucket:Bucket", {"encryption": {"defaultKmsKeyName": "k"}}, {}, {}, "Google-managed"),
    "gcp-no-public-iam-members": ("gcp:storage/bucketIAMMember:BucketIAMMember", {"member": "user:a@b.c", "role": "roles/storage.objectViewer"},
        {"member": "allUsers", "role": "roles/storage.objectViewer"}, {}, "allUsers"),
    "gcp-subnet-flow-logs": ("gcp:compute/subnetwork:Subnetwork", {"logConfig": {"aggregationInterval": "INTERVAL_5_SEC"}, "privateIpGoogleAccess": True},
        {"privateIpGoogleAccess": True}, {}, "flow logs"),
    "gcp-firewall-no-open-admin-ingress": ("gcp:compute/firewall:Firewall",
        {"direction": "INGRESS", "sourceRanges": ["10.0.0.0/8"], "allows": [{"protocol": "tcp", "ports": ["22"]}]},
        {"direction": "INGRESS", "sourceRanges": ["0.0.0.0/0"], "allows": [{"protocol": "tcp", "ports": ["3389"]}]}, {}, "port 3389"),
    "gcp-ssl-policy-tls12": ("gcp:compute/sSLPolicy:SSLPolicy", {"minTlsVersion": "TLS_1_2", "profile": "RESTRICTED"},
        {"minTlsVersion": "TLS_1_0", "profile": "MODERN"}, {}, "TLS_1_0"),
    "gcp-kms-key-rotation": ("gcp:kms/cryptoKey:CryptoKey", {"rotationPeriod": "7776000s"}, {"rotationPeriod": "31536000s"}, {}, "31536000s"),
    "azure-aks-private-api": ("azure-native:containerservice:ManagedCluster", {"apiServerAccessProfile": {"enablePrivateCluster": True}},
        {"apiServerAccessProfile": {"enablePrivateCluster": False}}, {}, "public"),
    "azure-aks-entra-rbac": ("azure-native:containerservice:ManagedCluster", {"disableLocalAccounts": True, "aadProfile": {"enableAzureRBAC": True}},
        {"disableLocalAccounts": False, "aadProfile": {"enableAzureRBAC": True}}, {}, "local accounts"),
    "azure-aks-network-policy": ("azure-native:containerservice:ManagedCluster", {"networkProfile": {"networkPolicy": "cilium"}}, {"networkProfile": {}}, {}, "network policy"),
    "azure-aks-kms-etcd": ("azure-native:containerservice:ManagedCluster",
        {"securityProfile": {"azureKeyVaultKms": {"enabled": True, "keyId": "https://kv.vault.azure.net/keys/cmk/0123",
                                                  "keyVaultNetworkAccess": "Private", "keyVaultResourceId": "/kv"}}},
        {"securityProfile": {"workloadIdentity": {"enabled": True}}}, {}, "azureKeyVaultKms is off"),
    "azure-aks-disk-encryption": ("azure-native:containerservice:ManagedCluster", {"diskEncryptionSetID": "/des"}, {}, {}, "diskEncryptionSetID"),
    "azure-agentpool-no-public-ip": ("azure-native:containerservice:AgentPool", {"enableNodePublicIP": False}, {"enableNodePublicIP": True}, {}, "public IPs"),
    "azure-vm-no-public-ip": ("azure-native:network:NetworkInterface",
        {"ipConfigurations": [{"name": "ipconfig", "subnet": {"id": "/s"}, "privateIPAllocationMethod": "Dynamic"}]},
        {"ipConfigurations": [{"name": "ipconfig", "subnet": {"id": "/s"}, "publicIPAddress": {"id": "/pip"}}]}, {},
        "IP configuration ipconfig attaches a public IP address"),
    "azure-storage-secure-transfer": ("azure-native:storage:StorageAccount",
        {"enableHttpsTrafficOnly": True, "minimumTlsVersion": "TLS1_2", "allowBlobPublicAccess": False},
        {"enableHttpsTrafficOnly": True, "minimumTlsVersion": "TLS1_0", "allowBlobPublicAccess": False}, {}, "TLS1_0"),
    "azure-storage-cmk": ("azure-native:storage:StorageAccount", {"encryption": {"keySource": "Microsoft.Keyvault"}}, {"encryption": {}}, {}, "Microsoft-managed"),
    "azure-storage-no-shared-key": ("azure-native:storage:StorageAccount", {"allowSharedKeyAccess": False}, {}, {}, "shared-key"),
    "azure-keyvault-protected": ("azure-native:keyvault:Vault", {"properties": {"enablePurgeProtection": True, "enableRbacAuthorization": True}},
        {"properties": {"enableRbacAuthorization": True}}, {}, "purge protection"),
    "azure-nsg-no-open-admin-ingress": ("azure-native:network:NetworkSecurityGroup",
        {"securityRules": [{"name": "https", "direction": "Inbound", "access": "Allow", "sourceAddressPrefix": "*", "destinationPortRange": "443"}]},
        {"securityRules": [{"name": "ssh", "direction": "Inbound", "access": "Allow", "sourceAddressPrefix": "Internet", "destinationPortRange": "22"}]}, {}, "port 22"),
    "k8s-no-privileged-pods": ("kubernetes:apps/v1:Deployment", {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
        {"spec": {"template": {"spec": {"hostNetwork": True, "containers": [{"name": "c"}]}}}}, {}, "hostNetwork"),
    "k8s-gpu-limits": ("kubernetes:core/v1:Pod", POD,
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}}, {}, "without a limit"),
    "k8s-internal-load-balancer": ("kubernetes:core/v1:Service",
        {"spec": {"type": "LoadBalancer"}, "metadata": {"annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}}},
        {"spec": {"type": "LoadBalancer"}, "metadata": {}}, {}, "public address"),
    "k8s-no-nodeport-services": ("kubernetes:core/v1:Service", {"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}},
        {"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}, {}, "NodePort"),
    "k8s-rbac-secrets-read": ("kubernetes:rbac.authorization.k8s.io/v1:Role",
        {"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]},
        {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]}, {}, "reads every Secret"),
    "accelerator-pool-tainted": ("aws:eks/nodeGroup:NodeGroup", EKS_POOL, {**EKS_POOL, "taints": []}, {}, "h100-80gb"),
    "allowed-accelerators": ("aws:eks/nodeGroup:NodeGroup", EKS_POOL, EKS_POOL, None, "not allowed"),
    "gpu-cap-per-pool": ("aws:eks/nodeGroup:NodeGroup", EKS_POOL, {**EKS_POOL, "scalingConfig": {"minSize": 0, "maxSize": 20}},
        {"maxGpusPerPool": 64}, "160 accelerators"),
    "dev-pools-spot-or-scale-to-zero": ("azure-native:containerservice:AgentPool",
        {"vmSize": "Standard_NC24ads_A100_v4", "minCount": 0, "maxCount": 2},
        {"vmSize": "Standard_NC24ads_A100_v4", "minCount": 1, "maxCount": 2, "scaleSetPriority": "Regular"}, {"environment": "dev"}, "on-demand"),
    "stateful-resources-protected": ("aws:kms/key:Key", {}, {}, {"environment": "prod"}, "not protected"),
    "gcs-bucket-versioning": ("gcp:storage/bucket:Bucket", {"versioning": {"enabled": True}}, {"versioning": {"enabled": False}}, {}, "versioning"),
    "azure-blob-versioning": ("azure-native:storage:BlobServiceProperties",
        {"isVersioningEnabled": True, "deleteRetentionPolicy": {"enabled": True}}, {"isVersioningEnabled": True}, {}, "soft delete"),
}


def test_every_resource_rule_has_cases() -> None:
    resource_rules = {name for name, r in RULES.items() if not r.stack}
    assert resource_rules == set(CASES), resource_rules ^ set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compliant_case_passes(name: str) -> None:
    type_, good, _bad, config, _fragment = CASES[name]
    if name == "allowed-accelerators":
        config = {"allowedAccelerators": ["h100-80gb"]}
    assert run_resource(name, type_, good, config, protect=True) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_violating_case_is_reported(name: str) -> None:
    type_, _good, bad, config, fragment = CASES[name]
    if name == "allowed-accelerators":
        config = {"allowedAccelerators": ["l4"]}
    found = run_resource(name, type_, bad, config, protect=False)
    assert found and any(fragment in message for message in found), found


def test_an_eks_cluster_with_the_api_defaults_is_reported_for_both() -> None:
    # Unset, EKS uses the aws-auth ConfigMap and makes its creator an admin.
    found = run_resource("aws-eks-access-entries", "aws:eks/cluster:Cluster", {"name": "c"})
    assert [m.split(":")[0] for m in found] == ["authenticationMode is CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions is true"]


def test_rules_ignore_other_resource_types() -> None:
    assert run_resource("aws-kms-key-rotation", "aws:s3/bucket:Bucket", {"enableKeyRotation": False}) == []


@pytest.mark.parametrize(("name", "type_", "props", "path"), [
    ("aws-eks-private-endpoint", "aws:eks/cluster:Cluster", {"vpcConfig": {"endpointPublicAccess": UNKNOWN}}, "endpointPublicAccess"),
    ("aws-iam-no-wildcard-policy", "aws:iam/rolePolicy:RolePolicy", {"policy": UNKNOWN}, "policy"),
    ("gcp-kms-key-rotation", "gcp:kms/cryptoKey:CryptoKey", {"rotationPeriod": UNKNOWN}, "rotationPeriod"),
    ("gcp-tpu-vm-explicit-service-account", TPU_VM, {"serviceAccount": {"email": UNKNOWN}}, "serviceAccount.email"),
    ("gcp-tpu-vm-no-external-ip", TPU_VM, {"networkConfig": {"enableExternalIps": UNKNOWN}}, "enableExternalIps"),
    ("gcp-tpu-vm-no-external-ip", TPU_QR, queued_resource({**QR_NODE, "networkConfig": {"enableExternalIps": UNKNOWN}}), "enableExternalIps"),
    ("gcp-tpu-vm-no-external-ip", TPU_QR, {"tpu": {"nodeSpecs": UNKNOWN}}, "nodeSpecs"),
])
def test_unknown_values_are_reported_not_passed(name: str, type_: str, props: dict, path: str) -> None:
    # The SDK turns this error into "can't run policy ... during preview: <path> can't be known": never a silent pass.
    assert path in unknown_reported(name, type_, props)


def test_a_known_value_next_to_an_unknown_one_is_still_checked() -> None:
    # kmsKeyId is an unknown output during preview, but its presence is enough: the rule passes.
    assert run_resource("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem",
                        {"deploymentType": "PERSISTENT_2", "kmsKeyId": UNKNOWN}) == []
    assert run_resource("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem", {"deploymentType": "SCRATCH_2"})


def test_a_tpu_vm_without_a_service_account_runs_as_the_default_one() -> None:
    found = run_resource("gcp-tpu-vm-explicit-service-account", TPU_VM, {"acceleratorType": "v5litepod-8"})
    assert found == ["the TPU VM sets no serviceAccount.email, so it runs as the Compute Engine default service account (project Editor)"]


def test_every_queued_resource_is_reported_for_its_default_service_account() -> None:
    # pulumi-gcp 10.2.0's node spec has no serviceAccount: the nodes of any queued resource run as the default account
    found = run_resource("gcp-tpu-vm-explicit-service-account", TPU_QR, queued_resource(QR_NODE))
    assert found == ["queued-resource node qr-0 sets no serviceAccount.email, so it runs as the Compute Engine default service "
                     "account (project Editor)"]
    assert run_resource("gcp-tpu-vm-explicit-service-account", TPU_QR, {"tpu": {"nodeSpecs": []}}) == []


def test_queued_resource_nodes_need_external_ips_explicitly_off() -> None:
    assert run_resource("gcp-tpu-vm-no-external-ip", TPU_QR, queued_resource(QR_NODE)) == []
    opened = run_resource("gcp-tpu-vm-no-external-ip", TPU_QR, queued_resource({**QR_NODE, "networkConfig": {"enableExternalIps": True}}))
    assert opened == ["queued-resource node qr-0 has networkConfig.enableExternalIps True; its workers may get external IPs"]
    unset = run_resource("gcp-tpu-vm-no-external-ip", TPU_QR, queued_resource({"runtimeVersion": "v2-alpha-tpuv6e"}))
    assert unset and "enableExternalIps unset" in unset[0]
    assert run_resource("gcp-tpu-vm-no-external-ip", TPU_VM, {}) == [
        "the TPU VM has networkConfig.enableExternalIps unset; its workers may get external IPs"]


@pytest.mark.parametrize(("type_", "props", "found"), [
    ("aws:s3/bucket:Bucket", {"tags": {"environment": "dev"}}, []),
    ("gcp:container/cluster:Cluster", {"resourceLabels": {"environment": "dev"}}, []),
    ("azure-native:containerservice:ManagedCluster", {"tags": {"environment": "prod"}}, ["a ManagedCluster is not protected"]),
    ("aws:eks/cluster:Cluster", {}, ["a Cluster is not protected"]),
])
def test_the_baseline_config_takes_the_environment_from_the_resources_tag(type_: str, props: dict, found: list[str]) -> None:
    # `environment: unknown` (policies/config/baseline.json, for any project): a resource tagged dev may go unprotected.
    messages = run_resource("stateful-resources-protected", type_, props, {"environment": "unknown"})
    assert [m.split(":")[0] for m in messages] == found


@pytest.mark.parametrize(("encryption", "reported"), [({"enabled": False}, "off"), (None, "off")])
def test_azure_vnet_transit_encryption_off_is_reported(encryption: dict | None, reported: str | None) -> None:
    props = {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}, **({"encryption": encryption} if encryption else {})}
    found = run_resource("azure-vnet-transit-encryption-enforced", "azure-native:network:VirtualNetwork", props)
    assert (reported is None and not found) or (reported is not None and len(found) == 1 and reported in found[0])


@pytest.mark.parametrize("key", ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"])
def test_each_public_access_block_flag_is_required(key: str) -> None:
    props = {**dict.fromkeys(["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"], True), key: False}
    assert run_resource("aws-s3-public-access-block", "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", props) == [
        f"public access block leaves {key} off; all four must be true"]


@pytest.mark.parametrize("props", [{"publicAccessPrevention": "enforced"},
                                   {"uniformBucketLevelAccess": False, "publicAccessPrevention": "enforced"}])
def test_a_bucket_without_uniform_bucket_level_access_is_reported(props: dict) -> None:
    assert run_resource("gcp-storage-bucket-private", "gcp:storage/bucket:Bucket", props) == [
        "uniform bucket-level access is off (object ACLs can make objects public)"]


def test_power_user_access_is_an_admin_attachment() -> None:
    power = "arn:aws:iam::aws:policy/PowerUserAccess"
    assert run_resource("aws-iam-no-admin-attachment", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", {"policyArn": power}) == [
        "attaches PowerUserAccess"]
    assert run_resource("aws-iam-no-admin-attachment", "aws:iam/role:Role",
                        {"assumeRolePolicy": "{}", "managedPolicyArns": ["arn:aws:iam::aws:policy/ReadOnlyAccess", power]}) == [
        "attaches PowerUserAccess"]


EKS_PUBLIC = "the EKS API endpoint is public to the whole internet (publicAccessCidrs includes 0.0.0.0/0 or is unset)"


@pytest.mark.parametrize(("props", "expected"), [
    ({}, [EKS_PUBLIC]),  # EKS's default: a public endpoint open to 0.0.0.0/0
    ({"vpcConfig": {"subnetIds": ["s"]}}, [EKS_PUBLIC]),
    ({"vpcConfig": {"subnetIds": ["s"], "publicAccessCidrs": ["203.0.113.0/24"]}}, []),
])
def test_an_eks_endpoint_left_unset_is_public(props: dict, expected: list) -> None:
    assert run_resource("aws-eks-private-endpoint", "aws:eks/cluster:Cluster", props) == expected


# --- From a mutation review: the clauses the cases above leave free ---

def test_each_eks_control_plane_log_type_is_required() -> None:
    for missing in ("api", "audit", "authenticator"):
        kept = [t for t in ("api", "audit", "authenticator") if t != missing]
        assert run_resource("aws-eks-control-plane-logs", "aws:eks/cluster:Cluster",
                            {"enabledClusterLogTypes": kept}) == [f"control-plane logs {missing} are off"]


def test_an_fsx_file_system_without_a_deployment_type_is_scratch_1() -> None:
    # The FSx API's default deployment type is SCRATCH_1, which takes no customer-managed key even with kmsKeyId set.
    found = run_resource("aws-fsx-lustre-cmk", "aws:fsx/lustreFileSystem:LustreFileSystem", {"kmsKeyId": KEY})
    assert found == ["SCRATCH_1 cannot use a customer-managed key (AWS-owned keys only); keep regulated data off it"]


def test_a_gcp_subnet_without_private_google_access_is_reported() -> None:
    found = run_resource("gcp-subnet-flow-logs", "gcp:compute/subnetwork:Subnetwork",
                         {"logConfig": {"aggregationInterval": "INTERVAL_5_SEC"}})
    assert found == ["Private Google Access is off: nodes need NAT to reach Google APIs"]


@pytest.mark.parametrize(("node_config", "reported"), [
    ({"spot": True}, False), ({"preemptible": True}, False), ({}, True)], ids=["spot", "preemptible", "on-demand"])
def test_a_dev_gke_pool_kept_running_may_be_spot_or_preemptible(node_config: dict, reported: bool) -> None:
    # Preemptible VMs are GKE's older spot: a dev pool of them that keeps a node running is no on-demand cost.
    pool = {"location": "us-central1-a", "initialNodeCount": 1, "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2},
            "nodeConfig": {"machineType": "g2-standard-8", "guestAccelerators": [{"type": "nvidia-l4", "count": 1}],
                           **node_config}}
    found = run_resource("dev-pools-spot-or-scale-to-zero", "gcp:container/nodePool:NodePool", pool, {"environment": "dev"})
    assert bool(found) is reported and all("on-demand" in m for m in found), found


@pytest.mark.parametrize(("statement", "found"), [
    ({"Action": "*:*", "Resource": "arn:aws:s3:::b"}, ["a statement allows every action (Action: *)"]),
    ({"Action": "s3:*", "NotResource": "arn:aws:s3:::secret/*"}, ["a statement allows s3:* on every resource"]),
    ({"Action": "s3:*", "NotResource": "*"}, []),  # allows no resource at all
    ({"NotAction": "iam:*", "NotResource": "*"}, []),
], ids=["star-colon-star", "not-resource-one", "not-resource-star", "not-action-not-resource-star"])
def test_wildcard_actions_and_not_resource(statement: dict, found: list[str]) -> None:
    policy = json.dumps({"Statement": [{"Effect": "Allow", **statement}]})
    assert run_resource("aws-iam-no-wildcard-policy", "aws:iam/rolePolicy:RolePolicy", {"policy": policy}) == found
