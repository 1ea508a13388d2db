"""rung's coordinator from Python: a sweep's results, trials, curves, fits, tuning and a trial's
diagnostics as pandas DataFrames.

    import rung
    client = rung.connect("127.0.0.1:50551", "rung-runs/quickstart/user.token")
    client.sweeps()                                                   # as `rung sweeps --format csv`
    client.results(1, group_by=["rung_label", "position.variant"])   # as `rung results --format csv`
    client.trials(1)                                                  # as `rung trials --format csv`
    client.curves(1, "val_loss", x="flops")                           # one row per point
    client.fit(1)                                                     # as `rung fit SWEEP --format csv`
    client.tuning(1)                                                  # as `rung tune SWEEP --format csv`
    client.diagnostics(7, table="gaps")                               # as `rung diag 7 --table gaps --format csv`

`connect()` without arguments reads $RUNG_COORDINATOR and $RUNG_TOKEN_FILE, as the `rung` CLI does
(`rung serve DIR` prints both for a finished `rung run`). Errors are grpc.RpcError with the
coordinator's message.
"""
import json
import math
import os

import grpc
import pandas as pd

from rung._proto import rung_pb2 as pb
from rung._proto import rung_pb2_grpc

__all__ = ["connect", "Client", "PROTOCOL_VERSION"]

# The protocol version this client speaks (proto/protocol_version.h, copied by the build); the
# coordinator refuses another with FAILED_PRECONDITION naming both.
from rung._proto.version import PROTOCOL_VERSION

_SUMMARIES = {"final": pb.METRIC_SUMMARY_FINAL, "best": pb.METRIC_SUMMARY_BEST, "last": pb.METRIC_SUMMARY_LAST}
_AGGREGATIONS = {"mean": pb.AGGREGATION_MEAN, "std": pb.AGGREGATION_STD, "min": pb.AGGREGATION_MIN,
                 "max": pb.AGGREGATION_MAX, "median": pb.AGGREGATION_MEDIAN, "count": pb.AGGREGATION_COUNT}
_AXES = {"step": pb.CURVE_AXIS_STEP, "tokens": pb.CURVE_AXIS_TOKENS, "flops": pb.CURVE_AXIS_FLOPS,
         "wall_time": pb.CURVE_AXIS_WALL_TIME}


def _value(value):
    """A ConfigValue as the Python value it stands for (None, bool, int, float, str, list, dict)."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null":
        return None
    if kind == "list":
        return [_value(element) for element in value.list.values]
    if kind == "object":
        return _entries(value.object.entries)
    return getattr(value, kind)


def _entries(entries):
    """Repeated ConfigEntry as a dict."""
    return {entry.key: _value(entry.value) for entry in entries}


def _to_value(value):
    """A Python value as a ConfigValue."""
    out = pb.ConfigValue()
    if value is None:
        out.null = True
    elif isinstance(value, bool):
        out.boolean = value
    elif isinstance(value, int) and -2**63 <= value < 2**63:
        out.integer = value
    elif isinstance(value, int):
        out.number = float(value)  # beyond int64: a number, as the C++ codec makes it
    elif isinstance(value, float):
        out.number = value
    elif isinstance(value, str):
        out.text = value
    elif isinstance(value, (list, tuple)):
        out.list.values.extend(_to_value(element) for element in value)
    elif isinstance(value, dict):
        for key, element in value.items():
            out.object.entries.add(key=str(key), value=_to_value(element))
    else:
        raise TypeError(f"a filter value must be None, bool, int, float, str, list or dict, not {type(value).__name__}")
    return out


def _text(value):
    """A config value as the CLI prints it in a cell: strings bare, everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _read_token(path):
    with open(path, encoding="utf-8") as handle:
        token = handle.read().strip()
    if not token:
        raise ValueError(f"token file {path} is empty")
    return token


def connect(address=None, token_file=None, tls_ca=None, timeout=30.0):
    """A client of the coordinator at `address` (host:port) with the token in `token_file`.

    Defaults: $RUNG_COORDINATOR (else 127.0.0.1:50551) and $RUNG_TOKEN_FILE. `tls_ca`: a PEM file of
    root certificates for a coordinator that serves TLS. `timeout`: seconds per call.
    """
    address = address or os.environ.get("RUNG_COORDINATOR", "127.0.0.1:50551")
    token_file = token_file or os.environ.get("RUNG_TOKEN_FILE")
    if not token_file:
        raise ValueError("no token file: pass token_file or set RUNG_TOKEN_FILE (rung serve DIR prints it)")
    token = _read_token(token_file)
    if tls_ca:
        with open(tls_ca, "rb") as handle:
            channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=handle.read()))
    else:
        channel = grpc.insecure_channel(address)
    return Client(channel, token, timeout)


def _number(value):
    """NaN (the coordinator's 'undefined') as None, like the CLI's blank CSV cell."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


class Client:
    """One coordinator connection; every method is one call (or one stream) and returns a DataFrame."""

    def __init__(self, channel, token, timeout=30.0):
        self._channel = channel
        self._stub = rung_pb2_grpc.UserServiceStub(channel)
        self._metadata = (("authorization", "Bearer " + token), ("rung-protocol-version", str(PROTOCOL_VERSION)))
        self._timeout = timeout

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout=None):
        return method(request, metadata=self._metadata, timeout=timeout or self._timeout)

    def sweeps(self):
        """`rung sweeps --format csv`, newest first, every page: sweep, name, state, trials, succeeded,
        running (leased too), pending, failed, flops_6ND."""
        rows = []
        request = pb.ListSweepsRequest()
        while True:
            page = self._call(self._stub.ListSweeps, request)
            for sweep in page.sweeps:
                counts = sweep.counts
                rows.append({"sweep": sweep.sweep_id, "name": sweep.name,
                             "state": pb.SweepState.Name(sweep.state).replace("SWEEP_STATE_", ""),
                             "trials": counts.total, "succeeded": counts.succeeded,
                             "running": counts.running + counts.leased, "pending": counts.pending,
                             "failed": counts.failed, "flops_6ND": sweep.total_flops})
            if not page.next_page_token:
                break
            request.page_token = page.next_page_token
        return pd.DataFrame(rows, columns=["sweep", "name", "state", "trials", "succeeded", "running", "pending",
                                           "failed", "flops_6ND"])

    def results(self, sweep, group_by=(), summary="final", metric="", aggregations=("mean", "std", "min", "count"),
                where=None, against=None, pair_on=(), level=0.95):
        """`rung results SWEEP --format csv`: one row per group (per trial without group_by), the group
        keys, the aggregations of the metric over the group's trials, trials, paired_diff, paired_sd,
        pairs, paired_low, paired_high (the Student t interval at `level`); plus flops, tokens and
        trial_ids. `where`: {key: value} filters; `against`: {key: value} selecting the reference trials
        in place of the spec's baseline; `pair_on`: the keys a trial shares with its reference (--pair-on)."""
        request = pb.QueryResultsRequest(sweep_id=sweep, group_by=list(group_by), metric=metric,
                                         summary=_SUMMARIES[summary],
                                         aggregations=[_AGGREGATIONS[name] for name in aggregations],
                                         pair_on=[pair_on] if isinstance(pair_on, str) else list(pair_on),
                                         level=level)
        for key, value in (where or {}).items():
            request.filters.add(key=key, value=_to_value(value))
        for key, value in (against or {}).items():
            request.against.add(key=key, value=_to_value(value))
        response = self._call(self._stub.QueryResults, request)
        rows = []
        for row in response.rows:
            out = {}
            for key, value in zip(response.group_by, row.group_values):
                out[key] = _value(value)
            for name, value in zip(aggregations, row.values):
                out[name] = int(value) if name == "count" else _number(value)
            out["trials"] = row.trials
            out["paired_diff"] = row.paired_difference_mean if row.HasField("paired_difference_mean") else None
            # The sd of one pair is undefined (the coordinator sends 0 for it), as in the CLI.
            out["paired_sd"] = (row.paired_difference_sd
                                if row.HasField("paired_difference_sd") and row.pairs >= 2 else None)
            out["pairs"] = row.pairs
            out["paired_low"] = row.paired_low if row.HasField("paired_low") else None
            out["paired_high"] = row.paired_high if row.HasField("paired_high") else None
            out["flops"] = row.flops
            out["tokens"] = row.tokens
            out["trial_ids"] = list(row.trial_ids)
            rows.append(out)
        columns = list(response.group_by) + list(aggregations) + ["trials", "paired_diff", "paired_sd", "pairs",
                                                                  "paired_low", "paired_high", "flops", "tokens",
                                                                  "trial_ids"]
        return pd.DataFrame(rows, columns=columns)

    def trials(self, sweep):
        """`rung trials SWEEP --format csv`: trial, index, rung, cell, state, attempt, step, metric, worker,
        reason (every page)."""
        rows = []
        token = ""
        while True:
            page = self._call(self._stub.ListTrials, pb.ListTrialsRequest(sweep_id=sweep, page_token=token))
            for trial in page.trials:
                cell = _entries(trial.assignments)
                metric = (trial.final_metric if trial.HasField("final_metric")
                          else trial.latest_metric if trial.HasField("latest_metric") else None)
                rows.append({
                    "trial": trial.trial_id,
                    "index": trial.index,
                    "rung": trial.rung_label,
                    "cell": " ".join(f"{key}={_text(value)}" for key, value in cell.items()),
                    "state": pb.TrialState.Name(trial.state).replace("TRIAL_STATE_", ""),
                    "attempt": trial.attempt,
                    "step": f"{trial.latest_step}/{trial.total_steps}",
                    "metric": metric,
                    "worker": trial.worker_id,
                    "reason": trial.state_reason,
                })
            token = page.next_page_token
            if not token:
                break
        return pd.DataFrame(rows, columns=["trial", "index", "rung", "cell", "state", "attempt", "step", "metric",
                                           "worker", "reason"])

    def curves(self, sweep, metric="", x="step", points=1000, trials=()):
        """Each trial's curve of `metric` (default: the sweep's), downsampled by the coordinator to at
        most `points` points: one row per point, trial, metric, step, x (the chosen axis: step, tokens,
        flops or wall_time), value."""
        request = pb.GetCurvesRequest(sweep_id=sweep, names=[metric] if metric else [], trial_ids=list(trials),
                                      x_axis=_AXES[x], max_points=points)
        rows = []
        for curve in self._call(self._stub.GetCurves, request, timeout=max(self._timeout, 300.0)):
            for step, position, value in zip(curve.steps, curve.x, curve.values):
                rows.append({"trial": curve.trial_id, "metric": curve.name, "step": step, "x": position,
                             "value": _number(value)})
        return pd.DataFrame(rows, columns=["trial", "metric", "step", "x", "value"])

    def fit(self, sweep, metric="", baseline="", variant_keys=(), bootstrap=None, seed=0):
        """`rung fit SWEEP --format csv`: the compute multipliers of the sweep's ladder, one row per
        variant, label and estimator. Stored on the coordinator as `rung fit` stores it (not for the
        viewer token). Intervals: jackknife gap t over the seeds with 2+ seeds (interval_construction "jackknife gap t",
        interval_units the seeds, p_holm the Holm-adjusted p of CM = 1); bootstrap: one-seed ladders'
        replicates of the runs bootstrap (None: the coordinator's default, 1000; 0: none)."""
        replicates = 0 if bootstrap is None else (-1 if bootstrap == 0 else bootstrap)
        request = pb.FitRequest(sweep_id=sweep, metric=metric, baseline=baseline, variant_keys=list(variant_keys),
                                bootstrap=replicates, seed=seed)
        response = self._call(self._stub.Fit, request, timeout=max(self._timeout, 600.0))
        rows = []
        for row in response.stored.report:
            if row.role != "estimate":
                continue
            optional = lambda name: getattr(row, name) if row.HasField(name) else None  # noqa: E731
            interval = row.interval if row.HasField("interval") else None
            rows.append({
                "variant": row.variant, "label": row.label, "estimator": row.estimator, "compute": row.compute,
                "loss": row.loss, "loss_sd": optional("loss_sd"), "seeds": row.seeds,
                "multiplier": optional("multiplier"), "undefined_reason": row.undefined_reason,
                "baseline_compute": optional("baseline_compute"),
                "interval_low": interval.low if interval else None,
                "interval_high": interval.high if interval else None,
                "interval_construction": interval.construction if interval else None,
                "interval_units": interval.units if interval else None,
                "p_holm": optional("p_holm"),
                "wallclock_multiplier": optional("wallclock_multiplier"), "note": row.how,
            })
        return pd.DataFrame(rows, columns=["variant", "label", "estimator", "compute", "loss", "loss_sd", "seeds",
                                           "multiplier", "undefined_reason", "baseline_compute", "interval_low",
                                           "interval_high", "interval_construction", "interval_units", "p_holm",
                                           "wallclock_multiplier", "note"])

    def tuning(self, sweep, per="cell"):
        """`rung tune SWEEP --format csv`: a tuned sweep's learning-rate search, one row per tuning cell:
        cell, status, tried (each value tried, "value=metric" or its state), best, bracketed (yes/no),
        next_centre, reason; best and next_centre in full, as the CLI's CSV prints them (None where it
        leaves the cell blank). per="value": one row per value tried instead: cell, rung, grid_index,
        value, metric (None until every member finished), state ("finished", "unfinished", "diverged",
        "stopped_by_asha"). FAILED_PRECONDITION for a sweep without a tune block."""
        if per not in ("cell", "value"):
            raise ValueError(f"per must be 'cell' or 'value', not {per!r}")
        response = self._call(self._stub.GetTuning, pb.GetTuningRequest(sweep_id=sweep))
        rows = []
        for cell in response.cells:
            # As the CLI names a cell: its rung, then the values of its other keys.
            parts = [cell.rung_label] if cell.rung_label else []
            name = " ".join(parts + [_text(_value(entry.value)) for entry in cell.cell if entry.key != "rung"])
            if per == "value":
                for tried in cell.tried:
                    rows.append({"cell": name, "rung": cell.rung_label, "grid_index": tried.grid_index,
                                 "value": tried.value, "metric": tried.metric if tried.HasField("metric") else None,
                                 "state": tried.state})
                continue
            tried = " ".join(f"{tried.value:.3g}=" + (f"{tried.metric:.4g}" if tried.HasField("metric") else tried.state)
                             for tried in cell.tried)
            rows.append({
                "cell": name,
                "status": cell.status,
                f"tried ({response.key}=metric)": tried or "-",
                "best": cell.best if cell.HasField("best") else None,
                "bracketed": "yes" if cell.bracketed else "no",
                "next_centre": cell.next_center if cell.HasField("next_center") else None,
                "reason": cell.reason,
            })
        if per == "value":
            return pd.DataFrame(rows, columns=["cell", "rung", "grid_index", "value", "metric", "state"])
        return pd.DataFrame(rows, columns=["cell", "status", f"tried ({response.key}=metric)", "best", "bracketed",
                                           "next_centre", "reason"])

    def precision(self, sweep):
        """`rung precision SWEEP --format csv`: a precision-aimed sweep's target intervals, one row per
        variant and rung: variant, rung, multiplier, low, high, half_width, target, projected (the half
        width expected once the running trials end), seeds, met (yes/no), note (None where the CLI
        leaves a cell blank). The aim's state, budget and the seeds planned next are in the frame's
        `attrs` ("precision", "status", "why", "planned_flops", "budget_flops", "next": a list of
        dicts). FAILED_PRECONDITION for a sweep without a precision block."""
        response = self._call(self._stub.GetPrecision, pb.GetPrecisionRequest(sweep_id=sweep))
        def optional(row, field):
            return getattr(row, field) if row.HasField(field) else None
        rows = [{"variant": row.variant, "rung": row.rung_label, "multiplier": optional(row, "multiplier"),
                 "low": optional(row, "low"), "high": optional(row, "high"),
                 "half_width": optional(row, "half_width"), "target": response.target_half_width,
                 "projected": optional(row, "projected"), "seeds": row.seeds, "met": "yes" if row.met else "no",
                 "note": row.note or None} for row in response.rows]
        frame = pd.DataFrame(rows, columns=["variant", "rung", "multiplier", "low", "high", "half_width", "target",
                                            "projected", "seeds", "met", "note"])
        frame.attrs.update({"precision": response.precision, "status": response.status, "why": response.why,
                            "planned_flops": response.planned_flops, "budget_flops": response.budget_flops,
                            "closed_reason": response.closed_reason,
                            "next": [{"variant": add.variant, "rung": add.rung_label, "seed": add.seed,
                                      "flops": add.flops, "why": add.why} for add in response.next]})
        return frame

    def laws(self, sweep, baseline="", sharing="none", bootstrap=200, seed=0, rollout=1, level=0.95):
        """`rung laws SWEEP`: scaling laws per variant, L(N, D) = E + A / N^alpha + B / D^beta (Chinchilla's
        approach 3), one row per variant: variant, E, A, B, alpha, beta (each with <name>_low and
        <name>_high, None without an interval), rmse, points, n_exponent, d_exponent (the compute-optimal
        allocation). The rest of the report is in the frame's `attrs`: "unit", "intervals" (what the
        parameter intervals rest on), "multipliers" (a DataFrame: variant, allocation, compute, n, d,
        multiplier, low, high, extrapolated, why), "rollout" (a DataFrame of the held-out runs: variant,
        origin, n, d, loss, predicted, low, high, inside), "isoflop" (a DataFrame: variant, compute,
        n_opt, d_opt, loss_opt, why) and "notes". FAILED_PRECONDITION where the sweep's runs cannot give
        laws (too few, or on one allocation rule), saying why."""
        request = pb.GetLawsRequest(sweep_id=sweep, baseline=baseline, sharing=sharing,
                                    bootstrap=bootstrap if bootstrap > 0 else -1, seed=seed, rollout=rollout,
                                    level=level)
        report = self._call(self._stub.GetLaws, request).report
        def ends(message, field):
            return (getattr(message, field).low, getattr(message, field).high) if message.HasField(field) else (None, None)
        def optional(message, field):
            return getattr(message, field) if message.HasField(field) else None
        rows = []
        for law in report.variants:
            row = {"variant": law.variant}
            for name, field in (("E", "E"), ("A", "A"), ("B", "B"), ("alpha", "alpha"), ("beta", "beta")):
                row[name] = getattr(law, field)
                row[name + "_low"], row[name + "_high"] = ends(law, field + "_interval")
            row.update({"rmse": law.rmse, "points": law.points, "n_exponent": optional(law, "n_exponent"),
                        "d_exponent": optional(law, "d_exponent")})
            rows.append(row)
        frame = pd.DataFrame(rows)
        multipliers = pd.DataFrame(
            [{"variant": m.variant, "allocation": m.allocation, "compute": m.compute, "n": m.n, "d": m.d,
              "multiplier": optional(m, "multiplier"), "low": ends(m, "interval")[0], "high": ends(m, "interval")[1],
              "extrapolated": m.extrapolated, "why": m.why or None} for m in report.multipliers],
            columns=["variant", "allocation", "compute", "n", "d", "multiplier", "low", "high", "extrapolated", "why"])
        rollout = pd.DataFrame(
            [{"variant": p.variant, "origin": p.origin, "n": p.n, "d": p.d, "loss": p.loss, "predicted": p.predicted,
              "low": ends(p, "interval")[0], "high": ends(p, "interval")[1], "inside": p.inside}
             for p in report.rollout.points],
            columns=["variant", "origin", "n", "d", "loss", "predicted", "low", "high", "inside"])
        isoflop = pd.DataFrame(
            [{"variant": v.variant, "compute": b.compute, "n_opt": optional(b, "n_opt"), "d_opt": optional(b, "d_opt"),
              "loss_opt": optional(b, "loss_opt"), "why": b.why or None}
             for v in report.isoflop.variants for b in v.budgets],
            columns=["variant", "compute", "n_opt", "d_opt", "loss_opt", "why"])
        basis = report.parameter_basis
        frame.attrs.update({"unit": report.unit,
                            "intervals": basis.construction and f"{basis.construction} over {basis.unit}" or basis.why,
                            "multipliers": multipliers, "rollout": rollout, "isoflop": isoflop,
                            "notes": list(report.notes)})
        return frame

    _DIAGNOSTICS_TABLES = ("heads", "gaps", "regime", "beta", "milestones", "failure_modes", "lengths", "extrapolation",
                           "bands", "influence", "niah", "frequencies")

    def diagnostics(self, trial, table="heads", step=None):
        """`rung diag TRIAL --table TABLE --format csv`: one of a trial's diagnostics tables, with the CLI's
        columns, numbers in full (NaN, "-" in the CLI, as None). Where the CLI prints "xi ± spread" in
        one cell, the DataFrame has the value in that column and the spread in the next one:
        "<column>_half_iqr" for a bootstrap half-IQR (xi_lambda, xi_alpha, xi_delta),
        "<column>_standard_error" for xi_beta's OLS standard error; ties_on_grid is a share (the CLI prints a percentage). step: the attention
        milestone (default the latest), as --step. failure_modes holds the trial's rows only (the CLI adds
        the Gaussian reference, `rung diag --synthetic failure_modes`). NOT_FOUND for an unknown trial;
        ValueError for a trial without attention diagnostics or an unknown table."""
        if table not in self._DIAGNOSTICS_TABLES:
            raise ValueError(f"table must be one of {', '.join(self._DIAGNOSTICS_TABLES)}, not {table!r}")
        response = self._call(self._stub.GetDiagnostics, pb.GetDiagnosticsRequest(trial_id=trial))
        # (A record with a multiple is beyond the training length, as an earlier coordinator sent it.)
        milestones = sorted(((d.step, d.attention) for d in response.diagnostics
                             if d.HasField("attention") and not d.attention.HasField("multiple")),
                            key=lambda pair: pair[0])
        chosen = [attention for at, attention in milestones if step is None or at == step]
        if not chosen:
            if step is not None and milestones:
                raise ValueError(f"trial {trial} has no diagnostics at step {step}; its milestones are at steps "
                                 + " ".join(str(at) for at, _ in milestones))
            raise ValueError(f"trial {trial} has no attention diagnostics yet (they are written when a trial succeeds)")
        attention = chosen[-1]
        rows = []

        def interval(row, name, value, half_iqr):
            row[name] = value
            row[name + "_half_iqr"] = half_iqr

        def with_error(row, name, value, standard_error):
            row[name] = value
            row[name + "_standard_error"] = standard_error

        def optional(message, name):
            return _number(getattr(message, name)) if message.HasField(name) else None

        if table == "heads":
            length = attention.length
            eighth, half = max(1, length // 8), max(1, length // 2)
            e = f"E{attention.renyi_order:.3g}@"
            columns = ["layer", "head", f"{e}{eighth}", f"{e}{half}", f"{e}{length}", "pair_usage_cv", "effective_base",
                       "dominant_pair", "dominant_wavelength/T"]
            for layer in attention.layers:
                for head in layer.heads:
                    lengths = head.effective_length_by_position
                    at = lambda p: _number(lengths[p - 1]) if 1 <= p <= len(lengths) else None  # noqa: E731
                    rows.append(dict(zip(columns, [layer.layer, head.head, at(eighth), at(half), at(length),
                                                   _number(head.pair_usage_cv), optional(head, "effective_base"),
                                                   optional(head, "dominant_pair"),
                                                   optional(head, "dominant_wavelength_over_training_length")])))
        elif table == "gaps":
            columns = ["layer", "n", "rows", "ties", "lambda", "alpha", "delta", "xi_lambda", "xi_lambda_half_iqr",
                       "xi_alpha", "xi_alpha_half_iqr", "xi_delta", "xi_delta_half_iqr", "ties_on_grid"]
            fits = [(layer.layer, layer.gap_counting) for layer in attention.layers] + [("pooled", attention.pooled)]
            for label, gap in fits:
                at = gap.at_training_length if gap.HasField("at_training_length") else None
                row = {"layer": label, "n": at.n if at else None, "rows": at.rows if at else None,
                       "ties": at.ties if at else None, "lambda": _number(at.lambda_mean) if at else None,
                       "alpha": _number(at.alpha_mean) if at else None, "delta": _number(at.delta_mean) if at else None}
                for name in ("xi_lambda", "xi_alpha", "xi_delta"):
                    interval(row, name, optional(gap, name), optional(gap, name + "_half_iqr"))
                row["ties_on_grid"] = optional(gap, "tie_share")
                rows.append(row)
        elif table == "regime":
            columns = ["layer", "beta/lambda", "entropy/ln_n", "max_weight", "top_two_gap"]
            for layer in attention.layers:
                for regime in layer.gap_counting.softmax_regime:
                    rows.append(dict(zip(columns, [layer.layer, _number(regime.beta_over_lambda),
                                                   _number(regime.normalised_entropy),
                                                   _number(regime.max_weight), _number(regime.top_two_gap)])))
        elif table == "beta":
            columns = ["reading", "points", "xi", "xi_half_iqr", "xi_standard_error", "skipped"]
            pooled = attention.pooled
            rows.append({"reading": "xi_lambda (pooled rows)", "points": optional(pooled, "rows"),
                         "xi": optional(pooled, "xi_lambda"),
                         "xi_half_iqr": optional(pooled, "xi_lambda_half_iqr"), "xi_standard_error": None,
                         "skipped": None})
            if attention.HasField("inverse_temperature"):
                trim = attention.inverse_temperature.xi_beta_trim
                for label, fit in (("xi_beta (grid)", attention.inverse_temperature.xi_beta_grid),
                                   (f"xi_beta (n >= {trim.trim if trim.HasField('trim') else '-'})", trim)):
                    rows.append({"reading": label, "points": fit.points, "xi": _number(fit.xi),
                                 "xi_half_iqr": None, "xi_standard_error": _number(fit.standard_error),
                                 "skipped": fit.skipped})
        elif table == "milestones":
            columns = ["step", "milestone", "xi_lambda", "xi_lambda_half_iqr", "xi_alpha", "xi_alpha_half_iqr", "xi_delta",
                       "xi_delta_half_iqr", "ties", "xi_beta_grid", "xi_beta_grid_standard_error", "xi_beta_trim",
                       "xi_beta_trim_standard_error"]
            for at, milestone in milestones:
                pooled = milestone.pooled
                row = {"step": at, "milestone": milestone.milestone or None}
                for name in ("xi_lambda", "xi_alpha", "xi_delta"):
                    interval(row, name, optional(pooled, name), optional(pooled, name + "_half_iqr"))
                row["ties"] = optional(pooled, "tie_share")
                temperature = milestone.inverse_temperature if milestone.HasField("inverse_temperature") else None
                for name in ("xi_beta_grid", "xi_beta_trim"):
                    fit = getattr(temperature, name) if temperature else None
                    with_error(row, name, _number(fit.xi) if fit else None,
                               _number(fit.standard_error) if fit else None)
                rows.append(row)
        elif table == "lengths":
            columns = ["length", "multiple", "method", "grid", "rows", "xi_lambda", "xi_lambda_half_iqr", "xi_alpha",
                       "xi_alpha_half_iqr", "xi_delta", "xi_delta_half_iqr", "ties"]
            # The end's record at T (whatever step was asked), then each length beyond it.
            beyond = [d.attention_beyond for d in response.diagnostics if d.HasField("attention_beyond")]
            for measured in [milestones[-1][1]] + sorted(beyond, key=lambda a: a.multiple):
                pooled = measured.pooled
                row = {"length": measured.length, "multiple": measured.multiple if measured.HasField("multiple") else 1,
                       "method": measured.method if measured.HasField("method") else "none",
                       "grid": ",".join(str(n) for n in measured.grid) + (" (fallback)" if measured.grid_fallback else ""),
                       "rows": optional(pooled, "rows")}
                for name in ("xi_lambda", "xi_alpha", "xi_delta"):
                    interval(row, name, optional(pooled, name), optional(pooled, name + "_half_iqr"))
                row["ties"] = optional(pooled, "tie_share")
                rows.append(row)
        elif table == "failure_modes":
            columns = ["source", "M", "base", "precision", "pos_inversion", "|inv-1/2|", "pos_aliasing", "alias_pairs",
                       "token_inversion", "token_aliasing", "invariance"]
            statistics = ["position_inversion", "position_inversion_deviation", "position_aliasing_fraction",
                          "position_aliasing_pairs", "token_inversion", "token_aliasing", "attention_invariance"]
            sums, heads, earlier = {}, 0, False
            for layer in attention.layers:
                for head in layer.heads:
                    if not head.failure_modes:
                        continue
                    heads += 1
                    for entry in head.failure_modes:
                        cell = sums.setdefault((entry.length, entry.precision), {})
                        # Records before paper 003's appendix D.1 measurement: no procedure, no invariance.
                        earlier = earlier or not entry.procedure
                        for name in statistics:
                            if name == "attention_invariance" and not entry.procedure:
                                continue
                            value = _number(getattr(entry, name))
                            if value is not None:
                                total, count = cell.get(name, (0.0, 0))
                                cell[name] = (total + value, count + 1)
            base = self._trial_config(trial).get("position", {}).get("base", 10000.0)
            for (length, precision), cell in sorted(sums.items()):
                means = [cell[name][0] / cell[name][1] if name in cell else None for name in statistics]
                source = f"trial {trial}" + (" (earlier procedure)" if earlier else "")
                rows.append(dict(zip(columns, [source, length, base, precision, *means])))
        elif table == "extrapolation":
            columns = ["multiple", "length", "method", "val_loss", "in_dist", "extrap", "back_half", "val_accuracy"]
            for document in response.diagnostics:
                if document.HasField("extrapolation"):
                    rows = [dict(zip(columns, [entry.multiple, entry.length, entry.method, _number(entry.val_loss),
                                               optional(entry, "val_loss_in_dist"), optional(entry, "val_loss_extrap"),
                                               optional(entry, "val_loss_back_half"),
                                               optional(entry, "val_accuracy")]))
                            for entry in document.extrapolation.results]
        elif table == "bands":
            columns = ["pair", "rope_theta", "reverted_loss", "reverted_delta", "zeroed_loss", "zeroed_delta"]
            for document in response.diagnostics:
                if document.HasField("band_ablation"):
                    rows = [dict(zip(columns, [pair.pair, _number(pair.rope_theta), _number(pair.loss), _number(pair.delta),
                                               optional(pair, "zeroed_loss"), optional(pair, "zeroed_delta")]))
                            for pair in document.band_ablation.pairs]
        elif table == "influence":
            columns = ["layer", "head", "delta_all", "delta_frequency", "delta_scale"]
            for document in response.diagnostics:
                if document.HasField("head_influence"):
                    rows = [dict(zip(columns, [head.layer, head.head, optional(head, "all"), optional(head, "frequency"),
                                               optional(head, "scale")]))
                            for head in document.head_influence.heads]
        elif table == "niah":
            grids = [d.niah_grid for d in response.diagnostics if d.HasField("niah_grid")]
            grid = grids[-1] if grids else None  # the newest, as the CLI
            columns = ["multiple", "method", "depth"] + [f"d{count}" for count in (grid.distractors if grid else [])]
            for entry in grid.grids if grid else []:
                for depth, accuracy in zip(grid.depths, entry.accuracy):
                    values = [_number(value) for value in accuracy.values]
                    values += [None] * (len(grid.distractors) - len(values))
                    rows.append(dict(zip(columns, [entry.multiple, entry.method, depth, *values])))
        else:  # frequencies
            columns = ["layer", "row", "pair", "theta", "rope_theta", "theta/rope", "wavelength/T"]
            config = self._trial_config(trial)
            base = config.get("position", {}).get("base", 10000.0)
            length = config.get("data", {}).get("seq_len", 0) or 1.0
            tensors = {}  # by name, the newest (as the CLI)
            for document in response.diagnostics:
                if document.HasField("tensor") and document.name.startswith("frequencies.layer_"):
                    tensors[document.name] = document.tensor
            for name, tensor in sorted(tensors.items(), key=lambda item: item[0]):
                suffix = name[len("frequencies.layer_"):]
                if not suffix.isdigit() or len(tensor.shape) != 2 or tensor.shape[0] * tensor.shape[1] > len(tensor.values):
                    continue
                if tensor.shape[0] <= 0 or tensor.shape[1] <= 0:
                    continue
                layer = int(suffix)
                groups, pairs = tensor.shape
                for g in range(groups):
                    for f in range(pairs):
                        theta = tensor.values[g * pairs + f]
                        rope = base ** (-f / pairs)
                        wavelength = 2 * math.pi / theta / length if theta > 0 else None
                        rows.append(dict(zip(columns, [layer, g, f, _number(theta), rope, _number(theta / rope),
                                                       wavelength])))
        return pd.DataFrame(rows, columns=columns)

    def _trial_config(self, trial):
        """The trial's resolved config as a dict."""
        full = self._call(self._stub.GetTrial, pb.GetTrialRequest(trial_id=trial))
        return _entries(full.config.entries)
