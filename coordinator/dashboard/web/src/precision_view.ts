// A precision-aimed sweep's panel (/api/sweeps/ID/precision, GetPrecision; what `rung precision SWEEP`
// prints): the aim (estimator, level, baseline, target), the FLOPs planned against the budget, the
// state and why; a chart with a row per target (a variant's compute multiplier at a rung): its
// interval as a bar around the multiplier, the target half width as a band around it, the half width
// expected once the running trials end as ticks, met or not in colour and in words; the rows' numbers
// as a table; the seeds the aim adds next and why. The chart is SVG (also the SVG download; the PNG is
// it rasterised, charts.ts); its spec stays on the element (element.rungChart) for the browser tests.
import { getJson, num } from './api';
import { chartHead } from './charts';
import { el, fmt } from './format';
import type { GetPrecisionResponse, PrecisionRow } from 'rung-wire';

const MET = '#2ca02c', UNMET = '#d62728', BAND = 'rgba(31,119,180,0.16)', BAND_EDGE = '#1f77b4', PROJECTED = '#333';

export interface IntervalRow {
  label: string;          // "lerope at L2-d32"
  multiplier: number | null;
  low: number | null;
  high: number | null;
  projected: number | null;  // half width
  met: boolean;
  note: string;
}

export interface IntervalChartSpec {
  title: string;
  xLabel: string;
  target: number;  // half width, around each multiplier
  rows: IntervalRow[];
  note?: string;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c] as string));
}

const finiteOr = (v: any): number | null => (v === undefined || v === null || !isFinite(num(v)) ? null : num(v));

// The row's text status: "met", "not met" or "no fit yet" (no multiplier to aim at).
export function rowStatus(row: IntervalRow): string {
  return row.multiplier === null ? 'no fit yet' : row.met ? 'met' : 'not met';
}

// 1-2-5 ticks over [lo, hi].
function linearTicks(lo: number, hi: number): number[] {
  const raw = (hi - lo) / 10;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

export function intervalChartSvg(spec: IntervalChartSpec): string {
  const W = 900, L = 230, R = 90, T = 44, rowH = 40, B = 52;
  const plotH = Math.max(1, spec.rows.length) * rowH;
  const xs: number[] = [];
  for (const r of spec.rows) {
    if (r.multiplier === null) continue;
    xs.push(r.multiplier, r.multiplier - spec.target, r.multiplier + spec.target);
    if (r.low !== null) xs.push(r.low);
    if (r.high !== null) xs.push(r.high);
    if (r.projected !== null) xs.push(r.multiplier - r.projected, r.multiplier + r.projected);
  }
  const legendY = T + plotH + (xs.length ? B : 24);
  const height = legendY + (xs.length ? 40 : 20) + (spec.note ? 16 : 0);
  let x0 = xs.length ? Math.min(...xs) : 0.9, x1 = xs.length ? Math.max(...xs) : 1.1;
  if (x1 - x0 < 1e-9) { x0 -= 0.05; x1 += 0.05; }
  const pad = (x1 - x0) * 0.06;
  x0 -= pad; x1 += pad;
  const sx = (v: number) => L + (W - L - R) * (v - x0) / (x1 - x0);
  const clampX = (v: number) => Math.max(L, Math.min(W - R, sx(v)));
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="13">`);
  parts.push(`<rect width="${W}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`);
  const anyFit = xs.length > 0;
  if (anyFit) {
    for (const t of linearTicks(x0, x1)) {
      const x = sx(t).toFixed(1);
      parts.push(`<line x1="${x}" x2="${x}" y1="${T}" y2="${T + plotH}" stroke="#e5e5e5"/>`);
      parts.push(`<text x="${x}" y="${T + plotH + 16}" text-anchor="middle" font-size="12">${fmt(t, 4)}</text>`);
    }
    if (x0 < 1 && x1 > 1) {  // CM = 1: as compute-efficient as the baseline
      const x = sx(1).toFixed(1);
      parts.push(`<line x1="${x}" x2="${x}" y1="${T}" y2="${T + plotH}" stroke="#888" stroke-dasharray="4,3"/>`);
    }
  }
  parts.push(`<rect x="${L}" y="${T}" width="${W - L - R}" height="${plotH}" fill="none" stroke="#333"/>`);
  if (anyFit) parts.push(`<text x="${(L + W - R) / 2}" y="${T + plotH + 36}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  spec.rows.forEach((r, i) => {
    const cy = T + (i + 0.5) * rowH;
    const status = rowStatus(r);
    const colour = r.multiplier === null ? '#777' : r.met ? MET : UNMET;
    parts.push(`<g class="precision-row" data-label="${escapeXml(r.label)}" data-status="${status}">`);
    if (i > 0) parts.push(`<line x1="${L}" x2="${W - R}" y1="${T + i * rowH}" y2="${T + i * rowH}" stroke="#eee"/>`);
    parts.push(`<text x="${L - 8}" y="${cy}" text-anchor="end" dominant-baseline="middle">${escapeXml(r.label)}</text>`);
    if (r.multiplier === null) {
      parts.push(`<text x="${L + 10}" y="${cy}" dominant-baseline="middle" font-style="italic" fill="#666">${escapeXml(r.note || 'no fit yet')}</text>`);
    } else {
      const m = r.multiplier;
      // The target: the half width the aim wants, around the multiplier.
      parts.push(`<rect class="target" x="${clampX(m - spec.target).toFixed(1)}" y="${(cy - 11).toFixed(1)}" width="${(clampX(m + spec.target) - clampX(m - spec.target)).toFixed(1)}" height="22" fill="${BAND}" stroke="${BAND_EDGE}" stroke-dasharray="3,2"/>`);
      if (r.low !== null && r.high !== null) {
        const a = clampX(r.low), b = clampX(r.high);
        parts.push(`<line class="interval" x1="${a.toFixed(1)}" x2="${b.toFixed(1)}" y1="${cy}" y2="${cy}" stroke="${colour}" stroke-width="5" stroke-linecap="butt"/>`);
        for (const x of [a, b]) parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${cy - 7}" y2="${cy + 7}" stroke="${colour}" stroke-width="2"/>`);
        parts.push(`<title>${escapeXml(`${r.label}: multiplier ${fmt(m, 5)}, interval [${fmt(r.low, 5)}, ${fmt(r.high, 5)}], half width ${fmt((r.high - r.low) / 2, 3)} against ${fmt(spec.target, 3)}`)}</title>`);
      }
      if (r.projected !== null) {
        for (const x of [m - r.projected, m + r.projected]) {
          const px = clampX(x);
          parts.push(`<path class="projected" d="M${px.toFixed(1)},${(cy - 13).toFixed(1)}l-4,-6h8z" fill="${PROJECTED}"/>`);
          parts.push(`<path d="M${px.toFixed(1)},${(cy + 13).toFixed(1)}l-4,6h8z" fill="${PROJECTED}"/>`);
        }
      }
      parts.push(`<circle cx="${sx(m).toFixed(1)}" cy="${cy}" r="4.5" fill="white" stroke="${colour}" stroke-width="2"/>`);
      if (r.low === null || r.high === null) {
        // Said beside the target band, on the side with room.
        const right = clampX(m + spec.target) + 8, left = clampX(m - spec.target) - 8;
        const onRight = W - R - right >= left - L;
        parts.push(`<text x="${(onRight ? right : left).toFixed(1)}" y="${cy}" text-anchor="${onRight ? 'start' : 'end'}" dominant-baseline="middle" font-size="11" font-style="italic" fill="#666">${escapeXml(r.note || 'no interval')}</text>`);
      }
    }
    parts.push(`<text x="${W - R + 8}" y="${cy}" dominant-baseline="middle" font-weight="bold" fill="${colour}">${status}</text>`);
    parts.push('</g>');
  });
  // The legend: what each mark means (without a fit, what the chart will show).
  const y = legendY;
  if (!anyFit) {
    parts.push(`<text x="${L}" y="${y}" dominant-baseline="middle" font-size="12">Each target's interval is drawn once the baseline and the variant have finished runs at its rung.</text>`);
    if (spec.note) parts.push(`<text x="${L}" y="${y + 20}" font-size="11" fill="#555">${escapeXml(spec.note)}</text>`);
    parts.push('</svg>');
    return parts.join('\n');
  }
  parts.push(`<line x1="${L}" x2="${L + 26}" y1="${y}" y2="${y}" stroke="${MET}" stroke-width="5"/><line x1="${L + 30}" x2="${L + 56}" y1="${y}" y2="${y}" stroke="${UNMET}" stroke-width="5"/>`);
  parts.push(`<text x="${L + 62}" y="${y}" dominant-baseline="middle" font-size="12">interval [low, high]: met / not met</text>`);
  parts.push(`<rect x="${L + 300}" y="${y - 8}" width="26" height="16" fill="${BAND}" stroke="${BAND_EDGE}" stroke-dasharray="3,2"/>`);
  parts.push(`<text x="${L + 332}" y="${y}" dominant-baseline="middle" font-size="12">target: multiplier ± ${fmt(spec.target, 3)}</text>`);
  parts.push(`<path d="M${L + 530},${y - 2}l-4,-6h8z" fill="${PROJECTED}"/><path d="M${L + 530},${y + 2}l-4,6h8z" fill="${PROJECTED}"/>`);
  parts.push(`<text x="${L + 542}" y="${y}" dominant-baseline="middle" font-size="12">projected half width</text>`);
  parts.push(`<circle cx="${L + 13}" cy="${y + 20}" r="4.5" fill="white" stroke="#333" stroke-width="2"/><text x="${L + 30}" y="${y + 20}" dominant-baseline="middle" font-size="12">multiplier${anyFit && x0 < 1 && x1 > 1 ? '; dashed: CM = 1 (the baseline)' : ''}</text>`);
  if (spec.note) parts.push(`<text x="${L}" y="${y + 40}" font-size="11" fill="#555">${escapeXml(spec.note)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

export function drawIntervalChart(host: HTMLElement, spec: IntervalChartSpec): void {
  host.textContent = '';
  host.classList.add('chart');
  (host as any).rungChart = spec;
  const svg = intervalChartSvg(spec);
  host.append(chartHead(spec.title, () => svg));
  const holder = el('div', { className: 'plot interval-chart' });
  holder.innerHTML = svg;
  host.append(holder);
}

const sci = (v: number) => (isFinite(v) ? v.toExponential(2) : '');
// A share as a percentage that reads: 46%, 0.5%, 0.00013%.
const percent = (share: number) => (isFinite(share) ? `${Number((100 * share).toPrecision(share >= 0.01 ? 3 : 2))}%` : '?');

export async function renderPrecision(host: HTMLElement, sweepId: number): Promise<void> {
  const p = await getJson<GetPrecisionResponse>(`/api/sweeps/${sweepId}/precision`);
  host.textContent = '';
  const level = num(p.level), target = num(p.target_half_width), planned = num(p.planned_flops), budget = num(p.budget_flops);
  host.append(el('h3', {}, `Precision: ${p.estimator} multipliers against ${p.baseline || 'the baseline'}`));
  host.append(el('p', { id: 'precision-aim' }, `${fmt(100 * level, 3)}% intervals, target half width ${fmt(target, 3)} at each target (a variant at a rung); baseline ${p.baseline}; estimator ${p.estimator}`));
  const share = budget > 0 ? planned / budget : NaN;
  const bar = el('div', { className: 'progress budget', title: `${sci(planned)} of ${sci(budget)} FLOPs` },
    el('div', { className: 'seg ' + (share > 1 ? 's-failed' : 's-running'), style: `width:${Math.min(100, Math.max(0, 100 * (isFinite(share) ? share : 0))).toFixed(1)}%` }));
  host.append(el('div', { className: 'controls', id: 'precision-budget' }, 'FLOPs (6ND) ', bar,
    ` ${sci(planned)} planned of a budget of ${sci(budget)} (${percent(share)}) · ${num(p.unfinished)} trial(s) unfinished, at most ${num(p.in_flight)} when the aim adds one`));
  const closed = p.precision !== 'aiming';
  const reason = p.closed_reason ? p.closed_reason : `${p.status}: ${p.why}`;
  host.append(el('p', { id: 'precision-state' }, 'state: ', el('span', { className: `state precision-${p.precision}` }, p.precision), ` (${reason})`));
  const rows: IntervalRow[] = p.rows.map((r: PrecisionRow) => ({
    label: `${r.variant} at ${r.rung_label}`, multiplier: finiteOr(r.multiplier), low: finiteOr(r.low), high: finiteOr(r.high),
    projected: finiteOr(r.projected), met: r.met, note: r.note,
  }));
  const chart = el('div', { 'data-chart': 'precision' });
  host.append(chart);
  drawIntervalChart(chart, { title: 'Compute multipliers against the target half width', xLabel: `compute multiplier against ${p.baseline} (CM)`, target, rows,
    note: p.intervals ? `intervals: ${p.intervals}` : undefined });
  const cell = (text: string, numeric = false, key?: string) => el('td', { className: numeric ? 'num' : '', 'data-key': key }, text);
  const table = el('table', { className: 'data', id: 'precision-table' }, el('thead', {}, el('tr', {},
    ...['variant', 'rung', 'CM', 'interval', 'half width', 'target', 'projected', 'seeds', 'df', 'met', 'note'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  p.rows.forEach((r: PrecisionRow, i: number) => {
    const v = (x: any, digits: number) => (finiteOr(x) === null ? '—' : fmt(num(x), digits));
    body.append(el('tr', { 'data-variant': r.variant, 'data-rung': r.rung_label }, cell(r.variant), cell(r.rung_label), cell(v(r.multiplier, 5), true, 'multiplier'),
      cell(finiteOr(r.low) === null || finiteOr(r.high) === null ? '—' : `[${fmt(num(r.low), 5)}, ${fmt(num(r.high), 5)}]`, false, 'interval'),
      cell(v(r.half_width, 3), true, 'half_width'), cell(fmt(target, 3), true), cell(v(r.projected, 3), true, 'projected'), cell(String(num(r.seeds)), true, 'seeds'),
      cell(v(r.df, 3), true), el('td', { className: 'met-' + (rows[i].multiplier === null ? 'none' : r.met ? 'yes' : 'no'), 'data-key': 'met' }, rowStatus(rows[i])),
      el('td', { className: 'wrap' }, r.note || '')));
  });
  table.append(body);
  host.append(table);
  host.append(el('h4', {}, closed ? 'Seeds planned next: none (the aim is closed)' : 'Seeds planned next, when a trial slot frees'));
  if (p.next.length) {
    host.append(el('ul', { id: 'precision-next' }, ...p.next.map((a) => el('li', { 'data-variant': a.variant, 'data-rung': a.rung_label, 'data-seed': a.seed },
      el('strong', {}, `${a.variant} at ${a.rung_label}, seed ${a.seed}`), ` (${sci(num(a.flops))} FLOPs): ${a.why}`))));
  } else if (!closed) {
    host.append(el('p', { className: 'empty', id: 'precision-next' }, 'none now: ' + (p.why || p.status)));
  }
  host.setAttribute('data-precision', p.precision);
}
