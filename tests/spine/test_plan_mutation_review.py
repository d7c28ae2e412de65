"""What a user sees of a plan, in the cases a mutation review of aiinfra/plan found no other test pinning down: secrets
masked and scrubbed (masking.py), the pull-request comment (markdown.py), secure config in a plan (secrets.py) and the
outputs the policy pack sees (outputs.py)."""

from __future__ import annotations

import pulumi
import pytest
from helpers import PLAN_STACK_URN as STACK_URN, base_and_head as _plans, plan_record as _record

from aiinfra.plan.diff import diff_plans
from aiinfra.plan.markdown import MARKER, combine, render_markdown
from aiinfra.plan.masking import mask_secrets, scrub, secret_texts
from aiinfra.plan.outputs import preview_outputs
from aiinfra.plan.project import SECRET_PLACEHOLDER
from aiinfra.plan.runtime import UNKNOWN, run_program

SIG, SECRET = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"


def _comment(base: dict, head: dict, violations: list[dict] | None = None) -> str:
    policy = {"pack": "p", "violations": violations or []}
    return render_markdown({**head, "diff": diff_plans(base, head), "policy": policy})


# --- masking.py -------------------------------------------------------------------------------------------------------

def test_an_output_value_marked_secret_is_masked_and_a_plain_one_is_kept() -> None:
    """The engine's other secret form: an output value whose `secret` is true (what a monitor that takes output values
    receives). Masked like any secret; the same shape with `secret` false is no secret."""
    output = {SIG: "d0e6a833031e9bbcd3f4e8bde6ca49a4", "value": "hunter2", "dependencies": []}
    masked = mask_secrets({"password": {**output, "secret": True}, "name": {**output, "secret": False}})
    assert masked == {"password": {SIG: SECRET, "value": "[secret]"}, "name": {**output, "secret": False}}


def test_a_four_character_secret_is_scrubbed_and_a_null_one_scrubs_nothing() -> None:
    """Policy messages are scrubbed of the secrets' text: four characters is long enough (a PIN), and a secret holding
    null must not turn every `None` in a message into `[secret]`."""
    inputs = {"pin": {SIG: SECRET, "value": "4821"}, "kmsKeyId": {SIG: SECRET}}
    assert secret_texts(inputs) == {"4821"}
    assert scrub("kmsKeyId is None; pin 4821 is weak", secret_texts(inputs)) == "kmsKeyId is None; pin [secret] is weak"


def test_a_secret_holding_another_is_scrubbed_whole() -> None:
    """Longest first: scrubbing the shorter secret first would leave the rest of the longer one in the message."""
    assert scrub("token abcd-efgh leaked", {"abcd", "abcd-efgh"}) == "token [secret] leaked"


# --- markdown.py ------------------------------------------------------------------------------------------------------

def test_a_backtick_in_a_value_does_not_break_the_code_spans() -> None:
    """A value's backtick would end its code span and garble the rest of the line: it is shown as a quote."""
    vm = _record("aws:ec2/instance:Instance", "vm", {"userData": "a"})
    base, head = _plans(vm)
    head["resources"][1]["inputs"]["userData"] = "echo `date`"
    line = next(x for x in _comment(base, head).splitlines() if x.startswith("- ~ `vm`"))
    assert line == "- ~ `vm`: `userData` `\"a\"` → `\"echo 'date'\"`"


def _one_change_diff(new: str) -> dict:
    entry = {"urn": "urn:pulumi:prod::ai-infra::aws:ec2/vpc:Vpc::vpc", "type": "aws:ec2/vpc:Vpc", "action": "update",
             "inputs": ["p"], "changes": [{"path": "p", "old": "a", "new": new}], "replaceBecause": [], "options": [],
             "notes": []}
    return {"counts": {"added": 0, "changed": 1, "replaced": 0, "removed": 0}, "protected": [], "stranded": [],
            "components": {"(outside components)": {"added": [], "changed": [entry], "replaced": [], "removed": []}}}


def test_a_changed_properties_line_of_exactly_600_characters_is_whole_and_a_cut_one_closes_its_code() -> None:
    """Lines are capped at 600 characters: one of exactly 600 is whole, and a cut never leaves a code span open
    (the rest of the comment would render as code)."""
    prefix = "- ~ `vpc`: `p` `a` → `"
    width = 600 - len(prefix) - 1
    body = render_markdown({"stack": "prod", "resources": [], "diff": _one_change_diff("x" * width)})
    assert f"{prefix}{'x' * width}`" in body.splitlines()
    body = render_markdown({"stack": "prod", "resources": [], "diff": _one_change_diff("x" * 1000)})
    [line] = [x for x in body.splitlines() if x.startswith("- ~ `vpc`")]
    assert line == "- ~ `vpc`: `p` `a` →…"  # cut before the span it would leave open


def test_one_protected_resource_is_singular_and_its_note_is_a_warning() -> None:
    """The verdict counts protected resources in words a reviewer reads as they are, and the removed list flags the
    protected one with a warning, not a parenthesis."""
    logs = _record("aws:cloudwatch/logGroup:LogGroup", "logs", {"name": "l"}, protect=True)
    base, head = _plans(logs)
    head["resources"] = head["resources"][:1]
    body = _comment(base, head)
    assert body.splitlines()[0] == ("### `prod`: ⚠️ 1 protected resource would be deleted or replaced: `pulumi up` "
                                    "will fail")
    assert "- `logs` (`aws:cloudwatch/logGroup:LogGroup`) ⚠️ protected: `pulumi up` will fail" in body.splitlines()


def test_long_protected_and_removed_lists_say_how_many_were_left_out() -> None:
    """Both lists stop at 50 rows and say how many more there are, so a comment stays within GitHub's limit and
    nothing is left out silently."""
    buckets = [_record("aws:s3/bucket:Bucket", f"data-{i:03}", {"bucket": f"d{i}"}, protect=True) for i in range(51)]
    base, head = _plans(*buckets)
    head["resources"] = head["resources"][:1]
    lines = _comment(base, head).splitlines()
    assert sum(line.startswith("- `data-") and line.endswith("`") for line in lines) == 50  # the protected list
    assert sum(line.startswith("- `data-") and "(`aws:s3/bucket:Bucket`)" in line for line in lines) == 50  # Removed:
    assert lines.count("- … 1 more") == 2


def test_a_diff_with_no_changes_shows_its_counts_and_no_empty_table() -> None:
    """No changes: the counts say so, with no empty `Changes by component` table."""
    base, head = _plans(_record("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16"}))
    body = _comment(base, head)
    assert "**Diff:** +0 added, ~0 changed, ±0 replaced, -0 removed." in body.splitlines()
    assert "<details>" not in body and "| component |" not in body


def test_replacements_are_listed_before_updates() -> None:
    """Replacements are what a reviewer must not miss: they come first, so the 50-row cut never hides one."""
    a = _record("aws:ec2/vpc:Vpc", "a-vpc", {"cidrBlock": "10.0.0.0/16"})
    z = _record("aws:s3/bucket:Bucket", "z-data", {"bucket": "acme"})
    base, head = _plans(a, z)
    head["resources"][1]["inputs"]["cidrBlock"] = "10.1.0.0/16"
    head["resources"][2]["inputs"]["bucket"] = "acme-2"  # S3 cannot rename a bucket
    lines = [x for x in _comment(base, head).splitlines() if x.startswith(("- ~", "- ±"))]
    assert [x.split(":")[0] for x in lines] == ["- ± replaced `z-data`", "- ~ `a-vpc`"]


def test_the_resource_count_leaves_out_the_stack_and_components_and_no_policy_is_said() -> None:
    component = {"urn": "urn:pulumi:prod::ai-infra::acme:index:Net::net", "type": "acme:index:Net", "name": "net",
                 "parent": STACK_URN, "custom": False, "inputs": {}}
    _, head = _plans(component, _record("aws:ec2/vpc:Vpc", "vpc", {}), _record("aws:ec2/subnet:Subnet", "s", {}))
    body = render_markdown(head)
    assert "2 resources planned." in body.splitlines()
    assert "**Policy:** not evaluated (planned with `--no-policy`)." in body.splitlines()


def test_policy_rows_put_mandatory_first_escape_pipes_and_name_the_stack() -> None:
    """Blocking rules come first (the table stops at 50 rows), a `|` in a message does not split the table row, and a
    stack-level violation names the stack rather than an empty resource."""
    violations = [{"policy": "a-advisory", "enforcementLevel": "advisory", "urn": "urn:x::vpc", "message": "m"},
                  {"policy": "z-mandatory", "enforcementLevel": "mandatory", "urn": "", "message": "a | b"}]
    body = render_markdown({"stack": "prod", "resources": [], "policy": {"pack": "p", "violations": violations}})
    rows = [x for x in body.splitlines() if x.startswith("| mandatory") or x.startswith("| advisory")]
    assert rows == ["| mandatory | `z-mandatory` | `(stack)` | a \\| b |", "| advisory | `a-advisory` | `vpc` | m |"]


def test_a_long_policy_table_says_how_many_rows_were_left_out() -> None:
    """The policy table stops at 50 rows and says how many more there are."""
    violations = [{"policy": f"rule-{i:02}", "enforcementLevel": "advisory", "urn": "urn:x::r", "message": "m"}
                  for i in range(51)]
    body = render_markdown({"stack": "prod", "resources": [], "policy": {"pack": "p", "violations": violations}})
    assert body.count("| advisory | `rule-") == 50 and "| | | | … 1 more |" in body.splitlines()


def test_a_comment_exactly_at_the_limit_is_left_whole() -> None:
    """A comment of exactly GitHub's limit fits: nothing is dropped or cut."""
    section = render_markdown({"stack": "dev", "resources": []}, "summary line")
    body = "\n".join([MARKER, "## ai-infra plan", "", section])
    assert combine([section], limit=len(body)) == body


def test_what_a_small_section_leaves_goes_to_a_large_one_listed_before_it() -> None:
    """Sections are cut to fit GitHub's limit, but the budget a small section does not use is the large one's, whatever
    order the environments come in: the comment uses (nearly) all of it."""
    vpcs = [_record("aws:ec2/vpc:Vpc", f"vpc-{i:02}", {"tags": {f"k{j}": "x" * 20 for j in range(30)}})
            for i in range(60)]
    base, head = _plans(*vpcs)
    for record in head["resources"][1:]:
        record["inputs"]["tags"] = {k: "y" * 20 for k in record["inputs"]["tags"]}
    large = _comment(base, head)  # 50 changed-properties lines of 600 characters
    small = render_markdown({"stack": "dev", "resources": []})
    comment = combine([large, small], limit=20_000)
    assert len(comment) <= 20_000 and small in comment
    assert len(comment) > 19_000


# --- secrets.py -------------------------------------------------------------------------------------------------------

CONFIG = {"demo:token": SECRET_PLACEHOLDER, "demo:plain": "[secret]"}
SECURE = ["demo:token"]


@pytest.mark.parametrize("getter", ["get_secret", "get_secret_bool", "get_secret_int", "get_secret_float",
                                    "get_secret_object", "require_secret", "require_secret_bool", "require_secret_int",
                                    "require_secret_float", "require_secret_object"])
def test_every_secret_getter_gives_a_secret_unknown_for_a_secure_value(getter: str) -> None:
    """A plan cannot decrypt the value: each getter that returns a secret gives one that is unknown, so the typed ones
    do not fail parsing the placeholder and the resource records the unknown, kept secret."""
    def program() -> None:
        pulumi.CustomResource("test:index:Thing", "thing", {"value": getattr(pulumi.Config("demo"), getter)("token")})

    result = run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=SECURE)
    assert result.one("test:index:Thing").inputs["value"] == {SIG: SECRET, "value": UNKNOWN}


@pytest.mark.parametrize("getter", ["get_bool", "get_int", "get_float", "get_object", "require_bool", "require_int",
                                    "require_float", "require_object"])
def test_every_parsing_getter_on_a_secure_value_names_the_secret_getter(getter: str) -> None:
    """A plain getter that parses cannot parse a value the plan does not decrypt: each stops the plan naming the secret
    getter to use instead."""
    def program() -> None:
        getattr(pulumi.Config("demo"), getter)("token")

    with pytest.raises(pulumi.RunError) as caught:
        run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=SECURE)
    assert f"so {getter}() has nothing to parse; read it with {getter.replace('_', '_secret_', 1)}('token')" in str(
        caught.value)


def test_a_plain_value_that_reads_like_the_placeholder_is_no_secure_value() -> None:
    """Only a key the stack marks secure is refused: a plain value fails (or parses) as the SDK decides."""
    def program() -> None:
        pulumi.Config("demo").get_object("plain")

    with pytest.raises(pulumi.config.ConfigTypeError) as caught:
        run_program(program, project="demo", stack="dev", config=CONFIG, secret_keys=SECURE)
    assert "secure value" not in str(caught.value)


# --- outputs.py -------------------------------------------------------------------------------------------------------

def test_a_gcp_resources_project_and_merged_labels_are_left_to_the_provider_configuration() -> None:
    """The Google provider fills in project and the merged labels while planning: known in a real preview, so they must
    not reach the policy pack as unknown (its rules fall back to the provider's configuration instead)."""
    outputs = preview_outputs("gcp:storage/bucket:Bucket", {"name": "b", "location": "US"})
    assert "project" not in outputs and "effectiveLabels" not in outputs
    assert outputs["selfLink"] == UNKNOWN and outputs["name"] == "b"
