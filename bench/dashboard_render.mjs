// bench/dashboard_render.mjs: times the sweep page of `rung dashboard` in Debian's chromium
// (playwright-core), for bench/dashboard_scale.py. Environment: DASHBOARD_URL, SWEEP_ID. Prints one
// JSON line: ready_ms (navigation to the page's data-ready mark: table, progress and curves
// drawn), summaries_ms (until the table's best and last columns are filled in), redraw_ms (log y toggled until the chart is drawn again), rows (trials table rows), requests
// (each API request the page made before it was ready, from navigation to its start and its end).
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// ES modules ignore NODE_PATH: playwright-core is resolved from the build folder's node_modules
// (bench/dashboard_scale.py sets NODE_PATH), as tests/dashboard/browser_check.mjs does.
const { chromium } = createRequire(join(process.env.NODE_PATH || '.', 'resolve-from-here.js'))('playwright-core');

const url = process.env.DASHBOARD_URL;
const sweepId = process.env.SWEEP_ID || '1';
const origin = new URL(url).origin;
const profile = mkdtempSync(join(tmpdir(), 'rung-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
try {
  const page = context.pages()[0] || (await context.newPage());
  await page.goto(url);
  await page.waitForSelector('#app[data-ready="#/"]');
  // Each API request of the sweep page: milliseconds from navigation to its start and its end.
  const requests = [];
  const opened = new Map();
  page.on('request', (r) => opened.set(r, Date.now()));
  page.on('requestfinished', (r) => {
    if (!r.url().includes('/api/')) return;
    requests.push({ path: new URL(r.url()).pathname + new URL(r.url()).search, start_ms: opened.get(r) - started, end_ms: Date.now() - started });
  });
  const started = Date.now();
  await page.goto(`${origin}/#/sweep/${sweepId}`);
  await page.waitForSelector(`#app[data-ready="#/sweep/${sweepId}"]`, { timeout: 120000 });
  const readyMs = Date.now() - started;
  await page.waitForSelector('#trials[data-summaries="loaded"]', { timeout: 120000 });
  const summariesMs = Date.now() - started;
  const rows = await page.$$eval('#trials-table tbody tr', (r) => r.length);
  const before = Date.now();
  await page.evaluate(() => { document.querySelector('#sweep-curves').rungChart = null; });
  await page.check('input[name="logy"]');
  await page.waitForFunction(() => document.querySelector('#sweep-curves').rungChart !== null, null, { timeout: 60000 });
  const redrawMs = Date.now() - before;
  console.log(JSON.stringify({ ready_ms: readyMs, summaries_ms: summariesMs, redraw_ms: redrawMs, rows, requests: requests.filter((r) => r.start_ms <= readyMs) }));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
