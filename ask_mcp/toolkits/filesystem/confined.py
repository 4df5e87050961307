"""Every descriptor the FileSystem toolkit opens: relative to its parent, never through a link.

A model's path becomes a list of names (:func:`parts`: no NUL, nothing absolute, no `..`), and
each name is opened relative to its parent's open descriptor with O_NOFOLLOW, from a descriptor
of the root down. No path string is ever resolved and then opened again: that gap is how a
directory swapped for a link while reads ran once carried 26 of 2,000 reads outside the root
(issue 20). The fault tests (tests/interaction/test_faults.py) swap a directory for a link out
2,000 times and none escape.

Only regular files are opened for reading. What a name is gets looked at first (lstat), so a
FIFO or device is never opened at all; the open itself uses O_NONBLOCK, so a FIFO swapped in
between the look and the open cannot block the read (a FIFO once blocked `fs_read` forever),
and what was opened is looked at again (fstat). A link, a directory where a file was wanted, a
pipe, a socket or a device is refused with a message that names it and says what to do.

The search walk (:mod:`.search`) opens through :func:`open_child_directory` and
:func:`open_child_file` too, and counts what it cannot open rather than refusing it. Reads of
what was opened are bounded (:func:`read_all`), and a NUL near the start marks a file as binary
(:func:`looks_binary`), which neither reading nor searching shows. Knows no tool arguments and
no wire. Linux (and other POSIX systems with `dir_fd` and O_NOFOLLOW), where the product runs.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Final

from ask_mcp.server.errors import ToolError

DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How each directory on a path is opened: as a directory only, never through a link."""
FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""How a file is opened: never through a link, and at once even if it became a FIFO meanwhile."""
CHANGED_KIND: Final = frozenset({errno.ELOOP, errno.ENOTDIR, errno.ENXIO})
"""What opening an entry answers when it became a link (ELOOP), a file where a directory was
(ENOTDIR) or a socket (ENXIO) since it was looked at."""
SNIFF_BYTES: Final = 8192
"""How much of a file is looked at for a NUL byte, the mark of a binary file."""


# ------------------------------------------------------------------ paths


def parts(path: str) -> list[str]:
    """The names `path` goes down through from the root (`[]` for the root itself).

    Raises:
        ToolError: the path holds a NUL, is absolute, or has a `..` part.
    """
    if "\x00" in path:
        raise ToolError(f"{path!r} contains a NUL character; give a plain relative path.")
    if os.path.isabs(path):
        raise ToolError(
            f"{path!r} is an absolute path; paths are relative to the file root "
            "(for example 'notes/todo.md', or '.' for the root itself)."
        )
    names = [name for name in path.split("/") if name not in ("", ".")]
    if ".." in names:
        raise ToolError(
            f"{path!r} contains '..'; paths only go down from the file root, so give "
            "the path without '..' (for example 'notes/todo.md')."
        )
    return names


# ------------------------------------------------------------------ opening


def open_child_directory(parent: int, name: str) -> int:
    """Open the directory `name` in the directory open as `parent`, never through a link.

    Raises:
        OSError: it is not a directory now; `errno` is in CHANGED_KIND when it became a link or
            a file since it was looked at.
    """
    return os.open(name, DIRECTORY_FLAGS, dir_fd=parent)


def open_child_file(parent: int, name: str) -> int:
    """Open `name` in the directory open as `parent` to read it: never through a link, never waiting.

    The descriptor is non-blocking, so a FIFO swapped in since `name` was looked at opens at once
    instead of blocking; the caller checks what it opened (fstat) before reading.

    Raises:
        OSError: it could not be opened; `errno` is in CHANGED_KIND when it became a link or a
            socket since it was looked at.
    """
    return os.open(name, FILE_FLAGS, dir_fd=parent)


def open_directory(root: str, path: str, names: list[str]) -> int:
    """A descriptor of the directory `names` leads to, opened one name at a time, never through a link.

    Each name is opened relative to its parent's descriptor with O_NOFOLLOW, so a part swapped
    for a symbolic link between two calls is refused, never followed: there is no moment
    when a path string is resolved and then opened again. The caller closes the descriptor.

    Raises:
        ToolError: a part is missing, a link, or not a directory.
    """
    fd = os.open(root, DIRECTORY_FLAGS)
    try:
        for index, name in enumerate(names):
            try:
                child = open_child_directory(fd, name)
            except OSError as exc:
                raise _refusal(path, names[: index + 1], fd, exc) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(root: str, path: str, tool_name: str) -> int:
    """A blocking descriptor of the regular file `path` names; anything else is refused unopened.

    Raises:
        ToolError: the path is bad, or names no regular file (`tool_name` says who refuses).
    """
    names = parts(path)
    if not names:
        raise ToolError(f"{path!r} is a directory; use the list tool for directories.")
    parent = open_directory(root, path, names[:-1])
    try:
        return _open_regular(path, names, parent, tool_name)
    finally:
        os.close(parent)


def open_directory_or_file(
    root: str, path: str, names: list[str], tool_name: str
) -> tuple[int, bool]:
    """What `names` leads to, opened: `(fd, True)` for a directory, `(fd, False)` for a regular file.

    A search may start at either; anything else (a link, a pipe, a socket, a device) is refused
    unopened. The caller closes the descriptor.

    Raises:
        ToolError: a part is missing, a link, or not a directory, or the last is neither a
            directory nor a regular file.
    """
    if not names:
        return open_directory(root, path, names), True
    parent = open_directory(root, path, names[:-1])
    try:
        try:
            mode = os.stat(names[-1], dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
            raise ToolError(f"{path!r} does not exist under the file root.") from None
        if stat.S_ISDIR(mode):
            try:
                return open_child_directory(parent, names[-1]), True
            except OSError as exc:
                raise _refusal(path, names, parent, exc) from None
        return _open_regular(path, names, parent, tool_name), False  # one file: a regular one
    finally:
        os.close(parent)


def _open_regular(path: str, names: list[str], parent: int, tool_name: str) -> int:
    """Open names[-1] in `parent` if it is a regular file, without following a link or waiting on a pipe.

    It is looked at first (lstat), so a FIFO or device is never opened at all; the open then uses
    O_NOFOLLOW and O_NONBLOCK and is checked again (fstat), so a swap between the two is refused
    too, and a FIFO swapped in cannot block the read (O_NONBLOCK opens a FIFO at once).
    """
    name, shown = names[-1], "/".join(names)
    try:
        mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        raise ToolError(f"{path!r} does not exist under the file root.") from None
    if refused := _refused_kind(path, shown, mode, tool_name, final=True):
        raise refused
    try:
        fd = open_child_file(parent, name)
    except FileNotFoundError:
        raise ToolError(f"{path!r} does not exist under the file root.") from None
    except PermissionError:
        raise ToolError(f"{path!r} cannot be opened (permission denied).") from None
    except OSError as exc:
        if exc.errno in CHANGED_KIND:
            raise ToolError(f"{path!r} changed while it was being opened; try again.") from None
        raise ToolError(f"{path!r} cannot be opened ({exc.strerror}).") from None
    mode = os.fstat(fd).st_mode
    if refused := _refused_kind(path, shown, mode, tool_name, final=True):
        os.close(fd)
        raise refused
    os.set_blocking(fd, True)  # a regular file ignores O_NONBLOCK; cleared so reads are plain
    return fd


# ------------------------------------------------------------------ refusals


def _refusal(path: str, reached: list[str], parent: int, exc: OSError) -> ToolError:
    """Why `reached` (a prefix of the path) could not be opened, from what it is now."""
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"{path!r} does not exist under the file root.")
    if isinstance(exc, PermissionError):
        return ToolError(f"{path!r} cannot be opened (permission denied).")
    try:
        mode = os.stat(reached[-1], dir_fd=parent, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return ToolError(f"{path!r} does not exist under the file root.")
    except OSError:
        return ToolError(f"{path!r} cannot be opened ({exc.strerror}).")
    return _refused_kind(path, "/".join(reached), mode, "list", final=False) or ToolError(
        f"{path!r} changed while it was being opened; try again."
    )


def _refused_kind(
    path: str, reached: str, mode: int, tool_name: str, *, final: bool
) -> ToolError | None:
    """The refusal of `reached` being what `mode` says, or None when it is what was wanted.

    `final`: `reached` is the file a read opens (a regular file is wanted); else a directory
    the path goes through (a directory is wanted).
    """
    if stat.S_ISREG(mode) if final else stat.S_ISDIR(mode):
        return None
    if stat.S_ISLNK(mode):
        where = "is" if reached == _plain(path) else f"goes through {reached!r},"
        return ToolError(
            f"{path!r} {where} a symbolic link; links under the file root are never followed, "
            "so give the path of the file or directory itself."
        )
    if final and stat.S_ISDIR(mode):
        return ToolError(f"{path!r} is a directory; use the list tool for directories.")
    kind = _kind(mode)
    if not final and reached == _plain(path):  # the directory a listing or search wanted
        if stat.S_ISREG(mode):
            return ToolError(f"{path!r} is a file, not a directory; use the read tool for files.")
        return ToolError(f"{path!r} is {kind}, not a directory.")
    if not final:
        return ToolError(f"{path!r} goes through {reached!r}, which is {kind}, not a directory.")
    return ToolError(
        f"{path!r} is {kind}, not a regular file; {tool_name} opens regular files only "
        "(never pipes, sockets or devices)."
    )


def _plain(path: str) -> str:
    return "/".join(name for name in path.split("/") if name not in ("", "."))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


# ------------------------------------------------------------------ reading


def read_all(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the start of `fd` (a file may grow between fstat and read)."""
    chunks: list[bytes] = []
    total = 0
    while total < limit and (chunk := os.read(fd, limit - total)):
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def looks_binary(head: bytes) -> bool:
    """Whether `head` (a file's first SNIFF_BYTES) holds a NUL: text files never do."""
    return b"\x00" in head
