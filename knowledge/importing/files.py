"""Imported documents as knowledge files: the plan (what would change) and the atomic write.

Every file this module writes records where it came from (``source``) and the sha256 of what it
wrote (``imported``: the whole file without that line). Read again, a file whose text no longer
has that hash was edited by the owner since, and an import keeps it unless forced. The same
source always lands in the same file (found by its ``source``), so importing a site again
updates its pages in place and writes nothing that did not change.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import quote

import frontmatter

from knowledge.content import ContentError, parse_text
from knowledge.importing.model import Imported

_IMPORTED_LINE = re.compile(r"^imported: (\S+)\n", re.M)


class Status(StrEnum):
    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    KEPT = "kept"  # edited by the owner since it was imported: left as it is
    SKIPPED = "skipped"  # a file the sync would refuse, or a source read twice: not written


@dataclass
class Entry:
    doc: Imported
    path: str  # relative to the knowledge folder
    status: Status
    text: str  # the file's new content
    reason: str = ""  # why it is skipped

    @property
    def writes(self) -> bool:
        return self.status in (Status.NEW, Status.CHANGED)


def render(doc: Imported) -> str:
    """The knowledge file for ``doc``, its hash line included."""
    meta = {"title": doc.title, "kind": doc.kind, "lang": doc.lang}
    if doc.url:
        meta["url"] = doc.url
    if doc.updated:
        meta["updated"] = doc.updated.isoformat()
    if not doc.public:
        meta["public"] = False
    meta["source"] = doc.source
    header = "".join(f"{key}: {_yaml(value)}\n" for key, value in meta.items())
    body = doc.body.strip() + "\n"
    return f"---\n{header}imported: {_hash(f'---\n{header}---\n{body}')}\n---\n{body}"


def _yaml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML string, quotes and all


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def edited(text: str) -> bool:
    """The file is no longer what the import wrote (or was never written by one): the hash in its
    front matter is not that of the file without that line."""
    if not text.startswith("---\n"):
        return True
    header, sep, body = text[4:].partition("\n---\n")
    match = _IMPORTED_LINE.search(header + "\n")
    if not sep or match is None:
        return True
    without = _IMPORTED_LINE.sub("", header + "\n", count=1)
    return match.group(1) != _hash(f"---\n{without}---\n{body}")


def _existing(root: Path) -> dict[str, tuple[str, str, str]]:
    """path -> (source, title, text) for every Markdown file in the folder."""
    found = {}
    if not root.is_dir():
        return found
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            meta = frontmatter.loads(text).metadata
        except Exception:
            meta = {}
        found[path.relative_to(root).as_posix()] = (str(meta.get("source") or ""), str(meta.get("title") or ""), text)
    return found


def plan(docs: list[Imported], root: Path, *, force: bool = False, taken_titles: set[str] = frozenset()) -> list[Entry]:
    """Where each document goes and whether it changes anything there. ``taken_titles``: titles
    the knowledge base has beside the folder (taught answers' questions)."""
    existing = _existing(root)
    by_source = {source: path for path, (source, _, _) in existing.items() if source}
    taken_paths = set(existing)
    titles = {title: path for path, (_, title, _) in existing.items() if title} | {t: "" for t in taken_titles}
    planned: dict[str, str] = {}
    entries: list[Entry] = []
    for doc in docs:
        if doc.source in planned:
            entries.append(Entry(doc=doc, path="", status=Status.SKIPPED, text="",
                                 reason=f"read twice: the same source as {planned[doc.source]}"))
            continue
        path = by_source.get(doc.source) or _free_path(doc.slug, taken_paths)
        taken_paths.add(path)
        planned[doc.source] = path
        doc.url = quote(doc.url, safe=":/?#[]@!$&()*+,;=%~")  # no quote or space in a link
        doc.title = _free_title(doc, path, titles)
        titles[doc.title] = path
        text = render(doc)
        try:
            parse_text(text, path)  # the sync refuses the whole folder for one bad file
        except ContentError as exc:
            entries.append(Entry(doc=doc, path=path, status=Status.SKIPPED, text="", reason=str(exc)))
            continue
        old = existing.get(path, ("", "", None))[2]
        if old is None:
            status = Status.NEW
        elif old == text:
            status = Status.UNCHANGED
        elif edited(old) and not force:
            status = Status.KEPT
        else:
            status = Status.CHANGED
        entries.append(Entry(doc=doc, path=path, status=status, text=text))
    return entries


def _free_path(slug: str, taken: set[str]) -> str:
    slug = slug.strip("/") or "document"
    if slug.split("/")[0] == "taught":  # the admin's taught answers' folder
        slug = f"pages/{slug}"
    path, n = f"{slug}.md", 2
    while path in taken:
        path, n = f"{slug}-{n}.md", n + 1
    return path


def _free_title(doc: Imported, path: str, titles: dict[str, str]) -> str:
    """A title no other file has (the sync refuses two documents with one title: a citation names one)."""
    title, n = doc.title, 2
    while titles.get(title, path) != path:
        title = f"{doc.title} ({n})"
        n += 1
    return title


def owner_name(docs: list[Imported], root: Path) -> str:
    """The name for a new ``owner.yaml`` (the name the site calls its owner): a CV's name line,
    when the folder has no ``owner.yaml`` yet; "" otherwise."""
    if (root / "owner.yaml").exists():
        return ""
    return next((doc.person for doc in docs if doc.person and len(doc.person.split()) <= 5), "")


def write_owner(name: str, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    target = root / "owner.yaml"
    with open(target, "x", encoding="utf-8") as handle:  # never over one the owner wrote meanwhile
        handle.write(f"name: {json.dumps(name, ensure_ascii=False)}\n")


def write(entries: list[Entry], root: Path) -> int:
    """Write the files that are new or changed, each atomically (a temporary file renamed over
    it): a failure leaves the file as it was and the others untouched. Returns how many."""
    written = 0
    for entry in entries:
        if entry.writes:
            _write_file(root / entry.path, entry.text)
            written += 1
    return written


def _write_file(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".import-", suffix=".tmp")
    try:
        # readable as the owner's other files are (mkstemp makes it private)
        os.chmod(tmp, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- A preview's plan: what the owner saw is what is written, never read from the source again ------------


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def save_plan(entries: list[Entry], owner: str, root: Path, target: Path) -> list[dict]:
    """Keep the files a preview would write (their whole text, the diff against the file there
    now, and that file's hash) in ``target``; returns them for the preview page."""
    files = []
    for entry in entries:
        if not entry.writes:
            continue
        current = root / entry.path
        old = current.read_text(encoding="utf-8", errors="replace") if current.is_file() else ""
        diff = "\n".join(difflib.unified_diff(old.splitlines(), entry.text.splitlines(), "now", "after the import",
                                              lineterm="", n=2)) if old else ""
        files.append({"path": entry.path, "status": str(entry.status), "text": entry.text, "diff": diff,
                      "before": _digest(current)})
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"files": files, "owner": owner}, ensure_ascii=False), encoding="utf-8")
    return files


def load_plan(target: Path) -> dict | None:
    try:
        return json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def apply_plan(saved: dict, root: Path) -> tuple[int, list[str]]:
    """Write exactly the texts the preview showed; a file that changed since the preview (the owner
    edited it, another import wrote it) is left as it is and named. Returns (written, left)."""
    written, left = 0, []
    for planned in saved.get("files", []):
        target = root / planned["path"]
        if not target.resolve().is_relative_to(root.resolve()) or _digest(target) != planned["before"]:
            left.append(planned["path"])
            continue
        _write_file(target, planned["text"])
        written += 1
    return written, left
