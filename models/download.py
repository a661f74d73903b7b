"""Fetch a model file: resumable, verified, never a half file under the real name.

huggingface_hub gives the file's URL, the auth headers (a token if the person
logged in) and, when the catalog pins no sha256, the checksum Hugging Face
publishes (the LFS ETag). The transfer itself is ours: bytes go to
`<file>.part`, an interrupted transfer resumes with an HTTP Range request,
and only a file whose sha256 matches is renamed into place.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Callable

from models.catalog import CatalogEntry
from models.errors import DownloadError, ModelFileError
from models.gguf_meta import read_gguf_info
from models.locate import models_dir

Progress = Callable[[int, int], None]      # (bytes done, bytes total or 0)
CHUNK = 1 << 20
_SHA = re.compile(r"^[0-9a-f]{64}$")


def entry_url(entry: CatalogEntry, endpoint: str | None = None) -> str:
    from huggingface_hub import hf_hub_url

    return hf_hub_url(entry.repo, entry.file, revision=entry.revision, endpoint=endpoint)


def _hf_headers() -> dict[str, str]:
    try:
        from huggingface_hub.utils import build_hf_headers

        return dict(build_hf_headers())
    except Exception:   # an odd token file must not stop a public download
        return {}


def published_sha256(url: str) -> str:
    """The sha256 Hugging Face publishes for an LFS file, or "" when it cannot be had."""
    try:
        from huggingface_hub import get_hf_file_metadata

        etag = (get_hf_file_metadata(url).etag or "").strip('"').lower()
    except Exception:   # offline, a mirror without metadata: the catalog pin (if any) still applies
        return ""
    return etag if _SHA.match(etag) else ""


def _hash_existing(path: Path) -> "hashlib._Hash":
    digest = hashlib.sha256()
    if path.exists():
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(CHUNK), b""):
                digest.update(block)
    return digest


def _total_from(response, offset: int) -> int:
    content_range = response.headers.get("Content-Range", "")
    if "/" in content_range and not content_range.endswith("/*"):
        return int(content_range.rsplit("/", 1)[1])
    length = response.headers.get("Content-Length")
    return offset + int(length) if length else 0


def _transfer(url: str, part: Path, headers: dict, state: dict, progress: Progress | None, timeout: float) -> int:
    """Append the rest of `url` to `part`, hashing into state["digest"]. Returns the total size."""
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={**headers, **({"Range": f"bytes={offset}-"} if offset else {})})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:       # we already have every byte
            return offset
        raise DownloadError(f"download of {url} failed: HTTP {exc.code} {exc.reason}", path=part) from exc
    with response:
        if offset and response.status != 206:
            # The server ignored the Range header: start again from the first byte.
            offset = 0
            state["digest"] = hashlib.sha256()
            part.write_bytes(b"")
        total = _total_from(response, offset)
        done = offset
        with part.open("ab") as out:
            while True:
                block = response.read(CHUNK)
                if not block:
                    break
                out.write(block)
                state["digest"].update(block)
                done += len(block)
                if progress:
                    progress(done, total)
            out.flush()
            os.fsync(out.fileno())
    if total and done < total:
        raise ConnectionError(f"connection closed at {done:,} of {total:,} bytes")
    return total or done


def _unreachable(exc: Exception | None) -> bool:
    """The server could not be reached at all: no network, no name resolution, nothing listening."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, (socket.gaierror, ConnectionRefusedError)):
        return True
    return isinstance(reason, OSError) and reason.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)


def download_url(url: str, dest: Path, *, sha256: str = "", size: int = 0, progress: Progress | None = None,
                 retries: int = 3, timeout: float = 60.0, headers: dict | None = None) -> Path:
    """Download `url` to `dest` (resuming `dest.part`), check size and sha256, rename into place."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    state = {"digest": _hash_existing(part)}
    last_error: Exception | None = None
    for attempt in range(retries + 1):
        try:
            total = _transfer(url, part, headers or {}, state, progress, timeout)
            break
        except DownloadError:
            raise
        except (OSError, ConnectionError, urllib.error.URLError) as exc:   # dropped: resume from what we have
            last_error = exc
            if attempt < retries:
                time.sleep(min(2.0, 0.2 * (attempt + 1)))
    else:
        have = part.stat().st_size if part.exists() else 0
        if _unreachable(last_error):
            host = urllib.parse.urlsplit(url).netloc
            raise DownloadError(f"offline: {host} cannot be reached ({getattr(last_error, 'reason', last_error)}); "
                                f"connect to the internet and download again"
                                + (f" ({have:,} bytes kept in {part} to resume)" if have else ""), path=part)
        raise DownloadError(f"download of {dest.name} interrupted ({last_error}); {have:,} bytes kept in "
                            f"{part}, run the download again to resume", path=part)
    have = part.stat().st_size
    if size and have != size and total == have:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{dest.name}: got {have:,} bytes, expected {size:,}; deleted, try again", path=dest)
    actual = state["digest"].hexdigest()
    if sha256 and actual != sha256.lower():
        part.unlink(missing_ok=True)
        raise DownloadError(f"{dest.name} failed its checksum (sha256 {actual[:12]}…, expected {sha256[:12]}…); "
                            "the partial file was deleted, run the download again", path=dest)
    os.replace(part, dest)
    return dest


def download_entry(entry: CatalogEntry, *, endpoint: str | None = None, progress: Progress | None = None,
                   dest_dir: Path | None = None, timeout: float = 60.0) -> Path:
    """Fetch a catalog model from Hugging Face (or a mirror at `endpoint`) into models_dir()."""
    dest = (dest_dir or models_dir()) / entry.file
    if dest.exists():
        return dest
    # HF_ENDPOINT (Hugging Face's own variable for a mirror) is read now, not when the hub library loaded.
    url = entry_url(entry, endpoint or os.environ.get("HF_ENDPOINT") or None)
    expected = entry.sha256 or published_sha256(url)
    path = download_url(url, dest, sha256=expected, progress=progress, timeout=timeout, headers=_hf_headers())
    try:   # with no checksum to go by, at least never keep a file that is not a whole GGUF model
        read_gguf_info(path)
    except ModelFileError as exc:
        path.unlink(missing_ok=True)
        raise DownloadError(f"the download of {entry.id} is not a usable model and was deleted: {exc}",
                            path=path) from exc
    return path
