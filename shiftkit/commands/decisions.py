"""Architecture decision records: `NNNN-slug.md` in Nygard's form, and the index line."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path

from shiftkit.core import rules
from shiftkit.core.errors import BadInput
from shiftkit.edge import gitio
from shiftkit.edge.atomic import atomic_write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shiftkit.edge.context import Context

INDEX = "README.md"


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:60].rstrip("-") or "decision"


def next_number(folder: Path, elsewhere: Iterable[int] = ()) -> int:
    """One past every number used here and in ``elsewhere`` (the remote's branch)."""
    numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9]-*.md")]
    return max([*numbers, *elsewhere], default=0) + 1


def shared_ref(root: Path, remote: str) -> str | None:
    """The remote's copy of this branch, as last fetched: `[shiftkit.claims] remote`, else
    the branch's upstream remote. None when there is none."""
    branch = gitio.branch(root)
    if branch is None:
        return None
    if not remote:
        proc = gitio.run(["config", "--get", f"branch.{branch}.remote"], root, check=False)
        remote = proc.stdout.strip()
    if not remote or remote == ".":
        return None
    ref = f"refs/remotes/{remote}/{branch}"
    if gitio.run(["rev-parse", "-q", "--verify", ref], root, check=False).returncode != 0:
        return None
    return ref


def names_at(root: Path, ref: str, folder: str) -> list[str]:
    proc = gitio.run(["ls-tree", "--name-only", f"{ref}:{folder.rstrip('/')}"], root, check=False)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def numbers_at(root: Path, ref: str | None, folder: str) -> list[int]:
    if ref is None:
        return []
    return [int(number) for number in rules.decision_numbers(names_at(root, ref, folder))]


def renumber(root: Path, folder: Path, ref: str) -> list[tuple[str, str]]:
    """Give this branch's records whose numbers ``ref`` uses for other records the next
    free numbers (on both), fixing their headings and index lines. Returns (old, new)."""
    verified = gitio.run(["rev-parse", "-q", "--verify", f"{ref}^{{commit}}"], root, check=False)
    if verified.returncode != 0:
        raise BadInput(f"--against {ref!r}: not a branch or commit in this repository")
    relative = folder.relative_to(root).as_posix()
    theirs = rules.decision_numbers(names_at(root, ref, relative))
    ours = sorted(p.name for p in folder.glob("[0-9][0-9][0-9][0-9]-*.md"))
    moves = []
    for name in ours:
        number = name[:4]
        if number in theirs and name not in theirs[number]:
            free = next_number(folder, [int(n) for n in theirs])
            new_name = f"{free:04d}-{name[5:]}"
            text = (folder / name).read_text(encoding="utf-8")
            text = re.sub(rf"^# {int(number)}\.", f"# {free}.", text, count=1)
            atomic_write(folder / new_name, text)
            (folder / name).unlink()
            moves.append((name, new_name))
    index = folder / INDEX
    if moves and index.exists():
        text = index.read_text(encoding="utf-8")
        for old, new in moves:
            text = text.replace(f"[{old[:4]}]({old})", f"[{new[:4]}]({new})")
        atomic_write(index, text)
    return moves


def _paragraphs(text: str) -> str:
    """User text as a record holds it: no line-end whitespace, \\n line breaks, nothing
    blank at either end (so the file passes the usual whitespace hooks unchanged)."""
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render(
    number: int, title: str, why: str, decision: str, rejected: list[str], today: str
) -> str:
    rejected_lines = "\n".join(f"- {_paragraphs(item)}" for item in rejected)
    return (
        f"# {number}. {_one_line(title)}\n\n"
        f"Date: {today}\n\n"
        f"## Status\n\nAccepted\n\n"
        f"## Context\n\n{_paragraphs(why)}\n\n"
        f"## Decision\n\n{_paragraphs(decision)}\n\n"
        f"## Consequences\n\nA later session that wants to change this writes a new record that "
        f"supersedes this one.\n\n"
        f"## Rejected alternatives\n\n{rejected_lines}\n"
    )


def decide(
    folder: Path,
    title: str,
    why: str,
    rejected: list[str],
    decision: str | None = None,
    elsewhere: Iterable[int] = (),
) -> Path:
    if not title.strip():
        raise BadInput("TITLE is empty; name the decision, e.g. 'Use SQLite for storage'")
    if not why.strip():
        raise BadInput("--why is empty; say what forces the decision")
    if not rejected or not all(r.strip() for r in rejected):
        raise BadInput("--rejected is empty; name the alternative you did not take, and why")
    folder.mkdir(parents=True, exist_ok=True)
    number = next_number(folder, elsewhere)
    path = folder / f"{number:04d}-{slugify(title)}.md"
    text = render(number, title, why, decision or title, rejected, date.today().isoformat())
    atomic_write(path, text)
    index = folder / INDEX
    try:
        current = index.read_bytes().decode("utf-8")  # line endings as they are
    except FileNotFoundError:
        current = "# Decision records\n\n"
    newline = "\r\n" if current.endswith("\r\n") else "\n"  # the index's own line endings
    if current and not current.endswith("\n"):
        current += newline
    atomic_write(index, current + f"- [{number:04d}]({path.name}) {_one_line(title)}{newline}")
    return path


def commit_record(ctx: Context, path: Path, title: str, say: Callable[[str], None]) -> None:
    """Commit the new record and the index at once, or — with a claim open, whose attempt a
    revert would roll back — say that `finish` commits it with the feature."""
    from shiftkit.core.errors import HookRefused
    from shiftkit.edge import state
    from shiftkit.edge.committing import commit
    from shiftkit.edge.context import short

    held = state.local_claim(ctx.git_dir)
    name = path.relative_to(ctx.root).as_posix()
    if held is not None:
        say(
            f"not committed yet: `shiftkit finish` commits {name} with {held.feature} "
            f"(`shiftkit revert` discards it with the attempt)"
        )
        return
    index = (path.parent / INDEX).relative_to(ctx.root).as_posix()
    subject = f"Record decision {path.name[:4]}: {_one_line(title)}"
    subject = subject if len(subject) <= 72 else subject[:71].rstrip() + "…"
    try:
        head = commit(ctx, subject + "\n", [name, index])
    except HookRefused as refused:
        say(f"written, not committed: {refused.message}; commit {name} and {index} yourself")
        return
    say(f"committed {name} in {short(head)}")


def decide_cmd(
    title: str, why: str, rejected: list[str], decision: str | None, say: Callable[[str], None]
) -> None:
    """`shiftkit decide` in the project found from here: write the next record and its
    index line, then commit them."""
    from shiftkit.edge import project
    from shiftkit.edge.context import open_context

    proj = project.find()
    # A number free here and on the remote's branch: records written on two branches at
    # once do not collide when they meet.
    ref = shared_ref(proj.root, proj.config.claims.remote)
    elsewhere = numbers_at(proj.root, ref, proj.config.decisions)
    path = decide(proj.decisions_path, title, why, rejected, decision, elsewhere=elsewhere)
    say(f"wrote {path.relative_to(proj.root)}")
    commit_record(open_context(), path, title, say)


def renumber_cmd(against: str | None, say: Callable[[str], None]) -> None:
    """`shiftkit renumber-decisions`: renumber against `against` (default: the remote's copy
    of this branch), saying each rename."""
    from shiftkit.edge import project

    proj = project.find()
    ref = against or shared_ref(proj.root, proj.config.claims.remote)
    if ref is None:
        raise BadInput("no remote branch to compare with; name one with --against REF")
    moves = renumber(proj.root, proj.decisions_path, ref)
    for old, new in moves:
        say(f"renamed {old} -> {new}")
    say("nothing to renumber" if not moves else "review and commit the renamed records")
