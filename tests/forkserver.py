"""``qseg`` commands forked from a process that has imported qseg once, for the docs' tests:
each of their ~80 commands started Python and imported qseg and numpy again (the docs' tests
43 -> 34 CPU seconds).

:class:`ForkServer` starts ``python tests/forkserver.py serve SOCKET``, which imports the
command line's modules and waits on a Unix socket. The ``qseg`` it writes into a folder of
its own (first on the PATH of the docs' bash) is a small client: it sends its arguments,
working folder and environment, and passes its standard input, output and error themselves
(``SCM_RIGHTS``); the server forks, and the child takes them over and runs
``qseg.cli.main`` as ``python -m qseg`` would (streams as Python makes them, ``atexit``'s
work and the streams flushed at the end); the client exits with the child's status. Each
command is a process of its own, with the files, folder and environment the shell gave it:
only the interpreter's start and the imports are shared. The installed ``qseg`` script
itself is run by tests/test_packaging.py."""

from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

CLIENT = """#!{python} -IS
import json, os, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect({address!r})
request = json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}})
socket.send_fds(connection, [request.encode() + b"\\n"], [0, 1, 2])
reply = b""
while chunk := connection.recv(64):
    reply += chunk
sys.exit(int(reply or 1))
"""
PRELOADED = (
    "numpy",
    "importlib.metadata",
    "csv",
    "decimal",
    "qseg.cli",
    "qseg.models",
    "qseg.evaluation.matching",
)
"""What the server imports before forking: what the docs' commands import (none of these
starts a thread, which a fork would not carry over)."""


class ForkServer:
    """The server process and the folder with its ``qseg`` client; :meth:`close` stops it."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="qseg-forkserver-"))
        address = str(self.folder / "socket")
        self.process = subprocess.Popen(
            [sys.executable, __file__, "serve", address],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == b"ready\n", "the fork server did not start"
        self.bin = self.folder / "bin"
        self.bin.mkdir()
        client = self.bin / "qseg"
        client.write_text(CLIENT.format(python=sys.executable, address=address))
        client.chmod(0o755)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        shutil.rmtree(self.folder)


def serve(address: str) -> None:
    """Import, then fork a child for each command until terminated."""
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(address)
    listener.listen(16)
    listener.settimeout(2)
    print("ready", flush=True)
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the test process was killed: its folder goes too
                shutil.rmtree(Path(address).parent, ignore_errors=True)
                return
            continue
        connection.settimeout(None)
        message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        while not message.endswith(b"\n"):
            message += connection.recv(1 << 20)
        pid = os.fork()
        if pid == 0:
            listener.close()
            connection.close()
            _run(json.loads(message), fds)  # ends the child
        for fd in fds:
            os.close(fd)
        threading.Thread(target=_answer, args=(connection, pid), daemon=True).start()


def _answer(connection: socket.socket, pid: int) -> None:
    """Send the child's exit status (128 + the signal that killed it) to the client."""
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    connection.sendall(str(code if code >= 0 else 128 - code).encode())
    connection.close()


def _run(request: dict, fds: list[int]) -> None:
    """In the child: the client's streams, folder, environment and arguments; then
    ``qseg.cli.main`` as ``python -m qseg`` runs it, and the process's end."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin, sys.stdout, sys.stderr = (_stream(fd) for fd in (0, 1, 2))
    sys.argv = ["qseg", *request["argv"]]
    os._exit(_exit_status(main_status(request["argv"])))


def main_status(argv: list[str]) -> int:
    """``qseg.cli.main(argv)`` on the current streams, and the status the interpreter ends
    ``python -m qseg`` with: a ``SystemExit``'s code (argparse's help and usage errors; one
    that is not a number is printed, status 1), an exception let out printed as a traceback,
    status 1. Also what helpers.qseg runs in the test process."""
    from qseg.cli import main

    try:
        return main(argv)
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1


def _stream(fd: int) -> io.TextIOWrapper:
    """Standard input, output or error as Python makes them at its start: UTF-8; output
    line-buffered on a terminal, written through where PYTHONUNBUFFERED is set; errors
    line-buffered, unencodable characters escaped."""
    if fd == 0:
        return io.TextIOWrapper(open(fd, "rb", closefd=False), encoding="utf-8")
    unbuffered = fd == 1 and bool(os.environ.get("PYTHONUNBUFFERED"))
    raw = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(
        raw,
        encoding="utf-8",
        errors="backslashreplace" if fd == 2 else "strict",
        line_buffering=fd == 2 or os.isatty(fd),
        write_through=unbuffered,
    )


def _exit_status(status: int) -> int:
    """The interpreter's end without its teardown of every module (a fork's copy of the
    server's memory, a tenth of a second): ``atexit``'s work, then the streams flushed, a
    failed flush reported and status 120, as Python does."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception as exc:
            os.write(2, f"Exception ignored in: {stream!r}\n{exc!r}\n".encode())
            status = 120
    return status


if __name__ == "__main__":
    serve(sys.argv[2])
