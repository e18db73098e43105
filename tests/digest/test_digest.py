"""The owner's digest: what it says about a seeded day, in which language, and when it goes out
(once a day, whichever worker gets there; never when there is nothing to say)."""

from __future__ import annotations

import datetime as dt
import re

import polib
import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone, translation

from digest.models import DigestDay, DigestLink
from digest.services import digest_build, digest_due, digest_scheduled, digest_send
from tests.concurrently import at_once
from tests.digest.seed import seed_day
from twinsite import catalogues

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(kb):
    return seed_day()


def local(hour: int, minute: int = 0, days: int = 0) -> dt.datetime:
    today = timezone.localdate() + dt.timedelta(days=days)
    return timezone.make_aware(dt.datetime.combine(today, dt.time(hour, minute)))


def test_the_digest_of_a_seeded_day(seeded, settings):
    settings.TWIN_SITE_URL = "https://mira.example"
    outcome, digest = digest_send()
    assert outcome == "sent"
    [message] = mail.outbox
    assert message.to == ["owner@localhost"]
    assert message.subject == "Your twin's digest: 2 contact requests wait for you"
    [(html, mimetype)] = message.alternatives
    assert mimetype == "text/html" and message.body == digest.text and html == digest.html
    text = message.body

    # the waiting requests, with who typed what, each with its two links; the decided one is not there
    waiting, model_made = seeded["waiting"], seeded["model_made"]
    assert f"#{waiting.pk}  Tom <tom@example.com>" in text and "data platform project" in text
    assert "Bob" not in text
    anna = text[text.index(f"#{model_made.pk}  Anna"):]
    assert ("  name: typed by the visitor\n  email: made by the model, not typed by the visitor (check it)\n"
            "  message: made by the model") in anna
    links = re.findall(r"https://mira\.example/digest/[^/\s]+/", text)
    assert len(links) == 4 == DigestLink.objects.count() and len(set(links)) == 4
    assert all(link in html for link in links)
    assert {(link.approval_id, link.decision) for link in DigestLink.objects.all()} == {
        (waiting.pk, "approve"), (waiting.pk, "reject"), (model_made.pk, "approve"), (model_made.pk, "reject")}
    assert f"https://mira.example/admin/approvals/pendingapproval/{waiting.pk}/change/" in text

    # the period's unanswered questions, similar ones grouped, the old one left out
    assert "== 4 unanswered questions ==" in text
    questions = text[text.index("== 4 unanswered"):text.index("== Spend")]
    assert questions.split("\n")[2:5] == ["3x  What is her day rate?", "     also: what is her day rate",
                                          "1x  Does she speak Japanese?"], questions
    assert "sailing" not in text
    # spend against the limit; incidents by rule; feedback; flagged answers with their traces
    assert "$0.42 of $2.00 (21%)" in text
    assert "2x  injection / ignore_previous" in text and "1x  card_number / luhn" in text
    assert "1x  off_topic / -" in text and "iban" not in text
    assert "Feedback: 1 helpful, 1 not helpful" in text and '- "Too vague about pricing"' in text
    assert "on: What does she charge?" in text
    assert "== 2 flagged answers ==" in text
    assert "Has she worked for NASA?\n  hallucination risk" in text
    assert "citations removed: Project: Atlantis" in text
    assert f"/admin/chat/agenttrace/{seeded['risky'].trace.pk}/change/" in text
    assert "Old risky one" not in text and "Where is she based?" not in text

    # the HTML part says the same, escaped, with buttons for the links
    assert "Too vague about pricing" in html and "Does she speak Japanese?" in html
    assert html.count(">Approve</a>") == 2 and html.count(">Reject</a>") == 2
    assert DigestDay.objects.get().outcome == "sent"


def test_visitor_text_is_escaped_in_the_html_part(kb):
    from tests.digest.seed import request

    request(message="<script>alert(1)</script> & <b>bold</b>")
    html = digest_build(with_links=False).html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in html


def test_in_dutch_when_the_owner_reads_dutch(seeded, settings):
    settings.TWIN_OWNER_LANGUAGE = "nl"
    before = translation.get_language()
    digest = digest_build(with_links=False)
    assert digest.subject == "Dagoverzicht van je twin: 2 contactverzoeken wachten op je"
    assert "== 4 onbeantwoorde vragen ==" in digest.text
    assert "getypt door de bezoeker" in digest.text and "Uitgaven tegenover het dagbudget" in digest.text
    assert 'lang="nl"' in digest.html and "Goedkeuren" not in digest.text  # no links in a dry run
    assert translation.get_language() == before  # only the digest was in Dutch


def test_every_digest_sentence_is_translated_into_dutch():
    dutch = polib.pofile(str(catalogues.LOCALE / "nl" / "LC_MESSAGES" / "django.po"))
    ours = [e for e in dutch if any(path.startswith(("templates/digest/", "digest/")) for path, _ in e.occurrences)]
    assert len(ours) >= 40
    untranslated = [e.msgid for e in ours if not (e.msgstr or all(e.msgstr_plural.values()))]
    assert untranslated == []
    assert all(e.msgstr != e.msgid for e in ours if e.msgstr)


def test_nothing_is_sent_when_there_is_nothing_to_say(db, capsys):
    outcome, digest = digest_send()
    assert outcome == "nothing" and not digest.has_news
    assert digest_send()[0] == "already" and digest_send(force=True)[0] == "nothing"
    assert mail.outbox == [] and DigestLink.objects.count() == 0
    assert DigestDay.objects.get().outcome == "nothing"
    call_command("send_digest", "--dry-run")
    assert "Nothing to say" in capsys.readouterr().out


def test_the_command_prints_the_digest_and_a_dry_run_sends_nothing(seeded, capsys, tmp_path):
    call_command("send_digest", "--dry-run", "--html", str(tmp_path / "digest.html"))
    out = capsys.readouterr().out
    assert "Subject: Your twin's digest: 2 contact requests wait for you" in out
    assert "links are made when the digest is sent" in out and "(dry run)" in out
    assert mail.outbox == [] and DigestLink.objects.count() == 0 and DigestDay.objects.count() == 0
    assert "<html" in (tmp_path / "digest.html").read_text()
    call_command("send_digest")
    assert "/digest/" in capsys.readouterr().out and len(mail.outbox) == 1


def test_scheduled_at_the_digest_time_once_a_day(seeded, settings):
    settings.TWIN_DIGEST_TIME = (8, 0)
    assert digest_due(local(7, 59)) is False
    assert digest_scheduled(now=local(7, 59)) is None and mail.outbox == []
    assert digest_scheduled(now=local(8, 0)) == "sent"
    assert digest_scheduled(now=local(8, 1)) is None and digest_scheduled(now=local(23, 59)) is None
    assert len(mail.outbox) == 1
    # the next day's digest covers what happened since this one
    assert digest_due(local(8, 0, days=1)) is True
    settings.TWIN_DIGEST_TIME = None  # TWIN_DIGEST_TIME=off
    assert digest_due(local(8, 0, days=1)) is False


def test_a_failed_send_is_recorded_and_retried_later_without_its_links(seeded, settings):
    settings.TWIN_DIGEST_TIME = (8, 0)
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend",
                                    "OPTIONS": {"host": "127.0.0.1", "port": 9, "timeout": 2}}}
    assert digest_scheduled(now=local(9)) == "failed"
    record = DigestDay.objects.get()
    assert record.outcome == "failed" and "ConnectionRefused" in record.last_error
    assert DigestLink.objects.count() == 0  # rolled back with the mail
    # the outbox's one back-off: a minute after the first failure
    assert record.next_attempt_at == local(9) + dt.timedelta(seconds=60)
    assert digest_due(local(9) + dt.timedelta(seconds=59)) is False and digest_due(local(9, 1)) is True


@pytest.mark.django_db(transaction=True)
def test_two_workers_at_the_same_moment_send_one_digest(kb, settings):
    seed_day()
    settings.TWIN_DIGEST_TIME = (8, 0)
    outcomes: list[str | None] = []

    def worker() -> None:
        outcomes.append(digest_scheduled(now=local(8, 30)))

    at_once(worker, worker, timeout=30)
    assert sorted(outcomes, key=str) in (["already", "sent"], [None, "sent"])
    assert len(mail.outbox) == 1 and DigestDay.objects.get().outcome == "sent"


@pytest.mark.parametrize(("env", "message"), [
    ({"TWIN_DIGEST_TIME": "25:00"}, "TWIN_DIGEST_TIME must be a time like 08:00"),
    ({"TWIN_OWNER_LANGUAGE": "de"}, "TWIN_OWNER_LANGUAGE must be one of en, nl"),
    ({"TWIN_SITE_URL": "mira.example"}, "TWIN_SITE_URL must be the site's address"),
])
def test_bad_digest_settings_stop_the_start_naming_the_variable(env, message):
    from tests.test_settings import check_settings

    result = check_settings(**env)
    assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr and message in result.stderr
    assert check_settings(TWIN_DIGEST_TIME="off", TWIN_OWNER_LANGUAGE="nl").returncode == 0


def test_the_digest_shows_uncited_answers_per_model_and_recommends_retract(kb, settings):
    from digest.selectors import digest_content
    from tests.digest.seed import turn

    for n in range(25):
        turn(f"Question {n}?", "An answer.", hallucination_risk=n < 3, provider="openai_compatible",
             model="smollm2-135m")
    turn("Who is she?", "An invention.", hallucination_risk=True, provider="openai", model="gpt-4.1-mini")
    turn("Where?", "I can't find that.", hallucination_risk=True, retracted=True, provider="openai",
         model="gpt-4.1-mini")
    assert digest_send()[0] == "sent"
    text = mail.outbox[0].body
    assert "smollm2-135m: 3 of 25 answers had no source (12.0%)" in text
    assert "gpt-4.1-mini: 2 of 2 answers had no source (100.0%), 1 withdrawn" in text
    assert ("At least 5.0% of smollm2-135m's answers had no source. Consider TWIN_UNCITED=retract" in text)
    assert "of gpt-4.1-mini's answers had no source. Consider" not in text  # two answers tell too little
    # the owner who already chose retract is not told again
    settings.TWIN_UNCITED = "retract"
    assert digest_content()["recommend_retract"] == []
