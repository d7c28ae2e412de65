"""Run a project's real program (its `main`) offline, from its own directory, as the Python language host does."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import runpy
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pulumi
import pulumi.runtime
from pulumi.runtime import settings

from .project import Project, load_stack_config
from .runtime import PlanResult, run_program
from .stack_tags import stack_tags
from .stacktrace import ORIGIN


@contextlib.contextmanager
def _program_environment(project: Project) -> Iterator[None]:
    """The working directory and import path the Python language host gives the program, restored afterwards.

    The CLI runs the program from its `main` directory, or from the directory of a `main` file (pkg/engine/project.go
    getPwdMain; pulumi-language-python-exec does `os.chdir(args.pwd)`), so relative paths in it resolve there. The exec
    then calls `runpy.run_path(main)`, which puts a directory `main` first on sys.path while it runs, and adds nothing
    for a `main` file (sdk/python/cmd/pulumi-language-python-exec): run_path runs the directory here too, so the
    import path is Python's own. The program's modules are forgotten afterwards so the next plan runs them again.
    sys.argv is what the exec sets (`sys.argv = [args.PROGRAM] + args.ARGS`): the entry point the CLI passes, "." for a
    directory `main` or the file's name for a file (getPwdMain), and no arguments; aiinfra's own are restored after."""
    old_cwd, old_path, old_argv = os.getcwd(), list(sys.path), sys.argv
    main_dir = project.main if project.main.is_dir() else project.main.parent
    before = set(sys.modules)
    os.chdir(main_dir)
    sys.argv = ["." if project.main.is_dir() else project.main.name]
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.argv = old_argv
        sys.path[:] = old_path
        # A program's own modules register resources at import time: forget them so the next plan reruns them.
        for name in set(sys.modules) - before:
            file = getattr(sys.modules[name], "__file__", None) or ""
            if file.startswith(str(main_dir) + os.sep) and not _installed(file):
                del sys.modules[name]


def _installed(file: str) -> bool:
    """Whether a module file belongs to an installed package, not to the program: a project keeps its virtualenv in
    its own directory (`virtualenv: venv`, as the templates do), and a provider SDK imported from there must stay
    imported, since importing it again re-registers its package with the SDK, which refuses that."""
    parts = Path(file).parts
    return "site-packages" in parts or "dist-packages" in parts or \
        any(file.startswith(prefix + os.sep) for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix})


def plan_stack(project: Project, stack: str, organization: str = "organization", new_stack: bool = False) -> PlanResult:
    """Plan `stack` of `project` in `organization` (what `pulumi.get_organization()` returns); `new_stack` as the first
    preview of a new stack (new resources' IDs unknown, see PlanMocks). Program errors propagate (pulumi.RunError
    carries a user-facing message)."""
    config, secret_keys = load_stack_config(project, stack)
    tags = stack_tags(project, stack)
    target = str(project.entry_point())

    def program() -> None:
        # The language host passes the project root (where Pulumi.yaml is) to the exec (--root_directory), which sets
        # it for pulumi.get_root_directory(); run_program has just reset the settings, so set it as the program starts.
        settings.SETTINGS.root_directory = str(project.root)
        _run_main(target)

    with _program_environment(project):
        result = run_program(
            program,
            project=project.name,
            stack=stack,
            config=config,
            secret_keys=secret_keys,
            organization=organization,
            named_ids=not new_stack,
        )
    result.stack_tags = tags
    return result


def _run_main(target: str) -> None:
    """Run the program as `__main__`. A `sys.exit()` in it ends the program, as it ends the process of the Python
    language host: with status 0 or None what it registered so far is the plan; any other status fails the plan
    with a message (SystemExit would otherwise escape the event loop and leave it running)."""
    try:
        runpy.run_path(target, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            detail = f"exited with status {exit_.code}" if isinstance(exit_.code, int) else f"called sys.exit: {exit_.code}"
            raise pulumi.RunError(f"the program {detail}") from None


# What runs a program without being part of it: this package, the event loop and its thread pool, runpy and the
# SDK's runtime (its loop driver, and the registration path through which the engine calls a program's transforms).
_HARNESS = (*(str(directory) + os.sep for directory in (
    Path(__file__).resolve().parents[1], Path(asyncio.__file__).parent, Path(concurrent.futures.__file__).parent,
    Path(pulumi.runtime.__file__).parent)), runpy.__file__, "<frozen runpy>")


def program_traceback(err: BaseException) -> str:
    """The traceback of a program's error from its first frame outside the harness that ran it, so it starts in
    the user's code (or in the SDK code the program called). Nothing when no frame is the program's (an SDK error
    while serializing what an apply returned, an exception in a coroutine given to Output.from_input): the harness's
    frames say nothing about the program, and the error's text, which the CLI prints, is all there is."""
    tb = getattr(err, ORIGIN, None) or err.__traceback__  # an apply callback's error: the frames it was raised in
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_HARNESS):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(err), err, tb)) if tb is not None else ""
