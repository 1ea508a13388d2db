// Heatmaps: one or more panels of a matrix (rows x columns) sharing one colour scale, drawn as SVG,
// which is also the SVG download; the PNG is that SVG rasterised (charts.ts). Sequential scales run
// white to blue from 0; diverging ones blue-white-red, symmetric about 0. Cells without a value are
// grey. Each cell says its value on hover; a panel may also label its cells (drawn where they fit, dark
// or light to suit the cell). The spec stays on the element (element.rungChart) for the browser tests.
import { chartHead } from './charts';
import { el, fmt } from './format';

export interface HeatmapPanel {
  title: string;
  values: (number | null)[][];  // [row][column]
  marks?: { row: number; column: number }[];  // drawn as x
  labels?: (string | null)[][];  // [row][column]: text in the cell (also on hover); null: none
}

export interface HeatmapSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  rows: string[];     // row labels, top to bottom
  columns: string[];  // column labels, left to right
  panels: HeatmapPanel[];
  diverging: boolean;  // signed values: a scale symmetric about 0
  valueLabel: string;  // what the colour means
  range?: [number, number];  // default: [0, max] (sequential) or [-max|v|, max|v|] (diverging)
  markLabel?: string;  // what an x means
  note?: string;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c] as string));
}

const SEQUENTIAL = [[255, 255, 255], [107, 174, 214], [8, 48, 107]];  // 0, 1/2, 1
const DIVERGING = [[33, 102, 172], [247, 247, 247], [178, 24, 43]];   // -1, 0, 1
const MISSING = '#bdbdbd';

// The colour of u in [0, 1] on a three-stop scale, as [r, g, b].
function rgbAt(stops: number[][], u: number): number[] {
  const t = Math.max(0, Math.min(1, u)) * 2;
  const i = Math.min(1, Math.floor(t));
  const f = t - i;
  return stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
}

function colourAt(stops: number[][], u: number): string {
  const c = rgbAt(stops, u);
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

export function heatmapRange(spec: HeatmapSpec): [number, number] {
  if (spec.range) return spec.range;
  let peak = 0;
  for (const panel of spec.panels) for (const row of panel.values) for (const v of row) if (v !== null && isFinite(v)) peak = Math.max(peak, Math.abs(v));
  if (!(peak > 0)) peak = 1;
  return spec.diverging ? [-peak, peak] : [0, peak];
}

export function heatmapSvg(spec: HeatmapSpec): string {
  const W = 900, L = 70, R = 20, T = 40, gap = 30;
  const [lo, hi] = heatmapRange(spec);
  const stops = spec.diverging ? DIVERGING : SEQUENTIAL;
  const colour = (v: number | null) => (v === null || !isFinite(v) ? MISSING : colourAt(stops, (v - lo) / (hi - lo || 1)));
  // A label's ink: white on a dark cell, near-black on a light one (relative luminance, sRGB weights).
  const ink = (v: number | null) => {
    if (v === null || !isFinite(v)) return '#222';
    const [r, g, b] = rgbAt(stops, (v - lo) / (hi - lo || 1));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128 ? '#fff' : '#222';
  };
  const perRow = spec.panels.length <= 1 ? 1 : Math.ceil(Math.sqrt(spec.panels.length));
  const panelRows = Math.ceil(spec.panels.length / perRow);
  const panelW = (W - L - R - (perRow - 1) * (gap + L)) / perRow;
  const cellW = panelW / Math.max(1, spec.columns.length);
  const cellH = Math.max(8, Math.min(26, 260 / Math.max(1, spec.rows.length)));
  const panelH = cellH * spec.rows.length;
  const titleH = spec.panels.length > 1 ? 18 : 0;
  const xLabelsH = 46;
  const blockH = titleH + panelH + xLabelsH;
  const legendY = T + panelRows * blockH + 10;
  const height = legendY + 58 + (spec.markLabel ? 18 : 0) + (spec.note ? 16 : 0);
  const labelEvery = Math.max(1, Math.ceil(spec.columns.length / Math.max(2, Math.floor(panelW / 34))));
  const rowEvery = Math.max(1, Math.ceil(12 / cellH));
  const labelSize = Math.min(13, Math.max(9, cellH * 0.45));
  const fits = (text: string) => cellH >= 12 && text.length * labelSize * 0.6 + 4 <= cellW;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`);
  spec.panels.forEach((panel, p) => {
    const x0 = L + (p % perRow) * (panelW + gap + L);
    const top = T + Math.floor(p / perRow) * blockH;
    const y0 = top + titleH;
    if (titleH) parts.push(`<text x="${(x0 + panelW / 2).toFixed(1)}" y="${top + 13}" text-anchor="middle" font-weight="bold">${escapeXml(panel.title)}</text>`);
    spec.rows.forEach((rowLabel, r) => {
      spec.columns.forEach((columnLabel, c) => {
        const v = panel.values[r]?.[c] ?? null;
        const label = panel.labels?.[r]?.[c] ?? null;
        parts.push(`<rect x="${(x0 + c * cellW).toFixed(2)}" y="${(y0 + r * cellH).toFixed(2)}" width="${(cellW + 0.3).toFixed(2)}" height="${(cellH + 0.3).toFixed(2)}" fill="${colour(v)}">` +
          `<title>${escapeXml(`${panel.title ? panel.title + ', ' : ''}${spec.yLabel} ${rowLabel}, ${spec.xLabel} ${columnLabel}: ${v === null || !isFinite(v) ? 'no value' : fmt(v, 4)}${label === null ? '' : ` (${label})`}`)}</title></rect>`);
        if (label !== null && fits(label)) {
          parts.push(`<text class="cell-label" x="${(x0 + (c + 0.5) * cellW).toFixed(1)}" y="${(y0 + (r + 0.5) * cellH).toFixed(1)}" text-anchor="middle" dominant-baseline="central" font-size="${labelSize.toFixed(1)}" fill="${ink(v)}" pointer-events="none">${escapeXml(label)}</text>`);
        }
      });
      if (r % rowEvery === 0) parts.push(`<text x="${x0 - 5}" y="${(y0 + (r + 0.5) * cellH).toFixed(1)}" text-anchor="end" dominant-baseline="middle" font-size="11">${escapeXml(rowLabel)}</text>`);
    });
    for (const mark of panel.marks || []) {
      const cx = x0 + (mark.column + 0.5) * cellW, cy = y0 + (mark.row + 0.5) * cellH, s = Math.min(cellW, cellH) * 0.32;
      parts.push(`<path d="M${(cx - s).toFixed(1)},${(cy - s).toFixed(1)}L${(cx + s).toFixed(1)},${(cy + s).toFixed(1)}M${(cx - s).toFixed(1)},${(cy + s).toFixed(1)}L${(cx + s).toFixed(1)},${(cy - s).toFixed(1)}" stroke="#d95f02" stroke-width="2.5"/>`);
    }
    parts.push(`<rect x="${x0}" y="${y0}" width="${panelW.toFixed(1)}" height="${panelH.toFixed(1)}" fill="none" stroke="#333"/>`);
    spec.columns.forEach((label, c) => {
      if (c % labelEvery) return;
      parts.push(`<text x="${(x0 + (c + 0.5) * cellW).toFixed(1)}" y="${(y0 + panelH + 14).toFixed(1)}" text-anchor="middle" font-size="11">${escapeXml(label)}</text>`);
    });
    parts.push(`<text x="${(x0 + panelW / 2).toFixed(1)}" y="${(y0 + panelH + 32).toFixed(1)}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
    parts.push(`<text transform="translate(${x0 - 52} ${(y0 + panelH / 2).toFixed(1)}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`);
  });
  // The colour legend: a bar with its ends (and 0 on a diverging scale), and grey for no value.
  const barX = L, barW = 300, barY = legendY + 16;
  // Inline SVGs share one id space: the id names the scale, so equal ids are equal gradients.
  const gradient = spec.diverging ? 'rung-scale-diverging' : 'rung-scale-sequential';
  parts.push(`<defs><linearGradient id="${gradient}">${[0, 0.5, 1].map((u) => `<stop offset="${u}" stop-color="${colourAt(stops, u)}"/>`).join('')}</linearGradient></defs>`);
  parts.push(`<text x="${barX}" y="${legendY + 8}">${escapeXml(spec.valueLabel)}</text>`);
  parts.push(`<rect x="${barX}" y="${barY}" width="${barW}" height="12" fill="url(#${gradient})" stroke="#333"/>`);
  const tick = (v: number, anchor: string) => {
    const x = barX + ((v - lo) / (hi - lo || 1)) * barW;
    parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${barY + 12}" y2="${barY + 16}" stroke="#333"/><text x="${x.toFixed(1)}" y="${barY + 28}" text-anchor="${anchor}" font-size="11">${fmt(v, 3)}</text>`);
  };
  tick(lo, 'start');
  if (spec.diverging) tick(0, 'middle'); else tick((lo + hi) / 2, 'middle');
  tick(hi, 'end');
  parts.push(`<rect x="${barX + barW + 30}" y="${barY}" width="14" height="12" fill="${MISSING}" stroke="#333"/><text x="${barX + barW + 50}" y="${barY + 10}" font-size="11">no value</text>`);
  let y = barY + 46;
  if (spec.markLabel) { parts.push(`<text x="${barX}" y="${y}" font-size="12"><tspan fill="#d95f02" font-weight="bold">×</tspan> ${escapeXml(spec.markLabel)}</text>`); y += 18; }
  if (spec.note) parts.push(`<text x="${barX}" y="${y}" font-size="11" fill="#555">${escapeXml(spec.note)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

// Draws the heatmap into `host` (replacing what was there) with its download buttons; says so in
// its place when there is nothing to draw.
export function drawHeatmap(host: HTMLElement, spec: HeatmapSpec, empty = 'Nothing to show.'): void {
  host.textContent = '';
  host.classList.add('chart');
  (host as any).rungChart = spec;
  const svg = heatmapSvg(spec);
  host.append(chartHead(spec.title, () => svg));
  const hasData = spec.rows.length > 0 && spec.columns.length > 0 && spec.panels.some((p) => p.values.some((r) => r.some((v) => v !== null && isFinite(v))));
  if (!hasData) { host.append(el('p', { className: 'empty' }, empty)); return; }
  const holder = el('div', { className: 'plot heatmap' });
  holder.innerHTML = svg;
  host.append(holder);
}
