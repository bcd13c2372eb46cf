"""Deadlines on every Hub call: a Hub endpoint that accepts and never answers ends the command in bounded time.

``huggingface_hub`` passes ``timeout=None`` (no deadline at all) on most API calls and retries timeouts five
times; ``push`` and ``verify ORG/NAME`` against an endpoint that accepted and then went silent waited 400 s and
more, silently. :func:`hub_deadlines` installs, for this process, a client whose transport gives every request
a connect, read, write and pool deadline (``--hub-timeout``, else ``SWE_TASKFLOW_HUB_TIMEOUT``, else
:data:`DEFAULT_HUB_TIMEOUT_S`), sets ``HF_HUB_ETAG_TIMEOUT`` / ``HF_HUB_DOWNLOAD_TIMEOUT`` to it when the user
did not (in this process only), and turns a missed deadline into one :class:`HubTimeoutError` that is not retried: one line naming
the endpoint (scheme, host and port only: never a path, query or credential) and the setting to raise.
Transfers through ``hf_xet`` (its own network stack, which no deadline here reaches) are turned off, so files
go over the same client as LFS, unless the user sets ``HF_HUB_DISABLE_XET`` themselves. A client factory
someone else installed (a test's in-memory Hub) is left as it is.
"""

from __future__ import annotations

import math
import os
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError, TaskflowError

#: Seconds a Hub request may wait to connect, or between two bytes read or written, by default.
DEFAULT_HUB_TIMEOUT_S = 60.0
ENV = "SWE_TASKFLOW_HUB_TIMEOUT"
HF_ENV = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")
XET_ENV = "HF_HUB_DISABLE_XET"
_MAX_S = 86_400.0


class HubTimeoutError(TaskflowError):
    """A Hub request that missed its deadline (connect, read, write or pool)."""


def endpoint_of(url: Any) -> str:
    """``scheme://host[:port]`` of a URL: what a message may show of it (no user, password, path or query)."""
    parts = urlsplit(str(url))
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme or 'https'}://{host}{port}"


def hub_timeout(seconds: float | None = None) -> float:
    """The deadline in seconds: ``seconds`` (a flag), else ``SWE_TASKFLOW_HUB_TIMEOUT``, else the default."""
    where, value = ("--hub-timeout", seconds) if seconds is not None else (ENV, os.environ.get(ENV))
    if value is None or value == "":
        return DEFAULT_HUB_TIMEOUT_S
    try:
        secs = float(value)
    except (TypeError, ValueError):
        secs = math.nan
    if not (0 < secs <= _MAX_S):
        raise ConfigError("a Hub deadline is a number of seconds", field=where, expected=f"0 < seconds <= {_MAX_S:g}",
                          actual=value)
    return secs


def timeout_message(url: Any, secs: float, kind: str) -> str:
    own = [n for n in HF_ENV if os.environ.get(n)]   # the user's settings win for file downloads: name them
    return (f"the Hub endpoint {endpoint_of(url)} did not answer within {secs:g} s ({kind}); raise the deadline "
            f"with --hub-timeout SECONDS or {ENV}" + (f" ({' and '.join(own)}, set here, rule file downloads)"
                                                      if own else ""))


def _deadline_transport(inner: Any, secs: float) -> Any:
    import httpx2

    class DeadlineTransport(httpx2.BaseTransport):
        """Fills every missing deadline of a request; a missed one becomes a HubTimeoutError (never retried)."""

        def handle_request(self, request):
            given = dict(request.extensions.get("timeout") or {})
            request.extensions["timeout"] = {k: (secs if given.get(k) is None else given[k])
                                             for k in ("connect", "read", "write", "pool")}
            try:
                return inner.handle_request(request)
            except httpx2.TimeoutException as exc:
                kind = type(exc).__name__.replace("Timeout", "").lower() or "request"
                used = request.extensions["timeout"].get(kind, secs)
                raise HubTimeoutError(timeout_message(request.url, used if used is not None else secs,
                                                      kind)) from None

        def close(self) -> None:
            inner.close()

    return DeadlineTransport()


def hub_deadlines(seconds: float | None = None) -> float:
    """Give every Hub request of this process a deadline (see the module); returns it in seconds."""
    secs = hub_timeout(seconds)
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    for name in HF_ENV:   # read by huggingface_hub at import; the user's own setting wins
        if not os.environ.get(name):
            setattr(constants, name, max(1, math.ceil(secs)))
    if os.environ.get(XET_ENV) is None:   # hf_xet's own network stack is outside this deadline: LFS over the client
        constants.HF_HUB_DISABLE_XET = True
    current = _http._GLOBAL_CLIENT_FACTORY
    if current is _http.default_client_factory or getattr(current, "_swe_taskflow_deadline", False):
        def factory() -> Any:
            return httpx2.Client(event_hooks={"request": [_http.hf_request_event_hook]}, follow_redirects=True,
                                 timeout=secs, transport=_deadline_transport(httpx2.HTTPTransport(), secs))

        factory._swe_taskflow_deadline = True   # type: ignore[attr-defined]
        _http.set_client_factory(factory)
    return secs


__all__ = ["hub_deadlines", "hub_timeout", "HubTimeoutError", "endpoint_of", "DEFAULT_HUB_TIMEOUT_S", "ENV"]
