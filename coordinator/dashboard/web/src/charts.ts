// Charts: uPlot on screen; the same spec drawn as SVG for the SVG download and rasterised for PNG,
// so both files show what the page shows. A chart's spec stays on its element (element.rungChart)
// for the browser tests to compare against the API.
import uPlot from 'uplot';
import { el, fmt, download } from './format';

export interface Series {
  label: string;
  color: string;
  values: (number | null)[];
  dash?: number[];
  width?: number;
  points?: boolean;  // markers only (no line)
  band?: { lo: (number | null)[]; hi: (number | null)[] };
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  logX?: boolean;
  logY?: boolean;
  x: number[];
  series: Series[];
  note?: string;
  height?: number;
  // Extra line segments in data coordinates (interval whiskers, markers), drawn with their series' colour.
  whiskers?: { x: number; lo: number; hi: number; color: string }[];
  // Fixed axis ranges (charts meant to be read side by side share them); default: the data's.
  xRange?: [number, number];
  yRange?: [number, number];
  // The x axis' ticks (the lengths a chart evaluated, say); default: 1-2-5 steps (ticks()).
  xTicks?: number[];
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf',
                        '#7f7f7f', '#bcbd22'];

function alpha(color: string, a: number): string {
  const n = parseInt(color.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

function finite(values: Iterable<number | null>, log: boolean): number[] {
  const out: number[] = [];
  for (const v of values) if (v !== null && isFinite(v) && (!log || v > 0)) out.push(v);
  return out;
}

function range(values: number[], log: boolean): [number, number] {
  let lo = Math.min(...values), hi = Math.max(...values);
  if (!isFinite(lo)) return log ? [1, 10] : [0, 1];
  if (lo === hi) { if (log) { lo /= 2; hi *= 2; } else { lo -= Math.abs(lo) * 0.05 || 1; hi += Math.abs(hi) * 0.05 || 1; } }
  if (!log) { const pad = (hi - lo) * 0.04; lo -= pad; hi += pad; }
  return [lo, hi];
}

// The x and y extents of a chart's data (bands and whiskers included), for charts that share axes;
// null where it has none.
export function dataRange(spec: ChartSpec): { x: [number, number] | null; y: [number, number] | null } {
  const xs = finite(spec.x, !!spec.logX);
  const ys: number[] = [];
  spec.series.forEach((s) => {
    ys.push(...finite(s.values, !!spec.logY));
    if (s.band) { ys.push(...finite(s.band.lo, !!spec.logY)); ys.push(...finite(s.band.hi, !!spec.logY)); }
  });
  for (const w of spec.whiskers || []) ys.push(...finite([w.lo, w.hi], !!spec.logY));
  const extent = (v: number[]): [number, number] | null => (v.length ? [Math.min(...v), Math.max(...v)] : null);
  return { x: extent(xs), y: extent(ys) };
}

// Pads an extent as the charts do (4 % on linear axes; a point spread on either side).
export function padRange(extent: [number, number], log: boolean): [number, number] {
  return range(extent, log);
}

// Ticks that read: 1-2-5 steps on linear axes; on log axes every decade, with 2 and 5 where fewer
// than three decades show (a log axis never has a single tick).
export function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    const d0 = Math.floor(Math.log10(lo)), d1 = Math.ceil(Math.log10(hi));
    const mult = d1 - d0 <= 3 ? [1, 2, 5] : [1];
    for (let d = d0; d <= d1; d++) for (const m of mult) { const t = m * Math.pow(10, d); if (t >= lo && t <= hi) out.push(t); }
    if (out.length < 2) { out.length = 0; for (let i = 0; i <= 4; i++) out.push(lo * Math.pow(hi / lo, i / 4)); }
    return out;
  }
  const raw = (hi - lo) / 6;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

// An x tick as written: a chart's own ticks exactly (16384 tokens), others to 3 digits.
function xTickText(spec: ChartSpec, value: number): string {
  return spec.xTicks ? String(value) : fmt(value, 3);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c] as string));
}

export function toSvg(spec: ChartSpec, hidden: Set<number> = new Set()): string {
  const W = 900, H = 520, L = 80, R = 20, T = 40, B = 60;
  const legendRows = spec.series.filter((_, i) => !hidden.has(i)).length;
  const legendH = Math.min(legendRows, 30) * 16 + 10;
  const height = H + legendH;
  const xs = finite(spec.x, !!spec.logX);
  const ysAll: number[] = [];
  spec.series.forEach((s, i) => {
    if (hidden.has(i)) return;
    ysAll.push(...finite(s.values, !!spec.logY));
    if (s.band) { ysAll.push(...finite(s.band.lo, !!spec.logY)); ysAll.push(...finite(s.band.hi, !!spec.logY)); }
  });
  for (const w of spec.whiskers || []) ysAll.push(...finite([w.lo, w.hi], !!spec.logY));
  const [x0, x1] = spec.xRange || range(xs, !!spec.logX), [y0, y1] = spec.yRange || range(ysAll, !!spec.logY);
  const sx = (v: number) => L + (W - L - R) * (spec.logX ? Math.log(v / x0) / Math.log(x1 / x0) : (v - x0) / (x1 - x0));
  const sy = (v: number) => H - B - (H - T - B) * (spec.logY ? Math.log(v / y0) / Math.log(y1 / y0) : (v - y0) / (y1 - y0));
  const ok = (v: number | null, log: boolean | undefined) => v !== null && isFinite(v) && (!log || v > 0);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="13">`);
  parts.push(`<rect width="${W}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`);
  for (const t of spec.xTicks ? spec.xTicks.filter((t) => t >= x0 && t <= x1) : ticks(x0, x1, !!spec.logX)) {
    const x = sx(t).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${T}" y2="${H - B}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${x}" y="${H - B + 18}" text-anchor="middle">${xTickText(spec, t)}</text>`);
  }
  for (const t of ticks(y0, y1, !!spec.logY)) {
    const y = sy(t).toFixed(1);
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${L - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${fmt(t, 4)}</text>`);
  }
  parts.push(`<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 18}" text-anchor="middle">${escapeXml(spec.xLabel + (spec.logX ? ' (log)' : ''))}</text>`);
  parts.push(`<text transform="translate(18 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel + (spec.logY ? ' (log)' : ''))}</text>`);
  parts.push(`<clipPath id="plot"><rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}"/></clipPath><g clip-path="url(#plot)">`);
  spec.series.forEach((s, i) => {
    if (hidden.has(i)) return;
    if (s.band) {
      const top: string[] = [], bottom: string[] = [];
      spec.x.forEach((x, j) => {
        const lo = s.band!.lo[j], hi = s.band!.hi[j];
        if (!ok(x, spec.logX) || !ok(lo, spec.logY) || !ok(hi, spec.logY)) return;
        top.push(`${sx(x).toFixed(1)},${sy(hi as number).toFixed(1)}`);
        bottom.unshift(`${sx(x).toFixed(1)},${sy(lo as number).toFixed(1)}`);
      });
      if (top.length > 1) parts.push(`<polygon points="${top.concat(bottom).join(' ')}" fill="${alpha(s.color, 0.15)}" stroke="none"/>`);
    }
    const pts: string[] = [];
    spec.x.forEach((x, j) => {
      const y = s.values[j];
      if (ok(x, spec.logX) && ok(y, spec.logY)) pts.push(`${sx(x).toFixed(1)},${sy(y as number).toFixed(1)}`);
    });
    if (s.points) {
      for (const p of pts) { const [cx, cy] = p.split(','); parts.push(`<circle cx="${cx}" cy="${cy}" r="4" fill="${s.color}"/>`); }
    } else if (pts.length) {
      const dash = s.dash ? ` stroke-dasharray="${s.dash.join(',')}"` : '';
      parts.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="${s.width || 1.5}"${dash}/>`);
    }
  });
  for (const w of spec.whiskers || []) {
    if (!ok(w.x, spec.logX) || !ok(w.lo, spec.logY) || !ok(w.hi, spec.logY)) continue;
    parts.push(`<line x1="${sx(w.x).toFixed(1)}" x2="${sx(w.x).toFixed(1)}" y1="${sy(w.lo).toFixed(1)}" y2="${sy(w.hi).toFixed(1)}" stroke="${w.color}" stroke-width="2"/>`);
  }
  parts.push('</g>');
  let row = 0;
  spec.series.forEach((s, i) => {
    if (hidden.has(i) || row >= 30) return;
    const y = H + 8 + row * 16;
    const dash = s.dash ? ` stroke-dasharray="${s.dash.join(',')}"` : '';
    parts.push(s.points ? `<circle cx="${L + 10}" cy="${y}" r="4" fill="${s.color}"/>`
                        : `<line x1="${L}" x2="${L + 22}" y1="${y}" y2="${y}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${L + 30}" y="${y}" dominant-baseline="middle">${escapeXml(s.label)}</text>`);
    row++;
  });
  if (spec.note) parts.push(`<text x="${W - R}" y="${H - 4}" text-anchor="end" font-size="11" fill="#555">${escapeXml(spec.note)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

export async function svgToPng(svg: string): Promise<Blob> {
  const image = new Image();
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  await new Promise((resolve, reject) => { image.onload = resolve; image.onerror = reject; image.src = url; });
  const canvas = document.createElement('canvas');
  canvas.width = image.width * 2;
  canvas.height = image.height * 2;
  const context = canvas.getContext('2d')!;
  context.scale(2, 2);
  context.drawImage(image, 0, 0);
  URL.revokeObjectURL(url);
  return new Promise((resolve) => canvas.toBlob((blob) => resolve(blob!), 'image/png'));
}

export function fileName(title: string): string {
  return title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'chart';
}

// A chart's title with its SVG and PNG download buttons; `svg` draws the file when asked.
export function chartHead(title: string, svg: () => string): HTMLElement {
  const name = fileName(title);
  return el('div', { className: 'chart-head' }, el('h3', {}, title), el('span', { className: 'downloads' },
    el('button', { onclick: () => download(name + '.svg', 'image/svg+xml', svg()) }, 'SVG'),
    el('button', { onclick: async () => download(name + '.png', 'image/png', await svgToPng(svg())) }, 'PNG')));
}

// Draws the chart into `host` (replacing what was there) with its legend and download buttons.
export function drawChart(host: HTMLElement, spec: ChartSpec): void {
  host.textContent = '';
  host.classList.add('chart');
  (host as any).rungChart = spec;
  const hidden = new Set<number>();
  host.append(chartHead(spec.title, () => toSvg(spec, hidden)));
  const plotHost = el('div', { className: 'plot' });
  host.append(plotHost);
  const hasData = spec.x.length > 0 && spec.series.some((s) => s.values.some((v) => v !== null && isFinite(v as number)));
  if (!hasData) {
    plotHost.append(el('p', { className: 'empty' }, 'Nothing to show yet' + (spec.note ? ': ' + spec.note : '.')));
    return;
  }
  const data: any[] = [spec.x];
  const series: any[] = [{ label: spec.xLabel, value: (_u: any, v: number) => (v === null ? '' : fmt(v, 5)) }];
  const bands: any[] = [];
  spec.series.forEach((s) => {
    const index = data.length;
    data.push(s.values);
    series.push({
      label: s.label, stroke: s.color, width: s.points ? 0 : s.width || 1.5, dash: s.dash, spanGaps: true,
      paths: s.points ? () => null : undefined,
      points: s.points ? { show: true, size: 8, fill: s.color, stroke: s.color } : { show: false },
      value: (_u: any, v: number) => (v === null ? '' : fmt(v, 5)),
    });
    if (s.band) {
      data.push(s.band.hi);
      series.push({ label: s.label + ' max', stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
      data.push(s.band.lo);
      series.push({ label: s.label + ' min', stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } });
      bands.push({ series: [index + 1, index + 2], fill: alpha(s.color, 0.15) });
    }
  });
  const width = Math.max(360, Math.min(host.clientWidth || 900, 1100) - 8);
  const options: any = {
    width, height: spec.height || 360, series, bands,
    scales: { x: { time: false, distr: spec.logX ? 3 : 1, range: spec.xRange ? () => spec.xRange : undefined },
              y: { distr: spec.logY ? 3 : 1, range: spec.yRange ? () => spec.yRange : undefined } },
    axes: [
      // A chart's own ticks are each labelled (a log axis' default filter keeps only 1-2-5 steps).
      { label: spec.xLabel + (spec.logX ? ' (log)' : ''), values: (_u: any, vals: (number | null)[]) => vals.map((v) => (v === null ? '' : xTickText(spec, v))),
        splits: spec.xTicks ? () => spec.xTicks : undefined, filter: spec.xTicks ? (_u: any, splits: number[]) => splits : undefined },
      { label: spec.yLabel + (spec.logY ? ' (log)' : ''), size: 70, values: (_u: any, vals: number[]) => vals.map((v) => fmt(v, 4)) },
    ],
    // Legend boxes show their line's dash (CSS has three: solid, dashed, dotted).
    legend: { show: true, live: true, markers: { dash: (u: any, i: number) => {
      const dash = u.series[i].dash;
      return !dash || !dash.length ? 'solid' : dash[0] <= 3 ? 'dotted' : 'dashed';
    } } },
    cursor: { drag: { x: true, y: true } },
    hooks: { draw: [(u: any) => {
      // The whiskers, as the SVG draws them.
      const ctx = u.ctx as CanvasRenderingContext2D;
      ctx.save();
      ctx.beginPath(); ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height); ctx.clip();
      ctx.lineWidth = 2 * devicePixelRatio;
      for (const w of spec.whiskers || []) {
        if (![w.x, w.lo, w.hi].every(isFinite) || ((spec.logY) && (w.lo <= 0 || w.hi <= 0))) continue;
        const x = u.valToPos(w.x, 'x', true);
        ctx.strokeStyle = w.color;
        ctx.beginPath(); ctx.moveTo(x, u.valToPos(w.lo, 'y', true)); ctx.lineTo(x, u.valToPos(w.hi, 'y', true)); ctx.stroke();
      }
      ctx.restore();
    }] },
  };
  const plot = new uPlot(options, data as any, plotHost);
  // The band edges are not legend entries of their own.
  plotHost.querySelectorAll('.u-legend .u-series').forEach((row, i) => {
    const label = (row.textContent || '');
    if (i > 0 && (label.includes(' max') || label.includes(' min')) && series[i] && series[i].stroke === 'transparent') {
      (row as HTMLElement).style.display = 'none';
    }
  });
  (host as any).rungPlot = plot;
  if (spec.note) host.append(el('p', { className: 'note' }, spec.note));
}
