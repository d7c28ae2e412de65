"""What the template tests share (test_templates.py, test_template_docs.py): rendering a template as `pulumi new` does,
and the answers some clouds require."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def render(name: str, tmp_path: Path, answers: dict[str, str]) -> Path:
    """Copy the template, replace ${PROJECT}/${DESCRIPTION} everywhere, write the answers into Pulumi.dev.yaml as the
    CLI does: a key not answered gets its default, and an empty answer is not saved at all (pkg/cmd/pulumi/project/
    newcmd/config.go: "Don't add empty values to the config"), so the program sees the key unset."""
    project = f"team-{name}"
    target = tmp_path / project
    shutil.copytree(TEMPLATES / name, target)
    for path in target.rglob("*"):
        if path.is_file():
            path.write_text(path.read_text().replace("${PROJECT}", project).replace("${DESCRIPTION}", f"{name} for the vision team"))
    template = yaml.safe_load((target / "Pulumi.yaml").read_text())["template"]["config"]
    given = {key: str(answers.get(key, spec.get("default", ""))) for key, spec in template.items()}
    config = {f"{project}:{key}": value for key, value in given.items() if value != ""}
    (target / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    return target


GCP_PROJECT = {"gcpProject": "acme-ml-dev"}
"""The answer a GCP user must give: gcpProject has no default."""

AWS_CERTIFICATES = {"certificateArns": "arn:aws:acm:us-east-1:123456789012:certificate/abc-1,"
                                      "arn:aws:acm:eu-west-1:123456789012:certificate/abc-2"}
"""The answer an AWS inference-endpoint user must give: one ACM certificate per default region (us-east-1, eu-west-1)."""
