"""A question about a name the knowledge base never writes is declined, saying which name: no
sentence states a fact about it, and the nearest sentence about something else must not answer
it (no database: the knowledge base is the prompt built here)."""

from __future__ import annotations

import json

import pytest

from chat.providers.base import ChatRequest
from chat.providers.offline import OfflineProvider
from chat.providers.offline.names import Vocabulary, unknown_name
from chat.texts import text as say
from text.counterparts import counterparts

OWNER = "Joris Verhoef"
BODIES = {
    ("Over Joris", "about", "nl"): "Joris Verhoef bouwt dashboards voor energiebedrijven. Hij spreekt Nederlands, "
                                   "Duits en Engels. Hij woont in Zwolle.",
    ("Grid Watch", "project", "en"): "Grid Watch shows the load of 400 transformer stations, built with Grafana "
                                     "and TimescaleDB on PostgreSQL for Enexis-partners. It runs on Kubernetes.",
    ("Tarieven", "availability", "nl"): "Het uurtarief is 95 euro. Reiskosten binnen Nederland zijn inbegrepen.",
}


def prompt(*, left_out: bool = False) -> str:
    blocks = [f"# {title}\n[source: {title}]\n[kind: {kind}; language: {lang}]\n\n{body}\n"
              for (title, kind, lang), body in BODIES.items()]
    note = ["# Not in this prompt\nThese documents are not shown here:\n- Oude notities\n"] if left_out else []
    return f"You are the digital twin of {OWNER}.\n\nKnowledge base:\n\n" + "\n".join(blocks + note)


VOCABULARY = Vocabulary.read(list(BODIES.values()) + [title for title, _, _ in BODIES])


@pytest.mark.parametrize(("question", "unknown"), [
    ("Has he ever used MongoDB?", ["MongoDB"]),
    ("Heeft hij ook met Siemens gewerkt?", ["Siemens"]),
    ("Is he on LinkedIn or Mastodon?", ["LinkedIn"]),  # the first one
    ("Bouwt hij ook ABB-koppelingen?", ["ABB-koppelingen"]),
    ("Has he used SharePoint?", ["SharePoint"]),  # not "point"
    ("I'm wondering whether he has used MongoDB?", ["MongoDB"]),  # no introduction, no name to leave out
    ("Did he study at MIT?", ["MIT"]), ("Has he worked at ING?", ["ING"]),
    # written in the knowledge base: as such, inflected, as the first part of a compound
    ("Which stations run on Kubernetes?", []), ("Did he use Grafana's alerting?", []),
    ("Does he still work with Enexis?", []),
    # the same name in the other language: "German" is "Duits", "Netherlands" is "Nederland"
    ("Does he speak German?", []), ("Is travel within the Netherlands included?", []),
    ("Spreekt hij Engels?", []), ("Geeft hij ook Engelstalige trainingen?", []), ("Is hij Nederlandstalig?", []),
    # an acronym of a word it writes
    ("Does he know SQL?", []), ("Do you think I'd get a reply?", []), ("Is he OK with travel?", []),
    # the sentence's first word, a month, the owner's name, a title: no names asked about
    ("Grafana or what else does he use?", []), ("Is Joris free in March?", []),
    ("Is he free on Tue or Wed?", []), ("Can he come before Christmas?", []), ("Can Mr Verhoef help us?", []),
    # the place a question is set in, the visitor's own, what follows a number
    ("Would he come to Vienna for a workshop?", []), ("Can he advise our CTO once a month?", []),
    ("Kan hij naar Utrecht of Groningen komen?", []), ("Would he come to Utrecht, Groningen or Maastricht?", []),
    ("Does he have clients from Antwerp?", []),
    ("Can we meet on Monday at 14:30 CET?", []), ("Kan hij langskomen op Stationsweg 12 in Deventer?", []),
    # the visitor introducing themselves, what they quote
    ("I'm Jan from Acme. What is his rate?", []), ("Quick question from Jeroen: does he do code reviews?", []),
    ("Hoi Joris, Sanne hier: geeft hij workshops?", []),
    ("Did he give a talk called 'Load Curves Explained' somewhere?", []),
    # Title Case, and German (every noun capitalised), show no names
    ("What Does He Charge Per Hour?", []), ("Does He Know Docker?", []), ("DOES HE KNOW SAP?", []),
    ("Wie hoch ist sein Stundensatz?", []),
    # not Title Case: a name of two words
    ("Did he use MongoDB for Grid Watch?", ["MongoDB"]),
    # a long message without a question is a pasted text, full of names of its own
    ("Here is our job ad: Senior Engineer at Brightline, working on SAP integrations for Shell and BP "
     "in a hybrid setting from our office", []),
])
def test_the_names_a_question_asks_about_that_the_knowledge_base_never_writes(question, unknown):
    assert unknown_name(question, VOCABULARY, OWNER) == (unknown[0] if unknown else None)


def test_a_message_of_endless_names_is_read_no_further_than_a_question():
    names = " ".join(f"Zq{'o' * (i % 7)}{'l' * (i // 7)}x" for i in range(60))
    assert unknown_name(f"Has he used {names}?", VOCABULARY, OWNER) is None  # more names than a question asks
    assert unknown_name(f"Has he used {names[:30]}?", VOCABULARY, OWNER) == "Zqx"
    # a pasted text is no question; neither is a capital run of thousands (read without backtracking)
    assert unknown_name(f"Has he used Qwerty{'x' * 3000}?", VOCABULARY, OWNER) is None
    assert unknown_name(f"in {'A' * 5000} 1?", VOCABULARY, OWNER) is None


def test_a_name_has_its_counterparts_in_the_other_language():
    assert counterparts("duits") == {"duits", "german"}
    assert "nederlands" in counterparts("nederlandse")  # a Dutch adjective
    assert counterparts("grafana") == {"grafana"}
    assert "english" in counterparts("engelstalige")  # "in English"


async def complete(messages: list[dict]) -> str:
    result = await OfflineProvider(owner=OWNER).complete(ChatRequest(messages=messages), lambda _: None)
    return result.text


def searched(question: str, *, left_out: bool = False, tool: str = "search_knowledge",
             found: tuple[str, str, str] = ("Grid Watch", "project", "en")) -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
    results = {"results": [{"title": found[0], "heading": "", "url": "/g/", "text": BODIES[found]}]}
    return [{"role": "system", "content": prompt(left_out=left_out)}, {"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(results)}]


async def test_a_question_about_a_name_the_knowledge_base_never_writes_is_declined_naming_it():
    # a name it writes: the sentence that says it answers
    assert "TimescaleDB" in await complete(searched("Did he use TimescaleDB for Grid Watch?"))
    answer = await complete(searched("Did he use MongoDB for Grid Watch?"))
    assert answer == say("offline.decline_name", "en", owner=OWNER, name="MongoDB")
    assert "MongoDB" in answer and "[source:" not in answer
    dutch = await complete(searched("Heeft hij MongoDB gebruikt voor Grid Watch?"))
    assert dutch == say("offline.decline_name", "nl", owner=OWNER, name="MongoDB")
    assert dutch.startswith("Over MongoDB kan ik niets vinden")


async def test_a_name_too_long_to_be_one_is_not_said_back():
    answer = await complete(searched(f"Did he use Qwerty-{'x' * 60} for Grid Watch?"))
    assert answer == say("offline.decline", "en", owner=OWNER)


async def test_with_part_of_the_knowledge_base_in_the_prompt_an_unseen_name_may_be_in_the_rest():
    answer = await complete(searched("Did he use MongoDB for Grid Watch?", left_out=True))
    assert answer != say("offline.decline_name", "en", owner=OWNER, name="MongoDB")
    assert "[source: Grid Watch]" in answer


async def test_the_availability_check_answers_whoever_the_visitor_works_for():
    answer = await complete(searched("Wat is zijn uurtarief voor Brightline?", tool="check_availability",
                                     found=("Tarieven", "availability", "nl")))
    assert "95 euro" in answer and "[source: Tarieven]" in answer
