"""What every ``smml.dask`` fit that keeps its rows on the workers shares: the groups of rows
are Dask actors (one per worker) that the driver calls directly, a lost worker is told apart
from any other error, and a fit written as a generator of group calls runs the same on the
groups of this process (dask's local schedulers) and on a cluster's actors."""
import asyncio
import contextlib
import socket

import numpy as np


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


def _reused(bufs, key, shape, dtype):
    """An array of ``shape`` and ``dtype`` (not zeroed) in the buffer ``bufs[key]``, made or
    grown when too small: memory a fit reuses from call to call. A Dask worker's nanny sets
    MALLOC_TRIM_THRESHOLD_, which maps every allocation over 128 KB afresh (page faults,
    zeroing: about 10% of a 1,000,000-row boosting fit's time before its buffers were kept)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = bufs.get(key)
    if buf is None or buf.size < nbytes:
        buf = bufs[key] = np.empty(max(nbytes, 8), np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def _socket(host):
    """A non-blocking TCP socket of ``host``'s address family."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    return s


# A message of _Links: a header of int64 words (tag, source group, number of parts), then per
# part (kind, ndim, shape padded to _MAX_NDIM), then the parts' bytes in order.
_KINDS = {1: np.dtype(np.float64), 2: np.dtype(np.int64)}
_KIND_OF = {v: k for k, v in _KINDS.items()}
_MAX_NDIM = 4


class _Links:
    """Direct TCP connections between the groups of a fit (one socket each way between every
    two groups), on the workers' event loops, for payloads of float64 / int64 arrays (or None):
    a message is a few int64 words and the arrays' bytes, read straight into arrays made for
    them (no pickle, no copy). Between two local workers an exchange (both ways at once) costs
    2.0 ms for 1 KB and 5.6 ms for a level's 1.8 MB of histograms as Dask RPCs, 0.34 ms and
    1.5 ms so (``bench/experiments/dask_links.py``, ``bench/dask.md``). Offered on ``tcp://``
    and ``inproc://`` workers (bound to the worker's own host); on any other comm (``tls://``:
    the cluster's security would be bypassed) ``listen`` returns None and the fit sends
    through Dask (:func:`_call_peer`). A connection is accepted only with the fit's random
    token.

    A delivered array lives in a buffer kept per (peer, tag parity, part) and reused: it is
    valid until the message two tags later from the same peer arrives. The boosting exchange
    consumes every payload before it sends its next message, and a peer sends tag t + 2 only
    after it has received this group's t + 1, so no payload is overwritten while in use; the
    buffers spare a Dask worker fresh pages for every message (its nanny's
    MALLOC_TRIM_THRESHOLD_ maps every allocation over 128 KB afresh)."""

    #: seconds an accepted connection has to send the fit's token
    hello_timeout = 10.0

    def __init__(self):
        self.loop = asyncio.get_running_loop()
        self.listener = None
        self.out = {}                     # group -> socket we send on
        self.tasks = []                   # the readers
        self.bufs = {}                    # (peer, tag parity, part) -> reused buffer (_reused)
        self.connecting = ()              # a pending connect's tasks

    @staticmethod
    def host():
        """The worker's host for a listening socket, or None where links are not offered."""
        from distributed import get_worker
        addr = get_worker().address
        if addr.startswith("inproc://"):
            return "127.0.0.1"
        if not addr.startswith("tcp://"):
            return None
        host = addr[len("tcp://"):].rsplit(":", 1)[0]
        return host.strip("[]")

    def listen(self, host):
        """A listening socket on ``host``; its (host, port)."""
        s = _socket(host)
        s.bind((host, 0))
        s.listen(64)
        self.listener = s
        return host, s.getsockname()[1]

    async def connect(self, addrs, g, token, deliver):
        """Connect to every other group's ``addrs[j]`` (sending ``token`` and ``g``) and accept
        a connection from each; each accepted one is read in a task that calls
        ``deliver(tag, src, payload)`` for every message."""
        others = [j for j in range(len(addrs)) if j != g]

        async def dial(j):
            host, port = addrs[j]
            s = _socket(host)
            await self.loop.sock_connect(s, (host, port))
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await self.loop.sock_sendall(s, token + np.array([g], np.int64).tobytes())
            self.out[j] = s

        await asyncio.gather(*[dial(j) for j in others])
        # each accepted connection greeted in a task of its own: one that does not send the
        # fit's token within hello_timeout seconds (a port scanner, a stranger) is closed and
        # delays no other
        pending = set(others)
        all_in = asyncio.Event()
        greeters = []

        async def greet(s):
            hello = bytearray(len(token) + 8)
            ok = False
            try:
                await asyncio.wait_for(self._recv(s, memoryview(hello)), self.hello_timeout)
                src = int(np.frombuffer(bytes(hello[len(token):]), np.int64)[0])
                ok = bytes(hello[:len(token)]) == token and src in pending
            except (ConnectionError, OSError, asyncio.TimeoutError):
                pass
            finally:
                if not ok:                 # not one of this fit's groups (or the connect is over)
                    s.close()
            if not ok:
                return
            pending.discard(src)
            self.tasks.append(asyncio.ensure_future(self._reader(s, deliver)))
            if not pending:
                all_in.set()

        async def accept():
            while True:
                s, _ = await self.loop.sock_accept(self.listener)
                s.setblocking(False)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                greeters.append(asyncio.ensure_future(greet(s)))

        if not pending:
            return
        acceptor = asyncio.ensure_future(accept())
        waiter = asyncio.ensure_future(all_in.wait())
        self.connecting = (acceptor, waiter)          # close() ends a pending connect
        try:
            await asyncio.wait({acceptor, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.connecting = ()
            for t in (acceptor, waiter, *greeters):
                t.cancel()
        if not all_in.is_set():
            if acceptor.done() and not acceptor.cancelled() and acceptor.exception() is not None:
                raise acceptor.exception()
            raise RuntimeError("smml.dask: the fit was stopped while its groups were connecting")

    async def _recv(self, s, mv):
        got = 0
        while got < len(mv):
            k = await self.loop.sock_recv_into(s, mv[got:])
            if k == 0:
                raise ConnectionError("the peer closed the connection")
            got += k

    async def _reader(self, s, deliver):
        """Messages from one peer until it closes (a lost peer: the driver sees its actor
        lost and aborts the fit; nothing to do here)."""
        try:
            while True:
                head = np.empty(3, np.int64)
                await self._recv(s, memoryview(head).cast("B"))
                tag, src, parts = (int(v) for v in head)
                desc = np.empty((parts, 2 + _MAX_NDIM), np.int64)
                await self._recv(s, memoryview(desc).cast("B"))
                payload = []
                for i, (kind, ndim, *shape) in enumerate(desc.tolist()):
                    if kind == 0:
                        payload.append(None)
                        continue
                    a = _reused(self.bufs, (src, tag % 2, i), shape[:ndim], _KINDS[kind])
                    if a.nbytes:
                        await self._recv(s, memoryview(a).cast("B"))
                    payload.append(a)
                deliver(tag, src, tuple(payload))
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            s.close()

    async def send(self, j, tag, src, payload):
        """``payload`` (a tuple of C-contiguous float64 / int64 arrays or None) to group j."""
        s = self.out[j]
        desc = np.zeros((len(payload), 2 + _MAX_NDIM), np.int64)
        for i, a in enumerate(payload):
            if a is not None:
                desc[i, 0] = _KIND_OF[a.dtype]
                desc[i, 1] = a.ndim
                desc[i, 2:2 + a.ndim] = a.shape
        head = np.array([tag, src, len(payload)], np.int64)
        await self.loop.sock_sendall(s, head.tobytes() + desc.tobytes())
        for a in payload:
            if a is not None and a.nbytes:
                await self.loop.sock_sendall(s, memoryview(np.ascontiguousarray(a)).cast("B"))

    def close(self):
        """Every socket closed, the readers and a pending connect stopped."""
        for t in (*self.tasks, *self.connecting):
            t.cancel()
        for s in self.out.values():
            s.close()
        if self.listener is not None:
            self.listener.close()
        self.tasks, self.out, self.listener = [], {}, None
