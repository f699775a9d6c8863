"""Settings come from the environment; production mode is secure by default."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def manage(*args, **env):
    # DJANGO_ALLOW_ASYNC_UNSAFE is set for the browser tests only; a deployment never has it.
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_ENV", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE")
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env={**base, **env}, capture_output=True, text=True, timeout=120
    )


def test_production_settings_pass_the_deploy_check_without_warnings():
    result = manage(
        "check",
        "--deploy",
        DJANGO_ENV="production",
        SECRET_KEY="k" * 20 + "-production-secret-for-the-check-only-0123456789",
        ALLOWED_HOSTS="annot.example.org",
    )
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout + result.stderr


def test_production_refuses_to_start_without_a_real_secret_key():
    result = manage("check", DJANGO_ENV="production", ALLOWED_HOSTS="annot.example.org")
    assert result.returncode != 0
    assert "DJANGO_ENV=production needs SECRET_KEY" in result.stderr


def test_embedded_defaults_without_environment(tmp_path):
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='rescue_annot.settings'; django.setup();"
        "from django.conf import settings as s; from rescue_annot.celery import app;"
        "print(s.DATABASES['default']['ENGINE'], app.conf.task_always_eager, s.DEBUG, s.GEMINI_BASE_URL == '')"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ENV")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**env, "VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["django.db.backends.sqlite3", "True", "True", "True"], out.stderr
    env.update(
        VAR_DIR=str(tmp_path),
        DATABASE_URL="postgres://u@127.0.0.1:5432/x",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/3",
        GEMINI_BASE_URL="http://127.0.0.1:9",
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["django.db.backends.postgresql", "False", "True", "False"], out.stderr


def test_static_files_are_served_by_whitenoise(client):
    response = client.get("/static/css/app.css")
    assert response.status_code == 200
