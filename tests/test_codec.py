"""Values on the wire between the judge and a candidate process (kgb.evaluate.codec): what
crosses arrives bit for bit with its layout and aliasing, and a broken or hostile peer is
an error, never a wrong value."""

from __future__ import annotations

import fcntl
import json
import mmap
import multiprocessing
import os
import socket
import struct
import weakref
from contextlib import contextmanager
from multiprocessing.connection import Connection

import pytest
import torch

from kgb.evaluate import codec, memory_file, tensor_storage


def _pair() -> tuple[Connection, Connection]:
    a, b = socket.socketpair()
    return Connection(a.detach()), Connection(b.detach())


def test_tensors_cross_bit_for_bit_with_their_layout_and_aliasing():
    a, b = _pair()
    base = torch.randn(64, 33)
    value = {"t": base.t(), "row": base[3], "half": torch.arange(10, dtype=torch.float16)[::2],
             "empty": torch.empty(0, 5), "n": 3, "f": float("nan")}
    codec.send(a, "call", value)
    got = codec.receive(b, "cpu").value
    assert torch.equal(got["t"], base.t()) and got["t"].stride() == base.t().stride()
    assert got["row"].untyped_storage().data_ptr() == got["t"].untyped_storage().data_ptr()  # one storage
    assert torch.equal(got["half"], value["half"]) and got["half"].stride() == (2,)
    assert got["empty"].shape == (0, 5) and got["n"] == 3 and got["f"] != got["f"]


def test_a_tensor_in_host_memory_stays_there_whatever_the_receivers_device():
    """A spec may hand a candidate a host tensor (vLLM's swap_blocks: its block mapping).
    Rebuilt on the GPU, the candidate's recorded kernel read it there, and the judge's
    replay of that kernel faulted on its own host copy."""
    a, b = _pair()
    codec.send(a, "call", {"mapping": torch.arange(6).reshape(3, 2)})
    got = codec.receive(b, "meta").value  # meta: a stand-in for the GPU on this machine
    assert got["mapping"].device.type == "cpu" and torch.equal(got["mapping"], torch.arange(6).reshape(3, 2))


def test_a_large_buffer_crosses_whole_between_processes():
    a, b = _pair()
    x = torch.randint(0, 255, (48 * 1024 * 1024,), dtype=torch.uint8)  # larger than any socket buffer
    proc = multiprocessing.get_context("fork").Process(target=lambda: codec.send(a, "big", x))
    proc.start()
    got = codec.receive(b, "cpu").value
    proc.join(30)
    assert torch.equal(got, x)


def test_a_peer_that_dies_mid_buffer_ends_the_conversation():
    a, b = _pair()
    header = {"kind": "call", "value": None, "storages": [], "buffers": [1000]}
    a.send_bytes(json.dumps(header).encode())
    a._send(b"x" * 10)  # ten of the thousand announced bytes, then gone
    a.close()
    with pytest.raises(EOFError):
        codec.receive(b, "cpu")


def test_malformed_headers_are_wire_errors():
    a, b = _pair()
    a.send_bytes(json.dumps({"kind": "call", "value": None, "buffers": [-1]}).encode())
    with pytest.raises(codec.WireError, match="negative"):
        codec.receive(b, "cpu")
    a.send_bytes(b"{not json")
    with pytest.raises(codec.WireError, match="unreadable"):
        codec.receive(b, "cpu")
    header = {"kind": "call", "value": {"t": "tensor", "storage": {"new": 0}, "dtype": "float32", "size": [10],
                                         "stride": [1], "offset": 0, "conj": False, "neg": False},
              "storages": [{"nbytes": 8, "device": "cpu", "buffer": 0}], "buffers": [8]}
    a.send_bytes(json.dumps(header).encode())
    a._send(struct.pack("2f", 1.0, 2.0))
    with pytest.raises(codec.WireError, match="does not fit"):
        codec.receive(b, "cpu")  # ten floats claimed over eight bytes


def test_copies_to_the_device_go_a_chunk_at_a_time_each_in_its_own_section(monkeypatch):
    """The judge copies a bench case's hundreds of MB in short work sections (one chunk
    each), so that a timing turn waits for one chunk, not the whole copy: on the H200
    (session 20) whole copies inside sections were what most turns' drains waited for.
    A meta device stands in for the GPU: it takes the copies and keeps no data."""
    monkeypatch.setattr(tensor_storage, "COPY_CHUNK", 4)
    sections = []

    @contextmanager
    def section():
        sections.append("in")
        yield
        sections.append("out")

    placed = tensor_storage.on_device(torch.arange(10, dtype=torch.uint8), "meta", section)
    assert placed.device.type == "meta" and placed.numel() == 10
    assert sections == ["in", "out"] * 3  # 4 + 4 + 2 bytes
    sections.clear()
    host = torch.arange(10, dtype=torch.uint8)
    assert tensor_storage.on_device(host, "cpu", section) is host and sections == []  # host memory stays, no copy


def test_a_large_message_crosses_in_a_memory_file_bit_for_bit():
    a, b = _pair()
    base = torch.randn(1024, 513)  # over MEMORY_FILE_MIN_BYTES
    value = {"t": base.t(), "row": base[3], "small": torch.arange(5)}
    out = codec.encode("call", value, memory_file=True)
    assert out.memory_file is not None and out.header["memory_file"]
    proc = multiprocessing.get_context("fork").Process(target=lambda: codec.write(a, out))
    proc.start()
    got = codec.receive(b, "cpu", memory_files=memory_file.Accepted.ANY).value
    proc.join(30)
    assert torch.equal(got["t"], base.t()) and got["t"].stride() == base.t().stride()
    assert got["row"].untyped_storage().data_ptr() == got["t"].untyped_storage().data_ptr()  # one storage
    assert torch.equal(got["small"], value["small"])
    got["t"].zero_()  # the receiver's pages are its own: a private mapping of the file
    assert torch.equal(out.buffers[0].view(torch.float32)[:5], base.reshape(-1)[:5])


def test_the_judge_never_takes_a_memory_file_its_sender_can_still_write():
    """Memory the candidate could still change while the judge read it would be a value
    that changes after it was checked: the judge takes a file only with its writes sealed."""
    for accepted in (memory_file.Accepted.NONE, memory_file.Accepted.SEALED):
        a, b = _pair()
        codec.write(a, codec.encode("returned", torch.zeros(1 << 19), memory_file=True))  # open, as the judge's are
        with pytest.raises(codec.WireError, match="memory file"):
            codec.receive(b, "cpu", memory_files=accepted)


def _sent_with(a, fd: int, nbytes: int) -> None:
    """A hand-made message whose buffers are said to be in `fd`, as a hostile sender makes one."""
    a.send_bytes(json.dumps({"kind": "returned", "value": None, "storages": [], "buffers": [nbytes],
                             "memory_file": True}).encode())
    with socket.fromfd(a.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        socket.send_fds(sock, [b"m"], [fd])
    os.close(fd)


def test_a_reply_in_a_file_sealed_in_size_only_or_in_no_memory_file_is_a_wire_error():
    a, b = _pair()
    fd = os.memfd_create("size-only", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, 2 << 20)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, memory_file.SIZE_SEALS)  # still writable: not enough
    _sent_with(a, fd, 2 << 20)
    with pytest.raises(codec.WireError, match="can still change"):
        codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED)
    a, b = _pair()
    r, w = os.pipe()
    os.close(w)
    _sent_with(a, r, 2 << 20)
    with pytest.raises(codec.WireError, match="not a memory file"):
        codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED)


def test_a_sealed_reply_crosses_bit_for_bit_and_nobody_can_change_it_after():
    a, b = _pair()
    base = torch.randn(1024, 513)  # over MEMORY_FILE_MIN_BYTES
    value = {"t": base.t(), "row": base[3]}
    out = codec.encode("returned", value, memory_file=True, outbox=memory_file.SealedOutbox())
    assert out.memory_file is not None and out.buffers == []  # nothing left mapped at the sender
    seals = fcntl.fcntl(out.memory_file, fcntl.F_GET_SEALS)
    assert seals & memory_file.WRITE_SEALS == memory_file.WRITE_SEALS and seals & fcntl.F_SEAL_SEAL
    fd = os.dup(out.memory_file)
    codec.write(a, out)
    got = codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED).value
    assert torch.equal(got["t"], base.t()) and torch.equal(got["row"], base[3])
    with pytest.raises(PermissionError):
        os.pwrite(fd, b"forged", 0)  # its maker keeps the descriptor, and cannot write through it
    with pytest.raises(PermissionError):
        mmap.mmap(fd, 4096)  # nor map it writable again
    os.close(fd)
    assert torch.equal(got["t"], base.t())


def test_a_reply_the_kernel_would_not_seal_goes_through_the_socket(monkeypatch):
    monkeypatch.setattr(memory_file.MemoryFile, "seal_writes", lambda self: False)
    a, b = _pair()
    x = torch.randn(1 << 19)
    out = codec.encode("returned", x, memory_file=True, outbox=memory_file.SealedOutbox())
    assert torch.equal(_through_the_socket(a, b, out, memory_file.Accepted.SEALED), x)


def _through_the_socket(a, b, out: codec.Outgoing, accepted: memory_file.Accepted) -> torch.Tensor:
    """What `out` carries, received; it must have been left to the socket (no memory file)."""
    assert out.memory_file is None and "memory_file" not in out.header
    proc = multiprocessing.get_context("fork").Process(target=lambda: codec.write(a, out))
    proc.start()  # a writer of its own: the buffers outgrow the socket's
    got = codec.receive(b, "cpu", memory_files=accepted).value
    proc.join(30)
    return got


def test_a_memory_file_smaller_than_its_message_is_a_wire_error():
    a, b = _pair()
    a.send_bytes(json.dumps({"kind": "call", "value": None, "storages": [], "buffers": [2 << 20],
                             "memory_file": True}).encode())
    fd = os.memfd_create("short")
    os.ftruncate(fd, 4096)
    with socket.fromfd(a.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        socket.send_fds(sock, [b"m"], [fd])
    os.close(fd)
    with pytest.raises(codec.WireError, match="does not hold"):
        codec.receive(b, "cpu", memory_files=memory_file.Accepted.ANY)


def test_the_receiver_cannot_shrink_a_memory_file_under_its_sender():
    a, b = _pair()
    out = codec.encode("call", torch.ones(1 << 19), memory_file=True)
    codec.write(a, out)
    b.recv_bytes()
    with socket.fromfd(b.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        _, fds, _, _ = socket.recv_fds(sock, 1, 1)
    with pytest.raises(PermissionError):
        os.ftruncate(fds[0], 0)
    os.close(fds[0])
    assert float(out.buffers[0].view(torch.float32).sum()) == 1 << 19  # the sender's mapping still reads


def test_a_sealed_outbox_sends_the_next_reply_in_the_file_it_made_after_the_last():
    """Making a file's pages costs more than copying into them: the candidate process makes
    the next reply's file between messages, sized like the last, and uses it where it fits."""
    replies = memory_file.SealedOutbox()
    replies.make_spare()
    assert replies._spare is None  # nothing sent yet: no size to make one of
    in_spare = []
    for n in (1 << 19, 1 << 19, 1 << 21, 1 << 18):  # float32: 2 MB, 2 MB, 8 MB, 1 MB
        a, b = _pair()
        x = torch.full((n,), float(n))
        spare = os.fstat(replies._spare.fd).st_ino if replies._spare is not None else None
        out = codec.encode("returned", x, memory_file=True, outbox=replies)
        in_spare.append(os.fstat(out.memory_file).st_ino == spare)
        codec.write(a, out)  # a header and a descriptor: nothing that fills the socket
        assert torch.equal(codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED).value, x)
        replies.make_spare()
        assert replies._spare.nbytes == 4 * n
    # the second reply went in the spare made after the first; the third found it too small,
    # the fourth over twice its size (let go of)
    assert in_spare == [False, True, False, False]


def test_a_spares_pages_are_made_a_step_at_a_time_until_the_judges_next_message(monkeypatch):
    """The judge's next message must not wait for a whole spare's pages: they are made a step at
    a time, and those left when it comes land with the next reply's bytes, intact."""
    monkeypatch.setattr(memory_file, "SPARE_STEP_BYTES", 1 << 20)
    replies = memory_file.SealedOutbox()
    a, b = _pair()
    codec.write(a, codec.encode("returned", torch.zeros(1 << 20), memory_file=True, outbox=replies))  # 4 MB
    codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED)
    looks = []
    replies.make_spare(stop=lambda: looks.append(1) or len(looks) > 2)  # the message comes after two steps
    assert replies._spare.made_bytes == 2 << 20 and replies._spare.nbytes == 4 << 20
    x = torch.arange(1 << 20, dtype=torch.float32)
    out = codec.encode("returned", x, memory_file=True, outbox=replies)
    codec.write(a, out)
    assert torch.equal(codec.receive(b, "cpu", memory_files=memory_file.Accepted.SEALED).value, x)
    replies.make_spare()  # no message waiting: the next spare is made whole
    assert replies._spare.made_bytes == replies._spare.nbytes == 4 << 20


def test_a_call_in_a_memory_file_reaches_the_confined_candidate_and_comes_back_in_a_sealed_one(tmp_path, monkeypatch):
    from kgb.evaluate import leftovers
    from kgb.evaluate.candidate_process import CandidateProcess
    from kgb.evaluate.sandbox import Limits

    taken = []
    real = codec.received_buffers
    monkeypatch.setattr(codec, "received_buffers", lambda conn, sizes, accepted: taken.append(accepted) or
                        real(conn, sizes, accepted))

    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    try:
        assert process.load("def f(x, y):\n    x.add_(y)\n    return x.sum()\n").failure is None
        x, y = torch.arange(1 << 20, dtype=torch.float32), torch.full((1 << 20,), 2.0)
        reply = process.call("f", (x, y), {})
        assert reply.failure is None, reply.failure
        assert torch.equal(x, torch.arange(1 << 20, dtype=torch.float32) + 2)  # what it left in its input
        assert float(reply.value) == float(x.sum())
        # the reply's file stays mapped until the next call is handed over, and is let go of then,
        # while the candidate process computes
        first = [weakref.ref(t) for t in process._read]
        assert sum(r().numel() for r in first) >= 4 << 20
        assert process.call("f", (x, y), {}).failure is None  # its reply in the file made after the first's
        leftovers.drained()  # let go of by the judge's freeing thread
        assert all(r() is None for r in first)
        assert torch.equal(x, torch.arange(1 << 20, dtype=torch.float32) + 4)
        assert taken == [memory_file.Accepted.SEALED] * 2  # x's 4 MB came back in files the sandbox let it seal
    finally:
        process.close()


def test_where_no_memory_file_can_be_made_the_message_goes_through_the_socket(monkeypatch):
    def refused(*args):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", refused)
    a, b = _pair()
    x = torch.randn(1 << 19)
    out = codec.encode("call", x, memory_file=True)
    assert torch.equal(_through_the_socket(a, b, out, memory_file.Accepted.ANY), x)


def test_an_outbox_writes_each_message_into_the_same_memory_file_and_each_arrives_whole(monkeypatch):
    """Writing into pages written before costs a fifth of writing into a fresh file; the
    receiver has answered one message before the next is written, and reads each whole."""
    monkeypatch.setattr(memory_file, "OUTBOX_MIN_BYTES", 1 << 20)  # the least file an outbox makes: 1 MB here
    a, b = _pair()
    outbox = memory_file.Outbox()
    files = []
    for i, n in enumerate((1 << 19, 1 << 18, 1 << 20)):  # 2 MB, 1 MB, then 4 MB: past the file made first
        x = torch.full((n,), float(i))
        out = codec.encode("call", x, memory_file=True, outbox=outbox)
        files.append((outbox._file, outbox._file.nbytes))
        codec.write(a, out)
        got = codec.receive(b, "cpu", memory_files=memory_file.Accepted.ANY).value
        assert torch.equal(got, x)  # this message's values, none of the one before
    assert files[0] == files[1] and files[2][0] is not files[0][0] and files[2][1] == 4 << 20
    monkeypatch.setattr(memory_file, "OUTBOX_MAX_BYTES", 1 << 20)
    out = codec.encode("call", torch.ones(1 << 20), memory_file=True, outbox=outbox)
    assert outbox._file is files[2][0] and os.fstat(out.memory_file).st_size == 4 << 20  # over the outbox's size:
    assert os.fstat(out.memory_file).st_ino != os.fstat(outbox._file.fd).st_ino  # a file of its own
    os.close(out.memory_file)
    outbox.close()


def test_a_candidate_process_answers_calls_written_into_one_kept_memory_file(tmp_path):
    from kgb.evaluate.candidate_process import CandidateProcess
    from kgb.evaluate.sandbox import Limits

    (tmp_path / "ws").mkdir()
    process = CandidateProcess("cpu", tmp_path / "ws", Limits(cpu_s=120)).wait_ready()
    try:
        assert process.load("def f(x):\n    return x.sum()\n").failure is None
        for value in (1.0, 2.0, 3.0):  # each call's inputs over the last one's, in the same file
            reply = process.call("f", (torch.full((1 << 20,), value),), {})
            assert reply.failure is None and float(reply.value) == value * (1 << 20)
        assert process._outbox is not None and process._outbox._file is not None
    finally:
        process.close()
