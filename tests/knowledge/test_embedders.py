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
