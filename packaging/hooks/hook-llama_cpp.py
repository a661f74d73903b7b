"""PyInstaller hook for llama-cpp-python, which ships none of its own.

llama_cpp loads its native libraries with ctypes from `<package>/lib/` by exact
file name (libllama.so / libllama.dylib, libggml*.*, libmtmd.*), so PyInstaller's
import analysis never sees them and a frozen app fails with "Shared library with
base name 'llama' not found". We collect every library in that folder to the same
place in the bundle (`llama_cpp/lib/`): the unversioned names ctypes opens and the
SONAME-versioned ones (libggml.so.0, ...) they link against through RUNPATH
$ORIGIN. Metal shader files (ggml-metal.metal, default.metallib) of builds that do
not embed them go along as data. The `server` subpackage (FastAPI/uvicorn) is not
imported by Reverie and stays out.
"""
from pathlib import Path

from PyInstaller.utils.hooks import collect_data_files, get_package_paths

_, package_dir = get_package_paths("llama_cpp")
lib_dir = Path(package_dir) / "lib"
LIBRARY_PATTERNS = ("*.so", "*.so.*", "*.dylib", "*.dll")
SHADER_PATTERNS = ("*.metal", "*.metallib")

binaries = []
datas = []
if lib_dir.is_dir():
    for pattern in LIBRARY_PATTERNS:
        binaries += [(str(path), "llama_cpp/lib") for path in sorted(lib_dir.glob(pattern)) if path.is_file()]
    for pattern in SHADER_PATTERNS:
        datas += [(str(path), "llama_cpp/lib") for path in sorted(lib_dir.glob(pattern))]
# Metal shaders may also sit next to the package modules in some builds.
for pattern in SHADER_PATTERNS:
    datas += [(str(path), "llama_cpp") for path in sorted(Path(package_dir).glob(pattern))]
datas += collect_data_files("llama_cpp", excludes=["lib/**", "server/**", "**/__pycache__/**"])

excludedimports = ["llama_cpp.server"]
