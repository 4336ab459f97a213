"""qseg inside the tools search engineers run: engine query syntax (:mod:`.syntax`)."""
