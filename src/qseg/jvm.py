"""The JVMs that qseg starts (Spark, Lucene): the ``java`` they run, and their logging
(warnings only, on stderr).

Both log through log4j2, by default at INFO and partly on stdout, which would mix with qseg's
own output (``--format json``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from qseg.errors import QsegError


def require_java(what: str) -> str:
    """The ``java`` a JVM will run (``$JAVA_HOME/bin/java``, else the first on ``PATH``), or
    one line saying it is missing: the launch scripts would otherwise print their own errors
    and the caller a traceback."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not os.access(java, os.X_OK):
            raise QsegError(
                f"{what} needs Java 17+, and JAVA_HOME={home} holds no bin/java: set JAVA_HOME "
                "to a Java installation, or unset it to use the java on PATH"
            )
        return str(java)
    found = shutil.which("java")
    if found is None:
        raise QsegError(f"{what} needs Java 17+, and no java is on PATH (or set JAVA_HOME)")
    return found


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
