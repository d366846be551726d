// lab.test.mjs — the lab page (GET /) in Debian's headless Chromium,
// driven by playwright-core against a live attnd. Prints TAP.
//
//   node tests/browser/lab.test.mjs            starts build/attnd --port 0
//   ATTND=path/to/attnd node ...               another binary
//   ATTND_URL=http://127.0.0.1:8080 node ...   an attnd that already runs
//   CHROMIUM=/usr/bin/chromium                 the browser (the default)
//   ARTIFACTS=build/artifacts                  where the screenshots go
//
// What it checks: the page is one self-contained document (every request
// it makes goes to the attnd that served it), the seed's NW worked example
// shows the contract's numbers (docs/contract.md section 4, to 1e-12) and a 1 × 3
// heatmap, d2l's toy gives [[2, 3, 4, 5]] and [[10, 11, 12, 13]] with two
// 1 × 10 panels, problems appear next to the field their pointer names,
// the token field sends "Authorization: Bearer", the server's SVG shows,
// and the Nadaraya–Watson view draws the textbook dataset (its first pair
// is the contract's golden pair), four curves, the 50 × 50 weights and the
// fit's loss per epoch. Screenshots: build/artifacts/lab.png (NW view) and
// lab-request.png.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const ATTND = process.env.ATTND || path.join(root, 'build/attnd');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || path.join(root, 'build/artifacts'));
const DEADLINE_MS = 150000;
const WAIT = { timeout: 15000 };

let n = 0;
let failures = 0;
function ok(cond, name, ...why) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failures++;
    console.log(`not ok ${n} - ${name}`);
    for (const w of why) console.log(`#   ${String(w).split('\n').join('\n#   ')}`);
  }
  return cond;
}
const close = (a, b, tol = 1e-12) => typeof a === 'number' && Math.abs(a - b) <= tol;
const closeAll = (a, b, tol = 1e-12) =>
  Array.isArray(b) ? Array.isArray(a) && a.length === b.length && b.every((x, i) => closeAll(a[i], x, tol)) : close(a, b, tol);

// ---------------------------------------------------------------------------
// the daemon
let daemon = null;
function startDaemon() {
  return new Promise((resolve, reject) => {
    daemon = spawn(ATTND, ['--port', '0', '--bind', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const timer = setTimeout(() => reject(new Error(`attnd did not say its port: ${log}`)), 10000);
    daemon.on('error', (e) => { clearTimeout(timer); reject(e); });
    daemon.on('exit', (code) => { clearTimeout(timer); reject(new Error(`attnd exited (${code}): ${log}`)); });
    daemon.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /listening on (http:\/\/[^\s"]+:\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(m[1].replace('0.0.0.0', '127.0.0.1')); }
    });
  });
}

// ---------------------------------------------------------------------------
async function main() {
  const base = process.env.ATTND_URL ? process.env.ATTND_URL.replace(/\/$/, '') : await startDaemon();
  console.log(`# attnd at ${base}`);
  mkdirSync(ARTIFACTS, { recursive: true });

  // the document itself
  const res = await fetch(`${base}/`);
  const html = await res.text();
  ok(res.status === 200 && /^text\/html; charset=utf-8$/.test(res.headers.get('content-type')),
    'GET / answers 200 text/html; charset=utf-8', `${res.status} ${res.headers.get('content-type')}`);
  ok(!/<(script|link|img)[^>]+(src|href)=["']?https?:/i.test(html) && !/@import|url\(\s*["']?https?:/i.test(html) &&
     html.includes('<style>') && html.includes('<script>') && !html.includes('src="lab.js"'),
    'the page inlines its CSS and JavaScript and names no external resource');

  const profile = mkdtempSync(path.join(tmpdir(), 'attnd-lab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    await drive(context, base);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

async function drive(context, base) {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  const foreign = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  // 4xx answers the test provokes are logged by the browser as failed
  // loads; responses are checked one by one instead (404s below)
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4(00|22)/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });
  page.on('response', (r) => { if (r.status() === 404 || r.status() >= 500) errors.push(`${r.status()} for ${r.url()}`); });
  page.on('request', (r) => {
    requests.push(r);
    if (!r.url().startsWith(base + '/') && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) foreign.push(r.url());
  });

  await page.goto(`${base}/`);
  await page.waitForSelector('body[data-ready="1"]', WAIT);
  ok(await page.title() === 'attnd lab', 'the page loads, titled "attnd lab"');
  const routes = await page.$$eval('#endpoint option', (os) => os.map((o) => o.value));
  ok(routes.includes('/regression/nw') && routes.includes('/attention/dot') && routes.includes('/attention/additive'),
    'the endpoint list has the server\'s POST routes', routes.join(' '));

  // --- the seed's NW worked example ------------------------------------
  await page.selectOption('#endpoint', '/regression/nw');
  await page.selectOption('#example', { label: 'NW worked example (seed)' });
  const edited = JSON.parse(await page.inputValue('#editor'));
  ok(JSON.stringify(edited) === JSON.stringify({ x_train: [1, 2, 4], y_train: [0, 3, 1], x_query: [2.5], w: 0.5, y_query: [3] }),
    'the editor holds the seed\'s worked example', JSON.stringify(edited));
  await send(page, 200);
  const field = async (name) => page.textContent(`#summary dd[data-field="${name}"]`);
  const firstNumber = (t) => Number((/-?[0-9][0-9.e+-]*/.exec(t) || ['NaN'])[0]);
  const pred = await field('predictions');
  ok(pred.includes('1.4774782878985795') && close(firstNumber(pred), 1.4774782878985795),
    'the page shows the prediction 1.4774782878985795', pred);
  const loss = await field('loss');
  ok(close(Number(loss), 1.1590361819101205), 'the page shows the loss 1.1590361819101205', loss);
  const gradW = await field('grad_w');
  ok(close(Number(gradW), -0.9063461621648087), 'the page shows grad_w -0.9063461621648087', gradW);
  const weights = JSON.parse((await field('weights')).replace(/\s*\(.*\)\s*$/, ''));
  ok(closeAll(weights, [[0.304504342420284, 0.39099131515943186, 0.304504342420284]]),
    'the page shows the weights [0.3045…, 0.3909…, 0.3045…]', JSON.stringify(weights));
  const cells = await page.$$eval('#heatmap rect.cell', (rs) => rs.map((r) => r.getAttribute('fill')));
  ok(cells.length === 3 && cells[1] === '#67000d' && cells[0] === cells[2] && cells[0] !== cells[1],
    'the weights heatmap has 1 × 3 cells, the middle key darkest', JSON.stringify(cells));
  ok(await page.$$eval('#heatmap text.axis-title', (ts) => ts.map((t) => t.textContent).join()) === 'Keys,Queries',
    'the heatmap has the axis titles Keys and Queries');
  ok(await page.$('#heatmap g.colorbar') !== null, 'the heatmap has a colour bar');
  await page.hover('#heatmap rect.cell[data-k="1"]');
  const readout = await page.textContent('#readout');
  ok(readout.includes('key 1') && readout.includes('0.39099131515943186'), 'hovering a cell reads out its weight', readout);

  // --- d2l's toy through dot ------------------------------------------------
  await page.selectOption('#endpoint', '/attention/dot');
  await page.selectOption('#example', { index: 0 });
  await send(page, 200);
  const output = JSON.parse((await field('output')).replace(/\s*\(.*\)\s*$/, ''));
  ok(closeAll(output, [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]),
    'd2l\'s toy (dot): output [[2, 3, 4, 5]] and [[10, 11, 12, 13]]', JSON.stringify(output));
  ok(await page.$$eval('#heatmap g.panel', (g) => g.length) === 2 &&
     await page.$$eval('#heatmap rect.cell', (r) => r.length) === 20,
    'd2l\'s toy: one heatmap panel per example, 2 × (1 × 10) cells');

  // --- the seed's identity picture --------------------------------------
  await page.selectOption('#example', { label: 'Identity (seed §3): Q = K = 30·I, scale 1' });
  await send(page, 200);
  const diag = await page.$$eval('#heatmap rect.cell', (rs) => rs.filter((r) =>
    r.getAttribute('data-q') === r.getAttribute('data-k') && r.getAttribute('fill') === '#67000d').length);
  const offDiag = await page.$$eval('#heatmap rect.cell', (rs) => rs.filter((r) =>
    r.getAttribute('data-q') !== r.getAttribute('data-k') && r.getAttribute('fill') === '#fff5f0').length);
  ok(diag === 10 && offDiag === 90, 'identity: 10 dark diagonal cells, 90 white', `${diag} ${offDiag}`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'lab-request.png') });

  // --- every example of every route the server lists ----------------------
  // answers 200 and draws one panel per leading index of its weights
  // (B, or H, or B × H) with one cell per weight
  const bad = [];
  let tried = 0;
  for (const ep of routes) {
    await page.selectOption('#endpoint', ep);
    const names = await page.$$eval('#example option', (os) => os.map((o) => o.value === '-1' ? null : o.textContent));
    for (let i = 0; i < names.length; i++) {
      if (names[i] === null) continue;
      tried++;
      await page.selectOption('#example', { index: i });
      await send(page, null);
      const status = await page.getAttribute('#status', 'data-status');
      const body = JSON.parse(await page.textContent('#response'));
      const w = body.weights;
      const shape = [];
      for (let a = w; Array.isArray(a); a = a[0]) shape.push(a.length);
      const panels = shape.slice(0, -2).reduce((a, b) => a * b, 1);
      const cellsWant = shape.reduce((a, b) => a * b, 1);
      const drawn = await page.$$eval('#heatmap g.panel', (g) => g.length);
      const cellsDrawn = await page.$$eval('#heatmap rect.cell', (r) => r.length);
      if (status !== '200' || drawn !== panels || cellsDrawn !== cellsWant) {
        bad.push(`${ep} "${names[i]}": status ${status}, ${drawn}/${panels} panels, ${cellsDrawn}/${cellsWant} cells`);
      }
    }
  }
  ok(tried >= 8 && bad.length === 0, `all ${tried} examples answer 200 and draw a panel per example and head`, ...bad);

  // --- problems next to their field ---------------------------------------
  await page.selectOption('#endpoint', '/regression/nw');
  await page.selectOption('#example', { label: 'NW worked example (seed)' });
  const text = (await page.inputValue('#editor')).replace('[0, 3, 1]', '[0, 3]');
  await page.fill('#editor', text);
  await send(page, 422);
  const fe = await page.$('#field-error:not([hidden])');
  const feText = fe ? await fe.textContent() : '';
  ok(fe !== null && (await fe.getAttribute('data-pointer')) === '/y_train' && feText.includes('y_train'),
    'a shape error shows its detail next to the editor, pointer /y_train', feText);
  const markText = await page.textContent('#backdrop mark');
  ok(markText !== null && markText.startsWith('"y_train"'), 'the offending field is marked in the editor', markText);
  const place = await page.evaluate(() => {
    const ed = document.getElementById('editor');
    const line = ed.value.slice(0, ed.value.indexOf('"y_train"')).split('\n').length - 1;
    const bubble = document.getElementById('field-error');
    return { lineTop: 10 + line * 22 - ed.scrollTop, top: bubble.offsetTop, h: bubble.offsetHeight };
  });
  ok(Math.abs(place.top - (place.lineTop + 22)) <= 6 || Math.abs(place.top + place.h - place.lineTop) <= 6,
    'the detail sits right under (or over) the y_train line', JSON.stringify(place));
  ok((await page.textContent('#problem')).includes('shape_mismatch'), 'the problem box names the code shape_mismatch');

  await page.fill('#editor', '{"x_train": [1, 2, 4], "y_train": [0, 3, 1]}');
  await send(page, 422);
  ok((await page.getAttribute('#field-error', 'data-pointer')) === '/x_query' &&
     (await page.textContent('#field-error')).includes('add it here'),
    'a missing field is shown where it would go', await page.textContent('#field-error'));

  await page.fill('#editor', '{"x_train": [1, 2, 4],\n "y_train": [0, 3, 1,\n "x_query": [2.5]}');
  await send(page, 400);
  ok(await page.isVisible('#field-error') && (await page.textContent('#problem')).includes('invalid_json'),
    'a syntax error is marked where the parser stopped');

  await page.fill('#editor', '{"x_train": [1, 2, 4], "y_train": [0, 3, 1], "x_query": [2.5], "kernell": "boxcar"}');
  await send(page, 422);
  ok((await page.getAttribute('#field-error', 'data-pointer')) === '/kernell' &&
     (await page.textContent('#field-error')).includes('kernel'),
    'an unknown field is marked with the suggestion', await page.textContent('#field-error'));

  // --- Format JSON keeps every literal as written ------------------------------
  await page.fill('#editor', '{"x_query":[2.5,  1.50],"kernel":"a,1","seed":9223372036854775807,"x_query":[1e0]}');
  await page.click('#format');
  const formatted = await page.inputValue('#editor');
  ok(formatted === '{\n  "x_query": [2.5, 1.50],\n  "kernel": "a,1",\n  "seed": 9223372036854775807,\n  "x_query": [1e0]\n}',
    'Format JSON re-indents without touching numbers, strings or duplicate keys', formatted);

  // --- the token ----------------------------------------------------------------
  await page.selectOption('#example', { label: 'NW worked example (seed)' });
  await page.fill('#token', 'lab-secret-token');
  let sent = await sendAndCapture(page, '#send', 200);
  ok(sent.headers.authorization === 'Bearer lab-secret-token', 'a token is sent as Authorization: Bearer',
    JSON.stringify(sent.headers));
  await page.fill('#token', '');
  sent = await sendAndCapture(page, '#send', 200);
  ok(!('authorization' in sent.headers), 'no token, no Authorization header');

  // --- the server's SVG ----------------------------------------------------------
  sent = await sendAndCapture(page, '#send-svg', 200);
  const resp = sent.response;
  ok(sent.headers.accept === 'image/svg+xml' && /^image\/svg\+xml/.test(resp.headers()['content-type']),
    'Server SVG asks for image/svg+xml and gets it', `${sent.headers.accept} → ${resp.headers()['content-type']}`);
  await page.waitForFunction(() => {
    const img = document.getElementById('server-svg-img');
    return img && img.complete && img.naturalWidth > 0;
  }, null, WAIT);
  ok(await page.isVisible('#server-svg-img'), 'the server\'s SVG heatmap is shown as an image');

  // --- Nadaraya–Watson view ------------------------------------------------------
  await page.click('#tab-btn-nw');
  await page.waitForFunction(() => /fitted w/.test(document.getElementById('nw-status').textContent), null, WAIT);
  const pts = await page.$$eval('#nw-plot circle.train-point', (cs) =>
    cs.map((c) => ({ x: Number(c.getAttribute('data-x')), y: Number(c.getAttribute('data-y')), cx: Number(c.getAttribute('cx')) })));
  ok(pts.length === 50, 'the dataset plot has the 50 training points', pts.length);
  ok(pts.length > 0 && close(pts[0].x, 0.19157748800980812) && close(pts[0].y, 0.4527892370680555),
    'its first point is the textbook dataset\'s (0.19157748800980812, 0.4527892370680555)', JSON.stringify(pts[0]));
  ok(pts.every((p, i) => i === 0 || (p.x >= pts[i - 1].x && p.cx >= pts[i - 1].cx)), 'the points are sorted by x and drawn left to right');
  const curves = await page.$$eval('#nw-plot path.curve', (ps) => ps.map((p) => p.getAttribute('class')));
  ok(curves.length === 4 && ['truth', 'constant', 'gaussian', 'fitted'].every((c) => curves.some((k) => k.includes(c))),
    'four curves: truth, average pooling, Gaussian w = 1, fitted w', curves.join(', '));
  const segs = await page.$$eval('#nw-plot path.curve', (ps) => ps.map((p) => (p.getAttribute('d').match(/[ML]/g) || []).length));
  ok(segs.every((k) => k === 50), 'each curve passes through the 50 test points', segs.join(' '));
  ok(await page.$$eval('#nw-heat rect.cell', (r) => r.length) === 2500, 'the weights over the test grid: 50 × 50 cells');
  ok(await page.$$eval('#nw-loss circle.loss-point', (c) => c.length) === 5, 'the loss history has one point per epoch (5)');

  // the fitted w the page shows is the one attnd computes for that request
  const ds = await (await fetch(`${base}/regression/nw/dataset`)).json();
  const fit = await (await fetch(`${base}/regression/nw`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ x_train: ds.x_train, y_train: ds.y_train, x_query: ds.x_test, y_query: ds.y_truth, w: 1,
      fit: { epochs: 5, lr: 0.5, data: 'train_loo' } }),
  })).json();
  const shownW = await page.textContent('#nw-numbers tr[data-model="fitted"] td[data-field="w"]');
  ok(close(Number(shownW), fit.w), 'the table shows the fitted w attnd returns', `${shownW} vs ${fit.w}`);
  const lossPoints = await page.$$eval('#nw-loss circle.loss-point title', (ts) => ts.map((t) => t.textContent));
  ok(lossPoints.length === 5 && lossPoints.every((t, i) => t.includes(`loss ${fit.history[i].loss}`)),
    'the loss points are the fit\'s history', lossPoints.join(' | '));
  const avg = await page.textContent('#nw-numbers tr[data-model="constant"] td[data-field="loss"]');
  const meanY = ds.y_train.reduce((a, b) => a + b, 0) / ds.y_train.length;
  const avgLoss = ds.y_truth.reduce((a, y) => a + 0.5 * (meanY - y) ** 2, 0);
  ok(close(Number(avg), avgLoss, 1e-9 * Math.abs(avgLoss)), 'average pooling\'s test loss is ½Σ(mean(y_train) − f(x))²', `${avg} vs ${avgLoss}`);

  await page.screenshot({ path: path.join(ARTIFACTS, 'lab.png') });
  ok(true, `screenshot saved: ${path.relative(root, path.join(ARTIFACTS, 'lab.png'))}`);

  // a problem from the dataset or the fit is shown at its input
  await page.fill('#nw-n', '0');
  await page.click('#nw-run');
  await page.waitForSelector('#nw-problem:not([hidden])', WAIT);
  ok((await page.getAttribute('#nw-problem', 'data-input')) === 'nw-n' &&
     (await page.getAttribute('#nw-n', 'class')).includes('invalid') &&
     (await page.textContent('#nw-problem')).includes('/n_train'),
    'n_train 0: the problem names /n_train and the n_train input is flagged', await page.textContent('#nw-problem'));
  await page.fill('#nw-n', '50');
  await page.fill('#nw-lr', '-1');
  await page.click('#nw-run');
  await page.waitForSelector('#nw-problem[data-input="nw-lr"]', WAIT);
  ok(!(await page.getAttribute('#nw-n', 'class') || '').includes('invalid') &&
     (await page.getAttribute('#nw-lr', 'class')).includes('invalid'),
    'lr -1: the fit\'s problem (/fit/lr) flags the lr input; editing n_train cleared its flag');

  ok(foreign.length === 0, 'every request the page made went to attnd', foreign.join(' '));
  ok(errors.length === 0, 'no script errors', ...errors);
}

// Click Send and wait for the status line to show `status` (null: any).
async function send(page, status) {
  await page.evaluate(() => document.getElementById('status').removeAttribute('data-status'));
  await page.click('#send');
  await page.waitForSelector(status === null ? '#status[data-status]' : `#status[data-status="${status}"]:not(:empty)`, WAIT);
  await page.waitForFunction(() => !document.getElementById('send').disabled, null, WAIT);
}

// Click a button, return the POST it sent (with lower-case headers).
async function sendAndCapture(page, button, status) {
  const [req] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST', WAIT),
    page.click(button),
  ]);
  const headers = await req.allHeaders();
  await page.waitForFunction(() => !document.getElementById('send').disabled, null, WAIT);
  const response = await req.response();
  if (response.status() !== status) throw new Error(`${button}: status ${response.status()}`);
  return { headers, response };
}

const watchdog = setTimeout(() => {
  ok(false, `finished within ${DEADLINE_MS / 1000} s`);
  console.log(`1..${n}`);
  if (daemon) daemon.kill('SIGKILL');
  process.exit(1);
}, DEADLINE_MS);

main().catch((e) => {
  ok(false, 'the browser test ran to the end', e.stack || e.message);
}).finally(() => {
  clearTimeout(watchdog);
  if (daemon) { daemon.removeAllListeners('exit'); daemon.kill('SIGTERM'); }
  console.log(`1..${n}`);
  console.log(`browser: ${n - failures} passed, ${failures} failed`);
  process.exitCode = failures ? 1 : 0;
});
