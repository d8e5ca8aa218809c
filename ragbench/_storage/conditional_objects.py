"""Objects of an S3 store written and removed on a condition the store itself checks, so that of two writers at
once one alone succeeds: made where there is none (`created`, If-None-Match: *), written over (`replaced`) or removed
(`removed_if`) where it is still the version read (If-Match: its ETag); read with its ETag and its age by the store's
own clock (`read_with_age`: the Date of the store's reply less the object's Last-Modified, so no node's clock enters).
A writer that loses gets None or False, never an error: 412 (Precondition Failed: the object is there, or another
version), 409 (ConditionalRequestConflict: another conditional write to the key at the same moment), 404 (it was
removed). Any other failure is a ConfigError naming the URL (`locations.remote_problem`).

Through s3fs's client (`pip install 'ragbench[s3]'`), on any store of S3's API that honours the conditions (S3 and
moto do, on PUT and on DELETE); another scheme is refused in one line.
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime
from typing import Any, NamedTuple

from .._errors import ConfigError
from .locations import NO_BUCKET, _filesystem, remote_problem, store_error

LOST = {"PreconditionFailed": 412, "ConditionalRequestConflict": 409, "NoSuchKey": 404}


class StoreObject(NamedTuple):
    data: bytes
    etag: str  # the store's ETag of this version
    age: float  # seconds since this version was written, by the store's clock (0 where it gives no Date)


def _client(url: str) -> tuple[Any, str, str, str]:
    """s3fs's file system of `url`, the path in it, the bucket and the key."""
    fs, path = _filesystem(url)
    if not hasattr(fs, "call_s3"):
        raise ConfigError(f"{url}: a lock in an object store needs one of S3's API (s3://); build into s3://...")
    bucket, key, _ = fs.split_path(path)
    return fs, path, bucket, key


def lost(exc: BaseException) -> bool:
    """Whether `exc` is the store's refusal of a condition (or of a key removed meanwhile), not a failure: its HTTP
    status or its code, read from the botocore error s3fs translated (its cause)."""
    code, status = store_error(exc)
    if code == NO_BUCKET:  # a 404 too, but no key written or removed meanwhile: the store has no such bucket
        return False
    if code is not None or status is not None:
        return code in LOST or status in LOST.values()
    return isinstance(exc, (FileExistsError, FileNotFoundError))


def _conditional(url: str, operation: str, **arguments: Any) -> dict[str, Any] | None:
    """The store's reply to `operation` on `url`; None where the store refused its condition (`lost`)."""
    fs, path, bucket, key = _client(url)
    try:
        return fs.call_s3(operation, Bucket=bucket, Key=key, **arguments)  # type: ignore[no-any-return]
    except Exception as exc:
        if lost(exc):
            return None
        raise remote_problem(url, exc) from None
    finally:
        fs.invalidate_cache(path)


def created(url: str, data: bytes) -> str | None:
    """`data` put at `url` where there is no object: its ETag; None where there is one (or another writer's put of
    the key was under way)."""
    reply = _conditional(url, "put_object", Body=data, IfNoneMatch="*")
    return None if reply is None else str(reply["ETag"])


def replaced(url: str, data: bytes, etag: str) -> str | None:
    """`data` put over the object `url` where it is still the version `etag`: the new ETag; None where it is
    another version, or gone."""
    reply = _conditional(url, "put_object", Body=data, IfMatch=etag)
    return None if reply is None else str(reply["ETag"])


def removed_if(url: str, etag: str) -> bool:
    """The object `url` removed where it is still the version `etag`; False where it is another, or gone."""
    return _conditional(url, "delete_object", IfMatch=etag) is not None


def read_with_age(url: str) -> StoreObject | None:
    """The object `url` (one GET), its ETag and its age by the store's clock; None where there is none."""
    from fsspec.asyn import sync

    fs, _, bucket, key = _client(url)

    async def whole() -> tuple[bytes, dict[str, Any]] | None:
        try:
            reply = await fs._call_s3("get_object", Bucket=bucket, Key=key)
        except FileNotFoundError:
            return None
        try:
            return await reply["Body"].read(), reply
        finally:
            reply["Body"].close()

    try:
        found = sync(fs.loop, whole)
    except Exception as exc:
        raise remote_problem(url, exc) from None
    if found is None:
        return None
    data, reply = found
    now = reply.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    age = (parsedate_to_datetime(now) - reply["LastModified"]).total_seconds() if now else 0.0
    return StoreObject(data, str(reply["ETag"]), age)
