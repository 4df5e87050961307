"""Walking a FileSystem toolkit's root by descriptors: the open flags, bounded reads and the search walk; knows no wire and no tools.

Every open here is relative to an open directory and never follows a link; the search walk
holds one descriptor per level and stops at the toolkit's file, byte, time and match limits
with a message saying which (:class:`Stopped`). The toolkit (:mod:`ask_mcp.toolkits.filesystem`)
resolves the model's paths and shapes the results.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import time
from typing import Any, Final, Protocol

SNIFF_BYTES: Final = 8192
"""How much of a file is looked at for a NUL byte, the mark of a binary file."""
LINE_PREVIEW: Final = 200
"""Search results show at most this many characters of a matching line."""
DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How each directory on a path is opened: as a directory only, never through a link."""
FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""How a file is opened: never through a link, and at once even if it became a FIFO meanwhile."""
CHANGED_KIND: Final = frozenset({errno.ELOOP, errno.ENOTDIR, errno.ENXIO})
"""What opening an entry answers when it became a link (ELOOP), a file where a directory was
(ENOTDIR) or a socket (ENXIO) since it was looked at."""


class Limits(Protocol):
    """The toolkit options a search is held to (the FileSystem toolkit has them all)."""

    max_search_files: int
    max_search_bytes: int
    max_search_seconds: float
    max_search_file_bytes: int
    max_matches: int


class Stopped(Exception):
    """A search limit was reached; `message` says which, how far the search got, and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Search:
    """One search's walk and tallies, held to the toolkit's file, byte, time and match limits."""

    def __init__(self, kit: Limits, needle: str, pattern: str) -> None:
        self.kit = kit
        self.needle = needle
        self.pattern = pattern
        self.deadline = time.monotonic() + kit.max_search_seconds
        self.matches: list[dict[str, Any]] = []
        self.looked_at = self.bytes_read = 0
        self.searched = self.binary = self.too_large = self.not_regular = self.unreadable = 0

    def stop(self, cap: str, limit: float, where: str) -> Stopped:
        files = f"{self.looked_at} file" + ("" if self.looked_at == 1 else "s")
        value = f"{limit:g}" if isinstance(limit, float) else str(limit)  # 64 MiB, not 6.7e+07
        return Stopped(
            f"Search stopped at the limit {cap}={value} after looking at {files} "
            f"({self.bytes_read} bytes read); {where} and everything after it in the walk "
            f"was not searched. Narrow the search with `path` or `glob`, or raise {cap} in "
            "the FileSystem toolkit's settings."
        )

    def skip(self, exc: OSError) -> None:
        """Count an entry that could not be opened: it became a link or socket, or is unreadable."""
        if exc.errno in CHANGED_KIND:
            self.not_regular += 1
        else:
            self.unreadable += 1

    def check_time(self, shown: str) -> None:
        if time.monotonic() >= self.deadline:
            raise self.stop("max_search_seconds", self.kit.max_search_seconds, repr(shown))

    def tree(self, top: int, shown: str) -> None:
        """Search the directory open as `top` (closed here): a directory's files, then its subdirectories, sorted."""
        # One descriptor per level of the walk, not per directory seen: a directory's
        # subdirectories are opened one at a time, when the walk reaches each.
        stack: list[tuple[int, str, list[str]]] = [(top, shown, [])]
        try:
            stack[-1] = (top, shown, self.directory(top, shown))
            while stack:
                fd, here, pending = stack[-1]
                if not pending:
                    os.close(fd)
                    stack.pop()
                    continue
                name = pending.pop()
                below = f"{here}/{name}" if here else name
                self.check_time(below)
                try:
                    child = os.open(name, DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as exc:  # swapped for a link or a file since the scan, or gone
                    self.skip(exc)
                    continue
                stack.append((child, below, []))  # on the stack first: closed if the scan stops
                stack[-1] = (child, below, self.directory(child, below))
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    def directory(self, fd: int, here: str) -> list[str]:
        """Search the files of one directory; answers its subdirectories, last first (a stack)."""
        files: list[str] = []
        subdirectories: list[str] = []
        self.check_time(here or ".")
        try:
            scan = os.scandir(fd)
        except OSError as exc:
            self.skip(exc)
            return []
        with scan:
            for entry in scan:  # in the directory's own order: the limit names the directory
                self.check_time(here or ".")
                if entry.is_dir(follow_symlinks=False):
                    subdirectories.append(entry.name)
                elif entry.is_file(follow_symlinks=False):
                    files.append(entry.name)
                else:  # links, pipes, sockets, devices: never opened
                    self.not_regular += 1
        for name in sorted(files):
            if not self.pattern or fnmatch.fnmatch(name, self.pattern):
                self.file(fd, name, f"{here}/{name}" if here else name)
        return sorted(subdirectories, reverse=True)

    def file(self, parent: int, name: str, shown: str) -> None:
        """Search one file the scan saw as regular, unless it changed kind since (then skipped)."""
        self.check_time(shown)
        if self.looked_at >= self.kit.max_search_files:
            raise self.stop("max_search_files", self.kit.max_search_files, repr(shown))
        try:
            fd = os.open(name, FILE_FLAGS, dir_fd=parent)
        except OSError as exc:  # swapped for a link or a socket, or gone since the scan
            self.skip(exc)
            return
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                self.opened(fd, shown)
            else:  # swapped for a pipe or a device since the scan
                self.not_regular += 1
        finally:
            os.close(fd)

    def opened(self, fd: int, shown: str) -> None:
        """Search the regular file open as `fd`, within the byte and match limits."""
        size = os.fstat(fd).st_size
        if size > self.kit.max_search_file_bytes:
            self.looked_at += 1
            self.too_large += 1
            return
        if self.bytes_read + size > self.kit.max_search_bytes:
            raise self.stop("max_search_bytes", self.kit.max_search_bytes, repr(shown))
        self.looked_at += 1
        data = read_all(fd, self.kit.max_search_file_bytes)
        self.bytes_read += len(data)
        if looks_binary(data[:SNIFF_BYTES]):
            self.binary += 1
            return
        self.searched += 1
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if self.needle in line.casefold():
                if len(self.matches) == self.kit.max_matches:
                    raise self.stop(
                        "max_matches", self.kit.max_matches, f"{shown!r} from line {number}"
                    )
                self.matches.append({"path": shown, "line": number, "text": line[:LINE_PREVIEW]})


def read_all(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the start of `fd` (a file may grow between fstat and read)."""
    chunks: list[bytes] = []
    total = 0
    while total < limit and (chunk := os.read(fd, limit - total)):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head
