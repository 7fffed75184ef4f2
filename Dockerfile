# One image for the whole stack (docker-compose.yml): the `arena` service, the Dask
# scheduler and the Dask workers all run it, so a worker unpickles exactly the code and
# versions the service submits. The base is a build argument: any Debian-like image
# with Python >= 3.11 and its venv module (tests build one from Debian's packages
# where no registry is reachable: docs/hosting-compose.md).
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

# A virtual environment, not the system Python: Debian's python3 refuses system-wide
# pip installs (PEP 668), and the venv puts `arena` and `dask` on PATH the same way
# on every base.
ENV VIRTUAL_ENV=/opt/arena \
    PATH=/opt/arena/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=/home/arena/.cache/numba
RUN python3 -m venv "$VIRTUAL_ENV" \
    && useradd --create-home --uid 1000 --shell /usr/sbin/nologin arena \
    && mkdir /data \
    && chown arena:arena /data

WORKDIR /src
# The dependencies first, in a layer of their own that a change of the code or the
# README does not rebuild: the project's metadata alone (an empty README standing in
# for the one it names) installs no package but pulls every pinned dependency (the
# versions of constraints.txt, what CI tested).
COPY pyproject.toml constraints.txt ./
RUN touch README.md \
    && pip install --no-cache-dir --progress-bar off -c constraints.txt . \
    && pip uninstall --yes acpc-arena
# Then the project itself (not editable: the image needs no source tree).
COPY README.md README.md
COPY poker poker
COPY dealer dealer
COPY agent agent
COPY strategies strategies
COPY analysis analysis
COPY arena arena
RUN pip install --no-cache-dir --no-deps --progress-bar off -c constraints.txt . \
    && cd / && rm -rf /src

# Not root from here on. Every numba kernel is compiled now, into a cache the user
# owns (NUMBA_CACHE_DIR): the first match or solve in a container starts at once.
# On another CPU numba compiles what it needs again, into the same cache.
USER arena
WORKDIR /data
RUN arena warmup
# The service's API; the match ports are the range docker-compose.yml publishes.
EXPOSE 8000
CMD ["arena", "--help"]
