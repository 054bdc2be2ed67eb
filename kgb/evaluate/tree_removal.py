"""Removing a folder that a candidate or an agent could write into, whatever they left there.

`shutil.rmtree` recurses once per level, and Python 3.11's version of it raises
RecursionError, which `ignore_errors` does not cover, for a tree some 1,000 levels deep: a
candidate that nested 1,500 folders in its workspace at import made the harness raise while
it removed the evaluation's folder (an infrastructure failure: no verdict, retried by every
run), and the folder it left made every later harness on the host raise as it swept the
folders of dead harnesses (`workdirs.remove_left_behind`, session 49's red team). A walk that
holds a path or a descriptor per level fails too, past PATH_MAX or the descriptor limit.

So no walk here goes deeper than one level: a folder met inside the tree is first moved up to
be a child of the tree's top (a rename, within the one file system), and emptied from there.
Every name is opened or removed relative to its folder's descriptor, no link is followed, and
a folder its owner made unreadable (chmod 000, which Landlock does not govern) is given back
to its owner first, so that what the tree holds can neither send the walk elsewhere nor keep
it from its end. Nothing found in the tree makes it raise: what cannot be removed stays.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat

_MOVED = ".kgb-removing-"  # the names of folders moved up to the top, with a count
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | os.PathLike[str]) -> bool:
    """Remove the folder `path` and everything in it; whether it is gone. A `path` that is a
    link or a file is left as it is."""
    path = os.fspath(path)
    try:
        top = _open_folder(path, None)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        _empty(top)
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _empty(top: int) -> None:
    """Remove what the folder open as `top` holds, as far as it can be. Each folder to empty is
    `top` itself or a child of it (one moved up), so only two descriptors are open at once."""
    count = itertools.count()
    pending: list[str | None] = [None]  # None: top itself; else a child of top
    while pending:
        name = pending.pop()
        try:
            fd = top if name is None else _open_folder(name, top)
        except OSError:  # not a folder after all (changed since it was listed), or gone
            _unlink(name, top)
            continue
        try:
            for entry, is_folder in _listing(fd):
                if not is_folder:
                    _unlink(entry, fd)
                elif fd == top:
                    pending.append(entry)
                elif (moved := _move_up(entry, fd, top, count)) is not None:
                    pending.append(moved)
        finally:
            if fd != top:
                os.close(fd)
        if name is not None:
            try:
                os.rmdir(name, dir_fd=top)
            except OSError:  # something was left in it, or came meanwhile
                pass


def _open_folder(name: str, parent: int | None) -> int:
    """The folder `name` (relative to `parent`'s descriptor, if given) opened for listing,
    never through a link, with its owner's rights given back first (`_held`)."""
    held = _held(name, parent)
    try:
        return os.open(".", _FOLDER, dir_fd=held)
    finally:
        os.close(held)


def _held(name: str, parent: int | None) -> int:
    """The folder `name` held by an O_PATH descriptor, never through a link, once its owner
    may read, write and enter it: the change is made through the descriptor itself, so it
    reaches that folder whatever its name points to by then."""
    held = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        mode = os.fstat(held).st_mode
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            # fchmod refuses an O_PATH descriptor; its /proc link reaches the folder itself
            os.chmod(f"/proc/self/fd/{held}", stat.S_IMODE(mode) | stat.S_IRWXU)
    except OSError:
        pass  # not its owner (root needs no rights), or no /proc: left as it is
    return held


def _listing(fd: int) -> list[tuple[str, bool]]:
    """The names in the folder open as `fd`, and whether each is a folder (a link is not)."""
    try:
        with os.scandir(fd) as entries:
            return [(e.name, _is_folder(e)) for e in entries]
    except OSError:
        return []


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _unlink(name: str | None, parent: int) -> None:
    if name is None:
        return
    try:
        os.unlink(name, dir_fd=parent)
    except OSError:
        pass


def _move_up(name: str, parent: int, top: int, count: itertools.count[int]) -> str | None:
    """Move the folder `name` of `parent` into `top` under a name of its own; that name, or
    None where it could not be moved (it stays, and so does its parent)."""
    for _ in range(100):
        moved = f"{_MOVED}{next(count)}"
        try:
            os.rename(name, moved, src_dir_fd=parent, dst_dir_fd=top)
        except PermissionError:  # a folder moved to a new parent must be writable (its "..")
            try:
                os.close(_held(name, parent))
                os.rename(name, moved, src_dir_fd=parent, dst_dir_fd=top)
            except OSError:
                return None
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR, errno.EINVAL):
                continue  # the tree holds that name already: the next one
            return None
        return moved
    return None
