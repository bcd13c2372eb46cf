"""A model endpoint that cannot be reached or refuses the credentials ends the turn at once, in one line.

mini-swe-agent retries every model error but a few ten times with backoff up to a minute: a wrong
``OPENAI_BASE_URL`` cost ~8.5 minutes of "Retrying ... Connection error" lines per trial before anything
said what was wrong (issue 36). A refused connection, a refused key or an unknown model/path is no
transient fault: :func:`is_endpoint_error` recognises them (the agent then raises :class:`ModelEndpointError`,
which the model does not retry), and :func:`endpoint_line` says which endpoint failed and how, with no
secret in it (Harbor writes the line into ``result.json``).
"""

from __future__ import annotations

import os
import re
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit


class ModelEndpointError(RuntimeError):
    """The model endpoint refused the connection, the credentials or the model: the turn failed at once."""


#: LiteLLM's exception classes that no retry can fix.
_FATAL = ("AuthenticationError", "PermissionDeniedError", "NotFoundError")
#: A refused or unresolvable connection anywhere in the exception's chain (LiteLLM reports a refused
#: connection to an OpenAI-compatible endpoint as ``InternalServerError: ... Connection error.``).
_CONNECT = ("ConnectError", "ConnectionRefusedError", "gaierror", "APIConnectionError")
#: Timeouts are slow endpoints, not wrong ones: they stay retried.
_TIMEOUT = ("APITimeoutError", "Timeout", "ConnectTimeout", "TimeoutError", "ReadTimeout")
#: Where LiteLLM finds a provider's base URL when the model's kwargs name none.
_BASE_ENV = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
             "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"), "azure": ("AZURE_API_BASE",), "ollama": ("OLLAMA_API_BASE",)}
_KEYISH = re.compile(r"\b(sk|pk|key|tok)[-_][A-Za-z0-9_*.-]{6,}", re.I)


def _chain(exc: BaseException | None) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and len(out) < 16 and all(exc is not e for e in out):
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def is_endpoint_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the endpoint is wrong: a refused/unresolvable connection, or LiteLLM's
    authentication, permission or not-found error. A timeout or a server's 5xx answer is not."""
    chain = _chain(exc)
    names = [type(e).__name__ for e in chain]
    if any(n in _TIMEOUT for n in names):
        return False
    if type(exc).__module__.startswith("litellm") and names[0] in _FATAL:
        return True
    return any(n in _CONNECT for n in names)


def _clean_url(url: str) -> str:
    """The URL without user info, query or fragment (they can hold credentials)."""
    try:
        p = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    host = p.hostname or ""
    netloc = f"{host}:{p.port}" if p.port else host
    return urlunsplit((p.scheme, netloc, p.path, "", ""))


def describe_endpoint(model_name: str, model_kwargs: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """Where LiteLLM sends ``model_name``'s requests, as a line can name it: the model and its base URL."""
    env = os.environ if env is None else env
    base = model_kwargs.get("api_base") or model_kwargs.get("base_url")
    where = "model_kwargs"
    provider = model_name.split("/", 1)[0] if "/" in model_name else "openai"
    if not base:
        name = next((n for n in _BASE_ENV.get(provider, ()) if env.get(n)), None)
        base, where = (env[name], name) if name else ("", "")
    shown = f"{_clean_url(str(base))} (from {where})" if base else f"{provider}'s default endpoint"
    return f"model {model_name!r} at {shown}"


def endpoint_line(endpoint: str, exc: BaseException, secrets: tuple[str, ...] = ()) -> str:
    """One line: the endpoint, what failed (a connection error's root cause) and that the turn was not
    retried; the model's key, ``*_API_KEY``/``*_TOKEN`` values and key-like words are removed."""
    chain = _chain(exc)
    root = chain[-1] if any(type(e).__name__ in _CONNECT for e in chain) else exc
    first = next((ln.strip() for ln in str(root).splitlines() if ln.strip()), "")
    for s in (*secrets, *(v for k, v in os.environ.items() if k.endswith(("_API_KEY", "_TOKEN")) and len(v) >= 6)):
        if s:
            first = first.replace(s, "<redacted>")
    first = _KEYISH.sub("<redacted>", first)
    if len(first) > 240:
        first = first[:237] + "..."
    what = "connection failed" if root is not exc else "refused"
    return (f"{endpoint}: {what}: {type(root).__name__}: {first or 'no message'} "
            "(the turn failed at once, not retried)")


__all__ = ["ModelEndpointError", "is_endpoint_error", "describe_endpoint", "endpoint_line"]
