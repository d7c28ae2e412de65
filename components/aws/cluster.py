"""An EKS cluster: private API endpoint (public only by opt-in, CIDR-restricted), secrets envelope-encrypted with
the region's KMS key, control-plane logs (api, audit, authenticator) in a KMS-encrypted log group, access entries
instead of aws-auth, an OIDC provider for IRSA, the VPC CNI on its own IRSA role, kube-proxy and CoreDNS as EKS
add-ons at the cluster's Kubernetes version, the system node group, and the EBS CSI driver add-on (its controller on its
own IRSA role) that provisions the volumes of the default StorageClass the Kubernetes layer creates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network

import pulumi
import pulumi_aws as aws

from components.k8s.previewers import EKS_GROUP as PREVIEWER_GROUP
from components.spec import ApiAccess, Cloud, ClusterSpec, region_path
from components.spec.aws import EKS_KUBERNETES_VERSION
from components.spec.offerings import kubernetes_version_problem

from .context import AwsContext, render
from .naming import short_hash
from .node_group import LaunchTemplateSettings, NodeGroupSettings, autoscaler_tags, launch_template, node_group, system_ami_type
from .policies import assume_role, ebs_csi_kms, irsa_trust, managed_policy_arn
from .transit import encrypting_in_transit

LOG_TYPES = ("api", "audit", "authenticator")
SYSTEM_INSTANCE_TYPE = "m6i.xlarge"
SYSTEM_DISK_GIB = 100
ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"
# Nodes get only what kubelet and image pulls need; the VPC CNI's ENI permissions go to its own IRSA role.
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
CNI_POLICY = "AmazonEKS_CNI_Policy"
FSX_CSI_ADDON = "aws-fsx-csi-driver"
VPC_CNI_ADDON = "vpc-cni"
# EKS installs self-managed copies of kube-proxy and CoreDNS with a new cluster and never upgrades them ("Update the
# CoreDNS Amazon EKS self-managed add-on", EKS user guide): as EKS add-ons they move with the Kubernetes version.
KUBE_PROXY_ADDON = "kube-proxy"
COREDNS_ADDON = "coredns"
# EKS clusters have no block storage driver of their own (the in-tree EBS provisioner needs it since 1.23).
EBS_CSI_ADDON = "aws-ebs-csi-driver"
EBS_CSI_CONTROLLER = ("kube-system", "ebs-csi-controller-sa")
"""The add-on's controller service account, which its IRSA role trusts (EKS user guide, "Create an Amazon EBS CSI driver
IAM role")."""
# AWS's least-privilege managed policy for the driver (AWS managed policy reference, created 2026-04-16; recommended
# over AmazonEBSCSIDriverPolicy in kubernetes-sigs/aws-ebs-csi-driver#2918): only volumes and snapshots tagged
# ebs.csi.aws.com/cluster=true, which the driver puts on every volume it creates. Nothing here imports volumes.
EBS_CSI_POLICY = "AmazonEBSCSIDriverPolicyV2"
SYSTEM_POOL_LABELS = {"ai-infra/pool": "system"}
# Without a policy EKS takes EXTENDED (UpgradePolicyRequest); explicit, so a STANDARD cluster (auto-upgraded by EKS at
# the end of standard support, outside Pulumi) is a reviewed change. Extended support costs more per cluster hour.
SUPPORT_TYPE = "EXTENDED"


@dataclass(frozen=True)
class ClusterArgs:
    context: AwsContext
    spec: ClusterSpec
    subnet_ids: Sequence[pulumi.Input[str]]
    """Private subnets for the control-plane interfaces and the system nodes."""
    kms_key_arn: pulumi.Input[str]
    service_cidr: IPv4Network
    vpc_cidr: IPv4Network
    """The VPC's range: admitted to the API endpoint on 443, so a deployer inside the VPC reaches a private cluster."""
    log_retention_days: int
    """Days control-plane logs are kept (the network's flow log retention: one audit look-back per region)."""
    fsx_csi: bool = False
    """Install the FSx for Lustre CSI driver add-on (regions with a Lustre file system). Default off."""
    enforce_transit_encryption: bool = False
    """The VPC enforces encryption in transit (`network.transit_encryption: enforce`): the system pool's instance type
    must encrypt in transit, checked at preview (components/aws/transit.py). Default off: any type."""
    deployers: Sequence[str] = ()
    """IAM role or user ARNs deploying (`clouds.aws.deployers`, else the role running the deployment: its session's
    issuer; the spec requires the list with previewers, whose preview runs as the previewer). They get cluster-admin
    like `spec.admins`, so the Kubernetes layer can install into the cluster. Default: admins only."""
    previewers: Sequence[str] = ()
    """IAM role ARNs of the preview identities (`clouds.aws.previewers`, with the Kubernetes layer on): an access entry
    each in PREVIEWER_GROUP, with no access policy, so they read only what the layer's RBAC grants. Default none."""


class Cluster(pulumi.ComponentResource):
    """`ai-infra:aws:Cluster`. Children: `<name>-cluster-role` (+ policy), `<name>-control-plane-logs`, `<name>-eks`
    (protected outside dev), `<name>-api-from-vpc` and `-api-from-<cidr>` (API ingress), `<name>-oidc`,
    `<name>-admin-<hash>` and `<name>-previewer-<hash>` access entries, `<name>-node-role` (+ policies), `<name>-vpc-cni-role`, `<name>-vpc-cni`,
    `<name>-kube-proxy`, `<name>-system-lt`, `<name>-system-nodegroup`, `<name>-coredns`, `<name>-ebs-csi-role` (+
    policy attachment and `-kms` inline policy), `<name>-ebs-csi`, and with `fsx_csi` `<name>-fsx-csi`."""

    cluster: aws.eks.Cluster
    cluster_name: pulumi.Output[str]
    kubernetes_version: pulumi.Output[str]
    """The cluster's Kubernetes version once EKS runs it: node groups and add-ons follow it, so they update after the
    control plane on a version change (EKS refuses the next minor while a node group is still a minor behind)."""
    security_group_id: pulumi.Output[str]
    """The security group EKS gives the control plane and managed nodes."""
    node_role_arn: pulumi.Output[str]
    oidc_provider_arn: pulumi.Output[str]
    oidc_issuer: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    """Secret kubeconfig authenticating through `aws eks get-token` (no static credentials)."""
    cni: aws.eks.Addon
    ebs_csi: aws.eks.Addon
    """The EBS CSI driver add-on: what volumes of the layer's default StorageClass need to be provisioned and mounted."""
    node_prerequisites: list[pulumi.Resource]
    """What every node group waits for, and outlives on destroy: the VPC CNI and kube-proxy add-ons and the node role's
    policy attachments (detached first, a draining node group's instances and ENIs could no longer be cleaned up)."""

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:Cluster", name, None, opts)
        ctx, spec = args.context, args.spec
        self._ctx, self._name = ctx, name
        role = self._role("cluster-role", json.dumps(assume_role("eks.amazonaws.com")), ["AmazonEKSClusterPolicy"],
                          "EKS control plane")
        # Created before the cluster, so EKS writes into an encrypted group with a retention instead of its own.
        logs = aws.cloudwatch.LogGroup(f"{name}-control-plane-logs", aws.cloudwatch.LogGroupArgs(
            name=f"/aws/eks/{name}/cluster", kms_key_id=args.kms_key_arn, retention_in_days=args.log_retention_days,
            region=ctx.region), opts=ctx.stateful(self))
        public = spec.api_access is ApiAccess.PUBLIC_RESTRICTED
        self.cluster = aws.eks.Cluster(f"{name}-eks", aws.eks.ClusterArgs(
            name=name, role_arn=role.arn, version=self._offered_version(spec),
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=list(args.subnet_ids), endpoint_private_access=True, endpoint_public_access=public,
                public_access_cidrs=[str(c) for c in spec.authorized_cidrs] if public else None),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                resources=["secrets"], provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=args.kms_key_arn)),
            enabled_cluster_log_types=list(LOG_TYPES),
            access_config=aws.eks.ClusterAccessConfigArgs(
                # No EKS-made entry for the creator: it would live outside Pulumi's state (changing the flag replaces
                # the cluster), and EKS refuses a second entry for the same principal, so a creator also listed in
                # `admins` would fail. The deployer gets a managed entry below instead.
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=False),
            kubernetes_network_config=aws.eks.ClusterKubernetesNetworkConfigArgs(
                service_ipv4_cidr=str(args.service_cidr), ip_family="ipv4"),
            deletion_protection=ctx.protected,
            upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=SUPPORT_TYPE),
            region=ctx.region,
        # Also Pulumi-protected outside dev: `pulumi destroy` or a refactor that drops the cluster fails instead of
        # deleting it. Not retained on delete, so an intended teardown never leaves a running cluster behind.
        ), opts=pulumi.ResourceOptions(parent=self, depends_on=[logs, *role.attachments], protect=ctx.protected))
        self.cluster_name = self.cluster.name
        self.kubernetes_version = self.cluster.version
        self.security_group_id = self.cluster.vpc_config.cluster_security_group_id
        self.api_ingress = self._api_ingress(args.vpc_cidr, [] if public else spec.authorized_cidrs)
        self.oidc_issuer = self.cluster.identities.apply(lambda ids: ids[0].oidcs[0].issuer)
        oidc = aws.iam.OpenIdConnectProvider(f"{name}-oidc", aws.iam.OpenIdConnectProviderArgs(
            url=self.oidc_issuer, client_id_lists=["sts.amazonaws.com"]), opts=pulumi.ResourceOptions(parent=self))
        self.oidc_provider_arn = oidc.arn
        # One entry per principal (EKS allows no more), named by the ARN's hash: stable whatever the list order,
        # and the same whether a principal is the deployer, an admin, or both.
        for admin in dict.fromkeys([*spec.admins, *args.deployers]):
            self._admin(admin)
        for previewer in dict.fromkeys(args.previewers):
            self._previewer(previewer)
        node_role = self._role("node-role", json.dumps(assume_role("ec2.amazonaws.com")), NODE_POLICIES, "EKS nodes")
        self.node_role_arn = node_role.arn
        cni_trust = render(lambda arn, issuer: irsa_trust(arn, issuer, "kube-system", "aws-node"), oidc.arn, self.oidc_issuer)
        cni_role = self._role("vpc-cni-role", cni_trust, [CNI_POLICY], "VPC CNI (aws-node) through IRSA")
        self.cni = self._addon(
            "vpc-cni", VPC_CNI_ADDON, cni_role.attachments, service_account_role_arn=cni_role.arn,
            # Network policy enforcement, so tenant namespaces can be isolated by the Kubernetes layer.
            configuration_values=json.dumps({"enableNetworkPolicy": "true"}))
        self.kube_proxy = self._addon("kube-proxy", KUBE_PROXY_ADDON, [], keep_tuning=True)
        self.node_prerequisites = [self.cni, self.kube_proxy, *node_role.attachments]
        system = spec.system_pool
        instance_type = system.instance_type or SYSTEM_INSTANCE_TYPE
        template = launch_template(f"{name}-system", self, ctx, args.kms_key_arn, LaunchTemplateSettings(SYSTEM_DISK_GIB))
        self.system_nodes = node_group(f"{name}-system", self, ctx, template, NodeGroupSettings(
            cluster_name=self.cluster.name, node_role_arn=node_role.arn, subnet_ids=list(args.subnet_ids),
            instance_types=self._system_types(instance_type, args.enforce_transit_encryption),
            ami_type=system_ami_type(instance_type),
            capacity_type="ON_DEMAND", min_nodes=system.min_nodes, max_nodes=system.max_nodes,
            labels=dict(SYSTEM_POOL_LABELS), tags=self.cluster.name.apply(autoscaler_tags),
            kubernetes_version=self.kubernetes_version, depends_on=self.node_prerequisites))
        # Its pods need nodes: created without any, the add-on stays DEGRADED and the create times out.
        self.coredns = self._addon("coredns", COREDNS_ADDON, [self.system_nodes], keep_tuning=True)
        self.ebs_csi = self._ebs_csi(oidc.arn, args.kms_key_arn)
        self.fsx_csi = self._fsx_csi() if args.fsx_csi else None
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.certificate_authority.data,
        ).apply(lambda v: kubeconfig(v[0], ctx.region, v[1], v[2])))
        self.register_outputs({"name": self.cluster_name, "endpoint": self.cluster.endpoint,
                               "oidc_provider_arn": self.oidc_provider_arn})

    def _api_ingress(self, vpc_cidr: IPv4Network, authorized: Sequence[IPv4Network]) -> list[aws.vpc.SecurityGroupIngressRule]:
        """`<name>-api-from-vpc` and `<name>-api-from-<cidr>`: HTTPS to the private endpoint. EKS's cluster security
        group admits only itself (its nodes), so without these a deployer elsewhere in the VPC, or in a peered network
        or VPN listed in `authorized_cidrs`, cannot reach the API server that the Kubernetes layer installs through."""
        sources = [("vpc", vpc_cidr), *((str(c).replace(".", "-").replace("/", "-"), c) for c in authorized)]
        return [aws.vpc.SecurityGroupIngressRule(f"{self._name}-api-from-{suffix}", aws.vpc.SecurityGroupIngressRuleArgs(
            security_group_id=self.security_group_id, ip_protocol="tcp", from_port=443, to_port=443, cidr_ipv4=str(cidr),
            description=f"Kubernetes API from {cidr}", region=self._ctx.region), opts=pulumi.ResourceOptions(parent=self))
            for suffix, cidr in sources]

    def _fsx_csi(self) -> aws.eks.Addon:
        """`<name>-fsx-csi`: the FSx for Lustre CSI driver, for statically provisioned volumes of the toolkit's own file
        systems. No IAM role: mounting (the node plugin) calls no AWS API, and the controller's AWS calls are for
        dynamic provisioning (fsx:CreateFileSystem, DeleteFileSystem, UpdateFileSystem), which nothing here uses;
        Retain-policy volumes never reach DeleteVolume. With IMDSv2 hop limit 1 its pods get no node credentials either."""
        return self._addon("fsx-csi", FSX_CSI_ADDON, [self.system_nodes])

    def _ebs_csi(self, oidc_provider_arn: pulumi.Output[str], kms_key_arn: pulumi.Input[str]) -> aws.eks.Addon:
        """`<name>-ebs-csi`: the EBS CSI driver. Its controller creates, attaches and resizes volumes under
        `<name>-ebs-csi-role` (IRSA; the managed policy, and the region's key for volumes encrypted with it), pinned to
        the system pool: only the controller holds AWS credentials, so it stays off nodes teams run on. The node plugin
        (no AWS credentials) tolerates every taint, so team pods mount volumes on the GPU pools too. With IMDSv2 hop
        limit 1 neither reaches the instance metadata: the driver reads region, zone and instance from the Kubernetes
        node (its documented fallback, aws-ebs-csi-driver docs/install.md "Metadata"), and the controller's region from
        the AWS_REGION that EKS's IRSA webhook injects (aws/amazon-eks-pod-identity-webhook#41)."""
        namespace, account = EBS_CSI_CONTROLLER
        trust = render(lambda arn, issuer: irsa_trust(arn, issuer, namespace, account), oidc_provider_arn, self.oidc_issuer)
        role = self._role("ebs-csi-role", trust, [EBS_CSI_POLICY], "EBS CSI driver controller through IRSA")
        kms = aws.iam.RolePolicy(f"{self._name}-ebs-csi-role-kms", aws.iam.RolePolicyArgs(
            role=role.name, policy=render(ebs_csi_kms, kms_key_arn)), opts=pulumi.ResourceOptions(parent=self))
        # Keys of the add-on's configuration schema (`aws eks describe-addon-configuration`): `controller.nodeSelector`,
        # `controller.extraVolumeTags`, `node.tolerateAllTaints` (aws/containers-roadmap#1706). The controller keeps
        # the chart's tolerations (CriticalAddonsOnly, NoExecute for 300 s): none of the GPU pools' NoSchedule taints.
        values = {"controller": {"nodeSelector": dict(SYSTEM_POOL_LABELS), "extraVolumeTags": self._volume_tags()},
                  "node": {"tolerateAllTaints": True}}
        # Its controller pods need nodes, like CoreDNS's; the role's permissions come before the pods that use them.
        return self._addon("ebs-csi", EBS_CSI_ADDON, [self.system_nodes, *role.attachments, kms],
                           service_account_role_arn=role.arn, configuration_values=json.dumps(values))

    def _volume_tags(self) -> dict[str, str]:
        """The platform's tags, for the volumes the driver creates (the provider's default tags never reach them). The
        spec leaves room for the driver's own tags within EC2's 50 (components/spec/common.py, MOST_RESOURCE_TAGS)."""
        return dict(self._ctx.labels)

    def _system_types(self, instance_type: str, enforced: bool) -> pulumi.Input[Sequence[str]]:
        if not enforced:
            return [instance_type]
        path = region_path(Cloud.AWS.value, self._ctx.region)
        return encrypting_in_transit(self, self._ctx, [instance_type], [instance_type],
                                     f"{path}.cluster.system_pool.instance_type", f"{path}.network")

    def _addon_version(self, addon: str) -> pulumi.Output[str]:
        """The build EKS picks by default for `addon` on the cluster's Kubernetes version (not the most recent): always
        one EKS offers for that version, and a Kubernetes upgrade moves the add-on along (EKS upgrades no add-on itself).
        EKS moves its default build over time; a later run then updates the add-on in place."""
        found = aws.eks.get_addon_version_output(addon_name=addon, kubernetes_version=self.kubernetes_version,
                                                 region=self._ctx.region, opts=pulumi.InvokeOutputOptions(parent=self))
        return found.version

    def _addon(self, suffix: str, addon: str, depends_on: Sequence[pulumi.Resource], *, keep_tuning: bool = False,
               **settings: pulumi.Input[str]) -> aws.eks.Addon:
        """`<name>-<suffix>`: EKS add-on `addon` at EKS's default build for the cluster's version. OVERWRITE on create
        takes over a self-managed copy (EKS installs kube-proxy and CoreDNS with every cluster; an existing cluster's
        too). On update, the add-on's configuration is this code's (OVERWRITE resets in-cluster edits), unless
        `keep_tuning`: PRESERVE keeps in-cluster tuning (CoreDNS replicas, kube-proxy mode) through version updates, and
        `preserve` leaves the add-on running if it is dropped from code (DNS and Service routing). `settings`: more
        AddonArgs (the VPC CNI's role and configuration)."""
        return aws.eks.Addon(f"{self._name}-{suffix}", aws.eks.AddonArgs(
            cluster_name=self.cluster.name, addon_name=addon, addon_version=self._addon_version(addon),
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="PRESERVE" if keep_tuning else "OVERWRITE",
            preserve=True if keep_tuning else None, region=self._ctx.region, **settings),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)))

    def _offered_version(self, spec: ClusterSpec) -> pulumi.Output[str]:
        """The cluster's Kubernetes version once EKS lists it in the region (DescribeClusterVersions, asked at preview:
        versions in standard or extended support); else the run stops with the config path before anything of the
        cluster is created (EKS would refuse the cluster after its network, key and roles exist)."""
        version = spec.kubernetes_version or EKS_KUBERNETES_VERSION
        path = f"{region_path(Cloud.AWS.value, self._ctx.region)}.cluster.kubernetes_version"
        found = aws.eks.get_cluster_versions_output(region=self._ctx.region, opts=pulumi.InvokeOutputOptions(parent=self))

        def check(versions: list) -> str:  # noqa: ANN001 (the SDK's result type)
            problem = kubernetes_version_problem(path, "EKS", self._ctx.region, version, [v.cluster_version for v in versions],
                                                 default=spec.kubernetes_version is None)
            if problem:
                raise pulumi.RunError(problem)
            return version

        return found.cluster_versions.apply(check)

    def _role(self, suffix: str, trust: pulumi.Input[str], policies: Sequence[str], purpose: str) -> _Role:
        """`<name>-<suffix>` with a trust policy (JSON) and AWS managed policies attached."""
        ctx, name = self._ctx, self._name
        role = aws.iam.Role(f"{name}-{suffix}", aws.iam.RoleArgs(
            assume_role_policy=trust, description=f"ai-infra {name}: {purpose}"), opts=pulumi.ResourceOptions(parent=self))
        attachments = [
            aws.iam.RolePolicyAttachment(f"{name}-{suffix}-{policy}", aws.iam.RolePolicyAttachmentArgs(
                role=role.name, policy_arn=pulumi.Output.from_input(ctx.partition).apply(lambda p, n=policy: managed_policy_arn(p, n))),
                opts=pulumi.ResourceOptions(parent=self))
            for policy in policies
        ]
        return _Role(role.arn, role.name, attachments)

    def _previewer(self, principal_arn: str) -> None:
        """`<name>-previewer-<hash>`: a STANDARD entry in PREVIEWER_GROUP and no AccessPolicyAssociation (the EKS view
        policies grant no Secrets nor custom resources, which a refresh reads: the layer's RBAC grants them instead)."""
        aws.eks.AccessEntry(f"{self._name}-previewer-{short_hash(principal_arn)}", aws.eks.AccessEntryArgs(
            cluster_name=self.cluster.name, principal_arn=principal_arn, type="STANDARD",
            kubernetes_groups=[PREVIEWER_GROUP], region=self._ctx.region), opts=pulumi.ResourceOptions(parent=self))

    def _admin(self, principal_arn: str) -> None:
        suffix = short_hash(principal_arn)
        entry = aws.eks.AccessEntry(f"{self._name}-admin-{suffix}", aws.eks.AccessEntryArgs(
            cluster_name=self.cluster.name, principal_arn=principal_arn, type="STANDARD", region=self._ctx.region),
            opts=pulumi.ResourceOptions(parent=self))
        aws.eks.AccessPolicyAssociation(f"{self._name}-admin-{suffix}-policy", aws.eks.AccessPolicyAssociationArgs(
            cluster_name=self.cluster.name, principal_arn=entry.principal_arn,
            policy_arn=pulumi.Output.from_input(self._ctx.partition).apply(
                lambda p: f"arn:{p}:eks::aws:cluster-access-policy/{ADMIN_POLICY}"),
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"), region=self._ctx.region),
            opts=pulumi.ResourceOptions(parent=self))


@dataclass(frozen=True)
class _Role:
    arn: pulumi.Output[str]
    name: pulumi.Output[str]
    attachments: list[aws.iam.RolePolicyAttachment]


def kubeconfig(cluster_name: str, region: str, endpoint: str, ca_data: str) -> str:
    """Kubeconfig (JSON, which is valid YAML) that gets a token from `aws eks get-token` on every use."""
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws",
                     "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"],
                     "interactiveMode": "Never"}}
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": cluster_name,
        "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "users": [{"name": cluster_name, "user": user}],
    })
