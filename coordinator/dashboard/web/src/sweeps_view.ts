// The sweeps list: state, progress and an ETA per sweep; tick two to compare them (compare_view.ts).
// Below it, what this build of rung can run, from its registries (/api/registry).
import { getJson, num } from './api';
import { el, fmt, fmtSeconds, stateName, timeText } from './format';
import type { Sweep, TrialCounts } from 'rung-wire';

// `counts`: a sweep's (TrialCounts, int64 as strings) or counted here (numbers).
export function progressBar(counts: Partial<Record<keyof TrialCounts, string | number>>): HTMLElement {
  const total = num(counts.total) || 0;
  const bar = el('div', { className: 'progress', title: '' });
  const parts: string[] = [];
  const states: (keyof TrialCounts)[] = ['succeeded', 'running', 'leased', 'early_stopped', 'failed', 'cancelled', 'preempted', 'stale', 'pending'];
  for (const state of states) {
    const n = num(counts[state]) || 0;
    if (!n) continue;
    parts.push(`${state} ${n}`);
    bar.append(el('span', { className: 'seg s-' + state, style: `width:${(100 * n) / Math.max(total, 1)}%` }));
  }
  bar.title = parts.join(', ');
  return bar;
}

// From the share of compute finished and the time since the sweep started.
export function eta(sweep: Sweep, nowSeconds: number): string {
  const state = stateName(sweep.state);
  if (state !== 'active') return '';
  const done = num(sweep.finished_flops), total = num(sweep.total_flops);
  const started = Date.parse(sweep.created_at) / 1000;
  if (!(done > 0) || !(total > done) || !isFinite(started)) return '';
  return '~' + fmtSeconds((nowSeconds - started) * (total - done) / done);
}

// One table per registry: name (the config value), label, and what it does.
export function registryTables(registry: any): HTMLElement {
  const table = (title: string, id: string, rows: any[], rotary: boolean) => el('div', {},
    el('h3', {}, title),
    el('table', { className: 'data', id },
      el('thead', {}, el('tr', {}, ...['name', 'label', ...(rotary ? ['rotary'] : []), 'what it does'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows.map((row) => el('tr', { 'data-name': row.name },
        el('td', {}, el('code', {}, row.name)), el('td', {}, row.label),
        ...(rotary ? [el('td', {}, row.rotary ? 'yes' : 'no')] : []), el('td', {}, row.summary))))));
  return el('details', { id: 'registry' },
    el('summary', {}, 'What this rung can run: positional variants, inverse-temperature forms, length-extension methods'),
    table('Positional variants (position.variant)', 'registry-variants', registry.positional_variants, true),
    table('Inverse-temperature forms (inverse_temperature.form)', 'registry-forms', registry.inverse_temperature_forms, false),
    table('Length-extension methods (train.extrapolation_methods)', 'registry-methods', registry.length_extension_methods, false));
}

export async function renderSweeps(root: HTMLElement): Promise<void> {
  const [{ sweeps }, registry] = await Promise.all([getJson<{ sweeps: Sweep[] }>('/api/sweeps'), getJson('/api/registry')]);
  const now = Date.now() / 1000;
  const compare = el('button', { id: 'compare', disabled: true, onclick: () => {
    const ids = picked();
    if (ids.length === 2) location.hash = `#/compare/${ids[0]}/${ids[1]}`;
  } }, 'compare the two ticked sweeps');
  const picked = () => [...body.querySelectorAll('input[name="pick"]:checked')].map((box) => (box as HTMLInputElement).value);
  const onPick = () => {
    const ids = picked();
    compare.disabled = ids.length !== 2;
    compare.textContent = ids.length === 2 ? `compare sweeps ${ids[0]} and ${ids[1]}` : `compare the two ticked sweeps (${ids.length} ticked)`;
  };
  const table = el('table', { className: 'data', id: 'sweeps' },
    el('thead', {}, el('tr', {}, ...['compare', 'id', 'name', 'state', 'progress', 'done', 'running', 'failed', 'ETA', 'metric', 'created'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  for (const s of sweeps) {
    const c = s.counts;
    body.append(el('tr', { 'data-sweep': s.sweep_id },
      el('td', {}, el('input', { type: 'checkbox', name: 'pick', value: s.sweep_id, title: 'tick two sweeps to compare them', onchange: onPick })),
      el('td', {}, s.sweep_id),
      el('td', {}, el('a', { href: `#/sweep/${s.sweep_id}` }, s.name)),
      el('td', { className: 'state st-' + stateName(s.state) }, stateName(s.state) + (s.tuning ? ` (tuning ${s.tuning})` : '')),
      el('td', {}, progressBar(c)),
      el('td', { className: 'num' }, `${num(c.succeeded) + num(c.early_stopped)}/${num(c.total)}`),
      el('td', { className: 'num' }, String(num(c.running) + num(c.leased))),
      el('td', { className: 'num' }, String(num(c.failed))),
      el('td', {}, eta(s, now)),
      el('td', {}, `${s.metric_name} (${s.metric_goal})`),
      el('td', {}, timeText(s.created_at))));
  }
  table.append(body);
  onPick();
  root.append(el('h2', {}, 'Sweeps'), sweeps.length ? table : el('p', { className: 'empty' }, 'No sweeps yet: submit one with `rung submit SPEC`.'),
    ...(sweeps.length > 1 ? [el('div', { className: 'controls' }, compare)] : []),
    el('p', { className: 'note' }, `FLOPs are 6ND. ETA from the share of compute finished since the sweep was created. ${fmt(sweeps.length, 3)} sweep(s).`),
    registryTables(registry));
}
