"""What the templates tell their users, checked against the templates themselves: READMEs (tags, policy pack,
collision names, DNS), requirements pins and .gitignore. Planning the templates: test_templates.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from delivery.support import AWS_CERTIFICATES, GCP_PROJECT, TEMPLATES, render

from aiinfra.cli import main

BASELINE = "--policy-pack-config ../ai-infra/policies/config/baseline.json"


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
def test_the_readme_deploys_with_the_baseline_policy_config_from_a_checkout_it_says_how_to_get(name: str) -> None:
    """Without a policy config every rule of the pack is advisory (the pack's default), so the README's pulumi commands
    pass the baseline config, which is what makes its mandatory rules block preview and up; the pack and its
    virtualenv come from a clone of the tag requirements.txt installs, built by the Makefile's policy-pack target."""
    lines = (TEMPLATES / name / "README.md").read_text().splitlines()
    commands = [line for line in lines if line.startswith(("pulumi preview", "pulumi up"))]
    assert sorted(c.split()[1] for c in commands) == ["preview", "up"]
    assert all("--policy-pack ../ai-infra/policies " in c and BASELINE in c for c in commands)
    assert (TEMPLATES.parent / "policies" / "config" / "baseline.json").is_file()
    assert any(line.startswith("venv/bin/aiinfra plan --program . --stack dev") for line in lines)
    tag = requirement_tag(name)
    assert any(line.startswith(f"git clone --branch {tag} https://github.com/your-org/ai-infra ../ai-infra") for line in lines)
    assert any(line.startswith("make -C ../ai-infra policy-pack ") for line in lines)
    assert re.search(r"^policy-pack: policies/venv/\.installed$", (TEMPLATES.parent / "Makefile").read_text(), re.M)


def requirement_tag(name: str) -> str:
    """The tag of ai-infra the template's requirements.txt installs."""
    [tag] = re.findall(r"^ai-infra\[\w+\] @ git\+https://github\.com/your-org/ai-infra@(\S+)$",
                       (TEMPLATES / name / "requirements.txt").read_text(), re.M)
    return tag


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
def test_the_readme_publishes_the_template_at_the_tag_the_requirements_install(name: str) -> None:
    """A template from main may import helpers the tagged package lacks: the `pulumi new` URL names the same tag, and
    the README says that both move together and which Python the package needs."""
    import tomllib

    readme = " ".join((TEMPLATES / name / "README.md").read_text().split())
    tag = requirement_tag(name)
    assert f"pulumi new https://github.com/your-org/ai-infra/tree/{tag}/templates/{name}" in readme
    assert "/tree/main/" not in readme and "Move both together." in readme
    python = tomllib.loads((TEMPLATES.parent / "pyproject.toml").read_text())["project"]["requires-python"]
    assert python == ">=3.11" and "You need Python 3.11 or newer" in readme


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
def test_the_provider_sdks_are_pinned_to_the_versions_of_uv_lock(name: str) -> None:
    """pip reads no uv.lock and pyproject.toml allows ranges: requirements.txt pins every pulumi package the
    template's extra brings, at uv.lock's version (what the components were tested with)."""
    import tomllib

    root = TEMPLATES.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    locked = {p["name"]: p["version"] for p in tomllib.loads((root / "uv.lock").read_text())["package"]}
    pins = dict(re.findall(r"^(pulumi[\w-]*)==(\S+)$", (TEMPLATES / name / "requirements.txt").read_text(), re.M))

    def names(extra: str) -> set[str]:
        found = set()
        for requirement in project["optional-dependencies"][extra]:
            if nested := re.fullmatch(r"ai-infra\[([\w,]+)\]", requirement):
                found |= set().union(*(names(e) for e in nested[1].split(",")))
            else:
                found.add(re.match(r"[\w-]+", requirement)[0])
        return found

    extra = re.search(r"^ai-infra\[(\w+)\]", (TEMPLATES / name / "requirements.txt").read_text(), re.M)[1]
    wanted = {n for n in names(extra) | {re.match(r"[\w-]+", r)[0] for r in project["dependencies"]} if n.startswith("pulumi")}
    assert set(pins) == wanted and {"pulumi", "pulumi-gcp", "pulumi-kubernetes"} <= wanted
    assert pins == {n: locked[n] for n in wanted}


@pytest.mark.parametrize("name", ["gpu-training", "inference-endpoint", "tpu-research"])
def test_the_project_ignores_its_virtualenv_and_caches(name: str) -> None:
    ignored = (TEMPLATES / name / ".gitignore").read_text().split()
    assert {"*.pyc", "__pycache__/", ".pytest_cache/", "venv/", ".venv/"} <= set(ignored)


@pytest.mark.parametrize(("name", "extra"), [("gpu-training", "all"), ("inference-endpoint", "all"), ("tpu-research", "gcp")])
def test_the_placeholder_requirement_is_marked_and_the_readme_says_how_to_use_a_checkout(name: str, extra: str) -> None:
    import tomllib

    requirements = (TEMPLATES / name / "requirements.txt").read_text()
    readme = (TEMPLATES / name / "README.md").read_text()
    extras = tomllib.loads((TEMPLATES.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [requirement] = [line for line in requirements.splitlines() if line.startswith("ai-infra")]
    assert requirement == f"ai-infra[{extra}] @ git+https://github.com/your-org/ai-infra@v0.1.0" and extra in extras
    assert "PLACEHOLDER" in requirements and "placeholder" in readme
    local = {line.strip().lstrip("#").strip() for line in (requirements + readme).splitlines() if "-e /absolute/path" in line}
    assert local and all(re.fullmatch(r"-e /absolute/path/to/ai-infra\[(\w+)\]", e) for e in local)
    assert all(re.fullmatch(r"-e /absolute/path/to/ai-infra\[(\w+)\]", e)[1] in extras for e in local)
    assert "venv/bin/pip install -r requirements.txt" in readme and "source venv/bin/activate" in readme


def strings(node: object) -> set[str]:
    if isinstance(node, dict):
        return set().union(*(strings(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(strings(v) for v in node))
    return {node} if isinstance(node, str) else set()


@pytest.mark.parametrize(("name", "plans"), [
    ("gpu-training", [{"cloud": "aws"}, {"cloud": "gcp", **GCP_PROJECT}, {"cloud": "azure"}]),
    ("inference-endpoint", [{"cloud": "aws", **AWS_CERTIFICATES}, GCP_PROJECT, {"cloud": "azure"}]),
    ("tpu-research", [GCP_PROJECT, {"tpuMode": "tpu_vm", **GCP_PROJECT}]),
])
def test_the_readme_names_the_physical_names_two_stacks_of_one_name_would_share(
        tmp_path: Path, name: str, plans: list[dict[str, str]]) -> None:
    """Names derive from the environment (the stack's name) and the region only: every name the README's collision
    section lists is one a plan of the template gives a resource."""
    readme = (TEMPLATES / name / "README.md").read_text()
    section = readme.split("## Stack names: the environment, and what they collide with")[1].split("\n## ")[0]
    assert "`vision-dev`" in section and "only the name `dev`" in " ".join(section.split()).lower()
    listed = set(re.findall(r"`([^`]*<stack>[^`]*)`", section))
    assert len(listed) >= {"gpu-training": 7, "inference-endpoint": 7, "tpu-research": 3}[name]
    seen: set[str] = set()
    for index, answers in enumerate(plans):
        program = render(name, tmp_path / str(index), answers)
        out = tmp_path / f"{index}.json"
        assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
        seen |= strings([r["inputs"] for r in json.loads(out.read_text())["resources"]])
    for pattern in listed:
        regex = re.escape(pattern).replace(re.escape("<stack>"), "dev").replace(re.escape("<region>"), "[a-z0-9-]+")
        assert any(re.fullmatch(regex, value) for value in seen), pattern


def test_the_endpoint_readme_says_where_each_clouds_dns_points_with_the_outputs_a_stack_has(tmp_path: Path) -> None:
    readme = " ".join((TEMPLATES / "inference-endpoint" / "README.md").read_text().split())
    dns = readme.split("## Pointing the domain at the endpoint")[1].split(" ## ")[0]
    assert "CNAME from `domain` to `global_endpoint.dns_name`" in dns
    assert "A record from `domain` to `global_endpoint.ip_address`" in dns and "stays `PROVISIONING`" in dns
    assert "CNAME from `domain` to `front_door.host_name`" in dns
    # The TXT record's name and token come from the stack (`front_door.domain_validation`); the Azure CLI is the fallback.
    assert "exports as `front_door.domain_validation`: `txt_name` is the record's full name, `_dnsauth.<domain>`" in dns
    assert "`txt_value` the validation token" in dns and "pulumi stack output azure --json" in dns
    assert ".front_door.domain_validation | .txt_name, .txt_value" in dns
    assert "validationProperties.validationToken" in dns and "--resource-group rg-dev-frontdoor" in dns
    outputs = {}
    for cloud, answers in {"aws": AWS_CERTIFICATES, "gcp": GCP_PROJECT, "azure": {}}.items():
        program = render("inference-endpoint", tmp_path / cloud, {"cloud": cloud, **answers})
        out = tmp_path / f"{cloud}.json"
        assert main(["plan", "--program", str(program), "--stack", "dev", "--no-policy", "--json", str(out), "-q"]) == 0
        document = json.loads(out.read_text())
        outputs[cloud] = document["outputs"][cloud]
        if cloud == "azure":
            groups = {r["inputs"]["resourceGroupName"] for r in document["resources"] if r["type"] == "azure-native:resources:ResourceGroup"}
            assert "rg-dev-frontdoor" in groups
    assert {"dns_name"} <= set(outputs["aws"]["global_endpoint"]) and "ip_address" in outputs["gcp"]["global_endpoint"]
    assert "host_name" in outputs["azure"]["front_door"]
    validation = outputs["azure"]["front_door"]["domain_validation"]  # the token itself is known only after `pulumi up`
    assert set(validation) == {"txt_name", "txt_value"} and validation["txt_name"] == "_dnsauth.infer.example.com"
