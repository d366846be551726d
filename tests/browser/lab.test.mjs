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
// fit's loss per epoch. Then the newer parts (docs/lab.md): token labels on
// the axes (page and server SVG), the palettes, the τ slider (the request's
// scale and the redrawn weights against softmax computed here), the causal
// and valid_lens toggles (masked cells), a 512 × 512 heatmap on a canvas
// (its drawing time printed as a TAP comment), the NW w slider, the Flow
// tab (a cell clicked per step, the explanation's numbers checked) and the
// Transformer tab (a layer × head grid).
// The attn_mask toggle (a click on a cell hides that key), the Flow tab
// on a live trace of /attention/dot and of /attention/multihead (its head
// and example pickers, cells recomputed from the trace's heads), the
// Transformer tab on the live /transformer/encoder and /transformer/decoder
// (every panel the answer's weights). Screenshots: build/artifacts/lab.png (NW
// view), lab-request.png, lab-controls.png, lab-flow.png and
// lab-transformer.png (copies in docs/).
//
// Then a frontend's client of the binary tensor data extension
// (docs/binary.md), from a page of another origin (a server of this test's
// own): fetch with a Blob of the JSON header and Float32Array / Int32Array
// bytes, FP32 outputs read back as Float32Array, compared with the same
// request's JSON answer rounded by Math.fround, entry for entry; the
// preflight, the exposed Inference-Header-Content-Length, errors read
// cross-origin, and docs/binary.md's browser example with what it logs.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { ok, tally } from './tap.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const ATTND = process.env.ATTND || path.join(root, 'build/attnd');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(process.env.ARTIFACTS || path.join(root, 'build/artifacts'));
const DEADLINE_MS = 300000;
const WAIT = { timeout: 15000 };

// WCAG 2 relative luminance of '#rrggbb'
const luminance = (hex) => {
  const lin = [1, 3, 5].map((i) => { const c = parseInt(hex.slice(i, i + 2), 16) / 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
};
const shapeOfJson = (a) => { const s = []; for (; Array.isArray(a); a = a[0]) s.push(a.length); return s; };
const close = (a, b, tol = 1e-12) => typeof a === 'number' && Math.abs(a - b) <= tol;
const closeAll = (a, b, tol = 1e-12) =>
  Array.isArray(b) ? Array.isArray(a) && a.length === b.length && b.every((x, i) => closeAll(a[i], x, tol)) : close(a, b, tol);

// ---------------------------------------------------------------------------
// the daemon
let daemon = null;
let daemonLog = ''; // its stderr: the start line, then the access log
function startDaemon() {
  return new Promise((resolve, reject) => {
    daemon = spawn(ATTND, ['--port', '0', '--bind', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => reject(new Error(`attnd did not say its port: ${daemonLog}`)), 10000);
    daemon.on('error', (e) => { clearTimeout(timer); reject(e); });
    daemon.on('exit', (code) => { clearTimeout(timer); reject(new Error(`attnd exited (${code}): ${daemonLog}`)); });
    daemon.stderr.on('data', (chunk) => {
      daemonLog += chunk;
      const m = /listening on (http:\/\/[^\s"]+:\d+)/.exec(daemonLog);
      if (m) { clearTimeout(timer); resolve(m[1].replace('0.0.0.0', '127.0.0.1')); }
    });
  });
}

// The server's picture of the same traced request (Accept: image/svg+xml)
// against the page's Flow figure: the same nodes at the same places, the
// same cells with the same colours and values, the same arrows.
async function sameAsServer(page, base, route, body, what) {
  const res = await fetch(`${base}${route}${await page.evaluate(() => document.getElementById('palette').value === 'reds' ? '' : '?palette=' + document.getElementById('palette').value)}`,
    { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'image/svg+xml' }, body: JSON.stringify(Object.assign({}, body, { trace: true })) });
  const text = await res.text();
  const attrs = (tag) => Object.fromEntries([...tag.matchAll(/([a-z-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const server = {
    cells: [...text.matchAll(/<rect class="cell"[^>]*><title>([^<]*)<\/title>/g)].map((m) => Object.assign(attrs(m[0]), { title: m[1] })),
    edges: [...text.matchAll(/<path d="M[^>]*><title>([^<]*)<\/title>/g)].map((m) => Object.assign(attrs(m[0]), { title: m[1] })),
    frames: [...text.matchAll(/<rect x="[^"]*" y="[^"]*" width="[^"]*" height="[^"]*" fill="none"[^>]*>/g)].map((m) => attrs(m[0])),
  };
  const mine = await page.evaluate(() => {
    const a = (e) => Object.assign(Object.fromEntries([...e.attributes].map((x) => [x.name, x.value])), { title: e.querySelector('title') ? e.querySelector('title').textContent : '' });
    return {
      cells: [...document.querySelectorAll('#flow rect.cell')].map(a),
      edges: [...document.querySelectorAll('#flow path[data-from]')].map(a),
      frames: [...document.querySelectorAll('#flow g.node > rect[fill="none"]')].map(a),
    };
  });
  const num = (x) => Number(x);
  const near = (a, b) => Math.abs(num(a) - num(b)) <= 0.011;
  const diff = [];
  if (server.cells.length !== mine.cells.length) diff.push(`cells: server ${server.cells.length}, page ${mine.cells.length}`);
  server.cells.forEach((c, i) => {
    const m = mine.cells[i] || {};
    if (c.title !== m.title || !['x', 'y', 'width', 'height'].every((k) => near(c[k], m[k])) || c.fill !== m.fill) {
      if (diff.length < 5) diff.push(`cell ${i}: server ${JSON.stringify(c)} page ${JSON.stringify(m)}`);
    }
  });
  if (server.edges.length !== mine.edges.length) diff.push(`edges: server ${server.edges.length}, page ${mine.edges.length}`);
  server.edges.forEach((e, i) => {
    const m = mine.edges[i] || {};
    const nums = (d) => (d || '').match(/-?[0-9.]+/g) || [];
    const [a, b] = [nums(e.d), nums(m.d)];
    if (e.title !== m.title || a.length !== b.length || !a.every((x, k) => near(x, b[k]))) diff.push(`edge ${i}: ${e.d} vs ${m.d}`);
  });
  if (server.frames.length !== mine.frames.length || !server.frames.every((f, i) => ['x', 'y', 'width', 'height'].every((k) => near(f[k], (mine.frames[i] || {})[k])))) diff.push('node frames differ');
  ok(res.status === 200 && /^image\/svg\+xml/.test(res.headers.get('content-type')) && diff.length === 0 && server.cells.length > 0,
    `${what}: attnd's own picture of the traced request (Accept: image/svg+xml) is the page's figure: ${server.cells.length} cells, ${server.edges.length} arrows, ${server.frames.length} nodes, the same places, colours and values`,
    `${res.status} ${res.headers.get('content-type')}`, ...diff);
}

// The Flow figure of a traced /attention/self against attnd's answer:
// every node of note 2 section 4.5's picture present, its cells the
// trace's (and the request's x, the answer's params) to the bit, and the
// downloaded SVG the same picture (nodes and exact values in <title>s).
async function flowFigureMatches(page, base, answer, request, what) {
  const want = { X: request.x, W_Q: answer.params.W_Q, W_K: answer.params.W_K, W_V: answer.params.W_V,
    Q: answer.trace.Q, K: answer.trace.K, V: answer.trace.V, QK: answer.trace.QK, scaled: answer.trace.scaled,
    masked: answer.trace.masked, weights: answer.trace.weights, output: answer.trace.weighted_values };
  const drawn = await page.$$eval('#flow .cell', (rs) => {
    const out = {};
    for (const r of rs) {
      const m = (out[r.dataset.node] = out[r.dataset.node] || []);
      (m[+r.dataset.i] = m[+r.dataset.i] || [])[+r.dataset.j] = r.dataset.v === 'null' ? null : Number(r.dataset.v);
    }
    return out;
  });
  const names = Object.keys(want);
  const bad = names.filter((n) => !closeAll(drawn[n], want[n], 0));
  ok(bad.length === 0 && Object.keys(drawn).join(' ') === names.join(' '),
    `${what}: the figure shows ${names.join(', ')}, each cell the live answer's number`, `differ: ${bad.join(' ')}`, Object.keys(drawn).join(' '));
  ok(closeAll(answer.trace.weighted_values, answer.output, 0) && closeAll(answer.trace.weights, answer.weights, 0),
    `${what}: the trace's weights and weighted_values are the answer's weights and output`);
  const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.click('#flow-svg')]);
  const file = { name: download.suggestedFilename(), text: readFileSync(await download.path(), 'utf8'), type: 'image/svg+xml' };
  const titles = [...file.text.matchAll(/<title>([A-Za-zᵀ_]+)\[(\d+)\]\[(\d+)\] = ([^<]+)<\/title>/g)];
  const fromFile = {};
  for (const [, n, i, j, v] of titles) ((fromFile[n] = fromFile[n] || [])[+i] = fromFile[n][+i] || [])[+j] = v === 'null' ? null : Number(v);
  const fileBad = names.filter((n) => !closeAll(fromFile[n === 'QK' ? 'QKᵀ' : n], want[n], 0));
  ok(file.name === 'attention-self-flow.svg' && /^<\?xml[^>]*>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/.test(file.text) &&
     !/class="[^"]*operand/.test(file.text) && fileBad.length === 0 && !/https?:\/\/(?!www\.w3\.org)/.test(file.text),
    `${what}: "Download the figure" is one self-contained SVG (${file.text.length} bytes) with every node's exact values`, `differ: ${fileBad.join(' ')}`, file.text.slice(0, 200));
  writeFileSync(path.join(ARTIFACTS, 'flow-self-attention.svg'), file.text);
  await sameAsServer(page, base, '/attention/self', request, what);
}

// ---------------------------------------------------------------------------
// The chapter (docs/lab.md "The chapter"): every card's buttons, the view
// each opens checked against attnd's own answer to the same request (asked
// again here, outside the page), axe-core on every view (0 violations),
// and a screenshot per card. Then the keyboard alone, the τ slider's
// repaints while it moves, a phone and a projector.
async function walkCards(context, base) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  await page.setViewportSize({ width: 1366, height: 768 });
  await page.goto(`${base}/`);
  await page.waitForSelector('body[data-ready="1"]', WAIT);
  const axeSource = readFileSync(path.join(here, 'node_modules/axe-core/axe.min.js'), 'utf8');
  const axe = async (view) => {
    if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
    const v = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .map((x) => `${x.id} (${x.impact}): ${x.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
    ok(v.length === 0, `axe-core: 0 violations on ${view}`, ...v);
  };
  await axe('the chapter');
  await page.screenshot({ path: path.join(ARTIFACTS, 'lab-chapter.png') });
  const post = async (route, body) => (await fetch(`${base}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
  const drawnPanels = () => page.$$eval('#heatmap g.panel', (ps) => ps.map((p) => {
    const m = [];
    for (const r of p.querySelectorAll('rect.cell')) (m[+r.dataset.q] = m[+r.dataset.q] || [])[+r.dataset.k] = Number(r.dataset.v);
    return m;
  }));
  const hatched = () => page.$$eval('#heatmap rect.cell.masked', (rs) => rs.map((r) => `${r.dataset.panel}:${r.dataset.q}:${r.dataset.k}`));
  // click card `id`'s button `label`; wait for the request it sends
  const open = async (id, label, route, method = 'POST') => {
    await page.click('#tab-btn-chapter');
    const [req] = await Promise.all([
      page.waitForRequest((r) => r.method() === method && new URL(r.url()).pathname === route, WAIT),
      page.click(`#cards li[data-card="${id}"] button:text-is("${label}")`),
    ]);
    const res = await req.response();
    await page.waitForTimeout(150);
    return { body: method === 'POST' ? JSON.parse(req.postData()) : null, answer: await res.json(), status: res.status(), url: req.url() };
  };
  const lesson = async (id) => (await page.textContent('#lesson')).includes(await page.textContent(`#cards li[data-card="${id}"] .notice`));
  const shot = async (id) => page.screenshot({ path: path.join(ARTIFACTS, `lab-card-${id}.png`) });
  const flat = (t) => (Array.isArray(t) ? t.flatMap(flat) : [t]);

  // 1. QKV: eye(10)
  let r = await open('qkv', 'Open', '/attention/dot');
  let again = await post('/attention/dot', r.body);
  let panels = await drawnPanels();
  ok(r.status === 200 && closeAll(panels[0], again.weights, 0) && panels[0].every((row, i) => row.every((v, j) => (i === j ? v > 0.999 : v < 1e-9))) &&
     await page.isVisible('#tab-request') && await lesson('qkv'),
    'card 1 (QKV): the Request view draws eye(10), attnd\'s own weights, with the card\'s line');
  await axe('card 1 (QKV)'); await shot('qkv');

  // 2. NW: average pooling, Gaussian, learned w
  await page.click('#tab-btn-chapter');
  await Promise.all([page.waitForFunction(() => /fitted w/.test(document.getElementById('nw-status').textContent), null, WAIT),
    page.click('#cards li[data-card="nw"] button')]);
  ok(await page.isVisible('#tab-nw') && await page.$$eval('#nw-plot path.curve', (p) => p.map((c) => c.getAttribute('class')).join()) === 'curve truth,curve constant,curve gaussian,curve fitted' &&
     await lesson('nw'), 'card 2 (NW): the NW view draws the truth, average pooling, the Gaussian kernel and the fitted w');
  await axe('card 2 (NW)'); await shot('nw');

  // 3, 4. masked softmax, per example and per query
  for (const [id, lens] of [['mask-example', [2, 3]], ['mask-query', [[1, 3], [2, 4]]]]) {
    r = await open(id, 'Open', '/softmax/masked');
    again = await post('/softmax/masked', r.body);
    panels = await drawnPanels();
    const want = [];
    for (let b = 0; b < 2; b++) for (let q = 0; q < 2; q++) for (let k = 0; k < 4; k++) {
      const l = Array.isArray(lens[b]) ? lens[b][q] : lens[b];
      if (k >= l) want.push(`${b}:${q}:${k}`);
    }
    ok(JSON.stringify(r.body.valid_lens) === JSON.stringify(lens) && closeAll(panels, again.weights, 0) &&
       JSON.stringify(await hatched()) === JSON.stringify(want) && want.every((w) => { const [b, q, k] = w.split(':'); return panels[b][q][k] === 0; }),
      `card ${id === 'mask-example' ? 3 : 4} (${id}): valid_lens ${JSON.stringify(lens)}, attnd's weights, exactly the hidden keys hatched (${want.length})`, JSON.stringify(await hatched()));
    await axe(`card ${id}`); await shot(id);
  }

  // 5. dot against additive: d2l's toy outputs
  for (const [label, route] of [['Dot product', '/attention/dot'], ['Additive', '/attention/additive']]) {
    r = await open('dot-additive', label, route);
    const out = JSON.parse((await page.textContent('#summary dd[data-field="output"]')).replace(/\s*\(.*\)\s*$/, ''));
    ok(closeAll(out, [[[2, 3, 4, 5]], [[10, 11, 12, 13]]], 1e-12) && closeAll(await drawnPanels(), (await post(route, r.body)).weights, 0),
      `card 5 (${label}): d2l's toy gives [[2, 3, 4, 5]] and [[10, 11, 12, 13]], the weights attnd's`, JSON.stringify(out));
    await axe(`card 5 (${label})`); await shot(`dot-additive-${route.split('/')[2]}`);
  }

  // 6. temperature: the τ slider, focused; dragging repaints as it moves
  r = await open('temperature', 'Open', '/attention/dot');
  ok(await page.evaluate(() => document.activeElement.id) === 'ctl-tau' && shapeOfJson(r.answer.weights).join() === '16,16',
    'card 6 (temperature): a 16 × 16 request, the τ slider focused');
  const drag = async (moves, everyMs) => page.evaluate(async ([moves, everyMs]) => {
    const box = document.getElementById('heatmap'), paints = [];
    // a repaint: the map drawn again, or its cells recoloured in place
    const obs = new MutationObserver(() => paints.push(performance.now()));
    obs.observe(box, { childList: true, subtree: true, attributes: true, attributeFilter: ['fill'] });
    const s = document.getElementById('ctl-tau'), t0 = performance.now();
    let lastMove = t0;
    for (let i = 0; i < moves; i++) {
      lastMove = performance.now();
      s.value = String(-3 + (6 * (i % 24)) / 24);
      s.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((ok) => setTimeout(ok, everyMs));
    }
    const last = performance.now();
    await new Promise((ok) => setTimeout(ok, 600));
    obs.disconnect();
    const during = paints.filter((p) => p <= last);
    let gap = during.length ? during[0] - t0 : Infinity;
    for (let i = 1; i < during.length; i++) gap = Math.max(gap, during[i] - during[i - 1]);
    gap = Math.max(gap, last - (during[during.length - 1] || t0));
    const after = paints.filter((p) => p >= lastMove);
    const gaps = during.map((p, i) => (i ? p - during[i - 1] : p - t0));
    return { paints: paints.length, moves, maxGap: gap, afterLast: after.length ? after[0] - lastMove : Infinity, drawn: box.getAttribute('data-drawn'), gaps: gaps.map((g) => g.toFixed(0)).join(' ') };
  }, [moves, everyMs]);
  await page.keyboard.press('ArrowRight');
  let d = await drag(40, 25);
  ok(d.maxGap <= 100, `τ drag on 16 × 16: ${d.paints} repaints for ${d.moves} moves in 1 s, the longest wait between repaints ${d.maxGap.toFixed(0)} ms (≤ 100)`, `gaps (ms): ${d.gaps}`);
  const tauReq = page.waitForResponse((res) => res.url().endsWith('/attention/dot'), WAIT);
  await page.keyboard.press('ArrowLeft');
  await tauReq;
  await page.waitForTimeout(300);
  const scale = (JSON.parse(await page.inputValue('#editor'))).scale;
  ok(closeAll(await drawnPanels(), [(await post('/attention/dot', JSON.parse(await page.inputValue('#editor')))).weights], 0) &&
     await page.getAttribute('#heatmap', 'data-drawn') === 'attnd',
    `card 6: after the drag, the keyboard moves τ and attnd's answer replaces the page's own (scale ${scale})`);
  await axe('card 6 (temperature)'); await shot('temperature');
  // a 512 × 512 map: the page computes the weights itself while τ moves
  await page.click('#tab-btn-request');
  await page.selectOption('#endpoint', '/attention/dot');
  await page.selectOption('#example', { label: 'Large: self-attention over 512 tokens (canvas)' });
  await Promise.all([page.waitForResponse((res) => res.url().endsWith('/attention/dot'), WAIT), page.click('#send')]);
  await page.waitForSelector('#heatmap image.cells-image', WAIT);
  d = await drag(12, 60);
  ok(d.afterLast <= 300 && d.drawn !== null, `τ drag on 512 × 512: repainted ${d.afterLast.toFixed(0)} ms after the last move (≤ 300), ${d.paints} repaints for ${d.moves} moves`);
  ok(/clipped at [0-9.]+, the 99th percentile/.test(await page.textContent('#heatmap g.colorbar')),
    '512 × 512 causal: the colour scale is clipped at its 99th percentile, and says so', await page.textContent('#heatmap g.colorbar'));

  // 7. causal: the upper triangle hatched
  r = await open('causal', 'Open', '/attention/dot');
  const tri = [];
  for (let q = 0; q < 6; q++) for (let k = q + 1; k < 6; k++) tri.push(`0:${q}:${k}`);
  ok(JSON.stringify(await hatched()) === JSON.stringify(tri) && closeAll(await drawnPanels(), [(await post('/attention/dot', r.body)).weights], 0) &&
     (await page.$$eval('#heatmap text.tick-label', (t) => t.map((x) => x.lastChild.textContent))).slice(0, 6).join(' ') === 'the cat sat on the mat',
    'card 7 (causal): the 15 cells above the diagonal hatched, the tokens on the axes, attnd\'s weights', JSON.stringify(await hatched()),
    JSON.stringify(await drawnPanels()), JSON.stringify((await post('/attention/dot', r.body)).weights));
  await axe('card 7 (causal)'); await shot('causal');

  // 8. self-attention: the Flow figure of note 2 section 4.6
  r = await open('self', 'Open', '/attention/self');
  await page.waitForSelector('#flow g.node[data-node="output"]', WAIT);
  ok(await page.isVisible('#tab-flow') && r.body.seed === 42 && r.body.d_k === 4, 'card 8 (self-attention): the Flow view traces x, d_k 4, seed 42');
  await flowFigureMatches(page, base, await post('/attention/self', r.body), r.body, 'card 8');
  await axe('card 8 (self-attention, Flow)'); await shot('self');

  // 9. multi-head: num_heads as a control
  r = await open('multihead', 'Open', '/attention/multihead');
  ok(await page.isVisible('#ctl-heads') && JSON.stringify(await page.$$eval('#ctl-heads option', (o) => o.map((x) => x.value))) === '["1","2","4","8"]' &&
     (await drawnPanels()).length === 2, 'card 9 (multi-head): 2 heads drawn, num_heads offers 1, 2, 4 and 8');
  const [h4] = await Promise.all([page.waitForResponse((res) => res.url().endsWith('/attention/multihead'), WAIT), page.selectOption('#ctl-heads', '4')]);
  await page.waitForTimeout(150);
  const body4 = JSON.parse(h4.request().postData());
  ok(body4.num_heads === 4 && (await drawnPanels()).length === 4 && closeAll(await drawnPanels(), (await post('/attention/multihead', body4)).weights, 0),
    'card 9: num_heads 4 sends 4 and draws attnd\'s 4 heads');
  await axe('card 9 (multi-head)'); await shot('multihead');

  // 10. positional encoding: P and its columns 6 … 9
  r = await open('positional', 'Open', '/encoding/positional', 'GET');
  const Pdrawn = await page.$$eval('#pe-heat rect.cell', (rs) => { const m = []; for (const c of rs) (m[+c.dataset.q] = m[+c.dataset.q] || [])[+c.dataset.k] = Number(c.dataset.v); return m; });
  const Pown = (await (await fetch(`${base}/encoding/positional?num_steps=60&d=32`)).json()).P;
  ok(r.url.endsWith('?num_steps=60&d=32') && closeAll(Pdrawn, Pown, 0) && closeAll(Pown[1].slice(0, 2), [Math.sin(1), Math.cos(1)], 1e-15) &&
     (await page.$$eval('#pe-curves path.pe-col', (p) => p.map((x) => x.dataset.col).join())) === '6,7,8,9',
    'card 10 (positional encoding): P (60 × 32) drawn as attnd answers it, P[1] = sin 1, cos 1, …; columns 6 … 9 as curves');
  await axe('card 10 (positional encoding)'); await shot('positional');

  // 11. the Transformer encoder and decoder
  for (const [label, route] of [['Encoder', '/transformer/encoder'], ['Decoder', '/transformer/decoder']]) {
    r = await open('transformer', label, route);
    await page.waitForSelector('#tf-grid g.panel', WAIT);
    const own = await post(route, r.body);
    const w = label === 'Encoder' ? own.weights : own.self_weights;
    const first = await page.$$eval('#tf-grid figure:first-child g.panel', (ps) => ps.map((p) => { const m = []; for (const c of p.querySelectorAll('rect.cell')) (m[+c.dataset.q] = m[+c.dataset.q] || [])[+c.dataset.k] = Number(c.dataset.v); return m; }));
    ok(closeAll(first, w.flat(), 0) && first.length === 4, `card 11 (${label}): layers × heads = 2 × 2 panels, attnd's weights`);
    await axe(`card 11 (${label})`); await shot(`transformer-${label.toLowerCase()}`);
  }

  // the keyboard alone: Tab reaches a card's button, Enter opens it; the
  // heatmap's cells by the arrow keys, Enter flips a mask entry
  await page.click('#tab-btn-chapter');
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement.closest('li[data-card="causal"]') !== null);
  }
  const [kReq] = await Promise.all([page.waitForRequest((q) => q.url().endsWith('/attention/dot'), WAIT), page.keyboard.press('Enter')]);
  await kReq.response();
  await page.waitForTimeout(150);
  ok(reached && await page.isVisible('#tab-request'), 'keyboard: Tab reaches card 7\'s button, Enter opens it');
  await page.focus('#ctl-mask');
  await page.keyboard.press('Space');
  await page.waitForTimeout(300);
  await page.focus('#heatmap svg');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  ok(/query 2 “sat” · key 1 “cat”/.test(await page.textContent('#readout')), 'keyboard: arrows move over the heatmap, the readout names the cell', await page.textContent('#readout'));
  const [flip] = await Promise.all([page.waitForRequest((q) => q.url().endsWith('/attention/dot'), WAIT), page.keyboard.press('Enter')]);
  ok(JSON.parse(flip.postData()).attn_mask[2][1] === true, 'keyboard: Enter on a cell flips its attn_mask entry');

  // a phone and a projector
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('#tab-btn-chapter');
  r = await open('qkv', 'Open', '/attention/dot');
  const phone = await page.evaluate(() => ({ heat: document.querySelector('#heatmap svg').getBoundingClientRect().width, page: document.documentElement.scrollWidth }));
  ok(phone.heat >= 300 && phone.page <= 390, `phone 390 × 844: the heatmap is ${phone.heat.toFixed(0)} px wide (≥ 300), the page ${phone.page} px (no sideways scroll)`);
  await axe('the phone layout'); await shot('phone');
  await page.setViewportSize({ width: 1920, height: 1080 });
  await page.click('#presenter');
  r = await open('temperature', 'Open', '/attention/dot');
  const px = await page.evaluate(() => {
    const s = document.querySelector('#heatmap svg'), k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
    const t = [...s.querySelectorAll('g.values text')];
    return { n: t.length, min: Math.min(...t.map((x) => Number(x.parentNode.getAttribute('font-size')) * k)) };
  });
  ok(px.n === 256 && px.min >= 18, `projector 1920 × 1080, presenter mode: 256 cell numbers, ${px.min.toFixed(1)} px at the smallest (≥ 18)`);
  await axe('presenter mode'); await shot('presenter');
  await page.click('#presenter');
  // what the page will not draw: it says so before it asks, or before it
  // draws, as attnd's own pictures do (a review froze tabs past 3.9 GB)
  await page.setViewportSize({ width: 1366, height: 768 });
  let sentAny = false;
  const watch = (r) => { if (r.method() === 'POST') sentAny = true; };
  page.on('request', watch);
  const long = Array.from({ length: 300 }, (_, i) => [i % 7, 1]);
  await page.click('#tab-btn-request');
  await page.selectOption('#endpoint', '/attention/dot');
  await page.fill('#editor', JSON.stringify({ queries: long, keys: long, values: long }));
  await page.click('#tab-btn-flow');
  await page.click('#flow-run');
  ok(!sentAny && /Too large to draw/.test(await page.textContent('#flow-problem')) && /at most 256/.test(await page.textContent('#flow-problem')),
    'flow: 300 tokens are refused before the trace is asked for (at most 256 along a side, attnd\'s own limit)', await page.textContent('#flow-problem'));
  await page.click('#tab-btn-transformer');
  await page.fill('#tf-d-model', '100000000');
  await page.click('#tf-run');
  ok(!sentAny && /more than the page builds/.test(await page.textContent('#tf-problem')), 'Transformer: d_model 1e8 is refused before the page builds its rows',
    await page.textContent('#tf-problem'));
  await page.fill('#tf-d-model', '8');
  page.off('request', watch);
  // 64 panels of 64 × 64: canvases, no table, drawn in seconds, not minutes
  const many = Array.from({ length: 64 }, (_, b) => Array.from({ length: 64 }, (_, i) => [Math.sin(i + b), Math.cos(i * b)]));
  await page.click('#tab-btn-request');
  await page.fill('#editor', JSON.stringify({ queries: many, keys: many, values: many }));
  const t64 = Date.now();
  await Promise.all([page.waitForResponse((res) => res.url().endsWith('/attention/dot'), WAIT), page.click('#send')]);
  await page.waitForFunction(() => document.querySelectorAll('#heatmap image.cells-image').length === 64, null, WAIT);
  const ms64 = Date.now() - t64;
  ok(await page.$$eval('#heatmap rect.cell', (r) => r.length) === 0 && await page.$$eval('#heatmap td', (t) => t.length) === 0 && ms64 < 10000,
    `64 panels of 64 × 64 (262144 weights): drawn as 64 canvases in ${ms64} ms, no table of values`);
  ok(errors.length === 0, 'the chapter walk: no page errors', ...errors);
  await page.close();
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
    await walkCards(context, base);
    await binaryClient(context, base);
    await mistypedRoute(context, base);
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
  ok(await page.isVisible('#tab-chapter') && await page.$$eval('#cards li', (l) => l.length) === 11,
    'the page opens on the chapter: 11 cards');
  await page.click('#tab-btn-request');
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
  ok(cells.length === 3 && luminance(cells[1]) < luminance(cells[0]) && cells[0] === cells[2] &&
     await page.getAttribute('#heatmap svg', 'data-scale') === '0 1',
    'the weights heatmap has 1 × 3 cells on the fixed scale 0 … 1, the middle key darkest', JSON.stringify(cells));
  ok(await page.$$eval('#heatmap text.axis-title', (ts) => ts.map((t) => t.textContent).join()) === 'Keys,Queries',
    'the heatmap has the axis titles Keys and Queries');
  ok(await page.$('#heatmap g.colorbar') !== null, 'the heatmap has a colour bar');
  await page.hover('#heatmap rect.cell[data-k="1"]');
  const readout = await page.textContent('#readout');
  ok(readout.includes('key 1') && / : 0\.391$/.test(readout), 'hovering a cell reads out its weight, to 4 significant digits', readout);
  await page.check('#exact');
  await page.hover('#heatmap rect.cell[data-k="0"]');
  await page.hover('#heatmap rect.cell[data-k="1"]');
  ok((await page.textContent('#readout')).endsWith(' : 0.39099131515943186'), '"exact": the readout shows every digit attnd printed',
    await page.textContent('#readout'));
  await page.uncheck('#exact');

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
      // the page shows at most 200000 characters of an answer: a larger
      // one is asked for again here
      const shown = await page.textContent('#response');
      const body = shown.endsWith('…') ? await (await fetch(`${base}${ep}`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: await page.inputValue('#editor'),
      })).json() : JSON.parse(shown);
      const w = body.weights;
      const shape = [];
      for (let a = w; Array.isArray(a); a = a[0]) shape.push(a.length);
      const panels = shape.slice(0, -2).reduce((a, b) => a * b, 1);
      const cellsWant = shape.reduce((a, b) => a * b, 1);
      const drawn = await page.$$eval('#heatmap g.panel', (g) => g.length);
      // large panels are one canvas image each, small ones a <rect> per weight
      const canvas = await page.getAttribute('#heatmap svg', 'data-mode') === 'canvas';
      const cellsDrawn = canvas ? cellsWant * (await page.$$eval('#heatmap image.cells-image', (r) => r.length)) / panels
        : await page.$$eval('#heatmap rect.cell', (r) => r.length);
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

  // --- token labels, palettes and the controls ----------------------------
  await page.selectOption('#endpoint', '/attention/dot');
  await page.selectOption('#example', { label: 'Token labels: “the cat sat on the mat”' });
  await send(page, 200);
  const tickLabels = await page.$$eval('#heatmap text.tick-label', (ts) => ts.map((t) => t.lastChild.textContent));
  ok(tickLabels.length === 12 && tickLabels.slice(0, 6).join(' ') === 'the cat sat on the mat',
    'labels: the heatmap\'s ticks are the request\'s tokens (6 keys, 6 queries)', tickLabels.join(' '));
  await page.hover('#heatmap rect.cell[data-q="1"][data-k="2"]');
  ok((await page.textContent('#readout')).includes('query 1 “cat” · key 2 “sat”'), 'labels: hovering a cell names its tokens',
    await page.textContent('#readout'));
  sent = await sendAndCapture(page, '#send-svg', 200);
  // the page read the picture as a blob; the same request again, here
  const svgOf = async (url) => (await fetch(url, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'image/svg+xml' }, body: await page.inputValue('#editor'),
  })).text();
  const labelledSvg = await svgOf(sent.response.url());
  ok(/class="tick-label"[^>]*><title>cat<\/title>cat</.test(labelledSvg) && labelledSvg.includes('query 1 “cat”, key 2 “sat”'),
    'labels: the server\'s SVG has the tokens as tick labels and in its tooltips');

  // palettes: viridis puts the largest weight in yellow; the server's SVG
  // is asked for the same palette
  const maxCell = async () => page.$$eval('#heatmap rect.cell', (rs) => {
    let best = rs[0];
    for (const r of rs) if (Number(r.getAttribute('data-v')) > Number(best.getAttribute('data-v'))) best = r;
    return best.getAttribute('fill');
  });
  ok(await maxCell() !== '#67000d' && await page.getAttribute('#heatmap svg', 'data-scale') === '0 1',
    'palette reds: weights are drawn from 0 to 1, so a largest weight below 1 is not the darkest red');
  await page.check('#stretch');
  ok(await maxCell() === '#67000d' && /stretched to the largest/.test(await page.textContent('#heatmap g.colorbar')),
    '"stretch": the largest weight is dark red, and the colour bar says the scale is stretched');
  await page.selectOption('#palette', 'viridis');
  ok(await maxCell() === '#fde725' && await page.getAttribute('#heatmap svg', 'data-palette') === 'viridis' &&
     /dark purple is a small weight, yellow a large one/.test(await page.textContent('#readout')),
    'palette viridis: the page redraws, the largest weight yellow (#fde725), the legend written for viridis');
  await page.uncheck('#stretch');
  sent = await sendAndCapture(page, '#send-svg', 200);
  ok(sent.response.url().endsWith('/attention/dot?palette=viridis') && (await svgOf(sent.response.url())).includes('fill="#fde725"'),
    'palette viridis: Server SVG asks ?palette=viridis and gets viridis cells', sent.response.url());
  await page.selectOption('#palette', 'reds');

  // the scale slider (note 2 section 4.4): τ = √d·2^s, scale = 1/τ
  const editorJson = async () => JSON.parse(await page.inputValue('#editor'));
  const X = (await editorJson()).queries;
  const softmaxRow = (q, scale, visible = () => true) => {
    const s = X.map((k, j) => (visible(j) ? scale * q.reduce((a, x, c) => a + x * k[c], 0) : -Infinity));
    const m = Math.max(...s);
    const e = s.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  };
  const drawnRow = async (q) => page.$$eval(`#heatmap rect.cell[data-q="${q}"]`, (rs) => rs.map((r) => Number(r.getAttribute('data-v'))));
  ok(await page.isVisible('#controls') && await page.isVisible('#ctl-tau'), 'controls: the dot view shows the τ slider and the toggles');
  ok((await page.textContent('#ctl-scale-out')) === 'τ = 2, so scale = 1/τ = 0.5 (attnd\'s default: τ = √d = √4)' &&
     await page.getAttribute('#ctl-tau', 'aria-valuetext') === 'τ = 2, scale 0.5', 'controls: the current τ, its scale and attnd\'s default are shown (and told to screen readers)',
    await page.textContent('#ctl-scale-out'));
  // move a control, wait for the request it sends and for its answer drawn
  const move = async (action, want) => {
    await page.evaluate(() => document.getElementById('status').removeAttribute('data-status'));
    const [req] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/attention/dot'), WAIT),
      action(),
    ]);
    await page.waitForSelector('#status[data-status="200"]', WAIT);
    await page.waitForFunction(() => !document.getElementById('send').disabled, null, WAIT);
    const body = JSON.parse(req.postData());
    return ok(want(body), `controls: the request sent: ${JSON.stringify(Object.fromEntries(Object.entries(body).filter(([k]) => !['queries', 'keys', 'values', 'labels'].includes(k))))}`);
  };
  const setRange = (sel, v) => page.$eval(sel, (e, v) => { e.value = String(v); e.dispatchEvent(new Event('input', { bubbles: true })); }, v);
  const flat0 = await drawnRow(1);
  ok(closeAll(flat0, softmaxRow(X[1], 0.5)), 'controls: at the default scale 1/√d the weights are softmax(Q Kᵀ/2)', JSON.stringify(flat0));
  await move(() => setRange('#ctl-tau', 2), (b) => b.scale === 0.125);
  const flatter = await drawnRow(1);
  ok(closeAll(flatter, softmaxRow(X[1], 0.125)) && Math.max(...flatter) < Math.max(...flat0),
    'controls: τ = 4√d (scale 0.125) redraws flatter weights, softmax(Q Kᵀ/8)', JSON.stringify(flatter));
  ok((await editorJson()).scale === 0.125 && (await page.textContent('#ctl-scale-out')).includes('scale = 1/τ = 0.125'),
    'controls: the JSON editor and the readout follow the slider');
  await move(() => setRange('#ctl-tau', -2), (b) => b.scale === 2);
  const sharper = await drawnRow(1);
  ok(closeAll(sharper, softmaxRow(X[1], 2)) && Math.max(...sharper) > Math.max(...flat0),
    'controls: τ = √d/4 (scale 2) redraws sharper weights', JSON.stringify(sharper));
  await move(() => page.click('#ctl-scale-reset'), (b) => !('scale' in b));

  // causal and valid_lens
  await move(() => page.check('#ctl-causal'), (b) => b.causal === true);
  const causalCells = await page.$$eval('#heatmap rect.cell', (rs) => rs.map((r) => [Number(r.getAttribute('data-q')), Number(r.getAttribute('data-k')), Number(r.getAttribute('data-v')), r.getAttribute('fill')]));
  ok(causalCells.length === 36 && causalCells.every(([q, k, v, f]) => (k > q ? v === 0 && /^url\(#lab-masked-\d+\)$/.test(f) : v > 0 && f[0] === '#')),
    'controls: causal masks every key after its query (weight 0, hatched as masked) and keeps the rest');
  ok(closeAll(await drawnRow(2), softmaxRow(X[2], 0.5, (j) => j <= 2)), 'controls: causal row 2 is the softmax over keys 0 … 2');
  await move(() => page.check('#ctl-lens'), (b) => b.valid_lens === 3 && b.causal === true);
  await page.screenshot({ path: path.join(ARTIFACTS, 'lab-controls.png') });
  const lensCells = await page.$$eval('#heatmap rect.cell', (rs) => rs.map((r) => [Number(r.getAttribute('data-q')), Number(r.getAttribute('data-k')), Number(r.getAttribute('data-v'))]));
  ok(lensCells.every(([q, k, v]) => (k > q || k >= 3 ? v === 0 : v > 0)), 'controls: valid_lens 3 hides keys 3 … 5 as well');
  await move(() => setRange('#ctl-lens-n', 5), (b) => b.valid_lens === 5);
  ok((await page.textContent('#ctl-lens-out')).includes('valid_lens 5 of 6 keys'), 'controls: the valid_lens slider edits valid_lens');
  await move(() => page.uncheck('#ctl-lens'), (b) => !('valid_lens' in b));
  await move(() => page.uncheck('#ctl-causal'), (b) => !('causal' in b));
  // an edit in the JSON moves the controls
  const edited2 = await editorJson();
  edited2.causal = true;
  edited2.scale = 0.25;
  await page.fill('#editor', JSON.stringify(edited2, null, 2));
  await page.waitForFunction(() => document.getElementById('ctl-causal').checked &&
    document.getElementById('ctl-scale-out').textContent.includes('scale = 1/τ = 0.25'), null, WAIT);
  ok(Number(await page.inputValue('#ctl-tau')) === 1, 'controls: editing the JSON moves the slider and the toggle (scale 0.25 → τ = 2√d)');

  // attn_mask (docs/attention.md, true = not allowed): the toggle adds a
  // boolean (Nq, Nk) mask of false; a click on a cell hides that key from
  // that query, a second click shows it again
  await page.waitForSelector('#ctl-mask-out', WAIT);
  await send(page, 200);
  await move(() => page.check('#ctl-mask'), (b) => Array.isArray(b.attn_mask) && b.attn_mask.length === 6 &&
    b.attn_mask.every((r) => r.length === 6 && r.every((x) => x === false)) && b.causal === true && b.scale === 0.25);
  await move(() => page.click('#heatmap rect.cell[data-q="3"][data-k="1"]'),
    (b) => b.attn_mask[3][1] === true && b.attn_mask.flat().filter((x) => x).length === 1);
  const maskedRow = await drawnRow(3);
  ok(closeAll(maskedRow, softmaxRow(X[3], 0.25, (j) => j <= 3 && j !== 1)) && maskedRow[1] === 0 &&
     await page.$$eval('#heatmap rect.cell.mask-true', (rs) => rs.map((r) => `${r.dataset.q},${r.dataset.k}`).join()) === '3,1',
  'attn_mask: clicking cell (3, 1) hides key 1 from query 3: weight 0, outlined, row 3 the softmax over keys 0, 2, 3', JSON.stringify(maskedRow));
  ok((await page.textContent('#ctl-mask-out')).startsWith('1 of 6 × 6 entries true'), 'attn_mask: the readout counts the hidden entries',
    await page.textContent('#ctl-mask-out'));
  await move(() => page.click('#heatmap rect.cell[data-q="3"][data-k="1"]'), (b) => b.attn_mask.flat().every((x) => x === false));
  ok(closeAll(await drawnRow(3), softmaxRow(X[3], 0.25, (j) => j <= 3)), 'attn_mask: a second click shows the key again');
  await move(() => page.uncheck('#ctl-mask'), (b) => !('attn_mask' in b));

  // --- a large heatmap: 512 × 512 on a canvas ----------------------------
  await page.selectOption('#example', { label: 'Large: self-attention over 512 tokens (canvas)' });
  const t512 = Date.now();
  await send(page, 200);
  const wall512 = Date.now() - t512;
  const mode = await page.getAttribute('#heatmap svg', 'data-mode');
  const renderMs = Number(await page.getAttribute('#heatmap', 'data-render-ms'));
  const domCells = await page.$$eval('#heatmap rect.cell', (r) => r.length);
  const ticks512 = await page.$$eval('#heatmap g.ticks text', (t) => t.length);
  console.log(`# 512 × 512 heatmap: drawn in ${renderMs} ms (canvas), ${wall512} ms from Send to drawn (request, 262144 weights as JSON, parse, draw)`);
  ok(mode === 'canvas' && domCells === 0 && await page.$$eval('#heatmap image.cells-image', (i) => i.length) === 1,
    '512 × 512: drawn on one canvas image, no DOM node per cell', `${mode} ${domCells}`);
  ok(ticks512 <= 22, '512 × 512: the axis labels are thinned (at most 11 per axis)', ticks512);
  ok(renderMs > 0 && renderMs < 1500, `512 × 512: the heatmap draws in ${renderMs} ms (< 1500)`);
  const big = JSON.parse(await page.inputValue('#editor'));
  const bigAnswer = await (await fetch(`${base}/attention/dot`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(big) })).json();
  const box = await page.$eval('#heatmap image.cells-image', (i) => { const b = i.getBoundingClientRect(); return { x: b.left, y: b.top, w: b.width, h: b.height }; });
  await page.mouse.move(box.x + box.w * (300.5 / 512), box.y + box.h * (400.5 / 512));
  // a cell is under a pixel on screen: the pointer lands within one cell
  const big1 = await page.textContent('#readout');
  const [, bq, bk, bv] = /query (\d+) · key (\d+) : (\S+)/.exec(big1) || [];
  ok(Math.abs(bq - 400) <= 1 && Math.abs(bk - 300) <= 1 && Number(bv) === Number(bigAnswer.weights[bq][bk].toPrecision(4)),
    '512 × 512: hovering the canvas reads out the weight under the pointer (query 400 ± 1, key 300 ± 1)', big1);

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

  // the w slider (note 1 section 8): larger w, narrower attention, a more
  // flexible curve; the Gaussian curve, its weights and loss are redrawn
  const nwBody = (w) => JSON.stringify({ w, x_train: ds.x_train, y_train: ds.y_train, x_query: ds.x_test, y_query: ds.y_truth });
  const nwAt = async (w) => (await fetch(`${base}/regression/nw`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: nwBody(w) })).json();
  const [w1, w8] = [await nwAt(1), await nwAt(8)];
  const tv = (p) => p.slice(1).reduce((a, y, i) => a + Math.abs(y - p[i]), 0);
  const gaussPath1 = await page.getAttribute('#nw-plot path.curve.gaussian', 'd');
  const [nwReq] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/regression/nw') && JSON.parse(r.postData()).w === 8, WAIT),
    page.$eval('#nw-w', (e) => { e.value = '8'; e.dispatchEvent(new Event('input', { bubbles: true })); }),
  ]);
  await page.waitForSelector('#nw-plot[data-w="8"]', WAIT);
  ok(JSON.parse(nwReq.postData()).kernel === undefined, 'NW w slider: moving it to 8 sends /regression/nw with w 8');
  const heat8 = await page.$$eval('#nw-heat rect.cell[data-q="25"]', (rs) => rs.map((r) => Number(r.getAttribute('data-v'))));
  ok(closeAll(heat8, w8.weights[25]) && Math.max(...heat8) > Math.max(...w1.weights[25]),
    'NW w slider: the weights drawn are w = 8\'s, narrower (a larger peak) than w = 1\'s', `${Math.max(...heat8)} vs ${Math.max(...w1.weights[25])}`);
  ok(await page.getAttribute('#nw-plot path.curve.gaussian', 'd') !== gaussPath1 && tv(w8.predictions) > tv(w1.predictions),
    `NW w slider: the Gaussian curve is redrawn, more flexible (total variation ${tv(w8.predictions).toFixed(3)} > ${tv(w1.predictions).toFixed(3)})`);
  ok(close(Number(await page.textContent('#nw-numbers tr[data-model="gaussian"] td[data-field="loss"]')), w8.loss) &&
     (await page.textContent('#nw-plot .legend')).includes('w = 8'), 'NW w slider: the legend and the test loss follow');

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

  // --- the flow view ---------------------------------------------------------
  // first, note 2 section 4.6's self-attention (x 4 × 8, d_k 4, seed 42):
  // the tab's default; every node of the section 4.5 figure, its numbers
  // the live trace's, and the download the same picture
  const notes = { x: [[1.8, 0.4, 1.0, 2.2, 1.9, -1.0, 1.0, -0.2], [-0.1, 0.4, 0.1, 1.5, 0.8, 0.1, 0.4, 0.3],
    [1.5, -0.2, 0.3, -0.9, -2.6, 0.7, 0.9, -0.7], [2.3, -1.5, 0.0, -0.2, 1.5, 1.5, 0.2, 0.4]], d_k: 4, seed: 42 };
  const [selfReq] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/attention/self'), WAIT),
    page.click('#tab-btn-flow'),
  ]);
  await page.waitForSelector('#flow g.node[data-node="output"]', WAIT);
  const selfAnswer = await (await selfReq.response()).json();
  ok(JSON.stringify(JSON.parse(selfReq.postData())) === JSON.stringify(Object.assign({}, notes, { trace: true })),
    'flow: the tab opens on note 2 section 4.6\'s request to /attention/self, traced');
  await flowFigureMatches(page, base, selfAnswer, notes, 'flow (self-attention)');

  // then the editor's /attention/dot with "trace": true (docs/trace.md):
  // a 3-token causal self-attention, Q = K = V = X, every number checked
  // against the formulas here
  const x3 = [[1, 0], [0, 1], [1, 1]];
  const flowReq = { queries: x3, keys: x3, values: x3, causal: true,
    labels: { queries: ['I', 'love', 'cats'], keys: ['I', 'love', 'cats'] } };
  await page.click('#tab-btn-request');
  await page.selectOption('#endpoint', '/attention/dot');
  await page.fill('#editor', JSON.stringify(flowReq));
  await page.click('#tab-btn-flow');
  const [traced] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/attention/dot') && JSON.parse(r.postData()).trace === true, WAIT),
    page.click('#flow-run'),
  ]);
  await page.waitForSelector('#flow g.node[data-node="QK"]', WAIT);
  ok(await page.textContent('#flow-explain') === 'Click a cell of the figure to see how it came about.',
    'flow: a new trace clears the explanation');
  await sameAsServer(page, base, '/attention/dot', flowReq, 'flow (dot, causal)');
  const tracedAnswer = await (await traced.response()).json();
  ok((await traced.response()).status() === 200 && tracedAnswer.trace &&
     Object.keys(tracedAnswer.trace).join(' ') === 'QK scaled masked weights weighted_values',
    'flow: attnd answers the traced request 200 with trace QK, scaled, masked, weights, weighted_values',
    JSON.stringify(tracedAnswer).slice(0, 300));
  ok(JSON.stringify(Object.assign({}, JSON.parse(traced.postData()), { trace: undefined })) === JSON.stringify(Object.assign({}, flowReq, { trace: undefined })),
    'flow: the editor\'s request is sent with "trace": true');
  const nodeShapes = async () => page.$$eval('#flow g.node', (gs) => gs.map((g) => g.dataset.node + ' ' + g.querySelector('tspan').textContent));
  let steps = await nodeShapes();
  ok(steps.join(' | ') === 'Q (3, 2) | K (3, 2) | V (3, 2) | QK (3, 3) | scaled (3, 3) | masked (3, 3) | weights (3, 3) | output (3, 2)',
    'flow: the dot-product diagram has one node per step, with its shape', steps.join(' | '));
  ok(await page.$$eval('#flow .cell[data-node="masked"]', (r) => r.filter((c) => c.getAttribute('fill') === 'url(#flow-masked)').length) === 3 &&
     await page.$$eval('#flow .cell[data-node="weights"]', (r) => r.filter((c) => c.getAttribute('fill') === 'url(#flow-masked)').length) === 3 &&
     await page.$$eval('#flow path[data-to="QK"]', (p) => p.map((e) => e.dataset.from).join()) === 'Q,K',
    'flow: masked scores and their weights are hatched (3 cells each); Q and K join at QK');
  const Xf = flowReq.queries;
  const s2 = 1 / Math.sqrt(2);
  const explainOf = async (step, q, k) => {
    await page.click(`#flow .cell[data-node="${step}"][data-i="${q}"][data-j="${k}"]`);
    await page.waitForSelector(`#flow-explain[data-step="${step}"][data-q="${q}"][data-k="${k}"]`, WAIT);
    return {
      value: Number(await page.getAttribute('#flow-explain', 'data-value')),
      computed: Number(await page.getAttribute('#flow-explain', 'data-computed')),
      text: await page.textContent('#flow-explain'),
      operands: await page.$$eval('#flow .cell.operand', (r) => r.map((c) => `${c.dataset.node}[${c.dataset.i}][${c.dataset.j}]`).join(' ')),
    };
  };
  let ex = await explainOf('QK', 2, 1);
  ok(ex.value === 1 && ex.computed === 1 && ex.text.includes('row 2 of Q · column 1 of Kᵀ') && ex.text.includes('= 1×0 + 1×1 = 1'),
    'flow: QK[2][1] = row 2 of Q · column 1 of Kᵀ = 1×0 + 1×1 = 1', ex.text);
  ok(ex.operands === 'Q[2][0] Q[2][1] K[1][0] K[1][1]', 'flow: clicking QK[2][1] outlines row 2 of Q and row 1 of K', ex.operands);
  ex = await explainOf('scaled', 2, 2);
  ok(close(ex.value, 2 * s2) && close(ex.computed, 2 * s2) && ex.text.includes('2 × 0.7071 = 1.414') && ex.text.includes('1/√2'),
    'flow: scaled[2][2] = QK × 1/√d_k = 2 × 0.7071 = 1.414', ex.text);
  ex = await explainOf('masked', 0, 2);
  ok(ex.text.includes('−∞') && ex.text.includes('exactly 0'), 'flow: masked[0][2] is −∞ (causal)', ex.text);
  ex = await explainOf('weights', 1, 0);
  const want10 = Math.exp(-s2) / (Math.exp(-s2) + 1);
  ok(close(ex.value, want10) && close(ex.computed, want10) && ex.text.includes('max = 0.7071') && ex.text.includes('= 0.3302'),
    `flow: weights[1][0] = exp(0 − 0.7071) / (exp(0 − 0.7071) + exp(0)) = ${want10.toPrecision(4)}`, ex.text);
  ex = await explainOf('output', 2, 0);
  const wRow = (() => { const s = [s2, s2, 2 * s2]; const m = Math.max(...s); const e = s.map((x) => Math.exp(x - m)); const z = e.reduce((a, b) => a + b); return e.map((x) => x / z); })();
  const want20 = wRow[0] * Xf[0][0] + wRow[1] * Xf[1][0] + wRow[2] * Xf[2][0];
  ok(close(ex.value, want20) && close(ex.computed, want20) && ex.text.includes('Σ_c weights[2][c]·V[c][0]') &&
     ex.operands === 'V[0][0] V[1][0] V[2][0] weights[2][0] weights[2][1] weights[2][2]',
    `flow: output[2][0] = Σ_c weights[2][c]·V[c][0] = ${want20.toPrecision(4)}, row 2 of weights and column 0 of V outlined`, ex.text, ex.operands);
  // keyboard only: Tab to a node, arrows to a cell, Enter explains it
  await page.focus('#flow g.node[data-node="weights"]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  ok(await page.getAttribute('#flow-explain', 'data-step') === 'weights' && await page.getAttribute('#flow-explain', 'data-q') === '2' &&
     await page.getAttribute('#flow-explain', 'data-k') === '1',
    'flow, keyboard: focus a node, arrows to weights[2][1], Enter explains it');
  const beside = await page.evaluate(() => {
    const f = document.getElementById('flow').getBoundingClientRect(), e = document.getElementById('flow-explain').getBoundingClientRect();
    return e.left >= f.right - 1 && e.top < f.bottom;
  });
  ok(beside, 'flow: the explanation sits beside the figure, not below it');
  await page.locator('#tab-flow').screenshot({ path: path.join(ARTIFACTS, 'lab-flow.png') });

  // not drawable: said so, never swapped for another request
  await page.click('#tab-btn-request');
  await page.selectOption('#endpoint', '/softmax/masked');
  await page.click('#tab-btn-flow');
  await page.click('#flow-run');
  ok(await page.isVisible('#flow-problem') && (await page.textContent('#flow-problem')).includes('/softmax/masked'),
    'flow: a request to a route it cannot draw is said so', await page.textContent('#flow-problem'));

  // multi-head (docs/trace.md): the editor's multihead example, B = 2,
  // H = 2, h = 8, valid_lens [3, 2]; the head and example pickers, the
  // per-head steps, and cells recomputed here from the trace's own heads
  await page.click('#tab-btn-request');
  await page.selectOption('#endpoint', '/attention/multihead');
  await page.selectOption('#example', { label: 'Multi-head: 2 heads, valid_lens [3, 2]' });
  await page.click('#tab-btn-flow');
  const [mhReq] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/attention/multihead') && JSON.parse(r.postData()).trace === true, WAIT),
    page.click('#flow-run'),
  ]);
  await page.waitForSelector('#flow g.node[data-node="Q_heads"]', WAIT);
  await page.waitForSelector('#flow g.node[data-node="output"]', WAIT);
  const mh = await (await mhReq.response()).json();
  const mt = mh.trace || {};
  await sameAsServer(page, base, '/attention/multihead', JSON.parse(mhReq.postData()), 'flow (multi-head, example 0, head 0)');
  const mhSteps = await nodeShapes();
  ok(mhSteps.join(' | ') === 'queries (4, 4) | keys (6, 4) | values (6, 4) | W_q (8, 4) | W_k (8, 4) | W_v (8, 4) | Q (4, 8) | K (6, 8) | V (6, 8) | ' +
     'Q_heads (4, 4) | K_heads (6, 4) | V_heads (6, 4) | QK (4, 6) | scaled (4, 6) | masked (4, 6) | weights (4, 6) | ' +
     'weighted_values (4, 4) | concat (4, 8) | W_o (8, 8) | output (4, 8)',
  'multihead flow: W_q, W_k, W_v and W_o drawn beside the trace\'s steps, one example and head at a time', mhSteps.join(' | '));
  ok(!(await page.isHidden('#flow-head-label')) && !(await page.isHidden('#flow-example-label')) &&
     JSON.stringify(await page.$$eval('#flow-head option', (os) => os.map((o) => o.textContent))) === '["head 0","head 1"]',
  'multihead flow: the head picker offers head 0 and head 1, the example picker is shown');
  await page.selectOption('#flow-head', '1');
  await page.selectOption('#flow-example', '1');
  const drawnOf = (step) => page.$$eval(`#flow .cell[data-node="${step}"]`, (rs) => {
    const m = [];
    for (const r of rs) { const q = +r.dataset.i; (m[q] = m[q] || [])[+r.dataset.j] = r.dataset.v === 'null' ? null : Number(r.dataset.v); }
    return m;
  });
  const qh11 = mt.Q_heads ? mt.Q_heads[1][1] : null;
  ok(qh11 && closeAll(await drawnOf('Q_heads'), qh11, 0) && closeAll(qh11.map((r) => r), mt.Q[1].map((r) => r.slice(4, 8)), 0),
    'multihead flow: head 1 of example 1 draws Q_heads[1][1], features 4 … 7 of Q', JSON.stringify(qh11));
  ok(closeAll(await drawnOf('K'), mt.K[1], 0) && closeAll(await drawnOf('concat'), mt.concat[1], 0) &&
     closeAll(await drawnOf('W_o'), mh.params.W_o, 0),
    'multihead flow: the shared steps (K, concat) show example 1 whatever the head; W_o is the answer\'s params.W_o');
  const masked11 = await drawnOf('masked');
  ok(masked11.length === 4 && masked11.every((r) => r.length === 6 && r.every((v, k) => (k >= 2) === (v === null))),
    'multihead flow: example 1 (valid_lens 2) has keys 2 … 5 masked (−∞) in every row', JSON.stringify(masked11));
  const dotp = (a, b) => a.reduce((s, x, c) => s + x * b[c], 0);
  const Kh = mt.K_heads[1][1];
  const Vh = mt.V_heads[1][1];
  ex = await explainOf('QK', 3, 1);
  const wantQK = dotp(qh11[3], Kh[1]);
  ok(ex.value === mt.QK[1][1][3][1] && close(ex.computed, wantQK, 1e-12) && close(ex.value, wantQK, 1e-12) && ex.text.includes('row 3 of Q, head · column 1 of K, headᵀ'),
    `multihead flow: QK[3][1] of head 1 = Q_heads[1][1][3] · K_heads[1][1][1] = ${wantQK.toPrecision(6)}`, ex.text);
  ex = await explainOf('scaled', 3, 1);
  ok(close(ex.value, wantQK / 2, 1e-12) && close(ex.computed, wantQK / 2, 1e-12) && ex.text.includes('1/√4'),
    'multihead flow: scaled[3][1] = QK / √(h/H) = QK / 2', ex.text);
  ex = await explainOf('weights', 3, 1);
  const sc = [0, 1].map((k) => dotp(qh11[3], Kh[k]) / 2);
  const mx = Math.max(...sc);
  const want31 = Math.exp(sc[1] - mx) / (Math.exp(sc[0] - mx) + Math.exp(sc[1] - mx));
  ok(ex.value === mt.weights[1][1][3][1] && ex.value === mh.weights[1][1][3][1] && close(ex.computed, want31, 1e-12) && close(ex.value, want31, 1e-12),
    `multihead flow: weights[3][1] of head 1, example 1 = softmax over its 2 visible keys = ${want31.toPrecision(6)}`, ex.text);
  ex = await explainOf('weighted_values', 0, 2);
  const w0 = mt.weights[1][1][0];
  const want02 = w0.reduce((a, w, k) => a + w * Vh[k][2], 0);
  ok(ex.value === mt.weighted_values[1][1][0][2] && close(ex.computed, want02, 1e-12) && close(ex.value, want02, 1e-12) && ex.text.includes('[c][2]'),
    `multihead flow: weighted_values[0][2] of head 1 = weights · V_heads[1][1][:, 2] = ${want02.toPrecision(6)}`, ex.text);
  ex = await explainOf('Q', 2, 5);
  const Wq = mh.params.W_q;
  const q1 = JSON.parse(mhReq.postData()).queries[1];
  const want25 = dotp(q1[2], Wq[5]);
  ok(close(ex.computed, want25, 1e-12) && close(ex.value, want25, 1e-12), `multihead flow: Q[2][5] = row 2 of queries · row 5 of W_q = ${want25.toPrecision(6)}`, ex.text);
  await page.selectOption('#flow-head', '0');
  ok(closeAll(await drawnOf('weights'), mt.weights[1][0], 0), 'multihead flow: head 0 redraws weights[1][0]');

  // --- the Transformer tab ---------------------------------------------------
  // /transformer/encoder and /transformer/decoder of the live attnd
  // (docs/transformer.md): weights (L, H, S, S) for unbatched src; the
  // decoder's self_weights (L, H, T, T) and cross_weights (L, H, T, S)
  const [encReq] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/transformer/encoder'), WAIT),
    page.click('#tab-btn-transformer'),
  ]);
  await page.waitForSelector('#tf-grid g.panel', WAIT);
  const encRes = await encReq.response();
  const encAnswer = await encRes.json();
  const enc = JSON.parse(encReq.postData());
  ok(encRes.status() === 200 && shapeOfJson(encAnswer.weights).join() === '2,2,6,6' && shapeOfJson(encAnswer.output).join() === '6,8',
    'Transformer: attnd answers the encoder 200, weights (L, H, S, S) = (2, 2, 6, 6), output (6, 8)',
    `${encRes.status()} ${JSON.stringify(encAnswer).slice(0, 200)}`);
  ok(enc.seed === 0 && enc.d_model === 8 && enc.num_heads === 2 && enc.dim_feedforward === 16 && enc.num_layers === 2 &&
     enc.positional_encoding === true && !('causal' in enc) && enc.src.length === 6 && enc.src.every((r) => r.length === 8) &&
     JSON.stringify(enc.src[0]) === JSON.stringify(enc.src[4]) && JSON.stringify(enc.src[0]) !== JSON.stringify(enc.src[1]),
  'Transformer: the request has seed, d_model (src\'s last axis), num_heads, dim_feedforward, num_layers, positional_encoding and src (6, 8), one row per token (“the” twice, the same row)',
  JSON.stringify({ ...enc, src: `(${enc.src.length}, ${enc.src[0].length})` }));
  const gridOf = (fig) => page.$$eval(`#tf-grid figure[data-block="${fig}"] g.panel`, (gs) => gs.map((g) => {
    const m = [];
    for (const r of g.querySelectorAll('rect.cell')) (m[+r.dataset.q] = m[+r.dataset.q] || [])[+r.dataset.k] = Number(r.dataset.v);
    return { label: g.querySelector('.panel-label').textContent, t: g.getAttribute('transform'), m };
  }));
  const at = (t) => /translate\(([\d.]+),([\d.]+)\)/.exec(t).slice(1).map(Number);
  const LH = ['layer 0, head 0', 'layer 0, head 1', 'layer 1, head 0', 'layer 1, head 1'];
  const isGrid = (g, w) => g.length === 4 && g.map((p) => p.label).join() === LH.join() &&
    g.every((p, i) => closeAll(p.m, w[i >> 1][i & 1], 0)) && at(g[1].t)[1] === at(g[0].t)[1] && at(g[1].t)[0] > at(g[0].t)[0] &&
    at(g[2].t)[0] === at(g[0].t)[0] && at(g[2].t)[1] > at(g[0].t)[1];
  const encGrid = await gridOf('Encoder self-attention');
  ok(isGrid(encGrid, encAnswer.weights),
    'Transformer: a layer × head grid (2 rows of 2 panels of 6 × 6), layer by row, head by column, each panel the answer\'s weights[l][h]',
    JSON.stringify(encGrid.map((g) => [g.label, g.t])));
  const tfTicks = await page.$$eval('#tf-grid g.panel:first-of-type text.tick-label', (ts) => ts.map((t) => t.lastChild.textContent));
  ok(tfTicks.slice(0, 6).join(' ') === 'the cat sat on the mat', 'Transformer: the tokens label the axes', tfTicks.join(' '));

  // the decoder: causal self-attention over the tokens, cross-attention to
  // the memory's four tokens
  await page.selectOption('#tf-block', 'decoder');
  ok(await page.isChecked('#tf-causal') && await page.isVisible('#tf-memory'), 'Transformer: choosing the decoder shows memory and checks causal (its default)');
  const [decReq] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/transformer/decoder'), WAIT),
    page.click('#tf-run'),
  ]);
  await page.waitForSelector('#tf-grid figure[data-block="Decoder cross-attention"] g.panel', WAIT);
  const decRes = await decReq.response();
  const dec = await decRes.json();
  const decBody = JSON.parse(decReq.postData());
  ok(decRes.status() === 200 && decBody.tgt.length === 6 && decBody.memory.length === 4 && decBody.memory.every((r) => r.length === 8) &&
     decBody.causal === true && !('src' in decBody) && shapeOfJson(dec.self_weights).join() === '2,2,6,6' && shapeOfJson(dec.cross_weights).join() === '2,2,6,4',
  'Transformer: the decoder sends tgt (6, 8), memory (4, 8), causal; attnd answers self_weights (2, 2, 6, 6), cross_weights (2, 2, 6, 4)',
  `${decRes.status()} ${JSON.stringify({ ...decBody, tgt: undefined, memory: undefined })}`);
  const selfGrid = await gridOf('Decoder self-attention');
  const crossGrid = await gridOf('Decoder cross-attention');
  ok(isGrid(selfGrid, dec.self_weights) && selfGrid.every((p) => p.m.every((row, q) => row.every((v, k) => (k > q ? v === 0 : v > 0)))),
    'Transformer: the decoder\'s self-attention grid is self_weights[l][h], causal (0 above the diagonal)');
  ok(isGrid(crossGrid, dec.cross_weights) && crossGrid.every((p) => p.m.length === 6 && p.m[0].length === 4),
    'Transformer: the cross-attention grid is cross_weights[l][h], 6 tokens × 4 memory tokens');
  const crossTicks = await page.$$eval('#tf-grid figure[data-block="Decoder cross-attention"] g.panel:first-of-type text.tick-label', (ts) => ts.map((t) => t.lastChild.textContent));
  await page.locator('#tab-transformer').screenshot({ path: path.join(ARTIFACTS, 'lab-transformer.png') });
  ok(crossTicks.slice(0, 4).join(' ') === 'le chat est assis', 'Transformer: the memory tokens label the cross-attention\'s keys', crossTicks.join(' '));
  await page.fill('#tf-heads', '3');
  await page.click('#tf-run');
  await page.waitForSelector('#tf-problem:not([hidden])', WAIT);
  ok((await page.textContent('#tf-problem')).includes('/num_heads'), 'Transformer: num_heads 3 (not dividing d_model 8) shows the problem at /num_heads',
    await page.textContent('#tf-problem'));

  ok(foreign.length === 0, 'every request the page made went to attnd', foreign.join(' '));
  ok(errors.length === 0, 'no script errors', ...errors);
}

// ---------------------------------------------------------------------------
// The binary tensor data extension from a frontend (docs/binary.md): a page
// of another origin (served by startApp) posts a Blob of the JSON header and
// the tensors' typed arrays, reads the FP32 outputs as Float32Array, and the
// same request is sent as JSON; the bytes must be the JSON doubles rounded
// by Math.fround exactly.

// A page of another origin: the same host, a port of its own.
function startApp() {
  return new Promise((resolve, reject) => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><meta charset="utf-8"><title>binary client</title><p>a page of another origin');
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

// The client, in the page: deterministic FP32 inputs (B = 2, Nq = 3,
// Nk = 5, d = 4, dv = 3; the second example sees 3 keys), once as bytes
// with FP32 outputs as bytes and once as JSON, plus three faulty bodies.
// Returns what the page saw.
async function clientInPage({ base }) {
  let seed = 20261201;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed / 2147483648) * 4 - 2; };
  const shapes = { queries: [2, 3, 4], keys: [2, 5, 4], values: [2, 5, 3] };
  const tensors = {};
  for (const [name, shape] of Object.entries(shapes)) {
    tensors[name] = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(rand);
  }
  const validLens = new Int32Array([5, 3]);
  const names = ['output', 'weights', 'scores'];
  const url = `${base}/v2/models/attention_dot/infer`;
  const headerOf = (sizes = {}) => ({
    inputs: [
      ...Object.entries(shapes).map(([name, shape]) => ({
        name, shape: sizes[`${name}.shape`] || shape, datatype: 'FP32',
        parameters: { binary_data_size: sizes[name] ?? tensors[name].byteLength },
      })),
      { name: 'valid_lens', shape: [2], datatype: 'INT32', parameters: { binary_data_size: validLens.byteLength } },
    ],
    parameters: { return_scores: true },
    outputs: names.map((name) => ({ name, parameters: { binary_data: true, datatype: 'FP32' } })),
  });
  const post = async (header, parts) => {
    const json = new TextEncoder().encode(JSON.stringify(header));
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': String(json.length) },
      body: new Blob([json, ...parts]),
    });
    return { res, sent: json.length, buf: await res.arrayBuffer() };
  };

  // as bytes
  const { res, sent, buf } = await post(headerOf(), [tensors.queries, tensors.keys, tensors.values, validLens]);
  const ihcl = res.headers.get('Inference-Header-Content-Length');
  const n = Number(ihcl);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 0, n)));
  const binary = {};
  let at = n;
  for (const out of header.outputs) {
    const size = out.parameters.binary_data_size;
    binary[out.name] = Array.from(new Float32Array(buf.slice(at, at + size)));
    at += size;
  }
  // the same request as JSON, FP64 out
  const jres = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      inputs: [
        ...Object.entries(shapes).map(([name, shape]) => ({ name, shape, datatype: 'FP32', data: Array.from(tensors[name]) })),
        { name: 'valid_lens', shape: [2], datatype: 'INT32', data: Array.from(validLens) },
      ],
      parameters: { return_scores: true },
      outputs: names.map((name) => ({ name })),
    }),
  });
  const json = await jres.json();

  // faults: the body cut short, a size that is not the shape's, a NaN
  const fault = async (header, parts) => {
    const r = await post(header, parts);
    return { status: r.res.status, contentType: r.res.headers.get('content-type'), error: JSON.parse(new TextDecoder().decode(r.buf)).error };
  };
  const nan = tensors.queries.slice();
  nan[5] = NaN;
  const faults = {
    short: await fault(headerOf(), [tensors.queries, tensors.keys, tensors.values, validLens.subarray(0, 1)]),
    size: await fault(headerOf({ keys: 128, values: 152, 'keys.shape': [2, 5, 4] }), [tensors.queries, tensors.keys, tensors.values, validLens]),
    nan: await fault(headerOf(), [nan, tensors.keys, tensors.values, validLens]),
  };
  return {
    status: res.status, type: res.type, contentType: res.headers.get('content-type'),
    contentLength: res.headers.get('content-length'), ihcl, sent, byteLength: buf.byteLength, header, binary,
    jsonStatus: jres.status, json,
    inputs: Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, Array.from(v)])),
    validLens: Array.from(validLens), faults,
  };
}

// Attention in doubles from the inputs the page sent (flat arrays).
function referenceDot(inp, validLens, [B, Nq, Nk, d, dv]) {
  const output = [];
  const weights = [];
  const scores = [];
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < Nq; i++) {
      const s = [];
      for (let j = 0; j < Nk; j++) {
        let dot = 0;
        for (let c = 0; c < d; c++) dot += inp.queries[(b * Nq + i) * d + c] * inp.keys[(b * Nk + j) * d + c];
        s.push(j < validLens[b] ? dot / Math.sqrt(d) : NaN);
      }
      const max = Math.max(...s.filter((x) => !Number.isNaN(x)));
      const e = s.map((x) => (Number.isNaN(x) ? 0 : Math.exp(x - max)));
      const sum = e.reduce((a, x) => a + x, 0);
      const w = e.map((x) => x / sum);
      for (let c = 0; c < dv; c++) output.push(w.reduce((a, x, j) => a + x * inp.values[(b * Nk + j) * dv + c], 0));
      weights.push(...w);
      scores.push(...s);
    }
  }
  return { output, weights, scores };
}

async function binaryClient(context, base) {
  const { server, origin } = await startApp();
  const page = await context.newPage();
  const errors = [];
  const posts = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4(00|22)/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });
  page.on('request', (r) => { if (r.method() === 'POST') posts.push(r); });
  try {
    await page.goto(`${origin}/`);
    const logStart = daemonLog.length;
    const r = await page.evaluate(clientInPage, { base });

    // cross-origin, through CORS
    const origins = [...new Set(await Promise.all(posts.map(async (p) => (await p.allHeaders()).origin)))];
    ok(origin !== base && origins.length === 1 && origins[0] === origin,
      `binary: the client page (${origin}) posts to attnd (${base}) cross-origin`, origins.join(' '));
    ok(r.status === 200 && r.type === 'cors' && r.contentType === 'application/octet-stream',
      'binary: 200, a CORS response, Content-Type application/octet-stream', `${r.status} ${r.type} ${r.contentType}`);
    if (daemon) {
      let preflight = null;
      for (let k = 0; k < 40 && !preflight; k++) {
        preflight = /OPTIONS \/v2\/models\/attention_dot\/infer 204\b/.exec(daemonLog.slice(logStart));
        if (!preflight) await new Promise((res) => setTimeout(res, 50));
      }
      ok(preflight !== null, 'binary: the browser sent a preflight (OPTIONS ... 204 in the access log) and it passed');
    }

    // the answer's layout
    const sizes = r.header.outputs.map((o) => o.parameters && o.parameters.binary_data_size);
    ok(r.ihcl !== null && Number(r.ihcl) > 0 && r.byteLength === Number(r.ihcl) + sizes.reduce((a, b) => a + b, 0) &&
       Number(r.contentLength) === r.byteLength,
    'binary: the script reads Inference-Header-Content-Length; header + the outputs\' sizes = Content-Length = the bytes',
    `IHCL ${r.ihcl}, sizes ${sizes}, Content-Length ${r.contentLength}, ${r.byteLength} bytes`);
    const want = { output: [2, 3, 3], weights: [2, 3, 5], scores: [2, 3, 5] };
    ok(r.header.model_name === 'attention_dot' && r.header.outputs.length === 3 &&
       r.header.outputs.every((o, i) => o.name === ['output', 'weights', 'scores'][i] && o.datatype === 'FP32' &&
         JSON.stringify(o.shape) === JSON.stringify(want[o.name]) && !('data' in o) &&
         o.parameters.binary_data_size === 4 * want[o.name].reduce((a, b) => a * b, 1)),
    'binary: the header lists output, weights, scores as FP32 with their shapes, binary_data_size = 4 × entries, no data',
    JSON.stringify(r.header));

    // the numbers: bytes = Math.fround(the JSON answer's doubles), exactly
    const jsonOut = Object.fromEntries((r.json.outputs || []).map((o) => [o.name, o]));
    ok(r.jsonStatus === 200 && ['output', 'weights', 'scores'].every((k) => jsonOut[k] && jsonOut[k].datatype === 'FP64'),
      'binary: the same request as JSON answers FP64', JSON.stringify(r.json).slice(0, 300));
    let rounded = 0;
    let masked = 0;
    for (const name of ['output', 'weights', 'scores']) {
      const fp64 = jsonOut[name] ? jsonOut[name].data : [];
      const fp32 = r.binary[name] || [];
      const bad = [];
      fp64.forEach((x, i) => {
        const y = fp32[i];
        if (x === null) {
          masked++;
          if (!Number.isNaN(y)) bad.push(`entry ${i}: JSON null, bytes ${y}`);
        } else {
          if (Math.fround(x) !== x) rounded++;
          if (!Object.is(y, Math.fround(x))) bad.push(`entry ${i}: Math.fround(${x}) = ${Math.fround(x)}, bytes ${y}`);
        }
      });
      ok(fp64.length > 0 && fp32.length === fp64.length && bad.length === 0,
        `binary: ${name}: each of the ${fp32.length} FP32 entries in bytes is Math.fround of the JSON FP64 answer`, ...bad.slice(0, 5));
    }
    ok(masked === 6 && rounded > 20, `binary: the 6 masked scores are NaN in bytes (null in JSON); ${rounded} entries changed by the rounding`);

    // and the JSON answer is attention computed here from the same inputs
    const ref = referenceDot(r.inputs, r.validLens, [2, 3, 5, 4, 3]);
    const far = [];
    for (const name of ['output', 'weights', 'scores']) {
      (jsonOut[name] ? jsonOut[name].data : []).forEach((x, i) => {
        const y = ref[name][i];
        if (x === null ? !Number.isNaN(y) : !(Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(y)))) far.push(`${name}[${i}]: ${x} vs ${y}`);
      });
    }
    ok(far.length === 0, 'binary: the answer is softmax(Q Kᵀ / 2, masked) V computed in the test from the bytes sent (to 1e-12)', ...far.slice(0, 5));
    const w = r.binary.weights || [];
    ok(w.length === 30 && [3, 4, 5].every((q) => w[q * 5 + 3] === 0 && w[q * 5 + 4] === 0 && w[q * 5 + 2] > 0) &&
       [...Array(6).keys()].every((q) => Math.abs(w.slice(q * 5, q * 5 + 5).reduce((a, x) => a + x, 0) - 1) < 1e-6),
    'binary: the FP32 weights rows sum to 1 and the second example\'s last two keys weigh 0', JSON.stringify(w));

    // errors, read by the script across origins
    const f = r.faults;
    ok(f.short.status === 400 && f.short.contentType === 'application/json' &&
       f.short.error.startsWith('invalid_json at /inputs/3/parameters/binary_data_size: the body ends inside input valid_lens\'s bytes'),
    'binary: a body cut short: 400 {"error": "invalid_json at /inputs/3/parameters/binary_data_size: ..."}', JSON.stringify(f.short));
    ok(f.size.status === 422 &&
       f.size.error.startsWith('shape_mismatch at /inputs/1/parameters/binary_data_size: input keys has shape [2,5,4] and datatype FP32: 40 entries of 4 bytes, so binary_data_size must be 160; it is 128'),
    'binary: binary_data_size not the shape\'s (the sizes add up): 422 shape_mismatch at keys\' binary_data_size', JSON.stringify(f.size));
    ok(f.nan.status === 422 && f.nan.error.startsWith('invalid_value at /inputs/0: entry 5 (row-major) of input queries\'s bytes is NaN'),
      'binary: a NaN among the FP32 bytes: 422 invalid_value at /inputs/0, naming entry 5', JSON.stringify(f.nan));

    // docs/binary.md's browser example logs what the page shows
    const doc = readFileSync(path.join(root, 'docs/binary.md'), 'utf8');
    const m = /<!-- example -->\n```js\n([\s\S]*?)\n```\n```\n([\s\S]*?)\n```/.exec(doc);
    if (ok(m !== null, 'docs/binary.md has a browser example (a js block after <!-- example -->) and its output')) {
      const code = m[1].replace(/\b(?:127\.0\.0\.1|localhost):8080\b/g, base.replace(/^https?:\/\//, ''));
      const logged = await page.evaluate(`(async () => {
        const logged = [];
        const log = console.log;
        console.log = (...args) => { logged.push(args.map(String).join(' ')); };
        try {
          ${code}
        } finally {
          console.log = log;
        }
        return logged;
      })()`);
      const shown = m[2].split('\n');
      ok(logged.length === shown.length && logged.every((l, i) => l === shown[i]),
        'docs/binary.md\'s browser example, run in the page, logs the lines the page shows',
        `logged:\n${logged.join('\n')}`, `shown:\n${shown.join('\n')}`);
    }
    ok(errors.length === 0, 'binary: no script errors in the client page', ...errors);
  } finally {
    await page.close();
    server.close();
  }
}

// A page of another origin calls a mistyped route with a JSON body (so the
// browser sends a preflight first): the preflight passes on any path, and
// the page reads the real 404 and its "did you mean", not a CORS failure.
async function mistypedRoute(context, base) {
  const { server, origin } = await startApp();
  const page = await context.newPage();
  try {
    await page.goto(`${origin}/`);
    const r = await page.evaluate(async (url) => {
      try {
        const res = await fetch(`${url}/attention/dott`, {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: '{"queries": [[1, 0]], "keys": [[1, 0]], "values": [[1]]}',
        });
        return { status: res.status, type: res.type, body: await res.json() };
      } catch (e) {
        return { error: String(e) };
      }
    }, base);
    ok(!r.error && r.status === 404 && r.type === 'cors',
      'a page of another origin calling a mistyped route reads its 404 (the preflight passed), not a CORS failure',
      JSON.stringify(r).slice(0, 300));
    ok(r.body && r.body.code === 'not_found' && /did you mean `\/attention\/dot`\?/.test(r.body.detail),
      '  whose detail names the closest route', JSON.stringify(r.body || {}).slice(0, 300));
  } finally {
    await page.close();
    server.close();
  }
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
  console.log(`1..${tally().n}`);
  if (daemon) daemon.kill('SIGKILL');
  process.exit(1);
}, DEADLINE_MS);

main().catch((e) => {
  ok(false, 'the browser test ran to the end', e.stack || e.message);
}).finally(() => {
  clearTimeout(watchdog);
  if (daemon) { daemon.removeAllListeners('exit'); daemon.kill('SIGTERM'); }
  console.log(`1..${tally().n}`);
  console.log(`browser: ${tally().n - tally().failures} passed, ${tally().failures} failed`);
  process.exitCode = tally().failures ? 1 : 0;
});
