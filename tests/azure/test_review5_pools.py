"""AKS GPU pools: a replacement deletes the old pool first (its name is fixed, and azure-native's Create refuses an
existing pool), and spot pools declare AKS's own spot label, which a nodeLabels update would otherwise drop."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aiinfra.plan.runtime import PlanResult
from components import catalog
from components.azure.gpu_pool import REPLACED_ON_CHANGE, node_labels
from components.spec import GpuPoolSpec

POOL = "azure-native:containerservice:AgentPool"
SPOT_LABEL = ("kubernetes.azure.com/scalesetpriority", "spot")


def test_every_gpu_pool_is_replaced_old_pool_first(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    pools = prod_plan.of_type(POOL) + dev_plan.of_type(POOL)
    assert {p.name for p in prod_plan.of_type(POOL)} == {"prod-eastus2-train-agentpool", "prod-eastus2-batch-agentpool",
                                                         "prod-swedencentral-serve-agentpool"}
    for record in pools:
        # The engine replaces on these itself; azure-native asks for delete-first only on vmSize and gpuInstanceProfile.
        assert record.replaceOnChanges == list(REPLACED_ON_CHANGE), record.name
        assert record.deleteBeforeReplace is True, record.name


def test_spot_pools_declare_aks_spot_label_and_others_do_not(prod_plan: PlanResult) -> None:
    labels = {r.name: r.inputs["nodeLabels"] for r in prod_plan.of_type(POOL)}
    train = labels["prod-eastus2-train-agentpool"]  # spot
    assert train[SPOT_LABEL[0]] == SPOT_LABEL[1] and train["ai-infra/capacity"] == "spot"
    for name in ("prod-eastus2-batch-agentpool", "prod-swedencentral-serve-agentpool"):  # reserved, on-demand
        assert SPOT_LABEL[0] not in labels[name], name


@settings(max_examples=50)
@given(row=st.sampled_from(catalog.instance_types("azure")), capacity=st.sampled_from(["on_demand", "spot"]),
       extra=st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["a", "b"]), max_size=2))
def test_the_spot_label_is_aks_value_exactly_on_spot_pools(row: catalog.GpuInstance, capacity: str, extra: dict[str, str]) -> None:
    pool = GpuPoolSpec(instance_type=row.instance_type, capacity=capacity, labels=extra)
    labels = node_labels("p", pool, row)
    assert (labels.get(SPOT_LABEL[0]) == SPOT_LABEL[1]) == (capacity == "spot")
    assert extra.items() <= labels.items()
    assert labels["ai-infra/accelerator"] == row.accelerator and labels["ai-infra/capacity"] == capacity
