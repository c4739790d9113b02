"""`shiftkit hook pre-commit` and `shiftkit hook commit-msg FILE`.

This is the hot path: every commit runs it. The common commit (feature list and log not
staged) imports no click, jsonschema, pathlib or dataclasses and parses no TOML or JSON: it
asks git once for the staged names and returns. Everything else is imported when needed.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Sequence

from shiftkit.errors import OK, REFUSED, BadInput

if TYPE_CHECKING:
    from shiftkit import rules as rules_mod

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
    import subprocess

    proc = subprocess.run(
        ["git", "diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames"],
        cwd=root, capture_output=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise BadInput(f"git diff --cached failed: {proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries = {}
    for meta, name in zip(fields[0::2], fields[1::2]):
        _, _, head_blob, staged_blob, _ = meta.split(" ", 4)
        entries[name] = (head_blob, staged_blob)
    return entries


def relevant_names(root: str, staged: Sequence[str]) -> tuple[str, str, str] | None:
    """(features, log, archive) when any of them is staged, else None.

    A configured name must appear literally in `.shiftkit.toml`, so the TOML is parsed only
    when a staged path occurs in its text (or the config itself is staged).
    """
    try:
        with open(os.path.join(root, CONFIG_FILE), encoding="utf-8") as handle:
            text: str | None = handle.read()
    except FileNotFoundError:
        return DEFAULT_NAMES if any(n in staged for n in DEFAULT_NAMES) else None
    except (OSError, UnicodeDecodeError):
        text = None
    if (
        text is not None
        and "\\" not in text
        and CONFIG_FILE not in staged
        and not any(n in staged for n in DEFAULT_NAMES)
        and not any(name in text for name in staged)
    ):
        return None
    from pathlib import Path

    from shiftkit import config

    cfg = config.load(Path(root))
    names = (cfg.features, cfg.progress, cfg.log.archive)
    return names if any(n in staged for n in names) else None


def pre_commit(root: str) -> int:
    staged = staged_entries(root)
    if not staged:
        return OK
    names = relevant_names(root, list(staged))
    if names is None:
        return OK
    from shiftkit import rules

    return _check(root, names, rules.PRE_COMMIT, message_file=None)


def commit_msg(root: str, message_file: str) -> int:
    try:
        with open(message_file, encoding="utf-8") as handle:
            raw = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"{message_file}: cannot read the commit message: {reason}") from None
    from shiftkit import rules

    problems = rules.check_message(raw)
    if problems:
        return _refuse(problems)
    names = relevant_names(root, list(staged_entries(root)))
    if names is None:
        return OK
    return _check(root, names, rules.COMMIT_MSG - {9}, message_file=message_file, message=raw)


def _check(root: str, names: tuple[str, str, str], which: frozenset[int],
           message_file: str | None, message: str | None = None) -> int:  # fmt: skip
    from pathlib import Path

    from shiftkit import claims, config, features, gitio, rules, snapshot, state, verify

    top = Path(root)
    git_dir_text, common_text = gitio.out(
        ["rev-parse", "--absolute-git-dir", "--git-common-dir"], top).splitlines()
    git_dir = Path(git_dir_text)
    common = Path(common_text) if Path(common_text).is_absolute() else (top / common_text).resolve()
    cfg = config.load(top)
    parents, texts = snapshot.read_sides(top, ["HEAD", *snapshot.merge_parents(git_dir)],
                                         names, common)  # fmt: skip
    proposed = snapshot.read_proposed(top, [f":{name}" for name in names])
    staged_valid = proposed.features_text is not None and snapshot.known_valid(
        common, proposed.features_text)
    held = claims.local_claim(git_dir) if 6 in which else None
    tree_cache: list[str] = []

    def staged_tree() -> str:
        if not tree_cache:
            tree_cache.append(gitio.write_tree(top))
        return tree_cache[0]

    def verification(feature: features.Feature) -> str | None:
        command = features.effective_verify(feature, cfg.verify)
        if command is None:
            return "it has no verify command (and no project-wide 'verify' is set)"
        if verify.is_cached(common, staged_tree(), command):
            return None
        if gitio.run(["diff", "--quiet"], top, check=False).returncode != 0:
            return ("the work tree has unstaged changes to tracked files, so its verifier cannot "
                    "run on exactly the staged tree; stage or stash them")
        print(f"shiftkit: running the verifier of {feature.id}: {command}", file=sys.stderr)
        outcome = verify.run_command(command, top, cfg.verify_timeout)
        if outcome.ok:
            verify.record_pass(common, staged_tree(), command)
            return None
        print(outcome.tail(10), file=sys.stderr)
        return f"its verifier fails on the staged tree ({outcome.summary()})"

    report = rules.evaluate(
        parents, proposed, rules_to_check=which, names=names, message=message,
        claimed=held["feature"] if held else None, claims_enabled=cfg.claims.enabled,
        verification=verification, trusted=snapshot.trusted_items(parents, texts, common),
        known_valid=staged_valid,
    )  # fmt: skip
    for item in report.overridden:
        print(f"shiftkit: {item} — overridden: {report.override_reason}", file=sys.stderr)
    if report.violations:
        return _refuse(report.violations)
    if proposed.features_text is not None and not staged_valid:
        state.mark_validated(common, snapshot.blob_id(proposed.features_text))
    if message_file is not None and message is not None and len(report.flips) == 1:
        assert report.staged is not None
        feature = report.staged.by_id[report.flips[0]]
        command = features.effective_verify(feature, cfg.verify)
        verified = command is not None and verify.is_cached(common, staged_tree(), command)
        _add_trailers(top, message_file, message, feature.id, staged_tree() if verified else None)
    return OK


def _add_trailers(top: Any, message_file: str, message: str, feature_id: str,
                  verified_tree: str | None) -> None:  # fmt: skip
    """Shiftkit-Feature, and Shiftkit-Verified when this tree passed, if the message lacks them."""
    from shiftkit import gitio, rules

    present = rules.trailers(message)
    wanted = []
    if "Shiftkit-Feature" not in present:
        wanted.append(f"Shiftkit-Feature: {feature_id}")
    if "Shiftkit-Verified" not in present and verified_tree is not None:
        wanted.append(f"Shiftkit-Verified: {verified_tree}")
    if wanted:
        args = ["interpret-trailers", "--in-place"]
        for trailer in wanted:
            args += ["--trailer", trailer]
        gitio.run([*args, message_file], top)


def _refuse(violations: Sequence[rules_mod.Violation]) -> int:
    for violation in violations:
        print(f"shiftkit: commit refused by {violation}", file=sys.stderr)
    return REFUSED
