"""The search walk and its limits: one descriptor per level, stopped at a file, byte, time or match limit.

The walk starts at a directory (or the one regular file) the toolkit opened for it, and goes
down through :mod:`.confined`'s opens only, so it never follows a link either. It holds one
descriptor per level of the tree, not one per directory seen. Within a directory it searches the
files first, then the subdirectories, both sorted, so the place a limit message names ("... and
everything after it in the walk was not searched") is the same on every run. What it cannot
open, or should not (links, pipes, sockets, devices, binary or too large files), it counts as
skipped rather than refusing. It stops at the first limit reached (files looked at, bytes read,
seconds, matches) with a message that says which limit, how far it got and how to narrow the
search (:class:`Stopped`): before these limits a search had no bound but its matches, and one
search of a big tree held a worker thread for as long as it took. Knows no wire and no tools.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from typing import Any, Final, Protocol

from ask_mcp.toolkits.filesystem.confined import (
    CHANGED_KIND,
    SNIFF_BYTES,
    looks_binary,
    open_child_directory,
    open_child_file,
    read_all,
)

LINE_PREVIEW: Final = 200
"""Search results show at most this many characters of a matching line."""


class Limits(Protocol):
    """The toolkit options a search is held to (the FileSystem toolkit has them all).

    A protocol rather than the FileSystem class: the toolkit imports this module, so naming the
    class here would be an import back, a cycle.
    """

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
        # Against the limits: files looked at (max_search_files) and bytes read (max_search_bytes).
        self.looked_at = 0
        self.bytes_read = 0
        # What the result reports: files searched line by line, then each reason one was skipped.
        self.searched = 0
        self.binary = 0  # a NUL in its first SNIFF_BYTES
        self.too_large = 0  # over max_search_file_bytes: looked at, not read
        self.not_regular = 0  # a link, pipe, socket or device, or changed kind since the scan
        self.unreadable = 0  # could not be opened or scanned: permission denied, or gone

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
                    child = open_child_directory(fd, name)
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
            fd = open_child_file(parent, name)
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

    def single(self, fd: int, shown: str) -> None:
        """Search the one regular file a search's path named, open as `fd` (closed here)."""
        try:
            self.check_time(shown)
            if not self.pattern or fnmatch.fnmatch(os.path.basename(shown), self.pattern):
                self.opened(fd, shown)
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
