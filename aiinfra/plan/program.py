"""Run a project's real program (its `main`) offline, from its own directory, as the Python language host does."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path

from .project import Project, load_stack_config
from .runtime import PlanResult, run_program


@contextlib.contextmanager
def _program_environment(project: Project) -> Iterator[None]:
    """cwd = project root and the main directory first on sys.path, restored afterwards."""
    old_cwd, old_path = os.getcwd(), list(sys.path)
    main_dir = project.main if project.main.is_dir() else project.main.parent
    before = set(sys.modules)
    os.chdir(project.root)
    sys.path.insert(0, str(main_dir))
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        # A program's own modules register resources at import time: forget them so the next plan reruns them.
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None) or ""
            if file.startswith(str(main_dir) + os.sep):
                del sys.modules[name]


def plan_stack(project: Project, stack: str, organization: str = "organization") -> PlanResult:
    """Plan `stack` of `project`. Program errors propagate (pulumi.RunError carries a user-facing message)."""
    config, secret_keys = load_stack_config(project, stack)
    target = str(project.main)
    with _program_environment(project):
        return run_program(
            lambda: runpy.run_path(target, run_name="__main__"),
            project=project.name,
            stack=stack,
            config=config,
            secret_keys=secret_keys,
            organization=organization,
        )
