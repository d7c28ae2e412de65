"""The offline plan: run a Pulumi program on the mock runtime and record what `pulumi preview` would create."""
