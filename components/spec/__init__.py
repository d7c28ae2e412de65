"""Cloud-neutral platform spec: pydantic models, semantic checks and the loader. Imports no cloud SDK."""

from .common import Cloud, ComplianceProfile, SpecModel
from .compute import (
    ApiAccess,
    CapacityType,
    ClusterSpec,
    GpuDriver,
    GpuPoolSpec,
    GpuSharing,
    Placement,
    SharingMode,
    SystemPoolSpec,
    Taint,
    TpuMode,
    TpuSliceSpec,
    UpgradeChannel,
)
from .endpoint import AzureFrontDoorTier, GlobalEndpointSpec, GlobalRouting, InferenceSpec, logs_region
from .loader import SpecError, load_platform, region_path
from .network import NatMode, NetworkSpec, TransitEncryption
from .alerts import AlertsSpec
from .aws import AwsCloudSpec
from .azure import AzureCloudSpec
from .cloud import CloudSpec, RegionSpec
from .gcp import GcpCloudSpec
from .platform import AddonsSpec, MigStrategy, MonitoringMode, Platform, PlatformLabels, TeamSpec
from .checks import endpoint_logs_region
from .resolve import NODE_LABEL_PREFIX, accelerator_node_labels, accelerator_taint, resolve_gpu_pool, resolve_lustre, resolve_tpu
from .stack import PLATFORM_CONFIG, StackConfigError, check_stack_environment, platform_config_value
from .storage import BucketSpec, DataClass, LustreDeployment, LustreSpec, Tiering

__all__ = [name for name in dir() if not name.startswith("_")]


def json_schema() -> dict:
    """JSON Schema of the `ai-infra:platform` value, for editor validation of stack files."""
    schema = Platform.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ai-infra platform (value of the ai-infra:platform stack config)"
    return schema
