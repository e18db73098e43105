"""Kinds guessed from where a document lives, its title and its build, in both languages."""

from __future__ import annotations

import datetime as dt

import pytest

from knowledge.importing.kinds import guess_kind
from knowledge.importing.model import Imported

ROLES = "## Ervaring\n\n### Adviseur (2019 – heden)\n\nTekst.\n\n### Monteur (2012 – 2019)\n\nTekst.\n\n" \
        "## Opleiding\n\nHBO Werktuigbouw (2008 – 2012)\n"


@pytest.mark.parametrize(("title", "body", "hints", "kind"), [
    ("Levensloop", ROLES, ["pdf"], "cv"),
    ("Bridge sensors for the province", "We fitted 40 sensors.\n", ["portfolio", "bridge-sensors"], "project"),
    ("Why I stopped estimating", "A long essay.\n", ["blog", "why-i-stopped"], "article"),
    ("Wat ik kost", "Mijn uurtarief is 95 euro, per dag 700 euro.\n", ["diensten"], "availability"),
    ("Veelgestelde vragen", "## Werk je op afstand?\n\nJa.\n\n## Factureer je per uur?\n\nNee.\n", [], "faq"),
    ("Gereedschap", "- Python\n- Rust\n- QGIS\n- PostGIS\n- Docker\n", ["vaardigheden"], "skills"),
])
def test_a_kind_is_read_from_the_documents_own_signs(title, body, hints, kind):
    doc = Imported(source="x", title=title, body=body, hints=hints, updated=dt.date(2026, 1, 1))
    assert guess_kind(doc)[0] == kind


def test_without_any_sign_the_guess_is_unsure():
    assert guess_kind(Imported(source="x", title="Notes from Tuesday", body="Some words.\n"))[1] is False


@pytest.mark.parametrize("title", ["Outside work: choirs and canoes", "Werk en gezin"])
def test_work_in_a_title_is_no_portfolio_as_a_sites_work_section_is(title):
    assert guess_kind(Imported(source="x", title=title, body="I sing bass in a choir.\n"))[0] != "project"
    assert guess_kind(Imported(source="x", title=title, body="Text.\n", hints=["work"]))[0] == "project"


def test_a_fee_is_a_price_and_a_projects_budget_in_millions_is_none():
    fee = Imported(source="x", title="Samenwerken", body="Een dag advies kost 840 euro.\n")
    budget = Imported(source="x", title="Samenwerken", body="De aanbesteding was 14 miljoen euro.\n")
    assert guess_kind(fee)[0] == "availability"
    assert guess_kind(budget)[0] != "availability"


def test_headings_are_read_as_commonmark_reads_them_not_a_fenced_comment():
    body = ("## Kan ik je inhuren?\n\nJa.\n\n## Werk je op locatie?\n\nSoms.\n\n"
            "```sh\n# eerst bijwerken\n# dan opnieuw starten\n# en dan de log lezen\n```\n")
    assert guess_kind(Imported(source="x", title="Allerlei", body=body))[0] == "faq"
