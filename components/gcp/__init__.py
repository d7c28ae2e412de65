"""GCP components (pulumi-gcp 10): one ComponentResource per concern, type tokens `ai-infra:gcp:<Name>`.

Project (APIs, Lustre service agent, cluster admins). Per region: Kms, Network -> FlowLogs, AccessLogBucket and
Bucket, Lustre, Cluster -> GpuPool and TpuSlice (or, outside GKE, TpuVm or TpuQueuedResource); one GlobalLoadBalancer for the cloud.
`components.compose.gcp` wires them from the platform spec; every component takes a `GcpContext`, the single
source of project, region, labels and protection. TPU slices exist only here: TPUs are a GCP product.
"""

from .cluster import Cluster, ClusterArgs, NodeIdentity
from .context import GcpContext
from .flow_logs import FlowLogs, FlowLogsArgs
from .gpu_pool import GpuPool, GpuPoolArgs
from .kms import Kms, KmsArgs
from .load_balancer import GlobalLoadBalancer, GlobalLoadBalancerArgs
from .lustre import BucketLink, Lustre, LustreArgs
from .network import Network, NetworkArgs
from .project import Project, ProjectArgs
from .storage import AccessLogBucket, AccessLogBucketArgs, Bucket, BucketArgs
from .tpu import TpuQueuedResource, TpuQueuedResourceArgs, TpuSlice, TpuSliceArgs, TpuVm, TpuVmArgs

__all__ = [
    "AccessLogBucket", "AccessLogBucketArgs", "Bucket", "BucketArgs", "BucketLink", "Cluster", "ClusterArgs", "FlowLogs",
    "FlowLogsArgs", "GcpContext", "GlobalLoadBalancer", "GlobalLoadBalancerArgs", "GpuPool", "GpuPoolArgs", "Kms", "KmsArgs",
    "Lustre", "LustreArgs", "Network", "NetworkArgs", "NodeIdentity", "Project", "ProjectArgs", "TpuQueuedResource",
    "TpuQueuedResourceArgs", "TpuSlice", "TpuSliceArgs", "TpuVm", "TpuVmArgs",
]
