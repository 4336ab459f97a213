import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qseg.query import MAX_QUERY_WORDS, QueryError, normalize, normalize_key


def test_lower_cases_and_splits_on_any_whitespace():
    assert normalize("  New\tYork \n Yankees  ") == ("new", "york", "yankees")


@pytest.mark.parametrize(
    "text, words",
    [
        ("mother's day", ("mother's", "day")),
        ("digital x-ray machines", ("digital", "x-ray", "machines")),
        ("u.s. army & navy 2006", ("u.s.", "army", "&", "navy", "2006")),
        ("linens 'n things", ("linens", "'n", "things")),
    ],
)
def test_keeps_apostrophes_hyphens_periods_digits_and_ampersands(text, words):
    assert normalize(text) == words


def test_reserved_characters_separate_words():
    assert normalize('"new york"|yankees (tickets)') == ("new", "york", "yankees", "tickets")


def test_nfkc_folds_full_width_letters():
    full_width = "\uff2e\uff25\uff37 \uff59\uff4f\uff52\uff4b"  # NEW york, full width
    assert normalize(full_width) == ("new", "york")


@pytest.mark.parametrize("text", ["", "   ", "\t\n", '"|"', "()"])
def test_empty_query_is_refused(text):
    with pytest.raises(QueryError, match="empty query"):
        normalize(text)


def test_overlong_query_is_refused_with_the_limit():
    with pytest.raises(QueryError, match=f"limit is {MAX_QUERY_WORDS}"):
        normalize("w " * (MAX_QUERY_WORDS + 1))
    assert len(normalize("w " * MAX_QUERY_WORDS)) == MAX_QUERY_WORDS


def test_normalize_key_joins_words_with_single_spaces():
    assert normalize_key("New  York") == "new york"
    assert normalize_key("new york") == "new york"


@given(st.text(min_size=1))
def test_normalization_is_idempotent(text):
    try:
        words = normalize(text)
    except QueryError:
        return
    assert normalize(" ".join(words)) == words
    assert normalize_key(" ".join(words)) == " ".join(words)
    assert all(w and not any(c.isspace() or c in '|"()' for c in w) for w in words)


NORMAL = re.compile(r"[!#-'*-@\[-{}~]+(?: [!#-'*-@\[-{}~]+)*")


@given(st.text(alphabet=st.characters(max_codepoint=130), max_size=12))
def test_compiled_fast_path_accepts_exactly_normal_text(text):
    """Words of printable ASCII without upper case or |"(), joined by single spaces."""
    from qseg._words import normal_words

    words = normal_words(text)
    assert (words is not None) == bool(NORMAL.fullmatch(text))
    if words is not None:
        assert words == tuple(text.split(" ")) == normalize(text)


@pytest.mark.parametrize(
    "text",
    [
        "\u200bnew york",  # zero-width space
        "new\u200d york",  # zero-width joiner
        "ne\u00adw york",  # soft hyphen
        "\ufeffnew york",  # byte order mark
        "\u200enew york\u200f",  # left-to-right and right-to-left marks
        "\u202anew\u202c \u2066york\u2069",  # bidi embedding and isolates
        "new \u2060york\u200c",  # word joiner, zero-width non-joiner
    ],
)
def test_invisible_format_characters_are_dropped(text):
    assert normalize(text) == ("new", "york")
    assert normalize_key(text) == "new york"


def test_a_query_of_format_characters_only_is_empty():
    with pytest.raises(QueryError, match="empty query"):
        normalize("\u200b\u00ad \ufeff")


@pytest.mark.parametrize(
    "text, where",
    [
        ("a \udcff b", "U+DCFF, at character 2"),  # a byte 0xFF read with surrogateescape
        ("\ud800", "U+D800, at character 0"),
        ("Café \udfff", "U+DFFF, at character 5"),
        (["new", "york\udc80"], "U+DC80, at character 8"),  # words: joined by a space
    ],
)
def test_text_with_a_lone_surrogate_is_refused_as_no_query(text, where):
    """It has no UTF-8 form, so no store or kernel could look its words up."""
    with pytest.raises(QueryError, match="not Unicode text: a lone surrogate") as error:
        normalize(text)
    assert where in str(error.value) and "\n" not in str(error.value)


SURROGATES = st.text(st.characters(categories=["Cs"]), max_size=2)


@given(st.lists(st.one_of(st.text(), SURROGATES), min_size=1).map("".join))
def test_normalized_words_are_always_unicode_text(text):
    """Whatever the text, its words have a UTF-8 form (what the kernels read), or it is a
    :class:`QueryError`."""
    try:
        words = normalize(text)
    except QueryError:
        return
    assert " ".join(words).encode("utf-8")
