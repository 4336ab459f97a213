"""The command line's names for what library errors call by their Python names.

An error raised in the library names the Python argument that mends it, in backticks
(`` `allow_other_resources=True` ``, `` `titles=FILE` ``), so a Python caller reads the names
of the call they made; the command line prints the same error with its own flags
(``--allow-other-resources``, ``--titles FILE``). One table, applied to every error the
command line prints.
"""

from __future__ import annotations

FLAGS = {
    "`allow_other_resources=True`": "--allow-other-resources",
    "`ngrams=FILE`": "--ngrams FILE",
    "`titles=FILE`": "--titles FILE",
    "`query_log=FILE`": "--query-log FILE",
    "`Resources(vectors=...)`": "--corpus FILE",
    "`mode`": "--mode",
    "`count_bits`": "--count-bits",
    "`fingerprint_bits`": "--fingerprint-bits",
    "`min_count`": "--min-count",
    "`max_order`": "--max-order",
    "`master`": "--master",
    "`engine='spark'`": "--engine spark",
    "`source='web1t'`": "--from web1t",
}
"""A Python argument as library errors write it -> the command line's flag."""


def for_command_line(message: str) -> str:
    """An error message with the command line's flags for the Python arguments it names."""
    for python, flag in FLAGS.items():
        message = message.replace(python, flag)
    return message
