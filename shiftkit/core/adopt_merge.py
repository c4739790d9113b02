"""Merging a file of shiftkit's template into the user's own file of the same name.

Each merge keeps everything the user wrote, adds shiftkit's part, and is idempotent: merging
into its own result gives that result back, byte for byte.

- Markdown (`AGENTS.md`, `CLAUDE.md`): shiftkit's text lives between two HTML-comment
  markers; a file without them gets the section appended, a file with them gets only the
  section replaced.
- `.pre-commit-config.yaml`: shiftkit's hooks added through ruamel.yaml's round trip, which
  keeps the user's comments, order, quoting and indentation.
- `.claude/settings.json`: shiftkit's hook entries added per event, the user's permissions,
  env and other hooks kept, shiftkit's entries never duplicated.
- `.codex/hooks.json`: the same merge, for Codex CLI's file of the same structure (event,
  matcher groups, handlers); the user's top-level keys (`description`) kept.
- `.gitattributes`: shiftkit's lines appended when missing.
- `.gitignore`: shiftkit's patterns (runner caches and environments) appended, under its
  comment, when the user's lines do not already name them.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from shiftkit.core import jsonbound
from shiftkit.core.errors import BadInput

BEGIN = "<!-- shiftkit:begin -->"
END = "<!-- shiftkit:end -->"


# -- Markdown: a marked section ---------------------------------------------------------------


def _marked_span(text: str, name: str) -> tuple[int, int] | None:
    """Where the marked section starts and ends (after the end marker), if there is one."""
    begins = text.count(BEGIN)
    ends = text.count(END)
    if begins == 0 and ends == 0:
        return None
    start = text.find(BEGIN)
    stop = text.find(END)
    if begins != 1 or ends != 1 or stop < start:
        raise BadInput(
            f"{name}: expected one {BEGIN} ... {END} section, found {begins} begin and "
            f"{ends} end markers; fix the markers (shiftkit replaces only what is between them)"
        )
    return start, stop + len(END)


def section_of(ours: str) -> str:
    """shiftkit's marked section of a rendered file (the whole file, marked, if it has none)."""
    span = _marked_span(ours, "the template")
    if span is None:
        return f"{BEGIN}\n{ours.strip()}\n{END}"
    return ours[span[0] : span[1]]


def merge_markdown(existing: str, ours: str, name: str) -> str:
    section = section_of(ours)
    span = _marked_span(existing, name)
    if span is not None:
        return existing[: span[0]] + section + existing[span[1] :]
    if not existing.strip():
        return ours
    return f"{existing.rstrip()}\n\n{section}\n"


# -- .gitattributes: missing lines appended ------------------------------------------------------


def _words(line: str) -> str:
    return " ".join(line.split())


def merge_lines(existing: str, ours: str, name: str) -> str:
    have = {_words(line) for line in existing.splitlines()}
    missing = [line for line in ours.splitlines() if _words(line) and _words(line) not in have]
    if not missing:
        return existing
    base = existing if not existing or existing.endswith("\n") else existing + "\n"
    return base + "".join(f"{line}\n" for line in missing)


# -- .gitignore: missing patterns appended under shiftkit's comment -------------------------------


def _pattern(line: str) -> str:
    """A `.gitignore` line as the pattern it names (`x` and `x/` alike: `x` covers both)."""
    return line.strip().rstrip("/")


def merge_gitignore(existing: str, ours: str, name: str) -> str:
    have = {_pattern(line) for line in existing.split("\n")}  # (git's lines: `\n` only)
    lines = ours.splitlines()
    comment = [line for line in lines if line.startswith("#")]
    patterns = [line for line in lines if _pattern(line) and not line.startswith("#")]
    missing = [line for line in patterns if _pattern(line) not in have]
    if not missing:
        return existing
    if not existing.strip():
        return ours
    base = existing if existing.endswith("\n") else existing + "\n"
    return base + "\n" + "".join(f"{line}\n" for line in comment + missing)


# -- .claude/settings.json: shiftkit's hook entries per event -----------------------------------

# shiftkit's entries: `.shiftkit/hook NAME` (decision 0058) and the inline `shiftkit NAME; …`
# commands of the scaffolds before it, so an update replaces the old entries by the new.
_SHIFTKIT_COMMAND = re.compile(r"(?:^|[\s;&|(`'\"/])(?:\.shiftkit/hook|shiftkit)(?:\s|$)")


def _is_shiftkit_hook(hook: Any) -> bool:
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and bool(_SHIFTKIT_COMMAND.search(command))


def _is_shiftkit_group(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and bool(hooks) and all(map(_is_shiftkit_hook, hooks))


def _json_indent(text: str) -> int | str:
    match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
    if match is None:
        return 2
    indent = match.group(1)
    return len(indent) if set(indent) == {" "} else indent


def _load_json_object(text: str, name: str) -> dict[str, Any]:
    try:
        value = jsonbound.loads(text, name)
    except BadInput as exc:
        raise BadInput(f"{exc.message}; fix it, then adopt again") from None
    if not isinstance(value, dict):
        raise BadInput(f"{name}: expected a JSON object at the top")
    return value


def _merge_event(groups: list[Any], ours: list[Any]) -> list[Any]:
    """The user's groups for one event with shiftkit's: unchanged when shiftkit's groups are
    already there as they should be; otherwise shiftkit's old entries out, the new ones at
    the end."""
    mixed = [
        group
        for group in groups
        if not _is_shiftkit_group(group)
        and isinstance(group, dict)
        and isinstance(group.get("hooks"), list)
        and any(map(_is_shiftkit_hook, group["hooks"]))
    ]
    if not mixed and [group for group in groups if _is_shiftkit_group(group)] == ours:
        return groups
    kept: list[Any] = []
    for group in groups:
        if _is_shiftkit_group(group):
            continue
        if group in mixed:
            group = {**group, "hooks": [h for h in group["hooks"] if not _is_shiftkit_hook(h)]}
        kept.append(group)
    return kept + ours


def merge_claude_settings(existing: str, ours: str, name: str) -> str:
    if not existing.strip():
        return ours
    theirs = _load_json_object(existing, name)
    template = _load_json_object(ours, "the template's settings.json")
    merged = dict(theirs)
    for key, value in template.items():
        if key != "hooks" and key not in merged:
            merged = {key: value, **merged} if key.startswith("$") else {**merged, key: value}
    their_hooks = merged.get("hooks", {})
    if not isinstance(their_hooks, dict):
        raise BadInput(f"{name}: `hooks` is not an object")
    hooks = dict(their_hooks)
    for event, groups in template.get("hooks", {}).items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise BadInput(f"{name}: hooks.{event} is not a list")
        hooks[event] = _merge_event(current, groups)
    merged["hooks"] = hooks
    if merged == theirs:
        return existing
    return dump_like(merged, existing)


def merge_codex_hooks(existing: str, ours: str, name: str) -> str:
    """Codex CLI's `.codex/hooks.json` is Claude Code's `hooks` object in a file of its own
    (the same events, matcher groups and command handlers), so it merges the same way."""
    return merge_claude_settings(existing, ours, name)


def dump_like(value: dict[str, Any], existing: str) -> str:
    """``value`` as JSON in ``existing``'s layout: one line stays one line (with its own
    separators), else its indentation; its final newline kept or left out."""
    body = existing.strip()
    end = "\n" if existing.endswith("\n") else ""
    if "\n" not in body:
        key = ": " if re.search(r'"\s*:\s', body) else ":"
        spaced = re.search(r",\s", body) if "," in body else key == ": "
        item = ", " if spaced else ","
        return json.dumps(value, separators=(item, key), ensure_ascii=False) + end
    return json.dumps(value, indent=_json_indent(existing), ensure_ascii=False) + end


# -- .pre-commit-config.yaml: shiftkit's hooks through ruamel.yaml's round trip -----------------


def _yaml(text: str) -> Any:
    """A round-trip YAML (comments, order, quotes and flow style survive) that writes with
    the indentation ``text`` uses; pre-commit's own sample style when it shows none."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.util import load_yaml_guess_indent

    try:
        _, indent, block_seq_indent = load_yaml_guess_indent(text)
    except YAMLError:
        indent, block_seq_indent = None, None  # reported by the load that follows
    offset = 2 if block_seq_indent is None else block_seq_indent
    sequence = offset + 2 if indent is None else indent
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    yaml.indent(
        mapping=sequence - offset if sequence > offset else sequence,
        sequence=sequence,
        offset=offset,
    )
    return yaml


def _load_yaml(yaml: Any, text: str, name: str) -> Any:
    from ruamel.yaml.error import YAMLError

    try:
        return yaml.load(text)
    except YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise BadInput(f"{name}: not valid YAML ({detail}); fix it, then adopt again") from None


def plain(node: Any) -> Any:
    """A round-trip node as plain dicts, lists and scalars, for comparing content."""
    if isinstance(node, dict):
        return {str(key): plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain(item) for item in node]
    if isinstance(node, str):
        return str(node)
    return node


def shiftkit_hook_ids(ours: Any) -> set[str]:
    return {
        str(hook["id"])
        for repo in ours.get("repos", [])
        for hook in repo.get("hooks", [])
        if isinstance(hook, dict) and "id" in hook
    }


def merge_pre_commit_config(existing: str, ours: str, name: str) -> str:
    ours = ours.rstrip() + "\n"
    yaml = _yaml(existing)
    doc = _load_yaml(yaml, existing, name)
    template = _load_yaml(_yaml(ours), ours, "the template's .pre-commit-config.yaml")
    if doc is None:  # empty, or comments only: shiftkit's config after the user's text
        return f"{existing.rstrip()}\n{ours}" if existing.strip() else ours
    from ruamel.yaml.comments import CommentedMap

    if not isinstance(doc, CommentedMap) or not isinstance(doc.get("repos", []), list):
        raise BadInput(f"{name}: expected a mapping with a `repos:` list (pre-commit's format)")
    # Only shiftkit's hooks go in: the user's top-level settings (`default_stages`, ...) are
    # theirs, present or not — shiftkit's hooks set their own `stages`. One exception:
    # `minimum_pre_commit_version` is raised to what shiftkit's hooks need (`language:
    # unsupported`: pre-commit 4.4.0), so an older pre-commit says so in one line instead of
    # failing on the hook (a user's higher value stays; decision 0069).
    changed = False
    if "repos" not in doc:
        doc["repos"] = template["repos"]
        changed = True
    else:
        changed = _merge_repos(doc["repos"], template["repos"]) or changed
    changed = _raise_minimum(doc, template) or changed
    if not changed:
        return existing
    out = io.StringIO()
    yaml.dump(doc, out)
    dumped = out.getvalue().rstrip("\n") + "\n"  # one newline at the end, as end-of-file-fixer
    # The user's file is kept byte for byte where it can be: shiftkit's lines inserted into
    # the text, and taken only when it means exactly what the round trip means (a document
    # marker, a comment above it, a flow mapping the dump would respell all survive).
    inserted = insert_pre_commit_entries(existing, ours)
    if inserted is None:  # shiftkit's entries there already: replaced where they stand
        inserted = replace_pre_commit_entries(existing, ours, shiftkit_hook_ids(template))
    if inserted is not None and plain(_load_yaml(_yaml(inserted), inserted, name)) == plain(doc):
        return inserted
    return dumped


MINIMUM = "minimum_pre_commit_version"
_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:")


def insert_pre_commit_entries(existing: str, ours: str) -> str | None:
    """``existing`` with shiftkit's repo entries (from ``ours``, the template's file) added
    after the last line of its block `repos:` list, and the template's
    `minimum_pre_commit_version` line added before its first key (or its value raised) —
    every other byte as it was. None where the text is not that simple shape (a flow `repos`,
    shiftkit's hooks already in it, more than one document): the round trip then does it."""
    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    tops = [(n, m.group(1)) for n, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
    names = [name for _, name in tops]
    if names.count("repos") != 1 or "shiftkit-" in existing:
        return None
    if sum(1 for line in lines if line.rstrip() == "---") > 1:
        return None
    at = dict((name, n) for n, name in tops)["repos"]
    if lines[at].split(":", 1)[1].strip().split("#")[0].strip():
        return None  # (`repos: [...]`: flow style)
    following = [n for n, _ in tops if n > at]
    end = following[0] if following else len(lines)
    ends = [n for n in range(at + 1, end) if lines[n].rstrip() == "..."]
    end = ends[0] if ends else end
    items = [n for n in range(at + 1, end) if lines[n].lstrip().startswith("- ")]
    if not items:
        return None
    indent = len(lines[items[0]]) - len(lines[items[0]].lstrip())
    last = max(
        n for n in range(at + 1, end) if lines[n].strip() and not lines[n].lstrip().startswith("#")
    )
    block = _template_repo_lines(ours, indent)
    if block is None:
        return None
    out = lines[: last + 1] + block + lines[last + 1 :]
    minimum = _template_minimum_line(ours)
    if minimum is not None:
        raised = _with_minimum(out, minimum)
        if raised is None:
            return None
        out = raised
    return "".join(out)


def replace_pre_commit_entries(existing: str, ours: str, ids: set[str]) -> str | None:
    """``existing`` with shiftkit's repo entries (items of its block `repos:` list whose hooks
    are all shiftkit's, ``ids``) replaced by the template's, where the first one stood, and
    the minimum version raised — every other byte as it was (a `copier update` that changes
    shiftkit's entries, e.g. the hooks moved from `local` to the hook repository). None where
    the text is not that shape: the round trip then does it."""
    import yaml

    lines = existing.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    tops = [(n, m.group(1)) for n, line in enumerate(lines) if (m := _TOP_KEY.match(line))]
    if [name for _, name in tops].count("repos") != 1:
        return None
    if sum(1 for line in lines if line.rstrip() == "---") > 1:
        return None
    at = dict((name, n) for n, name in tops)["repos"]
    if lines[at].split(":", 1)[1].strip().split("#")[0].strip():
        return None  # (flow style)
    following = [n for n, _ in tops if n > at]
    end = following[0] if following else len(lines)
    ends = [n for n in range(at + 1, end) if lines[n].rstrip() == "..."]
    end = ends[0] if ends else end
    starts = [n for n in range(at + 1, end) if lines[n].lstrip().startswith("- ")]
    if not starts:
        return None
    indent = len(lines[starts[0]]) - len(lines[starts[0]].lstrip())
    starts = [n for n in starts if len(lines[n]) - len(lines[n].lstrip()) == indent]
    spans = []
    for number, start in enumerate(starts):
        stop = starts[number + 1] if number + 1 < len(starts) else end
        content = [
            n
            for n in range(start, stop)
            if lines[n].strip() and not lines[n].lstrip().startswith("#")
        ]
        spans.append((start, content[-1] + 1))  # (comments and blank lines after: the user's)
    ours_at: list[tuple[int, int]] = []
    for start, stop in spans:
        try:
            item = yaml.safe_load("".join(line[indent:] for line in lines[start:stop]))
        except yaml.YAMLError:
            return None
        repo = item[0] if isinstance(item, list) and len(item) == 1 else None
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        found = {str(h.get("id")) for h in hooks or () if isinstance(h, dict)}
        if found and found <= ids:
            ours_at.append((start, stop))
        elif found & ids:
            return None  # (a user's entry holding one of shiftkit's hooks)
    block = _template_repo_lines(ours, indent)
    if not ours_at or block is None:
        return None
    out = lines[: ours_at[0][0]] + block
    for (_, stop), (start, _) in zip(ours_at, [*ours_at[1:], (len(lines), 0)], strict=True):
        out += lines[stop:start]
    minimum = _template_minimum_line(ours)
    if minimum is not None:
        raised = _with_minimum(out, minimum)
        if raised is None:
            return None
        out = raised
    return "".join(out)


def _template_repo_lines(ours: str, indent: int) -> list[str] | None:
    """The template's `repos:` items, moved to start at column ``indent``."""
    lines = ours.splitlines(keepends=True)
    start = next((n for n, line in enumerate(lines) if line.startswith("repos:")), None)
    if start is None:
        return None
    block = [line for line in lines[start + 1 :] if line.strip()]
    if not block or not block[0].lstrip().startswith("- "):
        return None
    own = len(block[0]) - len(block[0].lstrip())
    shift = indent - own
    if shift < 0 and any(len(line) - len(line.lstrip()) < -shift for line in block):
        return None
    return [(" " * shift + line) if shift >= 0 else line[-shift:] for line in block]


def _template_minimum_line(ours: str) -> str | None:
    found = re.search(rf"^{MINIMUM}:\s*(.+?)\s*$", ours, re.MULTILINE)
    return found.group(1) if found else None


def _with_minimum(lines: list[str], needed: str) -> list[str] | None:
    """``lines`` with `minimum_pre_commit_version` at least ``needed`` (a quoted version as
    the template writes it): a line before the first key when there is none, the value
    replaced when it is lower."""
    value = needed.strip("'\"")
    for n, line in enumerate(lines):
        if line.startswith(f"{MINIMUM}:"):
            have = line.split(":", 1)[1].split("#")[0].strip().strip("'\"")
            if version_key(have) >= version_key(value):
                return lines
            return [
                *lines[:n],
                f"{MINIMUM}: {needed}\n",
                *lines[n + 1 :],
            ]
    first = next((n for n, line in enumerate(lines) if _TOP_KEY.match(line)), None)
    if first is None:
        return None
    return [*lines[:first], f"{MINIMUM}: {needed}  # shiftkit's hooks need it\n", *lines[first:]]


def version_key(text: object) -> tuple[int, ...]:
    """A dotted version as numbers (what pre-commit compares); () when it is not one."""
    parts = str(text).strip().split(".")
    return tuple(int(part) for part in parts) if all(p.isdigit() for p in parts) else ()


def _raise_minimum(doc: Any, template: Any) -> bool:
    """The template's `minimum_pre_commit_version` in the user's config when theirs is lower
    or absent; whether it changed."""
    needed = template.get(MINIMUM) if hasattr(template, "get") else None
    if needed is None:
        return False
    have = doc.get(MINIMUM)
    if have is not None and version_key(have) >= version_key(needed):
        return False
    if have is None:
        doc.insert(0, MINIMUM, needed, comment="shiftkit's hooks need it")
    else:
        doc[MINIMUM] = needed
    return True


def hooks_without_stages(text: str) -> list[str]:
    """The user's hooks that run at every installed stage (no `stages`, no `default_stages`):
    with shiftkit's commit-msg hook installed, they run twice a commit."""
    try:
        doc = _load_yaml(_yaml(text), text, ".pre-commit-config.yaml")
    except BadInput:
        return []
    if (
        not isinstance(doc, dict)
        or doc.get("default_stages")
        or not isinstance(doc.get("repos"), list)
    ):
        return []
    found = []
    for repo in doc["repos"]:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else []:
            mine = isinstance(hook, dict) and "id" in hook and "stages" not in hook
            if mine and not str(hook["id"]).startswith("shiftkit-"):
                found.append(str(hook["id"]))
    return found


def _merge_repos(repos: Any, ours: Any) -> bool:
    """shiftkit's repo entries into the user's list; whether anything changed."""
    ids = shiftkit_hook_ids({"repos": ours})

    def hook_ids(repo: Any) -> list[str]:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        if not isinstance(hooks, list):
            return []
        return [str(hook.get("id")) for hook in hooks if isinstance(hook, dict)]

    entries = [i for i, repo in enumerate(repos) if hook_ids(repo) and set(hook_ids(repo)) <= ids]
    mixed = [i for i, repo in enumerate(repos) if i not in entries and set(hook_ids(repo)) & ids]
    if not mixed and [plain(repos[i]) for i in entries] == plain(ours):
        return False
    for i in mixed:  # the user's own repo entry holding a shiftkit hook: that hook goes
        hooks = repos[i]["hooks"]
        for j in reversed(range(len(hooks))):
            if isinstance(hooks[j], dict) and str(hooks[j].get("id")) in ids:
                del hooks[j]
    at = entries[0] if entries else len(repos)
    for i in reversed(entries):
        del repos[i]
    for offset, repo in enumerate(ours):
        repos.insert(at + offset, repo)
    return True
