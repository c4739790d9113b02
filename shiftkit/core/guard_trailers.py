"""The guard on commit messages: an agent's commit carries no person trailer (decision 0062).

Under the `trailer` policy a `Shiftkit-Override:` line in a commit message *is* the person's
action, so the message an agent writes must never hold one, whatever writes it. The guard
judges the text it can see (the whole shell line: `-m` words, `--trailer`, here-documents,
command substitutions) and denies the ways of writing a message it cannot see: a message
file or template (`-F FILE`, `-t FILE`), another commit's message (`-C`, `-c`, `--squash`,
`--fixup=amend:`), a message git prepared (`--no-edit` with no `-m`: a cherry-pick's or a
revert's; the commit that ends a merge may keep git's MERGE_MSG, a file the guard keeps the
agent from writing), an editor the agent names (`GIT_EDITOR`, `EDITOR`, `VISUAL`,
`core.editor`), and a message the shell makes when it runs (`-m "$(echo ... | base64 -d)"`,
`$VAR`; the text of `$(cat <<'EOF' ...)` it reads).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shiftkit.core.guard_options import Options, abbreviates
from shiftkit.core.guard_shell import UNREADABLE
from shiftkit.core.messages import MACHINE_TRAILERS, PERSON_TRAILERS

PERSON_TRAILER = re.compile("|".join(re.escape(key) for key in PERSON_TRAILERS), re.IGNORECASE)
# shiftkit's own trailers: a plain commit carrying `Shiftkit-Claim` would pass for the work of
# a claim, which the publish gate does not re-verify (decision record 0056).
MACHINE_TRAILER = re.compile("|".join(re.escape(key) for key in MACHINE_TRAILERS), re.IGNORECASE)
# git subcommands that write a commit message shiftkit reads (tags and notes it never reads).
WRITES_MESSAGE = {"commit", "merge", "commit-tree", "am", "revert", "cherry-pick", "pull"}
EDITORS = ("GIT_EDITOR", "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR")
# Config keys that write into a message: the editor, a template, trailer definitions.
MESSAGE_CONFIG = ("core.editor", "sequence.editor", "commit.template")
WRITE_IT = (
    "write the message with `-m` (a here-document in `-m \"$(cat <<'EOF' ... EOF)\"` is "
    "fine) or commit with `shiftkit finish -m`"
)
TRAILER_IS_A_PERSONS = (
    "a person trailer (Shiftkit-Override, Shiftkit-Accept) in a commit message is a person's "
    "action under the `trailer` policy; an agent's commit never carries one: stop and ask a "
    "person"
)


def trailer_reason(command: str, sub: str) -> str | None:
    """Why this line, which runs `git SUB`, must not: it names a person trailer."""
    if sub in WRITES_MESSAGE and PERSON_TRAILER.search(command):
        return f"this `git {sub}` names a person trailer; {TRAILER_IS_A_PERSONS}"
    if sub in WRITES_MESSAGE and MACHINE_TRAILER.search(command):
        return (
            f"this `git {sub}` names one of shiftkit's own trailers (Shiftkit-Claim, "
            f"Shiftkit-Feature, Shiftkit-Verified), which only `shiftkit finish` and `revert` "
            f"write; commit without it"
        )
    return None


# git subcommands whose message the guard reads word by word (commit-tree is denied whole).
READS_MESSAGE = {"commit", "merge", "notes", "commit-tree"}
MADE_AT_RUN_TIME = (
    "text the shell makes when it runs (`$(...)`, backticks, `$VAR`, `${...}`, `$'...'`, "
    "`<(...)`), which the guard cannot read, so it denies it (decision 0062)"
)


def _message_option(name: str) -> bool:
    return (
        name in {"-m", "-F", "-t"}
        or abbreviates(name, "--message", 5)
        or abbreviates(name, "--file", 4)
        or abbreviates(name, "--template", 4)
        or abbreviates(name, "--trailer", 4)
    )


def unreadable_reason(sub: str, options: Options, stdin_unreadable: bool) -> str | None:
    """Why this `git SUB`'s message cannot be read: an option's text (`options` parsed from
    the line with `guard_shell.marked`'s marks) or, for `-F -`, its standard input is made
    when the shell runs (a person trailer could hide in `$(echo ... | base64 -d)`)."""
    if sub not in READS_MESSAGE:
        return None
    for name, value in options.given:
        if not _message_option(name) or value is None:
            continue
        if UNREADABLE in value:
            return (
                f"the message this `git {sub} {name}` writes holds {MADE_AT_RUN_TIME}; "
                f"write the message literally: {WRITE_IT}"
            )
        if value == "-" and name != "-t" and stdin_unreadable:
            return (
                f"`git {sub} {name} -` reads the message from a program's output or a "
                f"here-document that holds {MADE_AT_RUN_TIME}; write the message literally: "
                f"{WRITE_IT}"
            )
    return None


def message_reason(
    sub: str, options: Options, env: dict[str, str], merging: Callable[[], bool] | None = None
) -> str | None:
    """Why this `git commit`/`git merge` writes a message the guard cannot see (`merging`:
    whether a merge is in progress where it runs, when known)."""
    if sub not in {"commit", "merge"}:
        return None
    editor = next((name for name in env if name in EDITORS), None)
    if editor:
        return (
            f"setting {editor} for `git {sub}` lets a program write the commit message, where "
            f"the guard cannot see it; {WRITE_IT}"
        )
    names = options.names()
    for name, value in options.given:
        from_file = name == "-F" or abbreviates(name, "--file", 4)
        if (from_file and value != "-") or name == "-t" or abbreviates(name, "--template", 4):
            return f"`git {sub} {name} {value}` takes the message from a file; {WRITE_IT}"
    reused = next(
        (
            name
            for name, value in options.given
            if name in {"-C", "-c"}
            or abbreviates(name, "--reuse-message", 5)
            or abbreviates(name, "--reedit-message", 5)
            or abbreviates(name, "--squash", 3)
            or (abbreviates(name, "--fixup", 3) and (value or "").startswith(("amend:", "reword:")))
        ),
        None,
    )
    if sub == "commit" and reused:
        return f"`git commit {reused}` takes another commit's message; {WRITE_IT}"
    has_message = any(n in {"-m", "-F"} or abbreviates(n, "--message", 5) for n in names)
    no_edit = any(abbreviates(n, "--no-edit", 5) for n in names)
    # The commit that ends a merge keeps git's MERGE_MSG (`Merge branch ...`, from the
    # merge's `-m` the guard read): the guard denies writing that file (`gitmessage`), so
    # only a cherry-pick's or a revert's prepared message (which MERGE_HEAD never marks)
    # stays unreadable.
    if sub == "commit" and not has_message and no_edit and not (merging and merging()):
        return (
            "`git commit --no-edit` with no `-m` keeps the message git prepared (a "
            f"cherry-pick's carries the picked commit's trailers); {WRITE_IT}"
        )
    return None


def config_reason(key: str, value: str, how: str) -> str | None:
    """Why setting this git config key (to this value) writes into commit messages."""
    lowered = key.lower()
    if lowered in MESSAGE_CONFIG:
        return (
            f"{how} sets {key}, which writes commit messages where the guard cannot see; {WRITE_IT}"
        )
    if lowered.startswith("trailer.") or PERSON_TRAILER.search(value):
        return (
            f"{how} sets {key}, which can add a trailer to commit messages; {TRAILER_IS_A_PERSONS}"
        )
    return None


def export_reason(name: str, how: str) -> str | None:
    """Why exporting this variable lets a program write later commit messages."""
    if name in EDITORS:
        return (
            f"{how} {name} lets a program write every later commit message, where the guard "
            f"cannot see it; {WRITE_IT}"
        )
    return None
