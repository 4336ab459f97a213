"""The release of qseg: the one place it is written (pyproject.toml reads it from here), read
without importlib.metadata, whose scan of the installed packages costs tens of milliseconds
at every start."""

VERSION = "0.1.0"
