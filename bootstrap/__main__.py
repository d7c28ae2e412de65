"""State and secrets bootstrap: per cloud, a private, versioned, CMK-encrypted state bucket and the key for
the `awskms://`, `gcpkms://` or `azurekeyvault://` secrets provider. Exports the exact `pulumi login` URL
and `--secrets-provider` string. Every resource is protected (`protect`): losing any of them loses or locks every
stack's state. All but the Azure admins' and readers' role assignments are also retained if removed from the program
(`retain_on_delete`); those are deleted once unprotected, so removing a principal revokes its access.
This project's own state stays in the local backend (`backend.url` in Pulumi.yaml)."""

import pulumi

config = pulumi.Config()
prefix = config.require("prefix")
clouds = config.require_object("clouds")
allowed = {"aws", "gcp", "azure"}
if not isinstance(clouds, list) or not clouds or set(clouds) - allowed:
    raise pulumi.RunError(f"{config.full_key('clouds')}: got {clouds}; allowed: a non-empty list of {', '.join(sorted(allowed))}")

# Check every setting before registering anything, so a bad one leaves nothing half-created.
if "aws" in clouds:
    import state_aws

    state_aws.check(config.full_key("prefix"), prefix)
if "gcp" in clouds:
    import state_gcp

    gcp_project_number = state_gcp.check(config.full_key("prefix"), prefix)
if "azure" in clouds:
    import state_azure

    azure_admins = state_azure.read_admins(config)
    azure_readers = state_azure.read_readers(config, azure_admins)

if "aws" in clouds:
    state_aws.build(prefix)
if "gcp" in clouds:
    state_gcp.build(prefix, config.get("gcpRegion") or "us-central1", gcp_project_number)
if "azure" in clouds:
    state_azure.build(prefix, config.get("azureLocation") or "eastus2", azure_admins, config.full_key(state_azure.ADMINS),
                      azure_readers)
