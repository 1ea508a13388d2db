// tests/dashboard/browser_check.mjs: the dashboard in a real browser (Debian's chromium, headless,
// driven by playwright-core), run by dashboard_browser_test.cc while a real sweep runs on loopback
// (rung-coordinator, two rung-workers playing rung-stand-in). Checks: 401 without the login; the
// login cookie is HttpOnly and SameSite=Strict; the sweeps list; a live update arriving on the
// sweep page; the trials table (final, best, last) and the curves (seed means) against the API's
// numbers; the fit's multipliers against `rung fit SWEEP --format json`; a trial's curve against
// its metrics; a control endpoint refused (403); SVG and PNG downloads; nothing fetched from
// anywhere but the dashboard. Screenshots of each view go to $SCREENSHOT_DIR.
//
// Environment: DASHBOARD_URL (the printed URL with ?token=), SCREENSHOT_DIR, SWEEP_ID, RUNG_CLI (the
// rung binary, for `rung fit`), RUNG_COORDINATOR and RUNG_TOKEN_FILE (for it), CHROMIUM
// (default /usr/bin/chromium). Exit 0 when every check holds; each check prints one line.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// ES modules ignore NODE_PATH: playwright-core is resolved from the build folder's node_modules
// (NODE_PATH, set by dashboard_browser_test.cc) through a require rooted there.
const { chromium } = createRequire(join(process.env.NODE_PATH || '.', 'resolve-from-here.js'))('playwright-core');

const url = process.env.DASHBOARD_URL;
const shots = process.env.SCREENSHOT_DIR;
const sweepId = Number(process.env.SWEEP_ID || 1);
const origin = new URL(url).origin;
const token = new URL(url).searchParams.get('token');

function check(condition, what) {
  if (!condition) throw new Error('check failed: ' + what);
  console.log('ok: ' + what);
}
const close = (a, b, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
const api = async (path) => {
  const response = await fetch(origin + path, { headers: { Authorization: 'Bearer ' + token } });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- 401 without the login, before any browser
for (const path of ['/', '/app.js', '/api/sweeps', `/api/sweeps/${sweepId}/events`]) {
  const response = await fetch(origin + path);
  check(response.status === 401, `401 without the token: ${path}`);
}

const profile = mkdtempSync(join(tmpdir(), 'rung-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
  acceptDownloads: true,
});
const page = context.pages()[0] || (await context.newPage());
const errors = [];
page.on('pageerror', (error) => errors.push(String(error)));
// Chromium logs every non-2xx fetch as "Failed to load resource"; the answers the page asks for and
// handles (403 at a control endpoint, 409 for a fit while the sweep runs, 404 of a trial without
// diagnostics) are checked where they happen, so only script errors count here.
page.on('console', (message) => {
  if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
});
const foreign = [];
page.on('request', (request) => {
  const where = request.url();
  if (!where.startsWith(origin) && !where.startsWith('blob:') && !where.startsWith('data:')) foreign.push(where);
});
const ready = async (route) => page.waitForSelector(`#app[data-ready="${route}"]`, { timeout: 30000 });

try {
  // ---- login and the sweeps list
  await page.goto(url);
  await ready('#/');
  check(!page.url().includes('token='), 'the login redirect drops the token from the address bar');
  const cookie = (await context.cookies()).find((c) => c.name === 'rung_dashboard');
  check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'the login cookie is HttpOnly and SameSite=Strict');
  await page.waitForSelector(`#sweeps tr[data-sweep="${sweepId}"]`);
  await page.screenshot({ path: join(shots, 'sweeps.png') });

  // ---- the sweep page while it runs: a live update arrives
  await page.goto(`${origin}/#/sweep/${sweepId}`);
  await ready(`#/sweep/${sweepId}`);
  await page.waitForFunction(() => Number(document.getElementById('live').getAttribute('data-updates') || 0) >= 1, null, { timeout: 20000 });
  const before = Number(await page.getAttribute('#live', 'data-updates'));
  const listed = (await api(`/api/sweeps/${sweepId}/trials`)).trials;
  const moving = listed.find((t) => ['TRIAL_STATE_RUNNING', 'TRIAL_STATE_LEASED', 'TRIAL_STATE_PENDING'].includes(t.state));
  check(moving !== undefined, 'the sweep is still running when the page opens');
  const started = Date.now();
  await page.waitForFunction((n) => Number(document.getElementById('live').getAttribute('data-updates')) > n, before, { timeout: 30000 });
  console.log(`live update arrived ${Date.now() - started} ms after the page had its snapshot`);
  // A metric landing shows in the table: poll the API for a new step, then wait for the page.
  let landed = null;
  for (let i = 0; i < 200 && !landed; i++) {
    const now = (await api(`/api/sweeps/${sweepId}/trials`)).trials;
    landed = now.find((t) => t.state === 'TRIAL_STATE_RUNNING' && Number(t.latest_step) > 0);
    if (!landed) await sleep(100);
  }
  if (landed) {
    const t0 = Date.now();
    await page.waitForFunction(([id, step]) => {
      const cell = document.querySelector(`#trials-table tr[data-trial="${id}"] td[data-key="step"]`);
      return cell && Number(cell.textContent) >= step;
    }, [landed.trial_id, Number(landed.latest_step)], { timeout: 10000 });
    console.log(`ok: trial ${landed.trial_id}'s step ${landed.latest_step} showed on the page ${Date.now() - t0} ms after the API had it`);
  }
  await page.screenshot({ path: join(shots, 'sweep-running.png'), fullPage: true });

  // ---- wait for the end of the sweep
  let sweep = null;
  for (let i = 0; i < 600; i++) {
    sweep = await api(`/api/sweeps/${sweepId}`);
    if (sweep.state !== 'SWEEP_STATE_ACTIVE') break;
    await sleep(250);
  }
  check(sweep.state === 'SWEEP_STATE_SUCCEEDED', `the sweep finished (${sweep.state})`);
  await page.waitForFunction(() => /finished/.test(document.getElementById('live').textContent), null, { timeout: 20000 });
  check(true, 'the page saw the end of the sweep');

  // ---- reload: the table against the API
  await page.goto(`${origin}/#/`);
  await ready('#/');
  await page.goto(`${origin}/#/sweep/${sweepId}`);
  await ready(`#/sweep/${sweepId}`);
  const trials = (await api(`/api/sweeps/${sweepId}/trials`)).trials;
  const best = new Map((await api(`/api/sweeps/${sweepId}/results?summary=best`)).rows.map((r) => [r.trial_ids[0], Number(r.values[0])]));
  for (const t of trials) {
    const cells = await page.$$eval(`#trials-table tr[data-trial="${t.trial_id}"] td`, (tds) => Object.fromEntries(tds.map((td) => [td.dataset.key, td.textContent])));
    const shown = { final: Number(cells.final), last: Number(cells.last), best: Number(cells.best) };
    if (!close(shown.final, Number(t.final_metric), 1e-4) || !close(shown.last, Number(t.latest_metric), 1e-4) ||
        !close(shown.best, best.get(t.trial_id), 1e-4) || cells.state !== 'succeeded') {
      throw new Error(`trial ${t.trial_id}: the page shows ${JSON.stringify(cells)}, the API ${t.final_metric}/${t.latest_metric}/${best.get(t.trial_id)}`);
    }
  }
  check(true, `the trials table's final, best and last equal the API's for all ${trials.length} trials`);

  // ---- the curves: every cell's seed mean against the API's curves
  const spec = await page.$eval('#sweep-curves', (host) => host.rungChart);
  const curves = new Map((await api(`/api/sweeps/${sweepId}/curves?metric=val_loss&points=400`)).trials.map((c) => [Number(c.trial_id), c.points]));  // int64 ids: strings in proto JSON
  let compared = 0;
  for (const series of spec.series) {
    const [variant, rest] = series.label.split(' · ');
    const rung = rest.split(' ')[0];
    const members = trials.filter((t) => t.rung_label === rung && Object.entries(JSON.parse(t.assignments_json))
      .filter(([k]) => k !== 'seed').map(([k, v]) => `${k.replace(/^.*\./, '')}=${v}`).join(' ') === variant);
    check(members.length > 0, `the cell '${series.label}' has trials`);
    const steps = curves.get(Number(members[0].trial_id)).map((p) => p[0]);
    for (const step of steps) {
      const values = members.map((m) => curves.get(Number(m.trial_id)).find((p) => p[0] === step)[2]);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const j = spec.x.indexOf(step);
      if (j < 0 || !close(series.values[j], mean)) throw new Error(`${series.label} at step ${step}: page ${series.values[j]}, API mean ${mean}`);
      compared++;
    }
  }
  check(compared > 0, `the curves' seed means equal the API's at ${compared} points`);
  await page.screenshot({ path: join(shots, 'sweep.png'), fullPage: true });
  await (await page.$('#sweep-curves')).screenshot({ path: join(shots, 'sweep-curves.png') });

  // ---- state in the URL: log y and the x axis survive a reload
  await page.check('input[name="logy"]');
  await page.selectOption('select[name="x"]', 'flops');
  check(page.url().includes('logy=1') && page.url().includes('x=flops'), 'the axes are in the URL');
  await page.reload();
  await ready(`#/sweep/${sweepId}`);
  const reloaded = await page.$eval('#sweep-curves', (host) => ({ logY: host.rungChart.logY, x: host.rungChart.xLabel }));
  check(reloaded.logY === true && /FLOPs/.test(reloaded.x), 'a reloaded URL shows the same view');

  // ---- downloads
  const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#sweep-curves .downloads button:text("SVG")')]);
  const svgText = readFileSync(await svg.path(), 'utf8');
  check(svgText.startsWith('<svg') && svgText.includes('<polyline'), `the curves download as SVG (${svg.suggestedFilename()})`);
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#sweep-curves .downloads button:text("PNG")')]);
  const pngBytes = readFileSync(await png.path());
  check(pngBytes.subarray(1, 4).toString() === 'PNG' && pngBytes.length > 5000, `the curves download as PNG (${pngBytes.length} bytes)`);

  // ---- the fit against `rung fit --format json`
  await page.waitForSelector('#fit-table tbody tr', { timeout: 60000 });
  const cli = JSON.parse(execFileSync(process.env.RUNG_CLI, ['fit', String(sweepId), '--format', 'json'], { encoding: 'utf8' }));
  const expected = cli.filter((r) => r.role === 'estimate' && r.estimator === 'piecewise');
  const shownRows = await page.$$eval('#fit-table tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
  check(shownRows.length === expected.length, `the fit table has rung fit's ${expected.length} piecewise rows`);
  for (const row of expected) {
    const shown = shownRows.find((r) => r[0] === row.variant && r[1] === row.label);
    const text = row.multiplier === null ? '—' : row.multiplier.toFixed(3);
    if (!shown || shown[6] !== text) throw new Error(`fit ${row.variant} ${row.label}: page ${shown && shown[6]}, rung fit ${text}`);
  }
  check(true, 'the multipliers equal rung fit --format json');
  await (await page.$('#fit')).screenshot({ path: join(shots, 'fit.png') });

  // ---- control is refused without --allow-control
  const refused = await page.evaluate(async (id) => {
    const response = await fetch(`/api/sweeps/${id}/pause`, { method: 'POST' });
    return { status: response.status, body: await response.text() };
  }, sweepId);
  check(refused.status === 403 && refused.body.includes('--allow-control'), 'a control endpoint answers 403 with what to do');
  check((await page.$$('button[data-action]')).length === 0, 'no control buttons without --allow-control');

  // ---- a trial page: its curve against its metrics
  const trialId = trials[0].trial_id;
  await page.goto(`${origin}/#/trial/${trialId}`);
  await ready(`#/trial/${trialId}`);
  const trialSpec = await page.$eval('#trial-curves [data-chart$="losses"]', (host) => host.rungChart);
  const metrics = await api(`/api/trials/${trialId}/metrics?points=1000`);
  const val = metrics.series.find((s) => s.name === 'val_loss');
  const shownVal = trialSpec.series.find((s) => s.label === 'val_loss');
  for (const p of val.points) {
    const j = trialSpec.x.indexOf(p[0]);
    if (j < 0 || shownVal.values[j] !== p[4]) throw new Error(`trial ${trialId} val_loss at step ${p[0]}: page ${shownVal.values[j]}, API ${p[4]}`);
  }
  check(val.points.length > 0, `trial ${trialId}'s val_loss curve equals its metrics (${val.points.length} points)`);
  check((await page.textContent('#log-tail')).length > 0, 'the trial page shows its log tail');
  check((await page.textContent('#config')).includes('position'), 'the trial page shows its config');
  await page.screenshot({ path: join(shots, 'trial.png'), fullPage: true });

  check(errors.length === 0, `no errors in the page${errors.length ? ': ' + errors.join('; ') : ''}`);
  check(foreign.length === 0, `nothing fetched from elsewhere${foreign.length ? ': ' + foreign.join(', ') : ''}`);
} catch (error) {
  console.error(String(error.stack || error));
  await page.screenshot({ path: join(shots, 'failure.png'), fullPage: true }).catch(() => {});
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
