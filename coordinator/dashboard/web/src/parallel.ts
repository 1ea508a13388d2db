// Parallel coordinates: one vertical axis per sweep axis (and the rung), the metric last; one line
// per finished trial, coloured by its metric (blue best, red worst for the sweep's goal). Drawn as
// SVG, which is also its download; the PNG is that SVG rasterised.
import { svgToPng } from './charts';
import { download, el, fmt } from './format';

export interface ParallelTrial {
  axes: Record<string, string | number>;  // axis -> value
  metric: number;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' }[c] as string));
}

export function parallelSvg(title: string, axes: string[], metricName: string, goal: string, trials: ParallelTrial[]): string {
  const W = 900, H = 440, L = 60, R = 80, T = 50, B = 40;
  const columns = [...axes, metricName];
  const x = (i: number) => L + ((W - L - R) * i) / Math.max(1, columns.length - 1);
  const scales = columns.map((axis, i) => {
    const values = i === columns.length - 1 ? trials.map((t) => t.metric) : trials.map((t) => t.axes[axis]);
    const numeric = values.every((v) => typeof v === 'number' && isFinite(v as number));
    if (numeric) {
      const nums = values as number[];
      let lo = Math.min(...nums), hi = Math.max(...nums);
      const log = lo > 0 && hi / lo > 50;
      if (lo === hi) { lo -= 0.5; hi += 0.5; }
      const f = (v: number) => (log ? Math.log(v / lo) / Math.log(hi / lo) : (v - lo) / (hi - lo));
      return { at: (v: any) => H - B - (H - T - B) * f(v as number), ticks: [lo, hi].map((v) => ({ v, label: fmt(v, 4) })) };
    }
    const categories = [...new Set(values.map(String))].sort();
    const f = (v: any) => (categories.length === 1 ? 0.5 : categories.indexOf(String(v)) / (categories.length - 1));
    return { at: (v: any) => H - B - (H - T - B) * f(v), ticks: categories.map((c) => ({ v: c, label: c })) };
  });
  const metrics = trials.map((t) => t.metric);
  const mlo = Math.min(...metrics), mhi = Math.max(...metrics);
  const colour = (m: number) => {
    let u = mhi > mlo ? (m - mlo) / (mhi - mlo) : 0.5;
    if (goal === 'maximize') u = 1 - u;
    return `rgb(${Math.round(40 + 200 * u)},${Math.round(90 + 40 * (1 - Math.abs(u - 0.5) * 2))},${Math.round(220 - 180 * u)})`;
  };
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(title)}</text>`];
  for (const t of [...trials].sort((a, b) => b.metric - a.metric)) {
    const points = columns.map((axis, i) => `${x(i).toFixed(1)},${scales[i].at(i === columns.length - 1 ? t.metric : t.axes[axis]).toFixed(1)}`);
    parts.push(`<polyline points="${points.join(' ')}" fill="none" stroke="${colour(t.metric)}" stroke-opacity="0.7" stroke-width="1.5"/>`);
  }
  columns.forEach((axis, i) => {
    parts.push(`<line x1="${x(i)}" x2="${x(i)}" y1="${T}" y2="${H - B}" stroke="#333"/>`);
    parts.push(`<text x="${x(i)}" y="${T - 10}" text-anchor="middle" font-weight="bold">${escapeXml(axis)}</text>`);
    for (const tick of scales[i].ticks) {
      const y = scales[i].at(tick.v);
      parts.push(`<text x="${x(i) + 5}" y="${y.toFixed(1)}" dominant-baseline="middle" fill="#333">${escapeXml(tick.label)}</text>`);
    }
  });
  parts.push(`<text x="${W - R}" y="${H - 10}" text-anchor="end" font-size="11" fill="#555">colour: ${escapeXml(metricName)} (blue best)</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

export function drawParallel(host: HTMLElement, title: string, axes: string[], metricName: string, goal: string, trials: ParallelTrial[]): void {
  host.textContent = '';
  host.classList.add('chart');
  const svg = parallelSvg(title, axes, metricName, goal, trials);
  const name = 'parallel-coordinates';
  host.append(el('div', { className: 'chart-head' }, el('h3', {}, title), el('span', { className: 'downloads' },
    el('button', { onclick: () => download(name + '.svg', 'image/svg+xml', svg) }, 'SVG'),
    el('button', { onclick: async () => download(name + '.png', 'image/png', await svgToPng(svg)) }, 'PNG'))));
  if (!trials.length) { host.append(el('p', { className: 'empty' }, 'Nothing to show yet: no trial has a final value.')); return; }
  const holder = el('div', { className: 'plot' });
  holder.innerHTML = svg;
  host.append(holder);
}
