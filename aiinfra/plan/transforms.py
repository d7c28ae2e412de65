"""The engine's part of resource transforms, for the plan's monitor.

A program's transforms (`ResourceOptions(transforms=[...])`, `pulumi.runtime.register_resource_transform`) do not
run in the program: the SDK registers them as callbacks and the engine calls them while it registers each resource,
then uses the props and options they return. The mock monitor runs none of them, so a plan would show resources as
if no transform existed (no tags added by a stack transform, for one). This module does what the engine does
(pkg/resource/deploy/source_eval.go, RegisterResource): it runs the resource's own transforms, then each ancestor's,
nearest first, then the stack's in registration order, each through the SDK's own callback (which deserializes the
props, calls the user's function and serializes its result), and rewrites the registration request with the result.
"""

from __future__ import annotations

import threading

from pulumi.runtime._callbacks import _CallbackServicer
from pulumi.runtime.proto import callback_pb2, resource_pb2
from pulumi.runtime.sync_await import _sync_await

# RegisterResourceRequest field -> TransformResourceOptions field, the options the engine passes to a transform.
_REPEATED = {"dependencies": "depends_on", "ignoreChanges": "ignore_changes", "replaceOnChanges": "replace_on_changes",
             "aliases": "aliases", "additionalSecretOutputs": "additional_secret_outputs", "replace_with": "replace_with"}
_MAPS = {"providers": "providers", "pluginChecksums": "plugin_checksums"}
_SCALARS = {"version": "version", "provider": "provider", "pluginDownloadURL": "plugin_download_url",
            "deletedWith": "deleted_with"}
_OPTIONAL = {"protect": "protect", "retainOnDelete": "retain_on_delete", "customTimeouts": "custom_timeouts"}


def _callback(token: str):  # noqa: ANN202 (the SDK's async callback)
    for servicer in _CallbackServicer._servicers:
        callback = servicer._callbacks.get(token)
        if callback is not None:
            return callback
    raise LookupError(f"no transform callback with token {token}")


def _copy_optional(source, source_field: str, target, target_field: str) -> None:  # noqa: ANN001 (messages)
    """Copy a field with presence (a bool or a message); unset in the source means unset in the target."""
    target.ClearField(target_field)
    if source.HasField(source_field):
        value = getattr(source, source_field)
        if isinstance(value, bool):
            setattr(target, target_field, value)
        else:
            getattr(target, target_field).CopyFrom(value)


def transform_options(request: resource_pb2.RegisterResourceRequest) -> resource_pb2.TransformResourceOptions:
    """The options the engine hands a transform, from the registration request."""
    options = resource_pb2.TransformResourceOptions()
    for source, target in _REPEATED.items():
        getattr(options, target).extend(getattr(request, source))
    for source, target in _MAPS.items():
        getattr(options, target).update(getattr(request, source))
    for source, target in _SCALARS.items():
        setattr(options, target, getattr(request, source))
    for source, target in _OPTIONAL.items():
        _copy_optional(request, source, options, target)
    if request.deleteBeforeReplaceDefined:
        options.delete_before_replace = request.deleteBeforeReplace
    return options


def _apply_options(request: resource_pb2.RegisterResourceRequest, options: resource_pb2.TransformResourceOptions) -> None:
    for source, target in _REPEATED.items():
        del getattr(request, source)[:]
        getattr(request, source).extend(getattr(options, target))
    for source, target in _MAPS.items():
        getattr(request, source).clear()
        getattr(request, source).update(getattr(options, target))
    for source, target in _SCALARS.items():
        setattr(request, source, getattr(options, target))
    for source, target in _OPTIONAL.items():
        _copy_optional(options, target, request, source)
    request.deleteBeforeReplaceDefined = options.HasField("delete_before_replace")
    request.deleteBeforeReplace = options.delete_before_replace


class EngineTransforms:
    """Runs each registration's transforms as the engine does. Thread-safe: the SDK registers from executor threads."""

    def __init__(self) -> None:
        self._own: dict[str, list[str]] = {}  # URN -> the tokens of the transforms declared on that resource
        self._parents: dict[str, str] = {}
        self._stack: list[str] = []
        self._lock = threading.Lock()

    def register_stack_transform(self, callback: callback_pb2.Callback) -> None:
        with self._lock:
            self._stack.append(callback.token)

    def apply(self, request: resource_pb2.RegisterResourceRequest) -> resource_pb2.RegisterResourceRequest:
        """The request with its transforms' props and options: its own, its ancestors' (nearest first), the stack's."""
        tokens = [callback.token for callback in request.transforms]
        with self._lock:
            parent = request.parent
            while parent:
                tokens += self._own.get(parent, [])
                parent = self._parents.get(parent, "")
            tokens += self._stack
        if not tokens:
            return request
        properties, options = request.object, transform_options(request)
        for token in tokens:
            message = resource_pb2.TransformRequest(type=request.type, name=request.name, custom=request.custom,
                                                    parent=request.parent, properties=properties, options=options)
            response = _sync_await(_callback(token)(message.SerializeToString()))
            if response.HasField("properties"):
                properties = response.properties
            if response.HasField("options"):
                options = response.options
        transformed = resource_pb2.RegisterResourceRequest()
        transformed.CopyFrom(request)
        transformed.object.CopyFrom(properties)
        _apply_options(transformed, options)
        return transformed

    def registered(self, urn: str, request: resource_pb2.RegisterResourceRequest) -> None:
        """Remember a registered resource's parent and own transforms, which its children run too."""
        with self._lock:
            self._parents[urn] = request.parent
            if request.transforms:
                self._own[urn] = [callback.token for callback in request.transforms]
