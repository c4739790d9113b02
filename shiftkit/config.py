"""`.shiftkit.toml`: every key has a default; unknown keys and wrong types are errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from shiftkit.errors import BadInput

CONFIG_FILE = ".shiftkit.toml"


class LogConfig(NamedTuple):
    keep: int = 20
    block: int = 10
    archive: str = "progress-archive.txt"


class ClaimsConfig(NamedTuple):
    enabled: bool = True
    remote: str = ""
    ttl_hours: int = 8


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
    log: LogConfig = LogConfig()
    claims: ClaimsConfig = ClaimsConfig()


_SECTIONS = {"log": LogConfig, "claims": ClaimsConfig}
_POSITIVE = {"verify_timeout", "max_attempts", "keep", "block", "ttl_hours"}


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
    return Config(**values)


def _read_table(cls: Any, table: dict[str, Any], prefix: str, source: str) -> dict[str, Any]:
    defaults: dict[str, Any] = cls._field_defaults
    allowed = set(defaults) | (set(_SECTIONS) if cls is Config else set())
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in allowed:
            import difflib

            hint = difflib.get_close_matches(key, sorted(allowed), n=1)
            suggestion = f" (did you mean '{prefix}.{hint[0]}'?)" if hint else ""
            raise BadInput(f"{source}: unknown key '{prefix}.{_shown(key)}'{suggestion}")
        if key in _SECTIONS and cls is Config:
            continue
        expected = type(defaults[key])
        if type(value) is not expected:
            raise BadInput(
                f"{source}: key '{prefix}.{key}' must be {_type_name(expected)}, "
                f"got {_type_name(type(value))} {_shown(repr(value))}"
            )
        if key in _POSITIVE and value < 1:
            raise BadInput(f"{source}: key '{prefix}.{key}' must be at least 1, got {value}")
        if key == "regression_sample" and value < 0:
            raise BadInput(f"{source}: key '{prefix}.{key}' must be 0 or more, got {value}")
        values[key] = value
    return values


def _shown(text: str, limit: int = 60) -> str:
    """A key or value for a one-line message: control characters escaped, long text cut."""
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(kind: type) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", float: "a number"}.get(
        kind, kind.__name__
    )


def load(root: Path) -> Config:
    path = root / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except UnicodeDecodeError:
        raise BadInput(f"{CONFIG_FILE}: not UTF-8 text") from None
    return parse(text, CONFIG_FILE)
