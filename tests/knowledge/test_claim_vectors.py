"""knowledge.claims.vectors: an answer's sentences are embedded while it streams, each as soon as
it ends (before its citation arrives), so the claim check after the last token embeds nothing
that streamed; a vector being made is waited for, never made twice."""

from __future__ import annotations

import threading

import pytest

from knowledge import claims
from knowledge.claims import vectors
from knowledge.embedders import E5Embedder

TITLE = "Curriculum vitae Ilse Voskuil"
DOC = ("Since April 2021 Ilse Voskuil has run the data team at Kantara Logistics in Zwolle. "
       "The team rebuilt the route planner, which now plans 3,200 deliveries a day.")
ANSWER = (f"Ilse has led the data team of Kantara Logistics in Zwolle since April 2021. [source: {TITLE}] "
          f"Her team's rebuilt route planner now schedules 3,200 deliveries daily [source: {TITLE}].")


class Counted(E5Embedder):
    """The real model, counting the sentences it embeds and on which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[tuple[str, str]] = []

    def passages(self, texts: list[str]):
        self.embedded += [(threading.current_thread().name, t) for t in texts]
        return super().passages(texts)


@pytest.fixture(scope="module")
def e5():
    return Counted()


@pytest.fixture(autouse=True)
def cold():
    vectors.forget()
    yield
    vectors.forget()


def settle():
    for future in list(vectors._PENDING.values()):
        future.result(timeout=10)


def test_each_sentence_is_embedded_as_it_ends_and_the_check_after_the_stream_embeds_nothing(e5):
    prefetch = vectors.Prefetch(e5, claims.claim_texts)
    sentences = claims.claim_texts(ANSWER)
    first_end = ANSWER.index("2021.") + len("2021.")
    for at in range(0, first_end + 1, 3):  # up to the first sentence's end mark and a space: no citation yet
        prefetch.feed(ANSWER[at:min(at + 3, first_end + 1)])
    settle()
    assert [t for _, t in e5.embedded] == [sentences[0]]
    for at in range(first_end + 1, len(ANSWER), 3):
        prefetch.feed(ANSWER[at:at + 3])
    settle()
    # the second one when its citation began; each with one full stop, as the check reads it
    assert [t for _, t in e5.embedded] == [s.rstrip(" .") + "." for s in sentences]
    assert {thread for thread, _ in e5.embedded} == {"claim-vectors_0"}

    e5.embedded.clear()
    found = claims.check(ANSWER, {TITLE: claims.Source(TITLE, DOC)}, e5, "Ilse Voskuil")
    assert found == [] and e5.embedded == []


def test_without_a_stream_the_check_embeds_what_it_needs_itself(e5):
    e5.embedded.clear()
    dutch = f"Sinds april 2021 leidt Ilse het datateam van Kantara Logistics in Zwolle. [source: {TITLE}]"
    assert claims.check(dutch, {TITLE: claims.Source(TITLE, DOC)}, e5, "Ilse Voskuil") == []
    # the other language: its words cannot place it, the model does, on the checking thread
    claim = "Sinds april 2021 leidt Ilse het datateam van Kantara Logistics in Zwolle."
    assert (threading.current_thread().name, claim) in e5.embedded


def test_a_vector_being_made_is_waited_for_not_made_again(e5):
    gate = threading.Event()
    vectors._POOL.submit(gate.wait, 10)  # the background thread is busy: the next one queues
    prefetch = vectors.Prefetch(e5, claims.claim_texts)
    e5.embedded.clear()
    prefetch.feed("Ilse runs the data team at Kantara Logistics. ")
    [queued] = vectors._PENDING.values()
    # still queued when the check asks: taken back and made on the asking thread, once
    vector = vectors.vector(e5, "Ilse runs the data team at Kantara Logistics.")
    gate.set()
    assert queued.cancelled() and vector.shape == (e5.dimensions,)
    assert [t for _, t in e5.embedded] == ["Ilse runs the data team at Kantara Logistics."]
    # and one already queued or being made is made once, whoever makes it
    e5.embedded.clear()
    prefetch.feed("She plans routes in Zwolle every day. ")
    [running] = vectors._PENDING.values()
    vectors.vector(e5, "She plans routes in Zwolle every day.")
    assert running.done() and len(e5.embedded) == 1


def test_a_failing_read_never_breaks_the_stream(e5):
    def broken(text: str) -> list[str]:
        raise ValueError("unreadable")

    prefetch = vectors.Prefetch(e5, broken)
    prefetch.feed("One sentence. ")  # logged, not raised
    prefetch.feed("Another one. ")
    assert prefetch.failed and vectors._PENDING == {}


def test_the_words_a_claim_counts_with_are_warmed_on_the_stream_thread_after_its_vector(e5):
    warmed: list[tuple[str, str]] = []
    prefetch = vectors.Prefetch(e5, claims.claim_texts,
                                lambda claim: warmed.append((threading.current_thread().name, claim)))
    for at in range(0, len(ANSWER), 3):
        prefetch.feed(ANSWER[at:at + 3])
    settle()
    # each sentence as it streamed (the last one read before its full stop)
    assert [(thread, claim.rstrip(" .")) for thread, claim in warmed] == [
        ("claim-vectors_0", claim.rstrip(" .")) for claim in claims.claim_texts(ANSWER)]


def test_warming_a_claims_units_embeds_the_word_after_each_figure(e5):
    from knowledge import translation
    from knowledge.claims import figures

    figures.warm_units("The depot ships 4,100 parcels a day to 12 warehouses.")
    model = translation.word_model()[0]
    assert {(model.name, "parcels"), (model.name, "warehouses")} <= set(translation._words)
