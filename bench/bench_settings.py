"""Settings for the workspace benchmark's gunicorn server (not a benchmark itself).

The project's own settings, with these changes:

* ``ROOT_URLCONF`` adds one bench-only endpoint, the save "floor" (see
  ``bench/floor_urls.py``), beside every real route;
* ``DEBUG`` is off, as in production: with DEBUG on, Django keeps a log of every
  SQL query per request, which is work a deployed server does not do;
* on PostgreSQL, connections are kept for the worker's life (see the end);
* the API's request rates are off: the benchmarks measure the server, and their
  scripted clients save far faster than a person (API_THROTTLE_* in the README).

    DJANGO_SETTINGS_MODULE=bench.bench_settings gunicorn rescue_annot.wsgi ...
"""

if __name__ == "__main__":
    # bench/run_all.py runs every bench_*.py; this one is a settings module, nothing to run.
    raise SystemExit(0)

from rescue_annot.settings import *

ROOT_URLCONF = "bench.floor_urls"
DEBUG = False
API_THROTTLE_RATES = {"anon": None, "user": None}
# Keep each worker's database connection for its whole life (the project reconnects after 60 s):
# the benchmark charges PostgreSQL CPU time to the runs per backend process, and a backend that
# ends mid-run would drop out of that count. One reconnect a minute is no latency cost either way.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_MAX_AGE"] = None
