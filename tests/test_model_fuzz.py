"""Seeded fuzzing of model files: every damaged or crafted model file loads as a working model
or is refused with one :class:`ModelError` line naming it, never a traceback or a crash, and
never costs more memory than a sane model.

The mutations take a real model file apart (the shipped default, and small models trained
here on the toy world) and put it back together with a zip writer of the test's own, which
writes what ``zipfile`` would not: the zip structure (a cut, flipped bytes, a damaged central
directory, a name twice, declared sizes from 0 to 2^63, zip bombs that declare what they
unpack to and ones that lie), the general-purpose flags (encryption, patch data), compression
methods (stored, deflate, bzip2, lzma, ids nothing implements, and a method that does not
match the data), the JSON members (nesting 40 to 100,000 deep, values of the wrong type,
keys removed or added, numbers out of range, bytes that are not UTF-8 JSON) and the ``.npz``
members, whose own zip structure is damaged the same ways and whose ``.npy`` headers are
forged (shapes, dtypes, Fortran order, format versions, header lengths). Each mutated file is
loaded in a forked child whose address space may grow by :data:`HEADROOM` bytes at most (a
bomb unpacked or an array allocated from a forged header fails there); a sample also goes
through ``qseg segment --method FILE``.

    python tests/test_model_fuzz.py     # the counts, without pytest
"""

from __future__ import annotations

import io
import json
import os
import random
import resource
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toy
from helpers import assert_one_line_error, qseg
from test_fuzz import in_child

from qseg import models
from qseg.models import ModelError
from qseg.models.catalog import SHIPPED, shipped_model
from qseg.models.format import BESIDE, MANIFEST, beside_path, manifest

pytestmark = pytest.mark.long

SHIPPED_MODEL = SHIPPED / "qseg-default-v2.qseg"
"""The model the fuzz mutates: a file written before manifests (the toy models have one)."""
DEFAULT_MODEL = shipped_model(models.DEFAULT)
QUERIES = ["cheap new york yankees tickets", "stainless steel chest freezer", "café münchen"]
HEADROOM = 400 << 20
"""How much a child's address space may grow while it loads and uses a mutated model: more
than the shipped model needs (about 100 MB), less than the 512 MB bomb."""
SIZES = {  # (toy specs: cheap to train; the shipped model: a load costs 0.3-0.5 s)
    "shipped": 60,
    toy.TRAINED_SPECS["joint"]: 120,
    toy.TRAINED_SPECS["embeddings"]: 60,
    "features(classifier=logreg)": 60,
}
"""Mutations per model (each a test): 300 in all."""
SEED = 39
DATE = (1980, 1, 1, 0, 0, 0)


# -- a zip writer that writes what zipfile would refuse to --------------------------------


@dataclass(frozen=True)
class Member:
    """A zip member as written: ``data`` unpacked, ``payload`` as stored under ``method``,
    with the flags (``local_flags`` in its own header, if they differ), CRC and unpacked size
    it declares."""

    name: str
    data: bytes
    payload: bytes
    method: int
    flags: int = 0
    crc: int | None = None
    size: int | None = None
    local_flags: int | None = None

    @classmethod
    def of(cls, name: str, data: bytes, method: int = zipfile.ZIP_DEFLATED) -> Member:
        return cls(name, data, packed(data, method), method)


def packed(data: bytes, method: int) -> bytes:
    """``data`` compressed as ``zipfile`` compresses it with ``method`` (deflate bytes for a
    method zipfile does not implement)."""
    buffer = io.BytesIO()
    real = method if method in (0, 8, 12, 14) else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(zipfile.ZipInfo("x", DATE), data, real)
    return unpack(buffer.getvalue())[0].payload


def unpack(archive: bytes) -> list[Member]:
    """The members of a well-formed archive, each with its payload as stored."""
    members = []
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        for info in zf.infolist():
            name_len, extra_len = struct.unpack("<HH", archive[info.header_offset + 26 :][:4])
            start = info.header_offset + 30 + name_len + extra_len
            payload = archive[start : start + info.compress_size]
            members.append(Member(info.filename, zf.read(info), payload, info.compress_type))
    return members


def pack(members: list[Member]) -> bytes:
    """The archive of ``members``, written as declared (sizes of 2^32 - 1 or more as zip64)."""
    out, central = bytearray(), bytearray()
    for m in members:
        name = m.name.encode()
        crc = zlib.crc32(m.data) if m.crc is None else m.crc
        size = len(m.data) if m.size is None else m.size
        wide = size >= 0xFFFFFFFF
        extra = struct.pack("<HHQQ", 1, 16, size, len(m.payload)) if wide else b""
        sizes = (0xFFFFFFFF, 0xFFFFFFFF) if wide else (len(m.payload), size)
        offset = len(out)
        flags = m.flags if m.local_flags is None else m.local_flags
        out += struct.pack("<IHHHHHI", 0x04034B50, 45, flags, m.method, 0, 0x21, crc)
        out += struct.pack("<IIHH", *sizes, len(name), len(extra)) + name + extra + m.payload
        central += struct.pack("<IHHHHHHI", 0x02014B50, 45, 45, m.flags, m.method, 0, 0x21, crc)
        central += struct.pack("<IIHHHHHII", *sizes, len(name), len(extra), 0, 0, 0, 0, offset)
        central += name + extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, *[len(members)] * 2, len(central), len(out), 0)
    return bytes(out + central + end)


# -- the mutations -------------------------------------------------------------------------

Mutation = Callable[[list[Member], random.Random], tuple[str, bytes]]


def _pick(members: list[Member], rng: random.Random) -> int:
    return rng.randrange(len(members))


def _with(members: list[Member], i: int, member: Member) -> list[Member]:
    return [*members[:i], member, *members[i + 1 :]]


def cut(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    data = pack(members)
    at = rng.randrange(len(data))
    return f"cut at {at} of {len(data)}", data[:at]


def flip(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    data = bytearray(pack(members))
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    return "bytes flipped", bytes(data)


def extend(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    extra = rng.randbytes(rng.randint(1, 4096))
    return f"{len(extra)} bytes appended", pack(members) + extra


def central_directory(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    """Bytes flipped in the central directory and its end record (counts, sizes, offsets)."""
    data = bytearray(pack(members))
    start = struct.unpack("<I", data[-6:-2])[0]
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(start, len(data))] ^= 1 << rng.randrange(8)
    return "central directory damaged", bytes(data)


def duplicate(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    i = _pick(members, rng)
    twin = members[i] if rng.random() < 0.5 else Member.of(members[i].name, b"other content")
    return f"{members[i].name} twice", pack([*members, twin])


def declared_size(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    i = _pick(members, rng)
    true = len(members[i].data)
    size = rng.choice([0, 1, max(true - 1, 0), true + 1, 2**31, 2**32 - 2, 2**40, 2**63])
    return f"{members[i].name} declares {size} bytes", pack(
        _with(members, i, replace(members[i], size=size))
    )


@cache
def zeros(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros (about 1 KB a MiB: each MiB is compressed
    alone, after a full flush, so its bytes repeat) and the CRC-32 of what it unpacks to."""
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = block.compress(bytes(1 << 20)) + block.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(bytes(1 << 20), crc)
    return stream * mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush(), crc


def bomb_member(name: str, mib: int, size: int | None = None) -> Member:
    """A member of ``mib`` MiB of zeros that declares ``size`` bytes (default: the truth)."""
    stream, crc = zeros(mib)
    declared = mib << 20 if size is None else size
    return Member(name, b"", stream, zipfile.ZIP_DEFLATED, crc=crc, size=declared)


def bomb(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    """A member replaced by 64 MiB of zeros that say what they unpack to, or a few hundred
    MiB up to 2^40 bytes, or the member's own size (then unpacked up to that size)."""
    i = _pick(members, rng)
    size = rng.choice([300 << 20, 512 << 20, 2**40, len(members[i].data), None])
    fake = bomb_member(members[i].name, 64, size)
    return f"{members[i].name}: bomb declaring {fake.size}", pack(_with(members, i, fake))


def flags(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    i = _pick(members, rng)
    bits = rng.choice([0x1, 0x20, 0x40, 0x41, 0x8, 0x800, 0x1 | 0x800])
    if rng.random() < 0.3:  # only the member's own header says so
        changed = replace(members[i], local_flags=bits)
        return f"{members[i].name}: local flags {bits:#x}", pack(_with(members, i, changed))
    return f"{members[i].name}: flags {bits:#x}", pack(
        _with(members, i, replace(members[i], flags=bits))
    )


METHODS = [0, 8, 12, 14, 1, 6, 9, 93, 95, 98, 99, 0xFFFF]


def method(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    """A member's compression method changed, its data compressed with it where zipfile
    implements it, or left as it was (the method does not match the data)."""
    i = _pick(members, rng)
    m, new = members[i], rng.choice(METHODS)
    if rng.random() < 0.5:
        changed = replace(m, method=new, payload=packed(m.data, new))
        return f"{m.name}: packed with method {new}", pack(_with(members, i, changed))
    return f"{m.name}: labelled method {new}", pack(_with(members, i, replace(m, method=new)))


STRUCTURE: list[Mutation] = [
    cut, flip, extend, central_directory, duplicate, declared_size, bomb, flags, method
]  # fmt: skip


# -- JSON members

WRONG = [None, True, 0, -1, 1.5, "x", [], {}, [[1]], {"a": {}}, "__1e999__", "__NaN__",
         "__-Infinity__", "__2^70__", "__10^5000__", "__-0.0__"]  # fmt: skip
"""Values of the wrong type or out of range; the ``__...__`` ones are written as raw JSON."""
RAW = {"__1e999__": "1e999", "__NaN__": "NaN", "__-Infinity__": "-Infinity",
       "__2^70__": str(2**70), "__10^5000__": "1" + "0" * 5000, "__-0.0__": "-0.0"}  # fmt: skip


def _dumps(value: Any) -> bytes:
    text = json.dumps(value)
    for marker, raw in RAW.items():
        text = text.replace(json.dumps(marker), raw)
    return text.encode()


def _descend(value: Any, rng: random.Random) -> tuple[Any, Any]:
    """A container inside ``value`` and one of its keys (or indices), found by a random walk."""
    parent, key = None, None
    while isinstance(value, (dict, list)) and value and (parent is None or rng.random() < 0.6):
        keys = list(value) if isinstance(value, dict) else range(len(value))
        parent, key = value, rng.choice(list(keys))
        value = parent[key]
    return parent, key


def json_member(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    jsons = [i for i, m in enumerate(members) if m.name.endswith(".json")]
    i = rng.choice(jsons)
    m = members[i]
    value = json.loads(m.data)
    kind = rng.choice(["depth", "type", "type", "remove", "add", "text"])
    parent, key = _descend(value, rng)
    if kind == "depth":
        depth = rng.choice([40, 900, 5_000, 100_000])
        deep = "[" * depth + "1" + "]" * depth
        if parent is None or rng.random() < 0.3:
            data = deep.encode()
        else:
            parent[key] = "__DEEP__"
            data = _dumps(value).replace(b'"__DEEP__"', deep.encode())
        what = f"nested {depth} deep"
    elif kind == "type" and parent is not None:
        wrong = rng.choice(WRONG)
        parent[key] = wrong
        data, what = _dumps(value), f"{key!r} set to {wrong!r}"
    elif kind == "remove" and isinstance(parent, dict):
        del parent[key]
        data, what = _dumps(value), f"{key!r} removed"
    elif kind == "add" and isinstance(value, dict):
        value[rng.choice(["colour", "version", ""])] = rng.choice(WRONG)
        data, what = _dumps(value), "a key added"
    else:
        data = rng.choice(
            [b"\xef\xbb\xbf" + m.data, m.data[: len(m.data) // 2], b"\xff" + m.data, b"", b"null"]
        )
        what = "bytes that are not its JSON"
    changed = _with(members, i, Member.of(m.name, data))
    if m.name == "meta.json":
        return f"{m.name}: {what}", pack(changed)
    anew, changed = recorded(changed, rng)
    return f"{m.name}: {what}{anew}", pack(changed)


def recorded(members: list[Member], rng: random.Random) -> tuple[str, list[Member]]:
    """Half the time (where meta.json has a manifest), the manifest recorded anew for the
    members as they are: a crafted file consistent with itself, which the decoders must refuse
    on their own; else as it was, which refuses every changed member."""
    meta = next(json.loads(m.data) for m in members if m.name == "meta.json")
    if MANIFEST not in meta or rng.random() < 0.5:
        return "", members
    return ", manifest recorded anew", with_manifest(members)


def with_manifest(members: list[Member]) -> list[Member]:
    """The members with meta.json's manifest recorded anew for what they hold (meta.json left
    as it is, its packing too, where it records that already)."""
    i = next(i for i, m in enumerate(members) if m.name == "meta.json")
    meta = json.loads(members[i].data)
    anew = manifest({m.name: m.data for m in members if m.name != "meta.json"})
    if meta.get(MANIFEST) == anew:
        return members
    text = json.dumps(meta | {MANIFEST: anew}, indent=1, sort_keys=True).encode()
    return _with(members, i, Member.of("meta.json", text))


# -- .npz members and their .npy arrays


def npy(shape: tuple, descr: Any, fortran: bool, body: bytes, version: tuple[int, int] = (1, 0),
        length: int | None = None) -> bytes:  # fmt: skip
    """An ``.npy`` file with this header, whatever the body holds."""
    header = repr({"descr": descr, "fortran_order": fortran, "shape": shape}).encode()
    prefix = 10 if version[0] == 1 else 12
    header += b" " * (-(prefix + len(header) + 1) % 64) + b"\n"
    size = len(header) if length is None else length
    packed_size = struct.pack("<H", size % 65536) if version[0] == 1 else struct.pack("<I", size)
    return b"\x93NUMPY" + bytes(version) + packed_size + header + body


HUGE_SHAPES = [(2**40,), (2**31, 2**31), (2**62, 4), (2**64,), (-1,)]
DTYPES = ["|O", "<U2", "|V8", "|V0", "|S0", ">f8", "<f4", "<i8", "<c16", "|b1", "<M8[s]",
          [("a", "<f8")], [("a", "|O")], "<f8", "nonsense", 7]  # fmt: skip


def forged(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """An array's header forged: its shape, dtype, order, version or length."""
    stream = io.BytesIO(raw)
    version = np.lib.format.read_magic(stream)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran, dtype = read(stream)
    body, n = raw[stream.tell() :], int(np.prod(shape))
    descr = np.lib.format.dtype_to_descr(dtype)
    kind = rng.choice(["shape", "shape", "dtype", "order", "version", "length"])
    if kind == "shape":
        half = n // 2 or 1
        new = rng.choice([*HUGE_SHAPES, (-2, -half), (n * 2,), (half,), (0,), (), (n, 1), (1, n),
                          (n, 0), (half, 2)])  # fmt: skip
        return f"shape {new}", npy(new, descr, fortran, body)
    if kind == "dtype":
        new = rng.choice(DTYPES)
        return f"dtype {new!r}", npy(shape, new, fortran, body)
    if kind == "order":
        new_shape = rng.choice([shape, (n, 1), (1, n), (n // 2 or 1, 2)])
        return f"fortran order, shape {new_shape}", npy(new_shape, descr, True, body)
    if kind == "version":
        new_version = rng.choice([(2, 0), (3, 0), (0, 9), (255, 255)])
        return f"version {new_version}", npy(shape, descr, fortran, body, new_version)
    length = rng.choice([0, 5, 60000, 65535, 2**31])
    version = (2, 0) if length > 65535 else (1, 0)
    return f"header length {length}", npy(shape, descr, fortran, body, version, length)


def npz_member(members: list[Member], rng: random.Random) -> tuple[str, bytes]:
    """An ``.npz`` member damaged: its own zip structure, or an array header forged."""
    arrays = [i for i, m in enumerate(members) if m.name.endswith(".npz")]
    i = rng.choice(arrays)
    inner = unpack(members[i].data)
    if rng.random() < 0.5:
        what, data = rng.choice(STRUCTURE)(inner, rng)
    else:
        j = _pick(inner, rng)
        what, array = forged(inner[j].data, rng)
        what = f"{inner[j].name}: {what}"
        data = pack(_with(inner, j, Member.of(inner[j].name, array, zipfile.ZIP_STORED)))
    anew, changed = recorded(_with(members, i, Member.of(members[i].name, data)), rng)
    return f"{members[i].name}: {what}{anew}", pack(changed)


MUTATIONS: list[Mutation] = [
    *STRUCTURE,
    json_member,
    json_member,
    npz_member,
    npz_member,
    npz_member,
]


# -- running them --------------------------------------------------------------------------


def work(path: Path, spec: str) -> list[str]:
    """Load the model file and segment with it (the shipped model on the built-in resources,
    a toy one on the toy world's)."""
    loaded = models.load(path, None if spec == "shipped" else toy.resources())
    return [loaded.segment(q).to_pipe() for q in QUERIES] + [str(loaded.rank(QUERIES[0], 3))]


def bounded(task: Callable[[], object]) -> Callable[[], object]:
    """``task`` run with the address space limited to what it is now plus :data:`HEADROOM`."""

    def run() -> object:
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + HEADROOM, resource.RLIM_INFINITY))
        return task()

    return run


def classify(kind: str, detail: str, expected: str, target: Path) -> str:
    """The outcome of one mutated file; a resource's fingerprint changed to another string
    makes a model of other resources, refused as such (a usage error: they are not given)."""
    if kind == "ok":
        return "same output" if detail == expected else "other output"
    if kind == "error" and "\n" not in detail:
        if detail.startswith(f"ModelError: {target}"):
            return "clear error"
        if detail.startswith(f"ResourceMismatch: {target}"):
            return "other resources"
    return f"{kind}: {detail}"


def model_file(spec: str, folder: Path) -> Path:
    if spec == "shipped":
        return SHIPPED_MODEL
    path = folder / f"{len(spec)}.qseg"
    models.save(toy.train(spec), path)
    return path


def fuzz(spec: str, folder: Path, mutations: int, seed: int) -> dict[str, Any]:
    """Outcomes of ``mutations`` mutated copies of the model ``spec``, and per kind of
    mutation and outcome one example file kept for the command line."""
    path = model_file(spec, folder)
    members = unpack(path.read_bytes())
    expected = json.dumps(work(path, spec))
    rng = random.Random(seed)
    outcomes: Counter = Counter()
    examples: dict[tuple[str, str], list[str]] = {}
    for number in range(mutations):
        mutate = rng.choice(MUTATIONS)
        what, data = mutate(members, rng)
        target = folder / f"{len(spec)}-{number}.qseg"
        target.write_bytes(data)
        kind, detail = in_child(bounded(lambda t=target: work(t, spec)))
        outcome = classify(kind, detail, expected, target)
        outcomes[outcome if outcome in GOOD else f"{outcome} <- {what}"] += 1
        if outcome in STATUS and (mutate.__name__, outcome) not in examples:
            examples[mutate.__name__, outcome] = [what, outcome, str(target)]
        else:
            target.unlink()
    return {"outcomes": outcomes, "examples": list(examples.values())}


GOOD = ("same output", "other output", "clear error", "other resources")
STATUS = {"same output": 0, "other output": 0, "clear error": 1}
"""The outcomes checked through the command line too, with their exit status."""


def fuzz_all(folder: Path, specs: list[str]) -> dict[str, dict[str, Any]]:
    """:func:`fuzz` of each model of ``specs`` (each with its own seed, whichever are run)."""
    seeds = {spec: seed for seed, spec in enumerate(SIZES, SEED)}
    return {spec: fuzz(spec, folder, SIZES[spec], seeds[spec]) for spec in specs}


@pytest.mark.parametrize("spec", SIZES)
def test_mutated_model_files_load_or_are_refused_in_one_line(spec, tmp_path, capsys):
    # in a fresh, small process: forking this one (every library the suite loaded) costs more
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, __file__, "--json", str(tmp_path), spec],
        capture_output=True,
        text=True,
        timeout=600,
    )
    took = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    outcomes, count = found[spec]["outcomes"], SIZES[spec]
    assert set(outcomes) <= set(GOOD), outcomes
    assert outcomes["clear error"] > count / 2, outcomes
    assert sum(outcomes.values()) == count
    with capsys.disabled():
        print("\n" + report(found) + f"\n{count} mutations in {took:.1f} s")
    examples = found[spec]["examples"]
    for what, outcome, path in random.Random(SEED).sample(examples, min(2, len(examples))):
        extra = [] if spec == "shipped" else ["--allow-other-resources"]
        done = subprocess.run(
            [sys.executable, "-m", "qseg", "segment", "--method", path, *extra, QUERIES[0]],
            capture_output=True, timeout=120, check=False,
        )  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode == STATUS[outcome] and "Traceback" not in err, (what, err)
        if outcome == "clear error":
            assert err.startswith(f"qseg: error: {path}") and err.count("\n") == 1, (what, err)


def report(found: dict[str, dict[str, Any]]) -> str:
    return "\n".join(
        f"{spec}: " + ", ".join(f"{n} {what}" for what, n in sorted(entry["outcomes"].items()))
        for spec, entry in found.items()
    )


def _inner_bomb(members: list[Member]) -> list[Member]:
    """gap_model.npz with its coef array replaced by 512 MiB of zeros."""
    i = next(i for i, m in enumerate(members) if m.name == "gap_model.npz")
    inner = [
        bomb_member(m.name, 512) if m.name == "coef.npy" else m for m in unpack(members[i].data)
    ]
    return _with(members, i, Member.of("gap_model.npz", pack(inner)))


BOMBS = {
    "a member of 512 MiB of zeros": lambda ms: [*ms, bomb_member("extra", 512)],
    "512 MiB of zeros declaring the member's own size": lambda ms: [
        bomb_member(m.name, 512, len(m.data)) if m.name == "gap_model.npz" else m for m in ms
    ],
    "an array of 512 MiB of zeros in an .npz": _inner_bomb,
}
PEAK = """import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
sys.stderr.buffer.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)"""
"""Runs a command and prints its peak resident memory (KiB)."""


@pytest.mark.parametrize("name", BOMBS)
def test_a_zip_bomb_is_refused_before_it_is_unpacked(name, tmp_path):
    path = model_file("features(classifier=logreg)", tmp_path)
    path.write_bytes(pack(BOMBS[name](unpack(path.read_bytes()))))
    assert path.stat().st_size < 600_000  # a 0.5 MB file that unpacks to 512 MiB
    command = [sys.executable, "-m", "qseg", "segment", "--method", str(path),
               "--allow-other-resources", "new york"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", PEAK, *command], capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert err.startswith(f"qseg: error: {path}") and err.count("\n") == 1, err
    peak = int(done.stdout) << 10
    assert peak < 250 << 20, f"{peak >> 20} MiB at the peak: {err}"


# -- the shipped default, verified member by member whatever the cache holds ---------------


def copy_beside(source: Path, target: Path, change: Callable[[str, bytes], bytes]) -> None:
    """The files a routed model file keeps beside it, copied beside ``target`` (each
    member's bytes through ``change``)."""
    for name in json.loads(zipfile.ZipFile(source).read("meta.json")).get(BESIDE, []):
        data = beside_path(source, name).read_bytes()
        beside_path(target, name).write_bytes(change(name, data))


def changed(source: Path, target: Path, name: str, change: Callable[[bytes], bytes]) -> Path:
    """A copy of a model file (the files it keeps beside it too) whose member ``name`` holds
    ``change`` of its bytes: in the archive (every CRC recomputed) or in its file beside it;
    meta.json as it was."""
    members = unpack(source.read_bytes())
    inside = [i for i, m in enumerate(members) if m.name == name]
    if inside:
        new = Member.of(name, change(members[inside[0]].data))
        target.write_bytes(pack(_with(members, inside[0], new)))
    else:
        target.write_bytes(source.read_bytes())
    copy_beside(source, target, lambda kept, data: change(data) if kept == name else data)
    return target


def npz_changed(source: Path, target: Path, name: str, change: Callable[[dict], None]) -> Path:
    """A copy of a model file whose ``.npz`` member ``name`` holds the arrays ``change``
    altered in place: a valid npz in a valid zip, meta.json as it was."""

    def altered(data: bytes) -> bytes:
        with np.load(io.BytesIO(data)) as npz:
            arrays = {key: npz[key] for key in npz.files}
        change(arrays)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    return changed(source, target, name, altered)


def zero_bias(arrays: dict) -> None:
    arrays["bias"][:] = 0


def flip_low_bits(arrays: dict) -> None:
    arrays["low"][:1000] ^= 0xFF


def flipped(source: Path, target: Path, name: str) -> Path:
    """A copy of a model file with one bit of member ``name`` flipped (its size kept, its CRC
    recomputed)."""

    def flip(data: bytes) -> bytes:
        bits = bytearray(data)
        bits[len(bits) // 2] ^= 1
        return bytes(bits)

    return changed(source, target, name, flip)


def digest_error(path: Path, member: str) -> str:
    return f"{path} ({member}): its SHA-256 is not the one meta.json records (the file is damaged)"


def size_error(path: Path, member: str, size: int) -> str:
    recorded = json.loads(zipfile.ZipFile(DEFAULT_MODEL).read("meta.json"))[MANIFEST][member][
        "bytes"
    ]
    return (
        f"{path} ({member}): declares {size:,} bytes, meta.json records {recorded:,} (the file "
        "is damaged)"
    )


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache holding the intact titles the shipped default carries: unpacked into it by
    opening the model."""
    folder = tmp_path_factory.mktemp("warm-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QSEG_CACHE", str(folder))
        models.load(DEFAULT_MODEL)
    assert list(folder.glob("carried-titles-*.qseg"))
    return folder


@pytest.fixture(scope="module")
def damaged_titles(tmp_path_factory) -> dict[str, tuple[Path, Callable[[Path], str]]]:
    """The shipped default with a bit of its packed titles flipped (the same size), and with
    other numbers in them (a valid ``titles.npz``, of another size), each with its error."""
    folder = tmp_path_factory.mktemp("damaged")
    bit = flipped(DEFAULT_MODEL, folder / "bit.qseg", "titles.npz")
    numbers = npz_changed(DEFAULT_MODEL, folder / "numbers.qseg", "titles.npz", flip_low_bits)
    size = beside_path(numbers, "titles.npz").stat().st_size  # kept beside the file
    return {
        "a bit flipped": (bit, digest_error(bit, "titles.npz")),
        "other numbers": (numbers, size_error(numbers, "titles.npz", size)),
    }


def test_the_shipped_default_opens_and_segments_also_recompressed(
    warm_cache, tmp_path, monkeypatch
):
    """The manifest verifies what members hold, not how the archive compresses them."""
    monkeypatch.setenv("QSEG_CACHE", str(warm_cache))
    copy = tmp_path / "copy.qseg"
    copy.write_bytes(pack([Member.of(m.name, m.data) for m in unpack(DEFAULT_MODEL.read_bytes())]))
    copy_beside(DEFAULT_MODEL, copy, lambda _, data: data)
    for path in (DEFAULT_MODEL, copy):
        assert models.load(path).segment("new york yankees tickets").to_pipe() == (
            "new york yankees|tickets"
        )


def test_zeroed_biases_in_a_valid_member_are_refused_in_one_line(warm_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("QSEG_CACHE", str(warm_cache))
    bad = npz_changed(DEFAULT_MODEL, tmp_path / "biases.qseg", "router.npz", zero_bias)
    with pytest.raises(ModelError) as error:
        models.load(bad)
    assert str(error.value) == digest_error(bad, "router.npz")
    refused = qseg("segment", "--method", bad, "a b", env={"QSEG_CACHE": str(warm_cache)})
    assert_one_line_error(refused, digest_error(bad, "router.npz"), status=1)


def _with_odd_word(data: dict) -> dict:
    left, *others = data["tables"]
    return {**data, "tables": [{**left, "york\nnew": [1, 2]}, *others]}


ODD_KEYS = {
    "a phrase with a line break": (
        "phrases.json",
        lambda data: {**data, "new\nyork": 0.5},
        "phrase 'new\\nyork' holds a line break",
    ),
    "a phrase with a lone surrogate": (
        "phrases.json",
        lambda data: {**data, "new \udcff": 0.5},  # JSON's "\udcff": valid JSON, no Unicode
        "phrase 'new \\udcff' holds a lone surrogate",
    ),
    "a lexicon word with a line break": (
        "lexicon.json",
        _with_odd_word,
        "lexicon entry 'york\\nnew' holds a line break",
    ),
}


@pytest.mark.parametrize("odd", ODD_KEYS)
def test_a_key_no_query_can_equal_is_refused_where_the_model_loads(odd, tmp_path):
    """A phrase or lexicon key holding a line break or a lone surrogate is no n-gram's, and
    the kernel's key tables cannot hold it: such a model loaded, then every compiled call
    failed (and compiled again). Refused where it is read, in one line naming the file, the
    member and the key."""
    member, change, problem = ODD_KEYS[odd]
    path = changed(
        SHIPPED_MODEL,
        tmp_path / "odd.qseg",
        member,
        lambda data: json.dumps(change(json.loads(data))).encode(),
    )
    with pytest.raises(ModelError) as error:
        models.load(path)
    assert str(error.value).startswith(f"{path} ({member}): {problem} (")
    assert "\n" not in str(error.value)
    assert_one_line_error(qseg("segment", "--method", path, "new york"), problem, status=1)


@pytest.mark.parametrize("damage", ["a bit flipped", "other numbers"])
@pytest.mark.parametrize("cache", ["empty", "warm"])
def test_a_damaged_carried_member_is_refused_whatever_the_cache_holds(
    cache, damage, warm_cache, damaged_titles, tmp_path, monkeypatch
):
    """Refused before anything is unpacked: on an empty cache nothing is built, and a cache
    that holds the intact titles (which the model's fingerprint names) does not let it in."""
    folder = warm_cache if cache == "warm" else tmp_path / "empty"
    monkeypatch.setenv("QSEG_CACHE", str(folder))
    path, message = damaged_titles[damage]
    with pytest.raises(ModelError) as error:
        models.load(path)
    assert str(error.value) == message
    if cache == "empty":
        assert not folder.exists() or not any(folder.iterdir())


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:2] == ["--json"]:
        print(json.dumps(fuzz_all(Path(sys.argv[2]), sys.argv[3:] or list(SIZES))))
    else:
        with tempfile.TemporaryDirectory() as folder:
            print(report(fuzz_all(Path(folder), list(SIZES))))
