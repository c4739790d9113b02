"""`shiftkit audit`: every rule over every commit in a range, including commits that never
met the hooks (`--no-verify`, `cherry-pick`, `commit-tree`). Meant for CI, where it cannot be
skipped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from shiftkit.core import features, rules
from shiftkit.core.config import Config
from shiftkit.core.errors import BadInput, ShiftkitError
from shiftkit.core.orientation import clip
from shiftkit.core.words import counted
from shiftkit.edge import adoption, commits, gitio, history, revisions, verdicts, verify
from shiftkit.edge.context import Context, short

if TYPE_CHECKING:
    from shiftkit.commands.strict import Strict


@dataclass
class Finding:
    commit: str
    subject: str
    violations: list[rules.Violation] = field(default_factory=list)
    overridden: list[rules.Violation] = field(default_factory=list)
    override_reason: str | None = None
    person_actions: list[str] = field(default_factory=list)
    # what a person let stand with `shiftkit accept` (decision record 0082), and how
    accepted: list[rules.Violation] = field(default_factory=list)
    accepted_by: str = ""  # "accepted by <person> in <commit>: <reason>"


def commits_in(
    root: Path, since: str | None, features_file: str = "features.json", tip: str | None = None
) -> list[revisions.Commit]:
    """The commits under the protocol (from the one that adopted shiftkit on: decision record
    0013) after ``since`` (exclusive) up to ``tip`` (default HEAD), oldest first."""
    for name, rev in (("--since", since), ("REV", tip)):
        if rev is not None and _commit_oid(root, rev) is None:
            raise BadInput(f"{name} {rev!r}: not a commit in this repository")
    if tip is None and gitio.head_oid(root) is None:
        unborn_head(root)
        return []
    oid = _commit_oid(root, tip) if tip is not None else "HEAD"
    selected = protocol_commits(
        root, [f"{since}..{oid}" if since else str(oid)], features_file, [str(oid)]
    )
    cut = shallow_edge(root) & {c.oid for c in selected}
    if cut:
        # A commit at a shallow clone's edge shows no parents: judged as a root, its flips
        # would count for nothing.
        raise BadInput(
            f"the history is shallow: {sorted(cut)[0][:7]} is judged without its parents; "
            f"fetch the whole history (`git fetch --unshallow`; in CI, fetch-depth: 0) or "
            f"audit a range after it with --since"
        )
    return selected


def unborn_head(root: Path) -> None:
    """Raise when HEAD names a branch with no commit while the repository has commits (a
    clone whose remote HEAD names a missing branch): "0 commits checked" would be a pass."""
    branches = gitio.out(["for-each-ref", "--count=3", "--format=%(refname:short)"], root).split()
    if not branches:
        return  # (an empty repository: nothing to judge, truly)
    name = gitio.run(["symbolic-ref", "-q", "--short", "HEAD"], root, check=False).stdout.strip()
    raise BadInput(
        f"HEAD names the branch {name or '?'!r}, which has no commit, while this repository "
        f"has {', '.join(branches)}: check out the branch to judge (`git checkout "
        f"{branches[0]}`) or name it: `shiftkit audit REV`"
    )


def tip_oid(root: Path, rev: str | None) -> str | None:
    """The commit ``rev`` (default HEAD) names now: resolved once, before any judged code
    runs, since a verifier can move a ref (decision record 0045)."""
    return _commit_oid(root, rev) if rev is not None else gitio.head_oid(root)


def _commit_oid(root: Path, rev: str) -> str | None:
    if rev.startswith("-"):
        return None
    proc = gitio.run(["rev-parse", "-q", "--verify", f"{rev}^{{commit}}"], root, check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def shallow_edge(root: Path) -> set[str]:
    """The commits whose parents a shallow clone left out (none in a full clone)."""
    path = gitio.common_dir(root) / "shallow"
    try:
        return set(path.read_text(encoding="ascii").split())
    except FileNotFoundError:
        return set()


def protocol_commits(
    root: Path, selection: list[str], features_file: str, tips: list[str] | None = None
) -> list[revisions.Commit]:
    """The commits ``selection`` selects that are under the protocol; ``tips`` (default HEAD)
    are where the protocol's part of history is looked for."""
    scope = adoption.scope(root, tips or ["HEAD"], features_file)
    if not scope.adopting:
        return []
    # The boundary first: a `--not` inside ``selection`` would turn it around.
    bounded = [*(f"^{oid}" for oid in scope.boundary), *selection]
    return [c for c in revisions.read_commits(root, bounded) if c.oid in scope.commits]


def reverify_at(
    ctx: Context,
    commit: revisions.Commit,
    feature: features.Feature,
    command: str,
    isolated: bool = False,
) -> verify.Outcome:
    """The verifier re-run in a clean checkout of the commit, after `init` — both, and the
    timeout, as the commit's parent sets them (the judged commit's own settings, or the work
    tree's, could make its verifier pass) — with the feature's oracle as defined written over
    it (`overlay`: its note says what was restored)."""
    from shiftkit.edge import judge

    parent = commit.parents[0] if commit.parents else None
    cfg = judge.at_revisions(ctx.root, parent, f"{commit.oid}:").parent
    tree, note = oracle_tree(ctx, commit, feature, command, cfg)
    outcome = verify.run_in_checkout(
        ctx.root,
        tree,
        command,
        cfg.init,
        cfg.verify_timeout,
        isolated,
        cfg.junit,
        commit.oid,
        exact=True,  # (re-verification: the command as written must pass too, 0097)
    )
    return outcome._replace(note=note)


def oracle_tree(
    ctx: Context,
    commit: revisions.Commit,
    feature: features.Feature,
    command: str,
    cfg: Config,
) -> tuple[str, str]:
    """(the tree to re-verify ``feature`` at ``commit`` on, what was restored in it): the
    commit's tree with the feature's oracle as defined (decision record 0081)."""
    from shiftkit.edge import overlay

    found = overlay.overlays(ctx.root, commit.oid, commit.tree, [(feature, command)], cfg)
    made = found.get(feature.id)
    return (made.tree, made.note()) if made is not None else (commit.tree, "")


def audit(
    ctx: Context, since: str | None, reverify: bool, say: Callable[[str], None]
) -> list[Finding]:
    return audit_commits(ctx, commits_in(ctx.root, since, ctx.config.features), reverify, say)


Reverify = Callable[[revisions.Commit, features.Feature, str], verify.Outcome]


def audit_commits(
    ctx: Context,
    selected: list[revisions.Commit],
    reverify: bool,
    say: Callable[[str], None],
    isolated: bool = False,
    outcomes: Reverify | None = None,
) -> list[Finding]:
    """Every commit of ``selected`` (oldest first) judged by `commits.judge_commit`, its files
    read in bulk (`edge.history`); ``isolated``: re-verification in
    `verify.isolated_environment`; ``outcomes``: where a re-verification's outcome comes
    from (default: `reverify_at`, one after another)."""
    with history.History(ctx.root, ctx.common_dir, selected) as read:
        found = [
            _judge(ctx, commit, reverify, say, read, isolated, outcomes) for commit in selected
        ]
    findings = [finding for finding in found if finding is not None]
    apply_acceptances(ctx.root, selected, findings)
    return findings


def apply_acceptances(root: Path, judged: list[revisions.Commit], findings: list[Finding]) -> None:
    """The violations of each commit of ``judged`` that a person accepted among them
    (`acceptance.honoured`) move to the finding's ``accepted``: no judge refuses on them."""
    from shiftkit.core import acceptance

    broken = {f.commit: f for f in findings if f.violations}
    if not broken or not any(acceptance.ACCEPT_KEY in c.message for c in judged):
        return
    found = acceptance.honoured(
        [(c.oid, c.message) for c in judged],
        lambda oid: oid in broken,
        lambda older, newer: gitio.is_ancestor(root, older, newer),
    )
    if not found:
        return
    authors = gitio.authors(root, sorted({a.by for a in found.values()}))
    for oid, accepted in found.items():
        finding = broken[oid]
        finding.accepted, finding.violations = finding.violations, []
        finding.accepted_by = (
            f"accepted by {authors.get(accepted.by, '?')} in {short(accepted.by)}: "
            f"{accepted.reason}"
        )


def _new_here(ctx: Context, tip: str) -> list[str]:
    """The revisions that select what ``tip`` would bring onto this machine's branches."""
    return [tip, "--not", *verdicts.branch_evidence(str(ctx.root))]


def unjudged(ctx: Context, tip: str, walk: list[str] | None = None) -> list[revisions.Commit]:
    """The commits ``tip`` would bring onto this machine's branches (``walk``: `_new_here`'s
    revisions, when known) that no judge here has passed yet, oldest first."""
    walked = revisions.read_commits(ctx.root, walk or _new_here(ctx, tip))
    known = verdicts.judged(str(ctx.common_dir), [c.oid for c in walked])
    return [c for c in walked if c.oid not in known]


def record_judged(ctx: Context, judged: list[revisions.Commit]) -> None:
    """Each of ``judged`` passed a re-verifying judge here, and so did all they reach: a
    verdict vouches for everything its commit reaches (decision record 0043)."""
    verdicts.record(str(ctx.common_dir), [c.oid for c in judged])


def outside_scope(
    ctx: Context,
    todo: list[revisions.Commit],
    audited: list[revisions.Commit],
    say: Callable[[str], None],
    isolated: bool = False,
) -> tuple[int, list[Finding]]:
    """The commits of ``todo`` (about to get a verdict) that ``audited`` left out — outside
    protocol history from the tip's side, as an unrelated root merged in is — judged as the
    reference-transaction hook would judge them, re-verifying: a verdict vouches only for
    what a judge here passed (decision record 0045). Returns (how many, their findings)."""
    ids = {c.oid for c in audited}
    rest = [c for c in todo if c.oid not in ids]
    return len(rest), (audit_commits(ctx, rest, True, say, isolated) if rest else [])


def accept(
    ctx: Context, tip: str, say: Callable[[str], None], jobs: int | None = None
) -> list[Finding]:
    """Judge, re-verifying every flip (``jobs`` at once, a pass recorded at the commit's tree
    not run again), the commits ``tip`` would bring onto this machine's branches
    (`unjudged`), those outside protocol history included; when none breaks a rule, record
    them all as judged. `sync` calls it before it moves a branch. Returns the findings."""
    tip = tip_oid(ctx.root, tip) or tip  # (once: a verifier can move the ref)
    walk = _new_here(ctx, tip)
    todo = unjudged(ctx, tip, walk)
    if not todo:
        return []
    ids = {c.oid for c in todo}
    selected = [
        c for c in protocol_commits(ctx.root, walk, ctx.config.features, [tip]) if c.oid in ids
    ]
    findings = _judge_in_parallel(ctx, selected, say, jobs)
    findings += outside_scope(ctx, todo, selected, say)[1]
    if not any(f.violations for f in findings):
        record_judged(ctx, todo)
    return findings


def _judge_in_parallel(
    ctx: Context, selected: list[revisions.Commit], say: Callable[[str], None], jobs: int | None
) -> list[Finding]:
    """`audit_commits` re-verifying, its verifier runs made all at once: a first pass learns
    which flips need a run (saying each, running none), they run in parallel, each in a
    checkout of its commit with the parent's `init` and timeout (`reverify_at`'s settings),
    cached by tree, their reads measured; when one fails, a second pass judges with their
    outcomes (when all pass, the first pass's findings are the answer). Each feature that
    passed is stamped verified (as `finish` and the publish gate stamp theirs), so the next
    start check's sample does not run it again where nothing it reads changed since
    (decision record 0079)."""
    import os

    from shiftkit.edge import judge, regression, state

    wanted: dict[tuple[str, str, str], regression.TreeJob] = {}
    notes: dict[tuple[str, str, str], str] = {}
    owners: dict[regression.TreeJob, list[str]] = {}
    passing = verify.Outcome("", True, 0, 0.0, "")

    def plan(commit: revisions.Commit, feature: features.Feature, command: str) -> verify.Outcome:
        parent = commit.parents[0] if commit.parents else None
        cfg = judge.at_revisions(ctx.root, parent, f"{commit.oid}:").parent
        tree, note = oracle_tree(ctx, commit, feature, command, cfg)
        key = (commit.oid, feature.id, command)
        job = regression.TreeJob(tree, command, cfg.init, cfg.verify_timeout, commit.oid)
        wanted[key] = job
        notes[key] = note
        if feature.id not in owners.setdefault(job, []):
            owners[job].append(feature.id)
        return passing._replace(command=command, note=note)

    first = audit_commits(ctx, selected, True, say, outcomes=plan)
    if not wanted:
        return first
    keys = list(wanted)
    work = [wanted[key] for key in keys]
    ran = regression.run_each(ctx, work, jobs or os.cpu_count() or 1, owners)
    verified = [
        i for job, outcome in zip(work, ran, strict=True) if outcome.ok for i in owners[job]
    ]
    state.stamp_verified(ctx.common_dir, list(dict.fromkeys(verified)))
    if all(outcome.ok for outcome in ran):
        return first  # (what the first pass took for granted held: the same findings)
    found = dict(zip(keys, ran, strict=True))

    def outcome(
        commit: revisions.Commit, feature: features.Feature, command: str
    ) -> verify.Outcome:
        key = (commit.oid, feature.id, command)
        return found[key]._replace(note=notes[key])

    return audit_commits(ctx, selected, True, lambda text: None, outcomes=outcome)


def _judge(
    ctx: Context,
    commit: revisions.Commit,
    reverify: bool,
    say: Callable[[str], None],
    read: history.History | None,
    isolated: bool = False,
    outcomes: Reverify | None = None,
) -> Finding | None:
    """One commit's finding (None: nothing to report); ``read``: the bulk reader, or None to
    read the commit's files on their own (as the reference-transaction hook does)."""
    present = rules.trailers(commit.message)
    restored: dict[str, str] = {}  # feature id -> what its re-verification restored

    def evidence(feature: features.Feature, command: str, verify_in: str) -> str | None:
        # Plain audit can only see what the commit claims; --reverify checks it.
        if commit.tree not in present.get("Shiftkit-Verified", []):
            return "the commit has no Shiftkit-Verified trailer for its tree (made past the hooks?)"
        if not reverify:
            return None
        say(f"re-verifying {feature.id} at {short(commit.oid)}: {command}")
        if outcomes is not None:
            outcome = outcomes(commit, feature, command)
        else:
            outcome = reverify_at(ctx, commit, feature, command, isolated)
        if outcome.note:
            restored[feature.id] = outcome.note
        if not outcome.ok:
            return f"its verifier fails when re-run at this commit ({outcome.summary()})"
        return None

    report = commits.judge_commit(ctx.root, ctx.common_dir, commit, evidence, history=read)
    report.violations.extend(oracle_changed(fid, note) for fid, note in restored.items())
    if not (report.violations or report.overridden or report.person_actions):
        return None
    return Finding(
        commit.oid,
        commit.subject,
        report.violations,
        report.overridden,
        report.override_reason,
        report.person_actions,
    )


def oracle_changed(feature_id: str, note: str) -> rules.Violation:
    """A re-verification that had to restore a feature's oracle: it was changed since its
    definition by no person's action, whatever rule 14 said of the commits (decision record
    0081)."""
    return rules.Violation(
        rules.Rule.PROTECTED,
        f"{feature_id}'s oracle at this commit is not as defined ({note}): changed since its "
        f"definition by no person's action, so it was re-verified with the oracle as defined; "
        f"ask a person to restore the oracle, or to change it with an override",
        feature_id,
    )


def _subject(finding: Finding) -> str:
    """The commit's subject, quoted, at most 50 characters (a longer one ends in "…")."""
    return repr(clip(finding.subject, 50))


def not_judged(
    ctx: Context, selected: Sequence[revisions.Commit]
) -> list[tuple[str, str, list[str]]]:
    """(commit, subject, paths) of each commit of ``selected`` that changed files outside
    `code` (none but the protocol's): allowed, but no verdict reads them from it (0086)."""
    from shiftkit.core import ground
    from shiftkit.edge import assemble

    code = ctx.config.code
    if not code or not selected:
        return []
    listing = gitio.out(
        [
            "-c",
            "core.quotePath=false",
            "log",
            "--no-walk=unsorted",
            "--no-renames",
            "--diff-merges=combined",  # (a merge: the files it brought itself, 0112)
            "-z",
            "--format=%x01%H%x00%s",
            "--name-only",
            *(commit.oid for commit in selected),
        ],
        ctx.root,
    )
    protocol = assemble.protocol_files(ctx.config)
    found = []
    for record in listing.split("\x01"):
        oid, _, rest = record.partition("\0")
        subject, _, names = rest.partition("\0")
        paths = ground.not_judged([n for n in names.lstrip("\n").split("\0") if n], code, protocol)
        if oid and paths:
            found.append((oid, subject, paths))
    return found


def render_ground(code: Sequence[str], outside: Sequence[tuple[str, str, list[str]]]) -> str:
    """The audit's ground: where the agent's work is judged from, and the commits that changed
    files elsewhere (judged as the person left them)."""
    from shiftkit.core import ground

    lines = [f"ground: {ground.describe(code)}"]
    if outside:
        lines.append("not judged (files outside `code`; verdicts read the person's versions):")
        for oid, subject, paths in outside:
            shown = ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
            lines.append(f"  {short(oid)} {subject[:50]}: {shown}")
    return "\n".join(lines)


def render(findings: list[Finding], checked: int) -> str:
    lines = []
    bad = [f for f in findings if f.violations]
    for finding in bad:
        for violation in finding.violations:
            lines.append(f"{short(finding.commit)} {_subject(finding)}: {violation}")
    overrides = [f for f in findings if f.overridden]
    for finding in overrides:
        rules_hit = ", ".join(sorted({str(int(v.rule)) for v in finding.overridden}))
        lines.append(
            f"override {short(finding.commit)} (rules {rules_hit}): {finding.override_reason}"
        )
    accepted = [f for f in findings if f.accepted]
    if accepted:
        lines.append("accepted (broken, and let stand by a person with `shiftkit accept`):")
        for finding in accepted:
            lines += [
                f"  {short(finding.commit)} {_subject(finding)}: {violation} — "
                f"{finding.accepted_by}"
                for violation in finding.accepted
            ]
    people = [f for f in findings if f.person_actions]
    if people:
        lines.append(
            "person actions (a person's to make; `audit --strict` proves them or refuses):"
        )
        for finding in people:
            lines += [
                f"  {short(finding.commit)} {_subject(finding)}: {action}"
                for action in finding.person_actions
            ]
    lines.append(
        f"audit: {counted(checked, 'commit')} checked, {len(bad)} with violations, "
        f"{len(overrides)} with overrides, {len(people)} with person actions"
        + (f", {len(accepted)} accepted" if accepted else "")
    )
    return "\n".join(lines)


def _violation_row(finding: Finding, violation: rules.Violation) -> dict[str, Any]:
    return {
        "commit": finding.commit,
        "subject": finding.subject,
        "rule": violation.rule,
        "feature": violation.feature,
        "message": violation.message,
    }


def as_json(findings: list[Finding], checked: int) -> dict[str, Any]:
    return {
        "checked": checked,
        "violations": [_violation_row(f, v) for f in findings for v in f.violations],
        "overrides": [
            {
                "commit": f.commit,
                "subject": f.subject,
                "reason": f.override_reason,
                "rules": sorted({int(v.rule) for v in f.overridden}),
            }
            for f in findings
            if f.overridden
        ],
        "person_actions": [
            {"commit": f.commit, "subject": f.subject, "actions": f.person_actions}
            for f in findings
            if f.person_actions
        ],
        "accepted": [
            {**_violation_row(f, v), "accepted_by": f.accepted_by}
            for f in findings
            for v in f.accepted
        ],
    }


def people_summary(root: Path, findings: list[Finding], policy: str) -> tuple[str, bool]:
    """Every person action as a Markdown table (commit, author, signature, action) for a
    person to read — CI writes it to the job's summary — and whether the `signed` policy
    refuses one of them (rule 11: unsigned, or signed by no allowed key)."""
    people = [f for f in findings if f.person_actions]
    if not people:
        return f"### shiftkit: no person actions (policy `{policy}`)\n", False
    shown = gitio.out(
        [
            "log",
            "--no-walk=unsorted",
            "--format=%H%x00%an <%ae>%x00%G?",
            *[f.commit for f in people],
        ],
        root,
    )
    about = {}
    for line in shown.splitlines():
        oid, author, mark = [*line.split("\0"), "", ""][:3]
        about[oid] = (author, "unsigned" if mark == "N" else f"signed ({mark})")
    lines = [
        f"### shiftkit: {counted(len(people), 'commit')} with person actions (policy `{policy}`)",
        "",
        "| commit | author | signature | person action |",
        "| --- | --- | --- | --- |",
    ]
    refused = False
    for finding in people:
        author, signature = about.get(finding.commit, ("?", "?"))
        if any(v.rule == 11 for v in finding.violations):
            refused, signature = True, f"{signature}, refused by rule 11"
        for action in finding.person_actions:
            cells = (short(finding.commit), author, signature, action)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n", refused and policy == "signed"


class UsageRead(NamedTuple):
    """Every clone's usage ref as `audit` read it (decision record 0072)."""

    clones: int
    records: int
    problems: list[str]  # one per line left out, naming the ref and the line

    def line(self) -> str:
        left = f"; {counted(len(self.problems), 'line')} left out (above)" if self.problems else ""
        return (
            f"usage refs: {counted(self.records, 'record')} from "
            f"{counted(self.clones, 'clone')}{left}"
        )

    def as_json(self) -> dict[str, Any]:
        return {"clones": self.clones, "records": self.records, "problems": self.problems}


def read_usage(ctx: Context, warn: Callable[[str], None]) -> UsageRead | None:
    """Every clone's usage ref, fetched first from the claims remote as `cost` does (what was
    fetched last when it does not answer: one `warn` line, never a verdict), read by the
    bounded reader `cost` reads with: None when there is none. They carry no commits of the
    branch, so they break no rule here; a line `cost` leaves out is named."""
    from shiftkit.edge import ledger

    remote = ctx.config.claims.remote
    try:
        problem = ledger.fetch_usage(ctx)
        if problem:
            warn(
                f"shiftkit: the usage refs were not fetched from {remote} ({problem}); "
                f"read as last fetched"
            )
        return _usage_read(ctx)
    except ShiftkitError as error:
        warn(f"shiftkit: the usage refs were not read ({error}); the verdict stands")
        return None


def _usage_read(ctx: Context) -> UsageRead | None:
    from shiftkit.core import ledger as ledger_core
    from shiftkit.edge import ledger, usage_ref

    texts = usage_ref.every(ctx.root, ctx.config.claims.ref_prefix)
    if not texts:
        return None
    try:
        known = ledger_core.parse(ledger.head_text(ctx), f"{ledger_core.LEDGER_FILE} at HEAD")
    except BadInput:
        known = []  # (rule 12 names the committed ledger's bad lines)
    entries, problems = ledger_core.read_lines(texts, known)
    clones = {source.partition(":")[0].rpartition("/")[2] for source, _ in texts}
    return UsageRead(len(clones), len(entries), problems)


def audit_cmd(
    ctx: Context,
    since: str | None,
    reverify: bool,
    strict: bool,
    isolated: bool,
    machine: bool,
    people: bool,
    rev: str | None,
    say: Callable[[str], None],
    warn: Callable[[str], None],
) -> int:
    """`shiftkit audit`: judge every commit up to `rev`, report on `say` (progress on `warn`);
    1 when a rule is broken (with `strict`, a person action too; with `people`, one refused)."""
    import json

    from shiftkit.core.errors import OK, REFUSED

    selected = commits_in(ctx.root, since, ctx.config.features, rev)
    # What a verdict may cover is fixed before any judged code runs: a verifier runs in a
    # worktree of this repository and can move REV (decision record 0045).
    tip = tip_oid(ctx.root, rev)
    todo = unjudged(ctx, tip) if reverify and since is None and tip else []
    findings = audit_commits(ctx, selected, reverify, warn, isolated)
    if todo and not any(f.violations for f in findings):
        # Every commit up to REV passed, re-verified: judged here (decision record 0043) —
        # and those outside protocol history too, as the reference-transaction hook would
        # judge them (0045); they decide the record only, not this audit's verdict.
        _, outside = outside_scope(ctx, todo, selected, warn, isolated)
        broken = [f for f in outside if f.violations]
        if broken:
            warn(
                f"shiftkit: not recorded as judged here: {broken[0].commit[:7]}, outside "
                f"the protocol's history from {rev or 'HEAD'}, breaks a rule "
                f"({broken[0].violations[0]})"
            )
        else:
            record_judged(ctx, todo)
    if people:
        table, refused = people_summary(ctx.root, findings, ctx.config.people.policy)
        say(table.removesuffix("\n"))  # (the table ends in its newline)
        return REFUSED if refused else OK
    usage = read_usage(ctx, warn)
    for problem in usage.problems if usage else []:
        warn(f"shiftkit: usage left out of `shiftkit cost`: {problem}")
    elsewhere = not_judged(ctx, selected)
    proven = _strict(ctx, tip, selected, findings) if strict else None
    if machine:
        document = as_json(findings, len(selected))
        if usage is not None:
            document["usage_refs"] = usage.as_json()
        document["not_judged"] = [{"commit": oid, "paths": paths} for oid, _, paths in elsewhere]
        if proven is not None:
            document["strict"] = proven.document
        say(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        say(render_ground(ctx.config.code, elsewhere))
        say(render(findings, len(selected)))
        if usage is not None:
            say(usage.line())
        for line in proven.lines if proven else []:
            say(line)
    if any(f.violations for f in findings):
        return REFUSED
    if proven is not None and proven.refusal is not None:
        # (a refusal says why: an agent trial read a bare exit 1 as a bug)
        warn(proven.refusal)
        return REFUSED
    return OK


def _strict(
    ctx: Context, tip: str | None, selected: list[revisions.Commit], findings: list[Finding]
) -> Strict:
    """What `--strict` says (`commands.strict`), under the policy the tip sets."""
    from shiftkit.commands import strict
    from shiftkit.edge import proof

    policy = proof.policy_at(ctx.root, tip) if tip else ctx.config.people.policy
    acted = [f.commit for f in findings if f.person_actions]
    return strict.judge(ctx.root, policy, selected, acted)
