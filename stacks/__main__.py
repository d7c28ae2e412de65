"""An ai-infra environment: read `ai-infra:platform`, validate it, build the platform, export its outputs."""

from components.compose import deploy, load_from_config

deploy(load_from_config())
