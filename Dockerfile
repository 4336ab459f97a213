# qseg serve in a container: the default model, its stores built into the image.
#   docker build -t qseg .
#   docker run -p 8000:8000 -e QSEG_TOKEN=change-me qseg
# No container engine ran this file: hadolint lints it and tests/test_dockerfile.py runs its
# commands outside Docker (docs/service.md).

# -- build: compile the kernels and install qseg with the serve extra into a virtual env ----
FROM python:3.11-slim-bookworm AS build
# the compiler only builds the kernels and stays out of the final image: any release will do
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY src ./src
RUN python -m venv /opt/qseg \
    && /opt/qseg/bin/pip install --no-cache-dir '.[serve]'

# -- run: the virtual env, a non-root user and the stores the default model needs ------------
FROM python:3.11-slim-bookworm
RUN useradd --create-home --uid 10001 qseg \
    && mkdir -p /var/cache/qseg \
    && chown qseg /var/cache/qseg
COPY --from=build /opt/qseg /opt/qseg
ENV PATH=/opt/qseg/bin:$PATH \
    QSEG_CACHE=/var/cache/qseg \
    PYTHONDONTWRITEBYTECODE=1
USER 10001
RUN qseg serve --prepare
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
    CMD ["python", "-c", "import os, sys, urllib.request as u; t = os.environ.get('QSEG_TOKEN', ''); r = u.Request('http://127.0.0.1:8000/readyz', headers={'Authorization': 'Bearer ' + t}); sys.exit(0 if u.urlopen(r, timeout=3).status == 200 else 1)"]
# binding 0.0.0.0 needs a token: docker run -e QSEG_TOKEN=...
ENTRYPOINT ["qseg", "serve", "--host", "0.0.0.0", "--port", "8000"]
CMD ["--workers", "2"]
