"""The rules for public IPs that come from a subnet, an access config or a NIC, and for NodePort Services (issue 7):
the cases beyond test_rules.py's one compliant and one violating case per rule."""

from __future__ import annotations

import pytest
from policy_helpers import UNKNOWN, run_resource, unknown_reported

SUBNET = "aws:ec2/subnet:Subnet"
GCE = "gcp:compute/instance:Instance"
NIC = "azure-native:network:NetworkInterface"
VM = "azure-native:compute:VirtualMachine"
VMSS = "azure-native:compute:VirtualMachineScaleSet"
SERVICE = "kubernetes:core/v1:Service"


def inline_nic(public: bool) -> dict:
    """A VM or scale-set NIC created inline (networkInterfaceConfigurations), with or without a public IP config."""
    config = {"name": "ipconfig", "subnet": {"id": "/s"}}
    if public:
        config["publicIPAddressConfiguration"] = {"name": "pip", "sku": {"name": "Standard"}}
    return {"networkInterfaceConfigurations": [{"name": "nic", "ipConfigurations": [config]}]}


@pytest.mark.parametrize(("name", "type_", "props", "path"), [
    ("aws-subnet-no-public-ip-on-launch", SUBNET, {"mapPublicIpOnLaunch": UNKNOWN}, "mapPublicIpOnLaunch"),
    ("gcp-compute-no-public-ip", GCE, {"networkInterfaces": UNKNOWN}, "networkInterfaces"),
    ("gcp-compute-no-public-ip", GCE, {"networkInterfaces": [{"network": "n", "accessConfigs": UNKNOWN}]}, "accessConfigs"),
    ("azure-vm-no-public-ip", NIC, {"ipConfigurations": UNKNOWN}, "ipConfigurations"),
    ("azure-vm-no-public-ip", NIC, {"ipConfigurations": [{"name": "c", "publicIPAddress": UNKNOWN}]}, "publicIPAddress"),
    ("k8s-no-nodeport-services", SERVICE, {"spec": {"type": UNKNOWN}}, "spec.type"),
])
def test_unknown_values_are_reported_not_passed(name: str, type_: str, props: dict, path: str) -> None:
    assert path in unknown_reported(name, type_, props)


def test_a_subnet_that_sets_nothing_gives_no_public_ips() -> None:
    # CreateSubnet's MapPublicIpOnLaunch defaults to false for subnets you create
    assert run_resource("aws-subnet-no-public-ip-on-launch", SUBNET, {"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/24"}) == []


@pytest.mark.parametrize("type_", ["gcp:compute/instanceTemplate:InstanceTemplate",
                                   "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate",
                                   "gcp:compute/instanceFromTemplate:InstanceFromTemplate"])
def test_templates_with_an_access_config_are_reported(type_: str) -> None:
    props = {"networkInterfaces": [{"subnetwork": "s"}, {"subnetwork": "t", "accessConfigs": [{"natIp": "34.1.2.3"}]}]}
    assert run_resource("gcp-compute-no-public-ip", type_, props) == [
        "network interface 1 has accessConfigs, so the VM gets an external IPv4 address"]
    assert run_resource("gcp-compute-no-public-ip", type_, {"networkInterfaces": [{"subnetwork": "s", "accessConfigs": []}]}) == []


def test_an_external_ipv6_access_config_is_reported() -> None:
    props = {"networkInterfaces": [{"subnetwork": "s", "stackType": "IPV4_IPV6",
                                    "ipv6AccessConfigs": [{"networkTier": "PREMIUM"}]}]}
    assert run_resource("gcp-compute-no-public-ip", GCE, props) == [
        "network interface 0 has ipv6AccessConfigs, so the VM gets an external IPv6 address"]


def test_a_public_ip_attached_through_an_unknown_id_is_still_reported() -> None:
    # During preview the PublicIPAddress's id is unknown, but the attachment itself is known
    props = {"ipConfigurations": [{"name": "ipconfig", "publicIPAddress": {"id": UNKNOWN}}]}
    assert run_resource("azure-vm-no-public-ip", NIC, props) == ["IP configuration ipconfig attaches a public IP address"]


def test_a_public_ip_address_resource_alone_is_not_this_rules_concern() -> None:
    # NAT gateways, load balancers and Bastion need PublicIPAddress resources; only the NIC attachment exposes a VM
    assert run_resource("azure-vm-no-public-ip", "azure-native:network:PublicIPAddress",
                        {"publicIPAllocationMethod": "Static", "sku": {"name": "Standard"}}) == []


def test_inline_vm_and_scale_set_nics_with_public_ips_are_reported() -> None:
    message = "NIC nic IP configuration ipconfig creates a public IP address"
    assert run_resource("azure-vm-no-public-ip", VM, {"networkProfile": inline_nic(True)}) == [message]
    assert run_resource("azure-vm-no-public-ip", VM, {"networkProfile": inline_nic(False)}) == []
    assert run_resource("azure-vm-no-public-ip", VMSS, {"virtualMachineProfile": {"networkProfile": inline_nic(True)}}) == [message]
    assert run_resource("azure-vm-no-public-ip", VMSS, {"virtualMachineProfile": {"networkProfile": inline_nic(False)}}) == []
    # a VM that references existing NICs (networkInterfaces[].id) is judged on those NetworkInterface resources
    assert run_resource("azure-vm-no-public-ip", VM, {"networkProfile": {"networkInterfaces": [{"id": "/nic"}]}}) == []


@pytest.mark.parametrize(("spec", "flagged"), [({}, False), ({"type": "ClusterIP"}, False), ({"type": "LoadBalancer"}, False),
                                               ({"type": "ExternalName", "externalName": "db.example.com"}, False),
                                               ({"type": "NodePort"}, True)])
def test_only_nodeport_services_are_reported(spec: dict, flagged: bool) -> None:
    found = run_resource("k8s-no-nodeport-services", SERVICE, {"metadata": {"name": "web"}, "spec": spec})
    assert bool(found) is flagged, found


INSTANCE = "aws:ec2/instance:Instance"


@pytest.mark.parametrize(("props", "public"), [
    ({"ami": "ami-1", "instanceType": "t3.micro"}, True),  # no subnet: a default subnet, public IP by default
    ({"ami": "ami-1", "associatePublicIpAddress": False}, False),
    ({"ami": "ami-1", "subnetId": "subnet-1"}, False),
    ({"ami": "ami-1", "subnetId": UNKNOWN}, False),  # a subnet created in the same program: named, just not known yet
    ({"ami": "ami-1", "networkInterfaces": [{"networkInterfaceId": "eni-1", "deviceIndex": 0}]}, False),
])
def test_an_instance_that_names_no_subnet_lands_in_the_default_vpc(props: dict, public: bool) -> None:
    found = run_resource("aws-ec2-no-public-ip", INSTANCE, props)
    assert bool(found) is public, found
    if public:
        assert found == ["the instance names no subnet, so it launches in a default subnet of the default VPC, where "
                         "instances get a public IP address unless associatePublicIpAddress is false"]


def test_a_launch_template_without_a_subnet_is_not_flagged() -> None:
    # The subnet comes from the Auto Scaling group or node group that uses the template.
    assert run_resource("aws-ec2-no-public-ip", "aws:ec2/launchTemplate:LaunchTemplate", {"imageId": "ami-1"}) == []


def test_ssh_and_rdp_open_to_ipv6_anywhere_are_reported() -> None:
    inline = {"ingress": [{"protocol": "tcp", "fromPort": 22, "toPort": 22, "ipv6CidrBlocks": ["::/0"]}]}
    assert run_resource("aws-security-group-no-open-admin-ingress", "aws:ec2/securityGroup:SecurityGroup", inline) == [
        "ingress from ::/0 to port 22"]
    rule = {"ipProtocol": "tcp", "fromPort": 3389, "toPort": 3389, "cidrIpv6": "::/0"}
    assert run_resource("aws-security-group-no-open-admin-ingress", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                        rule) == ["ingress from ::/0 to port 3389"]
    scoped = {**rule, "cidrIpv6": "2001:db8::/32"}
    assert run_resource("aws-security-group-no-open-admin-ingress", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
                        scoped) == []


@pytest.mark.parametrize(("nics", "expected"), [
    ([{"associatePublicIpAddress": "true"}], ["a network interface gets a public IP address"]),
    ([{"associatePublicIpAddress": "True"}], ["a network interface gets a public IP address"]),
    ([{"associatePublicIpAddress": "false"}], []),
    ([{"deviceIndex": 0}], []),
])
def test_launch_template_network_interfaces_with_a_public_ip_are_reported(nics: list, expected: list) -> None:
    # EKS node groups and autoscaling groups launch every instance from the template's interfaces.
    assert run_resource("aws-ec2-no-public-ip", "aws:ec2/launchTemplate:LaunchTemplate", {"networkInterfaces": nics}) == expected


def test_a_public_default_object_acl_is_reported() -> None:
    # defaultAcl applies to every object written to the bucket later.
    assert run_resource("gcp-no-public-iam-members", "gcp:storage/bucketACL:BucketACL", {"bucket": "b", "defaultAcl": "publicRead"}) == [
        "grants READER (defaultAcl publicRead) to allUsers"]
    assert run_resource("gcp-no-public-iam-members", "gcp:storage/defaultObjectACL:DefaultObjectACL",
                        {"bucket": "b", "roleEntities": ["OWNER:project-owners-1", "READER:allAuthenticatedUsers"]}) == [
        "grants READER to allAuthenticatedUsers"]
    assert run_resource("gcp-no-public-iam-members", "gcp:storage/bucketACL:BucketACL", {"bucket": "b", "defaultAcl": "private"}) == []
