// Two sweeps side by side (#/compare/A/B): each one's progress, its loss curves by cell (seed mean,
// min..max band) on shared axes (the same metric and x axis, the same ranges, a variant one colour in
// both), and a table of their cells' best and last values next to each other: cells match on the rung
// and on every axis both sweeps have (an axis only one sweep has is shown on its side). The numbers of
// the table are the coordinator's (/api/sweeps/ID/results grouped by rung and axes, as `rung results`).
// The metric, x axis, log scales and smoothing follow in the hash's query like the sweep page's.
import { getJson, num } from './api';
import { ChartSpec, dataRange, drawChart, padRange } from './charts';
import { cellCurves, curveMetrics, X_AXES } from './curves';
import { el, fmt, hashParams, setHashParam, stateName, timeText, baselineText } from './format';
import { eta, progressBar } from './sweeps_view';
import { trialInfo } from './sweep_view';
import type { Aggregation, QueryResultsResponse, Sweep, Trial } from 'rung-wire';

interface Side {
  sweep: Sweep;
  trials: Trial[];
  axes: string[];  // its sweep axes but the seed, as dotted keys
}

function axesOf(trials: Trial[]): string[] {
  const keys = new Set<string>();
  for (const t of trials) {
    for (const key of Object.keys(t.assignments || {})) if (key !== 'seed') keys.add(key);
  }
  return [...keys].sort();
}

// One group of a results table: its rung, axis values, and the mean, sd and count of its trials' values.
interface Group { rung: string; axes: Record<string, string>; mean: number; sd: number; count: number }

async function groups(side: Side, metric: string, summary: 'best' | 'last'): Promise<Group[]> {
  const keys = ['rung_label', ...side.axes];
  const results = await getJson<QueryResultsResponse>(`/api/sweeps/${side.sweep.sweep_id}/results?summary=${summary}&metric=${encodeURIComponent(metric)}&group_by=${keys.map(encodeURIComponent).join(',')}`);
  const column = (name: Aggregation) => (results.aggregations || []).indexOf(name);
  return (results.rows || []).map((row) => {
    const values = (row.group_values || []).map((v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v)));
    const axes: Record<string, string> = {};
    side.axes.forEach((key, i) => (axes[key] = values[i + 1]));
    return { rung: values[0], axes, mean: num(row.values[column('AGGREGATION_MEAN')]), sd: num(row.values[column('AGGREGATION_STD')]), count: num(row.values[column('AGGREGATION_COUNT')]) };
  });
}

function sidePanel(side: Side, which: string): HTMLElement {
  const s = side.sweep;
  const c = s.counts;
  const now = Date.now() / 1000;
  return el('div', { className: 'compare-side', 'data-side': which },
    el('h3', {}, `${which}: `, el('a', { href: `#/sweep/${s.sweep_id}` }, s.name), ` (sweep ${s.sweep_id}) `, el('span', { className: 'state st-' + stateName(s.state) }, stateName(s.state))),
    progressBar(c),
    el('p', {}, `${num(c.succeeded) + num(c.early_stopped)}/${num(c.total)} done · ${num(c.running) + num(c.leased)} running · ${num(c.failed)} failed`,
      eta(s, now) ? ` · ETA ${eta(s, now)}` : '', el('br'),
      `metric ${s.metric_name} (${s.metric_goal}) · baseline ${baselineText(s.baseline)} · axes ${side.axes.join(', ') || 'none'} · rungs ${[...new Set(side.trials.map((t) => t.rung_label))].join(', ')} · created ${timeText(s.created_at)}`));
}

export async function renderCompare(root: HTMLElement, a: number, b: number): Promise<void> {
  const load = async (id: number): Promise<Side> => {
    const [sweep, listed] = await Promise.all([getJson<Sweep>(`/api/sweeps/${id}`), getJson<{ trials: Trial[] }>(`/api/sweeps/${id}/trials`)]);
    return { sweep, trials: listed.trials, axes: axesOf(listed.trials) };
  };
  const [{ sweeps }, A, B] = await Promise.all([getJson<{ sweeps: Sweep[] }>('/api/sweeps'), load(a), load(b)]);
  const sides: [Side, Side] = [A, B];
  document.getElementById('where')!.textContent = ` / compare ${A.sweep.name} ↔ ${B.sweep.name}`;
  const params = hashParams();

  // ---- which sweeps: changing one changes the route (the ids are in the path)
  const pick = (which: 0 | 1) => {
    const select = el('select', { name: which ? 'b' : 'a', onchange: () => {
      const ids = [a, b];
      ids[which] = Number(select.value);
      const q = location.hash.indexOf('?');
      location.hash = `#/compare/${ids[0]}/${ids[1]}${q < 0 ? '' : location.hash.slice(q)}`;
    } }, ...sweeps.map((s) => el('option', { value: s.sweep_id, selected: num(s.sweep_id) === (which ? b : a) }, `${s.sweep_id}: ${s.name}`)));
    return select;
  };
  root.append(el('h2', {}, 'Compare two sweeps'),
    el('div', { className: 'controls' }, 'A ', pick(0), ' B ', pick(1), el('a', { href: `#/compare/${b}/${a}${location.hash.includes('?') ? location.hash.slice(location.hash.indexOf('?')) : ''}` }, 'swap')),
    el('section', { className: 'two', id: 'compare-progress' }, sidePanel(A, 'A'), sidePanel(B, 'B')));

  // ---- curves on shared axes
  const metricNames = curveMetrics(A.sweep.metric_name, B.sweep.metric_name);
  const state = {
    metric: metricNames.includes(params.get('metric') || '') ? params.get('metric')! : A.sweep.metric_name,
    x: X_AXES[params.get('x') || ''] ? params.get('x')! : 'step',
    logX: params.get('logx') === '1', logY: params.get('logy') === '1', smoothing: Number(params.get('smooth') || 0) || 0,
  };
  const curves: [Map<number, number[][]>, Map<number, number[][]>] = [new Map(), new Map()];
  const hosts = [el('div', { id: 'compare-curves-a' }), el('div', { id: 'compare-curves-b' })];
  const select = (name: string, values: string[], labels: string[], current: string, apply: (v: string) => void) =>
    el('select', { name, onchange: (e: Event) => { const v = (e.target as HTMLSelectElement).value; apply(v); setHashParam(name, v); } },
      ...values.map((v, i) => el('option', { value: v, selected: v === current }, labels[i])));
  const box = (name: string, label: string, current: boolean, apply: (v: boolean) => void) => {
    const input = el('input', { type: 'checkbox', name, checked: current, onchange: () => { apply(input.checked); setHashParam(name, input.checked ? '1' : null); drawCurves(); } });
    return el('label', {}, input, ' ' + label);
  };
  const slider = el('input', { type: 'range', name: 'smooth', min: '0', max: '0.98', step: '0.02', value: String(state.smoothing),
    onchange: () => { state.smoothing = Number(slider.value); setHashParam('smooth', slider.value === '0' ? null : slider.value); drawCurves(); } });
  const tableHost = el('section', { id: 'compare-table' });
  root.append(el('section', {}, el('h3', {}, 'Loss curves by cell (shared axes)'), el('div', { className: 'controls' },
    'metric ', select('metric', metricNames, metricNames, state.metric, (v) => { state.metric = v; loadCurves(); renderTable(); }),
    ' x ', select('x', Object.keys(X_AXES), Object.values(X_AXES).map((x) => x.label), state.x, (v) => { state.x = v; loadCurves(); }),
    box('logx', 'log x', state.logX, (v) => (state.logX = v)), box('logy', 'log y', state.logY, (v) => (state.logY = v)),
    el('label', {}, ' smoothing ', slider)), el('div', { className: 'two' }, ...hosts)), tableHost);

  const variants = [...new Set([...A.trials, ...B.trials].map((t) => trialInfo(t).variant))].sort();
  function drawCurves() {
    const specs: ChartSpec[] = sides.map((side, i) => {
      const spec = cellCurves(curves[i], side.trials.map(trialInfo), state.metric, state.x, state.smoothing, state.logX, state.logY, variants);
      spec.title = `${'AB'[i]}: ${side.sweep.name}, ${spec.title}`;
      spec.height = 320;
      return spec;
    });
    // The same ranges on both sides: the union of the two charts' data.
    const ranges = specs.map(dataRange);
    const union = (axis: 'x' | 'y', log: boolean): [number, number] | undefined => {
      const r = ranges.map((one) => one[axis]).filter((one): one is [number, number] => one !== null);
      return r.length ? padRange([Math.min(...r.map((one) => one[0])), Math.max(...r.map((one) => one[1]))], log) : undefined;
    };
    const xRange = union('x', state.logX), yRange = union('y', state.logY);
    specs.forEach((spec, i) => { spec.xRange = xRange; spec.yRange = yRange; drawChart(hosts[i], spec); });
  }
  async function loadCurves() {
    const asked = `${state.metric}|${state.x}`;
    const data = await Promise.all(sides.map((side) => {
      const points = Math.max(50, Math.min(400, Math.floor(200000 / Math.max(1, side.trials.length))));
      return getJson(`/api/sweeps/${side.sweep.sweep_id}/curves?metric=${encodeURIComponent(state.metric)}&x=${state.x}&points=${points}`);
    }));
    if (asked !== `${state.metric}|${state.x}`) return;  // the view changed meanwhile: a newer load follows
    data.forEach((d, i) => { curves[i].clear(); for (const t of d.trials) curves[i].set(num(t.trial_id), t.points); });
    drawCurves();
  }

  // ---- the cells' best and last values next to each other
  async function renderTable() {
    const metric = state.metric;
    tableHost.textContent = '';
    tableHost.append(el('h3', {}, `Cells: ${metric}, best and last, A beside B`));
    let results: Group[][][];
    try {
      results = await Promise.all(sides.map((side) => Promise.all([groups(side, metric, 'best'), groups(side, metric, 'last')])));
    } catch (error: any) {
      tableHost.append(el('p', { className: 'error' }, String(error.message || error)));
      return;
    }
    if (metric !== state.metric) return;
    const common = A.axes.filter((k) => B.axes.includes(k));
    const only = sides.map((side) => side.axes.filter((k) => !common.includes(k)));
    const short = (key: string) => key.replace(/^.*\./, '');
    const keyOf = (g: Group) => JSON.stringify([g.rung, ...common.map((k) => g.axes[k])]);
    const rungOrder = (label: string) => {
      const t = A.trials.find((x) => x.rung_label === label) || B.trials.find((x) => x.rung_label === label);
      return t ? num(t.parameters_nonembedding) : Infinity;
    };
    // Rows: every pair of an A cell and a B cell with the same key; a cell without a partner alone.
    const byKey = new Map<string, [Group[], Group[]][]>();
    const keys = new Map<string, Group>();
    sides.forEach((_, i) => {
      for (const g of results[i][0]) {
        const key = keyOf(g);
        if (!byKey.has(key)) { byKey.set(key, []); keys.set(key, g); }
        const last = results[i][1].find((l) => l.rung === g.rung && Object.keys(g.axes).every((k) => l.axes[k] === g.axes[k]));
        byKey.get(key)!.push(i === 0 ? [[g, last!], []] : [[], [g, last!]]);
      }
    });
    const rows: { key: string; sideA: Group[]; sideB: Group[] }[] = [];
    for (const [key, entries] of byKey) {
      const as = entries.filter((e) => e[0].length).map((e) => e[0]);
      const bs = entries.filter((e) => e[1].length).map((e) => e[1]);
      if (!as.length) for (const bb of bs) rows.push({ key, sideA: [], sideB: bb });
      else if (!bs.length) for (const aa of as) rows.push({ key, sideA: aa, sideB: [] });
      else for (const aa of as) for (const bb of bs) rows.push({ key, sideA: aa, sideB: bb });
    }
    rows.sort((x, y) => {
      const gx = keys.get(x.key)!, gy = keys.get(y.key)!;
      return rungOrder(gx.rung) - rungOrder(gy.rung) || x.key.localeCompare(y.key);
    });
    const goal = A.sweep.metric_goal === B.sweep.metric_goal ? A.sweep.metric_goal : '';
    const value = (g: Group | undefined, which: string, side: string) => {
      if (!g || !isFinite(g.mean)) return el('td', { className: 'num', 'data-key': `${side}-${which}` }, '–');
      return el('td', { className: 'num', 'data-key': `${side}-${which}`, 'data-value': String(g.mean), title: `${g.count} trial(s) with a value` },
        fmt(g.mean, 5), g.count > 1 && isFinite(g.sd) ? el('small', {}, ` ± ${fmt(g.sd, 2)}`) : '');
    };
    const delta = (x: Group | undefined, y: Group | undefined, which: string) => {
      if (!x || !y || !isFinite(x.mean) || !isFinite(y.mean)) return el('td', { className: 'num', 'data-key': `delta-${which}` }, '');
      const d = y.mean - x.mean;
      const better = goal === 'minimize' ? d < 0 : goal === 'maximize' ? d > 0 : false;
      const worse = goal === 'minimize' ? d > 0 : goal === 'maximize' ? d < 0 : false;
      return el('td', { className: 'num' + (better ? ' better' : worse ? ' worse' : ''), 'data-key': `delta-${which}`, 'data-value': String(d) }, (d > 0 ? '+' : '') + fmt(d, 4));
    };
    const header = ['rung', ...common.map(short), ...only[0].map((k) => 'A ' + short(k)), 'A seeds', 'A best', 'A last',
      ...only[1].map((k) => 'B ' + short(k)), 'B seeds', 'B best', 'B last', 'Δ best (B − A)', 'Δ last (B − A)'];
    const table = el('table', { className: 'data', id: 'compare-cells' }, el('thead', {}, el('tr', {}, ...header.map((h) => el('th', { className: /seeds|best|last/.test(h) ? 'num' : '' }, h)))));
    const body = el('tbody');
    for (const row of rows) {
      const g = keys.get(row.key)!;
      const [aBest, aLast] = row.sideA, [bBest, bLast] = row.sideB;
      body.append(el('tr', { 'data-cell': row.key },
        el('td', {}, g.rung), ...common.map((k) => el('td', {}, g.axes[k])),
        ...only[0].map((k) => el('td', {}, aBest ? aBest.axes[k] : '')), el('td', { className: 'num' }, aBest ? String(aBest.count) : ''), value(aBest, 'best', 'a'), value(aLast, 'last', 'a'),
        ...only[1].map((k) => el('td', {}, bBest ? bBest.axes[k] : '')), el('td', { className: 'num' }, bBest ? String(bBest.count) : ''), value(bBest, 'best', 'b'), value(bLast, 'last', 'b'),
        delta(aBest, bBest, 'best'), delta(aLast, bLast, 'last')));
    }
    table.append(body);
    tableHost.append(rows.length ? table : el('p', { className: 'empty' }, 'Neither sweep has a trial with a value yet.'),
      el('p', { className: 'note' }, `Cells match on the rung${common.length ? ' and ' + common.join(', ') : ''}` +
        (only[0].length || only[1].length ? `; axes only one sweep has (${[...only[0], ...only[1]].join(', ')}) are shown on its side` : '') +
        `. Mean ± sd over seeds of each trial's best and last ${metric} (the coordinator's results, as rung results --summary best|last)` +
        (goal ? `; Δ green where B is better (${goal}).` : '; the sweeps\' goals differ: Δ is not coloured.')));
  }

  await Promise.all([loadCurves(), renderTable()]);
}
