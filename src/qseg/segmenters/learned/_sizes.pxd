"""The sizes the joint model's compiled parts share: how long a query each part takes, and the
widths of the rows they fill (each named after what it must equal on the Python side)."""

cdef enum:
    MAX_WORDS = 12  # joint.MAX_JOINT_WORDS: every candidate enumerated
    MAX_GAPS = MAX_WORDS - 1
    MAX_CANDIDATES = 1 << MAX_GAPS
    HALF_CANDIDATES = 1 << (MAX_GAPS - 1)
    CANDIDATE_COLUMNS = 29  # len(joint.CANDIDATE_FEATURES)
    TAG_COLUMNS = 5  # the last five: part-of-speech features, NaN without tags
    MAX_SPAN = 5  # gap_features.MAX_SPAN: the longest span counted
    NAME_COUNTS = 7  # len(name_features._COUNT_AT)
    NAME_RATES = 4  # len(name_features._RATE_AT)
    LEXICON_COLUMNS = 6
    MAX_GAP_WIDTH = 256  # room for len(gap_features.FEATURE_NAMES)
    MAX_LONG_WORDS = 64  # the longest query decided (candidates as 64-bit masks)
    WINDOW_WORDS = 8  # break_model.WINDOW_WORDS: the words a long query's gap is judged in
    WINDOW_CELLS = WINDOW_WORDS * (WINDOW_WORDS + 1)
    SEARCHED = 64  # break_model._SEARCHED: candidates searched beyond the window
