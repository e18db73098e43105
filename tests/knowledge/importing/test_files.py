"""Imported files: valid knowledge, idempotent, an owner's edit kept, written atomically."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from knowledge.content import read_folder
from knowledge.importing import files
from knowledge.importing.files import Status
from knowledge.importing.model import Imported


def _doc(source: str = "https://tamsin.test/about/", body: str = "I am a hydrologist in Arnhem.\n",
         title: str = "About me") -> Imported:
    return Imported(source=source, title=title, body=body, lang="en", kind="about",
                    url=source if source.startswith("http") else "",
                    updated=dt.date(2026, 3, 1), slug="about")


def test_written_files_are_knowledge_the_sync_reads(tmp_path):
    entries = files.plan([_doc(), _doc("cv.pdf", "Tamsin Okafor\n\n## Experience\n\nRiverwise", "CV")], tmp_path)
    assert [e.status for e in entries] == [Status.NEW, Status.NEW]
    assert [e.path for e in entries] == ["about.md", "about-2.md"]  # one slug, two sources: two files
    assert files.write(entries, tmp_path) == 2
    docs = {d.path: d for d in read_folder(tmp_path)}
    assert docs["about.md"].title == "About me" and docs["about.md"].url == "https://tamsin.test/about/"
    assert docs["about.md"].updated == dt.date(2026, 3, 1) and docs["about-2.md"].kind == "about"
    assert [c.heading_path for c in docs["about-2.md"].chunks] == ["", "Experience"]


def test_the_same_source_again_writes_nothing_and_a_changed_one_updates_its_own_file(tmp_path):
    files.write(files.plan([_doc()], tmp_path), tmp_path)
    before = (tmp_path / "about.md").stat().st_mtime_ns
    again = files.plan([_doc()], tmp_path)
    assert [e.status for e in again] == [Status.UNCHANGED] and files.write(again, tmp_path) == 0
    assert (tmp_path / "about.md").stat().st_mtime_ns == before
    changed = files.plan([_doc(body="I am a hydrologist in Nijmegen now.\n")], tmp_path)
    assert [(e.status, e.path) for e in changed] == [(Status.CHANGED, "about.md")]
    files.write(changed, tmp_path)
    assert "Nijmegen" in (tmp_path / "about.md").read_text()


def test_an_owners_edit_is_kept_unless_forced(tmp_path):
    files.write(files.plan([_doc()], tmp_path), tmp_path)
    path = tmp_path / "about.md"
    path.write_text(path.read_text().replace("kind: about", "kind: cv").replace("Arnhem", "Arnhem (since 2021)"))
    assert files.edited(path.read_text())
    kept = files.plan([_doc(body="Changed on the site.\n")], tmp_path)
    assert [e.status for e in kept] == [Status.KEPT]
    assert files.write(kept, tmp_path) == 0 and "since 2021" in path.read_text()
    forced = files.plan([_doc(body="Changed on the site.\n")], tmp_path, force=True)
    assert [e.status for e in forced] == [Status.CHANGED]
    files.write(forced, tmp_path)
    assert "Changed on the site." in path.read_text() and not files.edited(path.read_text())


def test_a_title_another_file_has_gets_a_number_for_the_sync_refuses_two(tmp_path):
    (tmp_path / "mine.md").write_text("---\ntitle: About me\nkind: about\nlang: en\n---\nWritten by hand.\n")
    entries = files.plan([_doc()], tmp_path)
    assert entries[0].doc.title == "About me (2)"
    files.write(entries, tmp_path)
    assert {d.title for d in read_folder(tmp_path)} == {"About me", "About me (2)"}


def test_a_failed_write_leaves_no_half_file_and_the_other_files_intact(tmp_path, monkeypatch):
    files.write(files.plan([_doc()], tmp_path), tmp_path)
    original = (tmp_path / "about.md").read_text()
    entries = files.plan([_doc(body="New text.\n"), _doc("https://tamsin.test/blog/", "A post.\n", "Blog")],
                         tmp_path)
    real_replace = os.replace

    def failing(src, dst):
        if str(dst).endswith("about.md"):
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing)
    with pytest.raises(OSError, match="disk full"):
        files.write(entries, tmp_path)
    assert (tmp_path / "about.md").read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["about.md"]  # no temporary file left behind


def test_one_source_read_twice_is_written_once_and_a_reserved_folder_or_taught_title_is_avoided(tmp_path):
    entries = files.plan([_doc(), _doc(body="Again.\n"),
                          Imported(source="https://tamsin.test/taught/x/", title="Can I hire you?", body="Yes.\n",
                                   lang="en", kind="faq", slug="taught/x")],
                         tmp_path, taken_titles={"Can I hire you?"})
    assert [(e.status, e.path) for e in entries] == [(Status.NEW, "about.md"), (Status.SKIPPED, ""),
                                                    (Status.NEW, "pages/taught/x.md")]
    assert entries[1].reason == "read twice: the same source as about.md"
    assert entries[2].doc.title == "Can I hire you? (2)"


def test_a_file_the_sync_would_refuse_is_not_written_and_an_odd_url_is_made_a_link(tmp_path):
    odd = _doc("https://tamsin.test/it's me/")
    bad = Imported(source="s", title="Dates", body="Text.\n", lang="de", kind="about", slug="dates")
    entries = files.plan([odd, bad], tmp_path)
    assert entries[0].status == Status.NEW and entries[0].doc.url == "https://tamsin.test/it%27s%20me/"
    assert entries[1].status == Status.SKIPPED and "field 'lang' must be one of en, nl" in entries[1].reason
    files.write(entries, tmp_path)
    assert [d.path for d in read_folder(tmp_path)] == ["about.md"]


def test_written_files_are_readable_and_a_body_line_like_the_hash_is_no_edit(tmp_path):
    files.write(files.plan([_doc(body="imported: 2019\nI am a hydrologist.\n")], tmp_path), tmp_path)
    path = tmp_path / "about.md"
    assert path.stat().st_mode & 0o777 == 0o644
    assert not files.edited(path.read_text())
    assert files.plan([_doc(body="imported: 2019\nI am a hydrologist.\n")], tmp_path)[0].status == Status.UNCHANGED
