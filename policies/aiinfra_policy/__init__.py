"""ai-infra CrossGuard rules. Importable without starting a pack: `pack.build_pack()` starts the server."""


def load_rules():  # noqa: ANN201
    """Import every domain module (each registers its rules) and return the registry."""
    from . import accelerators, aws, aws_stack, azure, crosscloud, endpoints_waf, gcp, gcp_network, kubernetes, tagging  # noqa: F401  (registration side effects)
    from .registry import RULES

    return RULES
