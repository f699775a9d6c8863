"""Work done beside a freeze: in forked child processes, or in a thread.

Parts of a freeze do not need the gold: the agreement report (its own
queries, from the revisions and drafts), the provenance figures read from the
database and, once the label counts are known, the figures. ``Forked(fn,
*args)`` runs ``fn(*args)`` in a fork of this process, on another core, while
the freeze goes on; ``receive()`` returns its value. With ``takes_input=True``
the child first waits for one more argument, sent with ``send(value)``. Values
travel as pickles through pipes. ``Threaded(fn, *args)`` runs ``fn(*args)`` in
a thread with its own database connection: enough for work that mostly waits
on the database (the thread releases the interpreter meanwhile).

A fork starts with everything this process has imported (Django, numpy,
matplotlib), so it costs milliseconds where a new interpreter would spend
most of a second on imports. It is safe only while no other thread runs
(another thread could hold a lock the child would wait on forever), so
``can_fork()`` says whether to use one; callers do the work in this process
otherwise. A child leaves what it inherited alone and ends with ``os._exit``,
so none of this process's exit handlers run twice. It never uses a database
connection it inherited (using one, or even closing it, would disturb this
process's session): it sets them aside, untouched until it exits, and opens
its own if it reads the database.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, Self

from django.db import connection, connections


def can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


def can_fork_for_database() -> bool:
    """A child may read the database: a fork is safe, this process is in no
    transaction (the child's own connection could not see its uncommitted writes),
    and the database is not an SQLite database in this process's memory."""
    in_memory = connection.vendor == "sqlite" and connection.is_in_memory_db()
    return can_fork() and not connection.in_atomic_block and not in_memory


# In a child: the connections it inherited, kept referenced (never finalised) until it exits.
_INHERITED: list = []


class ChildFailed(RuntimeError):
    pass


class Threaded:
    """``fn(*args)`` in a thread with its own database connection; ``receive()`` waits for
    its value or raises its exception. Inside a transaction of the caller's (whose
    uncommitted writes another connection would not see), ``fn`` runs in the calling
    thread instead, when ``receive()`` is first called."""

    def __init__(self, fn: Callable[..., Any], *args: Any):
        self.fn, self.args = fn, args
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = False
        self.thread: threading.Thread | None = None
        if not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name=f"release-{getattr(fn, '__name__', 'work')}", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        try:
            self.value = self.fn(*self.args)
        except BaseException as exc:  # noqa: BLE001 (handed to the caller by receive())
            self.error = exc
        finally:
            connections.close_all()  # this thread's connections only

    def receive(self) -> Any:
        if self.thread is None:
            if not self.done:
                self.value = self.fn(*self.args)
                self.done = True
            return self.value
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.thread is not None:
            self.thread.join()  # a freeze that failed meanwhile still waits: no thread outlives it


class Forked:
    """``fn(*args)`` (and, with ``takes_input``, the value ``send`` hands over) in a forked child."""

    def __init__(self, fn: Callable[..., Any], *args: Any, takes_input: bool = False, timeout: float = 600.0):
        self.timeout = timeout
        self.returncode: int | None = None
        data_r, data_w = os.pipe() if takes_input else (None, None)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            _child(fn, args, data_r, data_w, out_r, out_w)  # never returns
        for fd in (data_r, out_w):
            if fd is not None:
                os.close(fd)
        self.pid, self.data_w, self.out_r = pid, data_w, out_r

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.end()

    def send(self, value: Any) -> None:
        """The child's last argument (only with ``takes_input``)."""
        try:
            with open(self.data_w, "wb") as fh:  # closing it ends the input
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError:  # the child is gone; receive() says why
            pass
        self.data_w = None

    def receive(self) -> Any:
        """The child's return value; ChildFailed (with the child's traceback) if it raised,
        died or did not answer within the timeout."""
        chunks, deadline = [], time.monotonic() + self.timeout
        with open(self.out_r, "rb", buffering=0) as fh:
            self.out_r = None
            while True:
                if not select.select([fh], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    self.end()
                    raise ChildFailed(f"no answer within {self.timeout:.0f} s")
                chunk = fh.read(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        self._wait()
        try:
            ok, value = pickle.loads(b"".join(chunks))
        except Exception as exc:  # noqa: BLE001 (a child that died half-way through its answer)
            raise ChildFailed(f"exit status {self.returncode}, unreadable answer ({exc})") from None
        if not ok or self.returncode != 0:
            raise ChildFailed(value)
        return value

    def _wait(self) -> None:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)

    def end(self) -> None:
        """Stop the child if it still runs, and reap it."""
        for fd in (self.data_w, self.out_r):
            if fd is not None:
                os.close(fd)
        self.data_w = self.out_r = None
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._wait()


def _child(fn, args, data_r, data_w, out_r, out_w) -> None:
    """The forked child: call ``fn``, answer ``(ok, value or traceback)`` on ``out_w``, exit."""
    code = 1
    try:
        os.close(out_r)
        if data_w is not None:
            os.close(data_w)
        for conn in connections.all(initialized_only=True):
            if conn.connection is not None:
                _INHERITED.append(conn.connection)
                conn.connection = None  # the next query here opens a connection of the child's own
        try:
            if data_r is not None:
                with open(data_r, "rb") as fh:
                    args = (*args, pickle.load(fh))
            answer = (True, fn(*args))
        except BaseException:  # noqa: BLE001 (sent to the parent, which decides)
            answer = (False, traceback.format_exc()[-4000:])
        finally:
            # The connections this child opened itself (the inherited ones were set aside).
            for conn in connections.all(initialized_only=True):
                if conn.connection is not None:
                    conn.close()
        with open(out_w, "wb") as fh:
            pickle.dump(answer, fh, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0 if answer[0] else 1
    finally:
        os._exit(code)
