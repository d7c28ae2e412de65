"""Default providers as the engine names and refuses them.

The engine registers a default provider for a custom resource or remote component that names no provider, one per
package, version and plugin download URL (pulumi/pulumi pkg/resource/deploy/default_providers.go), and refuses one
for a package the stack's `pulumi:disable-default-providers` config lists.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

import pulumi
import semver

from .echo import SECRET, SIG
from .project import SECRET_PLACEHOLDER

DISABLE_KEY = "pulumi:disable-default-providers"

_NAME_CHAR = re.compile(r"[A-Za-z0-9_.-]")


def into_qname(text: str) -> str:
    """tokens.IntoQName (sdk/go/common/tokens/names.go): the "/"-separated parts that are not empty, each byte that
    may not stand in a name replaced by "_"."""
    parts = []
    for part in text.split("/"):
        if part:
            parts.append("".join(chr(b) if _NAME_CHAR.fullmatch(chr(b)) else "_" for b in part.encode()))
    return "/".join(parts) or "_"


def trim_url(url: str) -> str:
    """The engine keeps a plugin download URL without one trailing "/" (providers.NewProviderRequest)."""
    return url[:-1] if url.endswith("/") else url


def default_provider_name(package: str, version: str, url: str = "") -> str:
    """ProviderRequest.DefaultName (pkg/resource/deploy/providers/provider.go): `default`, then `_<major>_<minor>_<patch>`
    and `_<identifier>` for each pre-release and build identifier of the version, then `_<URL as a QName>`. A version
    that is not semantic fails as the engine's parseProviderRequest fails it."""
    name = "default"
    if version:
        try:
            parsed = semver.Version.parse(version)
        except ValueError as err:
            raise pulumi.RunError(f"parse provider request: the {package} version {version!r} is not a semantic "
                                  f"version: {err}") from None
        identifiers = [*(parsed.prerelease or "").split("."), *(parsed.build or "").split(".")]
        name += f"_{parsed.major}_{parsed.minor}_{parsed.patch}" + "".join(f"_{i}" for i in identifiers if i)
    if url:
        name += "_" + into_qname(trim_url(url))
    return name


def engine_version(version: str, what: str) -> str:
    """A provider's version as the engine records it in the provider's inputs (providers.SetProviderVersion: blang's
    String of the parsed version, the same text); the engine refuses one that is not semantic."""
    try:
        semver.Version.parse(version)
    except ValueError as err:
        raise pulumi.RunError(f"{what}: passed invalid version {version!r}: {err}") from None
    return version


def default_provider_inputs(package: str, version: str, config: Mapping[str, str],
                            secret_keys: Collection[str]) -> dict[str, Any]:
    """The inputs the engine gives the package's default provider: its version (already parsed by
    `default_provider_name`, which fails a version that is not semantic) and the stack's `<package>:*` config as the
    engine passes it (pkg/resource/deploy/target.go, GetPackageConfig): each value as its config text (JSON for an
    object), marked secret when it is or holds a secure value (whose text is a placeholder: the plan never decrypts)."""
    inputs: dict[str, Any] = {"version": version} if version else {}
    for full, value in config.items():
        namespace, _, field_ = full.partition(":")
        if namespace == package:
            # A secure value, or an object holding one, is marked secret: an object keeps its JSON, whose secure
            # parts the stack file's reading made placeholders (project.py); a scalar is the placeholder itself.
            shown = value if value[:1] in ("{", "[") else SECRET_PLACEHOLDER
            inputs[field_] = {SIG: SECRET, "value": shown} \
                if full in secret_keys else value
    return inputs


def denied(package: str, config: Mapping[str, str]) -> bool:
    """Whether the stack's config refuses a default provider for `package` (default_providers.go shouldDenyRequest):
    the value of `pulumi:disable-default-providers` is a JSON list of package names, `*` for all; the `pulumi`
    package is never refused. ValueError, with the engine's message, for a value that is not such a list."""
    value = config.get(DISABLE_KEY)
    if package == "pulumi" or value is None or value == "":
        return False
    for index, item in enumerate(_disabled_list(value)):
        if not isinstance(item, str):
            raise ValueError(f"{DISABLE_KEY}[{index}] must be a string, got {json.dumps(item)}")
        if item.strip() in ("*", package):
            return True
    return False


@functools.lru_cache(maxsize=8)
def _disabled_list(value: str) -> tuple[Any, ...]:
    """The parsed `pulumi:disable-default-providers` list, parsed once: every registration asks. `denied` checks its
    items."""
    try:
        items = json.loads(value)
    except ValueError as err:
        raise ValueError(f"Failed to parse {value}: {err} (config {DISABLE_KEY} takes a list of package names, "
                         "or \"*\" for every package)") from None
    if not isinstance(items, list):
        raise ValueError(f"Failed to parse {value}: not a list (config {DISABLE_KEY} takes a list of package names, "
                         "or \"*\" for every package)")
    return tuple(items)


def denied_message(package: str, what: str) -> str:
    """diag.GetDefaultProviderDenied (sdk/go/common/diag/errors.go): `what` is the resource's URN, the remote
    component's type or the invoke's token, as the engine fills it in."""
    return f"Default provider for '{package}' disabled. '{what}' must use an explicit provider."


def check_allowed(package: str, what: str, config: Mapping[str, str], shown: str = "") -> None:
    """Fail as the engine fails a registration, read or invoke that needs a default provider the stack's
    `pulumi:disable-default-providers` refuses (pulumi.RunError: one line, exit 1); `shown`: the package as the
    message names it."""
    try:
        refused = denied(package, config)
    except ValueError as err:
        raise pulumi.RunError(str(err)) from None
    if refused:
        raise pulumi.RunError(denied_message(shown or package, what))


_K8S_REMOTE_HINTS = {
    "kubernetes:helm.sh/v4:Chart": "; helm.v3.Release (one resource, the chart's values as inputs) plans fully",
    "kubernetes:yaml/v2:ConfigFile": "; yaml.ConfigFile (v1), whose manifest the plan decodes, shows them",
    "kubernetes:yaml/v2:ConfigGroup": "; yaml.ConfigGroup (v1), whose manifests the plan decodes, shows them",
}


def remote_component_warning(type_: str, name: str) -> str | None:
    """What the plan says about a Kubernetes remote component (helm.v4.Chart, yaml.v2.ConfigFile/ConfigGroup,
    kustomize.v2.Directory): pulumi-kubernetes builds its objects in the plugin (Construct), which a plan cannot run."""
    if not type_.startswith("kubernetes:"):
        return None
    return (f"{type_} '{name}': the Kubernetes provider plugin builds its objects, which an offline plan cannot run, "
            f"so they are missing from this plan and from the policy checks{_K8S_REMOTE_HINTS.get(type_, '')}")
