// A sweep: progress by state per rung x variant, the loss curves by cell, the loss against the
// evaluation length (trials evaluated beyond their training length), the trials table, the fit (loss
// against compute with the fitted laws, multipliers with intervals), the LR tuning, the precision aim
// (precision_view.ts), the scaling laws L(N, D) (laws_view.ts, fitted when its panel is opened), live.
import { followSweep, getJson, num, postJson } from './api';
import { ChartSpec, drawChart, PALETTE, Series } from './charts';
import { cellCurves, curveMetrics, TrialInfo, X_AXES } from './curves';
import { csvField, download, el, fmt, hashParams, setHashParam, stateName, STATES, timeText, baselineText } from './format';
import { EvaluatedTrial, sweepExtrapolationSpecs } from './diagnostics_charts';
import { lawsPanel } from './laws_view';
import { drawParallel } from './parallel';
import { renderPrecision } from './precision_view';
import { eta, progressBar } from './sweeps_view';
import type { FitReportRow, GetTuningResponse, QueryResultsResponse, StoredFit, Sweep, Trial } from 'rung-wire';

function variantOf(assignments: Trial['assignments']): { variant: string; seed: string } {
  const parts: string[] = [];
  let seed = '';
  for (const [key, value] of Object.entries(assignments || {})) {
    if (key === 'seed') { seed = String(value); continue; }
    parts.push(`${key.replace(/^.*\./, '')}=${value}`);
  }
  return { variant: parts.join(' '), seed };
}

const infos = new Map<string, TrialInfo>();
function info(trial: Trial): TrialInfo {
  const key = `${trial.trial_id}|${trial.rung}|${JSON.stringify(trial.assignments)}`;
  const known = infos.get(key);
  if (known) return known;
  const made = parse(trial);
  infos.set(key, made);
  return made;
}

// A trial's rung, variant (its axis values but the seed) and seed; shared with the comparison view.
export const trialInfo = info;

// What the rows' intervals are, as the chart's note says it: "95% jackknife gap t intervals over the
// seeds of each rung" (fits stored earlier: "95% jackknife t intervals over 3 seeds", "95% t intervals over 3 paired
// seeds").
function intervalNote(rows: FitReportRow[]): string {
  const first = rows.find((r) => r.interval);
  if (!first || !first.interval) return 'no intervals';
  const level = Math.round(num(first.interval.level) * 100);
  const units = num(first.interval.units);
  // Strata are the rungs (compute_multipliers.h): units counts the seeds of every rung the gap reads.
  if (first.interval.construction === 'jackknife gap t') return `${level}% jackknife gap t intervals over the seeds of each rung`;
  if (first.interval.construction === 'jackknife t') return `${level}% jackknife t intervals over ${units} seeds`;
  if (first.interval.construction === 't') return `${level}% t intervals over ${units} paired seeds`;
  return `${level}% bootstrap intervals`;
}

function parse(trial: Trial): TrialInfo {
  const { variant, seed } = variantOf(trial.assignments || {});
  return { trial_id: num(trial.trial_id), rung: num(trial.rung), rung_label: trial.rung_label, variant, seed };
}

export async function renderSweep(root: HTMLElement, sweepId: number, onStop: (stop: () => void) => void): Promise<void> {
  // The best and last values (two results calls, the slowest reads of a large sweep) are asked for at
  // once, beside the sweep and its trials; the table takes them when they come.
  const summaryKinds = ['best', 'last'] as const;
  const fetchSummaries = () => Promise.all(summaryKinds.map((summary) => getJson<QueryResultsResponse>(`/api/sweeps/${sweepId}/results?summary=${summary}`)));
  let firstSummaries: Promise<QueryResultsResponse[]> | null = fetchSummaries();
  firstSummaries.catch(() => {});  // a failure is reported where the table waits for them
  const [sweep0, listed, serverInfo] = await Promise.all([getJson<Sweep>(`/api/sweeps/${sweepId}`), getJson<{ trials: Trial[] }>(`/api/sweeps/${sweepId}/trials`), getJson('/api/info')]);
  let sweep = sweep0;
  const trials = new Map<number, Trial>();
  for (const t of listed.trials) trials.set(num(t.trial_id), t);
  document.getElementById('where')!.textContent = ` / ${sweep.name}`;
  const params = hashParams();

  // ---- header and controls
  const header = el('div', { className: 'sweep-head' });
  const renderHeader = () => {
    header.textContent = '';
    header.append(el('h2', {}, `${sweep.name} `, el('span', { className: 'state st-' + stateName(sweep.state) }, stateName(sweep.state))),
      el('p', {}, `sweep ${sweep.sweep_id} · metric ${sweep.metric_name} (${sweep.metric_goal}) · baseline ${baselineText(sweep.baseline)} · created ${timeText(sweep.created_at)}`,
        eta(sweep, Date.now() / 1000) ? ` · ETA ${eta(sweep, Date.now() / 1000)}` : '', sweep.state_reason ? ` · ${sweep.state_reason}` : ''),
      progressBar(sweep.counts));
    if (serverInfo.control) {
      const message = el('span', { className: 'note', id: 'control-message' });
      const act = (action: string) => el('button', { 'data-action': action, onclick: async () => {
        if (action === 'cancel' && !confirm(`Cancel sweep ${sweep.name}?`)) return;
        try { sweep = await postJson<Sweep>(`/api/sweeps/${sweepId}/${action}`); renderHeader(); } catch (e: any) { message.textContent = e.message; }
      } }, action);
      header.append(el('div', { className: 'controls' }, act('pause'), act('resume'), act('retry'), act('cancel'), message));
    }
  };
  renderHeader();
  root.append(header);

  // ---- progress by state per rung x variant
  const grid = el('section', { id: 'progress-grid' });
  const renderGrid = () => {
    const all = [...trials.values()];
    const rungs = [...new Map(all.map((t) => [num(t.rung), t.rung_label])).entries()].sort((a, b) => a[0] - b[0]);
    const variants = [...new Set(all.map((t) => info(t).variant))].sort();
    const table = el('table', { className: 'data grid' }, el('thead', {}, el('tr', {}, el('th', {}, 'rung \\ variant'), ...variants.map((v) => el('th', {}, v || 'all')))));
    const body = el('tbody');
    for (const [rung, label] of rungs) {
      const row = el('tr', {}, el('th', {}, label));
      for (const v of variants) {
        const counts: Record<string, number> = { total: 0 };
        for (const t of all) if (num(t.rung) === rung && info(t).variant === v) { const s = stateName(t.state); counts[s] = (counts[s] || 0) + 1; counts.total++; }
        row.append(el('td', {}, progressBar(counts), el('small', {}, `${counts.succeeded || 0}/${counts.total} done${counts.running ? `, ${counts.running} running` : ''}${counts.failed ? `, ${counts.failed} failed` : ''}`)));
      }
      body.append(row);
    }
    table.append(body);
    grid.textContent = '';
    grid.append(el('h3', {}, 'Progress by rung and variant'), table);
  };
  renderGrid();
  root.append(grid);

  // ---- curves
  const metricNames = curveMetrics(sweep.metric_name);
  const curveState = {
    metric: metricNames.includes(params.get('metric') || '') ? params.get('metric')! : sweep.metric_name,
    x: X_AXES[params.get('x') || ''] ? params.get('x')! : 'step',
    logX: params.get('logx') === '1', logY: params.get('logy') === '1', smoothing: Number(params.get('smooth') || 0) || 0,
  };
  const curves = new Map<number, number[][]>();
  const chartHost = el('div', { id: 'sweep-curves' });
  const select = (name: string, values: string[], labels: string[], current: string, apply: (v: string) => void) =>
    el('select', { name, onchange: (e: Event) => { const v = (e.target as HTMLSelectElement).value; apply(v); setHashParam(name, v); drawCurves(); } },
      ...values.map((v, i) => el('option', { value: v, selected: v === current }, labels[i])));
  const box = (name: string, label: string, current: boolean, apply: (v: boolean) => void) => {
    const input = el('input', { type: 'checkbox', name, checked: current, onchange: () => { apply(input.checked); setHashParam(name, input.checked ? '1' : null); drawCurves(); } });
    return el('label', {}, input, ' ' + label);
  };
  const slider = el('input', { type: 'range', name: 'smooth', min: '0', max: '0.98', step: '0.02', value: String(curveState.smoothing),
    onchange: () => { curveState.smoothing = Number(slider.value); setHashParam('smooth', slider.value === '0' ? null : slider.value); drawCurves(); } });
  root.append(el('section', {}, el('div', { className: 'controls' },
    'metric ', select('metric', metricNames, metricNames, curveState.metric, (v) => { curveState.metric = v; loadCurves(); follow(); }),
    ' x ', select('x', Object.keys(X_AXES), Object.values(X_AXES).map((a) => a.label), curveState.x, (v) => { curveState.x = v; loadCurves(); }),
    box('logx', 'log x', curveState.logX, (v) => (curveState.logX = v)), box('logy', 'log y', curveState.logY, (v) => (curveState.logY = v)),
    el('label', {}, ' smoothing ', slider)), chartHost));

  // ---- loss beyond the training length (trials with extrapolation results: an evaluation sweep)
  const extrapolationHost = el('section', { id: 'extrapolation' });
  root.append(extrapolationHost);
  const showExtrapolation = async () => {
    const answer = await getJson<{ trials: EvaluatedTrial[] }>(`/api/sweeps/${sweepId}/extrapolation`);
    extrapolationHost.textContent = '';
    if (answer.trials.length) {
      extrapolationHost.append(el('h3', {}, 'Loss against the evaluation length'));
      for (const { rung, spec } of sweepExtrapolationSpecs(sweep.name, answer.trials)) {
        const host = el('div', { 'data-chart': 'sweep-extrapolation', 'data-rung': rung });
        extrapolationHost.append(host);
        drawChart(host, spec);
      }
    }
    extrapolationHost.setAttribute('data-trials', String(answer.trials.length));
  };
  const loadExtrapolation = () => showExtrapolation().catch((e) => extrapolationHost.setAttribute('data-trials', 'failed: ' + e.message));
  function drawCurves() {
    const spec = cellCurves(curves, [...trials.values()].map(info), curveState.metric, curveState.x, curveState.smoothing, curveState.logX, curveState.logY);
    drawChart(chartHost, spec);
  }
  async function loadCurves(ids?: number[]) {
    const query = ids ? `&trials=${ids.join(',')}` : '';
    const points = Math.max(50, Math.min(400, Math.floor(200000 / Math.max(1, trials.size))));
    const asked = `${curveState.metric}|${curveState.x}`;
    const data = await getJson(`/api/sweeps/${sweepId}/curves?metric=${encodeURIComponent(curveState.metric)}&x=${curveState.x}&points=${points}${query}`);
    if (asked !== `${curveState.metric}|${curveState.x}`) return;  // the view changed meanwhile: a newer load follows
    if (!ids) curves.clear();
    for (const t of data.trials) curves.set(num(t.trial_id), t.points);
    drawCurves();
  }

  // ---- trials table
  const summaries = { best: new Map<number, number>(), last: new Map<number, number>() };
  const loadSummaries = async () => {
    const answers = await (firstSummaries || fetchSummaries());
    firstSummaries = null;
    summaryKinds.forEach((summary, i) => {
      summaries[summary].clear();
      for (const row of answers[i].rows) if (row.trial_ids?.length === 1) summaries[summary].set(num(row.trial_ids[0]), num(row.values[0]));
    });
  };
  const tableState = { sort: params.get('sort') || 'index', desc: params.get('desc') === '1', state: params.get('state') || '', filter: params.get('filter') || '' };
  const columns: { key: string; label: string; value: (t: Trial) => any; numeric?: boolean }[] = [
    { key: 'trial_id', label: 'trial', value: (t) => num(t.trial_id), numeric: true },
    { key: 'index', label: 'index', value: (t) => num(t.index), numeric: true },
    { key: 'rung', label: 'rung', value: (t) => t.rung_label },
    { key: 'variant', label: 'variant', value: (t) => info(t).variant },
    { key: 'seed', label: 'seed', value: (t) => info(t).seed },
    { key: 'state', label: 'state', value: (t) => stateName(t.state) },
    { key: 'step', label: 'step', value: (t) => num(t.latest_step), numeric: true },
    { key: 'total_steps', label: 'of', value: (t) => num(t.total_steps), numeric: true },
    { key: 'final', label: 'final', value: (t) => num(t.final_metric), numeric: true },
    { key: 'best', label: 'best', value: (t) => summaries.best.get(num(t.trial_id)) ?? NaN, numeric: true },
    { key: 'last', label: 'last', value: (t) => num(t.latest_metric), numeric: true },
    { key: 'flops', label: 'FLOPs', value: (t) => num(t.flops), numeric: true },
    { key: 'attempt', label: 'attempt', value: (t) => num(t.attempt), numeric: true },
  ];
  const tableHost = el('section', { id: 'trials' });
  const stateSelect = el('select', { name: 'state', onchange: () => { tableState.state = stateSelect.value; setHashParam('state', stateSelect.value || null); renderTable(); } },
    el('option', { value: '' }, 'every state'), ...STATES.map((s) => el('option', { value: s, selected: s === tableState.state }, s)));
  const filterInput = el('input', { type: 'search', name: 'filter', placeholder: 'filter: rung or axis value', value: tableState.filter,
    oninput: () => { tableState.filter = filterInput.value; setHashParam('filter', filterInput.value || null); renderTable(); } });
  const visible = () => {
    const rows = [...trials.values()].filter((t) => (!tableState.state || stateName(t.state) === tableState.state) &&
      (!tableState.filter || `${t.rung_label} ${info(t).variant} seed=${info(t).seed}`.toLowerCase().includes(tableState.filter.toLowerCase())));
    const column = columns.find((c) => c.key === tableState.sort) || columns[1];
    rows.sort((a, b) => {
      const va = column.value(a), vb = column.value(b);
      const order = column.numeric ? ((isNaN(va) ? Infinity : va) - (isNaN(vb) ? Infinity : vb)) : String(va).localeCompare(String(vb));
      return tableState.desc ? -order : order;
    });
    return rows;
  };
  const csv = () => {
    const lines = [columns.map((c) => c.key).join(',')];
    for (const t of visible()) lines.push(columns.map((c) => { const v = c.value(t); return csvField(c.numeric && isNaN(v) ? '' : v); }).join(','));
    download(`${sweep.name}-trials.csv`, 'text/csv', lines.join('\n') + '\n');
  };
  const table = el('table', { className: 'data', id: 'trials-table' });
  let shownRows = 200;
  function renderTable() {
    table.textContent = '';
    table.append(el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { className: c.numeric ? 'num sortable' : 'sortable', 'data-key': c.key,
      onclick: () => { tableState.desc = tableState.sort === c.key ? !tableState.desc : false; tableState.sort = c.key; setHashParam('sort', c.key); setHashParam('desc', tableState.desc ? '1' : null); renderTable(); } },
      c.label + (tableState.sort === c.key ? (tableState.desc ? ' ▼' : ' ▲') : ''))))));
    const body = el('tbody');
    // The first rows in the chosen order (sorting and filtering see every trial; the CSV has them all);
    // a large sweep's table would otherwise cost the page a second to build at every update.
    const rows = visible();
    for (const t of rows.slice(0, shownRows)) {
      body.append(el('tr', { 'data-trial': t.trial_id }, ...columns.map((c) => {
        const v = c.value(t);
        const text = c.numeric ? (isNaN(v) ? '' : c.key === 'flops' ? v.toExponential(2) : ['final', 'best', 'last'].includes(c.key) ? fmt(v, 5) : String(v)) : String(v);
        return el('td', { className: (c.numeric ? 'num' : '') + (c.key === 'state' ? ' state st-' + v : ''), 'data-key': c.key },
          c.key === 'trial_id' ? el('a', { href: `#/trial/${t.trial_id}` }, text) : text);
      })));
    }
    table.append(body);
    if (rows.length > shownRows) {
      table.append(el('tfoot', {}, el('tr', {}, el('td', { colspan: String(columns.length) },
        `${shownRows} of ${rows.length} trials shown (sort or filter to find others) `,
        el('button', { id: 'show-all-trials', onclick: () => { shownRows = rows.length; renderTable(); } }, `show all ${rows.length}`)))));
    }
  }
  tableHost.append(el('h3', {}, 'Trials'), el('div', { className: 'controls' }, stateSelect, ' ', filterInput, ' ',
    el('button', { onclick: csv, id: 'csv' }, 'CSV'), el('span', { className: 'note' }, ` final/best/last: ${sweep.metric_name} (best and last as rung results --summary best|last)`)), table);
  root.append(tableHost);

  // ---- fit and tuning
  const fitHost = el('section', { id: 'fit' }, el('h3', {}, 'Loss against compute, fits and multipliers'));
  root.append(fitHost);
  const tuningHost = el('section', { id: 'tuning' });
  root.append(tuningHost);
  // Only a sweep with a precision block has the panel (section#precision).
  const precisionHost = sweep.precision ? el('section', { id: 'precision' }) : null;
  if (precisionHost) root.append(precisionHost);
  // The scaling laws: every sweep has the panel, folded; it fits when opened (not on live updates).
  root.append(lawsPanel(sweepId));
  const parallelHost = el('section', { id: 'parallel' });
  root.append(parallelHost);

  // The page is ready with the table, progress and curves; the best and last columns fill in when the
  // summaries arrive (two results calls, the slowest reads of a large sweep), marked data-summaries.
  const summariesIn = loadSummaries();
  await loadCurves();
  renderTable();
  summariesIn.then(() => { renderTable(); tableHost.setAttribute('data-summaries', 'loaded'); })
    .catch((e) => tableHost.setAttribute('data-summaries', 'failed: ' + e.message));
  const drawParallelView = () => {
    const finished = [...trials.values()].filter((t) => isFinite(num(t.final_metric)));
    const axisKeys = [...new Set(finished.flatMap((t) => Object.keys(t.assignments || {})))].filter((k) => k !== 'seed');
    drawParallel(parallelHost, `Parallel coordinates: axes against final ${sweep.metric_name}`, ['rung', ...axisKeys, 'seed'], sweep.metric_name, sweep.metric_goal,
      finished.map((t) => ({ axes: { rung: t.rung_label, seed: Number(info(t).seed), ...(t.assignments || {}) }, metric: num(t.final_metric) })));
  };
  drawParallelView();
  loadExtrapolation();
  const showFit = () => {
    fitHost.textContent = '';
    fitHost.append(el('h3', {}, 'Loss against compute, fits and multipliers'));
    renderFit(fitHost, sweepId).catch((e) => fitHost.append(el('p', { className: 'empty' }, 'No fit: ' + e.message)));
  };
  showFit();
  if (sweep.tuning) renderTuning(tuningHost, sweepId).catch((e) => tuningHost.append(el('p', { className: 'empty' }, 'Tuning: ' + e.message)));
  // The precision panel is read again when a trial starts, ends or is added (the aim refits then), one
  // read at a time.
  let precisionLoading = false, precisionStale = false;
  const showPrecision = () => {
    if (!precisionHost) return;
    if (precisionLoading) { precisionStale = true; return; }
    precisionLoading = true;
    precisionStale = false;
    renderPrecision(precisionHost, sweepId).catch((e) => {
      precisionHost.textContent = '';
      precisionHost.append(el('h3', {}, 'Precision'), el('p', { className: 'empty' }, 'Precision: ' + e.message));
      precisionHost.setAttribute('data-precision', 'failed: ' + e.message);
    }).finally(() => { precisionLoading = false; if (precisionStale) showPrecision(); });
  };
  showPrecision();

  // ---- live: trial updates re-render the header, grid and table; metric arrivals extend the curves
  const liveBadge = document.getElementById('live')!;
  let updates = 0;
  let timer: any = null;
  let pending = new Set<number>();  // trials to re-read (a resync, or a curve grown past its budget)
  let reloadAll = false;
  const flush = () => {
    timer = null;
    renderHeader();
    renderGrid();
    renderTable();
    if (reloadAll) { reloadAll = false; pending.clear(); loadCurves().catch(() => {}); }
    else if (pending.size) { const ids = [...pending]; pending = new Set(); loadCurves(ids).catch(() => {}); }
    else drawCurves();
    loadSummaries().then(renderTable).catch(() => {});
    if (precisionStale && !precisionLoading) showPrecision();
  };
  const later = () => { if (!timer) timer = setTimeout(flush, 500); };
  const column: Record<string, number> = { step: 1, tokens: 2, flops: 3, wall_time: 4 };
  let stop = () => {};
  const follow = () => {
    stop();
    stop = followSweep(sweepId, curveState.metric, (update) => {
      updates++;
      sweep = { ...sweep, ...update.sweep };
      for (const t of update.trials || []) {
        if (precisionHost && trials.get(num(t.trial_id))?.state !== t.state) precisionStale = true;
        trials.set(num(t.trial_id), t);
      }
      liveBadge.textContent = `live · ${updates} update(s) · last ${new Date().toLocaleTimeString()}`;
      liveBadge.setAttribute('data-updates', String(updates));
      later();
    }, (metrics) => {
      if (metrics.metric !== curveState.metric) return;
      if (metrics.resync) reloadAll = true;
      for (const a of metrics.arrivals) {
        const id = num(a[0]);
        const curve = curves.get(id) || [];
        if (curve.length && curve[curve.length - 1][0] >= a[1]) continue;  // already drawn
        curve.push([a[1], a[column[curveState.x]], a[5]]);
        curves.set(id, curve);
        if (curve.length > 800) pending.add(id);  // re-read it downsampled
      }
      liveBadge.setAttribute('data-points', String(Number(liveBadge.getAttribute('data-points') || 0) + metrics.arrivals.length));
      later();
    }, () => {
      liveBadge.textContent = `finished · ${updates} update(s)`;
      drawParallelView();
      if (updates > 1) { showFit(); loadExtrapolation(); showPrecision(); }  // it finished while the page was open
      later();
    });
  };
  follow();
  onStop(() => { stop(); if (timer) clearTimeout(timer); liveBadge.textContent = ''; });
}

async function renderFit(host: HTMLElement, sweepId: number): Promise<void> {
  const fit = await getJson<StoredFit & { before_finish: boolean }>(`/api/sweeps/${sweepId}/fit`);
  const rows: FitReportRow[] = fit.report.filter((r) => r.role === 'estimate');
  const piecewise = rows.filter((r) => r.estimator === 'piecewise');
  const variants = [...new Set(piecewise.map((r) => r.variant))];
  host.append(el('p', { className: 'note' }, `Stored fit ${fit.fit_id} (${timeText(fit.created_at)}, ${fit.actor}); baseline ${fit.baseline}; the numbers are those of rung fit ${sweepId} --format json` +
    (fit.before_finish ? '. Made before the sweep finished: not every ladder point is in it.' : '.')));
  // Loss against compute: seed-mean points per variant, each variant's fitted law (shared E).
  const computes = [...new Set(piecewise.map((r) => num(r.compute)))];
  const laws = rows.filter((r) => r.estimator === 'power_law_shared_e' && r.fit);
  const lo = Math.min(...computes), hi = Math.max(...computes);
  const curveX = Array.from({ length: 60 }, (_, i) => lo / 1.5 * Math.pow((hi * 1.5) / (lo / 1.5), i / 59));
  const x = [...new Set([...computes, ...curveX])].sort((a, b) => a - b);
  const series: Series[] = [];
  variants.forEach((v, i) => {
    const color = PALETTE[i % PALETTE.length];
    const byC = new Map(piecewise.filter((r) => r.variant === v).map((r) => [num(r.compute), num(r.loss)]));
    series.push({ label: `${v}: seed-mean loss`, color, points: true, values: x.map((c) => (byC.has(c) ? byC.get(c)! : null)) });
    const law = laws.find((r) => r.variant === v)?.fit;
    if (law) {
      const [a, cRef, alpha, e] = [num(law.A_at_c_ref), num(law.c_ref), num(law.alpha), num(law.E)];
      series.push({ label: `${v}: L = ${fmt(a, 4)}·(C/${fmt(cRef, 3)})^-${fmt(alpha, 3)} + ${fmt(e, 4)}`, color, dash: [6, 4],
        values: x.map((c) => (curveX.includes(c) ? a * Math.pow(c / cRef, -alpha) + e : null)) });
    }
  });
  const lossHost = el('div', { 'data-chart': 'fit-loss' });
  host.append(lossHost);
  drawChart(lossHost, { title: 'Loss against compute', xLabel: 'compute C (FLOPs, 6ND)', yLabel: 'loss (nats)', logX: true, logY: true, x, series,
    note: laws.length ? 'dashed: power law with one E shared by all variants' : 'no power law fitted (too few ladder points)' });
  // Multipliers with intervals (piecewise, as published).
  const mx = computes.sort((a, b) => a - b);
  const whiskers: ChartSpec['whiskers'] = [];
  const mSeries: Series[] = variants.map((v, i) => {
    const color = PALETTE[i % PALETTE.length];
    const byC = new Map(piecewise.filter((r) => r.variant === v).map((r) => [num(r.compute), r]));
    for (const r of byC.values()) if (r.interval && r.multiplier !== undefined) whiskers!.push({ x: num(r.compute), lo: num(r.interval.low), hi: num(r.interval.high), color });
    return { label: `${v}`, color, points: true, values: mx.map((c) => (byC.get(c)?.multiplier !== undefined ? num(byC.get(c)!.multiplier) : null)) };
  });
  const multHost = el('div', { 'data-chart': 'fit-multipliers' });
  host.append(multHost);
  drawChart(multHost, { title: 'Compute multiplier against compute (piecewise)', xLabel: 'compute C (FLOPs)', yLabel: 'CM = C_base / C_var', logX: true, x: mx, series: mSeries, whiskers,
    note: `CM > 1: more compute-efficient than the baseline; bars: ${intervalNote(piecewise)} (SVG/PNG downloads)` });
  const table = el('table', { className: 'data', id: 'fit-table' }, el('thead', {}, el('tr', {}, ...['variant', 'label', 'compute', 'loss', '± sd', 'seeds', 'CM', 'interval', 'note'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  for (const r of piecewise) {
    body.append(el('tr', {}, el('td', {}, r.variant), el('td', {}, r.label), el('td', { className: 'num' }, num(r.compute).toExponential(2)), el('td', { className: 'num' }, fmt(num(r.loss), 5)),
      el('td', { className: 'num' }, r.loss_sd === undefined ? '' : fmt(num(r.loss_sd), 2)), el('td', { className: 'num' }, r.seeds), el('td', { className: 'num', 'data-key': 'multiplier' }, r.multiplier === undefined ? '—' : num(r.multiplier).toFixed(3)),
      el('td', {}, r.interval ? `[${num(r.interval.low).toFixed(3)}, ${num(r.interval.high).toFixed(3)}]` : ''), el('td', {}, r.how || r.undefined_reason || '')));
  }
  table.append(body);
  host.append(table);
}

async function renderTuning(host: HTMLElement, sweepId: number): Promise<void> {
  const tuning = await getJson<GetTuningResponse>(`/api/sweeps/${sweepId}/tuning`);
  host.append(el('h3', {}, `Tuning ${tuning.key}: loss against ${tuning.key} per cell (${tuning.tuning})`));
  const values = [...new Set(tuning.cells.flatMap((c) => c.tried.map((t) => num(t.value))))].sort((a, b) => a - b);
  const series: Series[] = [];
  tuning.cells.forEach((cell, i) => {
    const byValue = new Map(cell.tried.map((t) => [num(t.value), t.metric === undefined ? null : num(t.metric)]));
    const color = PALETTE[i % PALETTE.length];
    series.push({ label: `${JSON.stringify(cell.cell)} (${cell.status}${cell.bracketed ? ', bracketed' : ''})`, color, values: values.map((v) => (byValue.has(v) ? byValue.get(v) as number : null)) });
    if (cell.best !== undefined) series.push({ label: `chosen ${fmt(num(cell.best), 3)}`, color, points: true, values: values.map((v) => (v === num(cell.best) ? byValue.get(v) ?? null : null)) });
  });
  const chart = el('div', { 'data-chart': 'tuning' });
  host.append(chart);
  drawChart(chart, { title: `Loss against ${tuning.key}`, xLabel: tuning.key, yLabel: 'final metric', logX: true, x: values, series });
}
