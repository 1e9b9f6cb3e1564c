"""The SDK clients an adapter sends with: the ones the caller gave, or ones built on first use.

A caller who passes a client keeps control of it (credentials, base URL, retries, timeouts); the
adapter then builds none, so a sync client passed alone never gets a silently different async
twin. Clients built here come from `client_kwargs` and the SDK's environment variables. An
async client's connection pool belongs to the event loop that opened it, so built async clients
are kept per loop and dropped with the loop; whoever ends a loop can close its client first.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from promptkit.errors import ArgumentValueError

ClientFactory = Callable[..., Any]
"""`factory(client_kwargs, sync=bool)`: a new sync or async SDK client."""


class ClientPair:
    """The sync and async clients of one adapter."""

    def __init__(
        self,
        owner: str,
        client: Any,
        async_client: Any,
        client_kwargs: Mapping[str, Any] | None,
        factory: ClientFactory,
    ) -> None:
        if client_kwargs and (client is not None or async_client is not None):
            raise ArgumentValueError(
                f"{owner}: client_kwargs configure clients the adapter builds; it builds none"
                " when client or async_client is given, so pass one or the other"
            )
        self._owner = owner
        self._client = client
        self._async_client = async_client
        self._builds = client is None and async_client is None
        self._kwargs = dict(client_kwargs or {})
        self._factory = factory
        self._lock = threading.Lock()
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def sync_client(self) -> Any:
        """The sync client, built on first use when the adapter builds its own."""
        with self._lock:
            if self._client is None:
                if not self._builds:
                    raise ArgumentValueError(
                        f"{self._owner}.evaluate needs a sync client: it was given only"
                        " async_client; pass client=... as well, or use aevaluate"
                    )
                self._client = self._factory(self._kwargs, sync=True)
            return self._client

    def async_client(self) -> Any:
        """The async client, built for the running event loop when the adapter builds its own."""
        if self._async_client is not None:
            return self._async_client
        if not self._builds:
            raise ArgumentValueError(
                f"{self._owner}.aevaluate needs an async client: it was given only client;"
                " pass async_client=... as well, or use evaluate"
            )
        loop = asyncio.get_running_loop()
        with self._lock:
            built = self._per_loop.get(loop)
            if built is None:
                built = self._factory(self._kwargs, sync=False)
                self._per_loop[loop] = built
            return built

    def base_url(self, url_variable: str) -> str | None:
        """Where requests go: the given client's base URL, else the one clients are built with
        (`client_kwargs`, else the environment variable `url_variable`); None for the SDK's
        default. Builds nothing."""
        given = self._client if self._client is not None else self._async_client
        if given is not None:
            url = getattr(given, "base_url", None)
            return str(url) if url is not None else None
        configured = self._kwargs.get("base_url") or os.environ.get(url_variable)
        return str(configured) if configured else None

    async def aclose_loop_client(self) -> None:
        """Close the async client built for the running event loop, if one was (a client the
        caller gave stays open: it is theirs)."""
        with self._lock:
            built = self._per_loop.pop(asyncio.get_running_loop(), None)
        if built is not None:
            await built.close()
