"""What a region's zones offer, asked during `pulumi preview`: Compute Engine machine types (GKE GPU and TPU node
pools) and Cloud TPU accelerator types (TPU VMs and queued resources). A pool or slice whose zone lacks its type
stops the run with its config path (`components/spec/offerings.py`) instead of failing at GKE or Cloud TPU midway
through `pulumi up`. Azure has no such lookup in azure-native, so AKS pools are not checked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pulumi
import pulumi_gcp as gcp

from components.spec.offerings import zone_offering_problem


class ZoneOfferings:
    """The offering lookups of one region: each type is looked up once per zone of the region, with `opts` (the
    environment's provider, after the project's APIs are enabled)."""

    def __init__(self, project: str, region_zones: pulumi.Input[Sequence[str]], opts: pulumi.InvokeOutputOptions) -> None:
        self._project, self._opts = project, opts
        self._region_zones = pulumi.Output.from_input(region_zones)
        self._offered: dict[tuple[str, str], pulumi.Output[list[str]]] = {}

    def machine_type(self, machine_type: str, zones: pulumi.Input[Sequence[str]], path: str, fix: str) -> pulumi.Output[str]:
        """`machine_type`, once Compute Engine lists it in every zone of `zones` (machineTypes.list); else the run
        stops with the error for config path `path`, which suggests `fix`."""
        def lookup(zone: str) -> pulumi.Output[bool]:
            found = gcp.compute.get_machine_types_output(
                project=self._project, zone=zone, filter=f'name = "{machine_type}"', opts=self._opts)
            return found.machine_types.apply(lambda types: any(t.name == machine_type for t in types))

        return self._checked(("machine", machine_type), lookup, zones, path, fix)

    def tpu_type(self, accelerator_type: str, zone: pulumi.Input[str], path: str, fix: str) -> pulumi.Output[str]:
        """`accelerator_type` (e.g. `v5litepod-8`), once Cloud TPU lists it in `zone` (acceleratorTypes.list)."""
        def lookup(candidate: str) -> pulumi.Output[bool]:
            found = gcp.tpu.get_v2_accelerator_types_output(project=self._project, zone=candidate, opts=self._opts)
            return found.types.apply(lambda types: accelerator_type in types)

        return self._checked(("tpu", accelerator_type), lookup, pulumi.Output.from_input(zone).apply(lambda z: [z]), path, fix)

    def _checked(self, key: tuple[str, str], lookup: Callable[[str], pulumi.Output[bool]],
                 zones: pulumi.Input[Sequence[str]], path: str, fix: str) -> pulumi.Output[str]:
        if key not in self._offered:
            self._offered[key] = self._region_zones.apply(lambda names: pulumi.Output.all(*[lookup(z) for z in names]).apply(
                lambda found: [zone for zone, ok in zip(names, found) if ok]))

        def check(values: list) -> str:  # noqa: ANN001
            wanted, offered, names = values
            problem = zone_offering_problem(path, key[1], wanted, offered, names, fix)
            if problem:
                raise pulumi.RunError(problem)
            return key[1]

        return pulumi.Output.all(zones, self._offered[key], self._region_zones).apply(check)
