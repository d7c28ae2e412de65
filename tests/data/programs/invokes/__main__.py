"""Uses invokes the way real programs do: index AZ names, read the caller's account, look up an AMI."""

import pulumi
import pulumi_aws as aws

import naming

config = pulumi.Config()
zones = aws.get_availability_zones(state="available")
identity = aws.get_caller_identity()
ami = aws.ec2.get_ami(most_recent=True, owners=["amazon"],
                      filters=[aws.ec2.GetAmiFilterArgs(name="name", values=["al2023-ami-*"])])
vpc = aws.ec2.Vpc("vpc", cidr_block="10.1.0.0/16")
for index, zone in enumerate(zones.names[:2]):
    aws.ec2.Subnet(naming.subnet(config.require("prefix"), index), vpc_id=vpc.id,
                   cidr_block=f"10.1.{index}.0/24", availability_zone=zone)
aws.ec2.Instance("web", ami=ami.id, instance_type="t3.micro", associate_public_ip_address=True,
                 tags={"account": identity.account_id})
pulumi.export("password", config.require_secret("dbPassword"))
pulumi.export("zone", zones.names[0])
