"""The twin follows the owner's site (knowledge.importing.follow): an imported site, edited later,
is read again by the worker when ``TWIN_IMPORT_EVERY`` has passed, and the twin answers from what
the site says now. The site is a real HTTP server on loopback."""

from __future__ import annotations

import datetime as dt
import io
import os
import time

import frontmatter
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from knowledge.importing.followed import due, followed
from knowledge.models import Document
from knowledge.services import knowledge_refresh
from tests.knowledge.importing.conftest import PROSE, page

RATES = "/rates/"


def _rates(rate: int) -> str:
    return page("Rates and availability", f"<p>My day rate for modelling work is {rate} euro, excluding VAT. I take "
                                          f"on two projects at a time and answer requests within a week. {PROSE}</p>")


def _import(site, folder) -> str:
    out = io.StringIO()
    call_command("import_knowledge", f"{site.base}/", "--into", str(folder), "--sync", stdout=out,
                 stderr=io.StringIO())
    return out.getvalue()


def _meta(folder, name: str) -> dict:
    [path] = [p for p in folder.rglob("*.md") if frontmatter.load(p).metadata.get("source", "").endswith(name)]
    return frontmatter.load(path).metadata


@pytest.mark.django_db(transaction=True)
def test_after_the_site_changes_one_worker_run_brings_the_twin_up_to_date(site, tmp_path, settings, capsys):
    site.pages[RATES] = _rates(780)
    folder = tmp_path / "knowledge"
    settings.TWIN_KNOWLEDGE_DIR = folder
    _import(site, folder)
    [remembered] = followed(folder)
    assert remembered.source == f"{site.base}/" and remembered.refreshed_at is None

    # the owner edits the site: a new day rate, a new page, a page taken down; and edits one file by hand
    site.pages[RATES] = _rates(910)
    site.pages["/projects/delta-dunes/"] = page(
        "Delta dunes sediment study", "<p>For a coastal consultancy I traced how sand moves between the dunes of "
        "the delta islands after each winter storm, with drone surveys twice a year and a sediment budget per "
        f"island. {PROSE}</p>")
    del site.pages["/blog/soil-moisture/"], site.pages["/writing/"]  # the post, and the list of posts
    lingewaard = next(p for p in folder.rglob("*.md") if "lingewaard" in p.name)
    lingewaard.write_text(lingewaard.read_text() + "\nI still give a talk about this model every spring.\n")

    settings.TWIN_IMPORT_EVERY = 1
    assert due(folder, 1, timezone.now() + dt.timedelta(seconds=2))
    earlier = time.time() - 2  # the import was two seconds ago (TWIN_IMPORT_EVERY counts from it)
    os.utime(folder / "imports.yaml", (earlier, earlier))
    call_command("twin_worker", "--once", stdout=io.StringIO())

    [refreshed] = followed(folder)
    assert refreshed.error == "" and refreshed.refreshed_at is not None
    assert refreshed.changes == {"updated": 1, "new": 1, "gone": 1, "kept": 1, "unchanged": 1}
    assert [p.split("/")[-1] for p in refreshed.gone] == [next(folder.rglob("*soil*")).name]
    assert _meta(folder, "/blog/soil-moisture/")["public"] is False  # unpublished, never deleted
    assert "every spring" in lingewaard.read_text()  # the owner's edit is kept
    titles = set(Document.objects.values_list("title", flat=True))  # a document not public is not synced
    assert "Delta dunes sediment study" in titles and "Wat bodemvocht ons vertelt" not in titles

    call_command("ask", "What is her day rate?", "--provider", "offline")
    answer = capsys.readouterr().out
    assert "910" in answer and "780" not in answer
    call_command("ask", "Has she studied how sand moves between dunes?", "--provider", "offline")
    assert "Delta dunes sediment study" in capsys.readouterr().out

    # a page that comes back is published again
    site.pages["/blog/soil-moisture/"] = page(
        "Wat bodemvocht ons vertelt", "<p>Na een droge zomer meet ik opnieuw hoe snel de bodem weer water opneemt. "
        "De sensoren staan nu op vier diepten en sturen elk uur een meting naar de server van het waterschap. Dit "
        "artikel beschrijft wat we daarvan leerden voor de modellen van de polders.</p>", lang="nl")
    report = knowledge_refresh(root=folder, force=True)
    assert report.total("updated") == 1 and _meta(folder, "/blog/soil-moisture/").get("public", True) is True


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_site_changes_nothing_and_is_reported(site, tmp_path, settings):
    folder = tmp_path / "knowledge"
    settings.TWIN_KNOWLEDGE_DIR = folder
    _import(site, folder)
    before = {p.name: p.read_text() for p in folder.rglob("*.md")}
    site.robots_status = 503  # the site asks not to be read now
    with pytest.raises(CommandError, match="1 of 1 sources could not be read"):
        call_command("import_knowledge", "--refresh", "--into", str(folder), stdout=io.StringIO())
    assert {p.name: p.read_text() for p in folder.rglob("*.md")} == before
    [source] = followed(folder)
    assert "503" in source.error and source.changes == {}
    assert "503" in yaml.safe_load((folder / "imports.yaml").read_text())["sources"][0]["error"]


@pytest.mark.django_db
def test_refresh_wants_no_source_and_something_imported_before(tmp_path):
    with pytest.raises(CommandError, match="name no source"):
        call_command("import_knowledge", "https://example.org/", "--refresh", "--into", str(tmp_path))
    with pytest.raises(CommandError, match="names no source"):
        call_command("import_knowledge", "--refresh", "--into", str(tmp_path))
    with pytest.raises(CommandError, match="name at least one source"):
        call_command("import_knowledge", "--into", str(tmp_path))
    assert not due(tmp_path, 1, timezone.now())  # nothing imported: nothing is ever due


@pytest.mark.django_db
def test_the_digest_and_the_import_page_say_what_a_refresh_changed(site, tmp_path, settings, admin_client):
    from digest.selectors import digest_content

    folder = tmp_path / "knowledge"
    settings.TWIN_KNOWLEDGE_DIR = folder
    site.pages[RATES] = _rates(780)
    _import(site, folder)
    site.pages[RATES] = _rates(820)
    del site.pages["/blog/soil-moisture/"], site.pages["/writing/"]
    started = timezone.now()
    knowledge_refresh(root=folder, force=True)
    content = digest_content(now=timezone.now() + dt.timedelta(seconds=1), since=started - dt.timedelta(seconds=1))
    assert content["site"] == [{"source": f"{site.base}/", "updated": 1, "new": 0, "gone": 1, "error": ""}]
    assert content["counts"]["site"] == 1 and content["has_news"]
    page_html = admin_client.get(reverse("admin:knowledge_import")).content.decode()
    assert f"{site.base}/" in page_html and "blog/soil-moisture.md" in page_html
    from digest.services import digest_render

    # in the owner's language (rendered under translation.override: nothing leaks into later tests)
    assert "1 pagina's bijgewerkt, 0 nieuw, 1 verdwenen" in digest_render(content, language="nl").text
