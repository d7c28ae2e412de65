"""Where and how a GCP component places its resources: project, region, labels, protection.

Labels: the environment's one `gcp.Provider` carries the platform labels as `default_labels`, which the
provider merges into the `labels` of every resource that has them. Components add labels only where
default labels do not reach (GCE VMs of GKE node pools take `node_config.resource_labels`) or where a
resource carries more than the platform set (a bucket's data class and residency zone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

# Google-managed service agents (cloud.google.com/iam/docs/service-agents), by the domain after
# `service-<project number>@`.
GKE_AGENT = "container-engine-robot.iam.gserviceaccount.com"
COMPUTE_AGENT = "compute-system.iam.gserviceaccount.com"
LUSTRE_AGENT = "gcp-sa-lustre.iam.gserviceaccount.com"
"""Created on demand: the Project component generates it (ServiceIdentity) before anything grants it access."""
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
"""Node and TPU VM OAuth scope: access is decided by IAM roles on the service account, not by scopes."""


@dataclass(frozen=True)
class GcpContext:
    """Shared placement of one environment's resources in one GCP region."""

    environment: str
    region: str
    project: str
    project_number: pulumi.Input[str]
    """Project number (service agent e-mails and Workload Identity principals are built from it)."""
    labels: Mapping[str, str]
    """The platform label set (`Platform.tags()`); the provider's default labels, repeated where they don't reach."""
    protected: bool
    """Protect stateful resources (`protect` + `retain_on_delete`): every environment except dev, unless overridden."""

    def stateful(self, parent: pulumi.Resource, **extra: object) -> pulumi.ResourceOptions:
        """Options for data-holding resources: protected and kept on delete outside dev."""
        return pulumi.ResourceOptions(parent=parent, protect=self.protected, retain_on_delete=self.protected, **extra)

    def service_agent(self, domain: str) -> pulumi.Output[str]:
        """IAM member of a Google service agent of this project, e.g. GKE's `container-engine-robot`."""
        return pulumi.Output.concat("serviceAccount:service-", self.project_number, "@", domain)

    def workload_principal(self, namespace: str, service_account: str) -> pulumi.Output[str]:
        """IAM principal of a Kubernetes service account through Workload Identity Federation for GKE: any cluster
        of the project, no Google service account in between."""
        return pulumi.Output.concat(
            "principal://iam.googleapis.com/projects/", self.project_number, "/locations/global/workloadIdentityPools/",
            self.project, ".svc.id.goog/subject/ns/", namespace, "/sa/", service_account)


def account_email(account: gcp.serviceaccount.Account) -> pulumi.Output[str]:
    """The e-mail GCP gives a user-managed service account, `<account id>@<project>.iam.gserviceaccount.com`;
    built from the inputs, so a preview shows it (and depends on the account)."""
    return pulumi.Output.all(account.account_id, account.project).apply(lambda v: f"{v[0]}@{v[1]}.iam.gserviceaccount.com")
