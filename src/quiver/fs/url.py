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
from collections.abc import Mapping, Sequence
from typing import Any

from .. import errors as E

# a scheme of at least two letters (a one-letter one is a Windows drive) and ://
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")
#: schemes whose user-information place holds a container name (``container@account``)
_CONTAINER_AT = {"abfs", "abfss", "az", "adl", "wasb", "wasbs"}
# a URL in a message: up to a space or quote, without the punctuation that ends a phrase
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+://[^\s'\"<>]*[^\s'\"<>.,;:)\]]")
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
    """``url`` as it may be shown: without user information or query values (anything
    that is not a URL comes back as it is).  Every query value is blanked, not only the
    secret-looking ones: signed URLs and SAS tokens spread their secret over names no
    list keeps up with (``sig``, ``X-Amz-Credential``, ``se``).  A secret holding ``/``
    (AWS secrets may) is cut up to its ``@`` too.  Azure's ``container@account`` (no
    ``:``) is a name, and kept; a lone name elsewhere may be a token, and is not.

    >>> redact("s3://AKIA:sec@bucket/k.arrow?X-Amz-Signature=abc&v=1")
    's3://***@bucket/k.arrow?X-Amz-Signature=***&v=***'
    >>> redact("s3://AKIA:se/c+r@bucket/k"), redact("s3://bucket/a@b.arrow")
    ('s3://***@bucket/k', 's3://bucket/a@b.arrow')
    >>> redact("abfs://data@acct.dfs.core.windows.net/x?sig=s3cr3t")
    'abfs://data@acct.dfs.core.windows.net/x?sig=***'
    """
    if not is_url(url):
        return url
    user = _userinfo(url)
    if user is not None:
        url = url[:user[0]] + "***" + url[user[1]:]
    base, sep, query = url.partition("?")
    if not sep:
        return url
    parts = [p.partition("=")[0] + ("=***" if "=" in p else "") for p in query.split("&")]
    return base + "?" + "&".join(parts)


def _userinfo(url: str) -> tuple[int, int] | None:
    """Where a URL's user information (a secret, maybe) starts and ends, or None."""
    start = url.index("://") + 3
    head = url[start:].split("?", 1)[0].split("#", 1)[0]
    at = head.rfind("@")
    slash = head.find("/")
    # an '@' past the first '/' is part of the key, unless a ':' before it says KEY:SECRET
    if at < 0 or not (slash < 0 or at < slash or ":" in head[:at]):
        return None
    if ":" not in head[:at] and url[:start - 3].lower() in _CONTAINER_AT:
        return None
    return start, start + at


def redact_text(text: str) -> str:
    """``text`` with every URL in it :func:`redact`-ed (a message that quotes one).

    >>> redact_text("cannot open 's3://k:s@b/x.arrow': gone")
    "cannot open 's3://***@b/x.arrow': gone"
    >>> redact_text("quiver: s3://b/x?t=1: wrote s3://b/y.")
    'quiver: s3://b/x?t=***: wrote s3://b/y.'

    """
    return _URL_IN_TEXT.sub(lambda m: redact(m.group()), text) if "://" in text else text


def secrets_of(options: Mapping[str, Any] | None) -> list[str]:
    """The string values of ``options`` (nested dicts too) whose key looks secret."""
    found: list[str] = []
    for key, value in (options or {}).items():
        if isinstance(value, Mapping):
            found += secrets_of(value)
        elif isinstance(value, str) and len(value) >= 4 and _SECRET_KEY.search(str(key)):
            found.append(value)
    return found


def url_secrets(url: str) -> list[str]:
    """What :func:`redact` hides of ``url``: its user information and query values (a
    library's message may quote them without the scheme, where no pattern finds them).

    >>> url_secrets("s3://k:s3cr3t@b/x?sig=abcd&v=1")
    ['k:s3cr3t', 'abcd']
    """
    if not is_url(url):
        return []
    user = _userinfo(url)
    out = [] if user is None else [url[user[0]:user[1]]]
    query = url.partition("?")[2]
    out += [p.partition("=")[2] for p in query.split("&") if p.partition("=")[2]]
    return [s for s in out if len(s) >= 3]


def scrub(text: str, options: Mapping[str, Any] | None, urls: Sequence[str] = ()) -> str:
    """``text`` with every secret value of ``options``, and what :func:`redact` hides of
    each of ``urls``, replaced by ``***``; any URL left in it is redacted."""
    found = secrets_of(options) + [s for u in urls for s in url_secrets(u)]
    for secret in sorted(found, key=len, reverse=True):
        text = text.replace(secret, "***")
    return redact_text(text)


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
            f"missing ({scrub(str(exc).splitlines()[0], storage_options, (url,))}): {advice}"
        ) from None
    except ValueError as exc:
        raise E.ArrowInvalidArgument(
            f"expected a URL and storage options fsspec can open, found {redact(url)}: "
            f"{scrub(str(exc), storage_options, (url,))}"
        ) from None
    except TypeError as exc:
        raise E.ArrowInvalidArgument(
            f"expected storage options the {scheme}:// filesystem takes, found: "
            f"{scrub(str(exc), storage_options, (url,))}"
        ) from None
    return fs, path


__all__ = ["filesystem", "is_remote_url", "is_url", "parse_storage_options", "redact",
           "redact_text", "scrub", "secrets_of", "url_secrets", "wants_url"]
