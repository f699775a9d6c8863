"""A requests-per-minute limit on Gemini calls, shared by every worker.

Sliding-window log: a request may go when fewer than ``limit`` requests were
sent in the last ``window`` seconds; otherwise the caller sleeps until the
oldest one leaves the window. This bounds *every* window of that length, not
just calendar minutes, so the provider's quota is never exceeded however the
requests are spread over workers.

With a Redis broker the log is a Redis sorted set, updated by one Lua script
(atomic, and timed by the Redis server's clock, so workers on different hosts
agree). Without a broker (eager tasks, one process) an in-process log does the
same for the threads of that process.

The window is widened by a small margin: the server sees our requests a little
later than we send them, by a varying delay, and the margin keeps that jitter
from showing up as a burst over the limit on the server's side.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from functools import cache

from django.conf import settings

from . import conf

# KEYS[1]: the sorted set; ARGV: window seconds, limit, a unique member.
# Returns "0" when the request may go, else the seconds to wait (as text: Lua
# numbers would be truncated to integers on the way back).
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000) + 1000)
  return '0'
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return tostring(tonumber(oldest[2]) + window - now)
"""


class RateLimiter:
    """``acquire()`` blocks until one more request fits under the limit; returns the seconds waited."""

    def __init__(self, limit: int, window: float, *, sleep=time.sleep):
        if limit < 1:
            raise ValueError("the rate limit must allow at least one request per window")
        self.limit, self.window, self._sleep = int(limit), float(window), sleep

    def _try(self) -> float:
        raise NotImplementedError

    def acquire(self) -> float:
        waited = 0.0
        while True:
            wait = self._try()
            if wait <= 0:
                return waited
            # Wake a little after the slot frees; short naps keep waiters fair-ish.
            nap = min(wait, 1.0) + 0.005
            self._sleep(nap)
            waited += nap


class LocalRateLimiter(RateLimiter):
    """The limit for the threads of one process (eager mode)."""

    def __init__(self, limit: int, window: float, **kwargs):
        super().__init__(limit, window, **kwargs)
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def _try(self) -> float:
        with self._lock:
            now = time.monotonic()
            while self._sent and self._sent[0] <= now - self.window:
                self._sent.popleft()
            if len(self._sent) < self.limit:
                self._sent.append(now)
                return 0.0
            return self._sent[0] + self.window - now


class RedisRateLimiter(RateLimiter):
    """The limit for every process that shares the Redis key."""

    def __init__(self, limit: int, window: float, *, url: str, key: str, **kwargs):
        import redis

        super().__init__(limit, window, **kwargs)
        self.key = key
        self._redis = redis.Redis.from_url(url)
        self._script = self._redis.register_script(_ACQUIRE)

    def _try(self) -> float:
        return float(self._script(keys=[self.key], args=[self.window, self.limit, uuid.uuid4().hex]))

    def reset(self) -> None:
        self._redis.delete(self.key)


def _redis_url() -> str:
    url = conf.get("PREANNOTATE_RATE_REDIS_URL")
    if url:
        return url
    from rescue_annot.celery import app

    broker = getattr(settings, "CELERY_BROKER_URL", "") or ""
    if broker.startswith(("redis://", "rediss://")) and not app.conf.task_always_eager:
        return broker
    return ""


@cache
def _limiter(kind: str, limit: int, window: float, url: str, key: str) -> RateLimiter:
    if kind == "redis":
        return RedisRateLimiter(limit, window, url=url, key=key)
    return LocalRateLimiter(limit, window)


def shared_limiter(model: str) -> RateLimiter:
    """The limiter every Gemini request of this process goes through (one per model)."""
    limit = int(conf.get("GEMINI_RPM"))
    window = float(conf.get("PREANNOTATE_RATE_WINDOW_SECONDS")) + float(conf.get("PREANNOTATE_RATE_MARGIN_SECONDS"))
    url = _redis_url()
    key = f"{conf.get('PREANNOTATE_RATE_KEY')}:{model}"
    return _limiter("redis" if url else "local", limit, window, url, key)
