from __future__ import annotations

import json

import pytest

from chat.providers.base import ChatRequest
from chat.providers.offline import OfflineProvider


async def complete(messages, tool_choice="auto"):
    tokens: list[str] = []
    result = await OfflineProvider(owner="Mira").complete(
        ChatRequest(messages=messages, tool_choice=tool_choice), tokens.append)
    return result, "".join(tokens)


@pytest.mark.parametrize(
    ("question", "tool", "arguments"),
    [
        ("Is she available for freelance work?", "check_availability", {"language": "en"}),
        ("Wat is haar dagtarief?", "check_availability", {"language": "nl"}),
        ("I'd like to get in touch. My name is Tom Baker, tom@example.com", "draft_contact_message",
         {"visitor_name": "Tom Baker", "visitor_email": "tom@example.com",
          "message": "I'd like to get in touch. My name is Tom Baker, tom@example.com"}),
        ("Kun je een bericht doorgeven aan Mira?", "draft_contact_message",
         {"visitor_name": None, "visitor_email": None, "message": "Kun je een bericht doorgeven aan Mira?"}),
        ("Which projects used Kafka?", "search_knowledge", {"query": "Which projects used Kafka?"}),
    ],
)
async def test_picks_the_tool_a_careful_model_would(question, tool, arguments):
    result, shown = await complete([{"role": "user", "content": question}])
    assert shown == "" and result.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == [(tool, arguments)]


def turn_with_result(question: str, payload: dict) -> list[dict]:
    call = {"id": "c1", "type": "function", "function": {"name": "search_knowledge", "arguments": "{}"}}
    return [{"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(payload)}]


async def test_quotes_results_with_citations_in_the_visitors_language():
    payload = {"results": [
        {"title": "Project: Railwise", "heading": "Results", "url": "/r/",
         "text": "Booking confirmation went from one day to ten seconds. Utilisation rose to 84%."},
        {"title": "About", "heading": "Outside work", "url": "/a/", "text": "She coaches at CoderDojo."},
    ]}
    result, shown = await complete(turn_with_result("How fast were bookings confirmed?", payload))
    assert shown == result.text and result.finish_reason == "stop"
    assert result.text.startswith("Here is what Mira's knowledge base says:")
    assert "[source: Project: Railwise]" in result.text
    assert "CoderDojo" not in result.text  # shares no word with the question
    dutch, _ = await complete(turn_with_result("Hoe snel werden boekingen bevestigd?", payload))
    assert dutch.text.startswith("Dit staat er in de kennisbank van Mira:")


async def test_declines_without_relevant_results_and_when_tools_are_off():
    result, _ = await complete(turn_with_result("What is her shoe size?", {"results": [], "note": "Nothing"}))
    assert "can't find that" in result.text and "[source:" not in result.text
    result, _ = await complete([{"role": "user", "content": "Hoe gaat het met je?"}], tool_choice="none")
    assert "niet vinden" in result.text and not result.tool_calls
