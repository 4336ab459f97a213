"""Readers for annotated query segmentation corpora."""

from qseg.corpora.webis import (
    Reference,
    read_queries,
    read_references,
    read_segmentations,
    read_votes,
)

__all__ = ["Reference", "read_queries", "read_references", "read_segmentations", "read_votes"]
