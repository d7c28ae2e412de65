"""What the AWS rules read from EC2 resources: the EBS volumes of launch templates, instances, spot requests and
volumes, the account's EBS encryption by default and default EBS key they fall back on, which KMS keys are AWS-managed,
and the stack part of instance rules for an instance launched from a launch template outside the stack. No rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .pools import LAUNCH_TEMPLATE, outside_template
from .props import Unknowns, get, is_unknown, items, need, of_type, provider_props
from .registry import Context

INSTANCE, SPOT_INSTANCE = "aws:ec2/instance:Instance", "aws:ec2/spotInstanceRequest:SpotInstanceRequest"
INSTANCES = (INSTANCE, SPOT_INSTANCE)
"""Resources that launch an EC2 instance from their own arguments (a spot request takes the same ones)."""
EBS_VOLUME = "aws:ebs/volume:Volume"
ROOT_DEVICES = ("/dev/xvda", "/dev/sda1")
"""The root device names of EC2 AMIs (Amazon Linux and most Linux AMIs use /dev/xvda; Ubuntu, Windows and others
/dev/sda1): a launch template maps no root volume unless it names one of them."""
ENCRYPTION_BY_DEFAULT = "aws:ebs/encryptionByDefault:EncryptionByDefault"
DEFAULT_KMS_KEY = "aws:ebs/defaultKmsKey:DefaultKmsKey"
_AWS_MANAGED_KEY = re.compile(r"(^|:)alias/aws/")


def aws_managed_key(key: Any) -> bool:
    """Whether a KMS key reference names an AWS-managed key by its alias (alias/aws/s3, alias/aws/ebs, or an ARN
    ending in one): those are not customer-managed. (A bare key ID or key ARN can't be told apart here.)"""
    return isinstance(key, str) and bool(_AWS_MANAGED_KEY.search(key))


def known_output(props: Any, path: str) -> Any:
    """An output at `path`; None when unknown (in preview: computed, as the program left it unset)."""
    value = get(props, path)
    return None if is_unknown(value) else value


def _encrypted(value: Any) -> bool | None:
    """An EBS `encrypted` setting: a bool on instances and volumes, a "true"/"false" string in launch templates;
    None when unset (the volume then takes the snapshot's or the account's default encryption)."""
    return None if value is None else str(value).lower() == "true"


def ebs_volumes(type_: str, props: Any, outputs: bool = False) -> Iterator[tuple[str, bool | None, Any]]:
    """(label, encrypted, kmsKeyId) of each EBS volume a launch template, instance, spot request or volume declares.
    An instance without rootBlockDevice or launchTemplate gets its root volume from the AMI: (label, None, None).
    With `outputs` (a stack rule's view), an instance's or volume's value unknown during preview is one the provider
    computes because the program left it unset: read as unset rather than raising Unknown. (A template computes none.)"""
    lenient = outputs and type_ != LAUNCH_TEMPLATE

    def read(node: Any, path: str) -> Any:
        value = get(node, path)
        return None if lenient and is_unknown(value) else need(node, path)

    def each(path: str) -> Iterator[Any]:
        if lenient:
            value = get(props, path)
            yield from (e for e in (value if isinstance(value, list) else []) if not is_unknown(e))
        else:
            yield from items(props, path)

    if type_ == LAUNCH_TEMPLATE:
        for mapping in each("blockDeviceMappings"):
            if get(mapping, "ebs") is None:
                continue  # an instance-store volume (virtualName ephemeralN) or a suppressed one (noDevice): no EBS
            yield f"volume {get(mapping, 'deviceName', '?')}", _encrypted(read(mapping, "ebs.encrypted")), get(mapping, "ebs.kmsKeyId")
    elif type_ in INSTANCES:
        if read(props, "rootBlockDevice") is not None:
            yield "root volume", _encrypted(read(props, "rootBlockDevice.encrypted")), get(props, "rootBlockDevice.kmsKeyId")
        elif not get(props, "launchTemplate"):  # else the template's mappings give the root volume
            yield "the AMI's root volume (no rootBlockDevice)", None, None
        for device in each("ebsBlockDevices"):
            yield f"EBS volume {get(device, 'deviceName', '?')}", _encrypted(read(device, "encrypted")), get(device, "kmsKeyId")
    elif type_ == EBS_VOLUME:
        yield "the volume", _encrypted(read(props, "encrypted")), get(props, "kmsKeyId")


def outside_template_part(judge: Callable[[Any, str], Iterator[str]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give an instance rule the part only the stack can do (registry.Rule.stack_check, which server.TypedAnalyzer runs
    in AnalyzeStack under the rule's name and level): an instance or spot request launched from a launch template that
    is not in the stack, which no rule sees, is judged by `judge(outputs, "launch template <id>")` on what it sets
    itself. Its outputs hold, unknown in preview, what the program left unset, and after `pulumi up` what EC2 made of
    it (the template's settings)."""

    def attach(check: Callable[..., Any]) -> Callable[..., Any]:
        def part(resources: list[Any], ctx: Context) -> Iterator[tuple[str, str]]:
            templates, unknowns = of_type(resources, LAUNCH_TEMPLATE), Unknowns()
            for r in resources:
                with unknowns.skip():
                    if r.resource_type in INSTANCES and (template := outside_template(r, templates)) is not None:
                        for message in judge(r.props, template):
                            yield r.urn, message
            unknowns.raise_first()

        check.stack_check = part  # type: ignore[attr-defined]
        return check

    return attach


def region_of(resource: Any) -> str | None:
    """The resource's known region: its own `region`, else its provider's."""
    for value in (get(resource.props, "region"), get(provider_props(resource), "region")):
        if isinstance(value, str) and not is_unknown(value):
            return value
    return None


def in_region(resources: list[Any], region: str | None) -> list[Any]:
    """The account settings of `resources` that apply in `region` (the setting is per account and region); one whose
    region or the volume's is not known counts."""
    return [r for r in resources if region is None or (theirs := region_of(r)) is None or theirs == region]


EBS_DEFAULT_MODES = ("off", "aws_managed_key", "customer_key")
EBS_DEFAULT_ENCRYPTION = {"ebsDefaultEncryption": {
    "type": "string", "enum": list(EBS_DEFAULT_MODES), "default": "off",
    "description": "The account's EBS encryption by default and default EBS key in the stack's regions, when another "
                   "stack or the landing zone sets them (CIS AWS 2.2.1 is that account setting): off (new volumes that "
                   "leave encryption unset are unencrypted; the default key is the AWS-managed aws/ebs), "
                   "aws_managed_key (they are encrypted, with aws/ebs), customer_key (encrypted, with a "
                   "customer-managed default key set by ec2:ModifyEbsDefaultKmsKeyId or aws.ebs.DefaultKmsKey). The "
                   "default key also encrypts volumes that set encrypted true without kmsKeyId. An "
                   "aws.ebs.EncryptionByDefault and an aws.ebs.DefaultKmsKey in the stack decide for their region "
                   "instead."}}
"""Config of `aws-ebs-default-encryption`. EC2 encrypts a volume created with encrypted true and no KMS key with the
account's default EBS key, and, when encryption by default is on, a volume that leaves encrypted unset too (EC2 user
guide, Amazon EBS encryption): only the account knows that key."""


def ebs_default_mode(ctx: Context) -> str:
    """The rule's `ebsDefaultEncryption` (off for a value outside the enum, which the engine's schema check rejects)."""
    mode = ctx.config.get("ebsDefaultEncryption", "off")
    return mode if mode in EBS_DEFAULT_MODES else "off"


def default_key(mode: str, keys: list[Any], region: str | None) -> tuple[bool, str]:
    """(whether the account's default EBS key in `region` is customer-managed; where that comes from). EC2 encrypts
    with it every volume created encrypted without a KMS key, whether or not encryption by default is on. An
    aws.ebs.DefaultKmsKey of the stack for the region names it (one whose keyArn is not known yet is the ARN of a key
    the stack makes: customer-managed); else the rule's ebsDefaultEncryption (customer_key: customer-managed)."""
    named = in_region(keys, region)
    if named:
        return all(is_unknown(k := get(d.props, "keyArn")) or not aws_managed_key(k) for d in named), "aws.ebs.DefaultKmsKey"
    return mode == "customer_key", f"ebsDefaultEncryption {mode}"


def account_default(mode: str, defaults: list[Any], keys: list[Any], region: str | None) -> tuple[str, str]:
    """(off, aws_managed_key or customer_key; where that comes from) for volumes of `region` that leave encryption
    unset. An aws.ebs.EncryptionByDefault of the stack for the region decides whether they are encrypted (enabled
    defaults to true), `default_key` with which key; the rule's ebsDefaultEncryption stands for what the stack does
    not declare."""
    declared = in_region(defaults, region)
    if declared:
        enabled = any(need(d.props, "enabled", True) is True for d in declared)
        source = f"the stack's aws.ebs.EncryptionByDefault{' for ' + region if region else ''}"
    else:
        enabled, source = mode != "off", f"ebsDefaultEncryption {mode}"
    if not enabled:
        return "off", source
    customer, key_source = default_key(mode, keys, region)
    return ("customer_key" if customer else "aws_managed_key"), source if key_source == source else f"{source} and {key_source}"


def maps_root(props: Any) -> bool:
    """Whether a launch template maps an EBS root volume (a mapping whose device name is unknown counts). Its mappings
    are known here: `ebs_volumes` read them first."""
    return any(get(m, "ebs") is not None and (is_unknown(d := get(m, "deviceName")) or d in ROOT_DEVICES)
               for m in items(props, "blockDeviceMappings"))


def names_no_key(volume_of: Any, key: Any) -> bool:
    """Whether an encrypted volume of `volume_of` names no KMS key. A template's outputs are its inputs: an unknown key
    is one the program set. An instance's or volume's key left unset is computed, unknown in preview like the ARN of a
    key made in the same update, which its property's dependency on a KMS resource tells apart."""
    if not is_unknown(key):
        return not key
    if volume_of.resource_type == LAUNCH_TEMPLATE:
        return False
    found = getattr(volume_of, "property_dependencies", None) or {}
    deps = [d for prop in ("kmsKeyId", "rootBlockDevice", "ebsBlockDevices") for d in found.get(prop) or []]
    return not any(str(getattr(d, "resource_type", "")).startswith("aws:kms/") for d in deps)
