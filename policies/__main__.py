"""Builds the ai-infra policy pack; the rules live in the importable `aiinfra_policy` package."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aiinfra_policy.pack import build_pack  # noqa: E402

build_pack()
