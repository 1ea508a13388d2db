#!/usr/bin/env python3
"""bench/dashboard_slow_clients.py: `rung dashboard` under slow clients.

Starts a rung-coordinator (empty) and `rung dashboard` on 127.0.0.1, then runs two phases of
--seconds each, with --normal concurrent normal clients (threads, a fresh connection per request,
GET /api/info with the bearer token, 30 s timeout) in a loop:
  1. alone;
  2. while --slow unauthenticated clients each send one header line every --interval seconds
     (never finishing the head), reopening whenever the dashboard closes them.
For each phase: requests answered, failures, latency p50/p99/max, the slow connections the
dashboard closed; and the dashboard's VmRSS, VmHWM and thread count at the end of the phase.
Prints a markdown table and writes everything to --out-json. Standard library only; needs
`cmake --build build --target rung rung-coordinator rung_dashboard_web`.

    /usr/bin/python3 bench/dashboard_slow_clients.py --build-dir build --slow 200 --normal 200 --seconds 20
"""
import argparse
import http.client
import json
import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orchestration import Cluster, log, proc_status  # noqa: E402


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class SlowClients:
    """`count` connections trickling a header line every `interval` s; reopened when closed."""

    def __init__(self, port, count, interval):
        self.port, self.count, self.interval = port, count, interval
        self.closed_by_server = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self):
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        connection.setblocking(False)
        connection.send(b"GET /api/info HTTP/1.1\r\n")
        return connection

    def run(self):
        connections = [self.open_one() for _ in range(self.count)]
        line = 0
        while not self.stop.is_set():
            for i, connection in enumerate(connections):
                try:
                    try:
                        if connection.recv(4096) == b"":
                            raise ConnectionError("closed")
                        raise ConnectionError("answered")  # a 408: the server is closing it
                    except BlockingIOError:
                        pass
                    connection.send(f"X-Slow-{line}: 1\r\n".encode())
                except (OSError, ConnectionError):
                    self.closed_by_server += 1
                    connection.close()
                    try:
                        connections[i] = self.open_one()
                    except OSError:
                        pass
            line += 1
            self.stop.wait(self.interval)
        for connection in connections:
            connection.close()


def normal_load(port, token, clients, seconds):
    latencies, failures = [], []
    lock = threading.Lock()
    deadline = time.time() + seconds

    def client():
        while time.time() < deadline:
            started = time.perf_counter()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                connection.request("GET", "/api/info", headers={"Authorization": "Bearer " + token})
                response = connection.getresponse()
                response.read()
                connection.close()
                ok = response.status == 200
                what = f"HTTP {response.status}"
            except OSError as error:
                ok, what = False, type(error).__name__
            elapsed = time.perf_counter() - started
            with lock:
                (latencies if ok else failures).append(elapsed if ok else what)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--interval", type=float, default=1.5)
    parser.add_argument("--normal", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--out-json", default="/tmp/rung-dashboard-slow-clients.json")
    args = parser.parse_args()

    bin_dir = os.path.abspath(os.path.join(args.build_dir, "bin"))
    root = tempfile.mkdtemp(prefix="rung-dashboard-slow-")
    cluster = Cluster(bin_dir, root, dict(os.environ))
    report = {"slow": args.slow, "interval": args.interval, "normal": args.normal, "seconds": args.seconds, "phases": {}}
    try:
        cluster.start_coordinator()
        dashboard, origin, token = cluster.start_dashboard()
        port = int(origin.rsplit(":", 1)[1])
        report["idle"] = proc_status(dashboard.pid, ("VmRSS", "VmHWM", "Threads"))
        for phase, slow_count in (("normal clients alone", 0), (f"with {args.slow} slow clients", args.slow)):
            slow = SlowClients(port, slow_count, args.interval) if slow_count else None
            if slow:
                slow.thread.start()
                time.sleep(2 * args.interval)  # the slow clients are all open and trickling
            latencies, failures = normal_load(port, token, args.normal, args.seconds)
            status = proc_status(dashboard.pid, ("VmRSS", "VmHWM", "Threads"))
            if slow:
                slow.stop.set()
                slow.thread.join()
            entry = {"answered": len(latencies), "failed": len(failures),
                     "failures": sorted(set(failures))[:5],
                     "p50_ms": 1000 * percentile(latencies, 0.50), "p99_ms": 1000 * percentile(latencies, 0.99),
                     "max_ms": 1000 * max(latencies, default=float("nan")),
                     "slow_closed_by_server": slow.closed_by_server if slow else 0, **status}
            report["phases"][phase] = entry
            log(f"{phase}: {entry}")
    finally:
        cluster.stop()
    with open(args.out_json, "w") as out:
        json.dump(report, out, indent=2)
    print(f"| phase ({args.normal} normal clients, {args.seconds:.0f} s) | answered | failed | p50 | p99 | max | "
          "slow ones closed | VmRSS | VmHWM | threads |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for phase, e in report["phases"].items():
        print(f"| {phase} | {e['answered']} | {e['failed']} | {e['p50_ms']:.1f} ms | {e['p99_ms']:.1f} ms | "
              f"{e['max_ms']:.0f} ms | {e['slow_closed_by_server']} | {e['VmRSS'] // 1024} MiB | "
              f"{e['VmHWM'] // 1024} MiB | {e['Threads']} |")


if __name__ == "__main__":
    main()
