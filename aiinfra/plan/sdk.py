"""The provider SDK class a Pulumi token names: a resource's class, or an invoke's result type."""

from __future__ import annotations

import importlib
import keyword
import re


def sdk_class(token: str, suffix: str = "") -> type | None:
    """The class `<name><suffix>` the provider SDK declares for `token` (`aws:s3/bucket:Bucket`,
    `kubernetes:apps/v1:Deployment`; with suffix "Result", the result type of an invoke such as
    `aws:ec2/getVpc:getVpc`), or None."""
    parts = token.split(":")
    if len(parts) != 3 or parts[0] == "pulumi":
        return None
    package, module, name = parts
    base = "pulumi_" + package.replace("-", "_")
    if package == "kubernetes" and "/" in module:  # <group>/<version>: networking.k8s.io/v1 -> networking.v1
        group, _, version = module.partition("/")
        module_path = f"{base}.{group.split('.')[0]}.{version}"
    else:  # <module>/<file> or <module>
        module = module.split("/")[0].replace("-", "_")
        # Pulumi's Python codegen appends "_" to a module named like a Python keyword (aws:lambda -> pulumi_aws.lambda_).
        module_path = base if module in ("index", "") else f"{base}.{module}{'_' if keyword.iskeyword(module) else ''}"
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    class_name = name[:1].upper() + name[1:] + suffix
    # The package first: the provider SDKs load their modules lazily, and importing a submodule of a module not yet
    # loaded leaves that module without some of its functions once it loads (pulumi_aws.ec2 then lacks
    # get_capacity_block_reservation_output). Asking the package for the class loads it whole.
    for candidate in (module_path, f"{module_path}.{snake}"):
        try:
            mod = importlib.import_module(candidate)
        except ImportError:
            continue
        cls = getattr(mod, class_name, None)
        if isinstance(cls, type):
            return cls
    return None
