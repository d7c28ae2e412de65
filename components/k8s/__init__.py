"""The Kubernetes layer on every cluster: accelerator enablement, team tenancy (namespaces, quotas, Kueue)
and GPU monitoring.

Pure modules (no Pulumi imports; the cloud components may use them): `cluster` (what the layer sees of a
region), `sharing` (MIG and time-slicing configs and the node labels that select them), `gpu_values` (Helm
values), `dcgm_metrics` (the DCGM exporters' metrics list), `queues` (Kueue objects and quota split),
`monitoring_objects` (alerts, scrape configs), `dashboard`, `netpol` (the ranges a team's NetworkPolicy names).
Components: `accelerators.Accelerators`, `tenancy.Tenancy`, `monitoring.Monitoring`, `storage.BlockStorageClass`
(with `block_storage`, the class a cloud hands over: EKS's default, GKE's and AKS's named),
`storage.LustreVolumes` (with `lustre`, the drivers' mount facts) in regions with
Lustre, `azure_lustre.AzureLustreCsi` (the Azure Lustre CSI driver's node plugin) on AKS clusters of regions with
Azure Managed Lustre, `eks` controllers on EKS clusters, `autoneg.Autoneg` on GKE clusters behind the
GCP global load balancer and `inference.InferenceService` in regions with `inference`, wired per cluster by
`components.compose.kubernetes`.

This module imports nothing, so importing a pure module does not load the Kubernetes SDK.
"""
