"""Every sentence a visitor reads, in one place, keyed by purpose.

The English sentence is the gettext message id; the Dutch one lives in Django's catalogue
(``locale/nl/LC_MESSAGES/django.po``, compiled by ``make``). Python code calls ``text(key, lang)``,
templates ``{% say "key" %}`` (``chat/templatetags/twin.py``) and the chat page's script reads the
``ui.*`` and ``error.*`` sentences from a JSON block the page renders (``page_texts``): nothing a
visitor reads is written anywhere else. ``tests/chat/test_texts.py`` checks that every key has a
Dutch translation with the same placeholders.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

LANGUAGES = ("en", "nl")

TEXTS = {
    # refusals (no model was called)
    "refuse.injection": _("I can only answer questions about {owner}'s work, and I won't change how I work. "
                          "What would you like to know about {owner}?"),
    "refuse.card_number": _("Please don't share card numbers here: I've masked it, so it is not kept in this "
                            "conversation. Ask me about {owner}'s work instead."),
    "refuse.iban": _("Please don't share bank account numbers here: I've masked it, so it is not kept in this "
                     "conversation. Ask me about {owner}'s work instead."),
    "refuse.off_topic": _("I'm {owner}'s digital twin: I answer questions about {owner}'s work, projects and "
                          "availability, not other tasks. Ask {owner} directly for anything else."),
    "refuse.budget": _("I've reached today's limit for answering questions. Please come back tomorrow, "
                       "or ask me to pass a message to {owner}."),
    # the offline provider's framing
    "offline.found": _("Here is what {owner}'s knowledge base says:"),
    "offline.overview.project": _("These are {owner}'s projects in the knowledge base:"),
    "offline.overview.article": _("These are {owner}'s articles in the knowledge base:"),
    "offline.in_dutch": _("(in Dutch)"),
    "offline.in_english": _("(in English)"),
    "offline.decline": _("I can't find that in {owner}'s knowledge base, so I won't guess. "
                         "You can ask me to pass a message to {owner} instead."),
    # a name the knowledge base never writes ("Has she used MongoDB?"): said, so the visitor
    # sees which part of the question found nothing
    "offline.decline_name": _("I can't find anything about {name} in {owner}'s knowledge base, so I won't "
                              "guess. You can ask me to pass a message to {owner} instead."),
    # a sentence whose cited document does not say it (knowledge.claims; TWIN_UNSUPPORTED=mark)
    "claims.not_in_source": _("(not in the cited source)"),
    "offline.tool_error": _("Something went wrong while looking that up, so I won't guess. Please try again."),
    "offline.contact_ask": _("I can pass a message on to {owner}; {owner} reviews every message before it is "
                             "sent. Please give me your name, your e-mail address so {owner} can reply, and "
                             "your message."),
    # the contact request and its outcomes
    "approval.pending": _("I've drafted your message for {owner}. {owner} reviews every message before it is "
                          "sent; nothing has been sent yet. You can keep asking questions meanwhile."),
    "approval.already_pending": _("You already have a message waiting for {owner}'s approval, so I haven't "
                                  "drafted another one. {owner} will see it soon."),
    "approval.approved": _("Good news: {owner} approved your message and it has been passed on."),
    "approval.rejected": _("{owner} decided not to take your message forward."),
    "approval.rejected_reason": _("{owner} decided not to take your message forward: {reason}"),
    "approval.expired": _("Your message to {owner} was not reviewed in time and has expired; nothing was sent. "
                          "You can ask me to draft it again."),
    "approval.invalid": _("I couldn't draft that message: some details were missing or invalid. "
                          "Could you tell me your message again, with your name and e-mail address?"),
    # the contact-request card on the chat page
    "card.pending": _("Your message is waiting for {owner}'s approval. Nothing has been sent yet."),
    "card.approved": _("{owner} approved your message; it has been passed on."),
    "card.rejected": _("{owner} decided not to take your message forward."),
    "card.expired": _("Your message expired before {owner} reviewed it; nothing was sent."),
    # after card.pending when the owner sets TWIN_OWNER_REPLY_HOURS; {when} is reply_window's
    "approval.decision_when": _("{owner} usually decides within about {when}."),
    # errors, by the code of the `error` event (docs/PROTOCOL.md)
    "error.aborted": _("The answer was interrupted; please ask again."),
    "error.failed": _("Something went wrong; nothing was answered. Please try again."),
    "error.provider_error": _("The language model could not be reached, so nothing was answered. "
                              "Please try again in a moment."),
    "error.unavailable": _("The service is briefly unavailable, so nothing was answered. "
                           "Please try again in a minute."),
    "error.internal": _("Something went wrong; nothing was answered. Please try again."),
    "error.bad_json": _("That message could not be read. Please reload the page."),
    "error.bad_request": _("That message could not be read. Please reload the page."),
    "error.frame_too_large": _("That message is too large."),
    "error.too_deep": _("That message could not be read. Please reload the page."),
    "error.empty_question": _("Please type a question first."),
    "error.too_long": _("Questions are limited to {max} characters; please shorten yours."),
    "error.control_characters": _("Your question contains characters I can't read; please retype it."),
    "error.bad_unicode": _("Your question contains characters I can't read; please retype it."),
    "error.busy": _("Wait for the current answer to finish."),
    "error.overloaded": _("Many visitors are asking right now. Please try again in {seconds} seconds."),
    "error.deadline": _("That answer took too long and was stopped. Please ask again, perhaps more simply."),
    "error.turn_limit": _("This conversation has reached its limit of {max} questions. "
                          "Start a new conversation to go on."),
    "error.rate_limited": _("You're asking faster than I can answer. Please wait {seconds} seconds and try again."),
    "error.too_many_turns": _("You have several questions running already. Please wait for their answers first."),
    "error.too_many_sockets": _("Too many chats are open from your address. Close one and reload this page."),
    "error.unknown_conversation": _("This conversation no longer exists. Reload the page to start a new one."),
    "error.forbidden": _("This conversation belongs to another browser session. Reload the page."),
    "error.too_many_requests": _("Too many requests from your address; try again in {seconds} seconds."),
    # starter questions on an empty chat page, one per kind of document ({name}: its title)
    "starter.cv": _("Where has {owner} worked?"),
    "starter.project": _("What is {name}?"),
    "starter.availability": _("When could {owner} start, and at what rate?"),
    "starter.article": _("What did {owner} write about {name}?"),
    # the chat page
    "ui.title": _("Ask {owner}'s digital twin"),
    "ui.offline": _("offline mode"),
    "ui.offline_help": _("No language model is configured: answers are quoted from {owner}'s documents "
                         "without a model."),
    "ui.new": _("New conversation"),
    "ui.intro": _("This is an AI twin of {owner}, not {owner} in person. It answers questions about {owner}'s "
                  "work, projects, articles and availability, in English or Dutch, only from {owner}'s own "
                  "documents, with a source for every claim, and says so when it does not know. It can draft a "
                  "message to {owner}; {owner} approves every message before it is sent."),
    "ui.starters": _("Try one of these:"),
    "ui.question": _("Your question"),
    "ui.placeholder": _("Ask about {owner}'s work…"),
    "ui.send": _("Ask"),
    "ui.language": _("Language"),
    "ui.you": _("You"),
    "ui.twin": _("Twin"),
    "ui.connecting": _("Connecting…"),
    "ui.reconnecting": _("The connection was lost; reconnecting…"),
    "ui.incomplete": _("This answer is incomplete: the connection was lost before it finished."),
    "ui.recovering": _("Reconnected; fetching the rest of the answer…"),
    "ui.tool.search_knowledge": _("Searching the knowledge base…"),
    "ui.tool.check_availability": _("Checking availability…"),
    "ui.tool.draft_contact_message": _("Drafting your message…"),
    "ui.tool.other": _("Looking things up…"),
    # a short label on answers that are not a plain answer, one per kind of stop
    "ui.label.refused": _("Not answered"),
    "ui.label.budget": _("Daily limit reached"),
    "ui.label.declined": _("No source found"),
    "ui.label.aborted": _("Interrupted: this answer is incomplete"),
    "ui.label.error": _("Something went wrong"),
    "ui.label.rate_limited": _("Slow down"),
    "ui.sources": _("Sources"),
    "ui.source_label": _("source {n}: {title}"),
    "ui.helpful": _("Helpful"),
    "ui.not_helpful": _("Not helpful"),
    "ui.comment": _("Anything to add? (optional)"),
    "ui.comment_send": _("Send feedback"),
    "ui.thanks": _("Thanks for your feedback."),
    "ui.why": _("why"),
    "ui.why_title": _("Why this answer"),
    "ui.close": _("Close"),
    "ui.card_title": _("Your message to {owner}"),
    "ui.back": _("Back to the chat"),
    # the embeddable twin's launcher (embed.js) on the owner's other sites
    "ui.embed_label": _("Ask {owner}'s twin"),
    "ui.embed_refused": _("This website is not allowed to show {owner}'s twin."),
    "ui.updated": _("Updated"),
}

# What the chat page's script needs, rendered into the page as JSON in the page's language.
PAGE_KEYS = tuple(k for k in TEXTS if k.startswith(("ui.", "error.", "card.")))


def language(lang: str | None) -> str:
    """One of LANGUAGES: ``lang`` when supported (``nl-BE`` is ``nl``), else the active language."""
    lang = (lang or translation.get_language() or "en").lower().split("-")[0]
    return lang if lang in LANGUAGES else "en"


def text(key: str, lang: str | None = None, **values: object) -> str:
    """The sentence for ``key`` in ``lang`` (the active language when not given)."""
    with translation.override(language(lang)):
        sentence = str(TEXTS[key])
    return sentence.format(owner=values.pop("owner", settings.TWIN_OWNER_NAME), **values)


def reply_window(lang: str | None = None) -> str:
    """``TWIN_OWNER_REPLY_HOURS`` as a visitor reads it: "24 hours", "3 days" ("" when unset)."""
    hours = settings.TWIN_OWNER_REPLY_HOURS
    if not hours:
        return ""
    with translation.override(language(lang)):
        if hours < 48:
            return ngettext("%(n)d hour", "%(n)d hours", hours) % {"n": hours}
        days = math.ceil(hours / 24)  # 60 hours is 3 days, not 2
        return ngettext("%(n)d day", "%(n)d days", days) % {"n": days}


def page_texts(lang: str | None = None) -> dict[str, str]:
    """The sentences the chat page's script shows, with the owner filled in (other placeholders
    such as ``{seconds}`` stay for the script). A waiting request's card also says roughly when
    the owner decides, when the owner said so (``TWIN_OWNER_REPLY_HOURS``)."""
    with translation.override(language(lang)):
        texts = {key: str(TEXTS[key]).replace("{owner}", settings.TWIN_OWNER_NAME) for key in PAGE_KEYS}
    if settings.TWIN_OWNER_REPLY_HOURS:
        texts["card.pending"] += " " + text("approval.decision_when", lang, when=reply_window(lang))
    return texts


def language_from_scope(scope: dict) -> str:
    """The page language of a WebSocket's browser, as LocaleMiddleware finds it for a page: the
    language switch's cookie, else Accept-Language, else English."""
    headers = dict(scope.get("headers") or [])
    request = SimpleNamespace(
        COOKIES=scope.get("cookies") or {},
        META={"HTTP_ACCEPT_LANGUAGE": headers.get(b"accept-language", b"").decode("latin-1")},
    )
    return language(translation.get_language_from_request(request))
