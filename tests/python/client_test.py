"""The Python client (python/rung) against a real coordinator: a sweep run by `rung run` with the
stand-in trainer, served by `rung serve`, read through the client and through the `rung` CLI's CSV;
the DataFrames must hold what the CSV holds. Run by ctest with /usr/bin/python3 (Debian's grpcio,
protobuf and pandas), PYTHONPATH=python and RUNG_BIN=<build>/bin."""
import io
import math
import numbers
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import grpc
import pandas as pd

import rung

BIN = os.environ["RUNG_BIN"]
SPEC = """name: python-client
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 32}
model: {layers: 1, d_model: 16, heads: 2}
train: {steps: 40, batch_size: 4, eval_every: 10, log_every: 5}
resources: {cpus: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
    - {layers: 2, d_model: 48, heads: 3}
  tokens_per_param: 1
sweep:
  position.variant: [rope, lerope]
  seed: [1, 2]
"""
# Sweep 2: the learning rate searched per variant, on a loss surface whose optimum is the centre.
TUNED_SPEC = """name: python-tuning
metric: {name: val_loss, goal: minimize}
data: {source: builtin, seq_len: 32}
model: {layers: 1, d_model: 16, heads: 2}
train: {steps: 20, batch_size: 4, eval_every: 10, log_every: 5}
resources: {cpus: 1}
sweep:
  position.variant: [rope, nope]
tune:
  train.lr: {center: 0.00390625, predict: none}
"""
SURFACE = '{"lr_ref": 0.00390625, "exponent": 0, "noise": 0}'
# Sweep 4: a precision aim on the stand-in's surface, whose loss does not fall with the rung: no
# multiplier has an interval, so the aim adds seeds at the small rung until its budget is spent.
PRECISION_SPEC = """name: python-precision
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 32}
train: {steps: 20, batch_size: 4, eval_every: 10, log_every: 5}
resources: {cpus: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
sweep:
  position.variant: [rope, lerope]
  seed: [1, 2]
precision: {target_half_width: 0.001, budget_flops: 2.0e9}
"""
# Sweep 3: one real rung-train trial (AdaRoPE: learned frequencies, the band ablations, the heads'
# influence), diagnostics at two milestones and at twice the training length, the needle grid and an
# evaluation at twice the training length.
DIAGNOSED_SPEC = """name: python-diagnostics
metric: {name: val_loss, goal: minimize}
data: {source: niah, seq_len: 32, niah: {max_distractors: 1}}
model: {layers: 1, d_model: 16, heads: 2}
position: {variant: adarope}
train: {steps: 6, batch_size: 2, eval_every: 6, log_every: 3, diagnostics_sequences: 2, diagnostics_at: [0.5, 1.0],
        diagnostics_lengths: [8, 16, 32], niah_grid_instances: 1, extrapolation_multiples: [2],
        diagnostics_failure_lengths: [1.0], diagnostics_multiples: [2]}
resources: {cpus: 1}
"""


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="rung-python-client-")
        spec = os.path.join(cls.scratch, "spec.yaml")
        with open(spec, "w", encoding="utf-8") as handle:
            handle.write(SPEC)
        tuned = os.path.join(cls.scratch, "tuned.yaml")
        with open(tuned, "w", encoding="utf-8") as handle:
            handle.write(TUNED_SPEC)
        diagnosed = os.path.join(cls.scratch, "diagnosed.yaml")
        with open(diagnosed, "w", encoding="utf-8") as handle:
            handle.write(DIAGNOSED_SPEC)
        aimed = os.path.join(cls.scratch, "aimed.yaml")
        with open(aimed, "w", encoding="utf-8") as handle:
            handle.write(PRECISION_SPEC)
        run_dir = os.path.join(cls.scratch, "run")
        for one, trainer in ((spec, "rung-stand-in"), (tuned, "rung-stand-in"), (diagnosed, "rung-train"),
                             (aimed, "rung-stand-in")):
            # sweeps 1, 2, 3 and 4, in one folder
            subprocess.run([os.path.join(BIN, "rung"), "run", one, "--workers", "2", "--trainer",
                            os.path.join(BIN, trainer), "--dir", run_dir],
                           check=True, stdout=subprocess.DEVNULL, timeout=300,
                           env=dict(os.environ, RUNG_STAND_IN_SURFACE=SURFACE))
        cls.serve = subprocess.Popen([os.path.join(BIN, "rung"), "serve", run_dir], stdout=subprocess.PIPE, text=True)
        exports = {}
        deadline = time.time() + 30
        while len(exports) < 2 and time.time() < deadline:
            line = cls.serve.stdout.readline()
            match = re.match(r"export (RUNG_COORDINATOR|RUNG_TOKEN_FILE)=(\S+)", line)
            if match:
                exports[match.group(1)] = match.group(2)
        if len(exports) < 2:
            raise RuntimeError("rung serve printed no address")
        cls.env = dict(os.environ, **exports)
        cls.client = rung.connect(exports["RUNG_COORDINATOR"], exports["RUNG_TOKEN_FILE"])
        cls.run_dir = run_dir

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.serve.terminate()
        cls.serve.wait(timeout=30)
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def cli_csv(self, *args):
        out = subprocess.run([os.path.join(BIN, "rung"), *args, "--format", "csv"], env=self.env, check=True,
                             stdout=subprocess.PIPE, text=True, timeout=120).stdout
        return pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=[""], float_precision="round_trip")

    def test_results_hold_the_clis_groups_and_values(self):
        keys = ["rung_label", "position.variant"]
        ours = self.client.results(1, group_by=keys)
        cli = self.cli_csv("results", "1", "--group-by", ",".join(keys))
        self.assertEqual(list(ours.columns[:len(cli.columns)]), list(cli.columns))
        self.assertEqual(len(ours), 6)
        self.assertEqual(ours[keys].values.tolist(), cli[keys].values.tolist())
        for column in ["mean", "std", "min", "paired_diff", "paired_sd"]:  # the CLI prints 4-5 digits
            for mine, printed in zip(ours[column], cli[column]):
                self.assertAlmostEqual(mine, printed, delta=1e-4 * max(1.0, abs(printed)), msg=column)
        for column in ["count", "trials", "pairs"]:
            self.assertEqual(ours[column].tolist(), cli[column].tolist(), column)
        self.assertEqual(sorted(i for ids in ours["trial_ids"] for i in ids), list(range(1, 13)))

    def test_results_against_chosen_trials_carry_the_clis_intervals(self):
        keys = ["rung_label", "position.variant"]
        ours = self.client.results(1, group_by=keys, against={"position.variant": "lerope"}, pair_on=["seed"],
                                   level=0.9)
        cli = self.cli_csv("results", "1", "--group-by", ",".join(keys), "--against", "position.variant=lerope",
                           "--pair-on", "seed", "--level", "0.9")
        self.assertEqual(list(ours.columns[:len(cli.columns)]), list(cli.columns))
        for column in ["paired_diff", "paired_low", "paired_high"]:
            for mine, printed in zip(ours[column], cli[column]):
                self.assertAlmostEqual(mine, printed, delta=1e-4 * max(1.0, abs(printed)), msg=column)
        lerope = ours[ours["position.variant"] == "lerope"]
        self.assertTrue((lerope["paired_diff"] == 0).all())
        rope = ours[(ours["position.variant"] == "rope") & (ours["pairs"] >= 2)]
        self.assertGreater(len(rope), 0)
        for low, diff, high in zip(rope["paired_low"], rope["paired_diff"], rope["paired_high"]):
            self.assertLessEqual(low, diff)
            self.assertLessEqual(diff, high)

    def test_sweeps_are_the_clis_rows(self):
        ours = self.client.sweeps()
        cli = self.cli_csv("sweeps")
        self.assertEqual(list(ours.columns), list(cli.columns))
        self.assertEqual(ours.values.tolist(), cli.values.tolist())
        self.assertEqual(ours.loc[0, "state"], "SUCCEEDED")

    def test_trials_are_the_clis_rows(self):
        ours = self.client.trials(1)
        cli = self.cli_csv("trials", "1")
        self.assertEqual(list(ours.columns), list(cli.columns))
        self.assertEqual(len(ours), 12)
        for column in ["trial", "index", "rung", "cell", "state", "attempt", "step", "reason"]:
            self.assertEqual(ours[column].tolist(), cli[column].tolist(), column)
        self.assertEqual(ours["metric"].tolist(), cli["metric"].tolist())  # the CLI's CSV prints every digit

    def test_curves_end_at_each_trials_final_metric(self):
        curves = self.client.curves(1, "val_loss", x="flops")
        self.assertEqual(sorted(curves["trial"].unique()), list(range(1, 13)))
        trials = self.client.trials(1).set_index("trial")
        for trial, points in curves.groupby("trial"):
            self.assertTrue(points["step"].is_monotonic_increasing)
            self.assertTrue(points["x"].is_monotonic_increasing)
            self.assertEqual(points["value"].iloc[-1], trials.loc[trial, "metric"])

    def test_fit_holds_the_clis_multipliers(self):
        ours = self.client.fit(1, bootstrap=0)
        cli = self.cli_csv("fit", "1", "--bootstrap", "0")
        self.assertEqual(list(ours.columns), list(cli.columns))
        self.assertEqual(ours[["variant", "label", "estimator"]].values.tolist(),
                         cli[["variant", "label", "estimator"]].values.tolist())
        for mine, printed in zip(ours["multiplier"], cli["multiplier"]):
            if printed == printed:  # not NaN
                self.assertAlmostEqual(mine, printed, places=12)

    def test_tuning_is_the_clis_search(self):
        ours = self.client.tuning(2)
        cli = self.cli_csv("tune", "2")
        self.assertEqual(list(ours.columns), list(cli.columns))
        self.assertEqual(len(ours), 2)  # one cell per variant
        for column in ["cell", "status", "tried (train.lr=metric)", "bracketed", "reason"]:
            self.assertEqual(ours[column].tolist(), cli[column].tolist(), column)
        self.assertEqual(ours["best"].tolist(), cli["best"].tolist())  # the CLI's CSV prints every digit
        values = self.client.tuning(2, per="value")
        self.assertEqual(list(values.columns), ["cell", "rung", "grid_index", "value", "metric", "state"])
        self.assertEqual(set(values["state"]), {"finished"})
        for cell, tried in values.groupby("cell"):
            best = ours.set_index("cell").loc[cell, "best"]
            self.assertEqual(tried.loc[tried["metric"].idxmin(), "value"], best, cell)
        with self.assertRaises(grpc.RpcError) as raised:
            self.client.tuning(1)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def test_precision_is_the_clis_aim(self):
        ours = self.client.precision(4)
        cli = self.cli_csv("precision", "4")
        self.assertEqual(list(ours.columns), list(cli.columns))
        self.assertEqual(ours[["variant", "rung", "seeds", "met"]].values.tolist(),
                         cli[["variant", "rung", "seeds", "met"]].values.tolist())
        self.assertEqual(len(ours), 2)  # lerope at each rung
        self.assertEqual(ours.attrs["precision"], "budget")
        self.assertIn("budget_flops", ours.attrs["closed_reason"])
        self.assertLessEqual(ours.attrs["planned_flops"], ours.attrs["budget_flops"])
        with self.assertRaises(grpc.RpcError) as raised:
            self.client.precision(1)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)

    def diagnosed_trial(self):
        return int(self.client.trials(3)["trial"].iloc[0])

    def test_laws_of_a_sweep_that_cannot_give_them_say_why(self):
        # Sweep 1's 3 rungs ran one token count each: too few points for L(N, D), as `rung laws 1` says.
        with self.assertRaises(grpc.RpcError) as refused:
            self.client.laws(1, bootstrap=0)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("distinct (N, D) point(s)", refused.exception.details())
        cli = subprocess.run([os.path.join(BIN, "rung"), "laws", "1", "--bootstrap", "0"], capture_output=True,
                             text=True, env=self.env)
        self.assertEqual(cli.returncode, 2)
        self.assertIn(refused.exception.details().split(": ", 1)[-1], cli.stderr)

    def test_diagnostics_are_the_clis_tables(self):
        trial = self.diagnosed_trial()
        for table in ("heads", "gaps", "regime", "beta", "milestones", "lengths", "extrapolation", "bands", "influence",
                      "niah", "frequencies", "failure_modes"):
            ours = self.client.diagnostics(trial, table=table)
            cli = self.cli_csv("diag", str(trial), "--table", table)
            if table == "failure_modes":  # the CLI adds the Gaussian reference's rows
                cli = cli[cli["source"].str.startswith(f"trial {trial}")].reset_index(drop=True)
            self.assertEqual([c for c in ours.columns if not c.endswith(("_half_iqr", "_standard_error"))],
                             list(cli.columns), table)
            self.assertEqual(len(ours), len(cli), table)
            self.assertGreater(len(ours), 0, table)
            for column in cli.columns:
                for mine, printed in zip(ours[column], cli[column]):
                    if isinstance(printed, str) and "±" in printed:  # "xi ± half-IQR"
                        printed = float(printed.split("±")[0])
                    elif isinstance(printed, str) and printed.endswith("%"):
                        printed = float(printed[:-1]) / 100
                    elif printed == "-":
                        printed = None
                    elif isinstance(printed, str) and re.fullmatch(r"-?[0-9.e+-]+", printed):
                        printed = float(printed)  # a number in a column that also holds text ("pooled", "-")
                    none = lambda value: value is None or (isinstance(value, float) and math.isnan(value))  # noqa: E731
                    if none(mine) or none(printed):
                        self.assertTrue(none(mine) and none(printed), f"{table}.{column}: {mine!r} vs {printed!r}")
                    elif isinstance(mine, numbers.Real) and isinstance(printed, numbers.Real):  # the CLI prints 3-5 digits
                        self.assertAlmostEqual(mine, printed, delta=5e-3 * max(1.0, abs(printed)), msg=f"{table}.{column}")
                    else:
                        self.assertEqual(str(mine), str(printed), f"{table}.{column}")
        milestones = self.client.diagnostics(trial, table="milestones")
        self.assertEqual(milestones["step"].tolist(), [3, 6])
        self.assertEqual(milestones["milestone"].tolist(), ["frac 0.5", "end"])
        first = self.client.diagnostics(trial, table="gaps", step=3)
        self.assertEqual(first["layer"].tolist(), [0, "pooled"])
        with self.assertRaisesRegex(ValueError, "milestones are at steps 3 6"):
            self.client.diagnostics(trial, step=4)
        with self.assertRaisesRegex(ValueError, "table must be one of"):
            self.client.diagnostics(trial, table="weather")
        with self.assertRaisesRegex(ValueError, "no attention diagnostics"):
            self.client.diagnostics(1)  # the stand-in measures none

    def test_a_wrong_token_is_refused_with_the_coordinators_status(self):
        bad = os.path.join(self.scratch, "bad.token")
        with open(bad, "w", encoding="utf-8") as handle:
            handle.write("not-the-token\n")
        with rung.connect(self.env["RUNG_COORDINATOR"], bad) as client:
            with self.assertRaises(grpc.RpcError) as raised:
                client.trials(1)
        self.assertIn(raised.exception.code(), (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED))

    def test_an_unknown_sweep_is_not_found(self):
        with self.assertRaises(grpc.RpcError) as raised:
            self.client.results(99)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main(verbosity=2)
