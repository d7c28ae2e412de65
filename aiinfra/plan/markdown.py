"""Pull-request comment bodies: one section per environment (diff, policy verdicts), combined under a marker."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- ai-infra-plan -->"
"""The workflow finds its own comment by this marker and updates it in place."""
_MAX_ROWS = 50
GITHUB_COMMENT_LIMIT = 65_536
"""The most characters GitHub accepts in an issue or pull-request comment body."""
_SUMMARY_START, _SUMMARY_END = "<!-- plan-summary -->", "<!-- /plan-summary -->"


def render_markdown(document: dict[str, Any], summary: str | None = None) -> str:
    """The comment section for one environment's plan document (with `diff` and `policy` when present), and the
    plan summary (`render_summary`) folded away when given."""
    custom = [r for r in document.get("resources", []) if r.get("custom")]
    policy = document.get("policy")
    mandatory = [v for v in (policy or {}).get("violations", []) if v["enforcementLevel"] == "mandatory"]
    verdict = "❌ blocked" if mandatory else "✅ passes"
    lines = [f"### `{document.get('stack')}`: {verdict}", "",
             f"{len(custom)} resources planned."]
    diff = document.get("diff")
    if diff:
        c = diff["counts"]
        lines.append(f"**Diff:** +{c['added']} added, ~{c['changed']} changed, -{c['removed']} removed.")
        if diff["components"]:
            lines += ["", "<details><summary>Changes by component</summary>", "", "| component | added | changed | removed |",
                      "| --- | ---: | ---: | ---: |"]
            for name, group in list(diff["components"].items())[:_MAX_ROWS]:
                lines.append(f"| {name} | {len(group['added'])} | {len(group['changed'])} | {len(group['removed'])} |")
            changed = [e for g in diff["components"].values() for e in g["changed"]]
            if changed:
                lines += ["", "Changed properties:", ""]
                lines += [f"- `{e['urn'].split('::')[-1]}`: {', '.join(f'`{p}`' for p in e['inputs'] + e['options'])}"
                          for e in changed[:_MAX_ROWS]]
            lines += ["", "</details>"]
    if policy is not None:
        violations = policy.get("violations", [])
        lines += ["", f"**Policy** `{policy.get('pack')}`: {len(violations)} violation(s), {len(mandatory)} mandatory."]
        if violations:
            lines += ["", "| level | rule | resource | message |", "| --- | --- | --- | --- |"]
            ordered = sorted(violations, key=lambda v: (v["enforcementLevel"] != "mandatory", v["policy"]))
            for v in ordered[:_MAX_ROWS]:
                message = v["message"].strip().splitlines()[-1].replace("|", "\\|") if v["message"].strip() else ""
                lines.append(f"| {v['enforcementLevel']} | `{v['policy']}` | `{v['urn'].split('::')[-1] or '(stack)'}` | {message} |")
            if len(ordered) > _MAX_ROWS:
                lines.append(f"| | | | … {len(ordered) - _MAX_ROWS} more |")
    if summary:
        lines += ["", _SUMMARY_START, "<details><summary>What the plan creates</summary>", "", "```text", summary,
                  "```", "", "</details>", _SUMMARY_END]
    return "\n".join(lines) + "\n"


def combine(sections: list[str], title: str = "ai-infra plan", limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """One comment for all environments, starting with the marker the workflow searches for. Over GitHub's
    limit, the plan summaries go first (the job log has them), then the tail is cut: verdicts stay on top."""
    body = "\n".join([MARKER, f"## {title}", "", *sections])
    if len(body) > limit:
        kept = [part.split(_SUMMARY_END, 1)[-1] for part in body.split(_SUMMARY_START)]
        body = "".join(kept) + "\n_Plan summaries left out to fit GitHub's comment limit; the job log has them._\n"
    if len(body) > limit:
        cut = "\n\n… cut to fit GitHub's comment limit; the job log has the rest.\n"
        body = body[: limit - len(cut)] + cut
    return body


if __name__ == "__main__":  # `python -m aiinfra.plan.markdown comment-*.md > comment.md`
    import sys
    from pathlib import Path

    print(combine([Path(p).read_text() for p in sys.argv[1:]]))
