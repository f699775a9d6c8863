"""Template context every page needs."""

from .roles import is_lead


def roles(request):
    user = getattr(request, "user", None)
    return {"is_lead_user": bool(user and user.is_authenticated and is_lead(user))}


def background(request):
    """Who computes a page's background job, in the words its progress lines use: a Celery worker when there is a
    broker, else this server itself (the demo: the job runs in a thread once the response is sent)."""
    from rescue_annot.celery import app

    if app.conf.task_always_eager:
        return {"background": {"subject": "this server", "on": "in the background on this server"}}
    return {"background": {"subject": "a worker", "on": "on a worker"}}
