"""Pure planning logic (CIDR plans, naming). Imports no Pulumi and no cloud SDK."""
