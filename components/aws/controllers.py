"""IAM roles (IRSA) for the controllers the Kubernetes layer installs on every EKS cluster: the Cluster Autoscaler
(scales the managed node groups; GPU pools start at zero) and the AWS Load Balancer Controller (registers the
inference pods into the endpoint's target group through a TargetGroupBinding).

Each role trusts exactly one Kubernetes service account of this cluster's OIDC provider, audience STS; the
Kubernetes layer installs each chart under exactly that namespace and service account name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from . import controller_policies
from .context import AwsContext, render
from .policies import irsa_trust

AUTOSCALER_NAMESPACE = "kube-system"
AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler"
LB_CONTROLLER_NAMESPACE = "kube-system"
LB_CONTROLLER_SERVICE_ACCOUNT = "aws-load-balancer-controller"
"""The service account names of both charts' documented IRSA installs; the roles trust only these."""


@dataclass(frozen=True)
class ControllerRolesArgs:
    context: AwsContext
    cluster_name: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer: pulumi.Input[str]
    """The cluster's OIDC issuer URL (https://oidc.eks...); the trust conditions key on it."""


class ControllerRoles(pulumi.ComponentResource):
    """`ai-infra:aws:ControllerRoles`. Children: `<name>-autoscaler-role` + `<name>-autoscaler-policy` (inline),
    `<name>-lb-controller-role` + `<name>-lb-controller-policy` (inline)."""

    autoscaler_role_arn: pulumi.Output[str]
    lb_controller_role_arn: pulumi.Output[str]

    def __init__(self, name: str, args: ControllerRolesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ai-infra:aws:ControllerRoles", name, None, opts)
        self._name, self._args = name, args
        self.autoscaler_role_arn = self._role(
            "autoscaler", AUTOSCALER_NAMESPACE, AUTOSCALER_SERVICE_ACCOUNT, "Cluster Autoscaler through IRSA",
            render(controller_policies.cluster_autoscaler, args.cluster_name))
        self.lb_controller_role_arn = self._role(
            "lb-controller", LB_CONTROLLER_NAMESPACE, LB_CONTROLLER_SERVICE_ACCOUNT,
            "AWS Load Balancer Controller through IRSA", render(controller_policies.load_balancer_controller, args.context.partition))
        self.register_outputs({"autoscaler_role_arn": self.autoscaler_role_arn,
                               "lb_controller_role_arn": self.lb_controller_role_arn})

    def _role(self, suffix: str, namespace: str, service_account: str, purpose: str,
              policy: pulumi.Input[str]) -> pulumi.Output[str]:
        """`<name>-<suffix>-role` trusting one service account, with its policy inline (lives and dies with the role)."""
        args, name = self._args, self._name
        trust = render(lambda arn, issuer: irsa_trust(arn, issuer, namespace, service_account),
                       args.oidc_provider_arn, args.oidc_issuer)
        role = aws.iam.Role(f"{name}-{suffix}-role", aws.iam.RoleArgs(
            assume_role_policy=trust, description=f"ai-infra {name}: {purpose}"), opts=pulumi.ResourceOptions(parent=self))
        inline = aws.iam.RolePolicy(f"{name}-{suffix}-policy", aws.iam.RolePolicyArgs(role=role.id, policy=policy),
                                    opts=pulumi.ResourceOptions(parent=self))
        # The ARN is handed out only once the permissions are attached: a pod starting with the role gets them.
        return pulumi.Output.all(role.arn, inline.id).apply(lambda v: v[0])
