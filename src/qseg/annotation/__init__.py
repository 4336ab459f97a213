"""Annotating queries: projects of queries, annotators and their answers (:mod:`.project`)."""
