"""An ai-infra environment: read `ai-infra:platform`, validate it, build the platform, export its outputs."""

import pulumi

from components.compose import build_platform, load_from_config

spec = load_from_config()
for key, value in build_platform(spec).items():
    pulumi.export(key, value)
