"""The sources an owner imported, remembered in the knowledge folder (``imports.yaml``) with what
their last refreshes did: read by the admin, the digest and the worker's "is a refresh due?",
none of which loads a reader (``follow`` does the reading)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import yaml

IMPORTS_FILE = "imports.yaml"
HISTORY = 60  # refreshes kept per source in imports.yaml


@dataclass
class Followed:
    """One source the owner imported, with how it was imported and what its last refresh did."""

    source: str
    kind: str | None = None
    lang: str | None = None
    max_pages: int = 50
    refreshed_at: dt.datetime | None = None
    error: str = ""
    changes: dict[str, int] = field(default_factory=dict)  # updated, new, gone, kept, unchanged
    gone: list[str] = field(default_factory=list)  # the files unpublished by the last refresh
    # the last refreshes that changed something or failed, newest last (the digest reads a day's)
    history: list[dict] = field(default_factory=list)

    def as_yaml(self) -> dict:
        data: dict = {"source": self.source}
        data |= {key: value for key, value in (("kind", self.kind), ("lang", self.lang)) if value}
        if self.max_pages != 50:
            data["max_pages"] = self.max_pages
        if self.refreshed_at is not None:
            data["refreshed_at"] = self.refreshed_at.isoformat(timespec="seconds")
            data["changes"] = dict(self.changes)
        if self.error:
            data["error"] = self.error
        if self.gone:
            data["gone"] = list(self.gone)
        if self.history:
            data["history"] = list(self.history)
        return data

    def record(self) -> None:
        """Keep this refresh in the history when it changed something or failed."""
        changed = {key: self.changes.get(key, 0) for key in ("updated", "new", "gone")}
        if self.error or any(changed.values()):
            entry = {"at": self.refreshed_at.isoformat(timespec="seconds"), **changed}
            self.history = [*self.history, entry | ({"error": self.error} if self.error else {})][-HISTORY:]


def followed(root: Path) -> list[Followed]:
    """The sources remembered in ``root/imports.yaml`` (none when there is no such file)."""
    path = root / IMPORTS_FILE
    if not path.exists():
        return []
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    found = []
    for item in data.get("sources") or []:
        when = item.get("refreshed_at")
        if isinstance(when, str):
            when = dt.datetime.fromisoformat(when)
        found.append(Followed(source=str(item["source"]), kind=item.get("kind"), lang=item.get("lang"),
                              max_pages=int(item.get("max_pages") or 50), refreshed_at=when,
                              error=str(item.get("error") or ""), changes=dict(item.get("changes") or {}),
                              gone=list(item.get("gone") or []), history=list(item.get("history") or [])))
    return found


def save(root: Path, sources: list[Followed]) -> None:
    header = ("# The sources imported into this folder (import_knowledge), read again every TWIN_IMPORT_EVERY\n"
              "# by the worker or by `manage.py import_knowledge --refresh`. Remove a source to stop following it.\n")
    body = yaml.safe_dump({"sources": [s.as_yaml() for s in sources]}, allow_unicode=True, sort_keys=False)
    target = root / IMPORTS_FILE
    root.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{IMPORTS_FILE}.tmp")
    temporary.write_text(header + body, encoding="utf-8")
    temporary.replace(target)


def remember(root: Path, sources: list[str], *, kind: str | None, lang: str | None, max_pages: int) -> None:
    """Add the sources of an import to those followed (a source named again takes the new options).
    Uploaded files are not followed: the admin's copy is gone once imported."""
    known = {s.source: s for s in followed(root)}
    for source in sources:
        entry = known.get(source) or Followed(source=source)
        entry.kind, entry.lang, entry.max_pages = kind, lang, max_pages
        known[source] = entry
    save(root, list(known.values()))


def due(root: Path, every: int | None, now: dt.datetime) -> bool:
    """Whether a source waits for its refresh: one never refreshed since its import counts from
    the folder's ``imports.yaml`` change (the import itself)."""
    if not every:
        return False
    path = root / IMPORTS_FILE
    if not path.exists():
        return False
    since_file = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
    return any((s.refreshed_at or since_file) + dt.timedelta(seconds=every) <= now for s in followed(root))


def changes_between(root: Path, since: dt.datetime, until: dt.datetime) -> list[dict]:
    """Per source, what its refreshes between ``since`` and ``until`` changed (summed) and the
    last error among them: the digest's "3 pages updated, 1 new, 1 gone"."""
    rows = []
    for source in followed(root):
        inside = [h for h in source.history if since <= dt.datetime.fromisoformat(h["at"]) <= until]
        if inside:
            rows.append({"source": source.source, **{key: sum(h.get(key, 0) for h in inside)
                                                     for key in ("updated", "new", "gone")},
                         "error": next((h["error"] for h in reversed(inside) if h.get("error")), "")})
    return rows
