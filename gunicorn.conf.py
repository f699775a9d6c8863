"""gunicorn reads this file from the directory it starts in (the image's and the benches' working directory).

Settings stay on the command line (Dockerfile); only hooks live here.
"""


def post_worker_init(worker):
    # Each worker opens its own broker connection now rather than on the first request that starts a job.
    from annotation.jobs import warm_broker

    warm_broker()
