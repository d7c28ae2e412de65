"""State and secrets bootstrap: per cloud, a private, versioned, CMK-encrypted state bucket and the key for
the `awskms://`, `gcpkms://` or `azurekeyvault://` secrets provider. Exports the exact `pulumi login` URL
and `--secrets-provider` string. Everything is protected: losing it loses every stack's state."""

import pulumi

config = pulumi.Config()
prefix = config.require("prefix")
clouds = config.require_object("clouds")
allowed = {"aws", "gcp", "azure"}
if not clouds or set(clouds) - allowed:
    raise pulumi.RunError(f"clouds: got {clouds}; allowed: a non-empty list of {', '.join(sorted(allowed))}")
if "aws" in clouds:
    import state_aws

    state_aws.build(prefix)
if "gcp" in clouds:
    import state_gcp

    state_gcp.build(prefix, config.get("gcpRegion") or "us-central1")
if "azure" in clouds:
    import state_azure

    state_azure.build(prefix, config.get("azureLocation") or "eastus2")
