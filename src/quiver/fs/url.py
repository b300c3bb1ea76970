"""URLs and paths: which is which, how a URL is opened, and how it is shown.

A URL (``s3://bucket/key``, ``gs://...``, ``memory://...``, any scheme fsspec knows) is
opened through fsspec, the convention pandas, polars and dask share, so that the
credentials and configuration users already have keep working.  ``storage_options`` go
to the filesystem as they are.  Nothing here imports fsspec until a URL is opened.

Secrets never appear in what quiver says: :func:`redact` drops a URL's user information
and the values of its query, and :func:`scrub` blanks the values of secret-looking
storage options wherever they appear in a message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import errors as E

# a scheme of at least two letters (a one-letter one is a Windows drive) and ://
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+://)[^/@]*@")
_SECRET_KEY = re.compile(r"key|secret|token|password|passwd|credential|signature|sas",
                         re.IGNORECASE)

#: the extra that installs the filesystem of a scheme (one line in the error)
EXTRAS = {"s3": "s3", "s3a": "s3"}


def is_url(source: Any) -> bool:
    """Whether ``source`` is a URL string (``scheme://...``) rather than a local path.

    >>> is_url("s3://bucket/key.arrow"), is_url("/tmp/x.arrow"), is_url("C://x")
    (True, False, False)
    """
    return isinstance(source, str) and _URL.match(source) is not None


def is_remote_url(source: Any) -> bool:
    """Whether ``source`` is a URL of another filesystem than the local one (``file:``
    URLs are local paths to Spark's source and sink).

    >>> is_remote_url("s3://b/k"), is_remote_url("file:///tmp/x")
    (True, False)
    """
    return is_url(source) and not source.lower().startswith(("file:", "local:"))


def wants_url(source: Any, storage_options: Mapping[str, Any] | None) -> bool:
    """Whether an entry point should open ``source`` through fsspec: a URL.
    ``storage_options`` with anything else (a local path, bytes, a file object) is
    refused, as pandas does: they would be silently ignored."""
    if is_url(source):
        return True
    if storage_options:
        raise E.ArrowInvalidArgument(
            f"expected a URL (s3://bucket/key, ...) with storage_options, found a "
            f"{type(source).__name__}; storage_options apply to URLs only")
    return False


def redact(url: str) -> str:
    """``url`` as it may be shown: without user information or query values.

    >>> redact("s3://AKIA:sec@bucket/k.arrow?X-Amz-Signature=abc&v=1")
    's3://***@bucket/k.arrow?X-Amz-Signature=***&v=***'
    """
    url = _USERINFO.sub(r"\1***@", url)
    base, sep, query = url.partition("?")
    if not sep:
        return url
    parts = [p.partition("=")[0] + ("=***" if "=" in p else "") for p in query.split("&")]
    return base + "?" + "&".join(parts)


def secrets_of(options: Mapping[str, Any] | None) -> list[str]:
    """The string values of ``options`` (nested dicts too) whose key looks secret."""
    found: list[str] = []
    for key, value in (options or {}).items():
        if isinstance(value, Mapping):
            found += secrets_of(value)
        elif isinstance(value, str) and len(value) >= 4 and _SECRET_KEY.search(str(key)):
            found.append(value)
    return found


def scrub(text: str, options: Mapping[str, Any] | None) -> str:
    """``text`` with every secret value of ``options`` replaced by ``***``."""
    for secret in sorted(secrets_of(options), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def parse_storage_options(pairs: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` strings (the command line's ``--storage-option``) as a dict; a
    dotted key nests (``client_kwargs.region_name=x``), and ``true``/``false``/numbers
    become Python values.

    >>> parse_storage_options(["anon=true", "client_kwargs.region_name=eu-west-1"])
    {'anon': True, 'client_kwargs': {'region_name': 'eu-west-1'}}
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise E.ArrowInvalidArgument(
                f"expected a storage option as KEY=VALUE, found {pair.partition('=')[0]!r} "
                "without '='")
        where = out
        *parents, last = key.split(".")
        for p in parents:
            where = where.setdefault(p, {})
        where[last] = _value(value)
    return out


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def filesystem(url: str, storage_options: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """``(fsspec filesystem, path in it)`` for ``url``.  A missing fsspec, or a missing
    implementation of the URL's scheme, is one :class:`~quiver.errors.NotSupported`
    line naming what to install."""
    scheme = url.partition("://")[0].lower()
    extra = EXTRAS.get(scheme)
    advice = (f"pip install 'quiver[{extra}]'" if extra
              else f"install fsspec and the fsspec filesystem for {scheme}://")
    try:
        import fsspec.core
    except ImportError:
        raise E.NotSupported(f"expected fsspec to open {redact(url)}, found it missing: "
                             f"{advice}") from None
    try:
        fs, path = fsspec.core.url_to_fs(url, **dict(storage_options or {}))
    except ImportError as exc:
        raise E.NotSupported(
            f"expected the filesystem for {scheme}:// to open {redact(url)}, found it "
            f"missing ({scrub(str(exc).splitlines()[0], storage_options)}): {advice}"
        ) from None
    except ValueError as exc:
        raise E.ArrowInvalidArgument(
            f"expected a URL and storage options fsspec can open, found {redact(url)}: "
            f"{scrub(str(exc), storage_options)}"
        ) from None
    except TypeError as exc:
        raise E.ArrowInvalidArgument(
            f"expected storage options the {scheme}:// filesystem takes, found: "
            f"{scrub(str(exc), storage_options)}"
        ) from None
    return fs, path


__all__ = ["filesystem", "is_remote_url", "is_url", "parse_storage_options", "redact",
           "scrub", "secrets_of", "wants_url"]
