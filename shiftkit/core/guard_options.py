"""getopt-style option parsing for the guard: which words are options, their values, and
the positionals."""

from __future__ import annotations


class Options:
    """Parsed options: `given` as ("-n", None), ("--message", "x"), ("-m", "x"); positionals."""

    __slots__ = ("given", "positional")

    def __init__(self, given: list[tuple[str, str | None]], positional: list[str]) -> None:
        self.given = given
        self.positional = positional

    def names(self) -> list[str]:
        return [name for name, _ in self.given]

    def value(self, *names: str) -> str | None:
        return next((value for name, value in self.given if name in names), None)


def parse_options(
    args: list[str],
    values: str = "",
    optional: str = "",
    long_values: tuple[str, ...] = (),
    first_positional_ends: bool = False,
) -> Options:
    """getopt-style: `values` are short options that take an argument (attached or next),
    `optional` take one only attached; long options in `long_values` (or an unambiguous
    abbreviation) take the next word unless written `--name=value`."""
    options = Options([], [])
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            options.positional.extend(args[index:])
            break
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            takes = not equals and len(name) > 3 and any(v.startswith(name) for v in long_values)
            if takes and index < len(args):
                value, index = args[index], index + 1
            options.given.append((name, value if equals or takes else None))
        elif arg.startswith("-") and len(arg) > 1:
            index = _short_cluster(arg, args, index, values, optional, options)
        else:
            options.positional.append(arg)
            if first_positional_ends:
                options.positional.extend(args[index:])
                break
    return options


def _short_cluster(
    arg: str, args: list[str], index: int, values: str, optional: str, options: Options
) -> int:
    for position, letter in enumerate(arg[1:], start=2):
        rest = arg[position:]
        if letter in values:
            if not rest and index < len(args):
                rest, index = args[index], index + 1
            options.given.append(("-" + letter, rest))
            return index
        if letter in optional:
            options.given.append(("-" + letter, rest or None))
            return index
        options.given.append(("-" + letter, None))
    return index


def abbreviates(arg: str, option: str, shortest: int) -> bool:
    """git accepts any unambiguous prefix of a long option."""
    return len(arg) >= shortest and option.startswith(arg)
