import pytest

from qseg.corpora import read_queries, read_references, read_segmentations, read_votes
from qseg.errors import InputError
from qseg.segmentation import Segmentation


def test_queries_are_normalized_in_file_order(write):
    queries = read_queries(write("q.txt", "2\tNew  York\n1\tboston\n"))
    assert list(queries.items()) == [("2", ("new", "york")), ("1", ("boston",))]


def test_votes_keep_file_order_and_accept_any_positive_totals(write):
    votes = read_votes(write("v.txt", "7\t[(8, 'a b|c'), (2, 'a|b|c'), (1, 'a b c')]\n"))
    refs = votes["7"]
    assert [(r.votes, r.segmentation.to_pipe()) for r in refs] == [
        (8, "a b|c"),
        (2, "a|b|c"),
        (1, "a b c"),
    ]


def test_references_are_read_from_votes_or_from_segmentations(write):
    votes = read_references(write("v.txt", "1\t[(10, 'a b')]\n"))
    plain = read_references(write("s.txt", "1\ta b\n"))
    assert votes["1"][0].segmentation == plain["1"][0].segmentation == Segmentation.from_pipe("a b")
    assert plain["1"][0].votes == 1


@pytest.mark.parametrize(
    "reader, content, message",
    [
        (read_queries, "1\ta\n1\tb\n", ":2: duplicate query id '1'"),
        (read_queries, " \ta\n", ":1: empty query id"),
        (read_queries, "1\t  \n", ":1: empty query"),
        (read_segmentations, "1\ta||b\n", ":1: empty segment"),
        (read_segmentations, "", "no records in file"),
        (read_votes, "1\t[(10, 'a b'\n", ":1: votes are not a Python literal list"),
        (read_votes, "1\t[]\n", ":1: expected a non-empty list"),
        (read_votes, "1\t[(0, 'a b')]\n", ":1: expected (positive votes, 'segmentation')"),
        (read_votes, "1\t[('x', 'a b')]\n", ":1: expected (positive votes"),
        (
            read_votes,
            "1\t[(5, 'a b'), (5, 'a c')]\n",
            ":1: the voted segmentations are of",
        ),
        (read_votes, "1\t[(5, 'a b'), (5, 'A B')]\n", ":1: the same segmentation is listed twice"),
        (read_votes, "1\t__import__('os')\n", ":1: votes are not a Python literal list"),
    ],
)
def test_malformed_corpus_lines_name_the_line(write, reader, content, message):
    with pytest.raises(InputError) as info:
        reader(write("bad.txt", content))
    assert message in str(info.value)
