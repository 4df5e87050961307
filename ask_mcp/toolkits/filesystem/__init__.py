"""The FileSystem toolkit: read-only tools that list, read and search the files under one root directory; knows no wire and no Django.

A path a model gives is walked down from a descriptor of the root one name at a time, each
opened relative to its parent with O_NOFOLLOW: symbolic links are never followed (listed, and
refused by name), absolute paths and `..` are refused, and a directory swapped for a link while
a read runs cannot carry it outside the root, because no path string is resolved and then
opened again. Only regular files are opened, without blocking: a FIFO, socket or device is
named and refused. Reads are bounded (`max_read_bytes`, continued with `offset`), text only,
listings are paged, and a search stops at a file, byte, time or match limit with a result
that says which. Nothing here writes. Linux (and other POSIX systems with `dir_fd` and
O_NOFOLLOW), where the product runs.

This module is the toolkit: its settings, schemas and tools, and the shape of their results.
Every descriptor it opens is opened in :mod:`.confined`, which owns the rules above about links,
`..` and file kinds; the search walk and its limits are :mod:`.search`.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import stat
from typing import Any, Final

from ask_mcp.protocol.jsonrpc import json_type
from ask_mcp.server.catalog.toolkit import Toolkit, ToolResult, tool
from ask_mcp.server.context import Context
from ask_mcp.server.errors import ToolError
from ask_mcp.toolkits.filesystem.confined import (
    SNIFF_BYTES,
    looks_binary,
    open_directory,
    open_directory_or_file,
    open_file,
    parts,
)
from ask_mcp.toolkits.filesystem.search import Search, Stopped

READ_ONLY: Final = {"readOnlyHint": True, "openWorldHint": False}
"""The annotations of every tool here: they read, and reach nothing outside the root."""
MAX_SEARCH_FILES: Final = 10_000
"""Files one search looks at by default: 10,000 small files in 100 directories were searched
in 0.1-0.2 s on the 2-core test host (page cache warm), so the limit binds only on big trees."""
MAX_SEARCH_BYTES: Final = 64 * 1024 * 1024
"""Bytes one search reads by default: 64 files at the 1 MiB per-file limit, searched in
0.15-0.25 s on the same host; a cold disk is what max_search_seconds is for."""
MAX_SEARCH_SECONDS: Final = 10.0
"""Seconds one search may run by default: each holds a worker thread of the default executor
(6 on a 2-core host), so a few slow searches would otherwise stall every tool call."""

_PATH: Final = {
    "type": "string",
    "description": "A path relative to the root, with / between parts; '.' is the root.",
    "default": ".",
}
"""The `path` argument the tools share."""
LIST_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "path": _PATH,
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Skip this many entries (the next_offset of the previous page).",
        },
    },
    "additionalProperties": False,
}
"""The input schema of the list tool."""
READ_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "path": {**_PATH, "description": "The file to read, relative to the root."},
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Byte offset to start at (the next_offset a truncated read gave).",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}
"""The input schema of the read tool."""
SEARCH_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "Text to look for, matched case-insensitively, line by line.",
        },
        "path": {**_PATH, "description": "The directory (or file) to search in."},
        "glob": {
            "type": "string",
            "description": "Only files whose name matches this pattern, such as '*.md'.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
"""The input schema of the search tool."""


class FileSystem(Toolkit):
    """Registers `list`, `read` and `search` (as `fs_list`, `fs_read`, `fs_search` by default)."""

    default_prefix = "fs"

    def __init__(
        self,
        *,
        root: str,
        max_read_bytes: int = 256 * 1024,
        page_size: int = 200,
        max_matches: int = 100,
        max_search_file_bytes: int = 1024 * 1024,
        max_search_files: int = MAX_SEARCH_FILES,
        max_search_bytes: int = MAX_SEARCH_BYTES,
        max_search_seconds: float = MAX_SEARCH_SECONDS,
    ) -> None:
        if not isinstance(root, str) or not root:
            raise ValueError(f"FileSystem: root must be a directory path, got {root!r}")
        real = os.path.realpath(os.path.expanduser(root))
        if not os.path.isdir(real):
            raise ValueError(f"FileSystem: root {root!r} is not a directory")
        for name, value in (
            ("max_read_bytes", max_read_bytes),
            ("page_size", page_size),
            ("max_matches", max_matches),
            ("max_search_file_bytes", max_search_file_bytes),
            ("max_search_files", max_search_files),
            ("max_search_bytes", max_search_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"FileSystem: {name} must be a positive integer, got {value!r}")
        seconds: object = max_search_seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise ValueError(
                f"FileSystem: max_search_seconds must be a positive number of seconds, "
                f"got {seconds!r}"
            )
        self.root = real
        self.max_read_bytes = max_read_bytes
        self.page_size = page_size
        self.max_matches = max_matches
        self.max_search_file_bytes = max_search_file_bytes
        self.max_search_files = max_search_files
        self.max_search_bytes = max_search_bytes
        self.max_search_seconds = float(max_search_seconds)

    # ------------------------------------------------------------------ tools

    @tool("list", input_schema=LIST_SCHEMA, title="List a directory", annotations=READ_ONLY)
    async def list_directory(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """List the entries of a directory under the file root, a page at a time.

        Answers JSON: `entries` (name, type file/directory/symlink/other, size of files),
        `total`, and `next_offset` when more entries remain (pass it as `offset`).
        Symbolic links are listed, never followed.
        """
        path = _string_argument(arguments, "path", ".")
        offset = _offset_argument(arguments)
        return await asyncio.to_thread(self._list, path, offset)

    @tool("read", input_schema=READ_SCHEMA, title="Read a text file", annotations=READ_ONLY)
    async def read_file(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Read a text file under the file root.

        Long files come back in pieces: a truncated read ends with a note giving the
        `offset` to continue from. Binary files, links, pipes, sockets and devices are
        refused, not shown.
        """
        path = _string_argument(arguments, "path", None)
        offset = _offset_argument(arguments)
        return await asyncio.to_thread(self._read, path, offset)

    @tool("search", input_schema=SEARCH_SCHEMA, title="Search files", annotations=READ_ONLY)
    async def search_files(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Find lines containing a text in the files under the file root (case-insensitive).

        Answers JSON: `matches` (path, line number, line), `truncated` when a limit stopped
        the search early (then `stopped` says which limit, how far it got and how to narrow
        the search), and how many files were searched or skipped.
        """
        query = _string_argument(arguments, "query", None)
        if not query:
            raise ToolError("`query` is empty: give the text to look for.")
        path = _string_argument(arguments, "path", ".")
        pattern = _string_argument(arguments, "glob", "")
        return await asyncio.to_thread(self._search, query, path, pattern)

    # ------------------------------------------------------------------ list

    def _list(self, path: str, offset: int) -> ToolResult:
        names = parts(path)
        fd = open_directory(self.root, path, names)
        try:
            with os.scandir(fd) as scan:
                found = sorted(scan, key=lambda entry: entry.name)
            page = found[offset : offset + self.page_size]
            entries = [_entry(entry) for entry in page]
        finally:
            os.close(fd)
        listing: dict[str, Any] = {
            "path": "/".join(names) or ".",
            "entries": entries,
            "total": len(found),
        }
        end = offset + len(page)
        if end < len(found):
            listing["next_offset"] = end
        return ToolResult.text(_compact(listing))

    # ------------------------------------------------------------------ read

    def _read(self, path: str, offset: int) -> ToolResult:
        fd = open_file(self.root, path, "read")
        try:
            size = os.fstat(fd).st_size
            if offset > size:
                raise ToolError(f"offset {offset} is past the end of {path!r} ({size} bytes).")
            data = os.pread(fd, self.max_read_bytes, offset)
            binary = looks_binary(data[:SNIFF_BYTES]) or (
                offset > 0 and looks_binary(os.pread(fd, SNIFF_BYTES, 0))
            )
        finally:
            os.close(fd)
        if binary:
            raise ToolError(
                f"{path!r} is a binary file ({size} bytes); read returns text files only."
            )
        text, used = _decode_prefix(data, complete=offset + len(data) >= size)
        if text is None:
            raise ToolError(
                f"{path!r} is not UTF-8 text ({size} bytes); read returns text files only."
            )
        blocks = [{"type": "text", "text": text}]
        end = offset + used
        if end < size:
            blocks.append(
                {
                    "type": "text",
                    "text": f"[Truncated: bytes {offset}-{end - 1} of {size} shown. Call read "
                    f"again with offset={end} to continue.]",
                }
            )
        return ToolResult(blocks)

    # ------------------------------------------------------------------ search

    def _search(self, query: str, path: str, pattern: str) -> ToolResult:
        names = parts(path)
        walk = Search(self, query.casefold(), pattern)
        stopped: str | None = None
        fd, directory = open_directory_or_file(self.root, path, names, "search")
        try:
            if directory:
                walk.tree(fd, "/".join(names))
            else:
                walk.single(fd, "/".join(names))
        except Stopped as stop:
            stopped = stop.message
        found: dict[str, Any] = {
            "query": query,
            "matches": walk.matches,
            "truncated": stopped is not None,
            "files_searched": walk.searched,
        }
        if walk.binary or walk.too_large or walk.not_regular or walk.unreadable:
            found["skipped"] = {
                "binary": walk.binary,
                "too_large": walk.too_large,
                "not_regular": walk.not_regular,
                "unreadable": walk.unreadable,
            }
        if stopped is not None:
            found["stopped"] = stopped
        return ToolResult.text(_compact(found))


def _entry(entry: os.DirEntry[str]) -> dict[str, Any]:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return {"name": entry.name, "type": "other"}
    if stat.S_ISLNK(info.st_mode):
        return {"name": entry.name, "type": "symlink"}  # listed so the model knows, never followed
    if stat.S_ISDIR(info.st_mode):
        return {"name": entry.name, "type": "directory"}
    if stat.S_ISREG(info.st_mode):
        return {"name": entry.name, "type": "file", "size": info.st_size}
    return {"name": entry.name, "type": "other"}


def _string_argument(arguments: dict[str, Any], name: str, default: str | None) -> str:
    if name not in arguments or arguments[name] is None:
        if default is None:
            raise ToolError(f"`{name}` is missing.")
        return default
    value = arguments[name]
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string, got {json_type(value)}.")
    return value


def _offset_argument(arguments: dict[str, Any]) -> int:
    value = arguments.get("offset", 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolError(f"`offset` must be a non-negative integer, got {json.dumps(value)}.")
    return value


def _decode_prefix(chunk: bytes, *, complete: bool) -> tuple[str | None, int]:
    """Decode `chunk` as UTF-8; a character cut at the end (not at the file's end) is left for the next read."""
    try:
        return chunk.decode("utf-8"), len(chunk)
    except UnicodeDecodeError as exc:
        if complete or exc.start < len(chunk) - 3 or exc.reason != "unexpected end of data":
            return None, 0
        return chunk[: exc.start].decode("utf-8"), exc.start


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
