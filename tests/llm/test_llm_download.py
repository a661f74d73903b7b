"""Model downloads against a real HTTP server on 127.0.0.1: resume, checksum, bad files."""
from __future__ import annotations

import hashlib
import http.server
import threading

import pytest

from core.cli import main
from models import DownloadError
from models.catalog import CatalogEntry
from models.download import download_entry, download_url


class Files(http.server.BaseHTTPRequestHandler):
    """Serves `files` with Range support; `drop_after` cuts the first transfer of a path short."""

    files: dict[str, bytes] = {}
    drop_after: dict[str, int] = {}
    ignore_range = False
    seen: list[tuple[str, str]] = []

    def log_message(self, *args):   # keep pytest output clean
        pass

    def do_GET(self):
        data = self.files.get(self.path)
        self.seen.append((self.path, self.headers.get("Range", "")))
        if data is None:
            self.send_error(404)
            return
        start = 0
        ranged = self.headers.get("Range", "")
        if ranged and not self.ignore_range:
            start = int(ranged.split("=")[1].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        cut = self.drop_after.pop(self.path, None)
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.connection.shutdown(2)   # the connection drops mid-transfer
            return
        self.wfile.write(body)


@pytest.fixture
def server():
    class Handler(Files):
        files, drop_after, seen = {}, {}, []
        ignore_range = False

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Handler, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


PAYLOAD = bytes(range(256)) * 8192   # 2 MiB
SHA = hashlib.sha256(PAYLOAD).hexdigest()


def test_plain_download_is_verified_and_renamed(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD
    seen = []
    path = download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256=SHA, progress=lambda d, t: seen.append((d, t)))
    assert path.read_bytes() == PAYLOAD and not (tmp_path / "m.gguf.part").exists()
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))


def test_an_interrupted_transfer_resumes_with_a_range_request(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD
    handler.drop_after["/m.gguf"] = 700_000
    path = download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256=SHA)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA
    assert handler.seen[0] == ("/m.gguf", "")
    assert handler.seen[1][1].startswith("bytes=") and int(handler.seen[1][1][6:-1]) >= 700_000 - 65536


def test_a_partial_file_left_by_an_earlier_run_is_resumed(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD
    (tmp_path / "m.gguf.part").write_bytes(PAYLOAD[:1_000_000])
    path = download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256=SHA)
    assert path.read_bytes() == PAYLOAD and handler.seen == [("/m.gguf", "bytes=1000000-")]
    (tmp_path / "n.gguf.part").write_bytes(PAYLOAD)          # every byte already here: the server answers 416
    handler.files["/n.gguf"] = PAYLOAD
    assert download_url(f"{base}/n.gguf", tmp_path / "n.gguf", sha256=SHA).read_bytes() == PAYLOAD


def test_a_server_that_ignores_ranges_restarts_from_the_first_byte(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD
    handler.ignore_range = True
    (tmp_path / "m.gguf.part").write_bytes(b"stale bytes from another file")
    assert download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256=SHA).read_bytes() == PAYLOAD


def test_a_bad_checksum_deletes_the_download(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD
    with pytest.raises(DownloadError, match="checksum"):
        download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256="0" * 64)
    assert not (tmp_path / "m.gguf").exists() and not (tmp_path / "m.gguf.part").exists()


def test_repeated_drops_keep_the_partial_file_for_next_time(server, tmp_path):
    handler, base = server
    handler.files["/m.gguf"] = PAYLOAD

    class AlwaysDrop(dict):
        def pop(self, key, default=None):
            return 100_000 if key == "/m.gguf" else default

    handler.drop_after = AlwaysDrop()
    with pytest.raises(DownloadError, match="resume"):
        download_url(f"{base}/m.gguf", tmp_path / "m.gguf", sha256=SHA, retries=1)
    assert (tmp_path / "m.gguf.part").stat().st_size >= 100_000 and not (tmp_path / "m.gguf").exists()


def test_missing_file_is_an_http_error(server, tmp_path):
    _, base = server
    with pytest.raises(DownloadError, match="404"):
        download_url(f"{base}/absent.gguf", tmp_path / "absent.gguf")


def test_a_catalog_entry_downloads_from_a_hub_mirror(server, tmp_path, smol_path):
    handler, base = server
    data = smol_path.read_bytes()
    entry = CatalogEntry(id="tiny", name="tiny", file="tiny.gguf", repo="someone/tiny-GGUF", context_length=8192,
                         sha256=hashlib.sha256(data).hexdigest())
    handler.files["/someone/tiny-GGUF/resolve/main/tiny.gguf"] = data   # huggingface_hub's URL layout
    handler.drop_after["/someone/tiny-GGUF/resolve/main/tiny.gguf"] = 5_000_000
    path = download_entry(entry, endpoint=base, dest_dir=tmp_path)
    assert path == tmp_path / "tiny.gguf" and path.stat().st_size == len(data)


def test_cli_download_with_a_mirror_refuses_a_file_that_is_not_a_model(server, tmp_path, monkeypatch, capsys):
    handler, base = server
    monkeypatch.setenv("REVERIE_MODELS_DIR", str(tmp_path / "models"))
    handler.files["/unsloth/gemma-3-4b-it-GGUF/resolve/main/gemma-3-4b-it-Q4_K_M.gguf"] = b"<html>login</html>" * 100
    assert main(["models", "download", "gemma3-4b-it-q4_k_m", "--endpoint", base]) == 2
    assert "not a usable model" in capsys.readouterr().err
    assert not list((tmp_path / "models").glob("*"))


def test_cli_download_of_a_bundled_model_prints_its_path(capsys, smol_path):
    assert main(["models", "download", "smollm2-135m-instruct-q4_1"]) == 0
    assert capsys.readouterr().out.strip() == str(smol_path)
