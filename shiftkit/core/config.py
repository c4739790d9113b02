"""`.shiftkit.toml`: every key has a default; unknown keys and wrong types are errors."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from shiftkit.core.errors import BadInput

CONFIG_FILE = ".shiftkit.toml"


class LogConfig(NamedTuple):
    keep: int = 20
    block: int = 10
    archive: str = "progress-archive.txt"


class ClaimsConfig(NamedTuple):
    enabled: bool = True
    remote: str = ""
    ttl_hours: int = 8
    heartbeat_minutes: int = 10  # a remote claim's ref is refreshed at most this often
    # another clone's (or worktree's) claim with no heartbeat this long has expired: any
    # session may take it with a plain `claim ID` (decision record 0096)
    lease_minutes: int = 30
    ref_prefix: str = "refs/shiftkit/claims/"  # where the remote keeps claims (a host may
    # allow only some namespaces, e.g. "refs/heads/shiftkit-claims/")


class PeopleConfig(NamedTuple):
    policy: str = "trailer"  # or "signed"


class CostConfig(NamedTuple):
    """How tokens of each kind weigh against a fresh input token (the sources' defaults)."""

    cache_read_ratio: float = 0.1
    cache_write_ratio: float = 1.25
    output_ratio: float = 5.0


class ModelPrice(NamedTuple):
    """Money per million tokens of each kind, for one model."""

    input: float
    cache_read: float
    cache_write: float
    output: float


class Config(NamedTuple):
    features: str = "features.json"
    progress: str = "claude-progress.txt"
    decisions: str = "docs/decisions"
    init: str = "./init.sh"
    smoke: str = "./init.sh smoke"
    verify: str = ""
    verify_timeout: int = 900
    max_attempts: int = 3
    regression_sample: int = 2
    env_reset: str = ""
    verify_in: str = "worktree"  # or "checkout": a temporary worktree of exactly the tree
    junit: str = ""  # where a verifier that is not pytest writes its JUnit XML report
    # paths or globs every feature's verifier judges by, unless the feature names its own
    # (decision record 0048)
    oracle: tuple[str, ...] = ()
    # globs of what the agent's work may change: a verdict reads these files from the judged
    # commit and everything else as a person last left it (decision record 0086)
    code: tuple[str, ...] = ()
    # variables of the caller's environment a verifier and `init` get beside the fixed ones
    # (PATH, HOME, TMPDIR, locale, terminal, user): nothing else reaches them (0088)
    env: tuple[str, ...] = ()
    # file-name globs `finish` warns of as scratch, beside its own (decision record 0093)
    scratch: tuple[str, ...] = ()
    log: LogConfig = LogConfig()
    claims: ClaimsConfig = ClaimsConfig()
    people: PeopleConfig = PeopleConfig()
    cost: CostConfig = CostConfig()
    prices: tuple[tuple[str, ModelPrice], ...] = ()  # (model, price), in the file's order


_SECTIONS = {"log": LogConfig, "claims": ClaimsConfig, "people": PeopleConfig, "cost": CostConfig}
_TABLES = (*_SECTIONS, "prices")
_CHOICES = {"verify_in": ("worktree", "checkout"), "policy": ("trailer", "signed")}

# The keys that decide what the rules accept. A commit that changes one is a person's action
# and flips nothing (SPEC section 7): an agent must not loosen the judge in the judged commit.
ENFORCEMENT_KEYS = (
    "features",
    "progress",
    "verify",
    "init",  # (it runs before every verifier in a checkout: it could make one pass)
    "verify_timeout",
    "max_attempts",
    "regression_sample",
    "verify_in",
    "junit",  # (a report the judged commit names could be one it holds)
    "decisions",  # (moving the folder would step around rule 13)
    "oracle",  # (what rule 14 keeps out of the agent's reach)
    "code",  # (the agent's ground: widening it would let the judged commit pick its judge)
    "env",  # (a variable the verifier gets can change its verdict: PYTEST_ADDOPTS)
    "log.keep",
    "log.block",
    "log.archive",
    "claims.enabled",
    "claims.remote",
    "claims.ttl_hours",
    "claims.lease_minutes",  # (a shorter lease would let the agent take live claims)
    "claims.ref_prefix",
    "people.policy",
)
_POSITIVE = {
    "verify_timeout",
    "max_attempts",
    "keep",
    "block",
    "ttl_hours",
    "heartbeat_minutes",
    "lease_minutes",
}
# Upper bounds far past any real setting: a larger number is a typo, and some overflow where
# they are used (`ttl_hours = 9999999999` as a timedelta; decision 0031).
_MAXIMUM: dict[str, int] = {
    "ttl_hours": 24 * 365 * 10,
    "heartbeat_minutes": 60 * 24 * 365,
    "lease_minutes": 60 * 24 * 365,
    "verify_timeout": 7 * 24 * 3600,
    "max_attempts": 10_000,
    "regression_sample": 100_000,
    "keep": 1_000_000,
    "block": 1_000_000,
}


def parse(text: str, source: str = CONFIG_FILE) -> Config:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{source}: malformed TOML: {exc}") from None
    except RecursionError:
        raise BadInput(f"{source}: malformed TOML: nested too deeply to read") from None
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise BadInput(f"{source}: malformed TOML: a number too long to read") from None
    unknown_top = [key for key in data if key != "shiftkit"]
    if unknown_top:
        raise BadInput(
            f"{source}: unknown table [{_shown(unknown_top[0])}]; "
            f"all settings live under [shiftkit]"
        )
    table = data.get("shiftkit", {})
    if not isinstance(table, dict):
        raise BadInput(f"{source}: 'shiftkit' must be a table ([shiftkit])")
    values = _read_table(Config, table, "shiftkit", source)
    for section, cls in _SECTIONS.items():
        sub = table.get(section, {})
        if not isinstance(sub, dict):
            raise BadInput(f"{source}: 'shiftkit.{section}' must be a table ([shiftkit.{section}])")
        values[section] = cls(**_read_table(cls, sub, f"shiftkit.{section}", source))
    values["prices"] = _read_prices(table.get("prices", {}), source)
    if values.get("code"):
        # (every verdict runs on the assembled tree, which only a checkout holds: 0086)
        values["verify_in"] = "checkout"
    return Config(**values)


def _read_prices(table: object, source: str) -> tuple[tuple[str, ModelPrice], ...]:
    """`[shiftkit.prices]`: per model, an inline table of the four prices per million tokens."""
    if not isinstance(table, dict):
        raise BadInput(f"{source}: 'shiftkit.prices' must be a table ([shiftkit.prices])")
    prices = []
    for model, entry in table.items():
        where = f"shiftkit.prices.{_shown(model)}"
        if not isinstance(entry, dict):
            raise BadInput(
                f"{source}: key '{where}' must be a table like "
                f"{{ input = 3.0, cache_read = 0.3, cache_write = 3.75, output = 15.0 }}"
            )
        values: dict[str, float] = {}
        for key, value in entry.items():
            if key not in ModelPrice._fields:
                raise BadInput(f"{source}: unknown key '{where}.{_shown(key)}'")
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise BadInput(
                    f"{source}: key '{where}.{key}' must be a number of 0 or more, "
                    f"got {_shown(repr(value))}"
                )
            if not _finite(value):
                raise BadInput(
                    f"{source}: key '{where}.{key}' must be a finite number, "
                    f"got {_shown(repr(value))}"
                )
            values[key] = float(value)
        missing = [key for key in ModelPrice._fields if key not in values]
        if missing:
            raise BadInput(f"{source}: key '{where}' lacks {', '.join(missing)}")
        prices.append((model, ModelPrice(**values)))
    return tuple(prices)


def _read_table(cls: Any, table: dict[str, Any], prefix: str, source: str) -> dict[str, Any]:
    defaults: dict[str, Any] = cls._field_defaults
    allowed = set(defaults) | (set(_TABLES) if cls is Config else set())
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in allowed:
            import difflib

            hint = difflib.get_close_matches(key, sorted(allowed), n=1)
            suggestion = f" (did you mean '{prefix}.{hint[0]}'?)" if hint else ""
            raise BadInput(f"{source}: unknown key '{prefix}.{_shown(key)}'{suggestion}")
        if key in _TABLES and cls is Config:
            continue
        if key in ("oracle", "code") and cls is Config:
            values[key] = _read_paths(value, f"{prefix}.{key}", source)
            continue
        if key == "env" and cls is Config:
            values[key] = _read_names(value, f"{prefix}.{key}", source)
            continue
        if key == "scratch" and cls is Config:
            values[key] = _read_paths(value, f"{prefix}.{key}", source)
            continue
        expected = type(defaults[key])
        if expected is float and type(value) in (int, float) and not _finite(value):
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be a finite number, got {_shown(repr(value))}"
            )
        if expected is float and type(value) is int:
            value = float(value)  # `output_ratio = 5` means 5.0
        if type(value) is not expected:
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be {_type_name(expected)}, "
                f"got {_type_name(type(value))} {_shown(repr(value))}"
            )
        if key in _POSITIVE and value < 1:
            raise BadInput(f"{source}: key '{prefix}.{key}' must be at least 1, got {value}")
        if key in _CHOICES and value not in _CHOICES[key]:
            choices = " or ".join(repr(c) for c in _CHOICES[key])
            raise BadInput(f"{source}: key '{prefix}.{key}' must be {choices}, got {value!r}")
        if expected is float and value < 0:
            raise BadInput(f"{source}: key '{prefix}.{key}' must be 0 or more, got {value}")
        if key == "ref_prefix" and not _ref_prefix_ok(value):
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be a ref namespace like "
                f'"refs/shiftkit/claims/" (starting with "refs/", ending with "/", no spaces '
                f"or special characters), got {_shown(repr(value))}"
            )
        if key == "junit" and value and not _inside(value):
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be a path inside the project, like "
                f'"reports/junit.xml", got {_shown(repr(value))}'
            )
        if key == "regression_sample" and value < 0:
            raise BadInput(f"{source}: key '{prefix}.{key}' must be 0 or more, got {value}")
        if key in _MAXIMUM and value > _MAXIMUM[key]:
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be at most {_MAXIMUM[key]:,}, got "
                f"{_shown(repr(value))}"
            )
        values[key] = value
    return values


def _inside(path: str) -> bool:
    """A relative path to a file that stays inside the folder it is taken from."""
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and bool(parts[-1]) and path.isprintable()


def _read_paths(value: object, where: str, source: str) -> tuple[str, ...]:
    """A list of project-relative paths or globs (`oracle`)."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BadInput(
            f"{source}: key '{where}' must be a list of paths or globs like "
            f'["tests/accept/**"], got {_shown(repr(value))}'
        )
    for item in value:
        parts = item.replace("\\", "/").split("/")
        if not item.strip() or item.startswith("/") or ".." in parts:
            raise BadInput(
                f"{source}: key '{where}' must hold paths inside the project (relative, no "
                f"'..'), got {_shown(repr(item))}"
            )
    return tuple(value)


def _read_names(value: object, where: str, source: str) -> tuple[str, ...]:
    """A list of environment variable names (`env`)."""
    import re

    if not isinstance(value, list) or not all(
        isinstance(item, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", item) for item in value
    ):
        raise BadInput(
            f"{source}: key '{where}' must be a list of environment variable names like "
            f'["DATABASE_URL"], got {_shown(repr(value))}'
        )
    return tuple(value)


def _ref_prefix_ok(value: str) -> bool:
    """A namespace git accepts refs under (the rules of `git check-ref-format`, in short)."""
    import re

    return bool(
        re.fullmatch(r"refs/([A-Za-z0-9_][A-Za-z0-9_.+-]*/)+", value)
        and ".." not in value
        and "/." not in value
        and ".lock/" not in value
    )


def _finite(value: float) -> bool:
    """Not nan or infinite, and (a whole number) not too large for a float. Python compares
    an int with a float exactly, so no conversion can overflow here."""
    return -sys.float_info.max <= value <= sys.float_info.max


def _shown(text: str, limit: int = 60) -> str:
    """A key or value for a one-line message: control characters escaped, long text cut."""
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(kind: type) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", float: "a number"}.get(
        kind, kind.__name__
    )


def setting(cfg: Config, dotted: str) -> object:
    value: object = cfg
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def enforcement_changes(old: Config, new: Config) -> list[str]:
    """The enforcement keys whose value differs between two configurations."""
    return [key for key in ENFORCEMENT_KEYS if setting(old, key) != setting(new, key)]


def parse_or_default(text: str | None, source: str = CONFIG_FILE) -> Config:
    """A committed config: defaults when the file is absent."""
    return Config() if text is None else parse(text, source)
