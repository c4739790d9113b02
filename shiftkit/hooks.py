"""`shiftkit hook pre-commit` and `shiftkit hook commit-msg FILE`.

This is the hot path: every commit runs it. The common commit (feature list and log not
staged) imports no click, jsonschema, pathlib or dataclasses and parses no TOML or JSON: it
asks git once for the staged names and returns. Everything else is imported when needed.
"""

from __future__ import annotations

import os
import sys

from shiftkit.errors import OK, REFUSED, BadInput

TYPE_CHECKING = False  # typing itself is not imported on the hot path
if TYPE_CHECKING:
    from typing import Any, Sequence

    from shiftkit import messages
    from shiftkit import rules as rules_mod
    from shiftkit.config import Config

USAGE_TEXT = "usage: shiftkit hook {pre-commit | commit-msg FILE}"
DEFAULT_NAMES = ("features.json", "claude-progress.txt", "progress-archive.txt")
CONFIG_FILE = ".shiftkit.toml"


def main(argv: list[str]) -> int:
    if argv[:1] == ["pre-commit"] and len(argv) == 1:
        return pre_commit(_worktree_root())
    if argv[:1] == ["commit-msg"] and len(argv) == 2:
        return commit_msg(_worktree_root(), argv[1])
    raise BadInput(f"{USAGE_TEXT} (got: {' '.join(argv) or 'nothing'})")


def _worktree_root() -> str:
    # git runs hooks at the top of the work tree; ask git only when run by hand elsewhere.
    if os.path.exists(".git"):
        return os.getcwd()
    from shiftkit import gitio

    return str(gitio.toplevel())


def staged_entries(root: str) -> dict[str, tuple[str, str]]:
    """Each staged path with its blob at HEAD and in the index (zeros when absent)."""
    from shiftkit import gitio

    code, out, err = gitio.plumb(["diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames"], root)
    if code != 0:
        raise BadInput(f"git diff --cached failed: {err.decode(errors='replace').strip()}")
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    entries = {}
    for meta, name in zip(fields[0::2], fields[1::2]):
        _, _, head_blob, staged_blob, _ = meta.split(" ", 4)
        entries[name] = (head_blob, staged_blob)
    return entries


def maybe_relevant(root: str, staged: Sequence[str]) -> bool:
    """False when none of the feature list, log or archive can be among ``staged``, decided
    without parsing TOML: a configured name must appear literally in `.shiftkit.toml`."""
    try:
        with open(os.path.join(root, CONFIG_FILE), encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return any(n in staged for n in DEFAULT_NAMES)
    except (OSError, UnicodeDecodeError):
        return True
    return (
        "\\" in text  # an escape could spell a name that does not appear literally
        or CONFIG_FILE in staged
        or any(n in staged for n in DEFAULT_NAMES)
        or any(name in text for name in staged)
    )


def relevant_config(root: str, staged: Sequence[str]) -> Config | None:
    """The project's config when its feature list, log or archive is staged, else None."""
    if not maybe_relevant(root, staged):
        return None
    from pathlib import Path

    from shiftkit import config

    cfg = config.load(Path(root))
    return cfg if any(name in staged for name in names_of(cfg)) else None


def names_of(cfg: Config) -> tuple[str, str, str]:
    return (cfg.features, cfg.progress, cfg.log.archive)


def pre_commit(root: str) -> int:
    staged = staged_entries(root)
    if not staged:
        return OK
    cfg = relevant_config(root, list(staged))
    if cfg is None:
        return OK
    return _check(root, names_of(cfg), staged, message_file=None, cfg=cfg)


def commit_msg(root: str, message_file: str) -> int:
    try:
        with open(message_file, encoding="utf-8") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"{message_file}: cannot read the commit message: {reason}") from None
    from shiftkit import messages

    problems = messages.check_message(raw)
    if problems:
        return _refuse(problems)
    staged = staged_entries(root)
    if not maybe_relevant(root, list(staged)):
        return OK
    from pathlib import Path

    from shiftkit import gitio, state

    # The pre-commit stage left a record of the names it used and the config it read them
    # from: when the config is unchanged, the TOML need not be parsed again.
    git_dir, _ = gitio.git_dirs(Path(root))
    record = state.read_json(state.worktree_state(git_dir) / RECORD)
    if isinstance(record, dict) and record.get("config") == _config_signature(root):
        names: tuple[str, str, str] = tuple(record["key"][0])
        if not any(name in staged for name in names):
            return OK
        return _check(root, names, staged, message_file=message_file, message=raw)
    cfg = relevant_config(root, list(staged))
    if cfg is None:
        return OK
    return _check(root, names_of(cfg), staged, message_file=message_file, message=raw, cfg=cfg)


def _config_signature(root: str) -> list[int] | None:
    try:
        info = os.stat(os.path.join(root, CONFIG_FILE))
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size, info.st_ino]


RECORD = "hook-check.json"


def _check(root: str, names: tuple[str, str, str], staged: dict[str, tuple[str, str]],
           message_file: str | None, message: str | None = None,
           cfg: Config | None = None) -> int:  # fmt: skip
    """The rules over the staged change. The pre-commit stage checks all but the message's
    and records what it found; the commit-msg stage reuses that record for the same staged
    change, so the lists are read once per commit."""
    from pathlib import Path

    from shiftkit import gitio, messages, state

    top = Path(root)
    git_dir, common = gitio.git_dirs(top)
    held = state.local_claim(git_dir)
    merging = gitio.merge_parents(git_dir)
    entries = [list(staged[n]) if n in staged else None for n in names]  # JSON has no tuples
    key = [list(names), entries, merging, held["feature"] if held else None]
    record_path = state.worktree_state(git_dir) / RECORD
    if message is not None:
        record = state.read_json(record_path)
        if isinstance(record, dict) and record.get("key") == key:
            deferred = [messages.Violation(*v) for v in record["deferred"]]
            found = deferred + messages.rule5_message(record["flips"], message)
            kept, overridden, reason = messages.apply_override(found, message)
            return _conclude(top, kept, overridden, reason, record["flips"], record["verified"],
                             message_file, message)  # fmt: skip
    report, verified = _evaluate(top, names, git_dir, common, merging, held, message, cfg)
    if message is None:
        blocking = [v for v in report.violations if v.rule not in messages.OVERRIDABLE]
        if blocking:
            return _refuse(blocking)
        rows = [list(v) for v in report.violations if v.rule in messages.OVERRIDABLE]
        state.write_json(record_path, {"key": key, "deferred": rows, "flips": report.flips,
                                       "verified": verified, "config": _config_signature(root)})
        return OK
    return _conclude(top, report.violations, report.overridden, report.override_reason,
                     report.flips, verified, message_file, message)  # fmt: skip


def _conclude(top: Any, kept: Sequence[messages.Violation], overridden: Sequence[messages.Violation],
              reason: str | None, flips: Sequence[str], verified: str | None,
              message_file: str | None, message: str) -> int:  # fmt: skip
    for item in overridden:
        print(f"shiftkit: {item} — overridden: {reason}", file=sys.stderr)
    if kept:
        return _refuse(kept)
    if message_file is not None and len(flips) == 1:
        _add_trailers(top, message_file, message, flips[0], verified)
    return OK


def _evaluate(top: Any, names: tuple[str, str, str], git_dir: Any, common: Any,
              merging: list[str], held: dict[str, Any] | None,
              message: str | None, cfg: Config | None) -> tuple[rules_mod.Report, str | None]:  # fmt: skip
    """Every rule of this stage (all but the message's at pre-commit); returns the report and
    the staged tree when the flip's verifier passed on it."""
    from shiftkit import config, features, gitio, rules, snapshot, state, verify

    cfg = cfg or config.load(top)
    parents, blobs, proposed, staged_blob = snapshot.read_staged_change(
        top, ["HEAD", *merging], names, common)
    staged_valid = snapshot.known_valid(common, staged_blob)
    tree_cache: list[str] = []
    verified: list[str] = []  # the staged tree, once the flip's verifier has passed on it

    def staged_tree() -> str:
        if not tree_cache:
            tree_cache.append(gitio.write_tree(top))
        return tree_cache[0]

    def verification(feature: features.Feature) -> str | None:
        command = features.effective_verify(feature, cfg.verify)
        if command is None:
            return "it has no verify command (and no project-wide 'verify' is set)"
        if verify.is_cached(common, staged_tree(), command):
            verified.append(staged_tree())
            return None
        if gitio.run(["diff", "--quiet"], top, check=False).returncode != 0:
            return ("the work tree has unstaged changes to tracked files, so its verifier cannot "
                    "run on exactly the staged tree; stage or stash them")
        print(f"shiftkit: running the verifier of {feature.id}: {command}", file=sys.stderr)
        outcome = verify.run_command(command, top, cfg.verify_timeout)
        if outcome.ok:
            verify.record_pass(common, staged_tree(), command)
            verified.append(staged_tree())
            return None
        print(outcome.tail(10), file=sys.stderr)
        return f"its verifier fails on the staged tree ({outcome.summary()})"

    # Every rule this stage can check: at pre-commit all but the message's; at commit-msg
    # without the pre-commit stage's record (a `git merge`, which runs no pre-commit hook), all.
    report = rules.evaluate(
        parents, proposed, rules_to_check=rules.ALL, names=names, message=message,
        claimed=held["feature"] if held else None, claims_enabled=cfg.claims.enabled,
        verification=verification, **snapshot.trust(parents, blobs, common),
        known_valid=staged_valid,
    )  # fmt: skip
    valid_list = report.staged is not None and not any(v.rule == 1 for v in report.violations)
    if valid_list and staged_blob is not None and not staged_valid:
        state.mark_validated(common, staged_blob[0])
    return report, verified[0] if verified else None


def _add_trailers(top: Any, message_file: str, message: str, feature_id: str,
                  verified_tree: str | None) -> None:  # fmt: skip
    """Shiftkit-Feature, and Shiftkit-Verified when this tree passed, if the message lacks them."""
    from shiftkit import gitio, messages

    present = messages.trailers(message)
    wanted = []
    if "Shiftkit-Feature" not in present:
        wanted.append(f"Shiftkit-Feature: {feature_id}")
    if "Shiftkit-Verified" not in present and verified_tree is not None:
        wanted.append(f"Shiftkit-Verified: {verified_tree}")
    if wanted:
        args = ["interpret-trailers", "--in-place"]
        for trailer in wanted:
            args += ["--trailer", trailer]
        code, _, err = gitio.plumb([*args, message_file], top)
        if code != 0:
            raise gitio.GitFailed(args, code, err.decode(errors="replace"))


SHOWN = 10


def _refuse(violations: Sequence[messages.Violation]) -> int:
    for violation in violations[:SHOWN]:
        print(f"shiftkit: commit refused by {violation}", file=sys.stderr)
    if len(violations) > SHOWN:
        print(f"shiftkit: ... and {len(violations) - SHOWN} more violations", file=sys.stderr)
    return REFUSED
