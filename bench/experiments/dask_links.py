"""What an exchange between two Dask workers costs (bench/dask.md, "Direct links"): the same
payload sent both ways at once between two actors of a LocalCluster (2 worker processes x 1
thread, loopback), as a Dask RPC between the workers (``smml.dask._actors._call_peer``: what
smml.dask's boosting used before the direct links) and on ``smml.dask._actors._Links`` (a
socket between the two workers). The payloads are float64 arrays of a boosting level's
histograms' sizes (28 features x 256 bins x 2 values = 115 KB a node: the root, 4, 16 nodes).
Prints the median time of an exchange (both directions done) over 50. Run from the
repository root:

    .venv/bin/python bench/experiments/dask_links.py
"""
import asyncio
import time
import warnings

import numpy as np

SIZES = (1_000, 115_000, 460_000, 1_840_000, 3_700_000)      # bytes
REPS = 50


class Peer:
    """One side: receives the other's payloads (``put``, by either transport)."""

    async def start(self):
        from smml.dask._actors import _Links
        self.got = {}
        self.events = {}
        self.links = _Links()
        return self.links.listen("127.0.0.1")

    async def connect(self, addrs, g, key_other, addr_other):
        self.g, self.key_other, self.addr_other = g, key_other, addr_other
        await self.links.connect(addrs, g, b"0123456789abcdef", self.put)

    def _event(self, tag):
        return self.events.setdefault(tag, asyncio.Event())

    def put(self, tag, src, payload):
        self.got[tag] = payload
        self._event(tag).set()

    async def run(self, nbytes, direct):
        from smml.dask._actors import _call_peer
        x = np.zeros(nbytes // 8)
        times = []
        for r in range(REPS):
            tag = (nbytes, direct, r)
            t = time.perf_counter()
            if direct:
                await self.links.send(1 - self.g, r, self.g, (x,))
                await self._event(r).wait()
                self.events.pop(r)
            else:
                await _call_peer(self.addr_other, self.key_other, "put", tag, self.g, (x,))
                await self._event(tag).wait()
                self.events.pop(tag)
            times.append(time.perf_counter() - t)
        return float(np.median(times))

    def close(self):
        self.links.close()


def main():
    import distributed
    warnings.filterwarnings("ignore")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    client.wait_for_workers(2)
    ws = sorted(client.nthreads())
    futs = [client.submit(Peer, actor=True, workers=[w]) for w in ws]
    peers = [f.result() for f in futs]
    addrs = [p.start().result() for p in peers]
    done = [p.connect(addrs, g, futs[1 - g].key, ws[1 - g]) for g, p in enumerate(peers)]
    for d in done:
        d.result()
    print("| payload (bytes, each way) | Dask RPC between the workers (ms) | direct link (ms) |")
    print("|---|---|---|")
    for nbytes in SIZES:
        row = []
        for direct in (False, True):
            runs = [p.run(nbytes, direct) for p in peers]
            row.append(max(r.result() for r in runs) * 1e3)
        print(f"| {nbytes:,} | {row[0]:.2f} | {row[1]:.2f} |")
    for p in peers:
        p.close().result()
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
