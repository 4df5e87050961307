"""The load generator: full MRTR `user_ask` calls over keep-alive HTTP/1.1, as fast as a server allows.

One call = two POSTs: the tools/call (answered `input_required`) and its retry carrying the answer
and the echoed requestState. Hand-written HTTP over asyncio streams keeps the generator cheap, so
the server (pinned to another core) is what is measured. Prints one JSON line of results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any
from urllib.parse import urlsplit

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


class Connection:
    """One keep-alive HTTP/1.1 connection speaking the 2026-07-28 headers."""

    def __init__(self, host: str, port: int, path: str, token: str | None) -> None:
        self.host, self.port, self.path = host, port, path
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def post(
        self,
        body: dict[str, Any],
        name: str,
        *,
        method: str = "tools/call",
        token: str | None = None,
    ) -> dict[str, Any]:
        """POST one request; `name` is its Mcp-Name header, `token` another principal's."""
        payload = json.dumps(body, separators=(",", ":")).encode()
        auth = f"Authorization: Bearer {token}\r\n" if token else self.auth
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\n"
            f"{auth}Content-Length: {len(payload)}\r\n\r\n"
        ).encode()
        self.writer.write(head + payload)
        status_line = await self.reader.readline()
        length, chunked = None, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            key, _, value = line.decode("latin-1").partition(":")
            key = key.strip().lower()
            if key == "content-length":
                length = int(value)
            elif key == "transfer-encoding" and "chunked" in value:
                chunked = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        else:
            data = await self.reader.readexactly(length or 0)
        if not status_line.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"{status_line!r}: {data[:300]!r}")
        text = data.decode()
        if text.startswith("event:") or text.startswith("data:") or "\ndata:" in text:
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        reply: dict[str, Any] = json.loads(text)
        return reply


async def ask_once(conn: Connection, tool: str, n: int, rounds: list[float]) -> None:
    arguments = {"message": f"Proceed with step {n}?"}
    start = time.perf_counter()
    first = await conn.post(
        {
            "jsonrpc": "2.0",
            "id": 2 * n,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META},
        },
        tool,
    )
    middle = time.perf_counter()
    result = first["result"]
    if result.get("resultType") != "input_required":
        raise RuntimeError(f"expected input_required, got {first}")
    key = next(iter(result["inputRequests"]))
    final = await conn.post(
        {
            "jsonrpc": "2.0",
            "id": 2 * n + 1,
            "method": "tools/call",
            "params": {
                "name": tool,
                "arguments": arguments,
                "_meta": META,
                "requestState": result["requestState"],
                "inputResponses": {key: {"action": "accept", "content": {"answer": "yes"}}},
            },
        },
        tool,
    )
    end = time.perf_counter()
    if final["result"].get("isError") or "yes" not in final["result"]["content"][0]["text"]:
        raise RuntimeError(f"unexpected final result {final}")
    rounds.append(middle - start)
    rounds.append(end - middle)


async def run(
    url: str,
    tool: str,
    concurrency: int,
    seconds: float,
    warmup: float,
    token: str | None,
    rate: float | None = None,
) -> dict[str, Any]:
    parts = urlsplit(url)
    conns = [
        Connection(parts.hostname or "127.0.0.1", parts.port or 80, parts.path, token)
        for _ in range(concurrency)
    ]
    for conn in conns:
        await conn.open()
    counter = iter(range(1, 10**9))
    rounds: list[float] = []
    calls = 0
    stop = time.perf_counter() + warmup

    # With a rate, each worker keeps its share of it on a fixed schedule (an open loop).
    interval = concurrency / rate if rate else 0.0

    async def worker(conn: Connection, measure: bool) -> int:
        done = 0
        due = time.perf_counter()
        while time.perf_counter() < stop:
            await ask_once(conn, tool, next(counter), rounds if measure else [])
            done += 1
            if interval:
                due += interval
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
        return done

    await asyncio.gather(*(worker(c, False) for c in conns))
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    calls = sum(await asyncio.gather(*(worker(c, True) for c in conns)))
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.writer.close()
    rounds.sort()
    ms = [r * 1000 for r in rounds]
    return {
        "calls": calls,
        "seconds": round(elapsed, 3),
        "calls_per_s": round(calls / elapsed, 1),
        "round_p50_ms": round(statistics.median(ms), 3),
        "round_p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3),
        "round_max_ms": round(ms[-1], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--tool", default="user_ask")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--token", default=None)
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one CPU")
    parser.add_argument("--rate", type=float, default=None, help="calls per second in all")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    result = asyncio.run(
        run(
            args.url,
            args.tool,
            args.concurrency,
            args.seconds,
            args.warmup,
            args.token,
            args.rate,
        )
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
