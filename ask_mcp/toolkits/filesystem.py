"""The FileSystem toolkit: read-only tools that list, read and search the files under one root directory.

Every path a model gives is resolved (symbolic links included) and must land inside the root:
absolute paths, `..` that climbs out and links that point out are refused with an error the
model can act on. Reads are bounded (`max_read_bytes`, continued with `offset`), text only
(binary files are named as such), listings are paged. Nothing here writes. Pure: no Django.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ask_mcp.protocol.jsonrpc import json_type
from ask_mcp.server.context import Context
from ask_mcp.server.errors import ToolError
from ask_mcp.server.toolkit import Toolkit, ToolResult, tool

SNIFF_BYTES: Final = 8192
"""How much of a file is looked at for a NUL byte, the mark of a binary file."""
LINE_PREVIEW: Final = 200
"""Search results show at most this many characters of a matching line."""
READ_ONLY: Final = {"readOnlyHint": True, "openWorldHint": False}
"""The annotations of every tool here: they read, and reach nothing outside the root."""

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
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"FileSystem: {name} must be a positive integer, got {value!r}")
        self.root = real
        self.max_read_bytes = max_read_bytes
        self.page_size = page_size
        self.max_matches = max_matches
        self.max_search_file_bytes = max_search_file_bytes

    # ------------------------------------------------------------------ tools

    @tool("list", input_schema=LIST_SCHEMA, title="List a directory", annotations=READ_ONLY)
    async def list_directory(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """List the entries of a directory under the file root, a page at a time.

        Answers JSON: `entries` (name, type file/directory/symlink/other, size of files),
        `total`, and `next_offset` when more entries remain (pass it as `offset`).
        """
        path = _string_argument(arguments, "path", ".")
        offset = _offset_argument(arguments)
        return await asyncio.to_thread(self._list, path, offset)

    @tool("read", input_schema=READ_SCHEMA, title="Read a text file", annotations=READ_ONLY)
    async def read_file(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Read a text file under the file root.

        Long files come back in pieces: a truncated read ends with a note giving the
        `offset` to continue from. Binary files are refused, not shown.
        """
        path = _string_argument(arguments, "path", None)
        offset = _offset_argument(arguments)
        return await asyncio.to_thread(self._read, path, offset)

    @tool("search", input_schema=SEARCH_SCHEMA, title="Search files", annotations=READ_ONLY)
    async def search_files(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Find lines containing a text in the files under the file root (case-insensitive).

        Answers JSON: `matches` (path, line number, line), `truncated` when the match limit
        was reached, and how many files were searched or skipped (binary, too large).
        """
        query = _string_argument(arguments, "query", None)
        if not query:
            raise ToolError("`query` is empty: give the text to look for.")
        path = _string_argument(arguments, "path", ".")
        pattern = _string_argument(arguments, "glob", "")
        return await asyncio.to_thread(self._search, query, path, pattern)

    # ------------------------------------------------------------------ paths

    def resolve(self, path: str) -> str:
        """The real path of `path` under the root.

        Raises:
            ToolError: the path is absolute, or leaves the root by `..` or a symbolic link.
        """
        if "\x00" in path:
            raise ToolError(f"{path!r} contains a NUL character; give a plain relative path.")
        if os.path.isabs(path):
            raise ToolError(
                f"{path!r} is an absolute path; paths are relative to the file root "
                "(for example 'notes/todo.md', or '.' for the root itself)."
            )
        real = os.path.realpath(os.path.join(self.root, path))
        if not self.contains(real):
            if ".." in Path(path).parts:
                raise ToolError(
                    f"{path!r} climbs out of the file root with '..'; only files under the "
                    "root can be reached."
                )
            raise ToolError(
                f"{path!r} goes through a symbolic link that points outside the file root; "
                "only files under the root can be reached."
            )
        return real

    def contains(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root + os.sep)

    def shown(self, real: str) -> str:
        """A real path as the model sees it: relative to the root, with `/`."""
        relative = os.path.relpath(real, self.root)
        return "." if relative == "." else Path(relative).as_posix()

    # ------------------------------------------------------------------ list

    def _list(self, path: str, offset: int) -> ToolResult:
        real = self.resolve(path)
        try:
            names = sorted(os.listdir(real))
        except FileNotFoundError:
            raise ToolError(f"{path!r} does not exist under the file root.") from None
        except NotADirectoryError:
            raise ToolError(
                f"{path!r} is a file, not a directory; use the read tool for files."
            ) from None
        except PermissionError:
            raise ToolError(f"{path!r} cannot be opened (permission denied).") from None
        page = names[offset : offset + self.page_size]
        entries = [self._entry(real, name) for name in page]
        listing: dict[str, Any] = {
            "path": self.shown(real),
            "entries": entries,
            "total": len(names),
        }
        end = offset + len(page)
        if end < len(names):
            listing["next_offset"] = end
        return ToolResult.text(_compact(listing))

    def _entry(self, directory: str, name: str) -> dict[str, Any]:
        full = os.path.join(directory, name)
        try:
            info = os.lstat(full)
        except OSError:
            return {"name": name, "type": "other"}
        if stat.S_ISLNK(info.st_mode):
            target = os.path.realpath(full)
            entry: dict[str, Any] = {"name": name, "type": "symlink"}
            if not self.contains(target):
                entry["outside_root"] = True  # listed so the model is not surprised, never followed
            elif os.path.isdir(target):
                entry["target_type"] = "directory"
            elif os.path.isfile(target):
                entry["target_type"] = "file"
            return entry
        if stat.S_ISDIR(info.st_mode):
            return {"name": name, "type": "directory"}
        if stat.S_ISREG(info.st_mode):
            return {"name": name, "type": "file", "size": info.st_size}
        return {"name": name, "type": "other"}

    # ------------------------------------------------------------------ read

    def _read(self, path: str, offset: int) -> ToolResult:
        real = self.resolve(path)
        if os.path.isdir(real):
            raise ToolError(f"{path!r} is a directory; use the list tool for directories.")
        data, size = self._read_bytes(path, real, offset, self.max_read_bytes)
        if offset > size:
            raise ToolError(f"offset {offset} is past the end of {path!r} ({size} bytes).")
        if _looks_binary(data[:SNIFF_BYTES]) or (offset > 0 and self._binary_head(real)):
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

    def _read_bytes(self, path: str, real: str, offset: int, limit: int) -> tuple[bytes, int]:
        try:
            # O_NOFOLLOW: the path was resolved already, so a link here means it changed since.
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise ToolError(f"{path!r} does not exist under the file root.") from None
        except PermissionError:
            raise ToolError(f"{path!r} cannot be opened (permission denied).") from None
        except OSError as exc:
            raise ToolError(f"{path!r} cannot be opened ({exc.strerror}).") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"{path!r} is not a regular file.")
            size = info.st_size
            handle.seek(offset)
            return handle.read(limit), size

    def _binary_head(self, real: str) -> bool:
        with open(real, "rb") as handle:
            return _looks_binary(handle.read(SNIFF_BYTES))

    # ------------------------------------------------------------------ search

    def _search(self, query: str, path: str, pattern: str) -> ToolResult:
        real = self.resolve(path)
        if not os.path.exists(real):
            raise ToolError(f"{path!r} does not exist under the file root.")
        needle = query.casefold()
        matches: list[dict[str, Any]] = []
        searched = binary = too_large = 0
        truncated = False
        for file in self._files(real):
            if pattern and not fnmatch.fnmatch(os.path.basename(file), pattern):
                continue
            try:
                size = os.path.getsize(file)
                if size > self.max_search_file_bytes:
                    too_large += 1
                    continue
                with open(file, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if _looks_binary(data[:SNIFF_BYTES]):
                binary += 1
                continue
            searched += 1
            text = data.decode("utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line.casefold():
                    if len(matches) == self.max_matches:
                        truncated = True
                        break
                    matches.append(
                        {"path": self.shown(file), "line": number, "text": line[:LINE_PREVIEW]}
                    )
            if truncated:
                break
        found: dict[str, Any] = {
            "query": query,
            "matches": matches,
            "truncated": truncated,
            "files_searched": searched,
        }
        if binary or too_large:
            found["skipped"] = {"binary": binary, "too_large": too_large}
        return ToolResult.text(_compact(found))

    def _files(self, real: str) -> Iterator[str]:
        """Regular files under `real`, sorted, never leaving the root through a link."""
        if os.path.isfile(real):
            yield real
            return
        for directory, subdirs, files in os.walk(real, followlinks=False):
            subdirs.sort()
            for name in sorted(files):
                full = os.path.join(directory, name)
                target = os.path.realpath(full)
                if self.contains(target) and os.path.isfile(target):
                    yield target if target == full else full


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


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head


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
