"""What every ``smml.dask`` fit that keeps its rows on the workers shares: the groups of rows
are Dask actors (one per worker) that the driver calls directly, a lost worker is told apart
from any other error, and a fit written as a generator of group calls runs the same on the
groups of this process (dask's local schedulers) and on a cluster's actors."""
import asyncio
import contextlib


class _LostWorker(Exception):
    """A worker holding a group could not be reached (it died, its comm closed, its actor or
    tasks were lost)."""


def _lost_errors():
    """The exceptions by which distributed reports a lost worker (CommClosedError is an
    OSError)."""
    try:
        from distributed import KilledWorker
        from distributed.client import FutureCancelledError
    except ImportError:          # pragma: no cover - distributed is part of the extra
        return (OSError,)
    return (OSError, KilledWorker, FutureCancelledError)


@contextlib.contextmanager
def _lost_as_error():
    """A worker lost under this block becomes ``_LostWorker``; other errors pass."""
    try:
        yield
    except _lost_errors() as exc:
        raise _LostWorker(str(exc)) from exc
    except RuntimeError as exc:
        if "Actor was lost" not in str(exc):
            raise
        raise _LostWorker(str(exc)) from exc


def _gather(futs):
    """The results of futures (the groups' construction): a lost worker becomes
    ``_LostWorker``."""
    out = []
    for f in futs:
        with _lost_as_error():
            out.append(f.result())
    return out


def _drive_local(steps, groups):
    """Run a generator of group calls (yields (method name, one argument tuple per group), is
    sent the groups' results in group order) on groups of this process. Returns its result."""
    try:
        name, args = next(steps)
        while True:
            name, args = steps.send([getattr(g, name)(*a) for g, a in zip(groups, args)])
    except StopIteration as stop:
        return stop.value


async def _call_actors(groups, name, args):
    """One round trip: ``name`` on every group's actor at once, with the arguments of each,
    awaited from the client's event loop, without a hand-over to another thread per call.
    ``separate_thread=False``: a worker runs the method (one kernel call, the GIL released
    inside) on its event loop instead of handing it to its actor thread and back. Both
    hand-overs cost about 2 ms per iteration on 2 local workers (``bench/bench_dask.py
    --only kmeans``: 1.21-1.29x the in-memory fit with ``.result()`` per call in the driver's
    thread, 1.16-1.17x so)."""
    return list(await asyncio.gather(*[getattr(g, name)(*a, separate_thread=False)
                                       for g, a in zip(groups, args)]))


async def _call_peer(address, key, name, *args):
    """``name(*args)`` on the actor ``key`` of the worker at ``address``, called from an actor
    method running on another worker's event loop: one direct message between the two
    workers (the worker's connection pool; the scheduler and the driver are not involved),
    the method run on the peer's event loop. Unlike a call through an ``Actor`` handle it
    never waits for a lost actor to be recomputed elsewhere: a peer that cannot be reached
    raises ``_LostWorker`` at once."""
    from distributed import get_worker
    from distributed.protocol import to_serialize
    try:
        reply = await get_worker().rpc(address).actor_execute(
            function=name, actor=key, args=[to_serialize(a) for a in args],
            kwargs={"separate_thread": False})
    except OSError as exc:
        raise _LostWorker(f"the worker at {address} could not be reached: {exc}") from exc
    if reply["status"] != "OK":
        raise reply["exception"]
    return reply["result"]


async def _drive_actors(steps, groups):
    """Run a generator of group calls (as :func:`_drive_local`) on the groups' actors, from the
    client's event loop (``client.sync``); a lost worker becomes ``_LostWorker``."""
    try:
        name, args = next(steps)
        while True:
            with _lost_as_error():
                out = await _call_actors(groups, name, args)
            name, args = steps.send(out)
    except StopIteration as stop:
        return stop.value
