"""Logging of the JVMs that qseg starts (Spark, Lucene): warnings only, on stderr.

Both log through log4j2, by default at INFO and partly on stdout, which would mix with qseg's
own output (``--format json``).
"""

from __future__ import annotations

from pathlib import Path

_LOG4J = """status = error
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = {tag}: %p %c{{1}}: %m%n
logger.nativeio.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeio.level = error
"""


def log4j_config(folder: Path, tag: str) -> Path:
    """Write the log4j2 configuration for a JVM into ``folder``; returns its path."""
    path = folder / f"qseg-{tag}-log4j2.properties"
    if not path.exists():
        path.write_text(_LOG4J.format(tag=tag))
    return path
