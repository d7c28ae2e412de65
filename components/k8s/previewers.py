"""What the pull-request preview identities may read in a cluster, so `pulumi preview --refresh` can read every object
of the Kubernetes layer, and no more.

A refresh GETs every object of the stack, and for a few kinds its read awaiter lists related objects in the object's
namespace (pulumi-kubernetes provider/pkg/await: a Deployment's ReplicaSets, Pods and PersistentVolumeClaims; a
StatefulSet's, DaemonSet's or Job's Pods; a Service's Endpoints; an Ingress's Endpoints and Services). No awaiter reads a
subresource (pods/log, pods/exec): so the ClusterRole `ai-infra-previewer` gets get/list/watch on exactly the kinds the
layer registers plus those awaiter kinds, never a subresource, and never Secrets. Not Kubernetes `view`, which also
reads pods/log, every ConfigMap and every other kind `view` aggregates: a previewer runs unreviewed pull-request code,
and pod logs can hold inference requests.

pulumi-kubernetes reads a `helm.sh/v3` Release through Helm's storage driver (`secret` by default): it lists the Secrets
`sh.helm.release.v1.<release>.v<N>` in the release's namespace. RBAC can't narrow `list` by label or name, so the
previewers read every Secret of the Helm release namespaces (and only there): in `monitoring` that includes the
Alertmanager configuration of `addons.alerts.alertmanager_secret` (receiver credentials), in `kube-system` every Secret
kept there.

`LayerRecord` is a `transformations` callback on the layer's components of one cluster, which their children inherit:
it sees every object the layer registers, synchronously, so the kinds and the release namespaces granted here follow
the code (a new kind, a chart in a new namespace) without a list to keep in step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .objects import MANAGED_BY, child_opts

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
OWN_TYPES = tuple(f"kubernetes:rbac.authorization.k8s.io/v1:{kind}"
                  for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"))
"""The kinds this component creates itself."""
READ = ["get", "list", "watch"]
HELM_STORAGE_VERBS = ["get", "list"]
"""Helm's secret driver: Get of a release lists its Secrets by label, then reads them."""
ROLE_NAME = "ai-infra-previewer"
HELM_ROLE_NAME = "ai-infra-previewer-helm"
EKS_GROUP = "ai-infra-previewers"
"""The Kubernetes group of the previewers' EKS access entries (components/aws/cluster.py). EKS refuses group names
starting with system:, eks:, aws:, amazon: or iam: (CreateAccessEntry, kubernetesGroups)."""

SECRETS = ("", "secrets")
"""Never in the ClusterRole: the previewers read Secrets only in the Helm release namespaces (the namespaced Roles)."""
# What each kind's read awaiter lists besides the object itself, as (API group, resource) (pulumi-kubernetes
# provider/pkg/await, awaiters.go `awaitRead`: deployment.go Read lists replicasets, pods and persistentvolumeclaims;
# statefulset.go, daemonset.go and job.go list pods; service.go lists endpoints; ingress.go endpoints and services).
# Other kinds have no read awaiter: a GET only. The awaiters log a failed List and go on with an empty one, so a
# missing grant here shows as an object the refresh finds not ready, not as Forbidden.
AWAITED = {
    ("apps", "deployments"): (("apps", "replicasets"), ("", "pods"), ("", "persistentvolumeclaims")),
    ("apps", "statefulsets"): (("", "pods"),),
    ("apps", "daemonsets"): (("", "pods"),),
    ("batch", "jobs"): (("", "pods"),),
    ("", "services"): (("", "endpoints"),),
    ("networking.k8s.io", "ingresses"): (("", "endpoints"), ("", "services")),
}

# Kinds whose resource name is not the regular plural (the CRD's spec.names.plural).
_IRREGULAR_PLURALS = {"ClusterRules": "clusterrules", "Rules": "rules", "GlobalRules": "globalrules"}


def resource_of(type_token: str) -> tuple[str, str]:
    """(API group, resource) of a pulumi-kubernetes type token, `kubernetes:<group>/<version>:<Kind>` (core: `core/v1`)."""
    _, api_version, kind = type_token.split(":")
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return ("" if group == "core" else group), plural(kind)


def plural(kind: str) -> str:
    """The resource name of a kind, as the API server derives it (lower case; -y after a consonant: -ies; -s, -x, -ch,
    -sh: -es)."""
    if kind in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[kind]
    lower = kind.lower()
    if re.search(r"[^aeiou]y$", lower):
        return lower[:-1] + "ies"
    if re.search(r"(s|x|ch|sh)$", lower):
        return lower + "es"
    return lower + "s"


def read_rules(types: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(API group, resources) a refresh of objects of `types` reads, by group: each kind, and what its read awaiter lists
    (AWAITED). Releases are read through Helm's storage instead (the namespaces' Roles); Secrets never cluster-wide."""
    by_group: dict[str, set[str]] = {}
    for token in types:
        if not token.startswith("kubernetes:") or token == RELEASE_TYPE:
            continue
        kind = resource_of(token)
        for group, resource in (kind, *AWAITED.get(kind, ())):
            if (group, resource) != SECRETS:
                by_group.setdefault(group, set()).add(resource)
    return [(group, sorted(resources)) for group, resources in sorted(by_group.items())]


def _value(obj: object, key: str) -> object:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


@dataclass
class LayerRecord:
    """What the layer registers on one cluster: its kinds, and per Helm release namespace what must exist before a
    Role can be created there (the layer's Namespace object, or the Release that creates the namespace)."""

    types: set[str] = field(default_factory=set)
    release_namespaces: dict[str, list[pulumi.Resource]] = field(default_factory=dict)
    namespaces: dict[str, pulumi.Resource] = field(default_factory=dict)

    def __call__(self, args: pulumi.ResourceTransformationArgs) -> None:
        self.types.add(args.type_)
        if args.type_ == NAMESPACE_TYPE and isinstance(name := _value(_value(args.props, "metadata"), "name"), str):
            self.namespaces[name] = args.resource
        elif args.type_ == RELEASE_TYPE:
            namespace = _value(args.props, "namespace")
            if not isinstance(namespace, str):
                raise pulumi.RunError(f"Helm release {args.name}: its namespace must be a plain string, so the preview "
                                      "identities' Role there is known while planning")
            creators = self.release_namespaces.setdefault(namespace, [])
            if _value(args.props, "create_namespace"):
                creators.append(args.resource)
        return None

    def dependencies(self, namespace: str) -> list[pulumi.Resource]:
        """What a Role in `namespace` waits for: the layer's Namespace object there, or the Releases that create it
        (none for a namespace the cluster comes with, such as kube-system)."""
        if namespace in self.namespaces:
            return [self.namespaces[namespace]]
        return list(self.release_namespaces.get(namespace, []))


@dataclass(frozen=True)
class PreviewersArgs:
    subjects: Sequence[k8s.rbac.v1.SubjectArgs]
    """The preview identities as the cluster's authenticator names them (`subjects` below)."""
    record: LayerRecord
    """What the layer registered on the cluster (complete once its components are built)."""
    cluster: pulumi.Resource


def subjects(kind: str, names: Sequence[str]) -> list[k8s.rbac.v1.SubjectArgs]:
    """RBAC subjects (`User` or `Group`) by name."""
    return [k8s.rbac.v1.SubjectArgs(api_group="rbac.authorization.k8s.io", kind=kind, name=n) for n in names]


class Previewers(pulumi.ComponentResource):
    """`ai-infra:kubernetes:Previewers`. Children: `<name>-previewer` (ClusterRole: get/list/watch on the layer's kinds
    and what their read awaiters list, and its ClusterRoleBinding), and per Helm release namespace
    `<name>-previewer-helm-<namespace>` (Role: get/list on secrets, every Secret of the namespace, and its RoleBinding)."""

    TYPE = "ai-infra:kubernetes:Previewers"

    def __init__(self, name: str, args: PreviewersArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        record, cluster, who = args.record, args.cluster, list(args.subjects)
        meta = lambda n, ns=None: k8s.meta.v1.ObjectMetaArgs(name=n, namespace=ns, labels=MANAGED_BY)  # noqa: E731
        ref = lambda kind, n: k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind=kind, name=n)  # noqa: E731
        self.rules = read_rules(sorted(record.types | set(OWN_TYPES)))  # the refresh reads these objects too
        role = k8s.rbac.v1.ClusterRole(f"{name}-previewer", metadata=meta(ROLE_NAME), rules=[
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[group], resources=resources, verbs=READ)
            for group, resources in self.rules], opts=child_opts(self, cluster))
        k8s.rbac.v1.ClusterRoleBinding(f"{name}-previewer", metadata=meta(ROLE_NAME), role_ref=ref("ClusterRole", ROLE_NAME),
                                       subjects=who, opts=child_opts(self, cluster, [role]))
        self.helm_namespaces = sorted(record.release_namespaces)
        for namespace in self.helm_namespaces:
            ready = record.dependencies(namespace)
            helm = k8s.rbac.v1.Role(f"{name}-previewer-helm-{namespace}", metadata=meta(HELM_ROLE_NAME, namespace), rules=[
                k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["secrets"], verbs=HELM_STORAGE_VERBS)],
                opts=child_opts(self, cluster, ready))
            k8s.rbac.v1.RoleBinding(f"{name}-previewer-helm-{namespace}", metadata=meta(HELM_ROLE_NAME, namespace),
                                    role_ref=ref("Role", HELM_ROLE_NAME), subjects=who,
                                    opts=child_opts(self, cluster, [*ready, helm]))
        self.outputs = {"helm_namespaces": self.helm_namespaces,
                        "kinds": [f"{g or 'core'}/{r}" for g, rs in self.rules for r in rs]}
        self.register_outputs(self.outputs)
