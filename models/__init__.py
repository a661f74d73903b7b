"""The model catalog (catalog.toml) and a small loader: ids, local paths, fit, download.

Sits below core: imports nothing from core or desktop. Errors are
models.errors.ModelFileError; core turns them into core.errors.ModelError.
"""
from __future__ import annotations

from models.catalog import CatalogEntry, entry_for_file, find_entry, get_entry, load_catalog
from models.errors import DownloadError, ModelFileError, UnknownModelError
from models.locate import bundled_model_path, entry_path, is_present, models_dir, resolve_model_path

DEFAULT_MODEL = "smollm2-135m-instruct-q4_1"

__all__ = [
    "CatalogEntry", "DEFAULT_MODEL", "DownloadError", "ModelFileError", "UnknownModelError",
    "bundled_model_path", "entry_for_file", "entry_path", "find_entry", "get_entry", "is_present",
    "load_catalog", "models_dir", "resolve_model_path",
]
