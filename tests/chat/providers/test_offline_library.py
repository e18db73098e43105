"""The offline twin answers what one passage cannot, from the knowledge base in its prompt: the
owner's profile, and every document of a kind (no database: the prompt is built here)."""

from __future__ import annotations

import json

import pytest

from chat.providers.base import ChatRequest
from chat.providers.offline import OfflineProvider
from chat.providers.offline.library import documents
from chat.providers.offline.overview import asks_profile, overview_kind

OWNER = "Lot Brouwer"
PROMPT = """You are the digital twin of Lot Brouwer.

Knowledge base:

# Over Lot
[source: Over Lot (/over/)]
[kind: about; language: nl]

Lot Brouwer ontwerpt geluidsinstallaties voor theaters. Deze pagina vat samen wie ze is.

## Werk
Ze werkt vanuit Zwolle.

# About Lot
[source: About Lot (/about/)]
[kind: about; language: en]

Lot Brouwer designs sound systems for theatres and concert halls.

# Theatre De Kroon
[source: Theatre De Kroon (/work/kroon/)]
[kind: project; language: en]

A new sound system for a 600-seat theatre, installed in six weeks.

# Zaal Noord
[source: Zaal Noord (/werk/noord/)]
[kind: project; language: nl]

Een akoestische renovatie van een concertzaal uit 1930.

# Not in this prompt
These documents are not shown here:
- Old notes
"""


def test_the_documents_are_read_from_the_prompt_with_kind_and_language():
    docs = documents([{"role": "system", "content": PROMPT}])
    assert [(d.title, d.kind, d.lang) for d in docs] == [
        ("Over Lot", "about", "nl"), ("About Lot", "about", "en"), ("Theatre De Kroon", "project", "en"),
        ("Zaal Noord", "project", "nl")]
    # the opening leaves out a sentence about the page itself
    assert docs[0].opening(2) == ["Lot Brouwer ontwerpt geluidsinstallaties voor theaters."]


@pytest.mark.parametrize(("question", "kind"), [
    ("Which projects has she done?", "project"), ("What has Lot built?", "project"),
    ("Welke projecten heeft ze gedaan?", "project"), ("Which articles has she written?", "article"),
    ("Wat heeft ze geschreven?", "article"),
    # after a preposition, with a softening word, as a clause after a comma
    ("Aan welke projecten heeft Lot zoal gewerkt?", "project"),
    ("So, which projects has she actually done?", "project"),
    ("Which projects used Dante networking?", None), ("What has she written about acoustics?", None),
    ("Aan welke zaal werkt ze nu?", None), ("During a project, what does she do?", None),
    ("Wie werkte er aan het project?", None), ("Who worked on the project?", None),
    ("Where does she live?", None),
    # asked as yes or no: yes, and these are they; not when it asks about one thing
    ("Has Lot published any articles or papers?", "article"), ("Heeft ze weleens projecten gedaan?", "project"),
    ("Has she written about acoustics?", None), ("Has she done projects for theatres?", None),
    # asked as a request to name a few
    ("Kun je een paar projecten van haar noemen?", "project"), ("Can you name a few of her projects?", "project"),
    ("Could you list some articles by Lot?", "article"),
    ("Can you name the theatre of her last project?", None), ("Kun je me vertellen wat ze kost?", None),
    ("Can you build a project for us?", None), ("Kun je voor ons een project doen?", None),
    # after what the visitor tells first
    ("We are renovating our main hall. Which projects has Lot done?", "project"),
    ("Ik ben student: welke artikelen heeft ze geschreven?", "article"),
    ("We read her blog. Which projects has she done?", "project"),
    ("We read her blog. Which projects used Dante networking?", None),
    ("Welke projecten heeft ze gedaan - een paar?", "project"),
    # a question, then what it means in more words
    ("Has she published any writing? Articles, books, anything?", "article"),
    ("We love her talks. Heeft ze ook iets geschreven? Blogs, boeken?", "article"),
    ("Has she published anything on acoustics? Papers?", None), ("Has Lot written anything?", "article"),
])

def test_an_overview_is_asked_with_nothing_but_the_kind(question, kind):
    assert overview_kind(question, OWNER) == kind


def test_a_long_message_of_separators_is_read_as_a_whole():
    """Only the last few places where a question may start are tried (each try reads the rest of
    the message): a message of thousands of dashes or stops is no overview question."""
    for message in (" - " * 3333, " - " * 3333 + "? x", ". " * 5000 + "Which projects has she done?"):
        assert overview_kind(message, OWNER) == ("project" if message.endswith("done?") else None)
        assert asks_profile(message, OWNER) is False


@pytest.mark.parametrize(("question", "profile"), [
    ("What kind of work does Lot do?", True), ("What does the owner do?", True), ("Wat voor werk doe je?", True),
    ("Who is Lot Brouwer?", True), ("Wat doet ze?", True),
    ("Wat voor werk doet Lot eigenlijk?", True), ("In a nutshell, what is her work about?", True),
    ("In short, what does she do?", True),
    ("What does she do in her spare time?", False), ("Where does she work?", False),
    ("When did she start?", False), ("In a nutshell, how does she tune a hall?", False),
    ("Other than work, what does she do?", False), ("Na het werk, wat doet ze?", False), ("Yes, tell me more", False),
    # one time of her work, not the profile
    ("What did she do before that?", False), ("Wat deed ze daarvoor?", False),
    # after a greeting or a softening word, with or without a comma; what she is known for, a bio
    ("so what does Lot actually do for a living?", True), ("Hi! Who is Lot?", True),
    ("hoi, wat is haar specialisatie?", True), ("What is Lot's speciality?", True),
    ("ok so what does she charge?", False), ("Hello, where is she based?", False),
    # asked as a request that names the owner or what the profile tells; not one for a fact, nor
    # one that follows up on the question before
    ("Can you give me a short bio of Lot?", True), ("Could you tell me about Lot?", True),
    ("Kun je een korte bio geven?", True), ("Kun je me over Lot vertellen?", True),
    ("Could you tell me what she charges?", False), ("Can you give me her phone number?", False),
    ("Can you tell me more about it?", False), ("Could you tell me more about that?", False),
    ("Can you show me?", False),
    # after what the visitor tells first: only the question the message ends with is read
    ("I'm writing the programme for our festival - can you give me a short bio?", True),
    ("Wij organiseren een congres in mei. Wat voor werk doet Lot?", True),
    ("We are a theatre in Gouda. Where does she work?", False),
    # a tail that is no question of its own belongs to the question
    ("What does she do \u2013 in a nutshell?", True), ("Wat doet ze eigenlijk - in het kort?", True),
    ("What does she do: in short?", True),
    ("What does she do? In a few words?", True), ("What does she do? I want to know her rate.", False),
    ("What does she do? Where is she based?", False),  # two questions: read whole, as before
])
def test_a_profile_question_names_nothing_but_the_owner_and_work(question, profile):
    assert asks_profile(question, OWNER) is profile


async def answer(question: str) -> str:
    messages = [
        {"role": "system", "content": PROMPT}, {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "search_knowledge", "arguments": json.dumps({"query": question})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"results": []})},
    ]
    tokens: list[str] = []
    await OfflineProvider(owner=OWNER).complete(ChatRequest(messages=messages), tokens.append)
    return "".join(tokens)


async def test_an_overview_lists_each_document_of_the_kind_cited_saying_which_are_in_another_language():
    text = await answer("Which projects has Lot done?")
    assert "- **Theatre De Kroon** A new sound system for a 600-seat theatre" in text
    assert "[source: Theatre De Kroon]" in text and "[source: Zaal Noord]" in text
    assert "- **Zaal Noord** (in Dutch) Een akoestische renovatie" in text
    assert text.index("Theatre De Kroon") < text.index("Zaal Noord")  # the visitor's language first


ARTICLES = """You are the digital twin of Lot Brouwer.

Knowledge base:

# Room acoustics on a budget
[source: Room acoustics on a budget (/writing/budget/)]
[kind: article; language: en]

An article by Lot Brouwer about treating a small hall for little money.

## Start with the walls
Heavy curtains do more than foam panels.

# Tien jaar Dante
[source: Tien jaar Dante (/schrijven/dante/)]
[kind: article; language: nl]

## Waarom
Netwerkaudio maakte bekabeling eenvoudiger en goedkoper.

# Not in this prompt
These documents are not shown here:
- Old notes
"""


@pytest.mark.parametrize("question", ["Which articles has Lot written?", "Wat heeft ze geschreven?"])
def test_each_listed_document_has_an_opening_line_even_when_its_intro_only_describes_it(question):
    """The one line of a listed article is what the document says of itself ("An article by ...
    about ..."), which a profile skips; without an intro, the first sentence after a heading."""
    docs = documents([{"role": "system", "content": ARTICLES}])
    described = "An article by Lot Brouwer about treating a small hall for little money."
    assert docs[0].opening(of_itself=True) == [described]
    assert docs[0].opening() == ["Heavy curtains do more than foam panels."]
    assert docs[1].opening(of_itself=True) == ["Netwerkaudio maakte bekabeling eenvoudiger en goedkoper."]
    text = OfflineProvider(owner=OWNER)._from_library(question, docs, "en")
    assert f"- **Room acoustics on a budget** {described} [source: Room acoustics on a budget]" in text
    assert ("- **Tien jaar Dante** (in Dutch) Netwerkaudio maakte bekabeling eenvoudiger en goedkoper. "
            "[source: Tien jaar Dante]") in text
    assert "  " not in text


async def test_a_profile_question_is_answered_from_the_about_page_in_the_visitors_language():
    assert "Lot Brouwer designs sound systems for theatres and concert halls. [source: About Lot]" in await answer(
        "What kind of work does Lot do?")
    dutch = await answer("Wat voor werk doet Lot?")
    assert "Lot Brouwer ontwerpt geluidsinstallaties voor theaters. [source: Over Lot]" in dutch
    assert "Deze pagina" not in dutch


async def test_a_question_the_library_does_not_answer_is_declined_as_before():
    assert "I can't find that" in await answer("Which projects used Dante networking?")


def test_a_first_level_heading_in_a_document_is_part_of_its_body():
    prompt = ("# About Lot\n[source: About Lot]\n[kind: about; language: en]\n\nIntro.\n\n# Experience\n"
              "She tuned the hall of De Kroon.\n\n# Not in this prompt\nThese documents are not shown here:\n- Notes\n")
    docs = documents([{"role": "system", "content": prompt}])
    assert [d.body for d in docs] == ["Intro.\n\n# Experience\nShe tuned the hall of De Kroon."]
