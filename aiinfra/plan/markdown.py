"""Pull-request comment bodies: one section per environment (diff, policy verdicts), combined under a marker."""

from __future__ import annotations

import re
from typing import Any

from .diff import PROTECTED_NOTE, counts_line, describe_changes, stranded_lines

MARKER = "<!-- ai-infra-plan -->"
"""The workflow finds its own comment by this marker and updates it in place."""
_MAX_ROWS = 50
_MAX_LINE = 600
"""The most characters of one "Changed properties" line; the rest is cut with `…`."""
GITHUB_COMMENT_LIMIT = 65_536
"""The most characters GitHub accepts in an issue or pull-request comment body."""
_SUMMARY_START, _SUMMARY_END = "<!-- plan-summary -->", "<!-- /plan-summary -->"
CUT_NOTE = "… cut to fit GitHub's comment limit; the job log has the rest."


def _code(text: str) -> str:
    """`text` as inline code (a backtick in it would end the span)."""
    return f"`{text.replace('`', chr(39))}`"


def _cap(line: str, width: int = _MAX_LINE) -> str:
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    if cut.count("`") % 2:  # do not leave a code span open
        cut = cut[: cut.rfind("`")]
    return cut.rstrip() + "…"


def _verdict(document: dict[str, Any], mandatory: list[dict[str, Any]]) -> str:
    policy = document.get("policy")
    protected = (document.get("diff") or {}).get("protected") or []
    parts = []
    if mandatory:
        parts.append("❌ blocked")
    if protected:
        parts.append(f"⚠️ {len(protected)} protected resource{'s' if len(protected) != 1 else ''} would be deleted or "
                     "replaced: `pulumi up` will fail")
    if policy is None:
        parts.append("policy not evaluated")
    elif not parts:
        parts.append("✅ passes")
    return ", ".join(parts)


def _change_line(entry: dict[str, Any], replaced: bool) -> str:
    parts = describe_changes(entry, code=_code)
    mark = "± replaced" if replaced else "~"
    return _cap(f"- {mark} {_code(entry['urn'].split('::')[-1])}:{_notes(entry)} {', '.join(parts)}")


def _notes(entry: dict[str, Any]) -> str:
    """An entry's notes: the protected one as a warning, the others in parentheses."""
    return "".join(f" ⚠️ {note}" if note == PROTECTED_NOTE else f" ({note})" for note in entry.get("notes", []))


def _diff_lines(diff: dict[str, Any]) -> list[str]:
    lines = [f"**Diff:** {counts_line(diff['counts'])}."]
    groups = diff["components"]
    protected = diff.get("protected") or []
    if protected:
        lines += ["", "⚠️ **Protected resources would be deleted or replaced**, so `pulumi up` will fail until they are "
                  "unprotected (remove `protect` and deploy first, or `pulumi state unprotect`):", ""]
        lines += [f"- {_code(urn.split('::')[-1])}" for urn in protected[:_MAX_ROWS]]
        if len(protected) > _MAX_ROWS:
            lines.append(f"- … {len(protected) - _MAX_ROWS} more")
    for line in stranded_lines(diff, code=_code):
        lines += ["", f"⚠️ {_cap(line)}"]
    if not groups:
        return lines
    lines += ["", "<details><summary>Changes by component</summary>", "",
              "| component | added | changed | replaced | removed |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, group in list(groups.items())[:_MAX_ROWS]:
        lines.append(f"| {name} | {len(group['added'])} | {len(group['changed'])} | {len(group.get('replaced', []))} | "
                     f"{len(group['removed'])} |")
    if len(groups) > _MAX_ROWS:
        lines.append(f"| … {len(groups) - _MAX_ROWS} more | | | | |")
    changed = [(e, True) for g in groups.values() for e in g.get("replaced", [])]
    changed += [(e, False) for g in groups.values() for e in g["changed"]]
    if changed:
        lines += ["", "Changed properties:", ""]
        lines += [_change_line(e, replaced) for e, replaced in changed[:_MAX_ROWS]]
        if len(changed) > _MAX_ROWS:
            lines.append(f"- … {len(changed) - _MAX_ROWS} more")
    removed = [e for g in groups.values() for e in g["removed"]]
    if removed:
        lines += ["", "Removed:", ""]
        lines += [_cap(f"- {_code(e['urn'].split('::')[-1])} ({_code(e['type'])})"
                       + _notes(e))
                  for e in removed[:_MAX_ROWS]]
        if len(removed) > _MAX_ROWS:
            lines.append(f"- … {len(removed) - _MAX_ROWS} more")
    return [*lines, "", "</details>"]


def render_markdown(document: dict[str, Any], summary: str | None = None) -> str:
    """The comment section for one environment's plan document (with `diff` and `policy` when present), and the
    plan summary (`render_summary`) folded away when given."""
    custom = [r for r in document.get("resources", []) if r.get("custom")]
    policy = document.get("policy")
    mandatory = [v for v in (policy or {}).get("violations", []) if v["enforcementLevel"] == "mandatory"]
    lines = [f"### `{document.get('stack')}`: {_verdict(document, mandatory)}", "",
             f"{len(custom)} resources planned."]
    diff = document.get("diff")
    if diff:
        lines += _diff_lines(diff)
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
    else:
        lines += ["", "**Policy:** not evaluated (planned with `--no-policy`)."]
    if summary:
        lines += ["", _SUMMARY_START, "<details><summary>What the plan creates</summary>", "", "```text", summary,
                  "```", "", "</details>", _SUMMARY_END]
    return "\n".join(lines) + "\n"


_FENCE = re.compile(r"^\s*(```|~~~)")


def _closing(fence: bool, details: int) -> str:
    return ("```\n" if fence else "") + "</details>\n" * details


def _fit(section: str, budget: int) -> str:
    """`section` cut at a line to at most `budget` characters, keeping its first line (the verdict), closing the
    code block and `<details>` it leaves open, and saying it was cut."""
    if len(section) <= budget:
        return section
    lines = section.split("\n")
    note = f"\n{CUT_NOTE}\n"
    first = lines[0] if len(lines[0]) + 2 + len(note) <= budget else lines[0][: max(budget - len(note) - 3, 0)] + "…"
    kept, size, fence, details = [first], len(first) + 2, False, 0  # + the blank line before the closing tags
    for line in lines[1:]:
        next_fence = fence != bool(_FENCE.match(line))
        next_details = details
        if not next_fence and not fence:
            next_details += line.count("<details") - line.count("</details>")
        if size + len(line) + 1 + len(_closing(next_fence, max(next_details, 0))) + len(note) > budget:
            break
        kept.append(line)
        size += len(line) + 1
        fence, details = next_fence, max(next_details, 0)
    return "\n".join(kept) + "\n" + ("\n" if not fence else "") + _closing(fence, details) + note


def _fit_all(sections: list[str], budget: int) -> list[str]:
    """Each section cut to its share of `budget`: sections under an even share keep all of theirs, and what they
    leave goes to the others."""
    shares: dict[int, int] = {}
    left, pending = budget, sorted(range(len(sections)), key=lambda i: len(sections[i]))
    while pending:
        even = left // len(pending)
        i = pending[0]
        if len(sections[i]) <= even:
            shares[i] = len(sections[i])
            left -= shares[i]
            pending.pop(0)
        else:
            for j in pending:
                shares[j] = even
            break
    return [_fit(section, max(shares[i], 0)) for i, section in enumerate(sections)]


def combine(sections: list[str], title: str = "ai-infra plan", limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """One comment for all environments, starting with the marker the workflow searches for. Over GitHub's
    limit, the plan summaries go first (the job log has them), then each section is cut to its share: every
    environment keeps its verdict line, and no `<details>` is left open."""
    head = [MARKER, f"## {title}", ""]
    body = "\n".join([*head, *sections])
    if len(body) <= limit:
        return body
    sections = [("".join(part.split(_SUMMARY_END, 1)[-1] for part in s.split(_SUMMARY_START))) for s in sections]
    footer = "\n_Plan summaries left out to fit GitHub's comment limit; the job log has them._\n"
    body = "\n".join([*head, *sections]) + footer
    if len(body) <= limit:
        return body
    fixed = len("\n".join(head)) + 1 + max(len(sections) - 1, 0) + len(footer)
    return "\n".join([*head, *_fit_all(sections, limit - fixed)]) + footer


if __name__ == "__main__":  # `python -m aiinfra.plan.markdown comment-*.md > comment.md`
    import sys
    from pathlib import Path

    print(combine([Path(p).read_text() for p in sys.argv[1:]]))
