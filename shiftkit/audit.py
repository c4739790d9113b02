"""`shiftkit audit`: every rule over every commit in a range, including commits that never
met the hooks (`--no-verify`, `cherry-pick`, `commit-tree`). Meant for CI, where it cannot be
skipped."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiftkit import features, gitio, rules, snapshot, state, verify
from shiftkit.context import Context, short
from shiftkit.errors import BadInput


@dataclass
class Finding:
    commit: str
    subject: str
    violations: list[rules.Violation] = field(default_factory=list)
    overridden: list[rules.Violation] = field(default_factory=list)
    override_reason: str | None = None


def commits_in(root: Path, since: str | None) -> list[tuple[str, list[str], str, str]]:
    """(commit, parents, tree, message), oldest first."""
    if since is not None and gitio.run(["rev-parse", "-q", "--verify", f"{since}^{{commit}}"],
                                       root, check=False).returncode != 0:  # fmt: skip
        raise BadInput(f"--since {since!r}: not a commit in this repository")
    if gitio.head_oid(root) is None:
        return []
    span = f"{since}..HEAD" if since else "HEAD"
    raw = gitio.out(["log", "--reverse", "--topo-order", "--format=%H%x00%P%x00%T%x00%B%x00%x01",
                     span], root)  # fmt: skip
    result = []
    for record in raw.split("\x01"):
        record = record.lstrip("\n")
        if not record:
            continue
        commit, parents, tree, message, _ = record.split("\x00")
        result.append((commit, parents.split(), tree, message))
    return result


def _reverify(ctx: Context, commit: str, command: str) -> verify.Outcome:
    workdir = Path(tempfile.mkdtemp(prefix="shiftkit-audit-"))
    target = workdir / "tree"
    try:
        gitio.run(["worktree", "add", "--detach", "-q", str(target), commit], ctx.root)
        return verify.run_command(command, target, ctx.config.verify_timeout)
    finally:
        gitio.run(["worktree", "remove", "--force", str(target)], ctx.root, check=False)
        shutil.rmtree(workdir, ignore_errors=True)
        gitio.run(["worktree", "prune"], ctx.root, check=False)


def audit(ctx: Context, since: str | None, reverify: bool, say: Any) -> list[Finding]:
    cfg = ctx.config
    names = (cfg.features, cfg.progress, cfg.log.archive)
    findings = []
    for commit, parents, tree, message in commits_in(ctx.root, since):
        sides, blobs = snapshot.read_sides(ctx.root, parents or [], names, ctx.common_dir)
        if not parents:
            sides = [rules.Side(None, None, None)]
        proposed, features_blob = snapshot.read_proposed(
            ctx.root, [f"{commit}:{name}" for name in names])
        present = rules.trailers(message)

        def verification(feature: features.Feature, commit: str = commit, tree: str = tree,
                         present: dict[str, list[str]] = present) -> str | None:  # fmt: skip
            if tree not in present.get("Shiftkit-Verified", []):
                return "the commit has no Shiftkit-Verified trailer for its tree (made past the hooks?)"
            if not reverify:
                return None
            command = features.effective_verify(feature, cfg.verify)
            if command is None:
                return "it has no verify command"
            say(f"re-verifying {feature.id} at {short(commit)}: {command}")
            outcome = _reverify(ctx, commit, command)
            if not outcome.ok:
                return f"its verifier fails when re-run at this commit ({outcome.summary()})"
            return None

        # Rule 6 in history: a flip must carry the claim it was finished under.
        under_claim = [v for v in present.get("Shiftkit-Claim", []) if v and v != "-"]
        named = present.get("Shiftkit-Feature", [])
        report = rules.evaluate(
            sides, proposed, rules_to_check=rules.ALL, names=names, message=message,
            claimed=named[0] if under_claim and named else None,
            claims_enabled=cfg.claims.enabled, verification=verification,
            **snapshot.trust(sides, blobs, ctx.common_dir),
        )  # fmt: skip
        violations = report.violations
        if features_blob is not None and report.staged is not None and not any(
            v.rule == 1 for v in violations
        ):
            state.mark_validated(ctx.common_dir, features_blob[0])
        if violations or report.overridden:
            findings.append(Finding(commit, message.splitlines()[0] if message else "", violations,
                                    report.overridden, report.override_reason))  # fmt: skip
    return findings


def render(findings: list[Finding], checked: int) -> str:
    lines = []
    bad = [f for f in findings if f.violations]
    for finding in bad:
        for violation in finding.violations:
            lines.append(f"{short(finding.commit)} {finding.subject[:50]!r}: {violation}")
    overrides = [f for f in findings if f.overridden]
    for finding in overrides:
        rules_hit = ", ".join(sorted({str(v.rule) for v in finding.overridden}))
        lines.append(f"override {short(finding.commit)} (rules {rules_hit}): {finding.override_reason}")
    lines.append(f"audit: {checked} commits checked, {len(bad)} with violations, "
                 f"{len(overrides)} with overrides")  # fmt: skip
    return "\n".join(lines)


def as_json(findings: list[Finding], checked: int) -> dict[str, Any]:
    return {
        "checked": checked,
        "violations": [
            {"commit": f.commit, "subject": f.subject, "rule": v.rule, "feature": v.feature,
             "message": v.message}
            for f in findings for v in f.violations
        ],
        "overrides": [
            {"commit": f.commit, "subject": f.subject, "reason": f.override_reason,
             "rules": sorted({v.rule for v in f.overridden})}
            for f in findings if f.overridden
        ],
    }  # fmt: skip
