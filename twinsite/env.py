"""Typed readers for environment variables.

Every setting Twinsite reads goes through one of these, so a bad value fails at start-up with
``ImproperlyConfigured`` naming the variable instead of surfacing later as a 500.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_secret(name: str, default: str = "") -> str:
    """Read ``NAME`` or, when ``NAME_FILE`` is set, the first line of that file."""
    path = os.environ.get(f"{name}_FILE", "").strip()
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE: cannot read {path!r}: {exc}") from exc
    return env_str(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    return _env_number(name, default, int, "an integer", minimum=minimum, maximum=maximum)


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    return _env_number(name, default, float, "a number", minimum=minimum)


def _env_number(name, default, kind, called: str, *, minimum=None, maximum=None):
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be {called}, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be <= {maximum}, got {value}")
    return value


def env_decimal(name: str, default: str, *, minimum: Decimal | None = None) -> Decimal:
    raw = os.environ.get(name)
    text = default if raw is None or not raw.strip() else raw.strip()
    try:
        value = Decimal(text)
    except InvalidOperation as exc:
        raise ImproperlyConfigured(f"{name} must be a decimal number, got {raw!r}") from exc
    if not value.is_finite() or (minimum is not None and value < minimum):
        raise ImproperlyConfigured(f"{name} must be a finite number >= {minimum}, got {raw!r}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def env_duration(name: str, default: str, *, minimum: int = 1) -> int:
    """Seconds from ``90``, ``45s``, ``30m``, ``12h`` or ``7d``."""
    raw = env_str(name, default).strip().lower()
    number, unit = (raw[:-1], raw[-1]) if raw[-1:] in _DURATION_UNITS else (raw, "s")
    try:
        seconds = int(number) * _DURATION_UNITS[unit]
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a duration like 3600, 30m, 12h or 7d; got {raw!r}") from None
    if seconds < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum} seconds; got {raw!r}")
    return seconds


def parse_rate(text: str) -> tuple[int, int]:
    """``20/10m`` (count/period: ``5/30s``, ``100/1h``, ``1000/1d``) as (count, seconds); ValueError
    otherwise. The one reader of the format: settings and ``guards.limits.Limit``."""
    count, _, period = text.strip().partition("/")
    number = period[:-1] or "1"
    if not count.isdigit() or period[-1:] not in _DURATION_UNITS or not number.isdigit():
        raise ValueError(f"a limit looks like 20/10m (count/period with s, m, h or d), got {text!r}")
    return int(count), int(number) * _DURATION_UNITS[period[-1]]


def env_rate(name: str, default: str) -> str:
    value = env_str(name, default)
    try:
        if parse_rate(value)[0] < 1:  # a limit of none is no setting (a test may set one on a Limit)
            raise ValueError(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must look like 20/10m (count/period with s, m, h or d), "
                                   f"got {value!r}") from None
    return value


def env_match(name: str, default: str, pattern: str, example: str) -> str:
    """A value that must match ``pattern`` whole (``example`` shows the owner one)."""
    value = env_str(name, default)
    if not re.fullmatch(pattern, value):
        raise ImproperlyConfigured(f"{name} must look like {example}, got {value!r}")
    return value


def env_items(name: str, default: str, check: Callable[[str], bool], what: str) -> list[str]:
    """A comma-separated list whose every item passes ``check`` (``what``: what an item must be)."""
    items = env_list(name, default)
    for item in items:
        if not check(item):
            raise ImproperlyConfigured(f"{name}: {item!r} is not {what}")
    return items


def env_blocks(name: str, default: str) -> dict[tuple[str, int], int]:
    """``v6/56:3,v6/48:5,v4/24:10``: address blocks (family and prefix length) with a factor each."""
    blocks = {}
    for item in env_list(name, default):
        match = re.fullmatch(r"(v4|v6)/(\d{1,3}):(\d{1,4})", item)
        if match is None or int(match[2]) > (32 if match[1] == "v4" else 128) or int(match[3]) < 1:
            raise ImproperlyConfigured(f"{name}: {item!r} is not a block like v6/48:10 or v4/24:10")
        blocks[(match[1], int(match[2]))] = int(match[3])
    return blocks


def env_subset(name: str, default: str, choices: tuple[str, ...]) -> list[str]:
    """A non-empty comma-separated list of distinct ``choices``."""
    items = env_list(name, default)
    if not items or any(i not in choices for i in items) or len(set(items)) != len(items):
        raise ImproperlyConfigured(f"{name} must be a comma-separated list of distinct {', '.join(choices)}; "
                                   f"got {items!r}")
    return items


def env_url(name: str, default: str, schemes: tuple[str, ...], what: str, *, secret: bool = False) -> str:
    """An address with one of ``schemes`` and a host (or a unix socket path); "" when unset.
    ``what`` finishes the error: "``name`` must ..."."""
    value = (env_secret if secret else env_str)(name, default)
    parts = urlparse(value)
    if value and (parts.scheme not in schemes or not (parts.netloc or parts.scheme == "unix")):
        raise ImproperlyConfigured(f"{name} must {what}, got {'(hidden)' if secret else repr(value)}")
    return value


def is_network(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True


def env_token(name: str, *, minimum: int = 24) -> str:
    """A secret token: unset, or at least ``minimum`` characters."""
    value = env_secret(name)
    if value and len(value) < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum} characters")
    return value


def env_time_of_day(name: str, default: str) -> tuple[int, int] | None:
    """(hour, minute) from ``08:00`` (24-hour); None for ``off``."""
    value = env_str(name, default).lower()
    if value == "off":
        return None
    if not (match := re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", value)):
        raise ImproperlyConfigured(f"{name} must be a time like 08:00 (24-hour, TIME_ZONE) or off; got {value!r}")
    return int(match[1]), int(match[2])


def env_quiet_hours(name: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((hour, minute), (hour, minute)) from ``22:00-07:00`` (may span midnight); None when unset."""
    value = env_str(name).lower()
    if value in ("", "off"):
        return None
    clock = r"([01]?\d|2[0-3]):([0-5]\d)"
    if not (match := re.fullmatch(rf"{clock}\s*-\s*{clock}", value)) or match[1:3] == match[3:5]:
        raise ImproperlyConfigured(f"{name} must be two different times like 22:00-07:00 (24-hour, TIME_ZONE) "
                                   f"or off; got {value!r}")
    return (int(match[1]), int(match[2])), (int(match[3]), int(match[4]))


def env_secret_key(var_dir: Path, *, debug: bool) -> str:
    """SECRET_KEY; in DEBUG, unset, a generated key kept in ``var_dir`` (sessions survive restarts)."""
    key = env_secret("SECRET_KEY")
    if key:
        return key
    if not debug:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    path = var_dir / "secret_key"
    try:
        if not path.exists():
            var_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
            path.chmod(0o600)
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:  # read-only or full disk, a file in the way: say which folder
        raise ImproperlyConfigured(
            f"TWIN_VAR_DIR {var_dir} is not usable ({exc.strerror or exc}): make it writable, free space, "
            "point TWIN_VAR_DIR at a writable folder, or set SECRET_KEY"
        ) from None


def knowledge_owner_name(folder: Path) -> str:
    """The ``name:`` of a knowledge folder's ``owner.yaml`` ("" when there is none): the owner a
    knowledge base belongs to travels with it, so the code names no owner of its own."""
    path = folder / "owner.yaml"
    if not path.is_file():
        return ""
    import yaml

    try:
        meta = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ImproperlyConfigured(f"{path}: unreadable ({exc})") from exc
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ImproperlyConfigured(f"{path}: name must be a non-empty text")
    return (name or "").strip()
