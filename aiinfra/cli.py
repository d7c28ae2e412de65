"""`aiinfra`: offline plans, the accelerator catalog and the platform schema.

Heavy imports (pulumi, provider SDKs, pydantic) happen inside the commands, so `aiinfra --help` starts fast.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

EXIT_ERROR = 1
EXIT_MANDATORY_VIOLATION = 2
EXIT_INTERRUPTED = 130  # the shells' code for a process ended by SIGINT
REPO_ROOT = Path(__file__).resolve().parents[1]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # Exit code 2 means "mandatory policy violations"; usage errors use 1 like other user errors.
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="aiinfra", description="ai-infra: AI infrastructure on AWS, GCP and Azure with Pulumi.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    plan = sub.add_parser("plan", help="run a stack's program offline and show what `pulumi preview` would create",
                          description="Runs the real program on Pulumi's mock runtime (no credentials, nothing leaves the process), "
                                      "prints a summary and evaluates the policy pack over the Analyzer protocol. "
                                      "Exit codes: 0 ok, 1 invalid config or program error, 2 mandatory policy violations.")
    plan.add_argument("--stack", "-s", required=True, help="stack name: reads Pulumi.<stack>.yaml from the project's stackConfigDir")
    plan.add_argument("--program", metavar="DIR", help="plan any Pulumi Python project in DIR instead of ai-infra's own")
    plan.add_argument("--json", metavar="FILE", help="write the plan (resources, outputs, policy verdicts) as JSON")
    plan.add_argument("--policy-pack", metavar="DIR", help="policy pack to evaluate (default: ai-infra's policies/)")
    plan.add_argument("--policy-config", metavar="FILE", help="policy config JSON (default: the pack's config/<stack>.json for the project that holds the pack, "
                           "else config/baseline.json)")
    plan.add_argument("--no-policy", action="store_true", help="skip policy evaluation")
    plan.add_argument("--new-stack", action="store_true",
                      help="plan as the first preview of a new stack: new resources' IDs are unknown, and so is what waits "
                           "for them (default: a placeholder ID, as if they existed)")
    plan.add_argument("--diff", metavar="BASE_JSON", help="compare with a base plan JSON (from --json) and show added/changed/removed")
    plan.add_argument("--markdown", metavar="FILE", help="write a pull-request comment body (summary, diff, policy verdicts)")
    plan.add_argument("--quiet", "-q", action="store_true", help="don't print the summary")

    catalog = sub.add_parser("catalog", help="list accelerator instance types, TPU machine types and Lustre tiers")
    catalog.add_argument("--json", action="store_true", help="print a JSON list (of the machine types, or with --lustre of the Lustre tiers)")
    catalog.add_argument("--cloud", choices=["aws", "gcp", "azure"], help="only this cloud")
    catalog.add_argument("--lustre", action="store_true", help="only the Lustre tiers")
    catalog.add_argument("--sources", action="store_true", help="also print where each fact was looked up")

    schema = sub.add_parser("schema", help="print the JSON Schema of the ai-infra:platform config value")
    schema.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")

    validate = sub.add_parser("validate", help="validate a stack's ai-infra:platform config without planning")
    validate.add_argument("--stack", "-s", required=True)
    validate.add_argument("--program", metavar="DIR", help="a project whose stack files hold ai-infra:platform (default: the nearest Pulumi.yaml)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"plan": _plan, "catalog": _catalog, "schema": _schema, "validate": _validate}[args.command]
    try:
        return handler(args)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # Ctrl-C: the policy pack's process is already stopped by its context manager
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def run() -> NoReturn:
    """The `aiinfra` console script: `main`, then exit without tearing the interpreter down.

    A plan leaves ~10^6 objects of the provider SDKs on the heap, and freeing them one by one at interpreter exit
    took 3.7 s of a 9.5 s `aiinfra plan --stack prod`. Nothing is left to do at exit by then: the plan's files are
    written and closed and the policy pack's process is stopped, so the streams are flushed and the process leaves.
    Exceptions (argparse's SystemExit, a bug's traceback) take the normal way out.

    The reader of stdout may leave early (`aiinfra catalog | head`, `aiinfra plan ... 2>&1 | head -1`): the stream
    then goes to /dev/null and the command carries on, so a plan still evaluates its policies, writes --json and
    --markdown, and exits with its own code.
    """
    sys.stdout, sys.stderr = _ReaderMayLeave(sys.stdout), _ReaderMayLeave(sys.stderr)
    code = main()
    sys.stdout.flush()
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)


class _ReaderMayLeave:
    """An output stream that on a broken pipe (its reader gone) is pointed at /dev/null instead of failing the
    command."""

    def __init__(self, stream) -> None:  # noqa: ANN001 (a text stream)
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()
            self._stream.flush()

    def _to_devnull(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def __getattr__(self, name: str):  # noqa: ANN204 (everything else is the stream's)
        return getattr(self._stream, name)


class UserError(Exception):
    """A problem the user can fix; printed without a traceback."""


def _project(args: argparse.Namespace):
    from aiinfra.plan.project import ProjectError, load_project, project_file

    if getattr(args, "program", None):
        root = Path(args.program).resolve()
    else:  # like the Pulumi CLI: the nearest Pulumi.yaml (or .json, .yml) in this directory or a parent
        here = Path.cwd().resolve()
        root = next((d for d in (here, *here.parents) if project_file(d) is not None), None)
        if root is None:
            raise UserError(f"no Pulumi.yaml in {here} or any parent; run inside a Pulumi project or pass --program DIR")
    try:
        project = load_project(root)
    except ProjectError as err:
        raise UserError(str(err)) from None
    if getattr(args, "stack", None) is not None:  # an empty --stack too (an unset $STACK in a script) is refused
        args.organization, args.stack = _stack_name(args.stack, project.name)
    return project


DEFAULT_ORGANIZATION = "organization"
"""What `pulumi.get_organization()` returns when --stack names no organization (the SDK's mock default): offline
there is no backend to ask for the user's default organization."""


def _stack_name(stack: str, project: str) -> tuple[str, str]:
    """The organization and the stack's own name, which names its file (Pulumi.<stack>.yaml): the Pulumi CLI also
    takes `org/stack` and `org/project/stack` (pkg/backend/httpstate/backend.go ParseStackReference), and the program
    then runs in that organization."""
    from aiinfra.plan.project import ProjectError, check_stack_name

    parts = stack.split("/")
    if len(parts) > 3 or not all(parts):
        raise UserError(f"--stack {stack!r}: a stack name, org/stack or org/project/stack")
    if len(parts) == 3 and parts[1] != project:
        raise UserError(f"--stack {stack}: a stack of project '{parts[1]}', but this project is '{project}'")
    try:
        check_stack_name(parts[-1])  # the stack's name names its file: the CLI refuses any other
    except ProjectError as err:
        raise UserError(f"--stack: {err}") from None
    return (parts[0] if len(parts) > 1 else DEFAULT_ORGANIZATION), parts[-1]


def _read_base_plan(path: str) -> dict:
    """The --diff base: a plan document written by `aiinfra plan --json`."""
    try:
        document = json.loads(Path(path).read_text())
    except OSError as err:
        raise UserError(f"--diff {path}: cannot read it ({err.strerror})") from None
    except json.JSONDecodeError as err:
        raise UserError(f"--diff {path}: not JSON ({err})") from None
    resources = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(resources, list) or not all(isinstance(r, dict) and "urn" in r and "type" in r for r in resources):
        raise UserError(f"--diff {path}: not a plan from `aiinfra plan --json` (expected a 'resources' list of records "
                        "with 'urn' and 'type')")
    return document


def _check_output(option: str, path: str | None) -> None:
    """Fail before planning when an output file cannot be written where asked."""
    if path is None:
        return
    if Path(path).is_dir():
        raise UserError(f"{option} {path}: is a directory; give a file path")
    if not Path(path).resolve().parent.is_dir():
        raise UserError(f"{option} {path}: directory {Path(path).resolve().parent} does not exist")


def _write(option: str, path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as err:
        raise UserError(f"{option} {path}: cannot write it ({err.strerror})") from None


def _plan(args: argparse.Namespace) -> int:
    import pulumi

    from aiinfra.plan.program import plan_stack, program_traceback
    from aiinfra.plan.project import ProjectError
    from aiinfra.plan.summary import render_summary

    project = _project(args)
    base = _read_base_plan(args.diff) if args.diff else None
    if base is not None and (base.get("project"), base.get("stack")) != (project.name, args.stack):
        raise UserError(f"--diff {args.diff}: a plan of {base.get('project')}/{base.get('stack')}, not of "
                        f"{project.name}/{args.stack}; diff a plan of the same stack")
    _check_output("--json", args.json)
    _check_output("--markdown", args.markdown)
    policy = _policy_setup(args, project.root)
    try:
        _warn_about_stack_files(project, args.stack)
        result = plan_stack(project, args.stack, organization=args.organization, new_stack=args.new_stack)
    except ProjectError as err:
        raise UserError(str(err)) from None
    except pulumi.RunError as err:
        raise UserError(str(err)) from None
    except Exception as err:  # noqa: BLE001 a program bug: show where, like `pulumi preview` does
        print(program_traceback(err), end="", file=sys.stderr)
        hint = ""
        missing = err.name if isinstance(err, ModuleNotFoundError) else None
        sibling = project.main.parent / missing.partition(".")[0] if missing else None  # a neighbour of a main file?
        if sibling is not None and project.main.is_file() and (sibling.with_suffix(".py").is_file() or sibling.is_dir()):
            hint = (f"\n  main is the file {project.main}: the Python language host runs it as a script from its "
                    "directory without putting that directory on sys.path, so its neighbours are not importable "
                    "(pulumi/pulumi#7360); set main to the directory, with a __main__.py, to import them")
        elif isinstance(err, ModuleNotFoundError):  # the program's own dependencies are not where aiinfra runs
            hint = (f"\n  aiinfra runs the program in its own Python environment ({sys.prefix}); install the program's "
                    "requirements into it")
        raise UserError(f"the program of stack '{args.stack}' failed: {type(err).__name__}: {err}{hint}") from None
    document = result.to_json()
    summary = render_summary(result) if not args.quiet or args.markdown else None
    if not args.quiet:
        print(summary)
    else:  # the summary holds the program's messages; quiet, its warnings and errors still reach the user
        for diagnostic in result.diagnostics:
            if diagnostic.severity != "info":
                print(f"{diagnostic.severity}: {diagnostic.message}", file=sys.stderr)
    report = None
    if policy is not None:
        report = _evaluate_policy(policy, result, args.organization)
        config_shown = _shown_path(policy[2])
        document["policy"] = {**report.to_json(), "config": config_shown}
        _print_policy(report, config_shown, after_summary=not args.quiet)
    if base is not None:
        from aiinfra.plan.diff import diff_plans, render_diff_text

        document["diff"] = diff_plans(base, document)
        print(render_diff_text(document["diff"]))
    if args.json:
        _write("--json", args.json, json.dumps(document, indent=2, sort_keys=False) + "\n")
    if args.markdown:
        from aiinfra.plan.markdown import render_markdown

        _write("--markdown", args.markdown, render_markdown(document, summary))
    if report is not None and report.mandatory:
        print(f"\n{len(report.mandatory)} mandatory policy violation(s): the plan would be blocked", file=sys.stderr)
        return EXIT_MANDATORY_VIOLATION
    return 0


def _warn_about_stack_files(project, stack: str, imports: bool = True) -> None:  # noqa: ANN001 (a Project)
    """Say what of the stack's config an offline plan goes without, or reads as the CLI warns it does: a stack file
    that does not exist (the CLI plans the stack with empty config), keys with no value (the empty string), Pulumi ESC
    environments it imports (unless `imports` is false: `validate` names them in its error), and inline environment
    values it cannot evaluate (esc.py)."""
    from aiinfra.plan.project import empty_config_warning, missing_stack_file, stack_environment

    for warning in (missing_stack_file(project, stack), empty_config_warning(project, stack)):
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
    environment = stack_environment(project, stack)
    if environment.imports and imports:
        print(f"warning: stack '{stack}' imports Pulumi ESC environments ({', '.join(environment.imports)}); an offline "
              "plan cannot open them, so the config they provide is missing", file=sys.stderr)
    if environment.unevaluated:
        print(f"warning: stack '{stack}': its inline environment's pulumiConfig "
              f"{', '.join(environment.unevaluated)} need{'s' if len(environment.unevaluated) == 1 else ''} Pulumi ESC "
              "to evaluate (${...} interpolation, fn:: functions), which an offline plan cannot do, so "
              f"{'it is' if len(environment.unevaluated) == 1 else 'they are'} missing; its plain values are applied",
              file=sys.stderr)
    if environment.other_values:
        print(f"warning: stack '{stack}': its inline environment's {', '.join(environment.other_values)} "
              "(set in the program's environment by the CLI) are not applied offline", file=sys.stderr)


def _default_policy_pack() -> Path:
    """The checkout's policies/; in an installed copy, the pack the wheel carries (pyproject.toml's force-include)."""
    checkout = REPO_ROOT / "policies"
    return checkout if (checkout / "PulumiPolicy.yaml").is_file() else Path(__file__).resolve().parent / "policy_pack"


def _policy_setup(args: argparse.Namespace, project_root: Path) -> tuple[Path, dict, Path] | None:
    """The policy pack, its config and the config's path, checked before anything is planned; None with --no-policy.
    The pack's per-stack configs (`config/<stack>.json`) are for the project the pack belongs to (the directory that
    holds it), and each of its stacks must have one; any other project gets `config/baseline.json` unless
    --policy-config names one."""
    from aiinfra.policy_eval import PolicyError, read_policy_config

    if args.no_policy:
        return None
    # The pack runs on this interpreter: say now, not after the plan, that its SDK is missing.
    missing = [module for module in ("pulumi_policy", "jsonschema") if importlib.util.find_spec(module) is None]
    if missing:
        raise UserError(f"the policy pack needs {' and '.join(missing)} in {sys.prefix}: install 'ai-infra[policy]' "
                        "(every cloud extra includes it), or plan with --no-policy")
    pack = Path(args.policy_pack) if args.policy_pack else _default_policy_pack()
    if not (pack / "PulumiPolicy.yaml").is_file():
        raise UserError(f"no policy pack at {pack} (PulumiPolicy.yaml missing); pass --policy-pack DIR or --no-policy")
    if args.policy_config:
        config_path = Path(args.policy_config)
    elif pack.resolve().parent == project_root.resolve():  # the pack's own project: each stack has its config
        config_path = pack / "config" / f"{args.stack}.json"
        if not config_path.is_file():  # a new environment: baseline would hide its profiles' rules
            raise UserError(f"no policy config for stack '{args.stack}': {_shown_path(config_path)} does not exist; write "
                            "it with `.venv/bin/python policies/aiinfra_policy/gen_config.py` (it reads the stack's "
                            "compliance profiles and regions; a new environment name needs its entry in ENVIRONMENTS "
                            "there), or pass --policy-config FILE or --no-policy")
    else:
        config_path = pack / "config" / "baseline.json"
    if not config_path.is_file():
        raise UserError(f"policy config {config_path} does not exist")
    try:
        return pack, read_policy_config(config_path), config_path
    except PolicyError as err:
        raise UserError(str(err)) from None


def _evaluate_policy(policy: tuple[Path, dict, Path], result, organization: str):  # noqa: ANN001, ANN202
    import dataclasses

    from aiinfra.plan.masking import scrub, secret_texts
    from aiinfra.policy_eval import PolicyError, evaluate_pack

    pack, config, _ = policy
    records = [r.to_json() for r in result.resources]
    try:
        # The stack's config the program ran with, as the engine gives it to a pack (secure values stay placeholders).
        report = evaluate_pack(pack, records, config=config, project=result.project, stack=result.stack,
                               organization=organization, stack_config=result.config, secret_keys=result.secret_keys,
                               stack_tags=result.stack_tags)
    except PolicyError as err:
        raise UserError(str(err)) from None
    # A policy may quote the value it objects to; a secret one is not to be printed, nor put in a PR comment.
    secrets = secret_texts([r["inputs"] for r in records])
    if secrets:
        report.violations = [dataclasses.replace(v, message=scrub(v.message, secrets)) for v in report.violations]
    return report


def _shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is under it, else absolute."""
    resolved = path.resolve()
    return str(resolved.relative_to(Path.cwd().resolve())) if resolved.is_relative_to(Path.cwd().resolve()) else str(resolved)


def _print_policy(report, config: str, after_summary: bool) -> None:  # noqa: ANN001
    print(f"{chr(10) if after_summary else ''}Policy pack {report.pack} with config {config}: "
          f"{len(report.violations)} violation(s), {len(report.mandatory)} mandatory")
    for v in sorted(report.violations, key=lambda v: (v.enforcementLevel != "mandatory", v.policy, v.urn)):
        print(f"  [{v.enforcementLevel}] {v.policy}: {v.urn.split('::')[-1] if v.urn else '(stack)'}")
        lines = v.message.strip().splitlines()
        print(f"      {lines[-1] if lines else ''}")


def _catalog(args: argparse.Namespace) -> int:
    import dataclasses

    from components import catalog

    clouds = [c for c in ("aws", "gcp", "azure") if args.cloud in (None, c)]
    tiers = [t for cloud in clouds for t in catalog.lustre_tiers(cloud)]
    rows = [] if args.lustre else [r for r in catalog.catalog_rows() if r["cloud"] in clouds]
    if args.json:
        print(json.dumps([dataclasses.asdict(t) for t in tiers] if args.lustre else rows, indent=2))
        return 0
    if rows:
        print(f"{'cloud':6} {'instance type':28} {'accelerator':16} {'count':>5} {'GiB each':>8}")
    for r in rows:
        print(f"{r['cloud']:6} {r['instance_type']:28} {r['accelerator']:16} {r['accelerator_count']:>5} {r['accelerator_memory_gib']:>8}")
        if args.sources:
            print(f"{'':6} source: {r['source']}")
    print(f"{chr(10) if rows else ''}Lustre tiers:")
    for t in tiers:
        top = f"{t.max_gib} GiB" if t.max_gib else "no documented max"
        print(f"  {t.cloud:6} {t.service_name:28} {t.throughput_mbps_per_tib:>5} MB/s/TiB  min {t.min_gib} GiB, step {t.step_gib} GiB, max {top}")
        if args.sources:
            print(f"  {'':6} source: {t.source}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from components.spec import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if args.output:
        _write("--output", args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _validate(args: argparse.Namespace) -> int:
    """The checks the stack program makes before it registers anything (components.compose.load_from_config), with
    the same messages, on the stack file as it is read offline."""
    from aiinfra.plan.project import ProjectError, load_stack_config, stack_environments
    from components.spec import (PLATFORM_CONFIG, SpecError, StackConfigError, check_stack_environment, load_platform,
                                 platform_config_value)

    project = _project(args)
    try:
        _warn_about_stack_files(project, args.stack, imports=False)
        config, secret_keys = load_stack_config(project, args.stack)
        # Read the stack file's ESC imports only to explain a missing platform.
        imports = stack_environments(project, args.stack) if PLATFORM_CONFIG not in config else ()
        raw = platform_config_value(config.get(PLATFORM_CONFIG), stack=args.stack, secret=PLATFORM_CONFIG in secret_keys,
                                    esc_environments=imports, config_keys=list(config))
        spec = load_platform(raw)
        check_stack_environment(spec.environment, args.stack)
    except (ProjectError, SpecError, StackConfigError) as err:
        raise UserError(str(err)) from None
    print(f"ok: {args.stack} ({', '.join(c.value for c, _ in spec.clouds.items())})")
    return 0


if __name__ == "__main__":
    run()
