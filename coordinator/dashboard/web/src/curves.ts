// Loss curves grouped by cell (rung x axis values without the seed): the seeds' mean as a line and
// their min..max as a band, on a chosen x axis (step, tokens, FLOPs, wall time), with optional
// exponential smoothing (applied to each seed before averaging).
import { ChartSpec, PALETTE, Series } from './charts';

// Column of each axis in /api/trials/ID/metrics' points [step, tokens, flops, wall_time, value];
// /api/sweeps/ID/curves answers [step, x, value] for the axis asked for.
export const X_AXES: Record<string, { column: number; label: string }> = {
  step: { column: 0, label: 'step' },
  tokens: { column: 1, label: 'tokens' },
  flops: { column: 2, label: 'FLOPs (6ND)' },
  wall_time: { column: 3, label: 'wall time (s)' },
};

// The metrics the curve charts offer beside a sweep's own: the one list of both the sweep page and the
// comparison (a metric added here is offered by both).
export const CURVE_METRICS = ['val_loss', 'train_loss'];

// The metrics to offer for sweeps whose own metrics are `own`, in order, each once.
export function curveMetrics(...own: string[]): string[] {
  return [...new Set([...own.filter((m) => m), ...CURVE_METRICS])];
}

export interface TrialInfo {
  trial_id: number;
  rung: number;
  rung_label: string;
  variant: string;  // the axis values without the seed
  seed: string;
}

export function smooth(values: (number | null)[], weight: number): (number | null)[] {
  if (!(weight > 0)) return values;
  let last: number | null = null;
  return values.map((v) => {
    if (v === null || !isFinite(v)) return v;
    last = last === null ? v : last * weight + v * (1 - weight);
    return last;
  });
}

// Linear interpolation of (xs, ys) at x; null outside.
function at(xs: number[], ys: (number | null)[], x: number): number | null {
  if (!xs.length || x < xs[0] || x > xs[xs.length - 1]) return null;
  let lo = 0, hi = xs.length - 1;
  while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (xs[mid] <= x) lo = mid; else hi = mid; }
  if (xs[lo] === x) return ys[lo];
  if (xs[hi] === x) return ys[hi];
  const a = ys[lo], b = ys[hi];
  if (a === null || b === null) return null;
  return a + (b - a) * (x - xs[lo]) / (xs[hi] - xs[lo]);
}

// `curves`: trial id -> [step, x, value] points on the axis `xAxis`. `variantOrder` fixes each
// variant's colour (charts read side by side give a variant one colour); default: the trials' variants.
export function cellCurves(curves: Map<number, number[][]>, trials: TrialInfo[], metric: string, xAxis: string,
                           smoothing: number, logX: boolean, logY: boolean, variantOrder?: string[]): ChartSpec {
  const cells = new Map<string, TrialInfo[]>();
  for (const trial of trials) {
    if (!curves.has(trial.trial_id) || !curves.get(trial.trial_id)!.length) continue;
    const key = trial.rung_label + '\u0000' + trial.variant;
    if (!cells.has(key)) cells.set(key, []);
    cells.get(key)!.push(trial);
  }
  const variants = variantOrder || [...new Set(trials.map((t) => t.variant))].sort();
  const rungs = [...new Set(trials.map((t) => t.rung))].sort((a, b) => a - b);
  const dashes: (number[] | undefined)[] = [undefined, [8, 4], [2, 3], [10, 3, 2, 3]];
  // Per cell: the step grid of its longest seed; each seed interpolated on it by step.
  const perCell: { trial: TrialInfo; x: number[]; mean: (number | null)[]; lo: (number | null)[]; hi: (number | null)[]; n: number }[] = [];
  for (const members of cells.values()) {
    const series = members.map((t) => curves.get(t.trial_id)!);
    const longest = series.reduce((a, b) => (b.length > a.length ? b : a));
    const steps = longest.map((p) => p[0]);
    const perSeed = series.map((points) => {
      const s = points.map((p) => p[0]);
      const v = smooth(points.map((p) => p[2]), smoothing);
      const x = points.map((p) => p[1]);
      return steps.map((step) => ({ y: at(s, v, step), x: at(s, x, step) }));
    });
    const x: number[] = [], mean: (number | null)[] = [], lo: (number | null)[] = [], hi: (number | null)[] = [];
    steps.forEach((_, j) => {
      const ys = perSeed.map((p) => p[j].y).filter((y): y is number => y !== null && isFinite(y));
      const xs = perSeed.map((p) => p[j].x).filter((v): v is number => v !== null && isFinite(v));
      if (!xs.length) return;
      x.push(xs.reduce((a, b) => a + b, 0) / xs.length);
      mean.push(ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : null);
      lo.push(ys.length ? Math.min(...ys) : null);
      hi.push(ys.length ? Math.max(...ys) : null);
    });
    perCell.push({ trial: members[0], x, mean, lo, hi, n: members.length });
  }
  perCell.sort((a, b) => a.trial.rung - b.trial.rung || a.trial.variant.localeCompare(b.trial.variant));
  // One shared x: the union of the cells' x values, or a grid when that is too long to draw fast.
  let grid = [...new Set(perCell.flatMap((c) => c.x))].sort((a, b) => a - b);
  if (logX) grid = grid.filter((v) => v > 0);
  if (grid.length > 3000) {
    const lo = grid[0], hi = grid[grid.length - 1], n = 1500;
    grid = Array.from({ length: n }, (_, i) => (logX ? lo * Math.pow(hi / lo, i / (n - 1)) : lo + (hi - lo) * i / (n - 1)));
  }
  // Within a rung the variants are drawn in order, each thinner than the one before, so a curve that
  // coincides with another (a variant equal to the baseline) leaves the other's colour as a rim.
  const widthOf = (variant: string) => {
    const drawn = [...new Set(perCell.map((c) => c.trial.variant))];
    return drawn.length < 2 ? 1.5 : 3.5 - 2 * drawn.indexOf(variant) / (drawn.length - 1);
  };
  const series: Series[] = perCell.map((cell) => {
    const onGrid = (ys: (number | null)[]) => grid.map((g) => at(cell.x, ys, g));
    const color = PALETTE[variants.indexOf(cell.trial.variant) % PALETTE.length];
    const seeds = cell.n > 1 ? ` (mean of ${cell.n} seeds, band min..max)` : ' (1 seed)';
    return {
      label: `${cell.trial.variant || 'all'} · ${cell.trial.rung_label}${seeds}`, color, width: widthOf(cell.trial.variant),
      dash: dashes[rungs.indexOf(cell.trial.rung) % dashes.length], values: onGrid(cell.mean),
      band: cell.n > 1 ? { lo: onGrid(cell.lo), hi: onGrid(cell.hi) } : undefined,
    };
  });
  return {
    title: `${metric} by cell`, xLabel: X_AXES[xAxis].label, yLabel: metric + ' (nats)', logX, logY, x: grid, series,
    note: smoothing > 0 ? `smoothed (EMA ${smoothing})` : undefined,
  };
}
