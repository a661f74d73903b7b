"""The model catalog as core offers it to its front ends (the desktop's settings dialog).

models/ holds the catalog and its loader; a front end talks to core only, so
this facade re-exports what it needs with core's errors: the catalog's models,
whether each is here and fits this machine, and a download with progress.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.errors import ModelError, ModelNotFoundError


@dataclass(frozen=True)
class CatalogModel:
    """One catalog model as a settings page shows it."""
    id: str
    name: str
    size_bytes: int
    present: bool           # on this machine now (a bundled model that can be assembled counts)
    fits: bool              # fits this machine's memory at the context length asked about
    bundled: bool           # ships with the app: never downloaded
    fit_note: str = ""      # what it needs and what is usable, at that context
    context_length: int = 0  # the context the fit was judged at (the model's own, when smaller)

    @property
    def size_text(self) -> str:
        return f"{self.size_bytes / 2**30:.1f} GiB" if self.size_bytes >= 2**30 else f"{self.size_bytes / 2**20:.0f} MiB"


def catalog_models(context_length: int | None = None, usable_bytes: int | None = None) -> list[CatalogModel]:
    """Every catalog model, present or not (ModelError when the catalog cannot be read), its fit judged at
    `context_length` tokens, the context a person configured (default: each model's own, often 262k)."""
    from models import ModelFileError, is_present, load_catalog
    from models.fit import fit_for_entry

    try:
        entries = load_catalog()
    except ModelFileError as exc:
        raise ModelError(str(exc)) from exc
    rows = []
    for entry in entries:
        try:
            present = is_present(entry)
        except Exception:        # a broken bundled package: shown as not present rather than failing the list
            present = False
        fit = fit_for_entry(entry, context_length or entry.context_length, usable_bytes)
        rows.append(CatalogModel(id=entry.id, name=entry.name, size_bytes=entry.size_bytes, present=present,
                                 fits=fit.fits, bundled=bool(entry.bundled), fit_note=fit.describe(),
                                 context_length=fit.context_length))
    return rows


def catalog_model(model_id: str) -> CatalogModel:
    """The catalog model with this id; ModelNotFoundError for anything else (a GGUF path, a typo)."""
    from models import UnknownModelError, get_entry

    try:
        get_entry(model_id)
    except UnknownModelError as exc:
        raise ModelNotFoundError(str(exc)) from exc
    return next(m for m in catalog_models() if m.id == model_id)


def download_model(model_id: str, progress: Callable[[int, int], None] | None = None) -> Path:
    """Fetch a catalog model (resumable, sha256-checked) into the models folder; returns its path.

    `progress(bytes_done, bytes_total_or_0)` may raise (core.cancel.Cancelled) to stop:
    the partial file is kept for a resume. Failures are ModelError.
    """
    from models import ModelFileError, UnknownModelError, get_entry
    from models.download import download_entry

    try:
        entry = get_entry(model_id)
    except UnknownModelError as exc:
        raise ModelNotFoundError(str(exc)) from exc
    try:
        return download_entry(entry, progress=progress)
    except ModelFileError as exc:
        raise ModelError(f"downloading {entry.name}: {exc}") from exc
