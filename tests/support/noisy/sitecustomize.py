"""Loaded into the MCP server process by the tests (PYTHONPATH): a thread that prints junk to stdout.

It waits until the server has moved its protocol stream off fd 1, then keeps writing
through every route a library could take (print, sys.stdout, os.write(1), a child
process), while the test makes its calls. None of it may reach the protocol stream.
"""
import os
import subprocess
import sys
import threading
import time

_original = os.fstat(1)


def _moved() -> bool:
    now = os.fstat(1)
    return (now.st_dev, now.st_ino) != (_original.st_dev, _original.st_ino)


def _noise() -> None:
    while not _moved():
        time.sleep(0.01)
    n = 0
    while True:
        n += 1
        print(f"noise print {n}")
        sys.stdout.write(f"noise sys.stdout {n}\n")
        sys.stdout.flush()
        os.write(1, f"noise fd1 {n}\n".encode())
        if n % 50 == 1:
            subprocess.run(["echo", f"noise child {n}"])
        time.sleep(0.02)


threading.Thread(target=_noise, daemon=True).start()
