// A trial: its config, provenance, attempts, curves, a live log tail, learned frequencies against
// RoPE's, and its diagnostics as charts (diagnostics_charts.ts).
import { getJson, num } from './api';
import { drawChart, PALETTE, ChartSpec } from './charts';
import { X_AXES } from './curves';
import { renderDiagnostics } from './diagnostics_charts';
import { el, hashParams, setHashParam, stateName, timeText } from './format';
import type { GetDiagnosticsResponse, GetLearnedParametersResponse, LogEntry, Sweep, Trial, TrialDiagnostic } from 'rung-wire';

export async function renderTrial(root: HTMLElement, trialId: number, onStop: (stop: () => void) => void): Promise<void> {
  const trial = await getJson<Trial>(`/api/trials/${trialId}`);
  const sweep = await getJson<Sweep>(`/api/sweeps/${trial.sweep_id}`);
  document.getElementById('where')!.textContent = ` / ${sweep.name} / trial ${trialId}`;
  root.append(el('h2', {}, `Trial ${trialId} `, el('span', { className: 'state st-' + stateName(trial.state) }, stateName(trial.state))),
    el('p', {}, el('a', { href: `#/sweep/${trial.sweep_id}` }, `← sweep ${sweep.name}`), ` · ${trial.rung_label} · ${JSON.stringify(trial.assignments)}`,
      ` · step ${trial.latest_step}/${trial.total_steps} · attempt ${trial.attempt}`, trial.state_reason ? ` · ${trial.state_reason}` : ''));

  const params = hashParams();
  const xAxis = X_AXES[params.get('x') || ''] ? params.get('x')! : 'step';
  const logY = params.get('logy') === '1';
  const curvesHost = el('div', { id: 'trial-curves' });
  const xSelect = el('select', { onchange: (e: Event) => { setHashParam('x', (e.target as HTMLSelectElement).value); drawCurves(); } },
    ...Object.keys(X_AXES).map((k) => el('option', { value: k, selected: k === xAxis }, X_AXES[k].label)));
  const logYBox = el('input', { type: 'checkbox', checked: logY, onchange: () => { setHashParam('logy', logYBox.checked ? '1' : null); drawCurves(); } });
  root.append(el('section', {}, el('h3', {}, 'Curves'), el('div', { className: 'controls' }, 'x: ', xSelect, el('label', {}, logYBox, ' log y')), curvesHost));
  async function drawCurves() {
    const metrics = await getJson(`/api/trials/${trialId}/metrics?points=1000`);
    curvesHost.textContent = '';
    const column = X_AXES[xSelect.value].column;
    const losses = metrics.series.filter((s: any) => /loss/.test(s.name));
    const others = metrics.series.filter((s: any) => !/loss/.test(s.name));
    const chart = (title: string, list: any[], yLabel: string, logy: boolean) => {
      const xs = [...new Set(list.flatMap((s: any) => s.points.map((p: any) => p[column])))].sort((a: any, b: any) => a - b) as number[];
      const spec: ChartSpec = {
        title, xLabel: X_AXES[xSelect.value].label, yLabel, logY: logy, x: xs,
        series: list.map((s: any, i: number) => {
          const byX = new Map(s.points.map((p: any) => [p[column], p[4]]));
          return { label: s.name, color: PALETTE[i % PALETTE.length], values: xs.map((x) => (byX.has(x) ? byX.get(x) as number : null)), points: s.points.length < 3 };
        }),
      };
      const host = el('div', { 'data-chart': title });
      curvesHost.append(host);
      drawChart(host, spec);
    };
    if (losses.length) chart(`Trial ${trialId}: losses`, losses, 'loss (nats)', logYBox.checked);
    for (const s of others) chart(`Trial ${trialId}: ${s.name}`, [s], s.name, false);
  }
  await drawCurves();

  const logPre = el('pre', { className: 'log', id: 'log-tail' });
  root.append(el('section', {}, el('h3', {}, 'Log tail (live while it runs)'), logPre));
  async function refreshLog() {
    const logs = await getJson<{ lines: LogEntry[] }>(`/api/trials/${trialId}/logs?tail=60`);
    logPre.textContent = logs.lines.map((l) => `${timeText(l.time)} [${String(l.source).replace('SOURCE_', '').toLowerCase()} #${l.attempt}] ${l.text}`).join('\n') || '(no lines yet)';
    logPre.scrollTop = logPre.scrollHeight;
  }
  await refreshLog();
  const live = ['pending', 'leased', 'running'].includes(stateName(trial.state));
  if (live) {
    const timer = setInterval(() => { refreshLog().catch(() => {}); }, 2000);
    onStop(() => clearInterval(timer));
  }

  // Learned frequencies against RoPE's base^(-2i/d).
  const parameters = await getJson<GetLearnedParametersResponse>(`/api/trials/${trialId}/parameters`);
  const freqs = (parameters.parameters || []).filter((p) => /freq/.test(p.tensor?.name ?? ''));
  const freqHost = el('div', { id: 'trial-frequencies' });
  root.append(el('section', {}, el('h3', {}, 'Learned frequencies against RoPE\'s'), freqHost));
  if (freqs.length) {
    const config: any = trial.config || {};
    const base = num(config?.position?.base) || 10000;
    const n = Math.max(...freqs.map((p: any) => p.tensor.values.length));
    const x = Array.from({ length: n }, (_, i) => i);
    const series = freqs.slice(0, 9).map((p: any, i: number) => ({ label: p.tensor.name, color: PALETTE[(i + 1) % PALETTE.length], values: x.map((j) => (j < p.tensor.values.length ? num(p.tensor.values[j]) : null)) }));
    series.unshift({ label: `RoPE base ${base}`, color: '#000000', values: x.map((i) => Math.pow(base, -i / n)), dash: [6, 4] } as any);
    drawChart(freqHost, { title: `Trial ${trialId}: frequency per pair`, xLabel: 'pair i', yLabel: 'frequency (rad/token)', logY: true, x, series });
  } else {
    freqHost.append(el('p', { className: 'empty' }, 'No learned frequencies recorded for this trial (fixed-frequency variant, or not finished).'));
  }

  const diagnostics = await getJson<GetDiagnosticsResponse>(`/api/trials/${trialId}/diagnostics`);
  const documents: TrialDiagnostic[] = diagnostics.diagnostics;
  const charts = el('div', { id: 'diagnostics-charts' });
  const diagHost = el('section', { id: 'trial-diagnostics' }, el('h3', {}, 'Diagnostics'), charts);
  root.append(diagHost);
  if (!documents.length) {
    charts.append(el('p', { className: 'empty' }, 'No diagnostics stored (train.diagnostics_sequences = 0, or not finished).'));
  } else {
    const config: any = trial.config || {};
    renderDiagnostics(charts, `Trial ${trialId}`, documents, num(config?.data?.seq_len), num(trial.final_metric));
    const raw = el('details', { id: 'diagnostics-raw' }, el('summary', {}, `The documents as stored (${documents.length})`));
    for (const d of documents) {
      const { name, step, layer, head, ...document } = d;
      raw.append(el('details', {}, el('summary', {}, `${name} (step ${step}${num(layer) >= 0 ? ', layer ' + layer : ''}${num(head) >= 0 ? ', head ' + head : ''})`),
        el('pre', {}, JSON.stringify(document, null, 2).slice(0, 20000))));
    }
    diagHost.append(raw);
  }

  const attempts = el('table', { className: 'data', id: 'attempts' }, el('thead', {}, el('tr', {}, ...['attempt', 'worker', 'state', 'leased', 'started', 'ended', 'why it ended'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  for (const a of trial.attempts || []) {
    body.append(el('tr', {}, el('td', {}, a.attempt), el('td', {}, a.worker_id), el('td', {}, stateName(a.state)), el('td', {}, timeText(a.leased_at)),
      el('td', {}, timeText(a.started_at)), el('td', {}, timeText(a.ended_at)), el('td', {}, a.exit_reason)));
  }
  attempts.append(body);
  const provenance = [...(trial.attempts || [])].reverse().find((a) => a.provenance);
  root.append(el('section', {}, el('h3', {}, 'Attempts'), attempts),
    el('section', { className: 'two' },
      el('div', {}, el('h3', {}, 'Config (resolved)'), el('pre', { id: 'config' }, JSON.stringify(trial.config || {}, null, 2))),
      el('div', {}, el('h3', {}, 'Provenance'), el('pre', { id: 'provenance' }, provenance ? JSON.stringify(provenance.provenance, null, 2) : '(not reported yet)'))));
}
