"""The compile store: the folder of entries on disk, each one source's Triton cache as an
evaluation left it, with a manifest of its files (kgb.evaluate.compile_cache names the
folder and the entries an evaluation uses).

The copy trusts nothing of the workspace: regular files only, opened without following a
link, at most MAX_ENTRY_BYTES and MAX_ENTRY_FILES, written to a temporary folder under the
root and renamed into place, so that a reader never meets half an entry and two
evaluations storing one source leave one entry. An entry whose files do not match its
manifest is removed and counts as none. Restoring copies, so that the workspace never
shares an inode with the store. Past MAX_STORE_BYTES, the entries used longest ago go
(`evict`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kgb.evaluate.tree_removal import remove_tree

FORMAT = 1  # the layout of an entry; a new one makes new keys
MAX_ENTRY_BYTES = 256 << 20  # a bigger cache is not stored
MAX_ENTRY_FILES = 10_000  # files and folders
MIN_FREE_FRACTION = 0.10  # no entry is stored that could leave its disk fuller than this
# The store's size: past it, the entries used longest ago go. An agent's sweep makes an entry
# per attempt (a few MB each), never used again once the agent moves on.
MAX_STORE_BYTES = 10 << 30
EVICT_EVERY_S = 60.0  # a store is looked over for eviction at most this often (a stamp file)
EVICTED = ".evicted"
STALE_S = 3600.0  # a temporary folder this old was left by a store that died
MANIFEST = "manifest.json"
FILES = "files"
CHUNK = 1 << 20
MAX_GROUP_BYTES = 1 << 20  # Triton's group file names a kernel's few files: some hundred bytes


class NotStored(Exception):
    """Why a cache folder is not kept (too big, too many files, too little disk)."""


@dataclass(frozen=True)
class Entry:
    """One source's entry in the store at `root`."""

    root: Path
    key: str

    @property
    def path(self) -> Path:
        return self.root / self.key[:2] / self.key

    def restore(self, cache: Path) -> bool:
        """Copy the entry's files into the folder `cache`, which does not exist yet; False
        where there is no entry. One that is corrupt or unreadable counts as none: it is
        removed from the store, so that this evaluation can store a good one, and what was
        copied of it is removed from `cache`. Never raises: an entry's files are what a
        candidate left, and a restore that raised ended every later evaluation of that
        source as an infrastructure failure (session 49: a group file of 200,000 `[` made
        json.loads raise RecursionError, a file 1,500 folders deep made Path.mkdir do so),
        so one that fails in any way is removed and counts as none."""
        try:
            return self._restore(cache)
        except Exception:  # noqa: BLE001 - whatever the entry holds, this evaluation compiles afresh
            remove_tree(cache)
            self._discard()
            return False

    def _restore(self, cache: Path) -> bool:
        try:
            manifest = json.loads((self.path / MANIFEST).read_bytes())
        except OSError:  # none, or one this process may not read
            return False
        except ValueError:
            self._discard()
            return False
        try:
            for name, size, digest in _listed(manifest):
                _copy_checked(self.path / FILES / name, cache / name, size, digest)
        except ValueError:  # the entry is corrupt
            remove_tree(cache)
            self._discard()
            return False
        except OSError:  # the workspace could not take it (a full disk): the entry stays
            remove_tree(cache)
            return False
        _relocate_groups(cache)
        with contextlib.suppress(OSError):
            os.utime(self.path)  # used now: eviction goes by the entry folder's time
        return True

    def keep(self, cache: Path) -> str | None:
        """Store the regular files under `cache` as this entry, unless the store has it.
        Returns why they were not stored, a line for the verdict's logs; None where they
        were, or needed not be (the entry exists, or nothing was compiled)."""
        if self.path.exists() or _nothing_in(cache):
            return None
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            _remove_stale(self.root)
            _check_free(self.root)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        except NotStored as e:
            return f"compile cache not stored: {e}"
        except OSError as e:
            return f"compile cache not stored: {self.root} cannot be written ({e})"
        try:
            files = _copy_tree(cache, tmp / FILES)
            if not files:
                return None
            manifest = {"format": FORMAT, "files": files}
            (tmp / MANIFEST).write_text(json.dumps(manifest))
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            os.rename(tmp, self.path)  # fails where the entry exists (another writer was first)
        except NotStored as e:
            return f"compile cache not stored: {e}"
        except OSError as e:
            return None if self.path.exists() else f"compile cache not stored: {e}"
        finally:
            remove_tree(tmp)
        evict(self.root)
        return None

    def _discard(self) -> None:
        """Take the entry out of the store: renamed away first, so that no reader meets it
        half deleted."""
        try:
            aside = Path(tempfile.mkdtemp(prefix=".discard-", dir=self.root))
        except OSError:
            return
        with contextlib.suppress(OSError):
            os.rename(self.path, aside / "entry")
        remove_tree(aside)


def evict(root: Path, limit: int | None = None, every_s: float | None = None) -> list[str]:
    """Take the entries used longest ago out of the store until what it holds is within
    `limit` bytes (MAX_STORE_BYTES); at most once per `every_s` (EVICT_EVERY_S) over all the
    processes that share the store. Returns the keys taken out."""
    limit = MAX_STORE_BYTES if limit is None else limit
    every_s = EVICT_EVERY_S if every_s is None else every_s
    stamp = root / EVICTED
    try:
        if time.time() - stamp.stat().st_mtime < every_s:
            return []
    except FileNotFoundError:
        pass
    except OSError:
        return []
    with contextlib.suppress(OSError):
        stamp.touch()
    entries = []
    for path in root.glob("*/*"):
        if path.parent.name.startswith(".") or len(path.name) != 64:
            continue
        try:
            used = path.stat().st_mtime
            size = sum(s for _, s, _ in _listed(json.loads((path / MANIFEST).read_bytes())))
        except (OSError, ValueError):
            continue  # being stored or taken out meanwhile, or corrupt (its next restore removes it)
        entries.append((used, size, path))
    total = sum(size for _, size, _ in entries)
    gone = []
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        Entry(root, path.name)._discard()
        total -= size
        gone.append(path.name)
    return gone


def _relocate_groups(cache: Path) -> None:
    """Point Triton's group files at the files where they are now. A compiled kernel's
    files are found through `<hash>/__grp__<name>.json`, which names each file by its
    absolute path, in the workspace that compiled it: in another workspace every path was
    missing, Triton compiled again, and the cache saved nothing (on the H200, session 19,
    a second evaluation of four sources compiled for 101 s against 100 s). A group's files
    sit in its own folder, so each path becomes that folder's file of the same name; a
    group file that is not what Triton writes is removed (the kernel compiles again): one
    too large, too deep for json (RecursionError), or of another shape."""
    for group in cache.glob("*/__grp__*"):
        if group.is_symlink() or not group.is_file():  # a folder of that name is not Triton's
            continue
        try:
            with open(group, "rb") as f:  # the restore made it: a regular file, no link
                text = f.read(MAX_GROUP_BYTES + 1)
            if len(text) > MAX_GROUP_BYTES:
                raise ValueError("not a group file of Triton's")
            paths = json.loads(text)["child_paths"]
            moved = {str(name): str(group.parent / PurePosixPath(str(path)).name) for name, path in paths.items()}
            group.write_text(json.dumps({"child_paths": moved}))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            group.unlink(missing_ok=True)


def _listed(manifest: object) -> list[tuple[str, int, str]]:
    """The files a manifest lists, each a relative path inside the entry; ValueError for a
    manifest that is not one."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError("not a manifest of this format")
    listed = manifest.get("files")
    if not isinstance(listed, list):
        raise ValueError("no list of files")
    files = []
    for item in listed:
        if not (isinstance(item, list) and len(item) == 3):
            raise ValueError(f"bad file record {item!r}")
        name, size, digest = item
        path = PurePosixPath(name) if isinstance(name, str) else None
        if path is None or path.is_absolute() or ".." in path.parts or str(path) != name:
            raise ValueError(f"bad path {name!r}")
        if not isinstance(size, int) or not isinstance(digest, str):
            raise ValueError(f"bad file record {item!r}")
        files.append((name, size, digest))
    return files


def _copy_checked(source: Path, dest: Path, size: int, digest: str) -> None:
    """Copy one of the entry's files, checking it against its manifest record: ValueError
    where it is missing or differs."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise ValueError(f"{source}: {e.strerror}") from e
    try:
        copied, found = _copy_fd(fd, dest, size + 1)
    finally:
        os.close(fd)
    if copied != size or found != digest:
        raise ValueError(f"{source} does not match its manifest")


def _copy_fd(fd: int, dest: Path, limit: int) -> tuple[int, str]:
    """Copy at most `limit` bytes from `fd` into the new file `dest`; the bytes copied and
    their sha256."""
    sha = hashlib.sha256()
    copied = 0
    out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        while copied < limit:
            chunk = os.read(fd, min(CHUNK, limit - copied))
            if not chunk:
                break
            sha.update(chunk)
            os.write(out, chunk)  # a regular file takes the whole chunk
            copied += len(chunk)
    finally:
        os.close(out)
    return copied, sha.hexdigest()


def _nothing_in(folder: Path) -> bool:
    """Whether `folder` is missing or an empty folder (a link is not)."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        with os.scandir(folder) as listing:
            return next(listing, None) is None
    except FileNotFoundError:
        return True


def _copy_tree(source: Path, dest: Path) -> list[list[str | int]]:
    """Copy the regular files beneath the folder `source` into `dest`; a [path, size,
    sha256] record each. Links, devices, fifos and sockets are left out, and no link is
    followed: each folder is opened with O_NOFOLLOW and each name under it relative to the
    folder's descriptor, so that a candidate process still dying cannot swap a folder for a
    link between a look and an open. NotStored past the caps."""
    try:
        top = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise NotStored(f"{source.name} is not a folder ({e.strerror})") from e
    files: list[list[str | int]] = []
    total, seen = 0, 0
    folders = [(top, PurePosixPath())]
    try:
        while folders:
            fd, here = folders.pop()
            try:
                with os.scandir(fd) as listing:
                    names = [e.name for e in listing]
                (dest / here).mkdir(parents=True, exist_ok=True)
                for name in names:
                    seen += 1
                    if seen > MAX_ENTRY_FILES:
                        raise NotStored(f"the cache holds more than {MAX_ENTRY_FILES} files")
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                    if stat.S_ISDIR(mode):
                        child = os.open(name, flags | os.O_DIRECTORY, dir_fd=fd)
                        folders.append((child, here / name))
                    elif stat.S_ISREG(mode):
                        room = MAX_ENTRY_BYTES - total
                        size, digest = _copy_one(fd, name, dest / here / name, room)
                        files.append([str(here / name), size, digest])
                        total += size
            finally:
                os.close(fd)
    except BaseException:
        for fd, _ in folders:
            os.close(fd)
        raise
    return files


def _copy_one(folder: int, name: str, dest: Path, room: int) -> tuple[int, str]:
    """Copy the regular file `name` of the folder open as `folder`; its size and sha256.
    NotStored where it is bigger than `room`."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was looked at
            raise NotStored(f"{name} changed while it was copied")
        copied, digest = _copy_fd(fd, dest, room + 1)
    finally:
        os.close(fd)
    if copied > room:
        raise NotStored(f"the cache holds more than {MAX_ENTRY_BYTES >> 20} MB")
    return copied, digest


def _check_free(folder: Path) -> None:
    """NotStored where an entry of the largest size could leave the disk under
    MIN_FREE_FRACTION free: the store never fills the disk that evaluations write to."""
    disk = os.statvfs(folder)
    free, size = disk.f_bavail * disk.f_frsize, disk.f_blocks * disk.f_frsize
    if free - MAX_ENTRY_BYTES < MIN_FREE_FRACTION * size:
        raise NotStored(f"{free >> 20} MB free on its disk, under {MIN_FREE_FRACTION:.0%} of it")


def _remove_stale(folder: Path) -> None:
    """Remove the temporary folders of stores that died midway."""
    now = time.time()
    for tmp in [*folder.glob(".tmp-*"), *folder.glob(".discard-*")]:
        try:
            if now - tmp.lstat().st_mtime > STALE_S:
                remove_tree(tmp)
        except OSError:
            continue
