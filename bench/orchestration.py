#!/usr/bin/python3
"""bench/orchestration.py: rung's coordinator and workers under load.

Three measurements, each against real processes on loopback and a real SQLite database under
--work-dir (a fresh folder per run, same disk as the build):

  orchestration  trials/s of a sweep of --trials trials (a random train.lr axis) through a real
                 rung-coordinator and --workers real rung-worker processes, each trial spawned as
                 rung-stand-in (the tests' stand-in trainer, tests/support/stand_in_trainer/: it
                 trains nothing and plays a loss surface through rung-train's contract: provenance,
                 --stand-in-steps step records, a final checkpoint, the final record) and leased,
                 relayed and completed like a real one; timed from
                 `rung submit` to the last attempt's end (attempts.ended_at). Every trial must be
                 SUCCEEDED with exactly one attempt, and every step record's points must be stored.
                 Side by side, in the same run: Optuna (Debian python3-optuna, RDB storage on a SQLite
                 file) with --workers processes sharing one study, each calling optimize() with the
                 default sampler on an objective that suggests one float and returns it, --trials
                 trials in all; timed from the release of the (already imported, study-loaded)
                 processes to the last one's return. Repeated --repeats times, the order of the two
                 alternating, --pause seconds between two measurements; medians.
                 With --worker-variants, the rung measurement runs once per rung-worker binary given
                 (e.g. builds of the agent with and without an optimization) in each repeat, in an
                 order rotated every repeat, and the table gives each one's trials/s and the CPU a
                 trial cost the coordinator, the workers and the stand-ins (medians), and the
                 workers' and the coordinator's CPU a trial and the trials/s against the first
                 binary's (medians of per-repeat ratios). --coordinator-variants does the same for
                 rung-coordinator binaries (the same workers, stand-in and CLI); both may be given.
                 With --count-syncs each coordinator's fsync and fdatasync calls are counted (perf
                 stat attached to it) and reported per trial. --stand-in-seconds gives every trial a
                 least duration (realistic load: trials of a second or more, instead of as fast as
                 the stand-in can).
  ingest         rung-bench-metric-ingest: --reporters concurrent ReportMetrics streams for
                 --ingest-seconds against a fresh coordinator; acknowledged points against the rows
                 in the database afterwards.
  memory         a sweep of --memory-trials trials submitted through `rung submit`; the coordinator
                 restarted on that database (VmRSS/VmHWM after startup), then --memory-run of them run
                 through the stand-in on --workers workers, VmRSS sampled as trials finish.

Standard library only (Optuna runs in its own /usr/bin/python3 processes). Prints markdown tables and
writes everything to --out-json.

  /usr/bin/python3 bench/orchestration.py --build-dir build --repeats 3
"""

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

SPEC = """\
name: {name}
description: {description}
metric: {{name: val_loss, goal: minimize}}
data: {{source: builtin, seq_len: 32}}
model: {{layers: 1, d_model: 32, heads: 2}}
train: {{steps: 3, batch_size: 4, log_every: 1, eval_every: 0}}
resources: {{cpus: 1}}
policy: {{max_retries: {max_retries}}}
sweep:
  random:
    samples: {samples}
    seed: {seed}
    axes:
      train.lr: {{log_uniform: [1e-4, 1e-2]}}
"""

# Metric points per stand-in step record: the step record's numeric fields but "step"
# (records::StepMetricNames(), core/records/trainer_records.h: tokens, flops, flops_total, lr,
# train_loss, grad_norm, positional_grad_norm, tokens_per_sec, elapsed_sec) less the two that only
# evaluation steps carry (val_loss, val_accuracy). The spec above has a step record every step
# (log_every 1) and no evaluation before the last step, which carries val_loss: one point more a trial.
POINTS_PER_STEP_RECORD = 9
POINTS_PER_TRIAL_END = 1

OPTUNA_CHILD = textwrap.dedent("""\
    import sys, time, optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage, go_file, n_trials = sys.argv[1], sys.argv[2], int(sys.argv[3])
    study = optuna.load_study(study_name="bench", storage=storage)
    def objective(trial):
        return trial.suggest_float("x", -10.0, 10.0)
    print("ready", flush=True)
    import os
    while not os.path.exists(go_file):
        time.sleep(0.001)
    study.optimize(objective, n_trials=n_trials)
    print("done", time.time(), flush=True)
""")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def proc_status(pid, keys=("VmRSS", "VmHWM")):
    """Fields of a process's /proc status as numbers: by default VmRSS and VmHWM, in KiB."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in keys:
                values[key] = int(rest.split()[0])
    return values


def cpu_seconds(pid):
    """User + system CPU seconds of a process, and of its reaped children."""
    fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, (int(fields[13]) + int(fields[14])) / ticks


def read_only(db_path):
    return sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)


class Cluster:
    """A rung-coordinator on 127.0.0.1 (port 0) and, on demand, rung-worker processes."""

    def __init__(self, bin_dir, root, env, wrapper=(), coordinator_binary=None):
        self.bin_dir = bin_dir
        self.wrapper = list(wrapper)  # e.g. a profiler's command line, before the coordinator's
        self.coordinator_binary = coordinator_binary or os.path.join(bin_dir, "rung-coordinator")
        self.root = root
        self.env = env
        self.db = os.path.join(root, "rung.db")
        self.user_token = os.path.join(root, "user.token")
        self.worker_token = os.path.join(root, "worker.token")
        self.coordinator = None
        self.workers = []
        self.dashboards = []
        self.address = None

    def start_coordinator(self, listen="127.0.0.1:0", extra_args=()):
        """Starts it (listen: its --listen; extra_args: more flags) and waits until it serves."""
        log_file = open(os.path.join(self.root, "coordinator.log"), "a")
        self.coordinator = subprocess.Popen(
            [*self.wrapper, self.coordinator_binary, "--db", self.db, "--listen", listen,
             "--user-token-file", self.user_token, "--worker-token-file", self.worker_token,
             "--artifact-root", os.path.join(self.root, "artifacts"), *extra_args],
            stdout=subprocess.PIPE, stderr=log_file, text=True, env=self.env)
        line = self.coordinator.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"rung-coordinator did not start (see {self.root}/coordinator.log): {line!r}")
        self.address = line.split()[-1]
        return self.coordinator.pid

    def start_workers(self, count, stand_in, stand_in_env, worker_binary=None):
        env = dict(self.env, **stand_in_env)
        worker_binary = worker_binary or os.path.join(self.bin_dir, "rung-worker")
        for index in range(count):
            work = os.path.join(self.root, f"worker-{index}")
            os.makedirs(work, exist_ok=True)
            log_file = open(os.path.join(work, "worker.log"), "a")
            self.workers.append(subprocess.Popen(
                [worker_binary, "--coordinator", self.address,
                 "--worker-token-file", self.worker_token, "--cpus", "1", "--worker-id", f"bench-{index}",
                 "--trainer", stand_in, "--work-dir", work],
                stdout=subprocess.DEVNULL, stderr=log_file, env=env))
        deadline = time.time() + 60
        while time.time() < deadline:
            with read_only(self.db) as db:
                registered = db.execute("SELECT COUNT(*) FROM workers WHERE id LIKE 'bench-%'").fetchone()[0]
            if registered >= count:
                return
            time.sleep(0.05)
        raise RuntimeError("the workers did not register within 60 s")

    def rung(self, *arguments):
        return subprocess.run(
            [os.path.join(self.bin_dir, "rung"), *arguments, "--coordinator", self.address,
             "--token-file", self.user_token], capture_output=True, text=True, env=self.env, check=False)

    def submit(self, spec_path):
        done = self.rung("submit", spec_path, "--format", "json")
        if done.returncode != 0:
            raise RuntimeError(f"rung submit failed ({done.returncode}): {done.stderr}{done.stdout}")
        return done

    def start_dashboard(self):
        """`rung dashboard` on 127.0.0.1 (port 0) with the user token: (process, origin, login token).
        stop() stops it with the rest."""
        dashboard = subprocess.Popen(
            [os.path.join(self.bin_dir, "rung"), "dashboard", "--coordinator", self.address, "--token-file",
             self.user_token, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
        self.dashboards.append(dashboard)
        url = dashboard.stdout.readline().strip().split("rung dashboard: ", 1)[1]
        origin, token = url.split("/?token=")
        return dashboard, origin, token

    def stop_workers(self):
        for worker in self.workers:
            worker.send_signal(signal.SIGTERM)
        for worker in self.workers:
            worker.wait(timeout=120)
        self.workers = []

    def stop(self):
        for dashboard in self.dashboards:
            dashboard.terminate()
            dashboard.wait(timeout=30)
        self.dashboards = []
        self.stop_workers()
        if self.coordinator is not None:
            self.coordinator.send_signal(signal.SIGTERM)
            self.coordinator.wait(timeout=60)
            self.coordinator = None


def write_spec(root, name, samples, seed=0, max_retries=0,
               description="orchestration benchmark (rung-stand-in trains nothing)"):
    path = os.path.join(root, f"{name}.yaml")
    with open(path, "w") as spec:
        spec.write(SPEC.format(name=name, samples=samples, seed=seed, max_retries=max_retries, description=description))
    return path


def sweep_counts(db_path, name):
    with read_only(db_path) as db:
        return dict(db.execute(
            "SELECT trials.state, COUNT(*) FROM trials JOIN sweeps ON sweeps.id = trials.sweep_id "
            "WHERE sweeps.name = ? GROUP BY trials.state", (name,)).fetchall())


def count_succeeded(db_path):
    with read_only(db_path) as db:
        return db.execute("SELECT COUNT(*) FROM trials WHERE state = 'SUCCEEDED'").fetchone()[0]


def wait_for_succeeded(db_path, name, count, timeout, on_poll=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        counts = sweep_counts(db_path, name)
        if on_poll is not None:
            on_poll(counts.get("SUCCEEDED", 0))
        if counts.get("SUCCEEDED", 0) >= count:
            return counts
        bad = {state: n for state, n in counts.items() if state in ("FAILED", "CANCELLED")}
        if bad:
            raise RuntimeError(f"sweep {name}: {bad}")
        time.sleep(0.1)
    raise RuntimeError(f"sweep {name} did not finish in {timeout} s: {sweep_counts(db_path, name)}")


def stand_in_environment(args):
    """What the workers pass their stand-ins (rung-worker gives its trainers its environment)."""
    env = {"RUNG_STAND_IN_STEPS": str(args.stand_in_steps)}
    if args.stand_in_seconds > 0:
        env["RUNG_STAND_IN_SECONDS"] = str(args.stand_in_seconds)
    return env


SYNC_CALLS = ("syscalls:sys_enter_fsync", "syscalls:sys_enter_fdatasync")


def count_syncs(pid, out_path):
    """perf stat counting a process's fsync and fdatasync calls until stopped with SIGINT."""
    return subprocess.Popen(["perf", "stat", "-x", ",", "-o", out_path, "-e", ",".join(SYNC_CALLS), "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def read_syncs(counter, out_path):
    counter.send_signal(signal.SIGINT)
    counter.wait(timeout=30)
    total = 0
    with open(out_path) as counts:
        for line in counts:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[2] in SYNC_CALLS:
                total += int(fields[0])
    return total


def run_rung(args, bin_dir, stand_in, repeat, system="rung", worker_binary=None, coordinator_binary=None):
    root = tempfile.mkdtemp(prefix=f"{system}-{repeat}-", dir=args.work_dir)
    cluster = Cluster(bin_dir, root, dict(os.environ), args.coordinator_wrapper.split(), coordinator_binary)
    try:
        cluster.start_coordinator()
        counter = count_syncs(cluster.coordinator.pid, os.path.join(root, "syncs.csv")) if args.count_syncs else None
        cluster.start_workers(args.workers, stand_in, stand_in_environment(args), worker_binary)
        spec = write_spec(root, "bench-orchestration", args.trials, seed=repeat)
        started = time.time()
        cluster.submit(spec)
        submitted = time.time()
        wait_for_succeeded(cluster.db, "bench-orchestration", args.trials, timeout=args.timeout)
        polled = time.time()
        coordinator_cpu = sum(cpu_seconds(cluster.coordinator.pid))
        syncs = read_syncs(counter, os.path.join(root, "syncs.csv")) if counter else None
        worker_cpu = [cpu_seconds(worker.pid) for worker in cluster.workers]
        with read_only(cluster.db) as db:
            sweep_id = db.execute("SELECT id FROM sweeps WHERE name = 'bench-orchestration'").fetchone()[0]
            last_end = db.execute(
                "SELECT MAX(attempts.ended_at) FROM attempts JOIN trials ON trials.id = attempts.trial_id "
                "WHERE trials.sweep_id = ?", (sweep_id,)).fetchone()[0] / 1e6
            trials = db.execute("SELECT COUNT(*), SUM(state = 'SUCCEEDED'), SUM(attempt = 1) FROM trials "
                                "WHERE sweep_id = ?", (sweep_id,)).fetchone()
            attempts = db.execute(
                "SELECT COUNT(*), SUM(attempts.state = 'SUCCEEDED'), COUNT(DISTINCT attempts.trial_id) "
                "FROM attempts JOIN trials ON trials.id = attempts.trial_id WHERE trials.sweep_id = ?",
                (sweep_id,)).fetchone()
            points = db.execute("SELECT COUNT(*) FROM metrics JOIN trials ON trials.id = metrics.trial_id "
                                "WHERE trials.sweep_id = ?", (sweep_id,)).fetchone()[0]
        expected_points = args.trials * (args.stand_in_steps * POINTS_PER_STEP_RECORD + POINTS_PER_TRIAL_END)
        checks = {
            "trials": trials[0], "succeeded": trials[1], "trials_with_attempt_1": trials[2],
            "attempts": attempts[0], "attempts_succeeded": attempts[1], "trials_attempted": attempts[2],
            "metric_points": points, "metric_points_expected": expected_points,
        }
        ok = (trials[0] == trials[1] == trials[2] == attempts[0] == attempts[1] == attempts[2] == args.trials
              and points == expected_points)
        seconds = last_end - started
        result = {"system": system, "worker_binary": worker_binary or os.path.join(bin_dir, "rung-worker"),
                  "coordinator_binary": cluster.coordinator_binary,
                  "stand_in": os.path.basename(stand_in), "repeat": repeat, "seconds": seconds,
                  "trials_per_sec": args.trials / seconds,
                  "syncs_per_trial": None if syncs is None else syncs / args.trials,
                  "submit_seconds": submitted - started, "poll_seconds": polled - started, "checks": checks,
                  "cpu_seconds": {"coordinator": coordinator_cpu, "workers": sum(c[0] for c in worker_cpu),
                                  "stand_ins": sum(c[1] for c in worker_cpu)},
                  "no_lost_or_duplicated": ok, "dir": root}
        log(f"{system} repeat {repeat}: {args.trials} trials in {seconds:.2f} s = {args.trials / seconds:.1f} trials/s"
            f" (submit {submitted - started:.2f} s); CPU s {result['cpu_seconds']}; checks {'ok' if ok else 'FAILED'}:"
            f" {checks}")
        return result
    finally:
        cluster.stop()


def run_optuna(args, repeat):
    root = tempfile.mkdtemp(prefix=f"optuna-{repeat}-", dir=args.work_dir)
    storage = f"sqlite:///{os.path.join(root, 'optuna.db')}"
    subprocess.run([args.python, "-c",
                    "import optuna; optuna.logging.set_verbosity(optuna.logging.WARNING); "
                    f"optuna.create_study(study_name='bench', storage={storage!r})"], check=True)
    go_file = os.path.join(root, "go")
    per_process = [args.trials // args.workers + (1 if i < args.trials % args.workers else 0)
                   for i in range(args.workers)]
    children = [subprocess.Popen([args.python, "-c", OPTUNA_CHILD, storage, go_file, str(n)],
                                 stdout=subprocess.PIPE, text=True) for n in per_process]
    for child in children:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("an Optuna process did not start")
    started = time.time()
    with open(go_file, "w"):
        pass
    ended = []
    for child in children:
        line = child.stdout.readline().split()
        child.wait()
        if child.returncode != 0 or not line or line[0] != "done":
            raise RuntimeError(f"an Optuna process failed ({child.returncode})")
        ended.append(float(line[1]))
    seconds = max(ended) - started
    with sqlite3.connect(f"file:{os.path.join(root, 'optuna.db')}?mode=ro", uri=True) as db:
        states = dict(db.execute("SELECT state, COUNT(*) FROM trials GROUP BY state").fetchall())
        numbers = db.execute("SELECT COUNT(DISTINCT number), COUNT(*) FROM trials").fetchone()
    ok = states.get("COMPLETE", 0) == args.trials and numbers[0] == numbers[1] == args.trials
    log(f"optuna repeat {repeat}: {args.trials} trials in {seconds:.2f} s = {args.trials / seconds:.1f} trials/s;"
        f" states {states}")
    return {"system": "optuna", "repeat": repeat, "seconds": seconds, "trials_per_sec": args.trials / seconds,
            "states": states, "no_lost_or_duplicated": ok, "dir": root}


def parse_variants(text, option, binary):
    """"NAME=PATH,NAME=PATH" -> [(name, absolute path)], in order."""
    variants = []
    for item in filter(None, text.split(",")):
        name, _, path = item.partition("=")
        if not name or not path or name == "optuna":
            sys.exit(f"{option}: '{item}' is not NAME=PATH (NAME not 'optuna')")
        if not os.access(path, os.X_OK):
            sys.exit(f"{option}: {path} is not an executable {binary}")
        variants.append((name, os.path.abspath(path)))
    return variants


def rung_systems(args):
    """[(system, rung-worker binary, rung-coordinator binary)]: the build's own pair as 'rung' unless
    variants replace it; None is the build's binary."""
    systems = [(name, path, None) for name, path in parse_variants(args.worker_variants, "--worker-variants",
                                                                    "rung-worker")]
    systems += [(name, None, path) for name, path in parse_variants(args.coordinator_variants,
                                                                     "--coordinator-variants", "rung-coordinator")]
    if len({name for name, _, _ in systems}) != len(systems):
        sys.exit("--worker-variants, --coordinator-variants: the names must differ")
    return systems or [("rung", None, None)]


def orchestration(args, bin_dir, stand_in):
    runs = []
    first = True
    systems = rung_systems(args)
    if not args.skip_optuna:
        systems.append(("optuna", None, None))
    names = [name for name, _, _ in systems]
    for repeat in range(args.repeats):
        shift = repeat % len(systems)
        order = systems[shift:] + systems[:shift]  # every system in every position, in turn
        for system, worker_binary, coordinator_binary in order:
            if not first and args.pause > 0:
                time.sleep(args.pause)  # see --pause
            first = False
            if system == "optuna":
                runs.append(run_optuna(args, repeat))
            else:
                runs.append(run_rung(args, bin_dir, stand_in, repeat, system, worker_binary, coordinator_binary))
    summary = {}
    for system in names:
        mine = [run for run in runs if run["system"] == system]
        rates = [run["trials_per_sec"] for run in mine]
        summary[system] = {"median_trials_per_sec": statistics.median(rates), "min": min(rates),
                           "max": max(rates), "repeats": len(rates),
                           "all_ok": all(run["no_lost_or_duplicated"] for run in mine)}
        if system != "optuna":
            summary[system]["worker_binary"] = mine[0]["worker_binary"]
            summary[system]["coordinator_binary"] = mine[0]["coordinator_binary"]
            syncs = [run["syncs_per_trial"] for run in mine if run["syncs_per_trial"] is not None]
            if syncs:
                summary[system]["syncs_per_trial"] = statistics.median(syncs)
            for part in ("coordinator", "workers", "stand_ins"):
                per_trial = [run["cpu_seconds"][part] * 1000 / args.trials for run in mine]
                summary[system][f"{part}_cpu_ms_per_trial"] = statistics.median(per_trial)
                summary[system][f"{part}_cpu_ms_per_trial_range"] = [min(per_trial), max(per_trial)]
    by_repeat = {}
    for run in runs:
        by_repeat.setdefault(run["repeat"], {})[run["system"]] = run
    ratios = [pair["rung"]["trials_per_sec"] / pair["optuna"]["trials_per_sec"]
              for pair in by_repeat.values() if "rung" in pair and "optuna" in pair]
    if ratios:
        summary["ratio_median"] = statistics.median(ratios)
    rung_names = [name for name in names if name != "optuna"]
    if len(rung_names) > 1:
        # Each variant's CPU a trial against the first's, paired within a repeat.
        reference = rung_names[0]
        for system in rung_names[1:]:
            for part in ("coordinator", "workers"):
                paired = [pair[system]["cpu_seconds"][part] / pair[reference]["cpu_seconds"][part]
                          for pair in by_repeat.values() if system in pair and reference in pair]
                summary[system][f"{part}_cpu_vs_{reference}"] = statistics.median(paired)
            paired = [pair[system]["trials_per_sec"] / pair[reference]["trials_per_sec"]
                      for pair in by_repeat.values() if system in pair and reference in pair]
            summary[system][f"trials_per_sec_vs_{reference}"] = statistics.median(paired)
    return {"runs": runs, "summary": summary, "systems": names}


def ingest(args, bin_dir):
    root = tempfile.mkdtemp(prefix="ingest-", dir=args.work_dir)
    cluster = Cluster(bin_dir, root, dict(os.environ))
    try:
        cluster.start_coordinator()
        cluster.submit(write_spec(root, "bench-ingest", args.reporters))
        done = subprocess.run(
            [os.path.join(bin_dir, "rung-bench-metric-ingest"), "--coordinator", cluster.address,
             "--worker-token-file", cluster.worker_token, "--reporters", str(args.reporters),
             "--seconds", str(args.ingest_seconds)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"rung-bench-metric-ingest failed ({done.returncode}): {done.stderr}{done.stdout}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        rss = proc_status(cluster.coordinator.pid)
    finally:
        cluster.stop()
    with read_only(cluster.db) as db:
        marks = ",".join("?" * len(result["trials"]))
        stored = db.execute(f"SELECT COUNT(*) FROM metrics WHERE trial_id IN ({marks})", result["trials"]).fetchone()[0]
    result.update({"stored_points": stored, "stored_points_per_sec": stored / result["seconds"],
                   "every_acknowledged_point_stored": stored >= result["acknowledged_points"],
                   "coordinator_rss_kib": rss, "db_bytes": os.path.getsize(cluster.db), "dir": root})
    log(f"ingest: {result['acknowledged_points']} points acknowledged, {stored} stored in {result['seconds']:.2f} s"
        f" = {result['stored_points_per_sec']:.0f} points/s")
    return result


def memory(args, bin_dir, stand_in):
    root = tempfile.mkdtemp(prefix="memory-", dir=args.work_dir)
    cluster = Cluster(bin_dir, root, dict(os.environ))
    result = {"trials_in_db": args.memory_trials, "dir": root}
    try:
        cluster.start_coordinator()
        result["rss_empty_kib"] = proc_status(cluster.coordinator.pid)
        # Several sweeps: one submission's answer lists its cells, and the CLI takes at most 4 MiB.
        sweep_sizes = [min(args.memory_sweep_size, args.memory_trials - first)
                       for first in range(0, args.memory_trials, args.memory_sweep_size)]
        started = time.time()
        result["rss_after_each_submission_kib"] = []
        for index, size in enumerate(sweep_sizes):
            cluster.submit(write_spec(root, f"bench-memory-{index}", size, seed=index))
            result["rss_after_each_submission_kib"].append(proc_status(cluster.coordinator.pid))
        result["submit_seconds"] = time.time() - started
        result["sweeps"] = len(sweep_sizes)
        result["rss_after_submit_kib"] = proc_status(cluster.coordinator.pid)
        log(f"memory: submitted {args.memory_trials} trials in {result['submit_seconds']:.1f} s")
        cluster.stop()
        pid = cluster.start_coordinator()
        time.sleep(1.0)
        result["rss_after_restart_kib"] = proc_status(pid)
        cluster.start_workers(args.workers, stand_in, stand_in_environment(args))
        samples = []
        step = max(1, args.memory_run // 10)
        next_mark = [0]

        def sample(succeeded):
            if succeeded >= next_mark[0]:
                samples.append({"succeeded": succeeded, **proc_status(pid)})
                next_mark[0] = (succeeded // step + 1) * step

        deadline = time.time() + args.timeout
        while True:
            succeeded = count_succeeded(cluster.db)
            sample(succeeded)
            if succeeded >= args.memory_run:
                break
            if time.time() > deadline:
                raise RuntimeError(f"memory: only {succeeded} trials succeeded in {args.timeout} s")
            time.sleep(0.2)
        cluster.stop_workers()
        samples.append({"succeeded": count_succeeded(cluster.db), **proc_status(pid)})
        result["samples"] = samples
        result["db_bytes"] = os.path.getsize(cluster.db)
    finally:
        cluster.stop()
    log(f"memory: restart RSS {result['rss_after_restart_kib']}, samples {samples}")
    return result


def kib(value):
    return f"{value / 1024:.1f}"


def print_tables(report):
    out = []
    if "orchestration" in report:
        o = report["orchestration"]
        rung_names = [name for name in o["systems"] if name != "optuna"]
        reference = rung_names[0]
        out.append("| system | trials/s (median) | range | CPU ms a trial: coordinator | workers | stand-ins "
                   f"| fsyncs a trial | vs {reference}: trials/s | coordinator CPU | workers' CPU | repeats "
                   "| every trial once |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")

        def cell(summary, key, digits=3):
            return f"{summary[key]:.{digits}f}" if key in summary else ""

        for system in o["systems"]:
            s = o["summary"][system]
            cpu = " | | |"
            if system != "optuna":
                cpu = (f" {s['coordinator_cpu_ms_per_trial']:.2f} | {s['workers_cpu_ms_per_trial']:.2f} | "
                       f"{s['stand_ins_cpu_ms_per_trial']:.2f} |")
            versus = " | ".join(cell(s, key) for key in (f"trials_per_sec_vs_{reference}",
                                                        f"coordinator_cpu_vs_{reference}",
                                                        f"workers_cpu_vs_{reference}"))
            out.append(f"| {system} | {s['median_trials_per_sec']:.1f} | {s['min']:.1f}-{s['max']:.1f} |{cpu} "
                       f"{cell(s, 'syncs_per_trial', 2)} | {versus} | {s['repeats']} | "
                       f"{'yes' if s['all_ok'] else 'NO'} |")
        if "ratio_median" in o["summary"]:
            out.append(f"\nrung / Optuna (median of per-repeat ratios): {o['summary']['ratio_median']:.1f}x")
        out.append("")
    if "ingest" in report:
        i = report["ingest"]
        out.append("| reporters | seconds | batches | points acknowledged | points stored | stored points/s |")
        out.append("|---:|---:|---:|---:|---:|---:|")
        out.append(f"| {i['reporters']} | {i['seconds']:.1f} | {i['acknowledged_batches']} | "
                   f"{i['acknowledged_points']:,} | {i['stored_points']:,} | {i['stored_points_per_sec']:,.0f} |")
        out.append("")
    if "memory" in report:
        m = report["memory"]
        out.append(f"| coordinator, database of {m['trials_in_db']:,} trials | trials SUCCEEDED | VmRSS MiB | VmHWM MiB |")
        out.append("|---|---:|---:|---:|")
        out.append(f"| empty database | 0 | {kib(m['rss_empty_kib']['VmRSS'])} | {kib(m['rss_empty_kib']['VmHWM'])} |")
        out.append(f"| after the submission | 0 | {kib(m['rss_after_submit_kib']['VmRSS'])} | "
                   f"{kib(m['rss_after_submit_kib']['VmHWM'])} |")
        out.append(f"| restarted on it | 0 | {kib(m['rss_after_restart_kib']['VmRSS'])} | "
                   f"{kib(m['rss_after_restart_kib']['VmHWM'])} |")
        for s in m.get("samples", []):
            out.append(f"| running | {s['succeeded']:,} | {kib(s['VmRSS'])} | {kib(s['VmHWM'])} |")
        out.append("")
    print("\n".join(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work-dir", default=None, help="scratch folder (default: <build-dir>/bench/orchestration)")
    parser.add_argument("--parts", default="orchestration,ingest,memory")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--stand-in-steps", type=int, default=3, help="step records per stand-in trial")
    parser.add_argument("--stand-in-seconds", type=float, default=0,
                        help="least duration of a stand-in trial (RUNG_STAND_IN_SECONDS); 0: as fast as it can")
    parser.add_argument("--coordinator-variants", default="",
                        help="NAME=PATH,...: rung-coordinator binaries to compare side by side, as --worker-variants "
                             "does for workers (after them; the first variant of all is the reference)")
    parser.add_argument("--count-syncs", action="store_true",
                        help="count each coordinator's fsync and fdatasync calls (perf stat -p; needs perf and "
                             "permission to trace the process)")
    parser.add_argument("--worker-variants", default="",
                        help="NAME=PATH,...: rung-worker binaries to compare side by side in the orchestration "
                             "part (the first is the reference); default: the build's rung-worker, as 'rung'")
    parser.add_argument("--skip-optuna", action="store_true")
    parser.add_argument("--pause", type=float, default=90,
                        help="seconds between two orchestration measurements (default 90): this VM's ext4 has no "
                             "journal and for 60-300 s will not reuse the inodes of deleted files, scanning past "
                             "them; Optuna's SQLite creates and deletes a journal file per transaction, so a rung "
                             "run right after it pays for that on every file it creates (~6%% slower). 0: none")
    parser.add_argument("--python", default="/usr/bin/python3", help="the Python that has optuna (Debian's)")
    parser.add_argument("--reporters", type=int, default=32)
    parser.add_argument("--ingest-seconds", type=float, default=30)
    parser.add_argument("--memory-trials", type=int, default=100000)
    parser.add_argument("--memory-sweep-size", type=int, default=10000, help="trials per submitted sweep")
    parser.add_argument("--memory-run", type=int, default=20000, help="trials run through in the memory part")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one sweep may take")
    parser.add_argument("--coordinator-wrapper", default="",
                        help="a command the coordinator runs under in the orchestration part (a profiler), e.g. "
                             "'perf record -g -o coordinator.perf --'")
    parser.add_argument("--out-json", default=None)
    args = parser.parse_args()

    bin_dir = os.path.abspath(os.path.join(args.build_dir, "bin"))
    stand_in = os.path.join(bin_dir, "rung-stand-in")
    binaries = ["rung-coordinator", "rung-worker", "rung", "rung-stand-in", "rung-bench-metric-ingest"]
    for binary in binaries:
        if not os.access(os.path.join(bin_dir, binary), os.X_OK):
            sys.exit(f"{bin_dir}/{binary} is missing: cmake --build {args.build_dir} --target "
                     + " ".join(binaries))
    args.work_dir = os.path.abspath(args.work_dir or os.path.join(args.build_dir, "bench", "orchestration"))
    os.makedirs(args.work_dir, exist_ok=True)
    parts = args.parts.split(",")
    report = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
              "loadavg_start": open("/proc/loadavg").read().split()[:3], "args": vars(args)}
    if "orchestration" in parts:
        report["orchestration"] = orchestration(args, bin_dir, stand_in)
    if "ingest" in parts:
        report["ingest"] = ingest(args, bin_dir)
    if "memory" in parts:
        report["memory"] = memory(args, bin_dir, stand_in)
    report["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    if args.out_json:
        os.makedirs(os.path.dirname(os.path.abspath(args.out_json)), exist_ok=True)
        with open(args.out_json, "w") as out:
            json.dump(report, out, indent=2)
    print_tables(report)


if __name__ == "__main__":
    main()
