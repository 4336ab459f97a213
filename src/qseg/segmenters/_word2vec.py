"""The child process of :func:`qseg.segmenters.embeddings.train_word_vectors`.

``python -m qseg.segmenters._word2vec CORPUS OUT`` reads the training settings (JSON) on stdin
and writes the vectors to OUT; bad corpus content exits with :data:`INPUT_ERROR` and the error
as JSON on stdout, so the parent raises the same error.
"""

from __future__ import annotations

import json
import sys

INPUT_ERROR = 3


def main(argv: list[str]) -> int:
    from qseg.errors import InputError
    from qseg.fileio import atomic_write_bytes
    from qseg.segmenters.embeddings import train_here

    corpus, out = argv
    try:
        vectors = train_here(corpus, json.loads(sys.stdin.read()))
    except InputError as exc:
        print(json.dumps({"source": exc.source, "line": exc.line, "message": exc.reason}))
        return INPUT_ERROR
    atomic_write_bytes(out, vectors.to_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
