"""Project-wide access: the cluster admins' IAM members are named by member, not by list position, and adopt the
bindings deployed under the former index names. Aliases are checked on the RegisterResource requests the engine
would receive."""

from __future__ import annotations

from collections.abc import Sequence


from aiinfra.plan.runtime import PlanResult, run_program
from components.gcp.naming import member_key
from components.gcp.project import CLUSTER_ADMIN_ROLE, Project, ProjectArgs

IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
ADMINS = ["group:ml-platform@example.com", "user:oncall@example.com", "user:lead@example.com"]



def plan_admins(admins: Sequence[str]) -> PlanResult:
    return run_program(lambda: Project("prod-gcp-project", ProjectArgs(project="acme-ml-test", apis=[], admins=admins)),
                       project="ai-infra", stack="prod")


def grants(plan: PlanResult) -> dict[str, str]:
    """Child name -> member of each admin binding."""
    return {r.name: r.inputs["member"] for r in plan.of_type(IAM_MEMBER)}


def test_admin_bindings_are_named_by_member(prod_plan: PlanResult) -> None:
    names = {r.name: r.inputs for r in prod_plan.of_type(IAM_MEMBER) if r.name.startswith("prod-gcp-project-admin-")}
    assert {name: (g["role"], g["member"]) for name, g in names.items()} == {
        f"prod-gcp-project-admin-{member_key(m)}": (CLUSTER_ADMIN_ROLE, m)
        for m in ["group:ml-platform@example.com", "user:oncall@example.com"]}
    assert member_key("user:oncall@example.com") == member_key("user:oncall@example.com") != member_key("user:lead@example.com")


def test_reordering_or_removing_an_admin_changes_no_other_binding() -> None:
    before = grants(plan_admins(ADMINS))
    assert sorted(before.values()) == sorted(ADMINS) and len(before) == 3
    assert grants(plan_admins(list(reversed(ADMINS)))) == before
    # The first admin leaves: the others keep their names, so neither is replaced nor loses the role on cleanup.
    after = grants(plan_admins(ADMINS[1:]))
    assert after == {name: member for name, member in before.items() if member != ADMINS[0]}


def test_each_binding_adopts_the_one_deployed_under_its_index_name(aliases_sent: dict[str, list]) -> None:
    plan = plan_admins(ADMINS)
    for index, member in enumerate(ADMINS):
        record = plan.one(IAM_MEMBER, f"prod-gcp-project-admin-{member_key(member)}")
        aliases = aliases_sent[record.urn]
        assert [a.spec.name for a in aliases] == [f"prod-gcp-project-admin-{index}"]
        # Same parent and type as before: only the name changed.
        assert not any(a.spec.type or a.spec.parentUrn or a.spec.noParent for a in aliases)
        assert record.parent == plan.one("ai-infra:gcp:Project", "prod-gcp-project").urn
