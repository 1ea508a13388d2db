// A sweep's scaling laws (/api/sweeps/ID/laws, GetLaws; what `rung laws SWEEP` prints): per variant
// L(N, D) = E + A / N^alpha + B / D^beta with its intervals, RMSE, runs and the compute-optimal
// exponents, as a table; the compute multipliers the laws predict against the baseline, a chart per
// allocation (rule: D = r N; optimal: each variant at its own optimum) against compute on a log axis,
// a line and an interval band per variant, dashed where the compute lies beyond the variant's largest
// run (extrapolated); the rollout (the largest size held out, refitted without it: each held-out run
// measured against its prediction and interval, inside or not; the mean error); the IsoFLOP profiles
// (per budget the parabola of loss against ln N and its minimum N*, a chart per variant and a table);
// the fitted runs, folded; the report's notes. A fit refits and bootstraps on every call, so the panel
// is read when it is first opened and when asked again (the refit button), never on a live tick.
// Runs that cannot give laws (each size ran one token count, too few runs) are a 409: the panel says
// why in one line. Charts are charts.ts's (uPlot on screen, the same spec as SVG/PNG downloads; the
// spec stays on the element as element.rungChart for the browser tests).
import { getJson, num } from './api';
import { ChartSpec, dataRange, drawChart, padRange, PALETTE, Series } from './charts';
import { el, fmt, hashParams, setHashParam } from './format';
import type { GetLawsResponse, IsoflopProfiles, LawFittedRun, LawIntervalBasis, LawRange, LawReport, LawRollout, PredictedMultiplier, VariantLaw } from 'rung-wire';

const finiteOr = (v: any): number | null => (v === undefined || v === null || !isFinite(num(v)) ? null : num(v));
const sci = (v: number) => (isFinite(v) ? v.toExponential(2) : '');
const percent = (level: number) => `${Number((100 * level).toPrecision(3))}%`;

// "2.003 [1.95, 2.061]", or the value alone without an interval; "—" without a value.
export function withRange(value: any, range: LawRange | undefined, digits = 4): string {
  const v = finiteOr(value);
  if (v === null) return '—';
  const lo = finiteOr(range?.low), hi = finiteOr(range?.high);
  return lo === null || hi === null ? fmt(v, digits) : `${fmt(v, digits)} [${fmt(lo, digits)}, ${fmt(hi, digits)}]`;
}

// A table cell of a value with its interval below it, smaller (the laws table stays narrow).
function rangeCell(value: any, range: LawRange | undefined, key: string, digits = 4): HTMLElement {
  const v = finiteOr(value), lo = finiteOr(range?.low), hi = finiteOr(range?.high);
  return el('td', { className: 'num', 'data-key': key }, v === null ? '—' : fmt(v, digits),
    v !== null && lo !== null && hi !== null ? el('small', { className: 'interval' }, ` [${fmt(lo, digits)}, ${fmt(hi, digits)}]`) : null);
}

// What a set of intervals rests on, as `rung laws` says it.
export function basisText(basis: LawIntervalBasis | undefined, level: number, what: string): string {
  if (!basis || !basis.construction) return `${what}: none${basis?.why ? ` (${basis.why})` : ''}`;
  return `${what}: ${percent(level)} ${basis.construction} over ${basis.unit} (${basis.units}${basis.unit === 'seeds' ? '' : ' per variant at least'}, ` +
    `${basis.used} of ${basis.replicates} replicates converged)`;
}

// The multiplier charts' specs, one per allocation (rule first), on one log y range (a ratio, and the
// extrapolated bands widen fast): per variant a solid line over the computes within its runs and a
// dashed one over the extrapolated computes (from the last within, so that they join), each with its
// interval as a band; CM = 1 (the baseline) dotted.
export function multiplierSpecs(report: LawReport): { allocation: string; spec: ChartSpec }[] {
  const allocations = [...new Set(report.multipliers.map((m) => m.allocation))].sort((a, b) => (a === 'rule' ? -1 : b === 'rule' ? 1 : a.localeCompare(b)));
  const variants = [...new Set(report.multipliers.map((m) => m.variant))];
  const level = num(report.level);
  const specs = allocations.map((allocation) => {
    const rows = report.multipliers.filter((m) => m.allocation === allocation);
    const x = [...new Set(rows.map((m) => num(m.compute)))].filter((c) => c > 0).sort((a, b) => a - b);
    const series: Series[] = [];
    variants.forEach((variant, i) => {
      const color = PALETTE[(i + 1) % PALETTE.length];
      const byC = new Map<number, PredictedMultiplier>(rows.filter((m) => m.variant === variant).map((m) => [num(m.compute), m]));
      const value = (c: number) => finiteOr(byC.get(c)?.multiplier);
      const lo = (c: number) => finiteOr(byC.get(c)?.interval?.low), hi = (c: number) => finiteOr(byC.get(c)?.interval?.high);
      const within = (c: number) => byC.has(c) && !byC.get(c)!.extrapolated;
      const lastWithin = Math.max(-Infinity, ...x.filter(within));
      const beyond = (c: number) => byC.has(c) && (byC.get(c)!.extrapolated || c === lastWithin);
      const pick = (keep: (c: number) => boolean, f: (c: number) => number | null) => x.map((c) => (keep(c) ? f(c) : null));
      series.push({ label: `${variant} (within its runs)`, color, width: 2, values: pick(within, value), band: { lo: pick(within, lo), hi: pick(within, hi) } });
      if (x.some((c) => byC.get(c)?.extrapolated)) {
        series.push({ label: `${variant} (extrapolated)`, color, width: 2, dash: [6, 4], values: pick(beyond, value), band: { lo: pick(beyond, lo), hi: pick(beyond, hi) } });
      }
    });
    series.push({ label: `CM = 1 (${report.baseline})`, color: '#888', dash: [2, 3], width: 1, values: x.map(() => 1) });
    const how = allocation === 'rule' ? `each at D = ${fmt(num(report.tokens_per_param), 3)} N` : allocation === 'optimal' ? 'each at its own compute-optimal N, D' : allocation;
    const spec: ChartSpec = {
      title: `Predicted compute multiplier against compute (${allocation}: ${how})`,
      xLabel: 'compute C (FLOPs, 6ND)', yLabel: `CM against ${report.baseline}`, logX: true, logY: true, x, series,
      note: `CM = C_base / C: the baseline needs CM times the compute for the variant's loss at C; bands: ${basisText(report.prediction_basis, level, 'prediction intervals')}; dashed: beyond the variant's largest run`,
    };
    return { allocation, spec };
  });
  // One y range for all, so that the allocations read side by side.
  const ys = specs.map((s) => dataRange(s.spec).y).filter((r): r is [number, number] => r !== null);
  if (ys.length) {
    const range = padRange([Math.min(...ys.map((r) => r[0])), Math.max(...ys.map((r) => r[1]))], true);
    for (const s of specs) s.spec.yRange = range;
  }
  return specs;
}

// A variant's IsoFLOP chart: per budget its runs (points; those within the profiles' tolerance of the
// budget's compute) and the parabola of loss against ln N over their sizes (a line), its N* marked by
// a vertical tick through the minimum (L* +- 2%).
export function isoflopSpec(report: LawReport, variant: string): ChartSpec | null {
  const profile = report.isoflop?.variants.find((v) => v.variant === variant);
  if (!profile || !profile.budgets.length) return null;
  const tolerance = Math.max(0.02, num(report.isoflop!.tolerance) || 0);
  const runs = report.runs.filter((r: LawFittedRun) => r.variant === variant);
  const perBudget = profile.budgets.map((b) => {
    const c = num(b.compute);
    return { budget: b, c, runs: runs.filter((r) => Math.abs((6 * num(r.n) * num(r.d)) / c - 1) <= tolerance) };
  });
  const ns = [...new Set(perBudget.flatMap((p) => p.runs.map((r) => num(r.n))))].sort((a, b) => a - b);
  if (!ns.length) return null;
  const lo = ns[0] / 1.15, hi = ns[ns.length - 1] * 1.15;
  const curveX = Array.from({ length: 40 }, (_, i) => lo * Math.pow(hi / lo, i / 39));
  const x = [...new Set([...ns, ...curveX, ...perBudget.map((p) => finiteOr(p.budget.n_opt)).filter((n): n is number => n !== null && n >= lo && n <= hi)])].sort((a, b) => a - b);
  const series: Series[] = [];
  const whiskers: ChartSpec['whiskers'] = [];
  perBudget.forEach((p, i) => {
    const color = PALETTE[i % PALETTE.length];
    const byN = new Map(p.runs.map((r) => [num(r.n), num(r.loss)]));
    series.push({ label: `C = ${sci(p.c)}: runs`, color, points: true, values: x.map((n) => (byN.has(n) ? byN.get(n)! : null)) });
    const [c0, c1, c2] = p.budget.parabola.map(num);
    const nOpt = finiteOr(p.budget.n_opt);
    if ([c0, c1, c2].every(isFinite) && p.budget.parabola.length === 3) {
      const nLo = Math.min(...p.runs.map((r) => num(r.n))) / 1.15, nHi = Math.max(...p.runs.map((r) => num(r.n))) * 1.15;
      series.push({ label: `C = ${sci(p.c)}: parabola in ln N${nOpt !== null ? `, N* = ${fmt(nOpt, 3)}` : ''}`, color, width: 1.5,
        values: x.map((n) => (n >= nLo && n <= nHi && (curveX.includes(n) || n === nOpt) ? c0 + c1 * Math.log(n) + c2 * Math.log(n) ** 2 : null)) });
      const lOpt = finiteOr(p.budget.loss_opt);
      if (nOpt !== null && lOpt !== null && nOpt >= lo && nOpt <= hi) whiskers.push({ x: nOpt, lo: lOpt - 0.02 * Math.abs(lOpt), hi: lOpt + 0.02 * Math.abs(lOpt), color });
    }
  });
  return {
    title: `IsoFLOP profiles of ${variant}`, xLabel: 'N (non-embedding parameters)', yLabel: `${report.metric || 'loss'} (${report.unit}) at each budget`,
    logX: true, x, series, whiskers,
    note: profile.a !== undefined ? `N* = ${fmt(num(profile.G), 3)} C^${fmt(num(profile.a), 3)}${profile.a_interval ? ` (a in [${fmt(num(profile.a_interval.low), 3)}, ${fmt(num(profile.a_interval.high), 3)}])` : ''}; ticks: each budget's N*`
      : `no N* = G C^a${profile.why ? ` (${profile.why})` : ''}`,
  };
}

const cell = (text: string, numeric = false, key?: string) => el('td', { className: numeric ? 'num' : '', 'data-key': key }, text);
const head = (...names: string[]) => el('thead', {}, el('tr', {}, ...names.map((h) => el('th', {}, h))));
// "trial 12" as a link to the trial's page; other origins as written.
const origin = (text: string) => {
  const m = /^trial (\d+)$/.exec(text);
  return el('td', {}, m ? el('a', { href: `#/trial/${m[1]}` }, text) : text);
};

function lawsTable(report: LawReport): HTMLElement {
  const table = el('table', { className: 'data', id: 'laws-table' }, head('variant', 'runs', 'E', 'A', 'B', 'alpha', 'beta', 'RMSE', 'N_opt ~ C^a', 'D_opt ~ C^b'));
  const body = el('tbody');
  for (const v of report.variants as VariantLaw[]) {
    body.append(el('tr', { 'data-variant': v.variant }, cell(v.variant), cell(String(v.points), true, 'points'),
      rangeCell(v.E, v.E_interval, 'E'), rangeCell(v.A, v.A_interval, 'A'), rangeCell(v.B, v.B_interval, 'B'),
      rangeCell(v.alpha, v.alpha_interval, 'alpha'), rangeCell(v.beta, v.beta_interval, 'beta'),
      cell(fmt(num(v.rmse), 3), true, 'rmse'), rangeCell(v.n_exponent, v.n_exponent_interval, 'n_exponent', 3),
      rangeCell(v.d_exponent, v.d_exponent_interval, 'd_exponent', 3)));
  }
  table.append(body);
  return table;
}

function rolloutPart(report: LawReport, rollout: LawRollout): HTMLElement[] {
  const sizes = rollout.held_out_n.map((n) => fmt(num(n), 4)).join(', ');
  const out: HTMLElement[] = [el('h4', {}, `Rollout: refitted without N = ${sizes} (the largest size${rollout.held_out_n.length > 1 ? 's' : ''}), predicting their runs`)];
  if (rollout.why) {
    out.push(el('p', { className: 'empty', id: 'laws-rollout-none' }, `none: ${rollout.why}`));
    return out;
  }
  out.push(el('p', { className: 'note' }, basisText(rollout.basis, num(report.level), 'prediction intervals')));
  const table = el('table', { className: 'data', id: 'laws-rollout' }, head('variant', 'run', 'N', 'D', 'loss (measured)', 'predicted', 'interval', 'inside'));
  const body = el('tbody');
  for (const p of rollout.points) {
    const lo = finiteOr(p.interval?.low), hi = finiteOr(p.interval?.high);
    const has = lo !== null && hi !== null;
    body.append(el('tr', { 'data-variant': p.variant, 'data-origin': p.origin }, cell(p.variant), origin(p.origin),
      cell(fmt(num(p.n), 4), true, 'n'), cell(sci(num(p.d)), true, 'd'), cell(fmt(num(p.loss), 5), true, 'loss'),
      cell(fmt(num(p.predicted), 5), true, 'predicted'), cell(has ? `[${fmt(lo!, 5)}, ${fmt(hi!, 5)}]` : '—', false, 'interval'),
      el('td', { className: has ? (p.inside ? 'met-yes' : 'met-no') : 'met-none', 'data-key': 'inside' }, has ? (p.inside ? 'yes' : 'no') : '—')));
  }
  table.append(body);
  out.push(table);
  out.push(el('p', { id: 'laws-rollout-error' }, `mean |error| ${fmt(num(rollout.mean_abs_error), 3)} ${report.unit} (${fmt(100 * num(rollout.mean_relative_error), 2)}%); ` +
    `${rollout.inside} of ${rollout.points.length} runs inside their interval`));
  return out;
}

function isoflopPart(report: LawReport, iso: IsoflopProfiles): HTMLElement[] {
  const level = num(report.level);
  const intervals = iso.construction ? `${percent(level)} ${iso.construction} over ${iso.unit} (${iso.units}, ${iso.used} of ${iso.replicates} replicates usable)`
    : `none${iso.intervals_why ? ` (${iso.intervals_why})` : ''}`;
  const out: HTMLElement[] = [el('h4', {}, 'IsoFLOP profiles (approach 2): per budget, loss against ln N fitted by a parabola, its minimum N*'),
    el('p', { className: 'note' }, `N* = G C^a over the budgets; intervals: ${intervals}`)];
  const charts = el('div', { className: 'two' });
  for (const v of iso.variants) {
    const spec = isoflopSpec(report, v.variant);
    if (!spec) continue;
    const host = el('div', { 'data-chart': 'laws-isoflop', 'data-variant': v.variant });
    charts.append(host);
    // Drawn once the host is in the page (uPlot sizes itself to it).
    queueMicrotask(() => drawChart(host, spec));
  }
  out.push(charts);
  const table = el('table', { className: 'data', id: 'laws-isoflop' }, head('variant', 'budget C', 'runs', 'sizes', 'N*', 'D*', 'L*', 'note'));
  const body = el('tbody');
  for (const v of iso.variants) {
    for (const b of v.budgets) {
      body.append(el('tr', { 'data-variant': v.variant, 'data-compute': String(num(b.compute)) }, cell(v.variant), cell(sci(num(b.compute)), true, 'compute'),
        cell(String(b.runs), true), cell(String(b.sizes), true), cell(withRange(b.n_opt, b.n_opt_interval), true, 'n_opt'),
        cell(finiteOr(b.d_opt) === null ? '—' : fmt(num(b.d_opt), 4), true, 'd_opt'), cell(finiteOr(b.loss_opt) === null ? '—' : fmt(num(b.loss_opt), 5), true, 'loss_opt'),
        el('td', { className: 'wrap' }, b.why || '')));
    }
  }
  table.append(body);
  out.push(table);
  out.push(el('ul', { id: 'laws-isoflop-fit' }, ...iso.variants.map((v) => el('li', { 'data-variant': v.variant }, v.a !== undefined
    ? `${v.variant}: N* = ${fmt(num(v.G), 4)} C^${fmt(num(v.a), 4)}${v.a_interval ? ` (a in [${fmt(num(v.a_interval.low), 4)}, ${fmt(num(v.a_interval.high), 4)}])` : ''}, D* = ${fmt(num(v.G_d), 4)} C^${fmt(num(v.b), 4)}`
    : `${v.variant}: no N* = G C^a (${v.why})`))));
  return out;
}

function runsPart(report: LawReport): HTMLElement {
  const table = el('table', { className: 'data', id: 'laws-runs' }, head('variant', 'run', 'N', 'D', 'C = 6ND', 'loss', 'fitted', 'residual'));
  const body = el('tbody');
  for (const r of report.runs) {
    const loss = num(r.loss), fitted = num(r.fitted);
    body.append(el('tr', { 'data-variant': r.variant }, cell(r.variant), origin(r.origin), cell(fmt(num(r.n), 4), true), cell(sci(num(r.d)), true),
      cell(sci(6 * num(r.n) * num(r.d)), true), cell(fmt(loss, 5), true), cell(fmt(fitted, 5), true), cell(fmt(loss - fitted, 2), true)));
  }
  table.append(body);
  return el('details', { id: 'laws-runs-fold' }, el('summary', {}, `The ${report.runs.length} fitted runs`), table);
}

// Fills `host` with the report's parts (it must be in the page: the charts size themselves to it).
export function drawLaws(host: HTMLElement, answer: GetLawsResponse): void {
  const report = answer.report!;
  const level = num(report.level);
  const unfinished = num(answer.unfinished);
  host.append(el('p', { id: 'laws-fit' }, `${report.source} (${report.metric || 'val_loss'}, ${report.unit}): L(N, D) = E + A / N^α + B / D^β, fitted as Hoffmann et al. (approach 3): ` +
    `Huber loss (δ ${fmt(num(report.huber_delta), 3)}) on ln L, L-BFGS (${report.converged_starts} of ${report.starts} starts converged); sharing across variants: ${report.sharing}. ` +
    `${basisText(report.parameter_basis, level, 'Parameter intervals')}.` + (unfinished > 0 ? ` ${unfinished} trial(s) unfinished or without a value, left out.` : '')));
  host.append(lawsTable(report));
  if (report.multipliers.length) {
    host.append(el('h4', {}, `Predicted compute multipliers against ${report.baseline}`));
    for (const { allocation, spec } of multiplierSpecs(report)) {
      const chart = el('div', { 'data-chart': 'laws-multipliers', 'data-allocation': allocation });
      host.append(chart);
      drawChart(chart, spec);
    }
    const undefinedRows = report.multipliers.filter((m) => finiteOr(m.multiplier) === null);
    if (undefinedRows.length) {
      host.append(el('p', { className: 'note', id: 'laws-undefined' }, `undefined at ${undefinedRows.length} point(s): ` +
        [...new Set(undefinedRows.map((m) => `${m.variant} (${m.allocation}) ${m.why}`))].slice(0, 4).join('; ')));
    }
  } else {
    host.append(el('p', { className: 'empty', id: 'laws-no-multipliers' }, 'No multipliers predicted (no baseline: the spec\'s baseline does not select one variant; ?baseline= in the endpoint names one).'));
  }
  if (report.rollout) host.append(...rolloutPart(report, report.rollout));
  if (report.isoflop) host.append(...isoflopPart(report, report.isoflop));
  else if (report.isoflop_why) host.append(el('p', { className: 'empty', id: 'laws-isoflop-none' }, `IsoFLOP profiles: none (${report.isoflop_why})`));
  host.append(runsPart(report));
  if (report.notes.length) host.append(el('ul', { className: 'note', id: 'laws-notes' }, ...report.notes.map((n) => el('li', {}, `note: ${n}`))));
}

// The panel: folded until opened (then read once; "refit" reads it again); `laws=1` in the URL opens it.
export function lawsPanel(sweepId: number): HTMLElement {
  const panel = el('details', { id: 'laws' });
  const body = el('div', { id: 'laws-body' });
  const refit = el('button', { id: 'laws-refit', onclick: (e: Event) => { e.preventDefault(); load(); } }, 'refit');
  panel.append(el('summary', {}, el('h3', {}, 'Scaling laws L(N, D)'), ' ', el('span', { className: 'note' }, 'fitted when opened (bootstrap refits: a few seconds) ')), body);
  let loading = false, loaded = false;
  const load = async () => {
    if (loading) return;
    loading = true;
    panel.setAttribute('data-laws', 'loading');
    body.textContent = '';
    body.append(el('p', { className: 'empty' }, 'fitting…'));
    try {
      const answer = await getJson<GetLawsResponse>(`/api/sweeps/${sweepId}/laws`);
      body.textContent = '';
      body.append(el('div', { className: 'controls' }, refit, el('span', { className: 'note', id: 'laws-when' },
        `fitted at ${new Date().toLocaleTimeString()} from the runs finished then (not stored: refit fits again)`)));
      drawLaws(body, answer);
      panel.setAttribute('data-laws', 'fitted');
    } catch (e: any) {
      body.textContent = '';
      if (e.status === 409) {
        body.append(el('p', { className: 'empty', id: 'laws-none' }, `no scaling laws: ${String(e.message).replace(/^coordinator: /, '')}`), el('div', { className: 'controls' }, refit));
        panel.setAttribute('data-laws', 'none');
      } else {
        body.append(el('p', { className: 'error', id: 'laws-error' }, `Scaling laws: ${e.message}`), el('div', { className: 'controls' }, refit));
        panel.setAttribute('data-laws', 'failed: ' + e.message);
      }
    } finally {
      loading = false;
      loaded = true;
    }
  };
  panel.addEventListener('toggle', () => {
    setHashParam('laws', panel.open ? '1' : null);
    if (panel.open && !loaded) load();
  });
  if (hashParams().get('laws') === '1') panel.open = true;
  return panel;
}
