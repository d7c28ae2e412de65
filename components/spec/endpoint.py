"""Inference endpoints: per-region services and the cloud's global load balancer in front of them."""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from typing import Annotated

from pydantic import Field, model_validator

from .common import (
    HEALTH_CHECK_PATH_PATTERN, NAMESPACE_PATTERN, RESERVED_NAMESPACES_RULE, SERVICE_NAME_PATTERN, FieldError, Name, SpecModel,
    is_reserved_namespace,
)
from .kube import label_value_problem, qualified_name_problem

# Kubernetes object names: a namespace is a DNS-1123 label, a Service name a DNS-1035 label (starts with a letter).
NamespaceName = Annotated[str, Field(pattern=NAMESPACE_PATTERN, max_length=63)]
ServiceName = Annotated[str, Field(pattern=SERVICE_NAME_PATTERN, max_length=63)]


class InferenceSpec(SpecModel):
    """An inference service in one region, exposed through a regional load balancer."""

    port: Annotated[int, Field(ge=1, le=65535)] = 8080
    """Port the service listens on behind the load balancer. The pods serve plain HTTP on it, except behind Azure Front
    Door Standard (`global_endpoint.azure_tier: standard`), whose hop to the region's public address crosses the
    Internet: there they serve HTTPS themselves, with a certificate for `global_endpoint.domain` from a public
    certificate authority (Front Door checks its name), and refuse requests whose X-Azure-FDID header is not the
    exported `front_door_id`. Keep the server's HTTP keep-alive timeout above the load balancer's idle timeout (AWS
    ALB: 300 s), or reused connections end in 502s; a response that sends nothing for that long is cut (stream
    tokens). Default 8080."""
    health_check_path: Annotated[str, Field(pattern=HEALTH_CHECK_PATH_PATTERN)] = "/healthz"
    """HTTP path probed by the load balancer and global endpoint. Default /healthz."""
    certificate: str | None = None
    """TLS certificate for the regional listener: an ACM certificate ARN on AWS. Required on AWS; a config error on GCP
    and Azure, where TLS ends at the global endpoint (set `global_endpoint.certificate` or `domain` there)."""
    traffic_percent: Annotated[int, Field(ge=0, le=100)] = 100
    """Share of this region's traffic to accept (AWS traffic dial, Azure origin weight). Default 100."""
    service_namespace: NamespaceName = "inference"
    """Namespace of the Kubernetes Service that serves the region's inference traffic. The Kubernetes layer creates
    the namespace (unless a team of that name owns it), the Service, which the region's load balancer reaches
    (AWS: a TargetGroupBinding; GCP: standalone NEGs that autoneg adds to the global backend; Azure: an internal load
    balancer and its Private Link service), and a NetworkPolicy admitting the load balancer on `port`. Not a namespace
    the Kubernetes layer or the clusters' add-ons use (default, gpu-operator, kueue-system, monitoring, ..., kube-*,
    gke-*). Default `inference`."""
    service_name: ServiceName = "inference"
    """Name of that Service, which the Kubernetes layer creates (`addons.enabled`). Default `inference`."""
    pod_selector: dict[str, str] | None = None
    """Labels of the pods the Service sends traffic to, on `port`. Deploy the inference pods with these labels and no
    Service of your own. Default `{app.kubernetes.io/name: <service_name>}`."""

    @property
    def selector(self) -> dict[str, str]:
        """`pod_selector`, or its default."""
        return dict(self.pod_selector) if self.pod_selector else {"app.kubernetes.io/name": self.service_name}

    @model_validator(mode="after")
    def _namespace(self) -> InferenceSpec:
        if is_reserved_namespace(self.service_namespace):
            # The layer would create a Namespace of that name besides the one that exists (or that it creates itself):
            # `pulumi up` fails part-way with AlreadyExists. A team's namespace is different: the Service joins it.
            raise FieldError("service_namespace", f"service_namespace '{self.service_namespace}' is a namespace the "
                             "Kubernetes layer or the cluster's add-ons use, which the layer would create a second time "
                             "(`pulumi up` fails with AlreadyExists); put the inference Service in a namespace of its "
                             f"own, or a team's; not allowed: {RESERVED_NAMESPACES_RULE}")
        if self.pod_selector is not None:
            if not self.pod_selector:
                raise FieldError("pod_selector", "pod_selector is empty: a Service without a selector gets no endpoints; "
                                 "leave it out for the default, or give at least one label")
            for key, value in self.pod_selector.items():
                what = f"pod_selector value of {key!r}"
                problem = qualified_name_problem(key, "pod_selector key") or label_value_problem(value, what)
                if problem is None and not value:
                    problem = f"{what} is empty; select the pods by a label with a value"
                if problem is not None:
                    raise FieldError("pod_selector", problem)
        return self


class GlobalRouting(str, enum.Enum):
    ANYCAST = "anycast"
    """Anycast front door: AWS Global Accelerator, GCP global external ALB, Azure Front Door. Default."""
    LATENCY_DNS = "latency_dns"
    """DNS latency-based routing (AWS Route 53 only)."""


class AzureFrontDoorTier(str, enum.Enum):
    STANDARD = "standard"
    PREMIUM = "premium"


class GlobalEndpointSpec(SpecModel):
    """A multi-region entry point in front of every region of this cloud that declares `inference`."""

    domain: str | None = None
    """Public host name (e.g. infer.example.com). GCP: the managed certificate's name; Azure: Front Door's custom domain;
    AWS: the Route 53 record the endpoint writes in `hosted_zone_id` (an alias to the Global Accelerator, or latency
    records with `latency_dns`). Default none: clients use the exported `global_endpoint.dns_name`."""
    certificate: str | None = None
    """Certificate for the global listener: a GCP certificate resource name, an Azure Key Vault secret ID (a vault
    with Azure RBAC, in the deployment's subscription: Front Door reads only those; the profile's managed identity
    gets Key Vault Secrets User on it). Default: a cloud-managed certificate for `domain`."""
    routing: GlobalRouting = GlobalRouting.ANYCAST
    """Default `anycast`."""
    hosted_zone_id: str | None = None
    """AWS only: the Route 53 hosted zone that gets the `domain` record(s); required with `domain` on AWS. Default
    none (no DNS record)."""
    waf: bool = True
    """Attach a WAF policy (Cloud Armor, Front Door WAF in prevention mode; AWS WAF on the regional ALBs). Off: no WAF
    policy on any cloud, and the policy pack reports each endpoint left without one (`global-endpoint-waf`,
    advisory). Default on."""
    azure_tier: AzureFrontDoorTier = AzureFrontDoorTier.PREMIUM
    """Azure only (refused on AWS and GCP): Front Door tier. Default premium (managed WAF rule sets need it; it reaches each region through
    Private Link, over plain HTTP). Standard reaches each region's public address over HTTPS, so the inference pods
    must serve TLS on `inference.port` with a certificate for `domain` (see `InferenceSpec.port`)."""
    logs_data_zone: Name | None = None
    """Data zone (`compliance.data_zones`) whose region keeps this endpoint's request logs, which hold client IP
    addresses (personal data under GDPR): the first region of this cloud in the zone that has a log store. AWS: its
    log bucket takes the Global Accelerator flow logs (anycast routing only); each serving region's ALB access and WAF
    logs stay in that region (ALB logs only to a bucket of its own Region), so serve EU traffic from regions in the
    zone; the plan warns about a serving region outside it. GCP: a CMEK Cloud Logging bucket there takes the load
    balancer's request logs, which `_Default` then excludes; Azure: its Log Analytics workspace takes Front Door's
    access, health probe and WAF logs. Default: none, the first serving region's log store (GCP: `_Default`)."""


def logs_region(zone_regions: Sequence[str], candidates: Collection[str], regions: Sequence[str]) -> str | None:
    """The region of `regions` (in config order) that keeps a global endpoint's request logs: the first in
    `zone_regions` (the `logs_data_zone`'s regions) that is among `candidates` (those with a log store); None if none."""
    return next((r for r in regions if r in zone_regions and r in candidates), None)
