"""Engine settings that depend on the machine: GPU offload and thread count."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def is_apple_silicon() -> bool:
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def default_gpu_layers(configured: int | None) -> int:
    """All layers on Metal on Apple Silicon (-1); the CPU elsewhere (0), unless the person set it."""
    if configured is not None:
        return configured
    return -1 if is_apple_silicon() else 0


def _sysctl(name: str) -> int:
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
        return int(out)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


def _linux_physical_cores() -> int:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return 0
    cores, physical = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "physical id":
            physical = value
        elif key == "core id":
            cores.add((physical, value))
    return len(cores)


def physical_cores() -> int:
    """Physical cores (performance cores on Apple Silicon): hyper-threads slow llama.cpp down."""
    if platform.system() == "Darwin":
        found = _sysctl("hw.perflevel0.physicalcpu") or _sysctl("hw.physicalcpu")
    else:
        found = _linux_physical_cores()
    logical = os.cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        logical = len(os.sched_getaffinity(0)) or logical   # a container may allow fewer CPUs
    return max(1, min(found or logical, logical))
