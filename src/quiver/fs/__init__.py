"""Object storage and other fsspec filesystems: URLs wherever quiver takes a path.

- :mod:`quiver.fs.url`: telling a URL from a path (no import of fsspec), resolving it
  through fsspec with ``storage_options``, and keeping secrets out of messages.
- :mod:`quiver.fs.errors`: the storage errors (missing object, denied access, a dropped
  connection, an unavailable service) and the bounded retries of transient faults.
- :mod:`quiver.fs.ranged`: ranged reads of one object: near ranges coalesced, large ones
  split, fetched concurrently by a bounded pool; a sequential reader with read-ahead.

Local paths never come here: they keep memory maps and today's speed.
"""
