"""AWS components of the platform (pulumi-aws v7): one ComponentResource per building block, type tokens
`ai-infra:aws:<Name>`. `components.compose.aws.build` wires them together for a `Platform`."""

from .cluster import Cluster, ClusterArgs
from .context import AwsContext
from .endpoint import GlobalEndpoint, GlobalEndpointArgs, InferenceEndpoint, InferenceEndpointArgs, Origin
from .kms import KmsKey, KmsKeyArgs
from .lustre import BucketLink, Lustre, LustreArgs
from .network import Network, NetworkArgs
from .node_group import GpuNodePool, GpuNodePoolArgs
from .storage import Bucket, BucketArgs, LogBucket, LogBucketArgs, LogTarget

__all__ = [
    "AwsContext", "Bucket", "BucketArgs", "BucketLink", "Cluster", "ClusterArgs", "GlobalEndpoint", "GlobalEndpointArgs",
    "GpuNodePool", "GpuNodePoolArgs", "InferenceEndpoint", "InferenceEndpointArgs", "KmsKey", "KmsKeyArgs", "LogBucket",
    "LogBucketArgs", "LogTarget", "Lustre", "LustreArgs", "Network", "NetworkArgs", "Origin",
]
