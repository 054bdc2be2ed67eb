"""The compile cache (kgb.evaluate.compile_cache): an evaluation starts with what earlier
evaluations of the same source compiled, and with nothing of any other source's."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kgb import operators
from kgb.config import ChipConfig, Config, EvalConfig, ExpertConfig, ModelConfig, SourceConfig
from kgb.evaluate import EvalSettings, Status, compile_cache, compile_store, evaluate
from kgb.evaluate.compile_store import Entry
from kgb.evaluate.verdict import CacheUse, Verdict
from kgb.identity import Judging
from kgb.preflight import check_settings
from kgb.tracking import encoding, events

# A softmax candidate that reports what its Triton cache held when it was imported, after
# leaving a file there: the file comes back only to evaluations of the same source.
REPORTER = """
import os

import triton

CACHE = os.environ["TRITON_CACHE_DIR"]
FOUND = sorted(os.listdir(CACHE)) if os.path.isdir(CACHE) else []
os.makedirs(CACHE, exist_ok=True)
with open(os.path.join(CACHE, "left-by-an-earlier-evaluation"), "w") as f:
    f.write("compiled")
raise RuntimeError(f"the cache held {FOUND}")


def softmax_int(self, dim, dtype=None):
    pass
"""
EMPTY = "the cache held []"
HELD = "the cache held ['left-by-an-earlier-evaluation']"


def smoke(store: Path | None) -> EvalSettings:
    return EvalSettings(
        device="cpu", case_tags=("smoke",), timeout_s=120, compile_cache=store and str(store)
    )


@pytest.fixture(scope="module", autouse=True)
def any_disk():
    """The store refuses entries on a disk under 10% free; these tests are about everything
    else, and a shared machine's disk is sometimes that full (a CI run failed on it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compile_store, "MIN_FREE_FRACTION", 0.0)
        yield


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


@pytest.fixture(scope="module")
def store(softmax, tmp_path_factory):
    """A store that holds what one evaluation of REPORTER left (it failed: whatever the
    verdict, the cache is kept)."""
    root = tmp_path_factory.mktemp("store")
    verdict = evaluate(REPORTER, softmax, smoke(root))
    assert verdict.status == Status.RUNTIME_ERROR and EMPTY in verdict.message, verdict.message
    assert verdict.compile_cache == CacheUse.MISS
    return root


def test_a_second_evaluation_starts_with_what_the_first_left(softmax, store):
    verdict = evaluate(REPORTER, softmax, smoke(store))
    assert HELD in verdict.message, verdict.message
    assert verdict.compile_cache == CacheUse.HIT


def test_another_source_never_sees_it(softmax, store):
    verdict = evaluate(REPORTER + "\n# one more line\n", softmax, smoke(store))
    assert EMPTY in verdict.message, verdict.message
    assert verdict.compile_cache == CacheUse.MISS


def test_off_means_an_empty_cache(softmax, store):
    verdict = evaluate(REPORTER, softmax, smoke(None))
    assert EMPTY in verdict.message, verdict.message
    assert verdict.compile_cache == CacheUse.OFF


def test_a_cache_too_big_to_keep_is_named_in_the_logs(softmax, tmp_path, monkeypatch):
    monkeypatch.setattr(compile_store, "MAX_ENTRY_BYTES", 4)  # the candidate leaves 8 bytes
    verdict = evaluate(REPORTER, softmax, smoke(tmp_path))
    assert EMPTY in verdict.message, verdict.message
    assert "[kgb] compile cache not stored: the cache holds more than" in verdict.logs
    assert verdict.compile_cache == CacheUse.MISS and not any(tmp_path.iterdir())


def test_the_key_is_the_source_and_what_its_compiled_code_depends_on(monkeypatch):
    key = compile_cache.key
    assert key("a", "cpu") == key("a", "cpu")
    assert len({key("a", "cpu"), key("a ", "cpu"), key("b", "cpu"), key("a", "cuda")}) == 4
    before = key("a", "cuda")
    monkeypatch.setattr(compile_cache, "_triton_version", lambda: "triton 0.0")
    assert key("a", "cuda") != before
    monkeypatch.setattr(compile_cache, "_gpu_models", lambda: "NVIDIA H200")
    assert key("a", "cuda") != before
    assert key("a", "cuda", hidden=True) != key("a", "cuda")  # what saw the hidden cases is kept apart


def test_an_evaluation_of_the_hidden_cases_may_start_from_the_visible_entry_never_the_reverse(tmp_path):
    store = tmp_path / "store"
    assert [e.key for e in compile_cache.entries(store, "s", "cpu", hidden=False)] == [compile_cache.key("s", "cpu")]
    assert [e.key for e in compile_cache.entries(store, "s", "cpu", hidden=True)] == [
        compile_cache.key("s", "cpu", hidden=True), compile_cache.key("s", "cpu")]


def _cache(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() or p.is_symlink()
    }


def test_an_entry_comes_back_as_a_copy(tmp_path):
    files = {"ab/kernel.cubin": b"\x7fELF", "ab/kernel.json": b"{}", "cd/k.ptx": b"ptx"}
    cache = _cache(tmp_path / "cache", files)
    entry = Entry(tmp_path / "store", compile_cache.key("source", "cpu"))
    assert entry.keep(cache) is None
    restored = tmp_path / "workspace" / "triton-cache"
    assert entry.restore(restored)
    assert _files(restored) == files
    stored = entry.path / "files" / "ab" / "kernel.cubin"
    assert os.stat(restored / "ab" / "kernel.cubin").st_ino != os.stat(stored).st_ino
    (restored / "ab" / "kernel.cubin").write_bytes(b"written by the candidate")
    assert stored.read_bytes() == b"\x7fELF"  # what a candidate writes stays in its workspace
    assert not Entry(entry.root, compile_cache.key("other", "cpu")).restore(tmp_path / "other")


def test_triton_finds_a_restored_kernel_where_it_now_is(tmp_path, monkeypatch):
    """Triton names a compiled kernel's files by absolute path in a group file: restored
    into another workspace, they must be found there, or every kernel compiles again."""
    from triton.runtime.cache import FileCacheManager

    def triton_cache(folder: Path) -> FileCacheManager:
        monkeypatch.setenv("TRITON_CACHE_DIR", str(folder))
        return FileCacheManager("kernelhash")

    first = triton_cache(tmp_path / "first" / "triton-cache")
    paths = {name: first.put(data, name) for name, data in (("k.cubin", b"\x7fELF"), ("k.json", "{}"))}
    first.put_group("k.json", paths)
    assert first.get_group("k.json") == paths
    entry = Entry(tmp_path / "store", compile_cache.key("source", "cuda"))
    assert entry.keep(tmp_path / "first" / "triton-cache") is None
    shutil.rmtree(tmp_path / "first")  # the first workspace is gone, as after its evaluation
    assert entry.restore(tmp_path / "second" / "triton-cache")
    found = triton_cache(tmp_path / "second" / "triton-cache").get_group("k.json")
    assert found is not None, "Triton would compile the kernel again"
    assert {Path(p).read_bytes() for p in found.values()} == {b"\x7fELF", b"{}"}
    assert all(Path(p).is_relative_to(tmp_path / "second") for p in found.values())


def test_links_and_special_files_are_not_stored(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the expert's kernel")
    cache = _cache(tmp_path / "cache", {"ab/kernel.cubin": b"cubin"})
    (cache / "ab" / "link.cubin").symlink_to(secret)
    (cache / "linked-folder").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(cache / "ab" / "fifo")
    entry = Entry(tmp_path / "store", compile_cache.key("source", "cpu"))
    assert entry.keep(cache) is None
    assert entry.restore(tmp_path / "restored")
    assert _files(tmp_path / "restored") == {"ab/kernel.cubin": b"cubin"}
    # a cache folder that is itself a link is not followed
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "triton-cache").symlink_to(cache, target_is_directory=True)
    linked = Entry(entry.root, compile_cache.key("linked", "cpu"))
    assert "not a folder" in linked.keep(tmp_path / "workspace" / "triton-cache")
    assert not linked.path.exists()


def test_a_cache_over_the_caps_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_store, "MAX_ENTRY_BYTES", 1 << 20)
    monkeypatch.setattr(compile_store, "MAX_ENTRY_FILES", 5)
    root = tmp_path / "store"
    big = _cache(tmp_path / "big", {"a/one": b"x" * (600 << 10), "a/two": b"x" * (600 << 10)})
    entry = Entry(root, compile_cache.key("big", "cpu"))
    assert "more than 1 MB" in entry.keep(big)
    many = _cache(tmp_path / "many", {f"a/{i}": b"x" for i in range(6)})
    assert "more than 5 files" in Entry(root, compile_cache.key("many", "cpu")).keep(many)
    assert sorted(p.name for p in root.iterdir()) == []  # no entry, no temporary folder left


def test_an_entry_that_could_fill_the_disk_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_store, "MIN_FREE_FRACTION", 0.10)
    size = 100 << 30
    full = os.statvfs_result((4096, 4096, size // 4096, 0, (size // 20) // 4096, 0, 0, 0, 0, 255))
    monkeypatch.setattr(compile_store.os, "statvfs", lambda _: full)  # 5% of 100 GB free
    cache = _cache(tmp_path / "cache", {"ab/kernel.cubin": b"cubin"})
    assert "free on its disk, under 10% of it" in Entry(tmp_path / "store", compile_cache.key("s", "cpu")).keep(cache)
    assert not list((tmp_path / "store").iterdir())


def test_a_corrupt_entry_is_ignored_and_replaced(tmp_path):
    cache = _cache(tmp_path / "cache", {"ab/kernel.cubin": b"cubin", "ab/k.json": b"{}"})
    entry = Entry(tmp_path / "store", compile_cache.key("source", "cpu"))
    entry.keep(cache)
    (entry.path / "files" / "ab" / "kernel.cubin").write_bytes(b"cub")  # a torn write
    assert not entry.restore(tmp_path / "first")
    assert not (tmp_path / "first").exists() and not entry.path.exists()
    assert entry.keep(cache) is None and entry.restore(tmp_path / "second")
    (entry.path / "manifest.json").write_text('{"format": 1, "files": [["../../x", 1, "0"]]}')
    assert not entry.restore(tmp_path / "third")
    assert not (tmp_path / "x").exists() and not entry.path.exists()


def test_the_store_survives_concurrent_writers_and_readers(tmp_path):
    """Writers store different caches under one key while readers restore it: one writer's
    cache is the entry, and every reader gets all of it or nothing."""
    root = tmp_path / "store"
    caches = [
        _cache(tmp_path / f"cache{w}", {f"k{i}/f": bytes([w]) * 50_000 for i in range(20)})
        for w in range(4)
    ]

    def restored(entry: Entry, dest: Path) -> dict[str, bytes] | None:
        return _files(dest) if entry.restore(dest) else None

    with ThreadPoolExecutor(len(caches) + 3) as pool:
        for round_ in range(5):
            entry = Entry(root, compile_cache.key(f"source {round_}", "cpu"))
            writes = [pool.submit(entry.keep, cache) for cache in caches]
            reads = [pool.submit(restored, entry, tmp_path / f"{round_}-{i}") for i in range(30)]
            assert [w.result() for w in writes] == [None] * len(caches)
            stored = _files(entry.path / "files")
            assert stored in [_files(cache) for cache in caches]
            assert all(r.result() in (None, stored) for r in reads)
    # no temporary folder left (the eviction's stamp is no folder)
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == [compile_store.EVICTED]


def test_where_the_store_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.root("auto") == tmp_path / "xdg" / "kgb" / "compile"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert compile_cache.root("auto") == Path.home() / ".cache" / "kgb" / "compile"
    assert compile_cache.root(None) is None and compile_cache.root("") is None
    assert compile_cache.root(str(tmp_path / "mine")) == tmp_path / "mine"


def test_a_store_candidates_could_read_is_refused_before_any_trial():
    readable = str(Path(sys.prefix) / "kgb-compile-cache")
    with pytest.raises(ValueError, match="eval.compile_cache=.*which candidates may read"):
        compile_cache.root(readable)
    cfg = Config(
        method=ExpertConfig(), model=ModelConfig(), source=SourceConfig("aten"),
        chip=ChipConfig(), eval=EvalConfig(compile_cache=readable),
    )  # fmt: skip
    with pytest.raises(ValueError, match="eval.compile_cache="):
        check_settings(cfg)


def test_the_setting_is_in_no_trial_key():
    settings = EvalSettings(device="cpu")
    assert Judging.of(settings) == Judging.of(dataclasses.replace(settings, compile_cache=None))


def test_the_event_log_keeps_whether_the_cache_was_used_and_reads_older_logs():
    verdict = Verdict(Status.CORRECT, "ok", compile_cache=CacheUse.HIT)
    record = encoding.to_json(events.CandidateEvaluated(job="j", candidate="c", verdict=verdict))
    assert record["verdict"]["compile_cache"] == "hit"
    assert encoding.from_json(record).verdict.compile_cache is CacheUse.HIT
    del record["verdict"]["compile_cache"]  # a log written before the compile cache
    assert encoding.from_json(record).verdict.compile_cache is None


def test_past_its_size_the_store_lets_go_of_the_entries_used_longest_ago(tmp_path, monkeypatch):
    """An agent's sweep stores an entry per attempt: the store keeps to MAX_STORE_BYTES by
    removing what was restored or stored longest ago."""
    monkeypatch.setattr(compile_store, "MAX_STORE_BYTES", 1 << 20)
    monkeypatch.setattr(compile_store, "EVICT_EVERY_S", 0.0)
    root = tmp_path / "store"
    a, b, c = (Entry(root, compile_cache.key(name, "cpu")) for name in "abc")
    for n, entry in enumerate((a, b)):
        assert entry.keep(_cache(tmp_path / f"cache{n}", {"k/cubin": b"x" * (400 << 10)})) is None
    os.utime(a.path, (1, 1000))  # stored long ago ...
    os.utime(b.path, (1, 2000))
    assert a.restore(tmp_path / "workspace")  # ... but used just now
    assert c.keep(_cache(tmp_path / "cache2", {"k/cubin": b"x" * (400 << 10)})) is None
    assert a.path.exists() and c.path.exists() and not b.path.exists()
    assert not b.restore(tmp_path / "again")  # gone means a miss, nothing worse
    # looked over at most once per EVICT_EVERY_S, whichever process stores
    monkeypatch.setattr(compile_store, "EVICT_EVERY_S", 3600.0)
    assert compile_store.evict(root, limit=0) == []
    assert sorted(compile_store.evict(root, limit=0, every_s=0.0)) == sorted([a.key, c.key])
