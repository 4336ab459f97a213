import gzip

import pytest

from qseg.errors import InputError, PathError
from qseg.resources import LogProbabilities, NgramCounts, Resources, TitleSet


def test_counts_file_is_normalized_and_case_variants_are_added(write):
    path = write("c.txt", "new york\t10\nNew York\t5\nnew  york city\t3\n")
    counts = NgramCounts.from_file(path)
    assert dict(counts.items()) == {"new york": 15, "new york city": 3}
    assert counts.count("new york") == 15 and counts.count("boston") == 0
    assert counts.max_order == 3 and len(counts) == 2
    assert counts.view.lookup("new york") == (True, 15, True)  # a prefix of a longer n-gram
    assert counts.view.lookup("new york city") == (True, 3, False)
    assert counts.count_many(["new york", "boston", "new york city"]).tolist() == [15, 0, 3]


def test_gzip_files_are_read(tmp_path):
    path = tmp_path / "c.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("a b\t7\n")
    assert dict(NgramCounts.from_file(path).items()) == {"a b": 7}


def test_crlf_and_byte_order_mark_are_accepted(write):
    path = write("c.txt", "\ufeffa b\t7\r\nb c\t8\r\n")
    assert dict(NgramCounts.from_file(path).items()) == {"a b": 7, "b c": 8}


@pytest.mark.parametrize(
    "content, message",
    [
        ("a b\t7\na b 7\n", ":2: expected 2 tab-separated fields, found 1"),
        ("a b\t7\tx\n", ":1: expected 2 tab-separated fields, found 3"),
        ("a b\t-1\n", ":1: count '-1' is not a non-negative integer"),
        ("a b\t1.5\n", ":1: count '1.5' is not a non-negative integer"),
        ("a b\t7\n\t3\n", ":2: bad n-gram '': empty query"),
        ("", ": no n-gram counts in file"),
        (b"a b\t7\nc \xff\t3\n", ":2: invalid UTF-8 at byte 2"),
        (b"\x00\x01\x02\x03", ":1: binary data"),
    ],
)
def test_malformed_count_files_name_file_and_line(write, content, message):
    path = write("bad.txt", content)
    with pytest.raises(InputError) as info:
        NgramCounts.from_file(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_missing_and_directory_paths(tmp_path):
    with pytest.raises(PathError, match=r"nope\.txt: no such file"):
        NgramCounts.from_file(tmp_path / "nope.txt")
    with pytest.raises(PathError, match="is a directory"):
        TitleSet.from_file(tmp_path)


def test_corrupt_gzip_is_reported(write):
    path = write("c.txt.gz", b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(InputError, match="cannot be read"):
        NgramCounts.from_file(path)


def test_overlong_lines_are_refused(write, monkeypatch):
    import qseg.fileio

    monkeypatch.setattr(qseg.fileio, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(qseg.fileio, "_BLOCK", 64)
    path = write("c.txt", "x" * 1000)
    with pytest.raises(InputError, match=":1: line longer than 100 bytes"):
        NgramCounts.from_file(path)


def test_titles_file(write):
    titles = TitleSet.from_file(write("t.txt", "New York Yankees\nnew york\nthe bronx zoo\n"))
    assert set(titles) == {"new york yankees", "new york", "the bronx zoo"}
    assert "new york" in titles and "the bronx" not in titles and len(titles) == 3
    assert titles.max_words == 3
    assert titles.view.lookup("the bronx") == (True, 0, True)  # a prefix only
    assert titles.contains_many(["new york", "the bronx", "x"]).tolist() == [True, False, False]
    with pytest.raises(InputError, match=":1: expected one title a line"):
        TitleSet.from_file(write("t2.txt", "a\tb\n"))
    with pytest.raises(InputError, match=":2: bad n-gram"):
        TitleSet.from_file(write("t3.txt", "a\n\n"))


def test_probability_files(write):
    uni = write("u.txt", "new\t-3.0\nyork\t-4\n")
    bi = write("b.txt", "new york\t-5.5\n")
    probs = LogProbabilities.from_files(uni, bi)
    assert probs.pmi("new", "york") == pytest.approx(1.5)
    with pytest.raises(InputError, match=":1: expected a 2-gram, found 1 words"):
        LogProbabilities.from_files(uni, uni)
    with pytest.raises(InputError, match=r":1: log10 probability 0.5 is not <= 0"):
        LogProbabilities.from_files(write("u2.txt", "new\t0.5\n"), bi)
    with pytest.raises(InputError, match=":2: duplicate entry for 'new'"):
        LogProbabilities.from_files(write("u3.txt", "new\t-1\nNEW\t-2\n"), bi)
    with pytest.raises(InputError, match=":1: 'x' is not a number"):
        LogProbabilities.from_files(write("u4.txt", "new\tx\n"), bi)


def test_resources_load_needs_both_probability_files(write):
    from qseg.errors import QsegError

    with pytest.raises(QsegError, match="both a unigram and a bigram file"):
        Resources.load(unigrams=write("u.txt", "a\t-1\n"))


def test_default_resources_are_the_wordsegment_web1t_counts():
    counts = Resources().require_ngrams()
    assert counts.max_order == 2
    keys = [key for key, _ in counts.items()]
    assert sum(" " not in k for k in keys) == 333_213
    assert sum(" " in k for k in keys) == 258_437
    assert counts.count("the") == 23_135_851_162  # the Web1T count of "the"
    assert counts.count("new york") > 1_000_000


def test_atomic_writes_replace_whole_files_with_umask_permissions(tmp_path):
    import os

    from qseg.fileio import atomic_write, atomic_write_bytes

    text, data = tmp_path / "a.txt", tmp_path / "b.bin"
    umask = os.umask(0o022)
    try:
        with atomic_write(text) as out:
            out.write("new\n")
        atomic_write_bytes(data, b"\x00\x01")
    finally:
        os.umask(umask)
    assert text.read_text() == "new\n" and data.read_bytes() == b"\x00\x01"
    assert (text.stat().st_mode & 0o777) == (data.stat().st_mode & 0o777) == 0o644
    try:
        with atomic_write(text) as out:
            out.write("half")
            raise RuntimeError("interrupted")
    except RuntimeError:
        pass
    assert text.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_lookups_normalize_like_the_constructors_and_behave_like_a_mapping():
    counts = NgramCounts({"New York": 10, "new  york city": 3})
    assert counts.count("New York") == counts["NEW  york"] == 10
    assert "New York" in counts and "" not in counts and "paris" not in counts
    with pytest.raises(KeyError):
        counts["paris"]
    assert sorted(counts) == sorted(counts.keys()) == ["new york", "new york city"]
    assert sorted(counts.values()) == [3, 10] and counts.get("paris", 7) == 7
    titles = TitleSet(["New York Yankees"])
    assert "New York Yankees" in titles and "new  york yankees" in titles
    assert "" not in titles and 5 not in titles
