# syntax=docker/dockerfile:1
# One image for every role: web (the default command), worker, beat and migrate; the Helm
# chart picks the role with `command`. See docs/adr/0010-deployment-image-and-chart.md.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: a virtualenv with the dependencies, then the static files -----------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
# Dependencies first, from pyproject.toml alone, so a code change reuses this layer.
# Every dependency ships wheels, so no compiler is installed, here or below.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt \
    && pip install --only-binary=:all: -r requirements.txt
COPY manage.py ./
COPY config ./config
COPY core ./core
COPY ingest ./ingest
COPY catalog ./catalog
COPY api ./api
# Static files are collected once, here; whitenoise serves them from the read-only image.
# The key only satisfies the production settings' check: collectstatic signs nothing.
RUN DJANGO_SETTINGS_MODULE=config.settings.production \
    DJANGO_SECRET_KEY=collectstatic-only-not-used-at-run-time-0123456789 \
    python manage.py collectstatic --no-input \
    && python -m compileall -q config core ingest catalog api

# --- runtime: the virtualenv and the code, owned by root, run as an unprivileged user ------
FROM ${PYTHON_IMAGE} AS runtime
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin app
COPY --from=build /opt/venv /opt/venv
COPY --from=build /src /app
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    PORT=8000
WORKDIR /app
# Numeric, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
EXPOSE 8000
CMD ["python", "-m", "config.server"]
