// A trial's diagnostics as charts, the quantities and labels of `rung diag --plot`
// (sweeps/plot/diagnostics_plot.cc, pair_profile_plot.cc): E_r by query position per head, the
// frequency-pair usage heatmap (pair x head, the dominant band marked), the pair-by-distance profile
// per head (one heatmap per layer, symmetric about 0), the gap-counting fit (bucket means of ln Lambda
// against ln ln n and the fitted line), the loss beyond the training length (against the evaluation
// length, and per position), the heads table and the failure modes (mean over heads per context M
// and precision, as `rung diag --table failure_modes`) with a verdict in words, and the probe's accuracy
// (needle depth x prompt length, a heatmap per extension method, as probe_plot.cc draws it). Documents:
// /api/trials/ID/diagnostics, typed as the proto's TrialDiagnostic (docs/science.md sections 7, 9 and 12).
// And a sweep's loss beyond the training length, a line per trial and method, as `rung plot SWEEP`
// draws it (sweeps/plot/extrapolation_plot.h), from /api/sweeps/ID/extrapolation.
import { ChartSpec, drawChart, PALETTE, Series } from './charts';
import { drawHeatmap, HeatmapSpec } from './heatmap';
import { el, fmt, hashParams, setHashParam } from './format';
import type { AttentionDiagnostics, AttentionHead, AttentionLayer, ExtrapolationResult, GapCounting, HeadFailureModes, ProbeResult, Trial, TrialDiagnostic } from 'rung-wire';

const DASHES: (number[] | undefined)[] = [undefined, [8, 4], [2, 3], [10, 3, 2, 3], [4, 4]];

// A measured number, or null where there is none (proto3 JSON writes NaN as "NaN"; int64 is a string).
const n = (value: unknown): number | null => {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && isFinite(number) ? number : null;
};

interface Head { label: string; layer: number; head: number; doc: AttentionHead }

function headsOf(attention: AttentionDiagnostics): Head[] {
  const heads: Head[] = [];
  for (const layer of attention.layers) {
    for (const head of layer.heads) heads.push({ label: `L${layer.layer}.h${head.head}`, layer: Number(layer.layer), head: Number(head.head), doc: head });
  }
  return heads;
}

function renyi(attention: AttentionDiagnostics): number { return n(attention.renyi_order) ?? 2; }

// E_r against the query position, one line per head (a colour per layer, a dash per head), beside the
// uniform row's E = position.
export function effectiveLengthSpec(title: string, attention: AttentionDiagnostics): ChartSpec {
  const heads = headsOf(attention);
  const layers = [...new Set(heads.map((h) => h.layer))];
  const positions = Math.max(0, ...heads.map((h) => h.doc.effective_length_by_position.length));
  const x = Array.from({ length: positions }, (_, i) => i + 1);
  const r = renyi(attention);
  const name = `E_${fmt(r, 3)}`;
  const series: Series[] = [{ label: `uniform (${name} = position)`, color: '#999999', dash: [3, 3], values: x.slice() }];
  heads.forEach((h, i) => {
    const values = h.doc.effective_length_by_position;
    series.push({ label: h.label, color: PALETTE[i % PALETTE.length], dash: DASHES[layers.indexOf(h.layer) % DASHES.length], values: x.map((_, j) => n(values[j])) });
  });
  return {
    title: `${title}: effective attention length by position`, xLabel: 'query position (keys visible)',
    yLabel: r === 2 ? 'effective attention length E_2 = 1/Σ a²' : `effective attention length ${name} = (Σ a^${fmt(r, 3)})^(1/(1−${fmt(r, 3)}))`,
    // 1 <= E <= the keys visible: the axes end at the positions measured.
    logX: true, logY: true, x, series: heads.length ? series : [], xRange: [1, Math.max(2, positions)], yRange: [1, Math.max(2, positions)],
    note: `T = ${attention.length}; ${attention.sequences} validation sequence(s), averaged per position; ` +
      `a colour per head, ${layers.length > 1 ? 'solid layer ' + layers[0] + ', dashed layer ' + layers[1] + (layers.length > 2 ? ', …' : '') + '; ' : ''}grey dots: every visible key weighted alike`,
  };
}

// Pair usage per head over its maximum (rows: layer.head; columns: pairs), the dominant band marked.
export function pairUsageSpec(title: string, attention: AttentionDiagnostics): HeatmapSpec {
  const heads = headsOf(attention);
  const pairs = Math.max(0, ...heads.map((h) => h.doc.pair_usage.length));
  const values = heads.map((h) => {
    const usage: (number | null)[] = h.doc.pair_usage.map(n);
    const peak = Math.max(0, ...usage.filter((v): v is number => v !== null));
    return Array.from({ length: pairs }, (_, f) => (usage[f] === null || usage[f] === undefined ? null : peak > 0 ? (usage[f] as number) / peak : 0));
  });
  const marks = heads.map((h, row) => ({ row, column: n(h.doc.dominant_pair) ?? -1 })).filter((m) => m.column >= 0 && m.column < pairs);
  return {
    title: `${title}: frequency-pair usage`, xLabel: 'frequency pair (0 = fastest)', yLabel: 'layer.head',
    rows: heads.map((h) => h.label), columns: Array.from({ length: pairs }, (_, f) => String(f)),
    panels: [{ title: '', values, marks }], diverging: false, valueLabel: 'pair usage / head maximum', range: [0, 1],
    markLabel: marks.length ? 'dominant band: the pair whose contribution varies most with distance (not the usage maximum)' : undefined,
  };
}

// One layer's pair-by-distance profiles: a panel per head, pairs by distance bins, symmetric about 0.
export function pairProfileSpec(title: string, layer: AttentionLayer): HeatmapSpec {
  const edges: number[] = layer.pair_profile_edges.map(Number);
  const heads = layer.heads.filter((h) => h.pair_profile.length);
  const pairs = Math.max(0, ...heads.map((h) => h.pair_profile.length));
  const bins = Math.max(0, edges.length - 1);
  return {
    title: `${title}: layer ${layer.layer}, mean pair term of the unscaled logit by relative distance`,
    xLabel: 'relative distance (bin start)', yLabel: 'pair (0 = fastest)',
    rows: Array.from({ length: pairs }, (_, f) => String(f)), columns: edges.slice(0, bins).map((e) => fmt(e, 6)),
    panels: heads.map((h) => ({ title: `head ${h.head}`, values: h.pair_profile.map((row) => Array.from({ length: bins }, (_, b) => n(row.values[b]))) })),
    diverging: true, valueLabel: 'mean pair term (unscaled logit); grey: no visible (query, key) pair at that distance',
  };
}

// Gap counting: per layer and pooled, the bucket means of ln Lambda against ln ln n, and the OLS line
// of slope xi_Lambda through their mean (as rung diag --plot draws it).
export function gapCountingSpec(title: string, attention: AttentionDiagnostics): ChartSpec {
  const curves: { label: string; points: [number, number][]; slope: number | null }[] = [];
  const add = (label: string, gap: GapCounting | undefined) => {
    if (!gap) return;
    const points: [number, number][] = [];
    for (const b of gap.buckets) {
      const x = Math.log(Math.log(Number(b.n))), y = n(b.mean_log_lambda);
      if (isFinite(x) && y !== null) points.push([x, y]);
    }
    if (!points.length) return;  // every row a tie
    const slope = n(gap.xi_lambda);
    const half = n(gap.xi_lambda_half_iqr);
    curves.push({ label: `${label}: ξ_Λ = ${slope === null ? '–' : slope.toFixed(2)}${half === null ? '' : ' ± ' + half.toFixed(2)}`, points, slope });
  };
  for (const layer of attention.layers) add(`layer ${layer.layer}`, layer.gap_counting);
  add('pooled', attention.pooled);
  const x = [...new Set(curves.flatMap((c) => c.points.map((p) => p[0])))].sort((a, b) => a - b);
  const series: Series[] = [];
  curves.forEach((c, i) => {
    const color = c.label.startsWith('pooled') ? '#000000' : PALETTE[i % PALETTE.length];
    const byX = new Map(c.points);
    series.push({ label: c.label, color, points: true, values: x.map((v) => (byX.has(v) ? byX.get(v)! : null)) });
    if (c.slope !== null) {
      const mx = c.points.reduce((a, p) => a + p[0], 0) / c.points.length, my = c.points.reduce((a, p) => a + p[1], 0) / c.points.length;
      const lo = Math.min(...c.points.map((p) => p[0])), hi = Math.max(...c.points.map((p) => p[0]));
      series.push({ label: `${c.label.split(':')[0]}: fitted line`, color, width: 2, values: x.map((v) => (v >= lo && v <= hi ? my + c.slope! * (v - mx) : null)) });
    }
  });
  const grid = attention.grid.map((g) => fmt(Number(g), 6)).join(' ');
  return {
    title: `${title}: gap counting`, xLabel: 'ln ln n', yLabel: 'mean ln Λ (unscaled score rows)', x, series,
    note: `exponents over n in ${grid || "the record's n-grid"} (rows pooled per n, ± half-IQR over (sequence, layer, head) units)` +
      (attention.grid_fallback ? '; grid fallback: ' + (attention.warning || 'too few lengths below T') : ''),
  };
}

// Loss against the evaluation length (as a multiple of T) per extension method (whole window, and
// positions >= T), with the trial's final validation loss at T.
export function extrapolationSpec(title: string, table: ExtrapolationResult[], trainLength: number, finalLoss: number): ChartSpec {
  const methods = [...new Set(table.map((e) => String(e.method)))];
  const hasT = isFinite(trainLength) && trainLength > 0;
  const x = [...new Set([...table.map((e) => Number(e.multiple)), ...(hasT ? [1] : [])])].sort((a, b) => a - b);
  const series: Series[] = [];
  methods.forEach((method, i) => {
    const rows = table.filter((e) => String(e.method) === method);
    const at = (field: 'val_loss' | 'val_loss_extrap') => x.map((m) => { const row = rows.find((e) => Number(e.multiple) === m); return row ? n(row[field]) : null; });
    series.push({ label: `${method}: whole window`, color: PALETTE[i % PALETTE.length], values: at('val_loss') });
    series.push({ label: `${method}: positions ≥ T`, color: PALETTE[i % PALETTE.length], dash: [6, 4], values: at('val_loss_extrap') });
  });
  if (isFinite(finalLoss) && hasT) series.push({ label: 'at T: the final validation loss', color: '#000000', points: true, values: x.map((m) => (m === 1 ? finalLoss : null)) });
  return {
    title: `${title}: loss beyond the training length`, xLabel: `evaluation length / training length (T = ${hasT ? trainLength : '?'} tokens)`, yLabel: 'validation loss (nats)',
    x, series: table.length ? series : [],
    note: table.length ? `colour: extension method; solid: the whole window, dashed: only the positions ≥ T; lengths ${[...new Set(table.map((e) => Number(e.length)))].join(', ')} tokens`
      : 'train.extrapolation_multiples was empty',
  };
}

// How a probe was scored, as `rung diag` says it (the heading) and as `rung diag --plot` titles it.
const PROBE_SCORES: Record<string, { words: string; short: string }> = {
  decode: { words: 'greedy decode of the answer, exact match', short: 'greedy decode' },
  next_token: { words: 'the next token after the query', short: 'next token' },
  choice: { words: 'the largest logit among the four answers', short: 'choice among 0-3' },
};

export function probeScore(score: string): { words: string; short: string } {
  return PROBE_SCORES[score] || { words: score, short: score };
}

// A probe's accuracy as `rung diag --plot` draws it (sweeps/plot/probe_plot.cc): a heatmap per extension
// method (in the record's order), needle depth (rows) by prompt length (columns), every length and depth
// of any method ascending, accuracy on a fixed 0..1 scale, each cell labelled correct/instances; a cell
// the method was not scored at (within the training length only none is) is grey. `cells`: one probe
// kind and scoring.
export function probeSpecs(title: string, cells: ProbeResult[]): { method: string; spec: HeatmapSpec }[] {
  const lengths = [...new Set(cells.map((c) => Number(c.length)))].sort((a, b) => a - b);
  const depths = [...new Set(cells.map((c) => Number(c.depth)))].sort((a, b) => a - b);
  const methods = [...new Set(cells.map((c) => String(c.method) || 'none'))];
  const kind = cells.length ? String(cells[0].probe) : '';
  const score = probeScore(cells.length ? String(cells[0].score) : '');
  return methods.map((method) => {
    const mine = cells.filter((c) => (String(c.method) || 'none') === method);
    const at = (depth: number, length: number) => mine.find((c) => Number(c.depth) === depth && Number(c.length) === length);
    const instances = [...new Set(mine.map((c) => Number(c.instances)))];
    return {
      method,
      spec: {
        title: `${title}: ${kind} accuracy (${score.short}, ${method})`, xLabel: 'prompt length (tokens)', yLabel: 'needle depth',
        rows: depths.map((d) => fmt(d, 2)), columns: lengths.map(String),
        panels: [{
          title: '',
          values: depths.map((d) => lengths.map((l) => { const c = at(d, l); return c ? n(c.accuracy) : null; })),
          labels: depths.map((d) => lengths.map((l) => { const c = at(d, l); return c ? `${c.correct}/${c.instances}` : null; })),
        }],
        diverging: false, valueLabel: 'accuracy', range: [0, 1],
        note: `each cell: correct/instances (${instances.join(', ')} prompts); depth 0: needle right after the prefix, 1: right before the query` +
          (mine.length < depths.length * lengths.length ? `; grey: not scored with ${method}` : ''),
      },
    };
  });
}

// Paper 003's indexing probe as `rung diag --plot` draws it (probe_plot.cc, paper 003 Fig. 9):
// accuracy against the prompts' mean tokens (log axis), bars of +-1 sd of the lists' accuracies, chance
// dashed and the best position-blind accuracy dotted. `cells`: one indexing probe's, each a list length.
export function indexingSpec(title: string, cells: ProbeResult[]): ChartSpec {
  const sorted = [...cells].sort((a, b) => (n(a.mean_tokens) ?? 0) - (n(b.mean_tokens) ?? 0));
  const accuracy = sorted.map((c) => n(c.accuracy));
  const sd = sorted.map((c) => n(c.accuracy_sd) ?? 0);
  const score = probeScore(cells.length ? String(cells[0].score) : '');
  const lists = cells.length ? n(cells[0].lists) : null;
  // One list length is a point, not a line: markers then (uPlot draws no line through one point).
  const single = sorted.length < 2;
  const x = sorted.map((c) => n(c.mean_tokens) ?? 0);
  return {
    title: `${title}: indexing accuracy (paper 003 D.2; ${score.short}, ${lists} lists per length, bars +-1 sd)`,
    xLabel: 'prompt tokens (mean over the prompts of a list length)', yLabel: 'accuracy', logX: true,
    x,
    series: [
      { label: 'accuracy', color: PALETTE[0], values: accuracy, points: single },
      { label: 'chance (1/4)', color: PALETTE[1], values: sorted.map((c) => n(c.chance) ?? 0.25), dash: [6, 4], points: single },
      { label: 'blind to position (the mode of each list)', color: PALETTE[8], values: sorted.map((c) => n(c.position_blind)),
        dash: [2, 3], points: single },
    ],
    whiskers: accuracy.flatMap((a, i) => (a === null ? [] : [{ x: x[i], lo: a - sd[i], hi: a + sd[i], color: PALETTE[0] }])),
    yRange: [0, 1],
    note: `list lengths ${sorted.map((c) => String(c.elements)).join(', ')}; each point: correct/instances ` +
      sorted.map((c) => `${c.correct}/${c.instances}`).join(', '),
  };
}

// The probe of a trial's final record (the document named "probe"), in its own block (#diag-probe): a
// heading naming each probe kind and its scoring, then its heatmaps (probeSpecs) or, for the indexing
// probe, its line (indexingSpec); a line saying so where the trial has none.
function renderProbe(host: HTMLElement, title: string, documents: TrialDiagnostic[]): void {
  const block = el('div', { id: 'diag-probe' });
  host.append(block);
  const cells: ProbeResult[] = [...documents].reverse().find((d) => d.probe)?.probe?.results ?? [];
  if (!cells.length) {
    block.append(el('p', { className: 'empty' }, 'No probe stored (train.probe.kind was empty, or the trial has not finished).'));
    return;
  }
  for (const key of [...new Set(cells.map((c) => `${c.probe}|${c.score}`))]) {
    const [kind, score] = key.split('|');
    block.append(el('h4', { className: 'probe-heading', 'data-probe': kind, 'data-score': score },
      `Probe: ${kind}, scored by ${probeScore(score).words}`));
    const mine = cells.filter((c) => c.probe === kind && c.score === score);
    if (kind === 'indexing') {
      const node = el('div', { 'data-chart': 'diag-probe', 'data-probe': kind, 'data-method': 'none' });
      block.append(node);
      drawChart(node, indexingSpec(title, mine));
      continue;
    }
    for (const { method, spec } of probeSpecs(title, mine)) {
      const node = el('div', { 'data-chart': 'diag-probe', 'data-probe': kind, 'data-method': method });
      block.append(node);
      drawHeatmap(node, spec, 'No probe cell of this method.');
    }
  }
}

// A trial of a sweep and its evaluations beyond the training length (/api/sweeps/ID/extrapolation).
export interface EvaluatedTrial { trial: Trial; val_loss: number | null; results: ExtrapolationResult[] }

// An axis value as `rung plot` writes it (sweeps/plot/gnuplot_script.h, ReadableVariant): an object
// value's variant first, then its other entries as name=value.
function readableValue(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  const entries: [string, string][] = [];
  const walk = (object: Record<string, unknown>) => {
    for (const [key, inner] of Object.entries(object)) {
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) walk(inner as Record<string, unknown>);
      else entries.push([key, typeof inner === 'string' ? inner : JSON.stringify(inner)]);
    }
  };
  walk(value as Record<string, unknown>);
  const variant = entries.filter(([key]) => key === 'variant').map(([, v]) => v);
  return [...variant, ...entries.filter(([key, v]) => key !== 'variant' && v !== '').map(([key, v]) => `${key}=${v}`)].join(' ');
}

// What tells each trial apart from the others, as `rung plot`'s figures label it (sweeps/plot/
// extrapolation_plot.h): the axes whose values differ between the trials, each as "<last part of the
// key> <value>" (a variant by its value alone); an axis over train.extrapolation_methods left out
// (each line names its method); "" when nothing differs.
export function evaluatedTrialLabels(entries: EvaluatedTrial[]): string[] {
  const keys = [...new Set(entries.flatMap((e) => Object.keys(e.trial.assignments || {})))];
  const differing = keys.filter((key) => !key.endsWith('extrapolation_methods') &&
    new Set(entries.map((e) => JSON.stringify((e.trial.assignments || {})[key] ?? null))).size > 1);
  return entries.map((e) => differing.map((key) => {
    const value = (e.trial.assignments || {})[key];
    if (value === undefined || value === null || value === '') return '';
    const name = key.replace(/^.*\./, '');
    return typeof value === 'object' ? readableValue(value) : name === 'variant' ? String(value) : `${name} ${value}`;
  }).filter((text) => text !== '').join(' '));
}

// A sweep's loss against the evaluation length, one chart per rung (one when its evaluated trials share
// one): a line per trial label and extension method through the training length T (the trial's
// validation loss, or the method's own 1x evaluation) and each length evaluated, a tick at each, a
// grey bar at T. Several labels: a colour per label, a dash per method; one label: a colour per method.
export function sweepExtrapolationSpecs(title: string, entries: EvaluatedTrial[]): { rung: string; spec: ChartSpec }[] {
  const rungs = [...new Set(entries.map((e) => e.trial.rung_label))];
  return rungs.map((rung) => {
    const members = entries.filter((e) => e.trial.rung_label === rung);
    const labels = evaluatedTrialLabels(members);
    const distinct = [...new Set(labels)];
    const methods = [...new Set(members.flatMap((e) => e.results.map((r) => String(r.method))))];
    const trainLengths = new Set<number>();
    const lines: { label: string; method: string; byLength: Map<number, number | null> }[] = [];
    members.forEach((e, i) => {
      const first = e.results.find((r) => Number(r.multiple) > 0);
      const T = first ? Number(first.length) / Number(first.multiple) : 0;
      if (T > 0) trainLengths.add(T);
      for (const method of [...new Set(e.results.map((r) => String(r.method)))]) {
        const byLength = new Map<number, number | null>();
        if (T > 0 && n(e.val_loss) !== null) byLength.set(T, n(e.val_loss));
        for (const r of e.results) if (String(r.method) === method) byLength.set(Number(r.length), n(r.val_loss));  // a 1x evaluation replaces val_loss
        lines.push({ label: labels[i], method, byLength });
      }
    });
    const x = [...new Set(lines.flatMap((l) => [...l.byLength.keys()]))].sort((a, b) => a - b);
    const series: Series[] = lines.map((l) => {
      const m = methods.indexOf(l.method);
      return {
        label: l.label ? `${l.label} (${l.method})` : l.method,
        color: PALETTE[(distinct.length > 1 ? distinct.indexOf(l.label) : m) % PALETTE.length],
        dash: distinct.length > 1 ? DASHES[m % DASHES.length] : undefined, width: 2,
        values: x.map((length) => l.byLength.get(length) ?? null),
      };
    });
    const all = series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    const whiskers = all.length ? [...trainLengths].map((T) => ({ x: T, lo: Math.min(...all), hi: Math.max(...all), color: '#777777' })) : [];
    const lengths = [...trainLengths].join(', ');
    return {
      rung,
      spec: {
        title: `${title}${rungs.length > 1 ? ` rung ${rung}` : ''}: loss against the evaluation length`,
        xLabel: 'evaluation length (tokens)', yLabel: 'validation loss (nats)', logX: true, x, xTicks: x, series, whiskers,
        note: `${members.length} trial(s); ${distinct.length > 1 ? 'colour: the trial (its axis values that differ), dash: extension method' : 'colour: extension method'}; ` +
          `grey bar: the training length T = ${lengths || '?'} (there, the trial's validation loss)`,
      },
    };
  });
}

// The per-position loss of every evaluated length and method; a vertical line at T.
export function perPositionSpec(title: string, table: ExtrapolationResult[], trainLength: number): ChartSpec {
  const rows = table.filter((e) => e.val_loss_per_position.length);
  const positions = Math.max(0, ...rows.map((e) => e.val_loss_per_position.length));
  const x = Array.from({ length: positions }, (_, i) => i + 1);
  const methods = [...new Set(rows.map((e) => String(e.method)))];
  const multiples = [...new Set(rows.map((e) => Number(e.multiple)))].sort((a, b) => a - b);
  const series: Series[] = rows.map((e) => ({
    label: `${e.multiple}x, ${e.method} (mean ${fmt(Number(e.val_loss), 4)})`, color: PALETTE[methods.indexOf(String(e.method)) % PALETTE.length],
    dash: DASHES[multiples.indexOf(Number(e.multiple)) % DASHES.length], width: 1.2,
    values: x.map((_, i) => n(e.val_loss_per_position[i])),
  }));
  const all = series.flatMap((s) => s.values).filter((v): v is number => v !== null);
  const whiskers = all.length && trainLength > 0 ? [{ x: trainLength, lo: Math.min(...all), hi: Math.max(...all), color: '#777777' }] : [];
  const dashNames = ['solid', 'dashed', 'dotted', 'dash-dot', 'short dashes'];
  return {
    title: `${title}: validation loss per position`, xLabel: 'position', yLabel: 'validation loss (nats)', x, series, whiskers,
    note: rows.length ? `grey line: the training length T = ${trainLength}; colour: method; ${multiples.map((m, i) => `${dashNames[i % dashNames.length]} ${m}x`).join(', ')}`
      : 'no per-position losses beyond the training length',
  };
}

// The CLI's heads table: E_r at T/8, T/2, T, pair-usage CV, effective base, dominant band.
function headsTable(attention: AttentionDiagnostics): HTMLElement {
  const T = Number(attention.length) || 0;
  const at = [Math.max(1, Math.floor(T / 8)), Math.max(1, Math.floor(T / 2)), T];
  const r = `E${fmt(renyi(attention), 3)}@`;
  const table = el('table', { className: 'data', id: 'diag-heads' }, el('thead', {}, el('tr', {},
    ...['layer', 'head', ...at.map((p) => r + p), 'pair usage CV', 'effective base', 'dominant pair', 'dominant wavelength / T'].map((h, i) => el('th', { className: i > 1 ? 'num' : '' }, h)))));
  const body = el('tbody');
  for (const h of headsOf(attention)) {
    const e = h.doc.effective_length_by_position;
    const cells = [...at.map((p) => n(e[p - 1])), n(h.doc.pair_usage_cv), n(h.doc.effective_base), n(h.doc.dominant_pair), n(h.doc.dominant_wavelength_over_training_length)];
    body.append(el('tr', {}, el('td', {}, String(h.layer)), el('td', {}, String(h.head)),
      ...cells.map((v) => el('td', { className: 'num' }, v === null ? '–' : fmt(v, 4)))));
  }
  table.append(body);
  return table;
}

const STATISTICS = ['position_inversion', 'position_inversion_deviation', 'position_aliasing_fraction', 'position_aliasing_pairs', 'token_inversion', 'token_aliasing'] as const;
type Statistic = typeof STATISTICS[number];

// One (M, precision) of a trial's failure modes: each statistic's mean over heads, null where none measured.
export type FailureRow = { length: number; precision: string; heads: number } & Record<Statistic, number | null>;

// The heads' failure-mode statistics averaged per (M, precision), as rung diag does.
export function failureModeRows(attention: AttentionDiagnostics): FailureRow[] {
  const sums = new Map<string, { length: number; precision: string; sums: Partial<Record<Statistic, [number, number]>> }>();
  let heads = 0;
  for (const h of headsOf(attention)) {
    const modes: HeadFailureModes[] = h.doc.failure_modes;
    if (!modes.length) continue;
    heads++;
    for (const entry of modes) {
      const key = `${entry.length}|${entry.precision}`;
      if (!sums.has(key)) sums.set(key, { length: Number(entry.length), precision: String(entry.precision), sums: {} });
      const cell = sums.get(key)!;
      for (const s of STATISTICS) {
        const v = n(entry[s]);
        if (v === null) continue;
        const [total, count] = cell.sums[s] || [0, 0];
        cell.sums[s] = [total + v, count + 1];
      }
    }
  }
  const order = ['bf16', 'fp16', 'fp32'];
  return [...sums.values()].sort((a, b) => a.length - b.length || order.indexOf(a.precision) - order.indexOf(b.precision)).map((c) => {
    const mean = (s: Statistic) => { const sum = c.sums[s]; return sum ? sum[0] / sum[1] : null; };
    const row: FailureRow = { length: c.length, precision: c.precision, heads, position_inversion: mean('position_inversion'),
      position_inversion_deviation: mean('position_inversion_deviation'), position_aliasing_fraction: mean('position_aliasing_fraction'),
      position_aliasing_pairs: mean('position_aliasing_pairs'), token_inversion: mean('token_inversion'), token_aliasing: mean('token_aliasing') };
    return row;
  });
}

// One context's failure modes in words (docs/science.md section 12): an inversion share of 1/2 with
// each sample near 1/2 is random order (the position signal lost); a mean of 1/2 with samples far
// from it is heads (or sequences) that disagree; any aliasing is distances (or two keys) the
// precision cannot tell apart. `rows`: the context's rows, one per precision.
export function failureVerdict(rows: FailureRow[]): string {
  const words: string[] = [];
  const row = rows.find((r) => r.precision === 'fp32') || rows[0];
  const inv = row.position_inversion, dev = row.position_inversion_deviation ?? (inv === null ? null : Math.abs(inv - 0.5));
  if (inv !== null) {
    const pct = `${fmt(100 * inv, 3)}%`;
    if (inv === 0) words.push('nearer keys always score higher');
    else if (dev <= 0.05) words.push(`position order lost: the far key wins ${pct} of near/far pairs, each sample near ½ as with random vectors`);
    else if (Math.abs(inv - 0.5) <= 0.05) words.push(`position preference differs between heads or sequences: the far key wins ${pct} of near/far pairs on average, single samples are far from ½`);
    else if (inv < 0.5) words.push(`nearer keys mostly win: the far key wins ${pct} of near/far pairs`);
    else words.push(`reversed: the far key wins ${pct} of near/far pairs`);
  }
  if (row.token_inversion !== null) words.push(row.token_inversion > 0 ? `token order flips at ${fmt(100 * row.token_inversion, 3)}% of distances` : 'token order holds at every distance');
  const aliasing = rows.filter((r) => r.position_aliasing_fraction > 0).map((r) => `${r.precision} ${fmt(100 * r.position_aliasing_fraction, 3)}%`);
  words.push(aliasing.length ? `distances alias (share with a partner): ${aliasing.join(', ')}` : 'no position aliasing at any precision');
  const ties = rows.filter((r) => r.token_aliasing > 0).map((r) => `${r.precision} ${fmt(r.token_aliasing, 3)}`);
  words.push(ties.length ? `two keys tie at some distances (${ties.join(', ')})` : 'no token ties');
  return words.join('; ') + '.';
}

function failureTable(attention: AttentionDiagnostics, trainLength: number): HTMLElement {
  const rows = failureModeRows(attention);
  if (!rows.length) return el('p', { className: 'empty', id: 'diag-failure-modes' }, 'No failure modes in this record (not a rotary variant, or train.diagnostics_failure_lengths empty).');
  const precisions = [...new Set(rows.map((r) => r.precision))];
  const lengths = [...new Set(rows.map((r) => r.length))];
  const span = (text: string, title: string) => el('th', { className: 'num', rowspan: '2', title }, text);
  const group = (text: string) => el('th', { className: 'group', colspan: String(precisions.length) }, text);
  const table = el('table', { className: 'data failure', id: 'diag-failure-modes' }, el('thead', {},
    el('tr', {}, el('th', { rowspan: '2' }, 'M (context)'), span('position inversion', 'share of (near, far) pairs where the far key scores higher; exact scores'),
      span('|inversion − ½|', 'mean over samples of |position inversion − ½|'), span('token inversion', 'share of distances where two keys\' order flips; exact scores'),
      group('position aliasing: share of distances'), group('position aliasing: pairs'), group('token aliasing: distances')),
    el('tr', {}, ...[0, 1, 2].flatMap(() => precisions.map((p) => el('th', { className: 'num' }, p))))));
  const body = el('tbody');
  for (const length of lengths) {
    const at = rows.filter((r) => r.length === length);
    const exact = at.find((r) => r.precision === 'fp32') || at[0];
    const multiple = trainLength > 0 ? ` (${fmt(length / trainLength, 3)} T)` : '';
    const cell = (key: string, value: number | null) => el('td', { className: 'num', 'data-key': key }, value === null || value === undefined ? '–' : fmt(value, 4));
    const byPrecision = (key: Statistic) => precisions.map((p) => { const r = at.find((x) => x.precision === p); return cell(`${key}.${p}`, r ? r[key] : null); });
    body.append(el('tr', { 'data-length': length },
      el('th', {}, `${length}${multiple}`), cell('position_inversion', exact.position_inversion), cell('position_inversion_deviation', exact.position_inversion_deviation),
      cell('token_inversion', exact.token_inversion), ...byPrecision('position_aliasing_fraction'), ...byPrecision('position_aliasing_pairs'), ...byPrecision('token_aliasing')));
    body.append(el('tr', { className: 'verdict' }, el('td', { colspan: String(4 + 3 * precisions.length), className: 'verdict' }, failureVerdict(at))));
  }
  table.append(body);
  return el('div', {}, table, el('p', { className: 'note' },
    `Mean over the ${rows[0].heads} head(s) of the query at T − 1 and keys at T/2 (position modes), T/4 and 3T/4 (token modes) of each validation sequence (docs/science.md section 12). ` +
    'Inversions are on exact scores; aliasing rounds the scores to each precision. Random (i.i.d. Gaussian) vectors give an inversion near ½: `rung diag TRIAL --table failure_modes` prints that reference beside.'));
}

// Draws the diagnostics of one trial into `host`: the attention record of the milestone in the URL
// (diag_step; default the latest), the extrapolation table and the probe.
export function renderDiagnostics(host: HTMLElement, title: string, documents: TrialDiagnostic[], trainLength: number, finalLoss: number): void {
  host.textContent = '';
  const attentions = documents.filter((d) => d.attention).sort((a, b) => Number(a.step) - Number(b.step));
  const extrapolation = [...documents].reverse().find((d) => d.extrapolation);
  const table: ExtrapolationResult[] = extrapolation?.extrapolation?.results ?? [];
  const wanted = hashParams().get('diag_step');
  const chosen = attentions.find((d) => String(d.step) === wanted) || attentions[attentions.length - 1];
  const chart = (name: string) => { const node = el('div', { 'data-chart': name }); host.append(node); return node; };
  if (!chosen) {
    host.append(el('p', { className: 'empty' }, 'No attention diagnostics stored (train.diagnostics_sequences = 0, or the trial has not reached a milestone).'));
  } else {
    const attention = chosen.attention!;
    const controls = el('div', { className: 'controls' });
    if (attentions.length > 1) {
      const select = el('select', { name: 'diag_step', onchange: () => { setHashParam('diag_step', select.value); renderDiagnostics(host, title, documents, trainLength, finalLoss); } },
        ...attentions.map((d) => el('option', { value: String(d.step), selected: d === chosen }, `step ${d.step} (${d.attention?.milestone || 'milestone'})`)));
      controls.append('milestone ', select);
    }
    controls.append(el('span', { className: 'note' }, `attention record of step ${chosen.step} (${attention.milestone || ''}): T = ${attention.length}, ${attention.sequences} sequence(s), ${headsOf(attention).length} head(s)`));
    host.append(controls);
    drawChart(chart('diag-effective-length'), effectiveLengthSpec(title, attention));
    host.append(el('h4', {}, 'Heads'), headsTable(attention));
    drawHeatmap(chart('diag-pair-usage'), pairUsageSpec(title, attention), 'No frequency-pair usage in these diagnostics.');
    const layers = attention.layers.filter((l) => l.pair_profile_edges.length > 1);
    if (!layers.length) host.append(el('p', { className: 'empty', 'data-chart': 'diag-pair-profile' }, 'No pair-by-distance profile (train.diagnostics_pair_profile_bins was 0, or a record from before it).'));
    for (const layer of layers) drawHeatmap(chart(`diag-pair-profile-L${layer.layer}`), pairProfileSpec(title, layer), 'No head of this layer has a profile.');
    drawChart(chart('diag-gap-counting'), gapCountingSpec(title, attention));
    host.append(el('h4', {}, 'Failure modes'), failureTable(attention, trainLength));
  }
  drawChart(chart('diag-extrapolation'), extrapolationSpec(title, table, trainLength, finalLoss));
  drawChart(chart('diag-extrapolation-positions'), perPositionSpec(title, table, trainLength));
  renderProbe(host, title, documents);
}
