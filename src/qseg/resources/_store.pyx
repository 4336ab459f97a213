# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled core of the n-gram and title stores: the key hash, lookups, and record packing.

The layout is documented in ``store.py``; this module only reads and writes its arrays.

Key hash: FNV-1a over the UTF-8 bytes of the key (words joined by single spaces), started from
the FNV offset basis XOR a seed, finished with MurmurHash3's 64-bit finalizer. FNV-1a consumes
bytes in order, so a segmenter extends the hash of ``new york`` to ``new york yankees`` without
building the string.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcmp, memcpy
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

import numpy as np

cdef uint64_t EXT_BIT = 1ULL << 63
cdef enum:
    MAX_PHRASE_QUERY_WORDS = 64


cdef inline uint64_t key_hash(str key, uint64_t seed) except? 0:
    cdef Py_ssize_t length
    cdef const char* data = PyUnicode_AsUTF8AndSize(key, &length)
    return fmix64(fnv_feed(fnv_start(seed), <const uint8_t*>data, length))


def hash_keys(keys, uint64_t seed):
    """64-bit hashes of a sequence of keys (``str``), as a numpy ``uint64`` array."""
    cdef Py_ssize_t i, n = len(keys)
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    for i in range(n):
        o[i] = key_hash(<str>keys[i], seed)
    return out


def hash_utf8_column(const uint8_t[::1] data, const long long[::1] offsets, uint64_t seed):
    """Hashes of the strings of an Arrow string column given as its data and int64 offsets."""
    cdef Py_ssize_t i, n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] o = out
    cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
    with nogil:
        for i in range(n):
            o[i] = fmix64(fnv_feed(fnv_start(seed), base + offsets[i], offsets[i + 1] - offsets[i]))
    return out


cdef inline uint64_t byte_sum(uint64_t word) noexcept nogil:
    """The sum of the 8 bytes of ``word``."""
    word = (word & 0x00FF00FF00FF00FFULL) + ((word >> 8) & 0x00FF00FF00FF00FFULL)
    return (word * 0x0001000100010001ULL) >> 48


cdef inline uint64_t read_bits(const uint8_t* data, uint64_t bitpos, int width) noexcept nogil:
    cdef uint64_t word
    memcpy(&word, data + (bitpos >> 3), 8)
    return (word >> (bitpos & 7)) & ((1ULL << width) - 1)


cdef inline void or_bits(uint8_t* data, uint64_t bitpos, uint64_t value) noexcept nogil:
    cdef uint64_t word
    memcpy(&word, data + (bitpos >> 3), 8)
    word |= value << (bitpos & 7)
    memcpy(data + (bitpos >> 3), &word, 8)


def pack_compact(
    uint8_t[::1] records,
    uint8_t[::1] sizes,
    const uint64_t[::1] hashes,
    const uint64_t[::1] codes,
    const uint8_t[::1] ext,
    uint64_t first_record,
    int bucket_shift,
    int fp_shift,
    uint64_t fp_mask,
    int value_bits,
    int record_bits,
):
    """Append sorted records (fingerprint | value code | ext bit) and count them per bucket.

    Returns the index of the first bucket that overflowed 255 records, or -1.
    """
    cdef Py_ssize_t i, n = hashes.shape[0]
    cdef uint64_t h, rec, bucket
    cdef long long overflow = -1
    with nogil:
        for i in range(n):
            h = hashes[i]
            bucket = h >> bucket_shift
            if sizes[bucket] == 255:
                overflow = bucket
                break
            sizes[bucket] += 1
            rec = (((h >> fp_shift) & fp_mask) << (value_bits + 1)) | (codes[i] << 1) | ext[i]
            or_bits(&records[0], (first_record + i) * record_bits, rec)
    return overflow


def count_buckets(uint8_t[::1] sizes, const uint64_t[::1] hashes, int bucket_shift):
    """Count sorted hashes per bucket (exact stores); returns an overflowing bucket or -1."""
    cdef Py_ssize_t i, n = hashes.shape[0]
    cdef uint64_t bucket
    cdef long long overflow = -1
    with nogil:
        for i in range(n):
            bucket = hashes[i] >> bucket_shift
            if sizes[bucket] == 255:
                overflow = bucket
                break
            sizes[bucket] += 1
    return overflow


def _reopen_view(path, fingerprint):
    """The view of the store file at ``path``, which must still be the store pickled."""
    from qseg.resources.store import Store, StoreError

    store = Store.open(path)
    if store.fingerprint != fingerprint:
        raise StoreError(f"{path}: not the store that was pickled (fingerprint "
                         f"{store.fingerprint}, pickled {fingerprint}); it changed since")
    return store.view


cdef class StoreView:
    """Read-only lookups in the arrays of one store, wherever its bytes live (mmap or memory).

    The layout's sections must lie inside ``buffer`` (``store.py`` checks the header before
    making a view); the bytes inside them are not trusted: a lookup never reads outside its
    sections, whatever the stored indexes and offsets say, and treats an impossible index as
    a key that is not there.
    """

    def __init__(self, buffer, dict layout, uint64_t[::1] decode):
        cdef const uint8_t[::1] mv = buffer
        cdef const uint8_t* base = &mv[0]
        cdef uint64_t size = mv.shape[0]
        cdef Py_ssize_t sizes = layout["sizes"], bases = layout["bases"]
        cdef Py_ssize_t hashes, values, key_offsets, key_bytes, records
        self.buffer = buffer
        self.layout = layout
        self.origin = None
        self.exact = layout["exact"]
        self.seed = layout["seed"]
        self.n_keys = layout["n_keys"]
        self.bucket_shift = 64 - layout["bucket_bits"]
        self.sizes = base + sizes
        self.bases = <const uint64_t*>(base + bases)
        self.decode = decode
        if self.exact:
            hashes, values = layout["hashes"], layout["values"]
            key_offsets, key_bytes = layout["key_offsets"], layout["key_bytes"]
            self.hashes = <const uint64_t*>(base + hashes)
            self.values = <const uint64_t*>(base + values)
            self.key_offsets = <const uint64_t*>(base + key_offsets)
            self.key_bytes = base + key_bytes
            self.key_limit = size - key_bytes if size > <uint64_t>key_bytes else 0
        else:
            records = layout["records"]
            self.records = base + records
            self.value_bits = layout["value_bits"]
            self.value_mask = (1ULL << self.value_bits) - 1
            self.record_bits = layout["fingerprint_bits"] + self.value_bits + 1
            self.fp_shift = 64 - layout["bucket_bits"] - layout["fingerprint_bits"]
            self.fp_mask = (1ULL << layout["fingerprint_bits"]) - 1

    cdef bint find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                   Py_ssize_t nparts, uint64_t* value, bint* ext) noexcept nogil:
        """Look up the key whose hash is ``h``; exact stores also compare the key's bytes,
        given as ``parts`` that are joined by single spaces."""
        cdef uint64_t bucket = h >> self.bucket_shift
        cdef uint64_t block = bucket >> 6
        cdef uint64_t start = self.bases[block]
        cdef uint64_t t = block << 6, r, end, rec, fp, stored, word
        while t + 8 <= bucket:  # add the sizes of the block's earlier buckets, 8 at a time
            memcpy(&word, self.sizes + t, 8)
            start += byte_sum(word)
            t += 8
        while t < bucket:
            start += self.sizes[t]
            t += 1
        end = start + self.sizes[bucket]
        if end > self.n_keys or end < start:  # a damaged index: nothing found, nothing read
            return False
        if not self.exact:
            fp = (h >> self.fp_shift) & self.fp_mask
            for r in range(start, end):
                rec = read_bits(self.records, r * self.record_bits, self.record_bits)
                stored = rec >> (self.value_bits + 1)
                if stored == fp:
                    value[0] = self.decode[(rec >> 1) & self.value_mask]
                    ext[0] = rec & 1
                    return True
                if stored > fp:
                    return False
            return False
        for r in range(start, end):
            if self.hashes[r] == h:
                if self._same_key(r, parts, lengths, nparts):
                    value[0] = self.values[r] & ~EXT_BIT
                    ext[0] = (self.values[r] & EXT_BIT) != 0
                    return True
            elif self.hashes[r] > h:
                return False
        return False

    cdef bint _same_key(self, uint64_t r, const uint8_t** parts, const Py_ssize_t* lengths,
                        Py_ssize_t nparts) noexcept nogil:
        cdef uint64_t low = self.key_offsets[r], high = self.key_offsets[r + 1]
        if low > high or high > self.key_limit:  # damaged offsets: not this key
            return False
        cdef const uint8_t* key = self.key_bytes + low
        cdef uint64_t remaining = high - low
        cdef Py_ssize_t p
        for p in range(nparts):
            if p:
                if remaining < 1 or key[0] != 32:
                    return False
                key += 1
                remaining -= 1
            if <uint64_t>lengths[p] > remaining or memcmp(key, parts[p], lengths[p]) != 0:
                return False
            key += lengths[p]
            remaining -= lengths[p]
        return remaining == 0

    def __reduce__(self):
        """A view of a store file pickles as the file's path and fingerprint, and is opened
        again (read-only, mapped, shared) where it is unpickled; a view of a store in memory
        pickles as its bytes."""
        if self.origin is not None:
            return _reopen_view, self.origin
        return StoreView, (bytes(self.buffer), self.layout, np.asarray(self.decode))

    def lookup(self, str key):
        """``(found, value, extendable)`` for one key (normalized, space-joined words)."""
        cdef Py_ssize_t length
        cdef const uint8_t* data = <const uint8_t*>PyUnicode_AsUTF8AndSize(key, &length)
        cdef uint64_t h = fmix64(fnv_feed(fnv_start(self.seed), data, length))
        cdef uint64_t value = 0
        cdef bint ext = False
        cdef bint found = self.find(h, &data, &length, 1, &value, &ext)
        return found, value, ext

    def phrase_gaps(self, tuple words, Py_ssize_t longest):
        """The gaps of ``words`` (a query's, at most :data:`MAX_PHRASE_QUERY_WORDS`) inside
        an occurrence of a key of this store with a value, in order: each word's n-grams
        hashed as they grow, looked up while a key begins with them (its extendable bit),
        the words' bytes never joined (:mod:`qseg.segmenters.phrase_list`'s hot path)."""
        cdef Py_ssize_t n = len(words), start, end, k
        if n > MAX_PHRASE_QUERY_WORDS:
            raise ValueError(f"at most {MAX_PHRASE_QUERY_WORDS} words, got {n}")
        cdef const uint8_t* ptrs[MAX_PHRASE_QUERY_WORDS]
        cdef Py_ssize_t lens[MAX_PHRASE_QUERY_WORDS]
        cdef uint8_t inside[MAX_PHRASE_QUERY_WORDS]
        cdef uint64_t state, value
        cdef bint ext, hit = False
        cdef const uint8_t* space = <const uint8_t*>" "
        for k in range(n):  # every word's UTF-8 (raises on a word that has none) first
            ptrs[k] = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>words[k], &lens[k])
            inside[k] = 0
        for start in range(n - 1):
            state = fnv_feed(fnv_start(self.seed), ptrs[start], lens[start])
            end = start + 1
            while end < n and end - start < longest:
                state = fnv_feed(fnv_feed(state, space, 1), ptrs[end], lens[end])
                value, ext = 0, False
                if not self.find(fmix64(state), &ptrs[start], &lens[start], end - start + 1,
                                 &value, &ext):
                    break
                if value > 0:
                    hit = True
                    for k in range(start, end):
                        inside[k] = 1
                if not ext:
                    break
                end += 1
        if not hit:
            return ()
        return tuple([k for k in range(n - 1) if inside[k]])

    def lookup_many(self, keys):
        """Values (0 where absent) and found/extendable flags of many keys, as numpy arrays."""
        cdef Py_ssize_t i, n = len(keys), length
        cdef const uint8_t* data
        cdef uint64_t h, value
        cdef bint ext
        values = np.zeros(n, dtype=np.uint64)
        found = np.zeros(n, dtype=np.bool_)
        extendable = np.zeros(n, dtype=np.bool_)
        cdef uint64_t[::1] v = values
        cdef uint8_t[::1] f = found.view(np.uint8)
        cdef uint8_t[::1] e = extendable.view(np.uint8)
        for i in range(n):
            data = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>keys[i], &length)
            h = fmix64(fnv_feed(fnv_start(self.seed), data, length))
            value = 0
            ext = False
            if self.find(h, &data, &length, 1, &value, &ext):
                v[i] = value
                f[i] = 1
                e[i] = ext
        return values, found, extendable

    def key_at(self, uint64_t r):
        """The key of record ``r`` (exact stores only); ``ValueError`` if its offsets or bytes
        are damaged."""
        self._check_record(r)
        cdef uint64_t low = self.key_offsets[r], high = self.key_offsets[r + 1]
        if low > high or high > self.key_limit:
            raise ValueError(f"record {r}: key offsets {low}..{high} out of range")
        cdef const uint8_t* start = self.key_bytes + low
        try:
            return start[: high - low].decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"record {r}: key is not UTF-8") from None

    def entry_at(self, uint64_t r):
        """``(value, extendable)`` of record ``r`` (exact stores only)."""
        self._check_record(r)
        return self.values[r] & ~EXT_BIT, (self.values[r] & EXT_BIT) != 0

    def _check_record(self, uint64_t r):
        if not self.exact:
            raise ValueError("a compact store keeps no keys or exact values")
        if r >= self.n_keys:
            raise IndexError(f"record {r} of {self.n_keys}")
