"""Failure injection at the HTTP transport, for evals and tests (``TWIN_FAULT_*``)."""

from __future__ import annotations

import itertools

import httpx

CUT_AFTER_CHUNKS = 3


class FaultInjectingTransport(httpx.AsyncBaseTransport):
    """Drops every Nth request before it is sent, and/or cuts response streams mid-way.

    The request counter is shared by every client in the process, so "every second request"
    holds across turns, as the eval's failure-injection run expects.
    """

    _counter = itertools.count(1)

    def __init__(self, inner: httpx.AsyncBaseTransport, *, drop_every: int = 0, cut_stream: bool = False) -> None:
        self._inner = inner
        self._drop_every = drop_every
        self._cut_stream = cut_stream

    @classmethod
    def reset(cls) -> None:
        cls._counter = itertools.count(1)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        number = next(self._counter)
        if self._drop_every and number % self._drop_every == 0:
            raise httpx.ConnectError(f"fault injection: dropped request #{number}", request=request)
        response = await self._inner.handle_async_request(request)
        if self._cut_stream and response.status_code == 200:
            response.stream = _CutStream(response.stream, request)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CutStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, request: httpx.Request) -> None:
        self._inner = inner
        self._request = request

    async def __aiter__(self):
        count = 0
        async for chunk in self._inner:
            yield chunk
            count += 1
            if count >= CUT_AFTER_CHUNKS:
                raise httpx.RemoteProtocolError("fault injection: stream cut mid-way", request=self._request)

    async def aclose(self) -> None:
        await self._inner.aclose()
