"""Progress while grading: a bar on a terminal, one plain line per submission otherwise."""

from __future__ import annotations

import sys

from .records import num


class Progress:
    def __init__(self, total: int, stream=None):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def update(self, record: dict, skipped: bool = False) -> None:
        self.done += 1
        what = "already graded" if skipped else f"{num(record['total'])}/{num(record['max'])}"
        if self.tty:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r[{bar}] {self.done}/{self.total}  {record['student'][:24]:<24} {what:<16}"
            self.stream.write(text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            grading = record.get("grading", "ok")
            status = "" if grading == "ok" or skipped else f" ({grading[:120]})"
            self.stream.write(f"[{self.done}/{self.total}] {record['student']}: {what}{status}\n")
        self.stream.flush()
