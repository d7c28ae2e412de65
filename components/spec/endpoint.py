"""Inference endpoints: per-region services and the cloud's global load balancer in front of them."""

from __future__ import annotations

import enum
import re
from typing import Annotated

from pydantic import Field, model_validator

from .common import FieldError, SpecModel

# Kubernetes object names: a namespace is a DNS-1123 label, a Service name a DNS-1035 label (starts with a letter).
NamespaceName = Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
ServiceName = Annotated[str, Field(pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)]

# Kubernetes label syntax (kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set):
# a name of at most 63 alphanumerics, '-', '_' and '.', starting and ending alphanumeric, with an optional DNS
# subdomain prefix (at most 253 characters) and '/'; values are such a name, or empty.
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
POD_LABEL_RULE = ("keys are an optional DNS subdomain prefix (at most 253 characters) and '/', then a name of 1 to 63 "
                  "letters, digits, '-', '_' and '.' starting and ending with a letter or digit; values are such a name")


def pod_label_problem(key: str, value: str) -> str | None:
    """Why `key: value` is not a valid (non-empty) Kubernetes label; None when it is."""
    prefix, _, name = key.rpartition("/")
    if not _LABEL_NAME.fullmatch(name) or (prefix and (len(prefix) > 253 or not _LABEL_PREFIX.fullmatch(prefix))):
        return f"label key '{key}' is not a Kubernetes label key"
    if not _LABEL_NAME.fullmatch(value):
        return f"label value '{value}' (of '{key}') is not a non-empty Kubernetes label value"
    return None


class InferenceSpec(SpecModel):
    """An inference service in one region, exposed through a regional load balancer."""

    port: Annotated[int, Field(ge=1, le=65535)] = 8080
    """Port the service listens on behind the load balancer. Default 8080."""
    health_check_path: Annotated[str, Field(pattern=r"^/[A-Za-z0-9._~/-]*$")] = "/healthz"
    """HTTP path probed by the load balancer and global endpoint. Default /healthz."""
    certificate: str | None = None
    """TLS certificate for the regional listener: an ACM certificate ARN on AWS. Required on AWS."""
    traffic_percent: Annotated[int, Field(ge=0, le=100)] = 100
    """Share of this region's traffic to accept (AWS traffic dial, Azure origin weight). Default 100."""
    service_namespace: NamespaceName = "inference"
    """Namespace of the Kubernetes Service that serves the region's inference traffic. The Kubernetes layer creates
    the namespace (unless a team of that name owns it), the Service, which the region's load balancer reaches
    (AWS: a TargetGroupBinding; GCP: standalone NEGs that autoneg adds to the global backend; Azure: an internal load
    balancer and its Private Link service), and a NetworkPolicy admitting the load balancer on `port`. Default
    `inference`."""
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
        if self.service_namespace.startswith("kube-"):
            raise FieldError("service_namespace", f"service_namespace '{self.service_namespace}' is a Kubernetes system "
                             "namespace (kube-*); put the inference Service in a namespace of its own")
        if self.pod_selector is not None:
            if not self.pod_selector:
                raise FieldError("pod_selector", "pod_selector is empty: a Service without a selector gets no endpoints; "
                                 "leave it out for the default, or give at least one label")
            for key, value in self.pod_selector.items():
                problem = pod_label_problem(key, value)
                if problem is not None:
                    raise FieldError("pod_selector", f"pod_selector: {problem}; {POD_LABEL_RULE}")
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
    """Public host name (e.g. infer.example.com). Required for managed certificates and `latency_dns`."""
    certificate: str | None = None
    """Certificate for the global listener: a GCP certificate resource name, an Azure Key Vault secret ID.
    Default: a cloud-managed certificate for `domain`."""
    routing: GlobalRouting = GlobalRouting.ANYCAST
    """Default `anycast`."""
    hosted_zone_id: str | None = None
    """AWS Route 53 hosted zone for `latency_dns`."""
    waf: bool = True
    """Attach a WAF policy (Cloud Armor, Front Door WAF in prevention mode; AWS WAF on the regional ALBs). Default on."""
    azure_tier: AzureFrontDoorTier = AzureFrontDoorTier.PREMIUM
    """Azure only: Front Door tier. Default premium (managed WAF rule sets need it)."""
