"""The tools' JSON schemas are generated from their pydantic models: the same strict schemas the
models were given by hand before, so the two cannot drift apart."""

from __future__ import annotations

import json

import pytest

from approvals.drafts import ContactArgs, arguments_parse
from chat.agent.tools import TOOLS, ToolStatus, strict_schema, tool_schemas


def test_the_generated_schemas_are_strict_and_say_what_each_field_is() -> None:
    assert {t["function"]["name"]: t["function"]["parameters"] for t in tool_schemas()} == {
        "search_knowledge": {
            "type": "object", "additionalProperties": False, "required": ["query"],
            "properties": {"query": {"type": "string", "description": "What to look for."}},
        },
        "check_availability": {
            "type": "object", "additionalProperties": False, "required": ["language"],
            "properties": {"language": {"type": "string", "enum": ["en", "nl"],
                                        "description": "The visitor's language."}},
        },
        "draft_contact_message": {
            "type": "object", "additionalProperties": False,
            "required": ["visitor_name", "visitor_email", "message"],
            "properties": {
                "visitor_name": {"type": ["string", "null"], "description": "The visitor's name, if given."},
                "visitor_email": {"type": ["string", "null"],
                                  "description": "The visitor's e-mail address, if given (name@domain.tld)."},
                "message": {"type": "string", "description": "The message for the owner, in the visitor's words."},
            },
        },
    }
    assert all(t["function"]["strict"] is True for t in tool_schemas())


def test_a_field_added_to_a_model_appears_in_its_schema() -> None:
    class Extended(ContactArgs):
        phone: str | None

    assert strict_schema(Extended)["required"] == ["visitor_name", "visitor_email", "message", "phone"]
    assert strict_schema(Extended)["properties"]["phone"] == {"type": ["string", "null"]}


def test_the_model_still_enforces_what_the_schema_leaves_out() -> None:
    with pytest.raises(ValueError, match="at most 4000 characters"):
        arguments_parse(ContactArgs, '{"visitor_name": null, "visitor_email": null, "message": "' + "x" * 4001 + '"}')
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        TOOLS["search_knowledge"].parse('{"query": "rates", "limit": 3}')


@pytest.mark.parametrize("email", ["Mira jansen", "anna", "anna@", "@example.com", "anna@example", "a b@example.com",
                                   "anna@@example.com", "anna@example.com and more"])
def test_a_contact_draft_needs_a_real_e_mail_address(email) -> None:
    """A small model fills visitor_email with a name: the draft goes back to it, nothing queued."""
    with pytest.raises(ValueError, match="visitor_email"):
        arguments_parse(ContactArgs, json.dumps({"visitor_name": "Anna", "visitor_email": email, "message": "Hi"}))


@pytest.mark.parametrize("email", ["anna@example.com", "anna.de.vries+twin@mail.example.co.uk", "x@ex-ample.nl"])
def test_ordinary_addresses_are_accepted(email) -> None:
    assert arguments_parse(ContactArgs, json.dumps({"visitor_name": None, "visitor_email": email,
                                                    "message": "Hi"})).visitor_email == email


def test_tool_statuses_are_the_strings_the_model_reads() -> None:
    assert [s.value for s in ToolStatus] == ["awaiting_owner_approval", "already_pending", "approved_and_passed_on",
                                            "rejected_by_owner", "expired"]


@pytest.mark.django_db(transaction=True)
async def test_a_question_about_the_owner_lowers_the_relevance_floor(kb, settings, monkeypatch) -> None:
    # the floor set just above every passage's similarity, the other relaxations off: only the
    # owner's name in the visitor's question (or a pronoun) lets one through, and the trace says so
    from asgiref.sync import sync_to_async

    from chat.agent.tools import SearchArgs, ToolContext
    from knowledge.search import knowledge_search
    from knowledge.search import relevance as gate
    from knowledge.search.relevance import ABOUT_OWNER_LEXICAL

    for constant in ("SAME_LANGUAGE_LEXICAL", "CROSS_LANGUAGE_LEXICAL", "ALL_WORDS_LEXICAL"):
        monkeypatch.setattr(gate, constant, 0.0)
    query = "Which dog breeds are shown at the festival?"
    best = max(hit.dense_score for hit in await sync_to_async(knowledge_search)(query))
    # just within the owner's relaxation, beyond the agreement one (0.015 below the floor)
    settings.TWIN_RELEVANCE_FLOOR = best + ABOUT_OWNER_LEXICAL - 0.001
    search = TOOLS["search_knowledge"].run
    for question, found in ((query, False), (f"{settings.TWIN_OWNER_NAME}: {query}", True),
                            ("Which dog breeds does she show?", True)):
        ctx = ToolContext(conversation_id="c", tool_call_id="t", question=question)
        payload = await search(SearchArgs(query=query), ctx)
        assert bool(payload["results"]) is found, question
        assert any(hit["relevant"] for hit in ctx.retrieved) is found
