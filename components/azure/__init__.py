"""Azure components (pulumi-azure-native v3): one ComponentResource per concern, type tokens `ai-infra:azure:<Name>`.

Per region: Network -> KeyVault -> FlowLogs, BlobStorage, Lustre, EtcdKey, Cluster -> GpuPool; one FrontDoor for the cloud.
`components.compose.azure` wires them from the platform spec; every component takes an `AzureContext`, the single
source of location, resource group, tags and protection.
"""

from .cluster import Cluster, ClusterArgs
from .context import AzureContext
from .etcd_key import EtcdKey, EtcdKeyArgs, EtcdKeyRef
from .flow_logs import FlowLogs, FlowLogsArgs
from .front_door import FrontDoor, FrontDoorArgs, FrontDoorOrigin
from .gpu_pool import GpuPool, GpuPoolArgs
from .keyvault import CustomerKey, KeyVault, KeyVaultArgs
from .lustre import BlobLink, Lustre, LustreArgs
from .network import Network, NetworkArgs
from .storage import BlobStorage, BlobStorageArgs

__all__ = [
    "AzureContext", "BlobLink", "BlobStorage", "BlobStorageArgs", "Cluster", "ClusterArgs", "CustomerKey", "EtcdKey",
    "EtcdKeyArgs", "EtcdKeyRef", "FlowLogs", "FlowLogsArgs", "FrontDoor", "FrontDoorArgs", "FrontDoorOrigin", "GpuPool",
    "GpuPoolArgs", "KeyVault", "KeyVaultArgs", "Lustre", "LustreArgs", "Network", "NetworkArgs",
]
