# syntax=docker/dockerfile:1
# One image for every app process: the web server (default CMD), the Celery
# worker and the one-shot migrate job (their commands are set in docker-compose.yml).
FROM python:3.11-slim

# PYTHONPATH: import the project from /app (where templates/ and static/ live),
# never the copy `pip install .` puts in site-packages.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    DJANGO_ENV=production \
    VAR_DIR=/data \
    MEDIA_ROOT=/data/media \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app

# Fixed numeric ids, so bind-mounted host directories can be chowned to match (10001:10001).
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app

# Dependencies first, from pyproject.toml alone, so code edits do not reinstall them.
# (Runtime dependencies only: the [test] extra is not installed.)
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    # torch from PyTorch's CPU index: PyPI's build of the same version carries several GB of CUDA libraries
    # that the semantic-agreement model (all-MiniLM-L6-v2 on the CPU) never uses.
    && pip install --extra-index-url https://download.pytorch.org/whl/cpu -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY . .
RUN pip install --no-deps . \
    && rm -rf build ./*.egg-info

# Static files are collected into the image (served by whitenoise, with the
# production manifest storage). Settings refuse to load in production without a
# 50+ character SECRET_KEY, so use a throwaway random one that is never kept.
RUN DJANGO_ENV=production \
    SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(64))')" \
    VAR_DIR=/tmp/build-var \
    python manage.py collectstatic --noinput \
    && rm -rf /tmp/build-var

# Data directories (mounted as volumes by docker-compose.yml); a new named
# volume takes this ownership, so the non-root user can write to it.
RUN mkdir -p /data/media /data/releases \
    && chown -R app:app /data

USER 10001:10001

EXPOSE 8000

# Shell form through sh -c so WEB_CONCURRENCY is read at start; exec keeps gunicorn as the signalled process.
CMD ["sh", "-c", "exec gunicorn rescue_annot.wsgi:application --preload --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-3} --timeout 60 --graceful-timeout 30 --worker-tmp-dir /dev/shm --access-logfile - --error-logfile -"]
