"""GCP rules: GKE clusters and node pools, Cloud TPU VMs and queued resources, Compute Engine VMs and Workbench
instances, Cloud Storage, IAM grants, KMS. The network rules (subnets, firewalls, SSL policies) are in gcp_network.py.

CIS IDs: CIS Google Cloud Platform Foundation Benchmark ("GCP x.y") and CIS Google Kubernetes Engine (GKE) Benchmark
v1.7.0 ("GKE x.y.z")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .aws import ENC, EXPOSURE, PRIVILEGE
from .common import OPEN_CIDRS
from .props import as_json, get, items, named_entries, need
from .registry import Context, rule
from .tpu import TPU_QUEUED, TPU_VM, tpu_nodes

GKE = ("gcp:container/cluster:Cluster",)
POOLS = ("gcp:container/nodePool:NodePool",)
BUCKET = ("gcp:storage/bucket:Bucket",)
TPU_RESOURCES = (TPU_VM, TPU_QUEUED)
GCE_VMS = ("gcp:compute/instance:Instance", "gcp:compute/instanceTemplate:InstanceTemplate",
           "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
           # networkInterfaces set here replace the template's or machine image's, so an override can add an external IP
           "gcp:compute/instanceFromTemplate:InstanceFromTemplate",
           "gcp:compute/instanceFromMachineImage:InstanceFromMachineImage")
WORKBENCH = "gcp:workbench/instance:Instance"
DEFAULT_COMPUTE_SA = "-compute@developer.gserviceaccount.com"
"""Suffix of the Compute Engine default service account (`<project-number>-compute@...`), Editor on the project."""
_NINETY_DAYS_S = 90 * 24 * 3600


def _autopilot(props: Any, ctx: Context) -> bool:
    """Whether the resource is an Autopilot cluster: GKE manages its nodes, so it has no default pool to check."""
    return ctx.type in GKE and need(props, "enableAutopilot") is True


def _pools(props: Any, ctx: Context) -> list[tuple[str, Any]]:
    """(label for messages, pool props) of a node pool, or of each pool a cluster declares inline (`nodePools[]`)."""
    return [("", props)] if ctx.type in POOLS else named_entries(props, "nodePools", "node pool")


def _node_configs(props: Any, ctx: Context) -> Iterator[tuple[str, Any]]:
    """(label, nodeConfig or None) of each pool: a node pool's, each inline pool's, and a cluster's default pool's.
    The default pool exists when the cluster declares no inline pools; it is checked when the cluster configures it
    (`nodeConfig`) or keeps it (`removeDefaultNodePool` not set), since GKE creates it either way. An Autopilot
    cluster has none: GKE provisions its nodes (see `_autopilot`)."""
    pools = _pools(props, ctx)
    for label, pool in pools:
        yield label, get(pool, "nodeConfig")
    if ctx.type in GKE and not pools and not _autopilot(props, ctx):
        node_config = get(props, "nodeConfig")
        if node_config is not None or need(props, "removeDefaultNodePool") is not True:
            yield "default node pool: ", node_config


def _auto_provisioning(props: Any, ctx: Context) -> tuple[str, Any] | None:
    """(label, clusterAutoscaling.autoProvisioningDefaults) of a cluster whose node pools GKE creates itself: an
    Autopilot cluster, or a Standard one with node auto-provisioning on (`clusterAutoscaling.enabled`). Those pools
    take their service account and Shielded VM options from these defaults ("used by the node VMs created by GKE
    Autopilot or NAP", pulumi-gcp 10.2.0)."""
    if ctx.type not in GKE:
        return None
    if _autopilot(props, ctx):
        label = "Autopilot nodes (clusterAutoscaling.autoProvisioningDefaults): "
    elif need(props, "clusterAutoscaling.enabled") is True:
        label = "auto-provisioned node pools (clusterAutoscaling.autoProvisioningDefaults): "
    else:
        return None
    return label, get(props, "clusterAutoscaling.autoProvisioningDefaults") or {}


@rule("gcp-gke-private-cluster", "Checks whether GKE nodes are private and the control plane is private or allowlisted.",
      severity="critical", types=GKE + POOLS, remediation="Set privateClusterConfig.enablePrivateNodes and enablePrivateEndpoint, or masterAuthorizedNetworksConfig without 0.0.0.0/0; leave node pools' networkConfig.enablePrivateNodes unset or true.",
      # GKE 5.6.5 private nodes; 5.6.3 control plane authorized networks. Not 5.6.4 (private endpoint enabled and
      # public access disabled): a public endpoint with an allowlist passes here.
      frameworks={**EXPOSURE, "CIS": ("GKE 5.6.5", "GKE 5.6.3")})
def gke_private(props: Any, ctx: Context) -> Iterator[str]:
    # A pool's networkConfig.enablePrivateNodes overrides the cluster's: false gives that pool's nodes public IPs.
    for label, pool in _pools(props, ctx):
        if need(pool, "networkConfig.enablePrivateNodes") is False:
            yield f"{label}nodes have public IPs (networkConfig.enablePrivateNodes is false)"
    if ctx.type in POOLS:
        return
    if need(props, "privateClusterConfig.enablePrivateNodes") is not True:
        yield "nodes have public IPs (privateClusterConfig.enablePrivateNodes is not true)"
    # With IP endpoints off (controlPlaneEndpointsConfig.ipEndpointsConfig.enabled false), the control plane is
    # reachable only through its DNS endpoint, which IAM gates, so there is no IP endpoint to allowlist.
    if (need(props, "privateClusterConfig.enablePrivateEndpoint") is True
            or need(props, "controlPlaneEndpointsConfig.ipEndpointsConfig.enabled") is False):
        return
    blocks = [get(b, "cidrBlock") for b in items(props, "masterAuthorizedNetworksConfig.cidrBlocks")]
    if not blocks or set(blocks) & OPEN_CIDRS:
        yield "the control plane endpoint is public without an authorized-networks allowlist"
    # Google Cloud's public ranges hold any customer's VMs and Cloud Run services: an allowlist open to them is not one.
    if need(props, "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled") is True:
        yield ("the public control plane endpoint admits every Google Cloud public IP "
               "(masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is true)")


@rule("gcp-gke-secrets-encryption", "Checks whether GKE encrypts Kubernetes secrets with a Cloud KMS key.",
      severity="high", types=GKE, remediation="Set databaseEncryption {state: ENCRYPTED, keyName}.",
      frameworks={**ENC, "CIS": ("GKE 5.3.1",)})
def gke_secrets(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "databaseEncryption.state") != "ENCRYPTED":
        yield "application-layer secrets encryption is off"


@rule("gcp-gke-workload-identity", "Checks whether GKE uses Workload Identity instead of node credentials.",
      severity="high", types=GKE + POOLS, remediation="Set workloadIdentityConfig.workloadPool and nodeConfig.workloadMetadataConfig.mode GKE_METADATA.",
      # GKE 5.2.2 dedicated service accounts and Workload Identity; 5.4.1 GKE Metadata Server (5.4.2 before v1.6).
      frameworks={**PRIVILEGE, "CIS": ("GKE 5.2.2", "GKE 5.4.1")})
def gke_workload_identity(props: Any, ctx: Context) -> Iterator[str]:
    # "In Autopilot, Workload Identity Federation for GKE is always enabled"
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
    if ctx.type in GKE and not _autopilot(props, ctx) and not need(props, "workloadIdentityConfig.workloadPool"):
        yield "Workload Identity is off: pods use the node's service account"
    for label, node_config in _node_configs(props, ctx):
        # Only an explicit GCE_METADATA opts a pool out: a pool that sets no mode in a cluster with Workload Identity
        # gets GKE_METADATA ("new node pools in the cluster use Workload Identity Federation for GKE", same page), and
        # in a cluster without it the cluster itself is reported above.
        if need(node_config or {}, "workloadMetadataConfig.mode") == "GCE_METADATA":
            yield f"{label}nodes expose the GCE metadata server to pods (workloadMetadataConfig.mode GCE_METADATA)"


@rule("gcp-gke-node-service-account", "Checks whether GKE nodes run as a dedicated service account, not the default compute one.",
      severity="high", types=GKE + POOLS,
      remediation="Set nodeConfig.serviceAccount (and clusterAutoscaling.autoProvisioningDefaults.serviceAccount with "
                  "Autopilot or node auto-provisioning) to a least-privilege service account.",
      frameworks={**PRIVILEGE, "CIS": ("GKE 5.2.1",)})
def gke_node_sa(props: Any, ctx: Context) -> Iterator[str]:
    accounts = [(label, need(node_config or {}, "serviceAccount", "default")) for label, node_config in _node_configs(props, ctx)]
    if auto := _auto_provisioning(props, ctx):  # GKE-created pools run as this default, the compute one unless set
        accounts.append((auto[0], need(auto[1], "serviceAccount", "default")))
    for label, account in accounts:
        if account == "default" or str(account).endswith(DEFAULT_COMPUTE_SA):
            yield f"{label}nodes use the default compute service account (project Editor)"


def _tpu_nodes(props: Any, ctx: Context) -> Iterator[tuple[str, Any]]:
    """(label, node) of a TPU VM, or of each node spec of a queued resource (wire form `tpu.nodeSpecs[].node`)."""
    for node_id, node in tpu_nodes(ctx.type, props):
        yield ("the TPU VM" if node_id is None else f"queued-resource node {node_id}"), node


@rule("gcp-tpu-vm-explicit-service-account",
      "Checks whether Cloud TPU VMs run as a dedicated service account, not the Compute Engine default one.",
      severity="high", types=TPU_RESOURCES,
      remediation="Set serviceAccount.email of the tpu.V2Vm to a least-privilege service account. A queued resource's node "
                  "spec takes no service account in pulumi-gcp 10.2.0, so its TPU VMs always run as the default one: create the "
                  "slice as a tpu.V2Vm (ai-infra: `mode: tpu_vm`) or accept this rule's finding explicitly.",
      frameworks={**PRIVILEGE, "CIS": ("GCP 4.1",)})
def tpu_vm_service_account(props: Any, ctx: Context) -> Iterator[str]:
    for label, node in _tpu_nodes(props, ctx):
        email = need(node, "serviceAccount.email")
        if not email:
            yield f"{label} sets no serviceAccount.email, so it runs as the Compute Engine default service account (project Editor)"
        elif str(email).endswith(DEFAULT_COMPUTE_SA):
            yield f"{label} runs as the Compute Engine default service account {email} (project Editor)"


@rule("gcp-tpu-vm-no-external-ip", "Checks whether Cloud TPU VMs and queued-resource nodes have external IP addresses turned off.",
      severity="high", types=TPU_RESOURCES,
      remediation="Set networkConfig.enableExternalIps false (tpu.V2Vm) or tpu.nodeSpecs[].node.networkConfig.enableExternalIps "
                  "false (tpu.V2QueuedResource) on a subnetwork with Private Google Access.",
      frameworks={**EXPOSURE, "CIS": ("GCP 4.9",)})
def tpu_vm_no_external_ip(props: Any, ctx: Context) -> Iterator[str]:
    for label, node in _tpu_nodes(props, ctx):
        # A V2Vm takes one networkConfig or several networkConfigs (one per NIC); each may give workers external IPs.
        paths = ["networkConfig"] if need(node, "networkConfig") is not None or not get(node, "networkConfigs") else []
        paths += [f"networkConfigs.{index}" for index, _ in enumerate(items(node, "networkConfigs"))]
        for path in paths:
            # Only an explicit false is safe: gcloud, for one, gives TPU workers external IPs unless told otherwise.
            value = need(node, f"{path}.enableExternalIps")
            if value is not False:
                yield f"{label} has {path}.enableExternalIps {value if value is not None else 'unset'}; its workers may get external IPs"


@rule("gcp-compute-no-public-ip",
      "Checks whether Compute Engine instances, instance templates and Workbench instances have no external IP addresses.",
      severity="high", types=GCE_VMS + (WORKBENCH,),
      remediation="Remove accessConfigs and ipv6AccessConfigs from networkInterfaces (Workbench: set gceSetup.disablePublicIp "
                  "true); reach the VM through IAP TCP forwarding or a bastion, and give it egress through Cloud NAT and "
                  "Private Google Access.",
      frameworks={**EXPOSURE, "CIS": ("GCP 4.9",)})
def compute_no_public_ip(props: Any, ctx: Context) -> Iterator[str]:
    if ctx.type == WORKBENCH:
        # A Workbench VM gets an ephemeral external IP "if no accessConfigs specified" unless disablePublicIp is true.
        value = need(props, "gceSetup.disablePublicIp")
        if value is not True:
            yield (f"gceSetup.disablePublicIp is {'unset' if value is None else value}, so the Workbench instance gets "
                   "an external IP address; set it true")
        return
    for index, nic in enumerate(items(props, "networkInterfaces")):
        # Any access config is an external address, even an empty one (the API then picks an ephemeral IP).
        if list(items(nic, "accessConfigs")):
            yield f"network interface {index} has accessConfigs, so the VM gets an external IPv4 address"
        if list(items(nic, "ipv6AccessConfigs")):
            yield f"network interface {index} has ipv6AccessConfigs, so the VM gets an external IPv6 address"


@rule("gcp-gke-shielded-nodes", "Checks whether GKE nodes use Shielded VM secure boot and integrity monitoring.",
      severity="medium", types=GKE + POOLS,
      remediation="Set nodeConfig.shieldedInstanceConfig (and clusterAutoscaling.autoProvisioningDefaults.shieldedInstanceConfig "
                  "with node auto-provisioning) {enableSecureBoot: true, enableIntegrityMonitoring: true}.",
      frameworks={"SOC2": ("CC7.1",), "NIST-800-53": ("SI-7",), "CIS": ("GKE 5.5.7",)})
def gke_shielded(props: Any, ctx: Context) -> Iterator[str]:
    configs = list(_node_configs(props, ctx))
    # Auto-provisioned pools of a Standard cluster take autoProvisioningDefaults.shieldedInstanceConfig (secure boot
    # "Defaults to `false`"); Autopilot manages its nodes' Shielded VM options itself.
    if (auto := _auto_provisioning(props, ctx)) and not _autopilot(props, ctx):
        configs.append(auto)
    for label, node_config in configs:
        if need(node_config or {}, "shieldedInstanceConfig.enableSecureBoot") is not True:
            yield f"{label}secure boot is off"
        # Unset is on: integrity monitoring "Defaults to true" (pulumi-gcp 10.2.0), unlike secure boot.
        if need(node_config or {}, "shieldedInstanceConfig.enableIntegrityMonitoring", True) is not True:
            yield f"{label}integrity monitoring is off"


@rule("gcp-storage-bucket-private", "Checks whether buckets enforce uniform access and public access prevention.",
      severity="critical", types=BUCKET, remediation="Set uniformBucketLevelAccess true and publicAccessPrevention enforced.",
      frameworks={**EXPOSURE, "GDPR": ("Art.32",), "CIS": ("GCP 5.2",)})
def gcs_private(props: Any, ctx: Context) -> Iterator[str]:
    if need(props, "uniformBucketLevelAccess") is not True:
        yield "uniform bucket-level access is off (object ACLs can make objects public)"
    if need(props, "publicAccessPrevention", "inherited") != "enforced":
        yield "public access prevention is not enforced"


@rule("gcp-storage-bucket-cmek", "Checks whether buckets are encrypted with a Cloud KMS key.",
      severity="high", types=BUCKET, remediation="Set encryption.defaultKmsKeyName.", frameworks=ENC)
def gcs_cmek(props: Any, ctx: Context) -> Iterator[str]:
    if not get(props, "encryption.defaultKmsKeyName"):
        yield "the bucket uses Google-managed keys; set encryption.defaultKmsKeyName"


PUBLIC_PRINCIPALS = ("allUsers", "allAuthenticatedUsers")
CANNED_PUBLIC_ACLS = {"publicRead": ("READER", "allUsers"), "publicReadWrite": ("WRITER", "allUsers"),
                      "authenticatedRead": ("READER", "allAuthenticatedUsers")}
"""Cloud Storage predefined ACLs that grant to everyone (https://cloud.google.com/storage/docs/access-control/lists#predefined-acl)."""
Grants = Iterator[tuple[Any, str]]


def _iam_grants(props: Any) -> Grants:
    """(role, member) of an IAM member (`member`) or binding (`members`) resource that grants to a public principal."""
    members = [need(props, "member")] if get(props, "member") is not None else list(need(props, "members", []) or [])
    for member in members:
        if member in PUBLIC_PRINCIPALS:
            yield need(props, "role"), member


def _policy_grants(props: Any) -> Grants:
    """Public grants of an IAM policy resource: `policyData` is the whole policy as JSON, bindings and all."""
    policy = as_json(need(props, "policyData"), "policyData")
    for binding in (policy.get("bindings") or []) if isinstance(policy, dict) else []:
        for member in binding.get("members") or []:
            if member in PUBLIC_PRINCIPALS:
                yield binding.get("role"), member


def _entity_grants(props: Any) -> Grants:
    """An access control resource: one `entity` given one `role`."""
    if need(props, "entity") in PUBLIC_PRINCIPALS:
        yield need(props, "role"), need(props, "entity")


def _acl_grants(props: Any) -> Grants:
    """An ACL resource: `roleEntities` as ROLE:entity pairs, or a canned ACL (`predefinedAcl`, a bucket's `defaultAcl`
    for new objects)."""
    for pair in items(props, "roleEntities"):
        role, _, entity = str(pair).partition(":")
        if entity in PUBLIC_PRINCIPALS:
            yield role, entity
    for key in ("predefinedAcl", "defaultAcl"):
        canned = need(props, key)
        if canned in CANNED_PUBLIC_ACLS:
            role, entity = CANNED_PUBLIC_ACLS[canned]
            yield f"{role} ({key} {canned})", entity


def _access_grants(entries: Any) -> Grants:
    """BigQuery dataset access entries: each names its grantee by `specialGroup`, `iamMember` or another key."""
    for entry in entries:
        for key in ("specialGroup", "iamMember"):
            if need(entry, key) in PUBLIC_PRINCIPALS:
                yield need(entry, "role"), need(entry, key)


IAM_RESOURCES = tuple(f"gcp:*{iam}{kind}" for kind in ("Member", "Binding", "Policy") for iam in ("Iam", "IAM"))
"""Every pulumi-gcp IAM member, binding and policy resource, by the end of its type token: 474 types in pulumi-gcp
10.2.0 (artifactregistry/repositoryIamMember, secretmanager/secretIamBinding, serviceaccount/iAMMember,
projects/iAMPolicy, ...), all with `member`, `members` or `policyData`. Patterns, so new IAM types are covered too."""
PUBLIC_GRANTS: dict[str, Callable[[Any], Grants]] = {
    "gcp:storage/bucketAccessControl:BucketAccessControl": _entity_grants,
    "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl": _entity_grants,
    "gcp:storage/objectAccessControl:ObjectAccessControl": _entity_grants,
    "gcp:storage/bucketACL:BucketACL": _acl_grants,
    "gcp:storage/defaultObjectACL:DefaultObjectACL": _acl_grants,
    "gcp:storage/objectACL:ObjectACL": _acl_grants,
    "gcp:bigquery/dataset:Dataset": lambda props: _access_grants(items(props, "accesses")),
    "gcp:bigquery/datasetAccess:DatasetAccess": lambda props: _access_grants([props]),
}
"""Access-control types that are not IAM resources -> how to read their grants (type tokens of pulumi-gcp 10.2.0)."""


def _grants(props: Any, type_: str) -> Grants:
    if type_ in PUBLIC_GRANTS:
        return PUBLIC_GRANTS[type_](props)
    # The rest are IAM_RESOURCES: a policy carries its whole policy as JSON, a member or binding its principals.
    return _policy_grants(props) if type_.endswith("Policy") else _iam_grants(props)


@rule("gcp-no-public-iam-members",
      "Checks whether IAM members, bindings and policies, Cloud Storage ACLs and BigQuery dataset access grant nothing to allUsers or allAuthenticatedUsers.",
      severity="critical", types=IAM_RESOURCES + tuple(PUBLIC_GRANTS),
      remediation="Grant roles to named principals only; keep allUsers and allAuthenticatedUsers out of ACL entities "
                  "and dataset access, and use no public canned ACL (publicRead, publicReadWrite, authenticatedRead).",
      frameworks={**EXPOSURE, "CIS": ("GCP 5.1",)})
def public_members(props: Any, ctx: Context) -> Iterator[str]:
    for role, member in _grants(props, ctx.type):
        yield f"grants {role} to {member}"


@rule("gcp-kms-key-rotation", "Checks whether Cloud KMS symmetric encryption keys rotate at least every 90 days.",
      severity="medium", types=("gcp:kms/cryptoKey:CryptoKey",), remediation="Set rotationPeriod to 7776000s or less.",
      frameworks={"PCI-DSS-v4": ("3.7.4",), "NIST-800-53": ("SC-12",), "SOC2": ("CC6.1",), "CIS": ("GCP 1.10",)})
def gcp_kms_rotation(props: Any, ctx: Context) -> Iterator[str]:
    # Cloud KMS rotates only symmetric encryption keys ("does not support automatic rotation of asymmetric keys",
    # https://cloud.google.com/kms/docs/key-rotation); others take no rotationPeriod. Unset purpose is ENCRYPT_DECRYPT.
    if need(props, "purpose", "ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT":
        return
    period = need(props, "rotationPeriod")
    if not period or float(str(period).rstrip("s")) > _NINETY_DAYS_S:
        yield f"rotation period is {period or 'unset'}; rotate at least every 90 days (7776000s)"
