"""The vectors of an answer's claims, made while the answer still streams.

One embedding costs more than the rest of the claim check (15 to 40 ms a sentence on a 2-core
machine, against about 1 ms of word work), and a model writes a sentence in far longer than that.
``Prefetch`` reads the streamed text as it arrives; once a sentence has ended (at the latest when
its citation begins), a background thread embeds it, so ``knowledge.claims.check`` finds its
vector made when the answer ends. The CPU spent per answer is the same or more (a claim its
words would have placed is embedded too); what the visitor waits for after the last token is
less. Measured in BENCHMARKS.md ("The claim check").

Per process: the vectors live in this process's memory (``MOST`` of them, least recently used
dropped), made by one thread, with at most ``BACKLOG`` sentences waiting for it (beyond that a
sentence is left to the check). A turn streams and checks in one process, so that is where they
are needed; another process embeds again.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from knowledge.embedders import Embedder

log = logging.getLogger(__name__)

MOST = 1024
BACKLOG = 16  # sentences waiting for the thread at most (all streams of the process together)
_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_PENDING: dict[tuple[str, str], Future] = {}
_LOCK = threading.Lock()
_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="claim-vectors")
# a sentence has ended (its end mark and a space after it), or a citation begins
_ENDED = re.compile(r"[.!?][\s)*_]|\[")
_PLACEHOLDER = " [source: -]"


def vector(embedder: Embedder, text: str) -> np.ndarray:
    """The claim's vector: made while the answer streamed, being made (waited for), or made now."""
    key = (embedder.name, _normal(text))
    with _LOCK:
        found = _VECTORS.get(key)
        if found is not None:
            _VECTORS.move_to_end(key)
            return found
        pending = _PENDING.get(key)
    if pending is not None:
        if not pending.cancel():  # started: its vector is on its way
            try:
                return pending.result(timeout=5)
            except Exception:
                log.debug("a claim's vector made ahead failed; made now", exc_info=True)
        with _LOCK:  # still queued: taken back, made here
            _PENDING.pop(key, None)
    made = embedder.passages([key[1]])[0]
    _keep(key, made)
    return made


def _normal(text: str) -> str:
    """The text embedded for a claim, the same whichever way it was read: one full stop at its end
    and no space before a mark ("… daily [source: CV]." reads "… daily ." once its citation is
    gone, "… daily" while it streams; both are embedded as "… daily.")."""
    return re.sub(r"\s+(?=[.,;:!?])", "", text).rstrip(" .!?") + "."


def forget() -> None:
    """Drop every kept vector (a benchmark's cold start)."""
    with _LOCK:
        _VECTORS.clear()


def _keep(key: tuple[str, str], made: np.ndarray) -> None:
    with _LOCK:
        _VECTORS[key] = made
        _VECTORS.move_to_end(key)
        while len(_VECTORS) > MOST:
            _VECTORS.popitem(last=False)


def _embed(embedder: Embedder, key: tuple[str, str], also: Callable[[str], None] | None = None,
           claim: str = "") -> np.ndarray:
    try:
        made = embedder.passages([key[1]])[0]
        _keep(key, made)
        if also is not None:
            try:
                also(claim)
            except Exception:
                log.debug("warming a claim's words ahead failed; the check embeds them", exc_info=True)
        return made
    finally:
        with _LOCK:
            _PENDING.pop(key, None)


class Prefetch:
    """Feeds on an answer's text as it streams (``feed``) and has each sentence embedded on the
    background thread once it has ended: at the latest when its citation begins (the model still
    writes "[source: …]" while the embedding is made); ``claims`` reads an answer's cited
    sentences as the check will (``knowledge.claims.claim_texts``). A sentence that ends up cited
    by nothing was embedded for nothing: the price of not waiting. Each feed reads only the text
    after the last citation it read."""

    def __init__(self, embedder: Embedder, claims: Callable[[str], list[str]],
                 also: Callable[[str], None] | None = None) -> None:
        self.embedder, self.claims, self.also = embedder, claims, also  # also: more work per claim, after its vector
        self.text = ""
        self.read_to = 0  # where the text not yet read whole begins: after a citation
        self.sent: set[str] = set()
        self.failed = False

    def feed(self, chunk: str) -> None:
        """Never raises: the stream goes on without a head start if reading it fails."""
        if self.failed:
            return
        try:
            self._feed(chunk)
        except Exception:
            self.failed = True
            log.exception("embedding an answer's sentences while it streams failed; the check embeds them")

    def _feed(self, chunk: str) -> None:
        before = len(self.text)
        self.text += chunk
        if not _ENDED.search(self.text, max(0, before - 1)):
            return  # no sentence ended and no citation began
        # the text after the last citation read before: the sentences up to it were read then
        text = self.text[self.read_to:]
        if text.rfind("[") > text.rfind("]"):
            text = text[:text.rfind("[")]  # a citation still being written
        self.read_to += text.rfind("]") + 1
        # read as if the last sentence were cited already: its text is what the check will embed
        for claim in self.claims(text.rstrip() + _PLACEHOLDER):
            if claim not in self.sent:
                self.sent.add(claim)
                key = (self.embedder.name, _normal(claim))
                with _LOCK:
                    if key in _VECTORS or key in _PENDING or len(_PENDING) >= BACKLOG:
                        continue  # made, on its way, or the thread is behind: the check embeds it
                    _PENDING[key] = _POOL.submit(_embed, self.embedder, key, self.also, claim)
