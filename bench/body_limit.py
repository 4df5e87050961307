"""A 300 MB POST to a running daphne (make run), sent whole whatever the server answers; its memory sampled.

Usage: python bench/body_limit.py PORT PID declared|chunked   (PID: the daphne process)

Prints one JSON line: the status line, MB sent, seconds until the answer was read, and the
process's RSS before, at its peak (sampled every 50 ms) and one second after.
docs/hardening-measurements.md has the runs before and after the guard.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
from pathlib import Path

HUGE = 300 * 1024 * 1024
HEAD = (
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
)


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+)", status)
    assert match is not None
    return int(match.group(1)) / 1024


def main(port: int, pid: int, mode: str) -> dict[str, object]:
    peak = [rss_mb(pid)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mb(pid))

    threading.Thread(target=sample, daemon=True).start()
    before = rss_mb(pid)
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    framing = f"Content-Length: {HUGE}" if mode == "declared" else "Transfer-Encoding: chunked"
    sock.sendall(f"{HEAD}{framing}\r\n\r\n".encode())
    piece = b"a" * (256 << 10)
    sent, error = 0, None
    try:
        while sent < HUGE:
            sock.sendall(piece if mode == "declared" else b"%x\r\n%s\r\n" % (len(piece), piece))
            sent += len(piece)
        if mode != "declared":
            sock.sendall(b"0\r\n\r\n")
    except OSError as exc:
        error = repr(exc)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError as exc:
        error = f"{error or ''} recv {exc!r}"
    took = time.monotonic() - started
    done.wait(1.0)
    done.set()
    return {
        "mode": mode,
        "status": answer[:12].decode(errors="replace"),
        "sent_mb": sent >> 20,
        "seconds": round(took, 2),
        "rss_before_mb": round(before, 1),
        "rss_peak_mb": round(peak[0], 1),
        "rss_after_mb": round(rss_mb(pid), 1),
        "error": error,
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
