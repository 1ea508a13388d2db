// tests/dashboard/browser_check.mjs: the dashboard in a real browser (Debian's chromium, headless,
// driven by playwright-core), run by dashboard_browser_test.cc while a real sweep runs on loopback
// (rung-coordinator, two rung-workers playing rung-stand-in). Checks: 401 without the login; the
// login cookie is HttpOnly and SameSite=Strict; the sweeps list; a live update arriving on the
// sweep page; the trials table (final, best, last) and the curves (seed means) against the API's
// numbers; the fit's multipliers against `rung fit SWEEP --format json`; a trial's curve against
// its metrics; a control endpoint refused (403); SVG and PNG downloads; the diagnostics charts of a
// trial trained for real (E_2 per head, pair usage, pair-by-distance panels per head, the gap-counting
// fit, loss beyond the training length, the failure modes table, the probe's heatmaps with their
// cells' correct/instances; a milestone chosen in the URL) against its /api/trials/ID/diagnostics
// record, and no probe on a trial without one; the precision panel of a paused precision-aimed sweep
// (a row per target in its chart and table, the state and why, the FLOPs against the budget, the
// seeds planned next) against /api/sweeps/ID/precision, and none on a sweep without a precision block;
// the scaling laws panel, folded until opened, of an IsoFLOP grid (the laws table, the predicted
// multipliers' charts with their bands and extrapolated parts, the rollout, the IsoFLOP profiles)
// against /api/sweeps/ID/laws, and the one line of a ladder without laws; that sweep's loss against the evaluation length (a
// chart per rung, a line per variant and method) against /api/sweeps/ID/extrapolation, and none on a
// sweep without evaluations; the comparison of the two sweeps (ticked in the
// list): its cells' best and last values against /api/sweeps/ID/results, shared axes, the state in
// the URL; nothing fetched from anywhere but the dashboard; with a second dashboard run with
// --allow-control, its pause and resume buttons, and a control POST without X-Rung-Control or from
// another page on 127.0.0.1 refused. Screenshots of each view go to
// $SCREENSHOT_DIR.
//
// Environment: DASHBOARD_URL (the printed URL with ?token=), SCREENSHOT_DIR, SWEEP_ID,
// DIAGNOSTICS_SWEEP_ID (the finished sweep rung-train trained, with diagnostics), PRECISION_SWEEP_ID
// (a paused sweep with a precision block; its checks are skipped without it), LAWS_SWEEP_ID and
// NO_LAWS_SWEEP_ID (finished sweeps with and without scaling laws; skipped without them), RUNG_CLI (the
// rung binary, for `rung fit`), RUNG_COORDINATOR and RUNG_TOKEN_FILE (for it), CHROMIUM
// (default /usr/bin/chromium), CONTROL_URL and CONTROL_SWEEP_ID (the --allow-control dashboard's
// printed URL and a paused sweep; the control checks are skipped without them). Exit 0 when every check holds; each check prints one line.
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
const diagnosticsSweepId = Number(process.env.DIAGNOSTICS_SWEEP_ID || 0);
const precisionSweepId = Number(process.env.PRECISION_SWEEP_ID || 0);
const lawsSweepId = Number(process.env.LAWS_SWEEP_ID || 0);
const noLawsSweepId = Number(process.env.NO_LAWS_SWEEP_ID || 0);
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
// Waits for a route to be drawn; no page may show a bare "null" (a value the page forgot to render).
const ready = async (route) => {
  await page.waitForSelector(`#app[data-ready="${route}"]`, { timeout: 30000 });
  const stray = await page.$eval('#app', (app) => app.innerText.split('\n').filter((line) => line.trim() === 'null').length);
  if (stray) throw new Error(`${route} shows a stray "null" (${stray} line(s))`);
};

try {
  // ---- login and the sweeps list
  await page.goto(url);
  await ready('#/');
  check(!page.url().includes('token='), 'the login redirect drops the token from the address bar');
  const cookie = (await context.cookies()).find((c) => c.name === 'rung_dashboard');
  check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'the login cookie is HttpOnly and SameSite=Strict');
  await page.waitForSelector(`#sweeps tr[data-sweep="${sweepId}"]`);
  // What this rung can run: a row for each entry of each registry, in its order.
  const registry = await api('/api/registry');
  await page.click('#registry summary');
  for (const [id, rows] of [['registry-variants', registry.positional_variants], ['registry-forms', registry.inverse_temperature_forms],
                            ['registry-methods', registry.length_extension_methods]]) {
    const shown = await page.$$eval(`#${id} tbody tr`, (trs) => trs.map((tr) => tr.getAttribute('data-name')));
    check(rows.length > 0 && JSON.stringify(shown) === JSON.stringify(rows.map((r) => r.name)),
          `the ${id} table lists the registry's entries in order: ${shown.join(', ')}`);
  }
  check(registry.positional_variants.some((v) => v.name === 'xpos' && v.label === 'xPos' && v.rotary),
        'the variants include xPos, registered in its own files');
  await page.screenshot({ path: join(shots, 'sweeps.png'), fullPage: true });

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
  await page.waitForSelector('#trials[data-summaries="loaded"]', { timeout: 30000 });
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
  await page.waitForSelector('#extrapolation[data-trials]', { state: 'attached', timeout: 30000 });
  check(await page.getAttribute('#extrapolation', 'data-trials') === '0' && !(await page.$('[data-chart="sweep-extrapolation"]')),
    'a sweep without evaluations beyond the training length has no loss-against-length chart');
  // A legend without the cursor on the chart shows its labels without a dangling ":".
  const legendEnds = await page.$$eval('.u-legend.u-live th', (cells) => cells.map((th) => getComputedStyle(th, '::after').content));
  check(legendEnds.length > 0 && legendEnds.every((content) => content === 'none' || content === 'normal'),
    `the charts' legends end their labels without a colon (${legendEnds.length} labels)`);
  const workers = new Set();
  for (const t of trials) for (const attempt of (await api(`/api/trials/${t.trial_id}`)).attempts || []) workers.add(attempt.worker_id);
  check(!workers.has('trainer'), `the watched sweep ran on the stand-in workers only (${[...workers].sort().join(', ')})`);

  // ---- the curves: every cell's seed mean against the API's curves
  const spec = await page.$eval('#sweep-curves', (host) => host.rungChart);
  const curves = new Map((await api(`/api/sweeps/${sweepId}/curves?metric=val_loss&points=400`)).trials.map((c) => [Number(c.trial_id), c.points]));  // int64 ids: strings in proto JSON
  let compared = 0;
  for (const series of spec.series) {
    const [variant, rest] = series.label.split(' · ');
    const rung = rest.split(' ')[0];
    const members = trials.filter((t) => t.rung_label === rung && Object.entries(t.assignments)
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
  const intervals = cli.find((r) => r.role === 'estimate' && r.estimator === 'piecewise' && r.interval);
  const note = await page.$eval('[data-chart="fit-multipliers"] p.note', (p) => p.textContent);
  // With 2 seeds a label the gap reads can leave every row without an interval (rung fit says why):
  // the chart says what rung fit has, either way.
  check(intervals ? intervals.interval.construction === 'jackknife gap t' &&
                        note.includes('95% jackknife gap t intervals over the seeds of each rung')
                  : note.includes('no intervals'),
        `the multipliers' chart names their intervals as rung fit does ("${note}")`);
  await (await page.$('#fit')).screenshot({ path: join(shots, 'fit.png') });

  // ---- control is refused without --allow-control
  const refused = await page.evaluate(async (id) => {
    const response = await fetch(`/api/sweeps/${id}/pause`, { method: 'POST' });
    return { status: response.status, body: await response.text() };
  }, sweepId);
  check(refused.status === 403 && refused.body.includes('--allow-control'), 'a control endpoint answers 403 with what to do');
  check((await page.$$('button[data-action]')).length === 0, 'no control buttons without --allow-control');

  // ---- the precision panel: none on a sweep without a precision block; on the paused precision-aimed
  // sweep ($PRECISION_SWEEP_ID, no trial run), a row per target against /api/sweeps/ID/precision
  check(sweep.precision === '' && !(await page.$('#precision')), 'a sweep without a precision block has no precision panel');
  if (precisionSweepId) {
    const aim = await api(`/api/sweeps/${precisionSweepId}/precision`);
    check(aim.precision === 'aiming' && aim.rows.length === 2 && aim.rows.every((r) => r.multiplier === undefined && /no fit yet/.test(r.note)),
      `the precision sweep aims at 2 targets, neither fitted yet (${aim.rows.map((r) => `${r.variant} at ${r.rung_label}`).join(', ')})`);
    await page.goto(`${origin}/#/sweep/${precisionSweepId}`);
    await ready(`#/sweep/${precisionSweepId}`);
    await page.waitForSelector('#precision[data-precision]', { timeout: 30000 });
    check(await page.getAttribute('#precision', 'data-precision') === 'aiming', 'the precision panel is drawn with the sweep\'s state');
    const state = await page.textContent('#precision-state');
    check(state === `state: aiming (${aim.status}: ${aim.why})`, `the panel says the state and why ("${state}")`);
    const aimText = await page.textContent('#precision-aim');
    check(aimText.includes('95% intervals') && aimText.includes('target half width 0.01') && aimText.includes(aim.baseline) && aimText.includes('hermite'),
      `the panel names the level, target, baseline and estimator ("${aimText}")`);
    const budget = await page.textContent('#precision-budget');
    check(budget.includes(`${Number(aim.planned_flops).toExponential(2)} planned of a budget of 1.00e+15`), `the panel has the FLOPs planned against the budget ("${budget}")`);
    const chartRows = await page.$$eval('[data-chart="precision"] svg g.precision-row', (gs) => gs.map((g) => ({ label: g.dataset.label, status: g.dataset.status, text: g.textContent })));
    check(chartRows.length === aim.rows.length && aim.rows.every((r, i) => chartRows[i].label === `${r.variant} at ${r.rung_label}` && chartRows[i].status === 'no fit yet' && chartRows[i].text.includes(r.note)),
      `the chart has a row per target, each "no fit yet" with its note (${chartRows.map((r) => r.label).join('; ')})`);
    const tableRows = await page.$$eval('#precision-table tbody tr', (trs) => trs.map((tr) => ({ variant: tr.dataset.variant, rung: tr.dataset.rung,
      met: tr.querySelector('td[data-key="met"]').textContent, multiplier: tr.querySelector('td[data-key="multiplier"]').textContent })));
    check(tableRows.length === aim.rows.length && aim.rows.every((r, i) => tableRows[i].variant === r.variant && tableRows[i].rung === r.rung_label &&
      tableRows[i].met === 'no fit yet' && tableRows[i].multiplier === '—'), 'the table has the same rows, without a multiplier and not met');
    const nextShown = await page.$$eval('#precision-next li', (lis) => lis.map((li) => li.textContent));
    check(nextShown.length === aim.next.length && aim.next.every((a, i) => nextShown[i].includes(`seed ${a.seed}`) && nextShown[i].includes(a.why)),
      `the seeds planned next are listed with their why (${aim.next.length})`);
    await (await page.$('#precision')).screenshot({ path: join(shots, 'precision.png') });
    const [precisionSvg] = await Promise.all([page.waitForEvent('download'), page.click('[data-chart="precision"] .downloads button:text("SVG")')]);
    check(readFileSync(await precisionSvg.path(), 'utf8').includes('precision-row'), `the precision chart downloads as SVG (${precisionSvg.suggestedFilename()})`);
  }

  // ---- the scaling laws panel: folded (and not fitted) until opened; on $LAWS_SWEEP_ID (an IsoFLOP
  // grid whose runs a known law played) the laws table, the multiplier charts (a line and band per
  // variant, dashed where extrapolated), the rollout and the IsoFLOP profiles against
  // /api/sweeps/ID/laws; on $NO_LAWS_SWEEP_ID (each size ran one token count) one line saying why
  if (lawsSweepId) {
    const laws = (await api(`/api/sweeps/${lawsSweepId}/laws`)).report;
    await page.goto(`${origin}/#/sweep/${lawsSweepId}`);
    await ready(`#/sweep/${lawsSweepId}`);
    check(await page.$('#laws') && !(await page.$eval('#laws', (d) => d.open)) && !(await page.$('#laws-table')) && !(await page.getAttribute('#laws', 'data-laws')),
      'the scaling laws panel is folded and not fitted before it is opened');
    const opened = Date.now();
    await page.click('#laws > summary');
    await page.waitForSelector('#laws[data-laws="fitted"]', { timeout: 60000 });
    console.log(`the laws were fitted and drawn ${Date.now() - opened} ms after the panel was opened`);
    check(page.url().includes('laws=1'), 'the open panel is in the URL');
    const numbers = (text) => (text.match(/-?\d+(\.\d+)?(e[+-]?\d+)?/g) || []).map(Number);
    const lawRows = await page.$$eval('#laws-table tbody tr', (trs) => trs.map((tr) => ({ variant: tr.dataset.variant,
      ...Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key, td.textContent])) })));
    check(lawRows.length === laws.variants.length && laws.variants.every((v, i) => {
      const row = lawRows[i];
      return row.variant === v.variant && Number(row.points) === v.points && ['E', 'A', 'B', 'alpha', 'beta'].every((k) => {
        const [value, low, high] = numbers(row[k]);
        return close(value, v[k], 1e-3) && close(low, v[`${k}_interval`].low, 1e-3) && close(high, v[`${k}_interval`].high, 1e-3);
      }) && close(Number(row.rmse), v.rmse, 1e-2) && close(numbers(row.n_exponent)[0], v.n_exponent, 1e-2);
    }), `the laws table has each variant's E, A, B, alpha, beta with their intervals, RMSE, runs and exponents (${lawRows.map((r) => `${r.variant}: E ${r.E}`).join('; ')})`);
    const charts = await page.$$eval('[data-chart="laws-multipliers"]', (hosts) => hosts.map((h) => ({ allocation: h.dataset.allocation, spec: h.rungChart,
      canvas: !!h.querySelector('canvas') })));
    const allocations = [...new Set(laws.multipliers.map((m) => m.allocation))];
    check(charts.length === allocations.length && charts.every((c) => c.canvas && c.spec.logX), `a multiplier chart per allocation on a log compute axis (${charts.map((c) => c.allocation).join(', ')})`);
    let points = 0;
    for (const chart of charts) {
      for (const m of laws.multipliers.filter((r) => r.allocation === chart.allocation)) {
        const j = chart.spec.x.indexOf(Number(m.compute));
        const series = chart.spec.series.find((s) => s.label === `${m.variant} (${m.extrapolated ? 'extrapolated' : 'within its runs'})`);
        if (j < 0 || !series || (m.multiplier === undefined ? series.values[j] !== null : !close(series.values[j], m.multiplier) ||
            !close(series.band.lo[j], m.interval.low) || !close(series.band.hi[j], m.interval.high))) {
          throw new Error(`multiplier ${m.variant} ${m.allocation} at ${m.compute}: the chart has ${series && JSON.stringify([series.values[j], series.band.lo[j], series.band.hi[j]])}`);
        }
        if (m.extrapolated && !(series.dash && series.dash.length)) throw new Error(`${series.label} is not dashed`);
        points++;
      }
    }
    check(points === laws.multipliers.length && laws.multipliers.some((m) => m.extrapolated) && laws.multipliers.some((m) => !m.extrapolated),
      `the charts have every predicted multiplier with its interval band (${points}), the extrapolated ones dashed`);
    const rollout = await page.$$eval('#laws-rollout tbody tr', (trs) => trs.map((tr) => ({ variant: tr.dataset.variant, origin: tr.dataset.origin,
      ...Object.fromEntries([...tr.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key, td.textContent])) })));
    check(rollout.length === laws.rollout.points.length && laws.rollout.points.every((p, i) => rollout[i].variant === p.variant && rollout[i].origin === p.origin &&
      close(Number(rollout[i].loss), p.loss, 1e-4) && close(Number(rollout[i].predicted), p.predicted, 1e-4) && rollout[i].inside === (p.inside ? 'yes' : 'no') &&
      close(numbers(rollout[i].interval)[0], p.interval.low, 1e-4)),
      `the rollout has each held-out run measured against its prediction and interval, inside or not (${rollout.map((r) => r.inside).join(', ')})`);
    const rolloutError = await page.textContent('#laws-rollout-error');
    check(rolloutError.includes(`${laws.rollout.inside} of ${laws.rollout.points.length} runs inside`) && close(numbers(rolloutError)[0], laws.rollout.mean_abs_error, 1e-2),
      `the rollout's mean error ("${rolloutError}")`);
    const budgets = await page.$$eval('#laws-isoflop tbody tr', (trs) => trs.map((tr) => ({ variant: tr.dataset.variant, compute: Number(tr.dataset.compute),
      n_opt: tr.querySelector('td[data-key="n_opt"]').textContent })));
    const expectedBudgets = laws.isoflop.variants.flatMap((v) => v.budgets.map((b) => ({ variant: v.variant, compute: b.compute, n_opt: b.n_opt })));
    check(budgets.length === expectedBudgets.length && expectedBudgets.every((b, i) => budgets[i].variant === b.variant && close(budgets[i].compute, b.compute) &&
      close(numbers(budgets[i].n_opt)[0], b.n_opt, 1e-3)), `the IsoFLOP table has each budget's N* (${budgets.map((b) => b.n_opt.split(' ')[0]).join(', ')})`);
    const profiles = await page.$$eval('[data-chart="laws-isoflop"]', (hosts) => hosts.map((h) => ({ variant: h.dataset.variant, canvas: !!h.querySelector('canvas'),
      runs: h.rungChart.series.filter((s) => s.points).map((s) => s.values.filter((v) => v !== null).length), ticks: h.rungChart.whiskers.map((w) => w.x) })));
    check(profiles.length === laws.isoflop.variants.length && laws.isoflop.variants.every((v, i) => profiles[i].variant === v.variant && profiles[i].canvas &&
      profiles[i].runs.length === v.budgets.length && profiles[i].runs.every((n, j) => n === v.budgets[j].runs) && v.budgets.every((b, j) => close(profiles[i].ticks[j], b.n_opt))),
      `an IsoFLOP chart per variant, each budget's runs as points and its N* ticked (${profiles.map((p) => `${p.variant}: ${p.runs.join('+')} runs`).join('; ')})`);
    await (await page.$('#laws')).screenshot({ path: join(shots, 'laws.png') });
    const [lawsSvg] = await Promise.all([page.waitForEvent('download'), page.click('[data-chart="laws-multipliers"] .downloads button:text("SVG")')]);
    const lawsSvgText = readFileSync(await lawsSvg.path(), 'utf8');
    check(lawsSvgText.includes('<polygon') && lawsSvgText.includes('stroke-dasharray'), `the multiplier chart downloads as SVG with its bands and dashes (${lawsSvg.suggestedFilename()})`);
    // Reloaded with laws=1 in the URL, the panel opens and fits by itself.
    await page.reload();
    await ready(`#/sweep/${lawsSweepId}`);
    await page.waitForSelector('#laws[data-laws="fitted"]', { timeout: 60000 });
    check(await page.$eval('#laws', (d) => d.open), 'a reloaded URL with laws=1 opens the panel and fits it');
  }
  if (noLawsSweepId) {
    await page.goto(`${origin}/#/sweep/${noLawsSweepId}`);
    await ready(`#/sweep/${noLawsSweepId}`);
    await page.click('#laws > summary');
    await page.waitForSelector('#laws[data-laws="none"]', { timeout: 60000 });
    const why = await page.textContent('#laws-none');
    const refusal = await fetch(`${origin}/api/sweeps/${noLawsSweepId}/laws`, { headers: { Authorization: 'Bearer ' + token } });
    const refused = (await refusal.json()).error;
    check(refusal.status === 409 && why === `no scaling laws: ${refused.replace(/^coordinator: /, '')}` && why.includes('ran on one allocation rule') &&
      !why.includes('\n') && !(await page.$('#laws-table')),
      `a sweep whose sizes each ran one token count says why it has no laws (the 409's message), in one line ("${why}")`);
    await (await page.$('#laws')).screenshot({ path: join(shots, 'laws-none.png') });
  }

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
  check(!(await page.$('[data-chart="diag-probe"]')) && !(await page.$('h4.probe-heading')), 'a trial without a probe shows no probe heatmap');
  await page.screenshot({ path: join(shots, 'trial.png'), fullPage: true });

  // ---- a trial trained for real: its diagnostics as charts, against the API's record
  const diagTrials = (await api(`/api/sweeps/${diagnosticsSweepId}/trials`)).trials;
  check(diagTrials.length > 0 && diagTrials.every((t) => t.state === 'TRIAL_STATE_SUCCEEDED'), `the diagnostics sweep ${diagnosticsSweepId} finished`);
  const diagTrial = diagTrials.find((t) => t.rung_label === 'L2-d32' && t.assignments['position.variant'] === 'lerope') || diagTrials[diagTrials.length - 1];
  const documents = (await api(`/api/trials/${diagTrial.trial_id}/diagnostics`)).diagnostics;
  const attentions = documents.filter((d) => d.name === 'attention').sort((a, b) => Number(a.step) - Number(b.step));
  check(attentions.length === 2, `trial ${diagTrial.trial_id} has attention records at two milestones (steps ${attentions.map((d) => d.step).join(', ')})`);
  // The documents are typed (TrialDiagnostic's attention, extrapolation): proto3 JSON writes an int64
  // as a string and NaN as "NaN".
  const measured = (x) => (x === 'NaN' || x === null || x === undefined ? null : Number(x));
  const attention = attentions[attentions.length - 1].attention;
  const heads = attention.layers.flatMap((l) => l.heads.map((h) => ({ layer: l.layer, ...h })));
  await page.goto(`${origin}/#/trial/${diagTrial.trial_id}`);
  await ready(`#/trial/${diagTrial.trial_id}`);
  const e2 = await page.$eval('[data-chart="diag-effective-length"]', (host) => host.rungChart);
  check(e2.series.length === heads.length + 1 && heads.every((h, i) => e2.series[i + 1].label === `L${h.layer}.h${h.head}`),
    `the E_2 chart has one line per head (${heads.length}) beside the uniform row`);
  heads.forEach((h, i) => h.effective_length_by_position.forEach((v, p) => {
    if (!close(e2.series[i + 1].values[p], v)) throw new Error(`E_2 of L${h.layer}.h${h.head} at position ${p + 1}: page ${e2.series[i + 1].values[p]}, API ${v}`);
  }));
  check(true, 'E_2 by position equals the record at every position of every head');
  const usage = await page.$eval('[data-chart="diag-pair-usage"]', (host) => ({ spec: host.rungChart, cells: host.querySelectorAll('svg rect title').length }));
  check(usage.spec.rows.length === heads.length && usage.cells === heads.length * heads[0].pair_usage.length,
    `the pair-usage heatmap has a row per head and a cell per pair (${usage.cells} cells)`);
  heads.forEach((h, r) => {
    const peak = Math.max(...h.pair_usage);
    h.pair_usage.forEach((v, f) => { if (!close(usage.spec.panels[0].values[r][f], v / peak)) throw new Error(`pair usage ${r},${f}: page ${usage.spec.panels[0].values[r][f]}, API ${v / peak}`); });
    if (usage.spec.panels[0].marks[r].column !== Number(h.dominant_pair)) throw new Error(`head ${r}: dominant pair ${usage.spec.panels[0].marks[r].column}, API ${h.dominant_pair}`);
  });
  check(true, 'the pair usage (over each head\'s maximum) and the dominant band equal the record');
  for (const layer of attention.layers) {
    const profile = await page.$eval(`[data-chart="diag-pair-profile-L${layer.layer}"]`, (host) => host.rungChart);
    check(profile.panels.length === layer.heads.length && profile.diverging &&
      profile.panels.every((panel, i) => panel.values.every((row, f) => row.every((v, b) => {
        const stored = measured(layer.heads[i].pair_profile[f].values[b]);
        return v === null ? stored === null : close(v, stored);
      }))),
      `layer ${layer.layer}'s pair-by-distance profile: one panel per head (${profile.panels.length}), equal to the record, symmetric about 0`);
  }
  const gap = await page.$eval('[data-chart="diag-gap-counting"]', (host) => host.rungChart);
  const pooled = gap.series.find((s) => s.label.startsWith('pooled:') && s.points);
  check(pooled && pooled.label.includes(`ξ_Λ = ${attention.pooled.xi_lambda.toFixed(2)}`), `the gap-counting fit shows the pooled ξ_Λ = ${attention.pooled.xi_lambda.toFixed(2)}`);
  for (const bucket of attention.pooled.buckets) {
    const j = gap.x.findIndex((x) => close(x, Math.log(Math.log(Number(bucket.n))), 1e-12));  // the page's Math.log is another engine's
    if (j < 0 || !close(pooled.values[j], bucket.mean_log_lambda)) throw new Error(`gap counting at n = ${bucket.n}: page ${pooled.values[j]}, API ${bucket.mean_log_lambda}`);
  }
  check(true, `the pooled bucket means of ln Λ equal the record at ${attention.pooled.buckets.length} lengths`);
  const extrapolation = documents.find((d) => d.name === 'extrapolation').extrapolation.results;
  const beyond = await page.$eval('[data-chart="diag-extrapolation"]', (host) => host.rungChart);
  for (const row of extrapolation) {
    const series = beyond.series.find((s) => s.label === `${row.method}: whole window`);
    const j = beyond.x.indexOf(Number(row.multiple));
    if (!series || j < 0 || !close(series.values[j], row.val_loss)) throw new Error(`loss at ${row.length} (${row.method}): page ${series && series.values[j]}, API ${row.val_loss}`);
  }
  check(true, `the loss beyond the training length equals the extrapolation table (${extrapolation.length} rows)`);
  const positions = await page.$eval('[data-chart="diag-extrapolation-positions"]', (host) => host.rungChart.series.length);
  check(positions === extrapolation.length, `one per-position loss curve per evaluated length and method (${positions})`);
  const failureRows = await page.$$eval('#diag-failure-modes tbody tr[data-length]', (rows) => rows.map((r) => ({
    length: Number(r.dataset.length), inversion: Number(r.querySelector('td[data-key="position_inversion"]').textContent),
    aliasing: Number(r.querySelector('td[data-key="position_aliasing_fraction.bf16"]').textContent), verdict: r.nextElementSibling.textContent })));
  const modes = heads.flatMap((h) => h.failure_modes.map((m) => ({ ...m, length: Number(m.length) })));
  const contexts = [...new Set(modes.map((m) => m.length))];
  check(failureRows.length === contexts.length && failureRows.every((r) => r.verdict.length > 20), `the failure modes table has a row and a verdict per context M (${contexts.join(', ')})`);
  const mean = (list, key) => list.reduce((sum, m) => sum + m[key], 0) / list.length;
  const at = (length, precision) => modes.filter((m) => m.length === length && m.precision === precision);
  check(failureRows.every((r) => close(r.inversion, mean(at(r.length, 'fp32'), 'position_inversion'), 1e-3) && close(r.aliasing, mean(at(r.length, 'bf16'), 'position_aliasing_fraction'), 1e-3)),
    `its position inversion and bf16 aliasing are the means over the ${heads.length} heads`);
  // Its probe: a heading naming the kind and the scoring, a heatmap per extension method (needle depth
  // rows x prompt length columns, accuracy on 0..1), each cell the method was scored at labelled
  // correct/instances, against the record's cells.
  const probeCells = documents.find((d) => d.name === 'probe').probe.results;
  const probeMethods = [...new Set(probeCells.map((c) => c.method))];
  const probeDepths = [...new Set(probeCells.map((c) => Number(c.depth)))].sort((x, y) => x - y);
  const probeLengths = [...new Set(probeCells.map((c) => Number(c.length)))].sort((x, y) => x - y);
  check(probeCells.length === 9 && JSON.stringify(probeMethods) === '["none","yarn"]' && JSON.stringify(probeLengths) === '[16,32]',
    `trial ${diagTrial.trial_id} has its template probe's 9 cells (16 tokens: none; 32: none and yarn; 3 depths)`);
  const probeHeading = await page.$$eval('#diag-probe h4.probe-heading', (hs) => hs.map((h) => h.textContent));
  check(probeHeading.length === 1 && probeHeading[0] === 'Probe: template, scored by greedy decode of the answer, exact match',
    `the probe's heading names its kind and scoring ("${probeHeading[0]}")`);
  const probeCharts = await page.$$eval('[data-chart="diag-probe"]', (hosts) => hosts.map((h) => ({
    method: h.dataset.method, spec: h.rungChart, cells: h.querySelectorAll('svg rect title').length,
    labels: [...h.querySelectorAll('svg text.cell-label')].map((t) => t.textContent) })));
  check(JSON.stringify(probeCharts.map((c) => c.method)) === JSON.stringify(probeMethods), `a probe heatmap per extension method (${probeCharts.map((c) => c.method).join(', ')})`);
  for (const chart of probeCharts) {
    const mine = probeCells.filter((c) => c.method === chart.method);
    // Row by row (depth), left to right (length): the cells the method was scored at.
    const expectedLabels = probeDepths.flatMap((d) => probeLengths.map((l) => mine.find((c) => Number(c.depth) === d && Number(c.length) === l))
      .filter((c) => c).map((c) => `${c.correct}/${c.instances}`));
    check(chart.cells === probeDepths.length * probeLengths.length && chart.spec.rows.length === probeDepths.length &&
      JSON.stringify(chart.spec.columns) === JSON.stringify(probeLengths.map(String)) && JSON.stringify(chart.spec.range) === '[0,1]',
      `${chart.method}: ${chart.cells} cells, needle depth (${chart.spec.rows.join(', ')}) by prompt length (${chart.spec.columns.join(', ')}), accuracy on 0..1`);
    check(JSON.stringify(chart.labels) === JSON.stringify(expectedLabels) && chart.labels.length === mine.length,
      `${chart.method}: each of its ${mine.length} cells labelled correct/instances as the record has it (${chart.labels.join(' ')})`);
    probeDepths.forEach((d, r) => probeLengths.forEach((l, col) => {
      const cell = mine.find((c) => Number(c.depth) === d && Number(c.length) === l);
      const shown = chart.spec.panels[0].values[r][col];
      if (cell ? !close(shown, Number(cell.accuracy)) : shown !== null) throw new Error(`probe ${chart.method} depth ${d} length ${l}: page ${shown}, API ${cell && cell.accuracy}`);
    }));
  }
  check(true, 'the probe heatmaps\' colours are the cells\' accuracies, grey where a method was not scored');
  await (await page.$('#diag-probe')).screenshot({ path: join(shots, 'trial-probe.png') });
  await (await page.$('#trial-diagnostics')).screenshot({ path: join(shots, 'trial-diagnostics.png') });
  const [heatmapSvg] = await Promise.all([page.waitForEvent('download'), page.click('[data-chart="diag-pair-usage"] .downloads button:text("SVG")')]);
  check(readFileSync(await heatmapSvg.path(), 'utf8').includes('<rect'), `the pair-usage heatmap downloads as SVG (${heatmapSvg.suggestedFilename()})`);
  const [heatmapPng] = await Promise.all([page.waitForEvent('download'), page.click('[data-chart="diag-pair-usage"] .downloads button:text("PNG")')]);
  check(readFileSync(await heatmapPng.path()).subarray(1, 4).toString() === 'PNG', 'and as PNG');
  // The earlier milestone, chosen in the page, is in the URL and survives a reload.
  await page.selectOption('select[name="diag_step"]', String(attentions[0].step));
  await page.reload();
  await ready(`#/trial/${diagTrial.trial_id}`);
  const early = await page.$eval('[data-chart="diag-effective-length"]', (host) => host.rungChart.series[1].values);
  check(page.url().includes(`diag_step=${attentions[0].step}`) && early.every((v, p) => close(v, attentions[0].attention.layers[0].heads[0].effective_length_by_position[p])),
    `the milestone at step ${attentions[0].step} is in the URL and its record is drawn after a reload`);

  // ---- the diagnostics sweep's page: its loss against the evaluation length, a chart per rung, a line
  // per variant (what differs between its trials) and method, against /api/sweeps/ID/extrapolation
  const evaluated = (await api(`/api/sweeps/${diagnosticsSweepId}/extrapolation`)).trials;
  check(evaluated.length === diagTrials.length, `every trial of the diagnostics sweep has its evaluations beyond T (${evaluated.length})`);
  await page.goto(`${origin}/#/sweep/${diagnosticsSweepId}`);
  await ready(`#/sweep/${diagnosticsSweepId}`);
  await page.waitForSelector('#extrapolation[data-trials]', { state: 'attached', timeout: 30000 });
  const lengthCharts = await page.$$eval('[data-chart="sweep-extrapolation"]', (hosts) => hosts.map((h) => ({ rung: h.dataset.rung, spec: h.rungChart })));
  const evaluatedRungs = [...new Set(evaluated.map((e) => e.trial.rung_label))];
  check(lengthCharts.length === evaluatedRungs.length && lengthCharts.every((c) => evaluatedRungs.includes(c.rung)),
    `a loss-against-length chart per rung (${lengthCharts.map((c) => c.rung).join(', ')})`);
  let lengthPoints = 0;
  for (const { rung, spec: chart } of lengthCharts) {
    const members = evaluated.filter((e) => e.trial.rung_label === rung);
    const expected = members.flatMap((e) => [...new Set(e.results.map((r) => r.method))].map((m) => `${e.trial.assignments['position.variant']} (${m})`));
    check(JSON.stringify(chart.series.map((s) => s.label).sort()) === JSON.stringify(expected.sort()),
      `rung ${rung}: a line per variant and method (${chart.series.map((s) => s.label).join(', ')})`);
    for (const e of members) {
      for (const r of e.results) {
        const series = chart.series.find((s) => s.label === `${e.trial.assignments['position.variant']} (${r.method})`);
        const T = Number(r.length) / Number(r.multiple);
        const at = (length) => series.values[chart.x.indexOf(length)];
        if (!close(at(Number(r.length)), Number(r.val_loss)) || !close(at(T), Number(e.val_loss))) {
          throw new Error(`rung ${rung} ${series.label}: page ${at(T)} at ${T}, ${at(Number(r.length))} at ${r.length}; API ${e.val_loss}, ${r.val_loss}`);
        }
        lengthPoints += 2;
      }
    }
    check(chart.logX && JSON.stringify(chart.xTicks) === JSON.stringify(chart.x) && chart.whiskers.length === 1 && chart.whiskers[0].x === 16,
      `rung ${rung}: a log x axis with a tick at each length (${chart.x.join(', ')}), the training length 16 marked`);
  }
  check(lengthPoints > 0, `the lines equal the API's losses at the training length and each evaluated length (${lengthPoints} points)`);
  await (await page.$('#extrapolation')).screenshot({ path: join(shots, 'sweep-extrapolation.png') });
  const [lengthSvg] = await Promise.all([page.waitForEvent('download'), page.click('[data-chart="sweep-extrapolation"] .downloads button:text("SVG")')]);
  check(readFileSync(await lengthSvg.path(), 'utf8').includes('<polyline'), `the loss-against-length chart downloads as SVG (${lengthSvg.suggestedFilename()})`);

  // ---- the two sweeps side by side: ticked in the list
  await page.goto(`${origin}/#/`);
  await ready('#/');
  await page.check(`#sweeps input[name="pick"][value="${diagnosticsSweepId}"]`);
  await page.check(`#sweeps input[name="pick"][value="${sweepId}"]`);
  await page.click('#compare');
  await page.waitForFunction(() => /^#\/compare\/\d+\/\d+/.test(location.hash));
  const [a, b] = new URL(page.url()).hash.match(/compare\/(\d+)\/(\d+)/).slice(1).map(Number);
  check([a, b].sort().join() === [diagnosticsSweepId, sweepId].sort().join(), `compare opens #/compare/${a}/${b}`);
  await ready(`#/compare/${a}/${b}`);
  const results = {};
  for (const [side, id] of [['a', a], ['b', b]]) {
    for (const summary of ['best', 'last']) {
      const r = await api(`/api/sweeps/${id}/results?summary=${summary}&metric=val_loss&group_by=rung_label,position.variant`);
      for (const row of r.rows) results[`${side}|${summary}|${row.group_values[0]}|${row.group_values[1]}`] = Number(row.values[r.aggregations.indexOf('AGGREGATION_MEAN')]);
    }
  }
  const tableRows = await page.$$eval('#compare-cells tbody tr', (rows) => rows.map((r) => ({
    rung: r.children[0].textContent, variant: r.children[1].textContent,
    values: Object.fromEntries([...r.querySelectorAll('td[data-key]')].map((td) => [td.dataset.key, td.dataset.value === undefined ? null : Number(td.dataset.value)])) })));
  let matched = 0, numbers = 0;
  for (const row of tableRows) {
    for (const side of ['a', 'b']) {
      for (const summary of ['best', 'last']) {
        const expected = results[`${side}|${summary}|${row.rung}|${row.variant}`];
        const shown = row.values[`${side}-${summary}`];
        if (expected === undefined ? shown !== null : !close(shown, expected)) throw new Error(`compare ${row.rung} ${row.variant} ${side}-${summary}: page ${shown}, API ${expected}`);
        if (expected !== undefined) numbers++;
      }
    }
    if (row.values['a-best'] !== null && row.values['b-best'] !== null) {
      matched++;
      if (!close(row.values['delta-best'], row.values['b-best'] - row.values['a-best'])) throw new Error(`compare ${row.rung} ${row.variant}: Δ best ${row.values['delta-best']}`);
    }
  }
  check(tableRows.length === 6 && matched === 4, `the comparison table has 6 cells, 4 of them in both sweeps (L1-d16, L2-d32 x rope, lerope): ${tableRows.length}, ${matched}`);
  check(numbers === 20, `its ${numbers} best and last values equal /api/sweeps/ID/results`);
  const sides = await page.$$eval('#compare-curves-a, #compare-curves-b', (hosts) => hosts.map((h) => h.rungChart));
  check(sides.length === 2 && JSON.stringify(sides[0].xRange) === JSON.stringify(sides[1].xRange) && JSON.stringify(sides[0].yRange) === JSON.stringify(sides[1].yRange) && sides[0].yRange,
    'the two sweeps\' curves share their axes');
  const cellsOf = (id) => new Set(trials.concat(diagTrials).filter((t) => Number(t.sweep_id) === id).map((t) => t.rung_label + JSON.stringify({ ...t.assignments, seed: undefined }))).size;
  check(sides[0].series.length === cellsOf(a) && sides[1].series.length === cellsOf(b), `one curve per cell on each side (${sides[0].series.length}, ${sides[1].series.length})`);
  await page.screenshot({ path: join(shots, 'compare.png'), fullPage: true });
  await page.check('input[name="logy"]');
  await page.selectOption('select[name="x"]', 'tokens');
  await page.reload();
  await ready(`#/compare/${a}/${b}`);
  const again = await page.$eval('#compare-curves-b', (host) => ({ logY: host.rungChart.logY, x: host.rungChart.xLabel }));
  check(page.url().includes('logy=1') && page.url().includes('x=tokens') && again.logY && again.x === 'tokens', 'the comparison\'s axes are in the URL and survive a reload');
  const [compareSvg] = await Promise.all([page.waitForEvent('download'), page.click('#compare-curves-a .downloads button:text("SVG")')]);
  check(readFileSync(await compareSvg.path(), 'utf8').includes('<polyline'), `a comparison chart downloads as SVG (${compareSvg.suggestedFilename()})`);

  // ---- control from the page of a second dashboard with --allow-control ($CONTROL_URL): its resume
  // and pause buttons work; the same POST without X-Rung-Control, or from another page on
  // 127.0.0.1 (same site, so the cookie goes along), is refused and changes nothing. Its own tab:
  // its origin (another port) is not the first dashboard's. Logging in there replaces the cookie
  // (cookies ignore ports), so this comes last.
  if (process.env.CONTROL_URL) {
    await page.goto('about:blank');  // the first dashboard's page stops asking (its cookie is about to go)
    const controlOrigin = new URL(process.env.CONTROL_URL).origin;
    const controlToken = new URL(process.env.CONTROL_URL).searchParams.get('token');
    const controlSweep = Number(process.env.CONTROL_SWEEP_ID);
    const stateOf = async () => (await (await fetch(`${controlOrigin}/api/sweeps/${controlSweep}`,
      { headers: { Authorization: 'Bearer ' + controlToken } })).json()).state;
    const awaitState = async (state) => {
      for (let i = 0; i < 100 && (await stateOf()) !== state; ++i) await sleep(100);
      return stateOf();
    };
    const controlPage = await context.newPage();
    await controlPage.goto(process.env.CONTROL_URL);
    await controlPage.goto(`${controlOrigin}/#/sweep/${controlSweep}`);
    await controlPage.waitForSelector(`#app[data-ready="#/sweep/${controlSweep}"]`, { timeout: 30000 });
    check(await stateOf() === 'SWEEP_STATE_PAUSED', `control sweep ${controlSweep} starts paused`);
    await controlPage.click('button[data-action="resume"]');
    check(await awaitState('SWEEP_STATE_ACTIVE') === 'SWEEP_STATE_ACTIVE', 'the page\'s resume button resumes the sweep');
    await controlPage.click('button[data-action="pause"]');
    check(await awaitState('SWEEP_STATE_PAUSED') === 'SWEEP_STATE_PAUSED', 'the page\'s pause button pauses it');
    check((await controlPage.textContent('#control-message')) === '', 'no control error shown');
    const bare = await controlPage.evaluate(async (id) => {
      const response = await fetch(`/api/sweeps/${id}/resume`, { method: 'POST' });
      return { status: response.status, body: await response.text() };
    }, controlSweep);
    check(bare.status === 403 && bare.body.includes('X-Rung-Control'), 'a POST from the page without X-Rung-Control is refused (403)');
    const attacker = await context.newPage();
    await attacker.route('http://127.0.0.1:9/**', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>another page</title>' }));
    await attacker.goto('http://127.0.0.1:9/');
    await attacker.evaluate(async (target) => {
      await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'Content-Type': 'text/plain' }, body: 'x' }).catch(() => {});
    }, `${controlOrigin}/api/sweeps/${controlSweep}/resume`);
    check(await stateOf() === 'SWEEP_STATE_PAUSED', 'a POST from another page on 127.0.0.1 (with the cookie) leaves the sweep paused');
    await attacker.close();
    await controlPage.close();
  }

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
