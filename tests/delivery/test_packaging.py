"""An installed copy of ai-infra (what a template's requirements.txt installs) plans with its policy pack."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "data" / "programs" / "invokes"


def install_like_the_wheel(site: Path) -> None:
    """Lay out site-packages as the wheel does: its packages, plus the files pyproject.toml force-includes."""
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    ignore = shutil.ignore_patterns("__pycache__")
    for package in wheel["packages"]:
        shutil.copytree(ROOT / package, site / package, ignore=ignore)
    for source, target in wheel["force-include"].items():
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, site / target, ignore=ignore)
        else:
            (site / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, site / target)


def test_an_installed_copy_plans_with_the_policy_pack_it_carries(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_like_the_wheel(site)
    assert not (site / "policies").exists()  # no checkout: the pack must come from the package
    out = tmp_path / "plan.json"
    code = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from aiinfra.cli import main; "
         "sys.exit(main(sys.argv[2:]))", str(site), "plan", "--program", str(PROGRAM), "--stack", "demo",
         "--json", str(out), "-q"],
        capture_output=True, text=True, cwd=tmp_path, check=False)
    assert code.returncode == 2, code.stderr  # the program has a mandatory violation, found by the carried pack
    document = json.loads(out.read_text())
    assert document["policy"]["pack"].startswith("ai-infra-compliance@v")
    assert "aws-launch-template-imdsv2" in {v["policy"] for v in document["policy"]["violations"]}


def test_the_wheel_carries_every_file_of_the_pack() -> None:
    """What the pack holds besides caches is all in the force-include list, so a new file cannot be left out."""
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    included = {Path(source) for source in wheel["force-include"]}
    pack = ROOT / "policies"
    # `make policy-pack` builds the pack's virtualenv in policies/venv (git-ignored, never shipped).
    files = {p.relative_to(ROOT) for p in pack.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and (pack / "venv") not in p.parents}
    missing = sorted(str(f) for f in files if not any(f == i or i in f.parents for i in included))
    assert not missing, f"files of the policy pack the wheel would leave out: {missing}"
