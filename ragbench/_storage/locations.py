"""Where a file lives: a local path (one every node sees, such as NFS, or a node's own disk) or an object store URL
(`s3://bucket/prefix/...`, any fsspec scheme), read through fsspec (s3fs for s3: `pip install 'ragbench[s3]'`).

A remote location is read as a local one is (`open_for_reading`, `read_range`), listed (`remote_files`), and a
folder of it brought to a local cache folder before use (`fetched_folder`: $RAGBENCH_CACHE_DIR/remote/, one folder
a URL, and a version of its files where they are checked by size alone), each file verified by the size and content
digest (`content_digest`) its writer recorded; a cached file already of that size and digest is not fetched again. The credentials, region and endpoint are fsspec's and
botocore's own (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ~/.aws/config). Every remote call has a deadline,
$RAGBENCH_STORAGE_TIMEOUT seconds (default 60) to connect and to each read, and a call is tried twice at most: an
endpoint that does not answer ends within about twice the deadline. It, a missing bucket or key, refused credentials
end in a ConfigError of one line naming the URL and the fix. A URL that carries a credential (`s3://KEY:SECRET@...`) is
refused, shown as every URL is (`_values.urls.redact_url`: `s3://***@bucket/...`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

from .._errors import ConfigError, one_line_text
from .._values.environment import seconds_in_environment
from .._values.urls import redact_url, redact_urls
from .cache_root import cache_root
from .content_digest import content_digest

TIMEOUT_VARIABLE = "RAGBENCH_STORAGE_TIMEOUT"
DEFAULT_TIMEOUT_SECONDS = 60.0
REMOTE_CACHE = "remote"
TRIES_OF_S3FS = 1
NO_BUCKET = "NoSuchBucket"
RANGE_PAST_END = 416


def is_remote(location: str | Path) -> bool:
    """Whether `location` is a URL of a remote store (`s3://...`), not a local path (`file://` is local)."""
    scheme, separator, _ = str(location).partition("://")
    return bool(separator) and scheme.isidentifier() and scheme != "file"


def absolute_path(path: str | Path) -> Path:
    """`path` as this process names it, whatever folder another process reads it from: a relative path is made
    absolute in this process's working folder (a Ray task's or actor's is its raylet's, not the driver's)."""
    return Path(path).absolute()


def joined(url: str, *parts: str) -> str:
    """`url` with `parts` appended, one slash between each."""
    return "/".join([url.rstrip("/"), *(part.strip("/") for part in parts)])


def _filesystem(url: str) -> tuple[Any, str]:
    """fsspec's file system of `url` (its deadlines set) and the path within it."""
    try:
        import fsspec
    except ImportError:
        raise ConfigError(f"{url}: reading an object store needs fsspec and s3fs: pip install 'ragbench[s3]'") from None
    seconds = seconds_in_environment(TIMEOUT_VARIABLE, DEFAULT_TIMEOUT_SECONDS)
    scheme, _, rest = url.partition("://")
    options: dict[str, Any] = {}
    if scheme in ("s3", "s3a"):  # fsspec keeps one file system for these options: the endpoint's variable read now
        if "@" in rest.partition("/")[0] or ":" in rest.partition("/")[0]:  # no bucket's name holds either
            raise ConfigError(
                f"{redact_url(url)}: a URL never carries a credential (it would be shown and stored); name s3://BUCKET/... and "
                "give the credential in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            )
        # two tries of each request, botocore's (it retries a timeout and the store's SlowDown, with backoff), and
        # none of s3fs's own around them (`TRIES_OF_S3FS`): a store that never answers ends within about twice the
        # deadline, never the deadline times both libraries' tries
        retries = {"total_max_attempts": 2, "mode": "standard"}
        options["config_kwargs"] = {"connect_timeout": seconds, "read_timeout": seconds, "retries": retries}
        options["client_kwargs"] = {"endpoint_url": os.environ.get("AWS_ENDPOINT_URL") or None}
    try:
        fs, path = fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:
        raise ConfigError(f"{url}: {exc.msg}: pip install 'ragbench[s3]'") from None
    except ValueError as exc:  # a scheme fsspec does not know
        raise ConfigError(f"{url}: {one_line_text(str(exc))}") from None
    if scheme in ("s3", "s3a"):  # s3fs: a retry of its own wraps each of botocore's calls (and nests)
        fs.retries = TRIES_OF_S3FS
    return fs, path


def store_error(exc: BaseException) -> tuple[str | None, int | None]:
    """The store's error code and HTTP status of `exc`, read from the botocore error s3fs translated (its cause);
    (None, None) where it holds neither."""
    for error in (exc, exc.__cause__):
        response = getattr(error, "response", None)
        if isinstance(response, dict):
            return response.get("Error", {}).get("Code"), response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return None, None


def remote_problem(url: str, exc: BaseException) -> ConfigError:
    """The line for `exc`, raised reading `url`: what went wrong there and the fix."""
    text = one_line_text(str(exc)) or type(exc).__name__
    if store_error(exc)[0] == NO_BUCKET or "bucket does not exist" in text:
        bucket = url.partition("://")[2].partition("/")[0]
        return ConfigError(
            f"{url}: the bucket {bucket} does not exist in the store; make it, or name a bucket that exists (or the "
            "endpoint of the store that holds it)"
        )
    if isinstance(exc, FileNotFoundError):
        fix = "check the bucket and key (upload it, or name the URL it was uploaded to)"
    elif isinstance(exc, PermissionError):
        fix = "check the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE) and the bucket's policy"
    else:
        fix = (
            "check the endpoint (AWS_ENDPOINT_URL), the network and the credentials; "
            f"${TIMEOUT_VARIABLE} sets the deadline of each call"
        )
    return ConfigError(f"{redact_url(url)}: not readable ({type(exc).__name__}: {redact_urls(text)}); {fix}")


def _remote_call(url: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)`, a remote store's error a ConfigError naming `url` (`remote_problem`)."""
    try:
        return call(*args, **kwargs)
    except ConfigError:
        raise
    except Exception as exc:  # botocore's and aiohttp's own errors are not OSErrors
        raise remote_problem(url, exc) from None


def open_for_reading(location: str | Path) -> IO[bytes]:
    """`location`'s bytes, opened for reading (seekable): a local path as `open(path, "rb")` opens it."""
    if not is_remote(location):
        return open(location, "rb")
    url = str(location)
    fs, path = _filesystem(url)
    return _remote_call(url, fs.open, path, "rb")  # type: ignore[no-any-return]


def read_range(location: str | Path, start: int, stop: int) -> bytes:
    """Bytes [start, stop) of `location` (fewer where it ends before `stop`): one ranged GET of a remote one."""
    if not is_remote(location):
        with open(location, "rb") as handle:
            handle.seek(start)
            return handle.read(max(0, stop - start))
    url = str(location)
    if stop <= start:  # fsspec reads an empty range as the whole object
        return b""
    fs, path = _filesystem(url)
    try:
        return fs.cat_file(path, start=start, end=stop)  # type: ignore[no-any-return]
    except Exception as exc:
        if store_error(exc)[1] == RANGE_PAST_END or store_error(exc)[0] == "InvalidRange":
            return b""  # S3 refuses a range past the end, where a local file reads empty
        raise remote_problem(url, exc) from None


class RemoteFile(NamedTuple):
    size: int
    version: str  # the store's ETag, else its modification time: another once the object is written again


def remote_files(url: str) -> dict[str, RemoteFile]:
    """Each file under the folder `url` (its path relative to it, `/`-separated): its size and version, as the
    store lists them now."""
    fs, path = _filesystem(url)
    fs.invalidate_cache(path)
    found = _remote_call(url, fs.find, path, detail=True)
    root = path.rstrip("/") + "/"
    return {
        name[len(root) :]: RemoteFile(int(info["size"]), object_version(info))
        for name, info in found.items()
        if info.get("type") != "directory" and name.startswith(root)
    }


def remote_object(url: str) -> RemoteFile:
    """The size and version of the one file `url` names in its store, asked of the store now (never a listing this
    process cached: what checks that an object did not change reads its version again); a ConfigError where it is a
    folder."""
    fs, path = _filesystem(url)
    fs.invalidate_cache(path)
    info = _remote_call(url, fs.info, path)
    if info.get("type") != "file":
        raise ConfigError(f"{url} is a folder, not a file: name one file of it")
    return RemoteFile(int(info["size"]), object_version(info))


def read_object(url: str) -> bytes | None:
    """The whole of the object `url` (one GET, never a cached copy); None where there is none. s3fs would size it
    first (a HEAD, and where there is none a listing too, to tell a folder: three requests for a missing record
    where one GET says it): asked to read it in one request (`max_concurrency=1`), it sends the GET alone."""
    fs, path = _filesystem(url)
    fs.invalidate_cache(path)
    one_request = {"max_concurrency": 1} if hasattr(fs, "max_concurrency") else {}
    try:
        return fs.cat_file(path, **one_request)  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None
    except Exception as exc:
        raise remote_problem(url, exc) from None


def put_folder(folder: Path, url: str) -> None:
    """Each file under `folder` written to `url`/its relative path, one PUT a file (a reader of the store sees an
    object whole or not at all); a ConfigError naming `url` where the store refuses."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        put_file(path, joined(url, path.relative_to(folder).as_posix()))


def put_file(path: Path, url: str) -> None:
    """The file `path` written to the object `url` (one PUT)."""
    fs, key = _filesystem(url)
    _remote_call(url, fs.put_file, str(path), key)
    fs.invalidate_cache(key)


def remove_object(url: str) -> None:
    """The object `url` removed from its store (none there: nothing to do): one DELETE, which S3 answers alike
    whether the key is there or not (a store that refuses a missing one says FileNotFoundError), never a question
    first whether it is there (s3fs's `exists`: a HEAD, and a listing where there is none)."""
    fs, path = _filesystem(url)
    try:
        fs.rm_file(path)
    except FileNotFoundError:
        pass
    except Exception as exc:
        raise remote_problem(url, exc) from None
    fs.invalidate_cache(path)


def remove_objects(url: str) -> None:
    """Every object under the folder `url` removed from its store in one batched delete (the listing found them:
    no question a file whether it is there); none there: nothing to do."""
    names = remote_files(url)
    if names:
        fs, path = _filesystem(url)
        _remote_call(url, fs.rm, [f"{path.rstrip('/')}/{name}" for name in names])
        fs.invalidate_cache(path)


def object_version(info: Mapping[str, object]) -> str:
    return str(info.get("ETag") or info.get("LastModified") or info.get("mtime") or "")


def cached_folder(key: str) -> Path:
    """The local folder a remote folder (`key`: its URL, and its files' versions) is brought to on this node:
    $RAGBENCH_CACHE_DIR/remote/<16 hex digits of the key's sha256>."""
    return cache_root() / REMOTE_CACHE / hashlib.sha256(key.encode()).hexdigest()[:16]


class FetchedFileMismatch(ValueError):
    """A file fetched from a remote folder (`url`) that is not of the size or content digest its writer recorded."""

    def __init__(self, url: str, problem: str) -> None:
        self.url, self.problem = url, problem
        super().__init__(f"{url}: {problem}")


def fetched_folder(url: str, files: Iterable[tuple[str, int, str | None]], versions: Sequence[str] = ()) -> Path:
    """The folder `url`'s `files` (name, bytes, content digest or None) brought to its local cache folder
    (`cached_folder`, of `url` and the files' `versions` where given: a file written again is fetched again), each
    of them verified there; a FetchedFileMismatch naming the first that is not what was recorded (its URL), a
    ConfigError where the store cannot be read."""
    folder = cached_folder("\0".join([url.rstrip("/"), *versions]))
    fetch_into(url, files, folder)
    return folder


def fetch_into(url: str, files: Iterable[tuple[str, int, str | None]], folder: Path) -> None:
    """`url`'s `files` (name, bytes, content digest or None) brought to the local `folder` and verified there (one
    already there of that size and digest is not fetched again); a FetchedFileMismatch naming the first that is not
    what was recorded (its URL)."""
    for name, size, digest in files:
        target, where = folder / name, joined(url, name)
        if not _holds(target, size, digest):
            _fetch_file(where, target)
        if (found := target.stat().st_size) != size:
            raise FetchedFileMismatch(where, f"holds {found} bytes, recorded {size}")
        if digest is not None and (held := content_digest(target)) != digest:
            raise FetchedFileMismatch(where, f"its content digest is {held}, recorded {digest}")


def fetched_object(url: str) -> Path:
    """The remote file `url` brought to this node's cache, in a folder of its version in the store (its ETag, else
    its modification time): fetched again once the object changes, never read stale; verified by its size."""
    found = remote_object(url)
    folder_url, _, name = url.rstrip("/").rpartition("/")
    try:
        folder = fetched_folder(folder_url, [(name, found.size, None)], [name, found.version])
    except FetchedFileMismatch as exc:
        raise ConfigError(f"{exc}: it changed while it was fetched; run the command again") from None
    return folder / name


def _holds(path: Path, size: int, digest: str | None) -> bool:
    return path.is_file() and path.stat().st_size == size and (digest is None or content_digest(path) == digest)


def _fetch_file(url: str, target: Path) -> None:
    """`url`'s bytes written to `target` whole or not at all (a partial download never takes its name)."""
    fs, path = _filesystem(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.part-{os.getpid()}")  # `ragbench cache --prune` knows its process
    try:
        _remote_call(url, fs.get_file, path, str(partial))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
