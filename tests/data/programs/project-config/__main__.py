"""Reads every value through pulumi.Config, as a program whose defaults come from Pulumi.yaml would."""

import pulumi
import pulumi_kubernetes as k8s

config = pulumi.Config()
labels = {"app": "web", **(config.get_object("labels") or {})}
deployment = k8s.apps.v1.Deployment(
    "web",
    spec=k8s.apps.v1.DeploymentSpecArgs(
        replicas=config.get_int("replicas") or 1,
        selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
        template=k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels),
            spec=k8s.core.v1.PodSpecArgs(containers=[k8s.core.v1.ContainerArgs(name="web", image=config.require("image"))]),
        ),
    ),
)
if config.get_bool("exposeService"):
    k8s.core.v1.Service("web", spec=k8s.core.v1.ServiceSpecArgs(selector=labels, ports=[k8s.core.v1.ServicePortArgs(port=80)]))
pulumi.export("namespace", pulumi.Config("kubernetes").get("namespace"))
pulumi.export("region", config.get("region"))
pulumi.export("token", config.get_secret("apiToken"))
pulumi.export("reasoning", config.get("reasoning"))
