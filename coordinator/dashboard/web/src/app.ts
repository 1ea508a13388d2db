// rung dashboard: the page. Hash routes: #/ (sweeps), #/sweep/ID, #/trial/ID, #/compare/A/B; the view's state
// (axes, filters, sort) follows in the hash's query, so a URL shares a view.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { el } from './format';
import { renderCompare } from './compare_view';
import { renderSweeps } from './sweeps_view';
import { renderSweep } from './sweep_view';
import { renderTrial } from './trial_view';

let stops: (() => void)[] = [];
let currentRoute = '';

async function route(): Promise<void> {
  const hash = location.hash || '#/';
  const path = hash.split('?')[0];
  if (path === currentRoute) return;  // only the view's parameters changed
  currentRoute = path;
  for (const stop of stops) stop();
  stops = [];
  const root = document.getElementById('app')!;
  root.textContent = '';
  document.getElementById('where')!.textContent = '';
  const onStop = (stop: () => void) => stops.push(stop);
  try {
    let match: RegExpMatchArray | null;
    if ((match = path.match(/^#\/sweep\/(\d+)$/))) await renderSweep(root, Number(match[1]), onStop);
    else if ((match = path.match(/^#\/trial\/(\d+)$/))) await renderTrial(root, Number(match[1]), onStop);
    else if ((match = path.match(/^#\/compare\/(\d+)\/(\d+)$/))) await renderCompare(root, Number(match[1]), Number(match[2]));
    else await renderSweeps(root);
    root.setAttribute('data-ready', path);
  } catch (error: any) {
    root.append(el('p', { className: 'error' }, String(error.message || error)));
    root.setAttribute('data-ready', path);
  }
}

window.addEventListener('hashchange', () => { route(); });
route();
