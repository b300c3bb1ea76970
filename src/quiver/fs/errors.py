"""Storage errors, named, and the bounded retries of transient faults.

Every error says which object (its URL, without credentials) and, where it applies, the
byte range: ``expected bytes 100..200 of s3://b/k.arrow, found the connection dropped``.
Missing objects and denied access are raised at once; a dropped connection, a 5xx
answer and throttling are retried with exponential backoff a bounded number of times,
then raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .. import errors as E
from .url import redact, scrub

_T = TypeVar("_T")

#: attempts of one request (the first and the retries) before a transient fault is raised
ATTEMPTS = 5
#: the first backoff in seconds; it doubles after every failed attempt
BACKOFF = 0.05


class StorageError(E.ArrowError, OSError):
    """A request to object storage (or another fsspec filesystem) failed; ``url`` and
    ``byte_range`` (``(start, end)`` or None) say which."""

    def __init__(self, message: str, *, url: str, byte_range: tuple[int, int] | None = None,
                 offset: int | None = None) -> None:
        self.url = url
        self.byte_range = byte_range
        super().__init__(message, offset=offset)


class ObjectNotFound(StorageError, FileNotFoundError):
    """The bucket or the key does not exist."""


class AccessDenied(StorageError, PermissionError):
    """The credentials may not read (or write) the object."""


class ConnectionLost(StorageError, ConnectionError):
    """The connection dropped or timed out, after every retry."""


class ServiceUnavailable(StorageError):
    """The store answered 5xx or throttled (SlowDown), after every retry."""


_UNAVAILABLE_CODES = {"SlowDown", "Throttling", "ThrottlingException", "ServiceUnavailable",
                      "InternalError", "RequestTimeout", "RequestTimeTooSkewed",
                      "503", "500", "502", "504"}
_CONNECTION_WORDS = ("Connection", "Disconnected", "Payload", "IncompleteRead", "Protocol",
                     "Timeout", "ResponseStreaming", "EndpointConnection", "ReadError")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out and len(out) < 16:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return out


def _status(exc: BaseException) -> tuple[str | None, int | None]:
    """(error code, HTTP status) of a botocore ClientError in the chain, if any."""
    response = getattr(exc, "response", None)
    if isinstance(response, Mapping):
        error = response.get("Error") or {}
        meta = response.get("ResponseMetadata") or {}
        return error.get("Code"), meta.get("HTTPStatusCode")
    return None, None


def classify(exc: BaseException) -> type[StorageError] | None:
    """The storage error class ``exc`` (from fsspec, s3fs, botocore, aiohttp) stands
    for, or None when it is no storage fault (a bug, a bad argument)."""
    chain = _chain(exc)
    for e in chain:
        code, status = _status(e)
        if code in ("NoSuchKey", "NoSuchBucket", "404", "NotFound") or status == 404:
            return ObjectNotFound
        if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch",
                    "ExpiredToken") or status == 403:
            return AccessDenied
        if code in _UNAVAILABLE_CODES or (status is not None and status >= 500):
            return ServiceUnavailable
    for e in chain:
        if isinstance(e, FileNotFoundError):
            return ObjectNotFound
        if isinstance(e, PermissionError):
            return AccessDenied
    for e in chain:
        names = [k.__name__ for k in type(e).__mro__]
        if isinstance(e, (ConnectionError, TimeoutError)) or any(
                w in n for n in names for w in _CONNECTION_WORDS):
            return ConnectionLost
        text = str(e)
        if any(c in text for c in ("SlowDown", "503", "Service Unavailable",
                                   "InternalError", "Please reduce your request rate")):
            return ServiceUnavailable
    for e in chain:
        if isinstance(e, OSError) and getattr(e, "errno", None) is not None:
            return ServiceUnavailable if e.errno == 121 else None  # EREMOTEIO: 5xx
    return None


_WHAT = {
    ObjectNotFound: "found no such bucket or key",
    AccessDenied: "found access denied",
    ConnectionLost: "found the connection dropped",
    ServiceUnavailable: "found the service unavailable or throttling",
}


def storage_error(exc: BaseException, url: str, byte_range: tuple[int, int] | None = None,
                  *, doing: str = "read", attempts: int = 1,
                  options: Mapping[str, Any] | None = None) -> E.ArrowError:
    """The quiver error for ``exc`` raised while doing ``doing`` on ``url`` (shown
    redacted, with the byte range when given)."""
    kind = classify(exc) or StorageError
    where = redact(url) if byte_range is None else (
        f"bytes {byte_range[0]}..{byte_range[1]} of {redact(url)}")
    what = _WHAT.get(kind, f"found {type(exc).__name__}")
    detail = scrub(str(exc).splitlines()[0] if str(exc) else "", options, (url,))[:200]
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return kind(f"expected to {doing} {where}, {what}{tries}"
                + (f" ({detail})" if detail else ""),
                url=redact(url), byte_range=byte_range,
                offset=None if byte_range is None else byte_range[0])


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth another attempt (a dropped connection, 5xx, throttling)."""
    return classify(exc) in (ConnectionLost, ServiceUnavailable)


def retrying(call: Callable[[], _T], url: str, byte_range: tuple[int, int] | None = None,
             *, doing: str = "read", attempts: int = ATTEMPTS, backoff: float = BACKOFF,
             options: Mapping[str, Any] | None = None) -> _T:
    """``call()``, retried with exponential backoff while it fails transiently (at most
    ``attempts`` calls); any failure becomes the storage error naming ``url`` and
    ``byte_range``.  quiver's own errors pass through as they are."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except E.ArrowError:
            raise
        except Exception as exc:
            if attempt < attempts and transient(exc):
                time.sleep(backoff * (2 ** (attempt - 1)))
                continue
            raise storage_error(exc, url, byte_range, doing=doing, attempts=attempt,
                                options=options) from None
    raise AssertionError("unreachable")  # pragma: no cover


__all__ = ["ATTEMPTS", "AccessDenied", "ConnectionLost", "ObjectNotFound",
           "ServiceUnavailable", "StorageError", "classify", "retrying", "storage_error",
           "transient"]
