"""Every sentence the twin says outside the model, in one place, keyed by purpose, in English and
Dutch: refusals, the offline provider's framing, the approval outcomes, turn errors."""

from __future__ import annotations

from django.conf import settings

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        # refusals (no model was called)
        "refuse.injection": "I can only answer questions about {owner}'s work, and I won't change how I work. "
                            "What would you like to know about {owner}?",
        "refuse.card_number": "Please don't share card numbers here: I've masked it, so it is not kept in this "
                              "conversation. Ask me about {owner}'s work instead.",
        "refuse.iban": "Please don't share bank account numbers here: I've masked it, so it is not kept in this "
                       "conversation. Ask me about {owner}'s work instead.",
        "refuse.off_topic": "I'm {owner}'s digital twin: I answer questions about {owner}'s work, projects and "
                            "availability, not other tasks. Ask {owner} directly for anything else.",
        "refuse.budget": "I've reached today's limit for answering questions. Please come back tomorrow, "
                         "or ask me to pass a message to {owner}.",
        # the offline provider's framing
        "offline.found": "Here is what {owner}'s knowledge base says:",
        "offline.decline": "I can't find that in {owner}'s knowledge base, so I won't guess. "
                           "You can ask me to pass a message to {owner} instead.",
        "offline.tool_error": "Something went wrong while looking that up, so I won't guess. Please try again.",
        # the contact request and its outcomes
        "approval.pending": "I've drafted your message for {owner}. {owner} reviews every message before it is "
                            "sent; nothing has been sent yet. You can keep asking questions meanwhile.",
        "approval.already_pending": "You already have a message waiting for {owner}'s approval, so I haven't "
                                    "drafted another one. {owner} will see it soon.",
        "approval.approved": "Good news: {owner} approved your message and it has been passed on.",
        "approval.rejected": "{owner} decided not to take your message forward.",
        "approval.rejected_reason": "{owner} decided not to take your message forward: {reason}",
        "approval.expired": "Your message to {owner} was not reviewed in time and has expired; nothing was sent. "
                            "You can ask me to draft it again.",
        "approval.invalid": "I couldn't draft that message: some details were missing or invalid. "
                            "Could you tell me your message again, with your name and e-mail address?",
        # the contact-request card on the chat page
        "card.pending": "Your message is waiting for {owner}'s approval. Nothing has been sent yet.",
        "card.approved": "{owner} approved your message; it has been passed on.",
        "card.rejected": "{owner} decided not to take your message forward.",
        "card.expired": "Your message expired before {owner} reviewed it; nothing was sent.",
        # turn errors
        "error.aborted": "The answer was interrupted; please ask again.",
        "error.failed": "Something went wrong; nothing was answered. Please try again.",
    },
    "nl": {
        "refuse.injection": "Ik beantwoord alleen vragen over het werk van {owner}, en ik verander mijn werkwijze "
                            "niet. Wat wil je weten over {owner}?",
        "refuse.card_number": "Deel hier alsjeblieft geen kaartnummers: ik heb het gemaskeerd, dus het wordt niet "
                              "bewaard in dit gesprek. Vraag me liever iets over het werk van {owner}.",
        "refuse.iban": "Deel hier alsjeblieft geen rekeningnummers: ik heb het gemaskeerd, dus het wordt niet "
                       "bewaard in dit gesprek. Vraag me liever iets over het werk van {owner}.",
        "refuse.off_topic": "Ik ben de digitale tweeling van {owner}: ik beantwoord vragen over het werk, de "
                            "projecten en de beschikbaarheid van {owner}, geen andere taken.",
        "refuse.budget": "Het dagbudget voor vragen is op. Kom morgen terug, of vraag me een bericht aan {owner} "
                         "door te geven.",
        "offline.found": "Dit staat er in de kennisbank van {owner}:",
        "offline.decline": "Dat kan ik niet vinden in de kennisbank van {owner}, dus ik ga niet gokken. "
                           "Je kunt mij wel vragen een bericht aan {owner} door te geven.",
        "offline.tool_error": "Er ging iets mis bij het opzoeken, dus ik ga niet gokken. Probeer het nog eens.",
        "approval.pending": "Ik heb je bericht voor {owner} opgesteld. {owner} bekijkt elk bericht voordat het "
                            "wordt verstuurd; er is nog niets verstuurd. Je kunt intussen gewoon verder vragen.",
        "approval.already_pending": "Er wacht al een bericht van jou op goedkeuring van {owner}, dus ik heb geen "
                                    "tweede opgesteld. {owner} ziet het binnenkort.",
        "approval.approved": "Goed nieuws: {owner} heeft je bericht goedgekeurd en het is doorgegeven.",
        "approval.rejected": "{owner} heeft besloten je bericht niet door te zetten.",
        "approval.rejected_reason": "{owner} heeft besloten je bericht niet door te zetten: {reason}",
        "approval.expired": "Je bericht aan {owner} is niet op tijd bekeken en is verlopen; er is niets verstuurd. "
                            "Je kunt me vragen het opnieuw op te stellen.",
        "approval.invalid": "Ik kon dat bericht niet opstellen: er ontbrak iets of iets klopte niet. Wil je je "
                            "bericht nog eens geven, met je naam en e-mailadres?",
        "card.pending": "Je bericht wacht op goedkeuring van {owner}. Er is nog niets verstuurd.",
        "card.approved": "{owner} heeft je bericht goedgekeurd; het is doorgegeven.",
        "card.rejected": "{owner} heeft besloten je bericht niet door te zetten.",
        "card.expired": "Je bericht is verlopen voordat {owner} het bekeek; er is niets verstuurd.",
        "error.aborted": "Het antwoord werd onderbroken; stel je vraag nog eens.",
        "error.failed": "Er ging iets mis; er is niets beantwoord. Probeer het nog eens.",
    },
}


def text(key: str, lang: str = "en", **values: str) -> str:
    """The sentence for ``key`` in ``lang`` (English when the language is unknown)."""
    table = TEXTS.get(lang, TEXTS["en"])
    return table[key].format(owner=values.pop("owner", settings.TWIN_OWNER_NAME), **values)
