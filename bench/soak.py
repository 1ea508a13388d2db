#!/usr/bin/python3
"""bench/soak.py: load and soak of one rung-coordinator.

A real rung-coordinator on loopback and a fresh SQLite database under --work-dir; a sweep of --trials
trials submitted with `rung submit` (a random train.lr axis, max_retries 2; nothing trains them);
then the coordinator restarted (SIGTERM) so that its memory is the soak's and not the submission's
(glibc keeps the arenas a large expansion freed: see bench/README.md, "Coordinator memory"), and
rung-bench-worker-soak (bench/worker_soak.cc) holding --workers registered worker identities that
run short fake trials for --seconds: Lease, a provenance batch, --batches batches of step records, a
Heartbeat every heartbeat interval (a sixth of --lease-seconds), Complete SUCCEEDED with the final
record. Every second the coordinator's VmRSS and CPU, the generator's CPU and the machine's busy CPU
(/proc/stat) are sampled. At --kill-at seconds the coordinator gets SIGKILL and is started again at
once on the same database and port, with the default start check (--check-at-start quick). Time to
serve again is from that start to its "listening on" line (it serves from then on), to the first
`rung sweeps` answered (a probe tried back to back from the restart on: an upper bound, each try pays
the CLI's start), and to the first generator call answered after calls had failed (none when no call
happened to fail: gRPC tries a call again by itself when its connection dropped before it was sent).
After the soak the coordinator is stopped (SIGTERM) and started twice more on the final database,
with the default check and with --check-at-start none, each timed to its "listening on" line.

Afterwards, through the database (read-only) against the generator's ledger (one line per leased
attempt): every trial whose Complete was acknowledged is SUCCEEDED by that attempt (none lost); no
trial has two SUCCEEDED attempts and no trial was completed by two ledger attempts (none
duplicated); every acknowledged batch is committed (attempts.batches) and its points stored (metric
rows of the attempt >= its acknowledged points, and == for a completed attempt: one value per (trial,
name, step) of the attempt that succeeded, nothing applied twice). Counted, not failed: (trial, name,
step) of SUCCEEDED trials with values from two attempts (a retried trial keeps the rows of the
attempt that was fenced; readers take each step from the newest attempt). Attempts the database holds
that the ledger does not (a lease whose answer was lost with the killed process) are counted with
their states. Reported: lease-to-start latency p50/p99 before and after the kill (and per minute),
coordinator RSS peak and median, CPU seconds per trial and % of a core, trials/s, time to serve.

Standard library only. Prints a markdown table and writes everything to --out-json.

  /usr/bin/python3 bench/soak.py --build-dir build --workers 200 --seconds 600 --kill-at 300
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import json_lines  # noqa: E402
from orchestration import Cluster, cpu_seconds, log, proc_status, read_only, write_spec  # noqa: E402


def machine_busy():
    """(busy, total) jiffies of all CPUs since boot (/proc/stat)."""
    fields = [int(value) for value in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


class Sampler(threading.Thread):
    """Every second: the coordinator's VmRSS and CPU seconds, the generator's CPU, the machine's busy share."""

    def __init__(self, cluster, generator, t0):
        super().__init__(daemon=True)
        self.cluster, self.generator, self.t0 = cluster, generator, t0
        self.samples = []
        self.stopping = threading.Event()

    def run(self):
        last = machine_busy()
        while not self.stopping.wait(1.0):
            now = machine_busy()
            sample = {"t": time.time() - self.t0,
                      "machine_busy": (now[0] - last[0]) / max(1, now[1] - last[1]) * os.cpu_count()}
            last = now
            try:
                coordinator = self.cluster.coordinator
                sample["pid"] = coordinator.pid
                sample["rss_kib"] = proc_status(coordinator.pid)["VmRSS"]
                sample["cpu"] = sum(cpu_seconds(coordinator.pid))
            except (OSError, KeyError, AttributeError, IndexError, ValueError):
                pass  # killed, or between the kill and the restart
            try:
                sample["generator_cpu"] = sum(cpu_seconds(self.generator.pid))
            except (OSError, IndexError, ValueError):
                pass
            self.samples.append(sample)


class Probe(threading.Thread):
    """`rung sweeps` (one ListSweeps call from a fresh process) tried back to back until it succeeds: when
    the restarted coordinator first answered a client (an upper bound: a try costs the CLI's start)."""

    def __init__(self, cluster, timeout=120):
        super().__init__(daemon=True)
        self.cluster, self.deadline = cluster, time.time() + timeout
        self.answered, self.tries = None, 0

    def run(self):
        while self.answered is None and time.time() < self.deadline:
            self.tries += 1
            if self.cluster.rung("sweeps").returncode == 0:
                self.answered = time.time()


def quantile(values, q):
    """Nearest-rank quantile, as the generator computes it (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def cpu_rate(samples, key):
    """Cores a process used over the samples: its CPU seconds' growth over their time, one pid at a time
    (the coordinator killed and restarted counts each of its processes)."""
    used, spanned = 0.0, 0.0
    for before, after in zip(samples, samples[1:]):
        if key in before and key in after and before.get("pid") == after.get("pid"):
            used += after[key] - before[key]
            spanned += after["t"] - before["t"]
    return used / spanned if spanned > 0 else 0.0


def latency(entries):
    values = [entry["lease_ms"] for entry in entries]
    return {"trials": len(values), "p50_ms": quantile(values, 0.5), "p99_ms": quantile(values, 0.99),
            "max_ms": max(values, default=0.0)}


def check_database(db_path, ledger):
    """The lost/duplicated checks of the module docstring."""
    with read_only(db_path) as db:
        attempts = {(trial, attempt): (state, batches) for trial, attempt, state, batches in db.execute(
            "SELECT trial_id, attempt, state, batches FROM attempts")}
        trial_states = dict(db.execute("SELECT id, state FROM trials"))
        points = {(trial, attempt): count for trial, attempt, count in db.execute(
            "SELECT trial_id, attempt, COUNT(*) FROM metrics GROUP BY trial_id, attempt")}
        twice_succeeded = db.execute(
            "SELECT COUNT(*) FROM (SELECT trial_id FROM attempts WHERE state = 'SUCCEEDED' GROUP BY trial_id "
            "HAVING COUNT(*) > 1)").fetchone()[0]
        two_values = db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM metrics JOIN trials ON trials.id = metrics.trial_id "
            "WHERE trials.state = 'SUCCEEDED' GROUP BY metrics.trial_id, metrics.name, metrics.step "
            "HAVING COUNT(*) > 1)").fetchone()[0]
        trial_counts = dict(db.execute("SELECT state, COUNT(*) FROM trials GROUP BY state"))
    lost, short_batches, short_points, extra_points, completed_by = [], [], [], [], {}
    for entry in ledger:
        key = (entry["trial"], entry["attempt"])
        state, batches = attempts.get(key, (None, 0))
        stored = points.get(key, 0)
        if batches < entry["batches"]:
            short_batches.append(key)
        if stored < entry["points"]:
            short_points.append(key)
        if entry["completed"]:
            completed_by.setdefault(entry["trial"], []).append(entry["attempt"])
            if state != "SUCCEEDED" or trial_states.get(entry["trial"]) != "SUCCEEDED":
                lost.append(key)
            if stored > entry["points"]:
                extra_points.append(key)
    ledger_keys = {(entry["trial"], entry["attempt"]) for entry in ledger}
    unknown = {}
    for key, (state, _) in attempts.items():
        if key not in ledger_keys:
            unknown[state] = unknown.get(state, 0) + 1
    succeeded_unacknowledged = sum(1 for (trial, attempt), (state, _) in attempts.items()
                                   if state == "SUCCEEDED" and attempt not in completed_by.get(trial, []))
    checks = {
        "completed_acknowledged": sum(len(v) for v in completed_by.values()),
        "lost": len(lost), "lost_examples": lost[:10],
        "completed_twice_in_ledger": sum(1 for v in completed_by.values() if len(v) > 1),
        "trials_with_two_succeeded_attempts": twice_succeeded,
        "acknowledged_batches_not_committed": len(short_batches), "examples_batches": short_batches[:10],
        "acknowledged_points_not_stored": len(short_points), "examples_points": short_points[:10],
        "completed_attempts_with_extra_points": len(extra_points), "examples_extra": extra_points[:10],
        # Not a failure: a trial retried after an attempt that reported and was fenced keeps both attempts'
        # rows (metrics are keyed by attempt; readers take each step from the newest attempt).
        "succeeded_trial_name_step_with_values_of_two_attempts": two_values,
        "succeeded_attempts_not_acknowledged": succeeded_unacknowledged,
        "attempts_not_in_ledger_by_state": unknown,
        "trials_by_state": trial_counts,
    }
    checks["ok"] = (not lost and not short_batches and not short_points and not extra_points
                    and checks["completed_twice_in_ledger"] == 0 and twice_succeeded == 0)
    return checks


def run(args):
    bin_dir = os.path.join(args.build_dir, "bin")
    work_dir = args.work_dir or os.path.join(args.build_dir, "bench", "soak")
    os.makedirs(work_dir, exist_ok=True)
    root = tempfile.mkdtemp(prefix="soak-", dir=work_dir)
    cluster = Cluster(bin_dir, root, dict(os.environ))
    coordinator_flags = ["--lease-seconds", str(args.lease_seconds)]
    trials = args.trials or min(100000, int(args.workers / max(args.trial_seconds, 0.1) * args.seconds * 1.3) + 1000)
    report = {"args": vars(args), "dir": root, "trials_submitted": trials, "loadavg_before": open("/proc/loadavg").read()}
    try:
        cluster.start_coordinator(extra_args=coordinator_flags)
        address = cluster.address
        spec = write_spec(root, "bench-soak", trials, max_retries=2,
                          description="soak benchmark (rung-bench-worker-soak trains nothing)")
        started = time.time()
        cluster.submit(spec)
        report["submit_seconds"] = time.time() - started
        report["rss_after_submit_kib"] = proc_status(cluster.coordinator.pid)
        log(f"submitted {trials} trials in {report['submit_seconds']:.1f} s; coordinator "
            f"{report['rss_after_submit_kib']['VmRSS'] / 1024:.0f} MiB; restarting it for the soak")
        cluster.coordinator.send_signal(signal.SIGTERM)
        cluster.coordinator.wait(timeout=60)
        cluster.start_coordinator(listen=address, extra_args=coordinator_flags)
        report["rss_soak_start_kib"] = proc_status(cluster.coordinator.pid)

        ledger_path = os.path.join(root, "ledger.jsonl")
        generator_log = open(os.path.join(root, "generator.log"), "w")
        t0 = time.time()
        generator = subprocess.Popen(
            [os.path.join(bin_dir, "rung-bench-worker-soak"), "--coordinator", address, "--worker-token-file",
             cluster.worker_token, "--workers", str(args.workers), "--seconds", str(args.seconds),
             "--trial-seconds", str(args.trial_seconds), "--batches", str(args.batches),
             "--lines-per-batch", str(args.lines_per_batch), "--ledger", ledger_path],
            stdout=subprocess.PIPE, stderr=generator_log, text=True)
        sampler = Sampler(cluster, generator, t0)
        sampler.start()
        cpu_before_kill = 0.0
        kill = None
        if 0 < args.kill_at < args.seconds:
            time.sleep(max(0.0, t0 + args.kill_at - time.time()))
            if generator.poll() is not None:
                raise RuntimeError(f"rung-bench-worker-soak ended before the kill (see {root}/generator.log)")
            probe_started = time.time()
            if cluster.rung("sweeps").returncode != 0:
                raise RuntimeError("`rung sweeps` failed against the serving coordinator")
            kill = {"probe_seconds_while_serving": time.time() - probe_started}
            victim = cluster.coordinator
            cpu_before_kill = sum(cpu_seconds(victim.pid))
            kill["kill_unix"] = time.time()
            victim.send_signal(signal.SIGKILL)
            victim.wait(timeout=60)
            kill["restart_unix"] = time.time()
            probe = Probe(cluster)
            probe.start()
            cluster.start_coordinator(listen=address, extra_args=coordinator_flags)
            kill["listening_unix"] = time.time()
            probe.join(timeout=120)
            kill.update({"serving_seconds": kill["listening_unix"] - kill["restart_unix"],
                         "probe_answered_seconds": None if probe.answered is None
                         else probe.answered - kill["restart_unix"], "probe_tries": probe.tries})
            log(f"killed the coordinator at {kill['kill_unix'] - t0:.1f} s; restarted: 'listening on' after "
                f"{kill['serving_seconds']:.2f} s, `rung sweeps` answered after {kill['probe_answered_seconds']} s")
        out, _ = generator.communicate(timeout=args.seconds + 600)
        sampler.stopping.set()
        sampler.join()
        cpu_after_kill = sum(cpu_seconds(cluster.coordinator.pid))
        report["generator_exit"] = generator.returncode
        results = json_lines(out)
        if not results:
            raise RuntimeError(f"rung-bench-worker-soak printed no result ({generator.returncode}); see {root}")
        report["generator"] = result = results[-1]
        report["loadavg_after"] = open("/proc/loadavg").read()
        # The start alone on the final database, cleanly stopped: with the default check and without one.
        cluster.stop()
        report["restarts_after"] = {"db_mib": os.path.getsize(cluster.db) / 2**20}
        for check in ("quick", "none"):
            begun = time.time()
            cluster.start_coordinator(listen=address, extra_args=[*coordinator_flags, "--check-at-start", check])
            report["restarts_after"][f"{check}_seconds"] = time.time() - begun
            cluster.stop()
    finally:
        cluster.stop()

    ledger = [json.loads(line) for line in open(ledger_path)]
    report["checks"] = check_database(cluster.db, ledger)

    completed = [entry for entry in ledger if entry["completed"]]
    span = result["seconds"]
    coordinator_cpu = cpu_before_kill + cpu_after_kill
    samples = sampler.samples
    rss = [sample["rss_kib"] for sample in samples if "rss_kib" in sample]
    report["summary"] = {
        "trials_completed": len(completed), "trials_per_sec": len(completed) / span,
        "coordinator_cpu_seconds": coordinator_cpu, "coordinator_cpu_ms_per_trial": coordinator_cpu * 1000 / len(completed),
        "coordinator_core_percent": coordinator_cpu / span * 100,
        "generator_cpu_seconds": samples[-1].get("generator_cpu", 0.0) if samples else 0.0,
        "machine_busy_cores_median": statistics.median(sample["machine_busy"] for sample in samples),
        "rss_peak_mib": max(rss) / 1024, "rss_median_mib": statistics.median(rss) / 1024,
        "lease_all": latency(ledger),
    }
    minutes = []
    for first in range(0, int(span) + 1, 60):
        window = [entry for entry in ledger if first <= entry["lease_unix"] - t0 < first + 60]
        window_samples = [s for s in samples if first <= s["t"] < first + 60]
        window_rss = [s["rss_kib"] for s in window_samples if "rss_kib" in s]
        if window:
            minutes.append({"from_s": first, **latency(window), "rss_max_mib": max(window_rss, default=0) / 1024,
                            "coordinator_cores": cpu_rate(window_samples, "cpu"),
                            "generator_cores": cpu_rate(window_samples, "generator_cpu"),
                            "machine_busy_cores": statistics.mean(s["machine_busy"] for s in window_samples)
                            if window_samples else 0.0})
    report["summary"]["per_minute"] = minutes
    report["samples"] = samples
    if kill is not None:
        before = [entry for entry in ledger if entry["lease_unix"] + entry["lease_ms"] / 1000 < kill["kill_unix"]]
        after = [entry for entry in ledger if entry["lease_unix"] >= kill["restart_unix"]]
        outages = [outage for outage in result["outages"]
                   if outage["start_unix"] >= kill["kill_unix"] - 1 and outage["first_answer_unix"]]
        first_answer = min((outage["first_answer_unix"] for outage in outages), default=None)
        kill.update({
            "at_seconds": kill["kill_unix"] - t0,
            "first_answer_seconds": None if first_answer is None else first_answer - kill["restart_unix"],
            "down_seconds": None if first_answer is None else first_answer - kill["kill_unix"],
            "free_ms_max_after": max((entry["free_ms"] for entry in after), default=0.0),
        })
        report["kill"] = kill
        report["summary"]["lease_before_kill"] = latency(before)
        report["summary"]["lease_after_restart"] = latency(after)
    log(f"{len(completed)} trials completed in {span:.0f} s ({len(completed) / span:.1f}/s); checks "
        f"{'ok' if report['checks']['ok'] else 'FAILED'}; generator errors {result['error_count']}")
    return report


def print_table(report):
    s, c, g = report["summary"], report["checks"], report["generator"]
    rows = [("workers (identities in one process)", g["workers"]),
            ("soak seconds; fake trial seconds", f"{g['seconds']:.0f}; {g['trial_seconds']}"),
            ("trials completed (trials/s)", f"{s['trials_completed']:,} ({s['trials_per_sec']:.1f})"),
            ("lease-to-start p50 / p99 / max, all (ms)",
             f"{s['lease_all']['p50_ms']:.1f} / {s['lease_all']['p99_ms']:.1f} / {s['lease_all']['max_ms']:.0f}")]
    if "lease_before_kill" in s:
        for name in ("lease_before_kill", "lease_after_restart"):
            part = s[name]
            rows.append((f"lease-to-start p50 / p99, {name.replace('_', ' ')} (ms)",
                         f"{part['p50_ms']:.1f} / {part['p99_ms']:.1f} ({part['trials']:,} trials)"))
    rows += [("coordinator RSS peak / median (MiB)", f"{s['rss_peak_mib']:.1f} / {s['rss_median_mib']:.1f}"),
             ("coordinator CPU: ms a trial; % of a core",
              f"{s['coordinator_cpu_ms_per_trial']:.2f}; {s['coordinator_core_percent']:.1f}%"),
             ("generator CPU seconds; machine busy cores (median)",
              f"{s['generator_cpu_seconds']:.0f}; {s['machine_busy_cores_median']:.2f} of {os.cpu_count()}")]
    if "kill" in report:
        k = report["kill"]
        first = k["first_answer_seconds"]
        probe = k["probe_answered_seconds"]
        rows.append(("kill -9 at (s); time to serve again, from the restart: 'listening on' / first `rung sweeps` "
                     "answered / first generator call answered after failures (s)",
                     f"{k['at_seconds']:.0f}; {k['serving_seconds']:.2f} / "
                     f"{'n/a' if probe is None else f'{probe:.2f}'} / {'n/a' if first is None else f'{first:.2f}'}"))
    rows += [("acknowledged completions lost; duplicated", f"{c['lost']}; {c['completed_twice_in_ledger']} "
              f"(trials with two SUCCEEDED attempts: {c['trials_with_two_succeeded_attempts']})"),
             ("acknowledged batches not committed; points not stored; extra points",
              f"{c['acknowledged_batches_not_committed']}; {c['acknowledged_points_not_stored']}; "
              f"{c['completed_attempts_with_extra_points']}"),
             ("batches / points acknowledged", f"{g['acknowledged_batches']:,} / {g['acknowledged_points']:,}"),
             ("duplicate acknowledgements: batches; completes", f"{g['duplicate_batches']}; {g['duplicate_completes']}"),
             ("attempts dropped (fenced); generator errors", f"{g['attempts_dropped']}; {g['error_count']}"),
             ("attempts in the database not in the ledger", json.dumps(c["attempts_not_in_ledger_by_state"])),
             ("all checks", "pass" if c["ok"] else "FAIL")]
    print("| measure | value |\n|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    if "restarts_after" in report:
        a = report["restarts_after"]
        print(f"| start on the final database ({a['db_mib']:,.0f} MiB), stopped cleanly: quick check / none (s) "
              f"| {a['quick_seconds']:.2f} / {a['none_seconds']:.2f} |")
    print("\n| minute from (s) | trials leased | lease p50 ms | p99 ms | max ms | RSS max MiB | coordinator cores "
          "| generator cores | machine busy cores |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in s["per_minute"]:
        print(f"| {m['from_s']} | {m['trials']:,} | {m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {m['max_ms']:.0f} "
              f"| {m['rss_max_mib']:.1f} | {m['coordinator_cores']:.2f} | {m['generator_cores']:.2f} "
              f"| {m['machine_busy_cores']:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="scratch folder (default: <build-dir>/bench/soak)")
    parser.add_argument("--workers", type=int, default=200, help="worker identities")
    parser.add_argument("--seconds", type=float, default=600, help="how long the identities lease trials")
    parser.add_argument("--kill-at", type=float, default=None,
                        help="SIGKILL the coordinator this many seconds in, and restart it (default: half way; 0: never)")
    parser.add_argument("--trial-seconds", type=float, default=2, help="how long a fake trial lasts")
    parser.add_argument("--batches", type=int, default=3, help="step-record batches a trial reports")
    parser.add_argument("--lines-per-batch", type=int, default=8, help="step records a batch")
    parser.add_argument("--lease-seconds", type=float, default=6,
                        help="the coordinator's --lease-seconds (heartbeats every sixth of it)")
    parser.add_argument("--trials", type=int, default=0,
                        help="trials submitted (default: enough for the soak, 1.3x workers/trial-seconds x seconds; "
                             "at most 100,000, the coordinator's cap)")
    parser.add_argument("--out-json", default=None)
    args = parser.parse_args()
    if args.kill_at is None:
        args.kill_at = args.seconds / 2
    report = run(args)
    if args.out_json:
        os.makedirs(os.path.dirname(os.path.abspath(args.out_json)), exist_ok=True)
        with open(args.out_json, "w") as out:
            json.dump(report, out, indent=1)
    print_table(report)
    return 0 if report["checks"]["ok"] and report["generator"]["error_count"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
