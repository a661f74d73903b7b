"""Run a command with this process's stdin, copy its stdout byte for byte to our stdout and to a file.

Used by the MCP tests: the SDK client talks through us to the real `reverie mcp`, and
the capture file shows every byte the server put on stdout, so a test can prove that
nothing but protocol messages was there.

    python stdio_tee.py CAPTURE_FILE COMMAND [ARGS...]
"""
import os
import subprocess
import sys


def main() -> int:
    capture, command = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(command, stdin=sys.stdin, stdout=subprocess.PIPE, stderr=None)
    out = sys.stdout.buffer
    with open(capture, "wb") as copy:
        while True:
            chunk = os.read(child.stdout.fileno(), 65536)
            if not chunk:
                break
            copy.write(chunk)
            copy.flush()
            try:
                out.write(chunk)
                out.flush()
            except BrokenPipeError:
                break
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
