"""Run a Pulumi Python program on Pulumi's own mock runtime and record every registration.

The recording monitor sees the engine's RegisterResourceRequest, so the plan holds what the engine and
policy packs would see: wire-form (camelCase) inputs, options and dependencies. Nothing leaves the process.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.proto import engine_pb2, provider_pb2, resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from . import default_providers
from .diagnostics import Diagnostic, RecordingEngine
from .echo import SpecialValue, echo_properties, known_only
from .engine_options import options_of
from .invokes import placeholder_result
from .masking import mask_secrets
from .order import dependency_order
from .secrets import secure_config_as_unknowns
from .stacktrace import apply_error_origins, sdk_stack_traces
from .transforms import EngineTransforms

STACK_TYPE = "pulumi:pulumi:Stack"

UNKNOWN = rpc.UNKNOWN
_GC_GEN0_THRESHOLD = 100_000


@dataclass
class ResourceRecord:
    urn: str
    type: str
    name: str
    parent: str
    provider: str
    custom: bool
    protect: bool
    retainOnDelete: bool
    ignoreChanges: list[str]
    dependencies: list[str]
    inputs: dict[str, Any]
    aliases: list[str] = field(default_factory=list)
    """URNs this resource may have had (its `aliases`, resolved as the engine resolves them): the engine takes a
    resource at one of them for this one, so it is moved, not replaced."""
    deleteBeforeReplace: bool | None = None
    """As the program set it; None when it did not (the provider's schema decides)."""
    replaceOnChanges: list[str] = field(default_factory=list)
    """Input properties whose change replaces the resource instead of updating it, as the program set them."""
    replaceWith: list[str] = field(default_factory=list)
    """URNs whose replacement replaces this resource too (the `replace_with` option)."""
    deletedWith: str = ""
    """URN whose deletion deletes this resource, so the engine does not delete it itself (`deleted_with`); "" for none."""
    additionalSecretOutputs: list[str] = field(default_factory=list)
    customTimeouts: dict[str, float] = field(default_factory=dict)
    """Seconds per operation (create, update, delete, read) the program set, as the engine parses them."""
    propertyDependencies: dict[str, list[str]] = field(default_factory=dict)
    """The URNs each input property depends on, for the properties that depend on any."""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PlanResult:
    project: str
    stack: str
    resources: list[ResourceRecord]
    outputs: dict[str, Any] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)
    """The stack config the program ran with (the engine's flat form), which the policy pack gets too."""
    secret_keys: list[str] = field(default_factory=list)
    stack_tags: dict[str, str] = field(default_factory=dict)
    """The stack's tags as the CLI derives them (stack_tags.py), which the policy pack gets too."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """What the program logged (pulumi.log), in order."""

    def of_type(self, type_: str) -> list[ResourceRecord]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str | None = None) -> ResourceRecord:
        found = [r for r in self.of_type(type_) if name is None or r.name == name]
        if len(found) != 1:
            names = [r.name for r in self.of_type(type_)]
            raise LookupError(f"expected one {type_}{f' named {name}' if name else ''}; found {names}")
        return found[0]

    def to_json(self) -> dict[str, Any]:
        """The plan document (`aiinfra plan --json`). Secret values are masked: each stays a secret (the SDK's
        marker, so a reader still sees it is one) holding `[secret]`. The policy pack gets the records themselves."""
        return {
            "project": self.project,
            "stack": self.stack,
            "resources": [{**r.to_json(), "inputs": mask_secrets(r.inputs)} for r in self.resources],
            "outputs": mask_secrets(self.outputs),
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def wire_to_plain(value: Any) -> Any:
    """Struct-derived JSON with integral floats turned back into ints (Struct numbers are doubles)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [wire_to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: wire_to_plain(v) for k, v in value.items()}
    return value


def _azure_native_outputs(value: Any) -> Any:
    """azure-native takes `userAssignedIdentities` as a list of IDs and returns the ARM map {id: {...}}
    (the provider converts it); echo the output shape, or the SDK cannot resolve the outputs."""
    if isinstance(value, dict):
        return {k: ({i: {} for i in v} if k == "userAssignedIdentities" and isinstance(v, list) else _azure_native_outputs(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_azure_native_outputs(v) for v in value]
    return value


AWS_POLICY_DOCUMENTS = frozenset({"policy", "assumeRolePolicy", "accessPolicies", "policyDocument"})
"""pulumi-aws properties that take a policy as JSON text or as a PolicyDocument object (`Union[str, PolicyDocumentArgs]`
in the SDK) and hold it as JSON text in the resource's state, so their output is typed str."""


def _aws_policy_outputs(outputs: dict[str, Any]) -> dict[str, Any]:
    """The provider returns a policy given as an object as JSON text; echo it so, or the SDK refuses the output."""
    return {k: json.dumps(v) if k in AWS_POLICY_DOCUMENTS and isinstance(v, dict) and "Statement" in v else v
            for k, v in outputs.items()}


class PlanMocks(pulumi.runtime.Mocks):
    """Outputs echo known inputs (as a preview of a create does); invokes get typed placeholders.

    A new resource's ID is `<name>-id`, as if it existed: the view of a preview of a stack that has been deployed,
    where lookups that wait for a resource answer and policies run on what they return. `named_ids=False` answers
    as the engine answers a create in the first preview of a new stack: the ID is unknown, and so is what reads it
    (an input, an `apply`, an invoke that depends on the resource), and the resources an `apply` on it would create
    are not there.
    """

    named_ids = True

    def __init__(self, named_ids: bool | None = None) -> None:
        if named_ids is not None:  # else the class's (a subclass may set it)
            self.named_ids = named_ids

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return self.answer(args.typ, args.name, known_only(dict(args.inputs)))

    def answer(self, type_: str, name: str, outputs: dict[str, Any]) -> tuple[str, dict]:
        """The ID and outputs of a new resource, given its echoed inputs (wire form: secrets wrapped, unknowns kept).
        Override this, not `new_resource`, to answer more: the recording monitor then computes the echo itself."""
        if type_.startswith("azure-native:"):
            outputs = _azure_native_outputs(outputs)
        elif type_.startswith("aws:"):
            outputs = _aws_policy_outputs(outputs)
        return (f"{name}-id" if self.named_ids else ""), outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        return placeholder_result(args.token, dict(args.args), _provider_inputs(args.provider))


def _provider_inputs(reference: str) -> dict[str, Any]:
    """The recorded inputs of the explicit provider an invoke names (`<urn>::<id>`); none for a default provider."""
    providers = getattr(settings.get_monitor(), "provider_inputs", {})
    return providers.get(reference.rsplit("::", 1)[0], {}) if reference else {}


class RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that keeps the engine-level view of each registration.

    Like the engine it also registers a default provider per package for custom resources and remote components
    that name no provider (`pulumi:providers:<pkg>::default_<version>`, configured from the stack's `<pkg>:*`
    config), so policies see the region a resource really deploys to, and refuses one for a package the stack's
    `pulumi:disable-default-providers` lists (default_providers.py). Remote components (built by a provider plugin,
    such as awsx) get unknown outputs: their children exist only where the plugin runs, which a plan cannot do.
    Like the engine, it runs the program's resource transforms before it records a registration (transforms.py).
    """

    def __init__(self, mocks_: pulumi.runtime.Mocks, config: Mapping[str, str] | None = None,
                 secret_keys: Iterable[str] = ()):
        super().__init__(mocks_)
        self.records: list[ResourceRecord] = []
        self._config = dict(config or {})
        self._secret_keys = set(secret_keys)
        self._default_providers: dict[tuple[str, str, str], str] = {}
        self.provider_inputs: dict[str, dict[str, Any]] = {}
        """The inputs of each explicit provider, by URN (what region an invoke through it answers for)."""
        self._lock = threading.Lock()  # the SDK calls RegisterResource from several executor threads
        self._urns: set[str] = set()
        self._transforms = EngineTransforms()
        # PlanMocks answer from the echoed wire form unless a subclass overrides new_resource itself.
        self._echoes = isinstance(mocks_, PlanMocks) and type(mocks_).new_resource is PlanMocks.new_resource

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives the resource (pulumi/sdk/go/common/resource/urn.go, NewURN): the type is prefixed
        with the parent's whole qualified type (`Outer$Inner$type`), except under the root stack, whose children
        carry no prefix. The SDK's MockMonitor keeps only the parent's last type, and the stack's too, so its URNs
        differ from those of a real deployment (and from what `pulumi.create_urn` and aliases compute)."""
        if parent:
            qualified = parent.split("::")[2]
            if qualified != STACK_TYPE:
                type_ = f"{qualified}${type_}"
        return "urn:pulumi:" + "::".join([settings.get_stack(), settings.get_project(), type_, name])

    def Invoke(self, request):  # noqa: N802 (gRPC method name)
        # An argument still unknown (an ARN of a resource the preview creates, inside a list, where the SDK's own
        # check, struct_contains_unknowns, does not look): the result is wholly unknown, as the engine answers an
        # invoke whose inputs are pending creation, instead of a placeholder computed from a sentinel.
        if request.tok != "pulumi:pulumi:getResource" and rpc.contains_unknowns(rpc.deserialize_properties(request.args)):
            return resource_pb2.ResourceInvokeResponse(unknown=True)
        if not request.provider:  # the engine refuses a disabled default provider (source_eval.go getProviderFromSource)
            default_providers.check_allowed(request.tok.split(":", 1)[0], request.tok, self._config)
        return super().Invoke(request)

    def RegisterStackTransform(self, request):  # noqa: N802 (gRPC method name)
        self._transforms.register_stack_transform(request)
        return super().RegisterStackTransform(request)

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        request = self._transforms.apply(request)  # the engine runs transforms before anything else
        inputs = wire_to_plain(json_format.MessageToDict(request.object))
        options = options_of(request)  # before anything is registered: the engine refuses a timeout it can't parse
        urn = self.make_urn(request.parent, request.type, request.name)
        with self._lock:
            if urn in self._urns:  # the engine's check (pkg/diag/errors.go, GetDuplicateResourceURNError)
                raise pulumi.RunError(f"Duplicate resource URN '{urn}'; try giving it a unique name")
            self._urns.add(urn)
        package = request.type.split(":", 1)[0]
        # source_eval.go RegisterResource: a custom resource (not a provider) or a remote component that names no
        # provider, nor one for its package in `providers`, gets the package's default provider.
        provider = request.provider or (request.providers.get(package, "") if request.custom or request.remote else "")
        if (request.custom or request.remote) and not provider and not request.type.startswith("pulumi:"):
            default_providers.check_allowed(package, urn if request.custom else request.type, self._config)
            provider = self._default_provider(package, request.version, request.pluginDownloadURL)
        if request.type.startswith("pulumi:providers:") and request.version:
            # The engine records the plugin version on an explicit provider too (source_eval.go, SetProviderVersion).
            inputs["version"] = default_providers.engine_version(request.version, f"{request.type} '{request.name}'")
        if request.remote:
            response = resource_pb2.RegisterResourceResponse(urn=urn)
            warning = default_providers.remote_component_warning(request.type, request.name)
            engine = settings.get_engine()
            if warning and engine is not None:  # on the component, as the program's own pulumi.log.warn would log it
                engine.Log(engine_pb2.LogRequest(severity=engine_pb2.WARNING, message=warning, urn=urn))
        else:
            response = self._register(request, inputs, urn)
        # The root stack is recorded too: the engine creates it like any other resource.
        self.records.append(ResourceRecord(
            urn=response.urn, type=request.type, name=request.name, parent=request.parent, provider=provider,
            custom=bool(request.custom), protect=bool(request.protect), retainOnDelete=bool(request.retainOnDelete),
            ignoreChanges=list(request.ignoreChanges), dependencies=sorted(request.dependencies),
            inputs=inputs, aliases=self._alias_urns(request, response.urn), **options))
        if request.type.startswith("pulumi:providers:"):
            self.provider_inputs[response.urn] = inputs
        self._transforms.registered(response.urn, request)
        return response

    def _alias_urns(self, request: resource_pb2.RegisterResourceRequest, own: str) -> list[str]:
        """The URNs of the request's aliases other than its own URN `own`: a spec's name, type and parent default to
        the resource's own (pulumi/pulumi pkg/resource/deploy/source_eval.go, resolving alias specs), its stack and
        project to the current ones."""
        urns = list(request.aliasURNs)
        for alias in request.aliases:
            if alias.HasField("urn") or not alias.HasField("spec"):
                urns.append(alias.urn)
                continue
            spec = alias.spec
            parent = "" if spec.noParent else (spec.parentUrn or request.parent)
            urn = self.make_urn(parent, spec.type or request.type, spec.name or request.name)
            if spec.stack or spec.project:
                _, _, rest = urn.split("::", 2)
                urn = f"urn:pulumi:{spec.stack or settings.get_stack()}::{spec.project or settings.get_project()}::{rest}"
            urns.append(urn)
        return sorted(set(urns) - {own})

    def _register(self, request: resource_pb2.RegisterResourceRequest, inputs: dict[str, Any],
                  urn: str) -> resource_pb2.RegisterResourceResponse:
        """The SDK's MockMonitor answer, computed from the wire form when the mocks are PlanMocks that answer with
        `answer` (see echo.py for why); the SDK's own round trip for other mocks and for special values."""
        if request.type == STACK_TYPE or not self._echoes:
            return super().RegisterResource(request)
        try:
            outputs = echo_properties(inputs)
        except SpecialValue:
            return super().RegisterResource(request)
        id_, state = self.mocks.answer(request.type, request.name, outputs)
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        obj = struct_pb2.Struct()
        obj.update(state)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=obj)

    def ReadResource(self, request):  # noqa: N802 (gRPC method name)
        """A read (`Vpc.get(...)`, StackReference) creates nothing and is not recorded. The engine answers it with
        the ID the provider read, which is the one asked for; the SDK leaves the ID unknown in a preview without it.
        The state it read is unknown offline: its outputs stay unknown."""
        if not request.provider and not request.type.startswith("pulumi:providers:"):
            # The engine's message names the type twice here (source_eval.go ReadResource).
            default_providers.check_allowed(request.type.split(":", 1)[0], request.type, self._config, shown=request.type)
        response = super().ReadResource(request)
        if request.id != UNKNOWN:
            response.id = request.id
        return response

    def Call(self, request: resource_pb2.ResourceCallRequest) -> provider_pb2.CallResponse:  # noqa: N802 (gRPC method name)
        """A method call on a component (pulumi-eks `Cluster.get_kubeconfig()`, any `pulumi.runtime.call`). The engine
        passes it to the provider plugin that implements the method (pkg/resource/deploy/source_eval.go, resmon.Call),
        which a plan cannot run; the SDK's MockMonitor has no Call at all. The result is unknown, as in a preview of a
        component that does not exist yet: the return holds an unknown value, so the SDK's `call()`
        (pulumi/runtime/invoke.py) resolves an unknown Output. An empty return would resolve a known None instead."""
        ret = struct_pb2.Struct()
        ret.update({"result": UNKNOWN})
        return provider_pb2.CallResponse(**{"return": ret})

    def _default_provider(self, package: str, version: str, url: str = "") -> str:
        """The reference (`<urn>::<id>`) of the package's default provider, recorded on first use. The engine keeps
        one per package, version and plugin download URL (ProviderRequest.String)."""
        key = (package, version, default_providers.trim_url(url))
        with self._lock:
            if key not in self._default_providers:
                self._default_providers[key] = self._record_default_provider(package, version, key[2])
        return self._default_providers[key]

    def _record_default_provider(self, package: str, version: str, url: str = "") -> str:
        """Record the provider the engine would register, configured from the stack's `<package>:*` config as the
        engine passes it (pkg/resource/deploy/target.go, GetPackageConfig): each value as its config text (JSON for
        an object), marked secret when it is or holds a secure value (whose text is a placeholder: the plan never
        decrypts)."""
        name = default_providers.default_provider_name(package, version, url)
        type_ = f"pulumi:providers:{package}"
        urn = self.make_urn("", type_, name)
        inputs = default_providers.default_provider_inputs(package, version, self._config, self._secret_keys)
        self.records.append(ResourceRecord(
            urn=urn, type=type_, name=name, parent="", provider="", custom=True, protect=False,
            retainOnDelete=False, ignoreChanges=[], dependencies=[], inputs=inputs))
        return f"{urn}::{UNKNOWN}"


def run_program(
    program: Callable[[], Any],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None = None,
    secret_keys: Iterable[str] = (),
    organization: str = "organization",
    mocks_: pulumi.runtime.Mocks | None = None,
    named_ids: bool = True,
) -> PlanResult:
    """Run `program` as a preview on a fresh event loop and fresh mocks; return what it registered.

    `config` uses the engine's flat form: {"<namespace>:<key>": "<string or JSON>"}. `named_ids`: see PlanMocks
    (for the default mocks; mocks passed in answer as they were made).
    """
    secret_keys = list(secret_keys)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    gc_threshold = gc.get_threshold()
    # A plan allocates ~10^6 short-lived futures and Outputs on top of ~10^6 long-lived SDK objects; with the
    # default gen-0 threshold (700) the collector rescans the long-lived heap so often that it took over half
    # of a prod plan's time (bench/plan_speed.py). Collect less often while the program runs.
    gc.set_threshold(max(gc_threshold[0], _GC_GEN0_THRESHOLD), *gc_threshold[1:])
    try:
        settings.reset_options()
        pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys))
        monitor = RecordingMonitor(mocks_ or PlanMocks(named_ids), config, secret_keys)
        pulumi.runtime.set_mocks(monitor.mocks, project=project, stack=stack, preview=True, monitor=monitor, organization=organization)
        engine = RecordingEngine()
        settings.SETTINGS.engine = engine  # set_mocks takes no engine; it would send the program's log to `logging`
        outputs: dict[str, Any] = {}

        async def body() -> None:
            await _maybe_await(program())
            root = settings.get_root_resource()
            exported = getattr(root, "outputs", {}) if root is not None else {}
            struct = await rpc.serialize_properties(exported, {})
            outputs.update(wire_to_plain(json_format.MessageToDict(struct)))

        with sdk_stack_traces(), secure_config_as_unknowns(), apply_error_origins():
            _sync_await(run_pulumi_func(lambda: body()))
        stacks = [r.urn for r in monitor.records if r.type == STACK_TYPE]  # registered before anything else
        resources = dependency_order(monitor.records, _urn, lambda record: [*stacks, *_after(record)])
        return PlanResult(project=project, stack=stack, resources=resources, outputs=outputs,
                          config=dict(config or {}), secret_keys=secret_keys, diagnostics=engine.diagnostics)
    except BaseException:
        loop.set_exception_handler(_unless_never_retrieved)
        raise
    finally:
        gc.set_threshold(*gc_threshold)
        pulumi.runtime.set_all_config({}, [])
        settings.reset_options()
        _cancel_pending(loop)
        asyncio.set_event_loop(None)
        loop.close()


def _urn(record: ResourceRecord) -> str:
    return record.urn


def _after(record: ResourceRecord) -> list[str]:
    """The URNs the engine steps through before this resource: its parent, its provider (a reference is
    "<urn>::<id>"), what it depends on, and the resource whose deletion deletes it."""
    provider = record.provider.rsplit("::", 1)[0] if record.provider else ""
    property_dependencies = (urn for urns in record.propertyDependencies.values() for urn in urns)
    return [record.parent, provider, *record.dependencies, *property_dependencies, record.deletedWith]


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a failed program left waiting (the SDK's RPC wrappers of registrations it will never finish), so
    closing the loop does not print "Task was destroyed but it is pending!" under the program's error."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _unless_never_retrieved(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler once its program failed: the futures that failed with it (one per output of each
    resource the error stopped) are never awaited again, and when they are collected, later in a process that goes on
    (tests, the bench), asyncio would log each as "Future exception was never retrieved", an echo of the error
    already raised."""
    if context.get("message") != "Future exception was never retrieved":
        loop.default_exception_handler(context)


async def _maybe_await(value: Any) -> None:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        await value
