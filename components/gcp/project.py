"""Project-wide prerequisites and access: the Google APIs the platform calls, the Managed Lustre service agent
(it exists only once generated, and must hold the KMS key before an instance can use it), the cluster
admins' IAM role, and Data Access audit logs of Cloud KMS. IAM member bindings live here, once per project: two
resources declaring the same binding would remove it for both when either is deleted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from .naming import member_key

# cloudresourcemanager: project IAM members and custom roles, log sinks and the project lookup call it.
BASE_APIS = ("compute", "container", "cloudkms", "logging", "monitoring", "storage", "iam", "artifactregistry",
             "cloudresourcemanager")
LUSTRE_APIS = ("lustre", "servicenetworking")
TPU_VM_APIS = ("tpu",)
CLUSTER_ADMIN_ROLE = "roles/container.admin"
"""Full Kubernetes API access on the project's clusters through GKE's IAM authorizer (cluster-admin)."""
CLUSTER_VIEWER_ROLE = "roles/container.clusterViewer"
"""container.clusters.get and .list only (cloud.google.com/iam/docs/roles-permissions/container, "Kubernetes Engine
Cluster Viewer"): enough to reach a cluster's API server, no Kubernetes object by IAM; Kubernetes RBAC grants those."""
KMS_SERVICE = "cloudkms.googleapis.com"
# Encrypt and Decrypt (and the other key uses) check a DATA_READ permission, so only DATA_READ Data Access logs
# record them; no Cloud KMS method is DATA_WRITE, and ADMIN_READ covers only metadata reads
# (cloud.google.com/kms/docs/audit-logging, "Methods by permission type"). Data Access logs are off by default.
KMS_AUDIT_LOG_TYPES = ("DATA_READ",)


def required_apis(*, lustre: bool, tpu_vms: bool) -> list[str]:
    """Service names (`<api>.googleapis.com`) the platform needs, base ones first."""
    apis = [*BASE_APIS, *(LUSTRE_APIS if lustre else ()), *(TPU_VM_APIS if tpu_vms else ())]
    return [f"{api}.googleapis.com" for api in apis]


@dataclass(frozen=True)
class ProjectArgs:
    project: str
    apis: Sequence[str]
    """Services to enable; they stay enabled on destroy (other workloads of the project may use them)."""
    enable_apis: bool = True
    """Enable `apis`; off when a project factory owns the API list. Default on."""
    lustre_agent: bool = False
    """Generate the Managed Lustre service agent. Default off."""
    admins: Sequence[str] = ()
    """IAM members (`user:`, `group:`, ...), each once, given cluster-admin on every cluster of the project. Default
    none besides the deployer, who creates the clusters."""
    previewers: Sequence[str] = ()
    """IAM members (`serviceAccount:`, `user:`), each once, of the pull-request preview identities: CLUSTER_VIEWER_ROLE
    on the project; the Kubernetes layer binds their emails (components/k8s/previewers.py). Default none."""


class Project(pulumi.ComponentResource):
    """`ai-infra:gcp:Project`. Children: `<name>-<api>` per API (e.g. `<name>-container`), `<name>-lustre-agent`,
    `<name>-admin-<hash of the member>` per admin, `<name>-previewer-<hash of the member>` per previewer, and `<name>-kms-audit`. Resources that grant the Lustre agent
    access depend on this component.

    `<name>-kms-audit` turns on the DATA_READ Data Access audit logs of Cloud KMS, so every use of the CMEK keys
    (encrypt, decrypt) is logged, as CloudTrail and the Key Vault audit logs do on AWS and Azure. It is authoritative
    for Cloud KMS in the project's IAM policy: it replaces an audit config for `cloudkms.googleapis.com` set there by
    anything else, and removing it turns that service's Data Access logs off. Configs on `allServices` or on the
    folder or organization still add to it (Cloud Audit Logs takes their union)."""

    def __init__(self, name: str, args: ProjectArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:gcp:Project", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        services = [gcp.projects.Service(f"{name}-{api.split('.')[0]}", gcp.projects.ServiceArgs(
            project=args.project, service=api, disable_on_destroy=False, disable_dependent_services=False), opts=child)
            for api in (args.apis if args.enable_apis else ())]
        if args.lustre_agent:
            gcp.projects.ServiceIdentity(f"{name}-lustre-agent", gcp.projects.ServiceIdentityArgs(
                project=args.project, service="lustre.googleapis.com"), opts=pulumi.ResourceOptions(parent=self, depends_on=services))
        # Named by member, not position: under an index name, removing or reordering an admin changes `member`
        # (a replacement), and deleting the old binding can take the role from someone who still holds it.
        # The alias adopts a binding deployed under its index name (pulumi.com/docs/iac/concepts/options/aliases),
        # unchanged as long as the list is unchanged in the first update that names them by member.
        for index, member in enumerate(args.admins):
            gcp.projects.IAMMember(f"{name}-admin-{member_key(member)}", gcp.projects.IAMMemberArgs(
                project=args.project, role=CLUSTER_ADMIN_ROLE, member=member),
                opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name=f"{name}-admin-{index}")]))
        for member in args.previewers:
            gcp.projects.IAMMember(f"{name}-previewer-{member_key(member)}", gcp.projects.IAMMemberArgs(
                project=args.project, role=CLUSTER_VIEWER_ROLE, member=member), opts=child)
        gcp.projects.IAMAuditConfig(f"{name}-kms-audit", gcp.projects.IAMAuditConfigArgs(
            project=args.project, service=KMS_SERVICE,
            audit_log_configs=[gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=t) for t in KMS_AUDIT_LOG_TYPES]),
            opts=child)
        self.register_outputs({"apis": list(args.apis) if args.enable_apis else []})
