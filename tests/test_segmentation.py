import pytest
from hypothesis import given
from hypothesis import strategies as st

from qseg.segmentation import NestedSegmentation, Segmentation, SegmentationError

WORDS = st.lists(
    st.text(alphabet="abcxyz019'&-.", min_size=1, max_size=6), min_size=1, max_size=9
).map(tuple)


@st.composite
def segmentations(draw):
    words = draw(WORDS)
    breaks = draw(st.lists(st.integers(0, 1), min_size=len(words) - 1, max_size=len(words) - 1))
    return Segmentation(words, breaks)


@st.composite
def trees(draw, words):
    """A random binary tree over ``words`` as nested pairs."""
    if len(words) == 1:
        return words[0]
    cut = draw(st.integers(1, len(words) - 1))
    return (draw(trees(words[:cut])), draw(trees(words[cut:])))


# -- flat -----------------------------------------------------------------------------------


def test_all_forms_of_one_segmentation():
    seg = Segmentation(("new", "york", "yankees", "tickets"), (0, 1, 0))
    assert seg.to_pipe() == "new york|yankees tickets"
    assert seg.to_quoted() == '"new york" "yankees tickets"'
    assert seg.segments == (("new", "york"), ("yankees", "tickets"))
    assert seg.segment_texts == ("new york", "yankees tickets")
    assert seg.spans == ((0, 2), (2, 4))
    assert seg.query == "new york yankees tickets"
    assert Segmentation.from_pipe("new york|yankees tickets") == seg
    assert Segmentation.from_quoted('"new york" "yankees tickets"') == seg
    assert Segmentation.from_segments(["new york", ["yankees", "tickets"]]) == seg


def test_single_word_segments_are_never_quoted():
    seg = Segmentation.from_pipe("stainless steel|chest|freezers")
    assert seg.to_quoted() == '"stainless steel" chest freezers'
    assert seg.breaks == (0, 1, 1)
    assert Segmentation.from_quoted('"stainless steel" "chest" freezers') == seg


def test_paper_001_table_1_boundary_variables():
    # "apply first aid course on line": 4 Turkers gave apply | first aid course | on line
    seg = Segmentation.from_pipe("apply|first aid course|on line")
    assert seg.breaks == (1, 0, 0, 1, 0)
    assert Segmentation.from_pipe("apply first aid course|on line").breaks == (0, 0, 0, 1, 0)
    assert Segmentation.from_pipe("apply first aid|course on line").breaks == (0, 0, 1, 0, 0)


def test_parsers_normalize_and_tolerate_spacing():
    assert Segmentation.from_pipe(" New  York | Yankees ").to_pipe() == "new york|yankees"


@pytest.mark.parametrize("text", ["", "a||b", "|a", "a|", " | "])
def test_empty_pipe_segments_are_refused(text):
    with pytest.raises(SegmentationError):
        Segmentation.from_pipe(text)


@pytest.mark.parametrize("text", ['"a b', 'a "" b', '""', "   "])
def test_bad_quoted_text_is_refused(text):
    with pytest.raises(SegmentationError):
        Segmentation.from_quoted(text)


@pytest.mark.parametrize(
    "words, breaks",
    [((), ()), (("a", "b"), ()), (("a", "b"), (2,)), (("a", "b"), (True,)), (("A", "b"), (1,))],
)
def test_invalid_values_are_refused(words, breaks):
    with pytest.raises(SegmentationError):
        Segmentation(words, breaks)


def test_segmentations_are_immutable_and_hashable():
    seg = Segmentation.from_pipe("a b|c")
    with pytest.raises(AttributeError):
        seg.words = ("x",)
    assert {seg, Segmentation.from_pipe("a b|c")} == {seg}
    assert seg != Segmentation.from_pipe("a|b c")


@given(segmentations())
def test_every_text_form_round_trips(seg):
    assert Segmentation.from_pipe(seg.to_pipe()) == seg
    assert Segmentation.from_quoted(seg.to_quoted()) == seg
    assert Segmentation.from_segments(seg.segments) == seg
    assert Segmentation.from_segments(seg.segment_texts) == seg
    assert Segmentation(seg.words, seg.breaks) == seg
    assert eval(repr(seg), {"Segmentation": Segmentation}) == seg


# -- nested ---------------------------------------------------------------------------------

# Paper 001, Table 2 (bracket text, boundary variables). The paper prints the second row as
# "((apply (first aid)) course) (on line))", one opening bracket short; its boundary variables
# 1 0 2 3 0 fix the tree, written here with the bracket restored.
TABLE_2 = [
    ("((apply first) ((aid course) (on line)))", (0, 2, 0, 1, 0)),
    ("(((apply (first aid)) course) (on line))", (1, 0, 2, 3, 0)),
    ("((apply ((first aid) course)) (on line))", (2, 0, 1, 3, 0)),
    ("(apply (((first aid) course) (on line)))", (3, 0, 1, 2, 0)),
    ("((apply (first aid)) (course (on line)))", (1, 0, 2, 1, 0)),
]


@pytest.mark.parametrize("brackets, heights", TABLE_2)
def test_paper_001_table_2_boundary_heights(brackets, heights):
    nested = NestedSegmentation.from_brackets(brackets)
    assert nested.words == ("apply", "first", "aid", "course", "on", "line")
    assert nested.heights == heights
    assert nested.to_brackets() == brackets
    assert NestedSegmentation(nested.words, heights) == nested
    assert nested.height == max(heights)


def test_tree_view_and_from_tree():
    nested = NestedSegmentation.from_brackets("((new york) yankees)")
    assert nested.tree == (("new", "york"), "yankees")
    assert nested.heights == (0, 1)
    assert NestedSegmentation.from_tree((("new", "york"), "yankees")) == nested
    single = NestedSegmentation.from_brackets("yankees")
    assert single.tree == "yankees" and single.heights == () and single.height == -1


@pytest.mark.parametrize(
    "text",
    [
        "(a b",
        "a b)",
        "(a b) c",
        "(a ())",
        "()",
        "",
        '(a "|")',
    ],
)
def test_malformed_bracket_text_is_refused(text):
    with pytest.raises(SegmentationError):
        NestedSegmentation.from_brackets(text)


@pytest.mark.parametrize("heights", [(1, 1), (2, 0), (0, 2, 0), (-1, 0), (0, 3, 0)])
def test_heights_that_describe_no_tree_are_refused(heights):
    with pytest.raises(SegmentationError):
        NestedSegmentation(("a", "b", "c", "d")[: len(heights) + 1], heights)


# The nested segmentations of the Mishra et al. + Wiki method (saharoy-sigir12 data) have nodes
# with more than two children and brackets around single parts.
@pytest.mark.parametrize(
    "brackets, canonical, heights, binary",
    [
        ("((larry) (the) (lawnmower))", "(larry the lawnmower)", (0, 0), False),
        (
            "(((larry) (the) (lawnmower)) ((tv) (show)))",
            "((larry the lawnmower) (tv show))",
            (0, 0, 1, 0),
            False,
        ),
        (
            "((lyrics) (for) (((my) (name)) (is)))",
            "(lyrics for ((my name) is))",
            (2, 2, 0, 1),
            False,
        ),
        ("((a) b)", "(a b)", (0,), True),
        ("(((a)))", "a", (), True),
        ("(a (b c d) e)", "(a (b c d) e)", (1, 0, 0, 1), False),
    ],
)
def test_wider_nodes_and_single_part_brackets(brackets, canonical, heights, binary):
    nested = NestedSegmentation.from_brackets(brackets)
    assert nested.to_brackets() == canonical
    assert nested.heights == heights
    assert nested.is_binary is binary
    assert NestedSegmentation(nested.words, heights) == nested


@given(WORDS.flatmap(lambda words: trees(words)))
def test_nested_forms_round_trip(tree):
    nested = NestedSegmentation.from_tree(tree)
    assert nested.tree == tree
    assert NestedSegmentation.from_brackets(nested.to_brackets()) == nested
    assert NestedSegmentation(nested.words, nested.heights) == nested
    assert nested.is_binary


def test_long_degenerate_trees_need_no_recursion():
    words = tuple(f"w{i}" for i in range(3000))
    nested = NestedSegmentation(words, tuple(range(len(words) - 1)))  # left-branching
    assert nested.to_brackets().startswith("(" * 2999 + "w0 w1)")
    assert NestedSegmentation.from_brackets(nested.to_brackets()) == nested
