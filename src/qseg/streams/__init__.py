"""Queries in, answers out: the stream every interface segments. :mod:`.lines` reads queries
as they come (``query`` or ``id<TAB>query`` lines, or texts) and :mod:`.records` segments
them in batches and writes each answer in an output form, a skipped line keeping its place."""
