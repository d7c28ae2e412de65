"""Project and stack files as the Pulumi CLI reads them, for what a mutation review found untested: the errors a user
sees for a bad project or stack file (and which file they name), the stack names the CLI accepts, which config values
are secrets, and how a stack file's inline ESC environment merges under the stack's own values."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_program

from aiinfra.plan.project import (ProjectError, check_stack_name, load_project, load_stack_config, missing_stack_file,
                                  stack_environment, stack_environments)


def test_an_empty_project_name_is_refused(tmp_path: Path) -> None:
    """The CLI's project schema requires a non-empty name: it names every URN and the stack's tags."""
    (tmp_path / "Pulumi.yaml").write_text("name: ''\nruntime: python\n")
    with pytest.raises(ProjectError, match="'name' is required"):
        load_project(tmp_path)


def test_a_stack_name_may_be_100_characters_long_and_no_longer() -> None:
    """tokens.ParseStackName refuses a name longer than 100 characters, not one of exactly 100."""
    check_stack_name("s" * 100)
    with pytest.raises(ProjectError, match="cannot exceed 100 characters"):
        check_stack_name("s" * 101)


def test_a_project_without_any_stack_file_says_so(tmp_path: Path) -> None:
    """The warning for a mistyped stack name lists the stacks that have files; with none it says "none"."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\n")
    warning = missing_stack_file(load_project(tmp_path), "dev")
    assert warning is not None and warning.endswith("(stacks with a file there: none)")


def test_a_stack_files_config_that_is_not_a_mapping_is_named(tmp_path: Path) -> None:
    write_program(tmp_path, "import pulumi\n", "config:\n  - x:size\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == f"{tmp_path / 'Pulumi.dev.yaml'}: 'config' must be a mapping"


def test_three_missing_keys_are_listed_as_a_sentence(tmp_path: Path) -> None:
    """"'a', 'b' and 'c'": the CLI's message lists every missing key."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig:\n  a:\n    type: string\n"
                                          "  b:\n    type: string\n  c:\n    type: string\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    with pytest.raises(ProjectError, match=r"is missing configuration values 'a', 'b' and 'c' \("):
        load_stack_config(load_project(tmp_path), "dev")


def test_a_default_json_cannot_hold_is_blamed_on_the_project_file(tmp_path: Path) -> None:
    """The value came from Pulumi.yaml's default, so that is the file the user must fix."""
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig:\n  limits: [1, .inf]\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value).startswith(f"{tmp_path / 'Pulumi.yaml'}: config key 'x:limits': ")


def test_a_secure_item_makes_its_list_secret_and_a_key_named_secure_is_plain(tmp_path: Path) -> None:
    """One `secure:` item makes the whole value secret (the program and the default provider get it as a secret);
    an object with a `secure` key among others is a plain object, as config.Value reads it."""
    write_program(tmp_path, "import pulumi\n",
                  "config:\n  x:tokens:\n    - plain\n    - secure: v1:abc\n"
                  "  x:notice:\n    secure: not-a-ciphertext\n    note: kept\n")
    config, secrets = load_stack_config(load_project(tmp_path), "dev")
    assert config == {"x:tokens": '["plain","[secret]"]', "x:notice": '{"note":"kept","secure":"not-a-ciphertext"}'}
    assert secrets == ["x:tokens"]


# Inline ESC environments --------------------------------------------------------------------------------------------

def test_a_list_of_names_imports_those_environments(tmp_path: Path) -> None:
    """`environment: [team/shared, 2024, true]`: names to import, in order; the plan must say they are missing."""
    write_program(tmp_path, "import pulumi\n", "environment: [team/shared, 2024, true]\nconfig: {}\n")
    assert stack_environments(load_project(tmp_path), "dev") == ["team/shared", "2024", "true"]


def test_a_json_stack_files_environment_names_must_be_strings(tmp_path: Path) -> None:
    """encoding/json decodes only strings into Environment's []string: `["a", 2]` in a Pulumi.<stack>.json is sent to
    ESC as a definition and refused, where YAML's `[a, 2]` names two environments."""
    (tmp_path / "Pulumi.json").write_text('{"name": "x", "runtime": "python"}')
    (tmp_path / "Pulumi.dev.json").write_text('{"environment": ["a", "b", null], "config": {}}')
    assert stack_environments(load_project(tmp_path), "dev") == ["a", "b", ""]
    (tmp_path / "Pulumi.dev.json").write_text('{"environment": ["a", 2], "config": {}}')
    with pytest.raises(ProjectError) as caught:
        stack_environments(load_project(tmp_path), "dev")
    assert str(caught.value).startswith(f'{tmp_path / "Pulumi.dev.json"}: environment: ["a", 2] is not a list of '
                                        "environment names")


@pytest.mark.parametrize(("environment", "shown"), [
    ("team/shared", "team/shared"), ("5", "5"), ("[a, {b: {merge: false}}]", '["a", {"b": {"merge": false}}]')])
def test_an_environment_that_is_not_a_list_of_names_or_a_mapping_is_refused(tmp_path: Path, environment: str,
                                                                              shown: str) -> None:
    """One name, a number, or a list holding an import's options does not decode as []string
    (workspace.Environment.UnmarshalYAML): the CLI sends it to ESC as a definition, and ESC refuses any definition
    that is not an object (pulumi/esc ast.ParseEnvironment), so the CLI stops before the program runs."""
    write_program(tmp_path, "import pulumi\n", f"environment: {environment}\nconfig: {{}}\n")
    with pytest.raises(ProjectError) as caught:
        load_stack_config(load_project(tmp_path), "dev")
    assert str(caught.value) == (
        f"{tmp_path / 'Pulumi.dev.yaml'}: environment: {shown} is not a list of environment names, so the Pulumi CLI "
        "sends it to ESC as an environment definition, which ESC refuses: 'environment must be an object'; allowed: a "
        "list of names to import ([team/shared]) or a mapping with imports and values")


def test_what_esc_must_evaluate_is_left_out_of_the_config_and_reported(tmp_path: Path) -> None:
    """A timestamp or a pulumiConfig that is not a mapping is ESC's to evaluate: not merged, named in the warning."""
    write_program(tmp_path, "import pulumi\n",
                  "environment:\n  values:\n    pulumiConfig:\n      size: large\n      when: 2024-05-01T00:00:00Z\n"
                  "config: {}\n")
    project = load_project(tmp_path)
    assert load_stack_config(project, "dev")[0] == {"x:size": "large"}
    assert stack_environment(project, "dev").unevaluated == ["when"]
    write_program(tmp_path, "import pulumi\n", "environment:\n  values:\n    pulumiConfig: ${shared.config}\nconfig: {}\n")
    assert stack_environment(load_project(tmp_path), "dev").unevaluated == ["pulumiConfig"]


def test_the_stack_files_value_merges_over_the_environments_at_every_depth_and_a_secret_is_not_merged(
        tmp_path: Path) -> None:
    """config.Value.Merge: mappings key by key, nested ones too; a `secure:` value is a scalar, so the stack file's
    secret replaces the environment's object instead of mixing into it."""
    write_program(tmp_path, "import pulumi\n",
                  "environment:\n  values:\n    pulumiConfig:\n      limits: {gpu: {a100: 8, h100: 4}}\n"
                  "      creds: {user: env}\n"
                  "config:\n  x:limits: {gpu: {h100: 16}}\n  x:creds:\n    secure: v1:abc\n")
    config, secrets = load_stack_config(load_project(tmp_path), "dev")
    assert config == {"x:limits": '{"gpu":{"a100":8,"h100":16}}', "x:creds": "[secret]"}
    assert secrets == ["x:creds"]
