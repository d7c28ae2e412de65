"""Evaluate a CrossGuard policy pack offline, the way the engine does: over the Analyzer gRPC protocol.

The pack's own program is started (as the CLI's python analyzer host does), then: GetAnalyzerInfo,
ConfigureStack, Configure (the policy config reconciled with each policy's schema defaults, as the engine
does), Analyze for every custom resource (inputs, options, provider), and one AnalyzeStack with all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from .plan.outputs import preview_outputs

_LEVELS = {"advisory": analyzer_pb2.ADVISORY, "mandatory": analyzer_pb2.MANDATORY,
           "disabled": analyzer_pb2.DISABLED, "remediate": analyzer_pb2.REMEDIATE}
_LEVEL_NAMES = {v: k for k, v in _LEVELS.items()}
_STARTUP_SECONDS = 60
_IN_FLIGHT = 16
"""Analyze calls kept in flight: enough to keep the pack busy; a burst of thousands once ended in an RPC CANCELLED."""


class PolicyError(Exception):
    """The pack could not be started or its config is invalid; the message says which."""


@dataclass
class Violation:
    policy: str
    enforcementLevel: str  # noqa: N815 (the JSON field name)
    urn: str
    message: str


@dataclass
class PolicyReport:
    pack: str
    violations: list[Violation]

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcementLevel == "mandatory"]

    def to_json(self) -> dict[str, Any]:
        return {"pack": self.pack, "violations": [asdict(v) for v in self.violations]}


def read_policy_config(path: str | Path) -> dict[str, Any]:
    """A policy config file: a JSON object of {policy name: level or {"enforcementLevel": ..., settings}}."""
    try:
        config = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PolicyError(f"policy config {path} is not readable JSON: {err}") from None
    if not isinstance(config, dict):
        raise PolicyError(f"policy config {path}: expected a JSON object of policy settings by name, got {type(config).__name__}")
    return config


def evaluate_pack(pack_dir: str | Path, resources: list[dict], *, config: dict | None = None,
                  config_path: str | Path | None = None, project: str, stack: str,
                  organization: str = "organization", dry_run: bool = True,
                  python: str | None = None, stack_config: Mapping[str, str] | None = None,
                  secret_keys: Sequence[str] = (), stack_tags: Mapping[str, str] | None = None) -> PolicyReport:
    """Run the pack at `pack_dir` over plan `resources` (records with wire-form inputs). `stack_config`: the stack's
    config in the engine's flat form ({"<namespace>:<key>": "<text>"}), with `secret_keys` among its keys.
    `stack_tags`: the stack's tags (plan/stack_tags.py); default: those the CLI derives from the project's name and
    runtime."""
    pack_dir = Path(pack_dir).resolve()  # the pack runs from its own directory: a relative path would not hold there
    if config is None and config_path is not None:
        config = read_policy_config(config_path)
    stack_config = dict(stack_config or {})
    # As the engine starts a pack (pkg/resource/plugin/analyzer_plugin.go, constructEnv): the stack's config as
    # PULUMI_CONFIG (JSON), so `pulumi.Config()` works in a policy, and project, stack, organization and dry run.
    env = {**os.environ, "PULUMI_PROJECT": project, "PULUMI_STACK": stack,
           "PULUMI_DRY_RUN": "true" if dry_run else "false", "PULUMI_ORGANIZATION": organization,
           **({"PULUMI_CONFIG": json.dumps(stack_config)} if stack_config else {})}
    # ConfigureStack carries the config and its secret keys too, and the stack's tags; offline there is no backend to
    # keep tags, so those the CLI derives from the project and config are sent.
    configure = analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=stack, project=project, organization=organization, dry_run=dry_run, config=stack_config,
        config_secret_keys=list(secret_keys),
        tags=dict(stack_tags or {"pulumi:project": project, "pulumi:runtime": "python"}))

    async def session(address: str) -> tuple[analyzer_pb2.AnalyzerInfo, list[analyzer_pb2.AnalyzeDiagnostic]]:
        async with _stub(address) as stub:
            info = await stub.GetAnalyzerInfo(empty_pb2.Empty())
            await stub.ConfigureStack(configure)
            await stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=_policy_config(info, config or {})))
            return info, await _analyze(stub, resources)

    with _pack_process(pack_dir, python or sys.executable, env) as address:
        info, diagnostics = asyncio.run(session(address))
    return PolicyReport(
        pack=f"{info.name}@v{_pack_version(pack_dir) or info.version}",
        violations=[Violation(d.policyName, _LEVEL_NAMES.get(d.enforcementLevel, "advisory"), d.urn, d.message or d.description)
                    for d in diagnostics],
    )


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent() -> None:
    """In the pack's process, before it runs (Linux): the kernel sends it SIGTERM when this process dies, even of a
    signal that runs no `finally` (SIGKILL, or SIGTERM from a cancelled CI job), so no pack server is left behind."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@contextlib.contextmanager
def _pack_process(pack_dir: Path, python: str, env: dict[str, str]) -> Iterator[str]:
    """Start the pack's program as the CLI's analyzer host does; yield the address it serves on."""
    main = pack_dir / "__main__.py"
    if not main.is_file():
        raise PolicyError(f"{pack_dir} has no __main__.py; is it a Python policy pack?")
    # stderr goes to a file: a pack that writes much (warnings, logging) must not fill a pipe and stall.
    stderr = tempfile.TemporaryFile()
    process = subprocess.Popen([python, "-u", str(main)], cwd=pack_dir, env=env, stdout=subprocess.PIPE, stderr=stderr,
                               preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    try:
        line = process.stdout.readline().decode().strip()
        if not line.isdigit():
            process.kill()
            process.wait()
            stderr.seek(0)
            error = stderr.read().decode(errors="replace")[-2000:]
            hint = ""
            if "ModuleNotFoundError" in error:
                hint = (f"\nThe pack runs on {python}, which lacks its requirements ({pack_dir / 'requirements.txt'}): "
                        "install them there (`pip install 'ai-infra[policy]'`), or plan with --no-policy.")
            raise PolicyError(f"policy pack {pack_dir} did not start (printed {line!r}):\n{error}{hint}")
        yield f"127.0.0.1:{line}"
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
        stderr.close()


@contextlib.asynccontextmanager
async def _stub(address: str) -> AsyncIterator[analyzer_pb2_grpc.AnalyzerStub]:
    """An asyncio gRPC client: it keeps many calls in flight for far less client CPU than the sync one's futures."""
    options = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), _STARTUP_SECONDS)
        except asyncio.TimeoutError:
            raise PolicyError(f"policy pack at {address} did not answer within {_STARTUP_SECONDS} s") from None
        yield analyzer_pb2_grpc.AnalyzerStub(channel)


def _policy_config(info: analyzer_pb2.AnalyzerInfo, config: dict[str, Any]) -> dict[str, analyzer_pb2.PolicyConfig]:
    """Reconcile the config file with each policy as the engine does: level from the policy's entry, else
    `all`, else the policy's own; properties from the entry over the schema defaults. Like the engine
    (pulumi/pulumi pkg/resource/analyzer/config.go, parsePolicyPackConfig and applyConfig), `all` and each entry
    take a level (`"mandatory"`) or an object with an `enforcementLevel` (`{"enforcementLevel": "mandatory"}`)."""
    known = {p.name for p in info.policies}
    unknown = sorted(set(config) - known - {"all"})
    if unknown:
        raise PolicyError(f"policy config names unknown policies: {', '.join(unknown)}; the pack has: {', '.join(sorted(known))}")
    default_level, _ = _level_of("policy config 'all'", config.get("all"), None)
    result = {}
    problems: list[str] = []
    for policy in info.policies:
        schema = json_format.MessageToDict(policy.configSchema.properties) if policy.HasField("configSchema") else {}
        properties = {name: prop["default"] for name, prop in schema.items() if isinstance(prop, dict) and "default" in prop}
        level, entry_properties = _level_of(f"policy '{policy.name}'", config.get(policy.name),
                                            default_level or _LEVEL_NAMES[policy.enforcementLevel])
        properties.update(entry_properties)
        problems += [f"{policy.name}: {problem}" for problem in _schema_problems(policy, properties)]
        struct = struct_pb2.Struct()
        struct.update(properties)
        result[policy.name] = analyzer_pb2.PolicyConfig(enforcementLevel=_LEVELS[level], properties=struct)
    if problems:
        raise PolicyError("policy config does not match the policies' schemas:\n  " + "\n  ".join(problems))
    return result


def _level_of(where: str, entry: Any, fallback: str | None) -> tuple[str | None, dict[str, Any]]:
    """The enforcement level and properties of a config entry (`all` or a policy's): a level (`"mandatory"`) or an object
    with an `enforcementLevel` and properties; `fallback` when the entry names no level."""
    if entry is None:
        return fallback, {}
    if isinstance(entry, str):
        level, properties = entry, {}
    elif isinstance(entry, dict):
        level = entry.get("enforcementLevel", fallback)
        properties = {k: v for k, v in entry.items() if k != "enforcementLevel"}
        if "enforcementLevel" in entry and not isinstance(level, str):
            raise PolicyError(f"{where}: enforcementLevel {level!r} is not a valid enforcement level; allowed: {', '.join(_LEVELS)}")
    else:
        raise PolicyError(f"{where}: {entry!r} is not a valid value; give an enforcement level or an object")
    if level is not None and level not in _LEVELS:
        raise PolicyError(f"{where}: enforcement level {level!r}; allowed: {', '.join(_LEVELS)}")
    return level, properties


def _schema_problems(policy: analyzer_pb2.PolicyInfo, properties: dict[str, Any]) -> list[str]:
    """What the engine reports when it validates a policy's properties (defaults, then the config file's) against
    the policy's config schema: an object with its `properties` and `required`."""
    if not policy.HasField("configSchema"):
        return []
    try:
        import jsonschema
    except ModuleNotFoundError:
        raise PolicyError("checking the policy config against the policies' schemas needs jsonschema, part of the "
                          "`policy` extra: install ai-infra[policy] (or jsonschema) where aiinfra runs") from None
    schema: dict[str, Any] = {"type": "object"}
    if policy.configSchema.properties:
        schema["properties"] = json_format.MessageToDict(policy.configSchema.properties)
    if policy.configSchema.required:
        schema["required"] = list(policy.configSchema.required)
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'.'.join(map(str, e.absolute_path)) or 'config'}: {e.message}"
            for e in sorted(validator.iter_errors(properties), key=lambda e: list(map(str, e.absolute_path)))]


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


async def _analyze(stub: analyzer_pb2_grpc.AnalyzerStub, resources: list[dict]) -> list[analyzer_pb2.AnalyzeDiagnostic]:
    """Analyze each resource on its inputs, then the whole stack on the resources' outputs, as the engine does
    (pulumi/pulumi pkg/resource/deploy/step_generator.go: every registration, components, providers and the root
    stack included, goes through `analyzeAll`; `AnalyzeResources` sends every resource's outputs)."""
    requests = _requests(resources)
    diagnostics = await _analyze_resources(stub, requests)
    return diagnostics + await _analyze_stack(stub, requests, resources)


def _requests(resources: list[dict]) -> list[analyzer_pb2.AnalyzeRequest]:
    """One AnalyzeRequest per resource, with its provider's properties (each provider encoded once)."""
    providers = {r["urn"]: _provider(r) for r in resources if r["type"].startswith("pulumi:providers:")}
    return [analyzer_pb2.AnalyzeRequest(type=r["type"], properties=_struct(r["inputs"]), urn=r["urn"], name=r["name"],
                                        options=_options(r), provider=providers.get(_provider_urn(r)))
            for r in resources]


async def _analyze_resources(stub: analyzer_pb2_grpc.AnalyzerStub,
                             requests: list[analyzer_pb2.AnalyzeRequest]) -> list[analyzer_pb2.AnalyzeDiagnostic]:
    """Analyze calls with a few in flight, diagnostics in resource order."""
    gate = asyncio.Semaphore(_IN_FLIGHT)

    async def analyze(request: analyzer_pb2.AnalyzeRequest) -> list[analyzer_pb2.AnalyzeDiagnostic]:
        async with gate:
            response = await stub.Analyze(request)
        for diagnostic in response.diagnostics:
            if not diagnostic.urn:  # the engine attributes a resource's diagnostics to that resource
                diagnostic.urn = request.urn
        return list(response.diagnostics)

    return [d for found in await asyncio.gather(*map(analyze, requests)) for d in found]


async def _analyze_stack(stub: analyzer_pb2_grpc.AnalyzerStub, requests: list[analyzer_pb2.AnalyzeRequest],
                         resources: list[dict]) -> list[analyzer_pb2.AnalyzeDiagnostic]:
    """One AnalyzeStack with every resource, on what a preview reports as its outputs (see outputs.py; components,
    whose registered outputs the plan does not keep, and providers, on their inputs), plus parents and dependencies,
    those of each property too."""
    stack = analyzer_pb2.AnalyzeStackRequest(resources=[
        analyzer_pb2.AnalyzerResource(
            type=q.type, properties=_struct(preview_outputs(r["type"], r["inputs"])) if r["custom"] else q.properties,
            urn=q.urn, name=q.name, options=q.options,
            provider=q.provider if q.HasField("provider") else None, parent=r.get("parent", ""),
            dependencies=r.get("dependencies", []),
            propertyDependencies={key: analyzer_pb2.AnalyzerPropertyDependencies(urns=urns)
                                  for key, urns in r.get("propertyDependencies", {}).items()})
        for q, r in zip(requests, resources)])
    return list((await stub.AnalyzeStack(stack)).diagnostics)


def _pack_version(pack_dir: Path) -> str | None:
    """The CLI takes a Python pack's version from PulumiPolicy.yaml (the SDK itself reports 0.0.1)."""
    import yaml

    try:
        return str((yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text()) or {}).get("version") or "") or None
    except (OSError, yaml.YAMLError):
        return None


def _provider_urn(record: dict) -> str:
    """The provider reference is `<provider urn>::<provider id>`; empty for the default provider."""
    return (record.get("provider") or "").rsplit("::", 1)[0]


def _options(record: dict) -> analyzer_pb2.AnalyzerResourceOptions:
    """The options the engine sends (pulumi/pulumi sdk/go/common/resource/plugin/analyzer_plugin.go,
    marshalResourceOptions): deleteBeforeReplace with whether the program set it, and custom timeouts in seconds,
    zero where unset."""
    delete_before_replace = record.get("deleteBeforeReplace")
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=bool(record.get("protect")), ignoreChanges=list(record.get("ignoreChanges", [])),
        deleteBeforeReplace=bool(delete_before_replace), deleteBeforeReplaceDefined=delete_before_replace is not None,
        additionalSecretOutputs=list(record.get("additionalSecretOutputs", [])),
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(**record.get("customTimeouts", {})),
        parent=record.get("parent", ""), aliases=list(record.get("aliases", [])))


def _provider(record: dict) -> analyzer_pb2.AnalyzerProviderResource:
    return analyzer_pb2.AnalyzerProviderResource(type=record["type"], properties=_struct(record["inputs"]),
                                                 urn=record["urn"], name=record["name"])
