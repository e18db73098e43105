"""Compile the translation catalogues (``locale/*/LC_MESSAGES/*.po`` to ``.mo``) in pure Python.

Django's ``compilemessages`` needs GNU gettext's ``msgfmt``, which a fresh machine may lack;
polib writes the same binary catalogues. ``make`` runs this before serving and testing:
``python -m twinsite.catalogues``. A catalogue with a fuzzy or obsolete entry, or with a
translation whose ``{placeholders}`` differ from the English, is refused: it would show
visitors a wrong or broken sentence.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polib

LOCALE = Path(__file__).resolve().parent.parent / "locale"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def problems(po: polib.POFile) -> list[str]:
    found = []
    for entry in po:
        if entry.obsolete or "fuzzy" in entry.flags:
            found.append(f"fuzzy or obsolete: {entry.msgid[:60]!r}")
        elif entry.msgstr and set(_PLACEHOLDER.findall(entry.msgstr)) != set(_PLACEHOLDER.findall(entry.msgid)):
            found.append(f"placeholders differ: {entry.msgid[:60]!r}")
    return found


def compile_all(root: Path = LOCALE) -> list[Path]:
    written = []
    for source in sorted(root.glob("*/LC_MESSAGES/*.po")):
        po = polib.pofile(str(source))
        if bad := problems(po):
            raise SystemExit(f"{source}: " + "; ".join(bad))
        target = source.with_suffix(".mo")
        if not target.exists() or target.stat().st_mtime < source.stat().st_mtime:
            po.save_as_mofile(str(target))
        written.append(target)
    return written


if __name__ == "__main__":
    catalogues = compile_all()
    print(f"translation catalogues: {len(catalogues)} compiled", file=sys.stderr)
