"""The guard on programs other than git and the shells: those that write files in place,
copy or move them, change modes, run code (interpreters), and shiftkit's and pre-commit's
person actions."""

from __future__ import annotations

import os
import re

from shiftkit.core.guard_options import parse_options
from shiftkit.core.guard_paths import (
    INSTEAD,
    PERSON,
    USE_SHIFTKIT,
    Site,
    into,
    label,
    path_kind,
    path_reason,
)


def check_shiftkit(args: list[str]) -> str | None:
    options = parse_options(args, "", "", (), first_positional_ends=True)
    sub = options.positional[0] if options.positional else ""
    if sub in {"unblock", "override", "accept"}:
        return (
            f"`shiftkit {sub}` is a person's action, not an agent's; {PERSON} to run "
            f"`shiftkit {sub}` (record what is in the way with `shiftkit note`, or give up "
            f"the attempt with `shiftkit revert --reason`)"
        )
    if sub == "add":
        return (
            "`shiftkit add` appends a feature, and a feature's definition (its steps and "
            f"verifier) is a person's, not the agent's (decision 0050); {PERSON} to add it, "
            "and meanwhile record the proposal with `shiftkit note`"
        )
    if sub == "setup" and any(word.startswith("--trust") for word in options.positional[1:]):
        return (
            f"`shiftkit setup --trust-installation` records which shiftkit judges this clone: "
            f"a person's action; {PERSON}"
        )
    if sub == "setup" and "--signed" in options.positional[1:]:
        return (
            f"`shiftkit setup --signed` sets who may make person actions: a person's action; "
            f"{PERSON}"
        )
    if sub in {"claim", "release"} and "--steal" in options.positional[1:]:
        return (
            f"`shiftkit {sub} --steal` takes over another session's claim: a person's "
            f"action; {PERSON} to run `shiftkit {sub} --steal` once that session is gone, "
            f"and meanwhile take another feature with `shiftkit next`/`shiftkit claim` (a "
            f"claim whose lease expired is taken by a plain `shiftkit claim ID`)"
        )
    return None


def check_pre_commit(args: list[str]) -> str | None:
    options = parse_options(args, "c", "", ("--config",), first_positional_ends=True)
    if options.positional[:1] == ["uninstall"]:
        return f"`pre-commit uninstall` removes the commit hooks; {USE_SHIFTKIT}"
    return None


CHMOD_MODE = r"^(?:[0-7]{1,4}|(?:[ugoa]*[-+=][rwxXst]*)(?:,[ugoa]*[-+=][rwxXst]*)*)$"


def _disables(mode: str) -> bool:
    if mode.isdigit():
        return len(mode) >= 3 and not int(mode[-3]) & 1
    clauses = mode.split(",")
    return any(("-" in c and re.search(r"[rx]", c)) or ("=" in c and "x" not in c) for c in clauses)


def check_chmod(args: list[str], site: Site) -> str | None:
    words = [a for a in args if not a.startswith("--") and a not in {"-R", "-v", "-c", "-f"}]
    if not words or not re.match(CHMOD_MODE, words[0]) or not _disables(words[0]):
        return None
    for path in words[1:]:
        if path_kind(path, site) in {"hooks", "gitdir"}:
            return (
                f"`chmod {words[0]}` on {path} disables the commit hooks (.git/hooks); "
                f"{INSTEAD['hooks']}"
            )
    return None


# -- programs that write files -----------------------------------------------------------------


def check_writers(program: str, args: list[str], site: Site) -> str | None:
    if program in {"rm", "unlink", "shred", "rmdir", "srm"}:
        options = parse_options(args, "nsu" if program == "shred" else "")
        return path_reason(options.positional, f"`{program}`", site, removing=True)
    if program in {"cp", "mv", "ln", "install", "rsync"}:
        return _check_copy(program, args, site)
    if program in {"tar", "bsdtar", "gtar", "unzip", "cpio"}:
        return _check_unpack(program, args, site)
    if program in {"touch", "mkdir"}:
        return _check_made(program, args, site)
    writes = _written(program, args)
    return path_reason(writes, f"`{program}`", site)


# Where a file's mere presence is the record (a verdict, an approval, a ref, grafts): making
# one there, even empty, is writing it.
PRESENCE_KINDS = {"state", "gitstore", "gitfolder", "hooks"}


def _check_made(program: str, args: list[str], site: Site) -> str | None:
    """`touch`/`mkdir` of shiftkit's state or git's refs and grafts forges a record (an empty
    verdict file, or a folder in its place); elsewhere they change nothing that is judged."""
    if program == "touch":
        options = parse_options(args, "drt", "", ("--date", "--reference", "--time"))
    else:
        options = parse_options(args, "m", "", ("--mode", "--context"))
    made = [path for path in options.positional if path_kind(path, site) in PRESENCE_KINDS]
    return path_reason(made, f"`{program}`", site)


def _check_unpack(program: str, args: list[str], site: Site) -> str | None:
    """An archive unpacked writes names the command does not show: into .git it is denied,
    and the members it names are checked as written."""
    if program == "unzip":
        options = parse_options(args, "dxP", "", ())
        folder = options.value("-d") or "."
        members = options.positional[1:]
    elif program == "cpio":
        options = parse_options(args, "DEHIFMORs", "", ("--directory", "--file", "--format"))
        if not {"-i", "--extract"} & set(options.names()):
            return None
        folder, members = options.value("-D", "--directory") or ".", options.positional
    else:
        if args and not args[0].startswith("-"):  # `tar xzf a.tar`: the first word is options
            args = ["-" + args[0], *args[1:]]
        options = parse_options(
            args, "fCbHIKLNTVXg", "", ("--file", "--directory", "--exclude", "--use-compress")
        )
        names = options.names()
        if not (
            {"-x", "--extract", "--get"} & set(names) or any(n.startswith("--ex") for n in names)
        ):
            return None
        folders = [v for n, v in options.given if n in {"-C", "--directory"} and v]
        folder, members = (folders or ["."])[-1], options.positional
    written = [folder] + [os.path.join(folder, member) for member in members]
    return path_reason(written, f"unpacking with `{program}`", site, unseen=True)


def _check_copy(program: str, args: list[str], site: Site) -> str | None:
    values = {"install": "tSmogZ", "rsync": "eBfT"}.get(program, "tS")
    options = parse_options(args, values, "", ("--target-directory", "--suffix", "--mode"))
    sources = list(options.positional)
    if not sources:
        return None
    target = options.value("-t", "--target-directory")
    if target is None:
        target = sources.pop() if len(sources) > 1 or program != "ln" else "."
    if program == "mv":
        reason = path_reason(sources, "`mv`", site, removing=True)
        if reason:
            return reason
    recursive = program == "rsync" or any(
        name in {"-r", "-R", "-a", "--recursive", "--archive"} for name in options.names()
    )
    return path_reason(into(target, sources, site), f"`{program}`", site, unseen=recursive)


def _written(program: str, args: list[str]) -> list[str]:
    """Files a program writes in place, by its options (empty when it only reads)."""
    if program in {"tee", "sponge", "truncate"}:
        return parse_options(args, "sr" if program == "truncate" else "").positional
    if program == "dd":
        return [arg[3:] for arg in args if arg.startswith("of=")]
    if program in {"sed", "gsed"}:
        options = parse_options(args, "efl", "i", ("--expression", "--file", "--line-length"))
        in_place = any(n == "-i" or n.startswith("--i") for n in options.names())
        scripted = any(n in {"-e", "-f", "--expression", "--file"} for n in options.names())
        return options.positional[0 if scripted else 1 :] if in_place else []
    if program in {"perl", "ruby"}:
        options = parse_options(args, "eErIx", "i0lMmCdD")
        if "-i" not in options.names():
            return []
        coded = any(n in {"-e", "-E"} for n in options.names())
        return options.positional[0 if coded else 1 :]
    if program in {"awk", "gawk"}:
        options = parse_options(args, "fvi")
        in_place = options.value("-i") in {"inplace", "inplace.awk"}
        return options.positional[0 if options.value("-f") else 1 :] if in_place else []
    if program == "yq":
        options = parse_options(args)
        in_place = any(n in {"-i", "--inplace"} for n in options.names())
        return options.positional[1:] if in_place else []
    return _written_by_tools(program, args)


def _written_by_tools(program: str, args: list[str]) -> list[str]:
    if program == "patch":
        options = parse_options(args, "pioDBrFzVYg", "", ("--output", "--input"))
        return options.positional[:1] + [
            v for n, v in options.given if n in {"-o", "--output"} and v
        ]
    if program in {"curl", "wget"}:
        options = parse_options(
            args,
            "oOdHXuAe" if program == "curl" else "OoaPe",
            "",
            ("--output", "--output-document", "--data", "--header"),
        )
        flag = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document")}[program]
        return [v for n, v in options.given if n in flag and v]
    if program in {"ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "pico"}:
        options = parse_options(args, "cSuTsWwt", "", ("--cmd",))
        return [] if "-R" in options.names() else options.positional
    return []


# -- interpreters ------------------------------------------------------------------------------

# Per interpreter: the short options that give code, and all short options taking a value.
INTERPRETERS = {
    "python": ("c", "cmWXQ"),
    "pypy": ("c", "cmWX"),
    "node": ("ep", "eprC"),
    "nodejs": ("ep", "eprC"),
    "ruby": ("e", "erIECFx"),
    "perl": ("eE", "eEIMmx"),
    "php": ("r", "rfdcz"),
    "deno": ("", ""),
    "bun": ("e", "erp"),
}
WRITE_CODE = (
    r"""open\s*\([^)]*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]"""
    r"""|,\s*(?:mode\s*=\s*)?['"][wax][bt+]*['"]\s*\)"""  # `open(f(...) + '/x', 'w')`
    r"""|mode\s*=\s*['"][^'"]*[wax+]|inplace\s*=\s*True"""
    r"""|\.open\s*\(\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]|\.write_(?:text|bytes)\s*\(|\.writelines?\s*\(|\.truncate\s*\(|\.unlink\s*\("""
    r"""|\.rename\s*\(|\bos\.(?:replace|rename|remove|unlink|truncate|open)\b"""
    r"""|\bshutil\.(?:copy\w*|move|rmtree)\b|writeFile|appendFile|createWriteStream"""
    r"""|\bfs\w*\.(?:promises\.)?(?:write|append|rename|copy|unlink|rm|truncate)"""
    r"""|\bFile\.(?:write|delete|rename)|\bFile\.open\s*\([^)]*['"][wa]|\bIO\.write"""
    r"""|\bFileUtils\.|file_put_contents|fopen\s*\([^)]*['"][wax]|['"]\+?>"""
)


def _mentioned(text: str, site: Site) -> str | None:
    """The kind of protected file the text names, if any."""
    names = {
        "features": os.path.basename(site.features),
        "hooks": ".git/hooks",
        "gitconfig": ".git/config",
        "state": ".git/shiftkit",
        "config": ".shiftkit.toml",
        "signers": "allowed_signers",
    }
    named = next((kind for kind, name in names.items() if name in text), None)
    if named is None and INSTALLATION_CODE.search(text):
        return "install"  # code that finds site-packages need not name it (decision 0091)
    return named


# Code that names or finds the files that run in every Python process of an interpreter.
INSTALLATION_CODE = re.compile(
    r"\.pth\b|\b(?:site|user)customize\b|site-packages|dist-packages"
    r"|\bget(?:user)?sitepackages\b|\bUSER_SITE\b|\bget_(?:paths|path)\b|\bpurelib\b|\bplatlib\b"
)


def python_shiftkit_args(args: list[str], stdin: str | None) -> list[str] | None:
    """The arguments a python command line hands shiftkit's entry point, or None when it runs
    none: `-m shiftkit[.main|.cli|...] ARGS`, or code (`-c CODE ARGS`, `- ARGS` on stdin) that
    names shiftkit, as `.shiftkit/hook` runs it (`-P -c 'from shiftkit.main import main;
    main()' ARGS`); the words such code quotes count too (`main(['add', ...])`). Python stops
    reading its own options at `-c`/`-m`'s value and at the first other word."""
    index = 0
    while index < len(args):
        arg, index = args[index], index + 1
        if arg == "-" or not arg.startswith("-") or arg == "--":
            if arg != "-":
                return None  # a script file (or nothing): not read
            return _code_args(stdin or "", args[index:])
        for position, letter in enumerate(arg[1:], start=2):
            if letter not in "cmWX":
                continue
            value = arg[position:]
            if not value and index < len(args):
                value, index = args[index], index + 1
            if letter == "m":
                return args[index:] if re.match(r"shiftkit(?:\.|$)", value) else None
            if letter == "c":
                return _code_args(value, args[index:])
            break  # -W/-X: their value taken
    return None


def _code_args(code: str, rest: list[str]) -> list[str] | None:
    if not re.search(r"\bshiftkit\b", code):
        return None
    quoted = [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", code)]
    named = [i for i, word in enumerate(quoted) if word.endswith("shiftkit")]
    return rest or quoted[named[-1] + 1 if named else 0 :]


def check_interpreter(
    name: str, args: list[str], stdin: str | None, site: Site, depth: int
) -> str | None:
    code_letters, values = INTERPRETERS[name]
    options = parse_options(
        args, values, "", ("--eval", "--print"), first_positional_ends=name in {"python", "pypy"}
    )
    module = options.value("-m") if name in {"python", "pypy"} else None
    if name in {"python", "pypy"}:
        shiftkit_args = python_shiftkit_args(args, stdin)
        if shiftkit_args is not None:
            return check_shiftkit(shiftkit_args)
    code_options = {"-" + letter for letter in code_letters} | {"--eval", "--print"}
    codes = [value or "" for option, value in options.given if option in code_options]
    if not codes and options.positional[:1] == ["eval"]:
        codes = options.positional[1:2]
    if not codes and module is None and options.positional[:1] in ([], ["-"]):
        codes = [stdin or ""]
    code = "\n".join(codes)
    kind = _mentioned(code + " " + " ".join(options.positional), site)
    if kind and re.search(WRITE_CODE, code):
        return (
            f"`{name}` code that opens {label(kind, site)} for writing changes it "
            f"by hand; {INSTEAD[kind]}"
        )
    return None
