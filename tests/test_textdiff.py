"""dashboard.core.textdiff: character segments, plain-text rendering, the truncation bound."""

from hypothesis import given
from hypothesis import strategies as st

from dashboard.core.textdiff import LIMIT, TRUNCATED, char_diff, diff_text, similarity


def sides(segments):
    a = "".join(t for k, t in segments if k in ("equal", "delete"))
    b = "".join(t for k, t in segments if k in ("equal", "insert"))
    return a, b


def test_one_substituted_character():
    segs = char_diff("the cat", "the bat")
    assert segs == [("equal", "the "), ("delete", "c"), ("insert", "b"), ("equal", "at")]
    assert diff_text(segs) == "the [-c-]{+b+}at"


def test_insert_delete_and_identical():
    assert char_diff("42", "421") == [("equal", "42"), ("insert", "1")]
    assert char_diff("4.21", "421") == [("equal", "4"), ("delete", "."), ("equal", "21")]
    assert char_diff("same", "same") == [("equal", "same")]
    assert char_diff("", "") == []
    assert char_diff("", "new") == [("insert", "new")]
    assert diff_text(char_diff("abc", "")) == "[-abc-]"


def truncated(segments) -> bool:
    return bool(segments) and segments[-1][0] == TRUNCATED


def test_markup_is_kept_as_text():
    segs = char_diff("<b>1</b>", "<b>2</b>")
    assert diff_text(segs) == "<b>[-1-]{+2+}</b>"


@given(st.text(max_size=60), st.text(max_size=60))
def test_segments_rebuild_both_inputs(a, b):
    segs = char_diff(a, b)
    assert sides(segs) == (a, b)
    assert not truncated(segs)
    assert all(t for _, t in segs)
    assert all(segs[i][0] != segs[i + 1][0] for i in range(len(segs) - 1))


def test_long_inputs_compare_prefixes_and_say_so():
    a, b = "x" * (LIMIT + 10), "x" * 100 + "y" * (LIMIT + 3)
    segs = char_diff(a, b)
    assert truncated(segs)
    assert sides(segs[:-1]) == (a[:LIMIT], b[:LIMIT])
    assert "10 more in the first" in segs[-1][1] and "103 more in the second" in segs[-1][1]
    assert "[... compared the first 5,000 characters only" in diff_text(segs)
    assert not truncated(char_diff("x" * LIMIT, "y"))


def test_similarity():
    assert similarity("abcd", "abcd") == 1.0
    assert similarity("abcd", "wxyz") == 0.0


def test_changes_read_as_whole_words_not_scattered_letters():
    """A character-level LCS alone aligns the 'n' of 'on' and the 'o' of 'document' with 'no'."""
    assert diff_text(char_diff("based on the document, the answer is no.", "no")) == "[-based on the document, the answer is -]no[-.-]"
    assert diff_text(char_diff("total 1,250 units", "total 1,205 units")) == "total 1,2{+0+}5[-0-] units"  # one number, letters inside it
