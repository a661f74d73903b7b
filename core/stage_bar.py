"""A progress line per dream stage on stderr, shared by `reverie dream` and the consolidation bench."""

import sys


class StageBar:
    """One progress bar per stage on stderr (plain lines when stderr is not a terminal)."""

    WIDTH = 24

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.last = ""

    def __call__(self, event) -> None:
        if event.status == "start":
            self.last = ""
            self._draw(event.stage, 0, 0, "")
        elif event.status == "progress":
            self.last = event.message
            self._draw(event.stage, event.done, event.total, event.message)
        elif event.status == "done":
            if self.tty:
                self.stream.write("\n")
            else:
                self._draw(event.stage, 1, 1, self.last, final=True)
            self.stream.flush()

    def _draw(self, stage: str, done: int, total: int, message: str, final: bool = False) -> None:
        if not self.tty and not final:
            return
        filled = self.WIDTH if final or (total and done >= total) else (self.WIDTH * done // total if total else 0)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        count = f"{done}/{total}" if total and not final else ""
        line = f"{stage:<12}[{bar}] {count:>7}  {message}"[:118]
        if self.tty:
            self.stream.write("\r" + line.ljust(118))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
