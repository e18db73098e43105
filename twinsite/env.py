"""Typed readers for environment variables.

Every setting Twinsite reads goes through one of these, so a bad value fails at start-up with
``ImproperlyConfigured`` naming the variable instead of surfacing later as a 500.
"""

from __future__ import annotations

import os
from decimal import Decimal, InvalidOperation
from pathlib import Path

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
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be <= {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
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
