// cvd.mjs — how distinguishable the lab's colour palettes stay under
// simulated colour-vision deficiencies. Prints TAP.
//
//   node tests/browser/cvd.mjs              (from anywhere; no attnd needed)
//   CHROMIUM=/usr/bin/chromium              the browser (the default)
//
// What it measures: the palettes are read from api/fronts/lab/lab.js (its
// `var PALETTES = {...};` literal and MASKED_FILL) and interpolated exactly
// as lab.js's rgbAt does, at t = 0, 0.1, …, 1. Those 11 colours per palette
// and the masked cells' grey are painted as solid 40 × 40 px swatches into a
// page of Debian's headless Chromium (page.setContent, no network). For each
// vision condition (none, protanopia, deuteranopia, tritanopia,
// achromatopsia) the DevTools Protocol's Emulation.setEmulatedVisionDeficiency
// filters what the compositor draws; a PNG screenshot of the page is decoded
// here (node:zlib; a canvas's pixels would not see the emulation) and each
// swatch's centre pixel read back. Colours go sRGB → CIELAB (D65, 2°) and are
// compared with CIEDE2000 (Sharma, Wu & Dalal 2005):
//   - the smallest ΔE00 between consecutive swatches (t and t + 0.1),
//   - ΔE00 between the two ends (t = 0 and t = 1),
//   - whether L* is monotonic along t (rdbu, a diverging palette: from each
//     end to the centre t = 0.5),
//   - the smallest ΔE00 between the masked grey and any swatch.
// Checks: the pipeline first (CIEDE2000 against Sharma's published pairs,
// the unfiltered screenshot returns the painted colours, each emulation
// changes them), then for reds and viridis a monotonic L* under every
// condition and a smallest consecutive ΔE00 ≥ 3 (≥ 2.3, one just-noticeable
// difference, under achromatopsia), for rdbu ends ≥ 20 apart (under
// achromatopsia, where the sign cannot show, L* monotonic towards the centre).
// The numbers end the output again as a markdown table on `#` lines.
// Exit code 1 if any check fails.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { ok, tally } from './tap.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const LAB_JS = path.join(root, 'api/fronts/lab/lab.js');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const CONDITIONS = ['none', 'protanopia', 'deuteranopia', 'tritanopia', 'achromatopsia'];
const STEPS = 10; // swatches at t = i / STEPS, i = 0..STEPS
const SWATCH = 40; // px
const MIN_STEP_DE = 3; // smallest ΔE00 between consecutive swatches (reds, viridis)
const MIN_STEP_GREY_DE = 2.3; // the same under achromatopsia: one just-noticeable difference
const MIN_ENDS_DE = 20; // smallest ΔE00 between rdbu's ends
const DIVERGING = new Set(['rdbu']);
const DEADLINE_MS = 60000;


// ---------------------------------------------------------------------------
// the palettes, as lab.js has them

// `var PALETTES = { name: [[0xff, 0xf5, 0xf0], ...], ... };` → { name: [[r, g, b], ...] }
function readPalettes(src) {
  const start = src.indexOf('var PALETTES = ');
  if (start < 0) throw new Error(`${LAB_JS}: no "var PALETTES = "`);
  const end = src.indexOf('};', start);
  if (end < 0) throw new Error(`${LAB_JS}: PALETTES has no closing "};"`);
  const json = src.slice(start + 'var PALETTES = '.length, end + 1)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/[^\n]*/g, '')
    .replace(/0x([0-9a-f]+)/gi, (_, h) => String(parseInt(h, 16)))
    .replace(/([{,]\s*)([A-Za-z_$][\w$]*)\s*:/g, '$1"$2":')
    .replace(/,(\s*[\]}])/g, '$1');
  const palettes = JSON.parse(json);
  for (const [name, stops] of Object.entries(palettes)) {
    if (!Array.isArray(stops) || stops.length < 2 ||
        !stops.every((c) => Array.isArray(c) && c.length === 3 && c.every((v) => Number.isInteger(v) && v >= 0 && v <= 255))) {
      throw new Error(`${LAB_JS}: palette ${name} is not a list of [r, g, b] bytes`);
    }
  }
  return palettes;
}

function readMaskedFill(src) {
  const m = /var MASKED_FILL = '(#[0-9a-f]{6})'/i.exec(src);
  if (!m) throw new Error(`${LAB_JS}: no "var MASKED_FILL = '#rrggbb'"`);
  return [1, 3, 5].map((i) => parseInt(m[1].slice(i, i + 2), 16));
}

// lab.js's rgbAt, for t in [0, 1]
function rgbAt(stops, t) {
  const last = stops.length - 1;
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  const pos = t * last, i = Math.min(last - 1, Math.floor(pos)), f = pos - i;
  return [0, 1, 2].map((c) => Math.floor(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]) + 0.5));
}

const hex = (rgb) => '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');

// ---------------------------------------------------------------------------
// PNG: 8-bit RGB or RGBA, not interlaced (what Chromium's screenshots are)

function decodePng(buf) {
  const SIG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (buf.length < 8 || SIG.some((b, i) => buf[i] !== b)) throw new Error('not a PNG');
  let width = 0, height = 0, depth = 0, type = -1, interlace = 0;
  const idat = [];
  for (let off = 8; off + 8 <= buf.length;) {
    const len = buf.readUInt32BE(off);
    const kind = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (kind === 'IHDR') {
      width = body.readUInt32BE(0); height = body.readUInt32BE(4);
      depth = body[8]; type = body[9]; interlace = body[12];
    } else if (kind === 'IDAT') {
      idat.push(body);
    } else if (kind === 'IEND') {
      break;
    }
    off += 12 + len; // length, type, data, CRC
  }
  if (depth !== 8 || (type !== 2 && type !== 6) || interlace !== 0) {
    throw new Error(`PNG of bit depth ${depth}, colour type ${type}, interlace ${interlace}: only 8-bit RGB/RGBA, not interlaced`);
  }
  const channels = type === 6 ? 4 : 3;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(idat));
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data of ${raw.length} bytes, not ${height * (stride + 1)}`);
  const data = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1, dst = y * stride, up = dst - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[dst + x - channels] : 0; // left
      const b = y > 0 ? data[up + x] : 0; // above
      const c = y > 0 && x >= channels ? data[up + x - channels] : 0; // above left
      let pred;
      switch (filter) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`PNG row ${y}: filter type ${filter}`);
      }
      data[dst + x] = (raw[src + x] + pred) & 0xff;
    }
  }
  return { width, height, channels, data };
}

function pixel(img, x, y) {
  const o = (y * img.width + x) * img.channels;
  return [img.data[o], img.data[o + 1], img.data[o + 2]];
}

// ---------------------------------------------------------------------------
// colour science: sRGB (IEC 61966-2-1) → XYZ → CIELAB (D65), CIEDE2000

const SRGB_TO_XYZ = [
  [0.4124564, 0.3575761, 0.1804375],
  [0.2126729, 0.7151522, 0.0721750],
  [0.0193339, 0.1191920, 0.9503041],
];
// the white point is the matrix's image of sRGB white, so greys get a* = b* = 0
const WHITE = SRGB_TO_XYZ.map((row) => row[0] + row[1] + row[2]);

function lab(rgb) {
  const lin = rgb.map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  const f = (t) => (t > (6 / 29) ** 3 ? Math.cbrt(t) : t / (3 * (6 / 29) ** 2) + 4 / 29);
  const [fx, fy, fz] = SRGB_TO_XYZ.map((row, k) => f((row[0] * lin[0] + row[1] * lin[1] + row[2] * lin[2]) / WHITE[k]));
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

const RAD = Math.PI / 180;
function deltaE00([L1, a1, b1], [L2, a2, b2]) {
  const C1 = Math.hypot(a1, b1), C2 = Math.hypot(a2, b2);
  const Cbar7 = ((C1 + C2) / 2) ** 7;
  const G = 0.5 * (1 - Math.sqrt(Cbar7 / (Cbar7 + 25 ** 7)));
  const a1p = (1 + G) * a1, a2p = (1 + G) * a2;
  const C1p = Math.hypot(a1p, b1), C2p = Math.hypot(a2p, b2);
  const hue = (b, a) => (b === 0 && a === 0 ? 0 : (Math.atan2(b, a) / RAD + 360) % 360);
  const h1p = hue(b1, a1p), h2p = hue(b2, a2p);

  const dLp = L2 - L1, dCp = C2p - C1p;
  let dhp = 0;
  if (C1p * C2p !== 0) {
    dhp = h2p - h1p;
    if (dhp > 180) dhp -= 360;
    else if (dhp < -180) dhp += 360;
  }
  const dHp = 2 * Math.sqrt(C1p * C2p) * Math.sin((dhp / 2) * RAD);

  const Lbarp = (L1 + L2) / 2, Cbarp = (C1p + C2p) / 2;
  let hbarp = h1p + h2p;
  if (C1p * C2p !== 0) {
    if (Math.abs(h1p - h2p) <= 180) hbarp /= 2;
    else hbarp = h1p + h2p < 360 ? (hbarp + 360) / 2 : (hbarp - 360) / 2;
  }
  const T = 1 - 0.17 * Math.cos((hbarp - 30) * RAD) + 0.24 * Math.cos(2 * hbarp * RAD) +
    0.32 * Math.cos((3 * hbarp + 6) * RAD) - 0.20 * Math.cos((4 * hbarp - 63) * RAD);
  const dTheta = 30 * Math.exp(-(((hbarp - 275) / 25) ** 2));
  const Cbarp7 = Cbarp ** 7;
  const RC = 2 * Math.sqrt(Cbarp7 / (Cbarp7 + 25 ** 7));
  const SL = 1 + (0.015 * (Lbarp - 50) ** 2) / Math.sqrt(20 + (Lbarp - 50) ** 2);
  const SC = 1 + 0.045 * Cbarp, SH = 1 + 0.015 * Cbarp * T;
  const RT = -Math.sin(2 * dTheta * RAD) * RC;
  const l = dLp / SL, c = dCp / SC, h = dHp / SH;
  return Math.sqrt(l * l + c * c + h * h + RT * c * h);
}

// pairs from Sharma, Wu & Dalal, "The CIEDE2000 color-difference formula"
// (2005), table 1: [Lab1, Lab2, ΔE00]
const SHARMA = [
  [[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425],
  [[50, 0, 0], [50, -1, 2], 2.3669],
  [[50, 2.49, -0.001], [50, -2.49, 0.0009], 7.1792],
  [[50, 2.49, -0.001], [50, -2.49, 0.0011], 7.2195],
  [[50, 2.5, 0], [73, 25, -18], 27.1492],
  [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644],
  [[2.0776, 0.0795, -1.135], [0.9033, -0.0636, -0.5514], 0.9082],
];

// ---------------------------------------------------------------------------
// measures of one palette's swatches under one condition

function strictlyMonotonic(xs) {
  const up = xs.every((x, i) => i === 0 || x > xs[i - 1]);
  const down = xs.every((x, i) => i === 0 || x < xs[i - 1]);
  return up || down;
}

function measure(name, rgbs, maskedRgb) {
  const labs = rgbs.map(lab), grey = lab(maskedRgb);
  let minStep = Infinity, minStepAt = 0;
  for (let i = 0; i < STEPS; i++) {
    const d = deltaE00(labs[i], labs[i + 1]);
    if (d < minStep) { minStep = d; minStepAt = i; }
  }
  let minGrey = Infinity, minGreyAt = 0;
  labs.forEach((c, i) => { const d = deltaE00(c, grey); if (d < minGrey) { minGrey = d; minGreyAt = i; } });
  const L = labs.map((c) => c[0]);
  const mid = STEPS / 2;
  const monotonic = DIVERGING.has(name)
    // each end to the centre: L* rises from t = 0 to 0.5 and from t = 1 back to 0.5
    ? { low: strictlyMonotonic(L.slice(0, mid + 1)) && L[mid] > L[0], high: strictlyMonotonic(L.slice(mid)) && L[mid] > L[STEPS] }
    : { all: strictlyMonotonic(L) };
  return { minStep, minStepAt, ends: deltaE00(labs[0], labs[STEPS]), minGrey, minGreyAt, L, monotonic };
}

const tAt = (i) => (i / STEPS).toFixed(1);
const yesNo = (b) => (b ? 'yes' : 'no');
const monoText = (m) => ('all' in m ? yesNo(m.all) : `0→0.5 ${yesNo(m.low)}, 1→0.5 ${yesNo(m.high)}`);

// ---------------------------------------------------------------------------
// the page

function swatchPage(palettes, masked) {
  const cell = (id, rgb, title) =>
    `<div class="s" id="${id}" title="${title}" style="background:${hex(rgb)}"></div>`;
  const rows = Object.entries(palettes).map(([name, rgbs]) =>
    `<div class="row">${rgbs.map((rgb, i) => cell(`${name}-${i}`, rgb, `${name} t=${tAt(i)}`)).join('')}</div>`);
  rows.push(`<div class="row">${cell('masked', masked, 'masked')}</div>`);
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    html, body { margin: 0; background: #fff; }
    .row { display: flex; gap: 8px; padding: 8px; }
    .s { width: ${SWATCH}px; height: ${SWATCH}px; flex: none; }
  </style></head><body>${rows.join('\n')}</body></html>`;
}

// ---------------------------------------------------------------------------
async function main() {
  const src = readFileSync(LAB_JS, 'utf8');
  const stops = readPalettes(src);
  const masked = readMaskedFill(src);
  const names = Object.keys(stops);
  const painted = Object.fromEntries(names.map((name) =>
    [name, Array.from({ length: STEPS + 1 }, (_, i) => rgbAt(stops[name], i / STEPS))]));
  console.log('TAP version 13');
  console.log(`# palettes from ${path.relative(root, LAB_JS)}: ${names.map((k) => `${k} (${stops[k].length} stops)`).join(', ')}; masked ${hex(masked)}`);
  for (const name of names) console.log(`# ${name}: ${painted[name].map(hex).join(' ')}`);

  const worst = SHARMA.map(([p, q, want]) => Math.abs(deltaE00(p, q) - want)).reduce((a, b) => Math.max(a, b));
  ok(worst < 5e-5, `CIEDE2000 gives Sharma et al.'s ΔE00 for ${SHARMA.length} test pairs (to 4 decimals)`, `largest error ${worst}`);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const seen = {}; // condition → palette → [[r, g, b] of each swatch], and .masked
  try {
    const context = await browser.newContext({ viewport: { width: 800, height: 400 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.route('**/*', (route) => route.abort()); // no network
    await page.setContent(swatchPage(painted, masked));
    const centres = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.s')].map((el) => {
      const r = el.getBoundingClientRect();
      return [el.id, [Math.floor(r.left + r.width / 2), Math.floor(r.top + r.height / 2)]];
    })));
    const cdp = await context.newCDPSession(page);
    for (const type of CONDITIONS) {
      await cdp.send('Emulation.setEmulatedVisionDeficiency', { type });
      const img = decodePng(await page.screenshot({ type: 'png' }));
      const at = (id) => pixel(img, ...centres[id]);
      seen[type] = Object.fromEntries(names.map((name) => [name, painted[name].map((_, i) => at(`${name}-${i}`))]));
      seen[type].masked = at('masked');
    }
  } finally {
    await browser.close();
  }

  // the pipeline
  const off = [];
  for (const name of names) {
    painted[name].forEach((rgb, i) => {
      if (hex(rgb) !== hex(seen.none[name][i])) off.push(`${name} t=${tAt(i)}: painted ${hex(rgb)}, read ${hex(seen.none[name][i])}`);
    });
  }
  if (hex(masked) !== hex(seen.none.masked)) off.push(`masked: painted ${hex(masked)}, read ${hex(seen.none.masked)}`);
  ok(off.length === 0, 'without emulation the screenshot returns every painted colour exactly', ...off);
  for (const type of CONDITIONS.slice(1)) {
    const changed = names.reduce((k, name) => k + seen[type][name].filter((rgb, i) => hex(rgb) !== hex(seen.none[name][i])).length, 0);
    const total = names.length * (STEPS + 1);
    ok(changed >= total / 2, `${type} emulation changes the rendered colours (${changed} of ${total} swatches)`);
  }

  // the measures
  const results = [];
  for (const name of names) {
    for (const type of CONDITIONS) {
      const m = measure(name, seen[type][name], seen[type].masked);
      results.push({ name, type, m });
      console.log(`# ${name} / ${type}: min consecutive ΔE00 ${m.minStep.toFixed(2)} (t=${tAt(m.minStepAt)}→${tAt(m.minStepAt + 1)}), ` +
        `ΔE00 t=0↔1 ${m.ends.toFixed(2)}, L* monotonic ${monoText(m.monotonic)}, ` +
        `min ΔE00 to masked grey ${m.minGrey.toFixed(2)} (t=${tAt(m.minGreyAt)}); ` +
        `L* ${m.L.map((v) => v.toFixed(1)).join(' ')}`);
    }
  }

  // the checks. Under achromatopsia no hue is left by definition: a
  // sequential palette must still read by lightness (monotonic L*, steps
  // of at least a just-noticeable ΔE00 of 2.3), and a diverging one shows
  // the magnitude (L* monotonic from each end to the centre) but not the
  // sign, which the page prints (cell numbers, readouts, tables). Masked
  // cells are hatched, so they never rely on their grey.
  for (const { name, type, m } of results) {
    const grey = type === 'achromatopsia';
    if (DIVERGING.has(name)) {
      if (grey) {
        ok(m.monotonic.low && m.monotonic.high, `${name} / ${type}: the magnitude reads by lightness (L* monotonic from each end to the centre); the sign does not, and is printed`,
          `L* ${m.L.map((v) => v.toFixed(2)).join(' ')}`);
      } else {
        ok(m.ends >= MIN_ENDS_DE, `${name} / ${type}: the two ends are distinguishable (ΔE00 ${m.ends.toFixed(2)} ≥ ${MIN_ENDS_DE})`,
          `t=0 reads ${hex(seen[type][name][0])}, t=1 reads ${hex(seen[type][name][STEPS])}`);
      }
    } else {
      const least = grey ? MIN_STEP_GREY_DE : MIN_STEP_DE;
      ok(m.minStep >= least,
        `${name} / ${type}: consecutive swatches differ by ΔE00 ≥ ${least} (smallest ${m.minStep.toFixed(2)}, t=${tAt(m.minStepAt)}→${tAt(m.minStepAt + 1)})`);
      ok(m.monotonic.all, `${name} / ${type}: L* is monotonic along t`, `L* ${m.L.map((v) => v.toFixed(2)).join(' ')}`);
    }
  }

  // the table
  console.log('#');
  console.log('# | palette | condition | min ΔE00, consecutive (at t) | ΔE00, t=0 ↔ t=1 | L* monotonic | min ΔE00 to masked grey (at t) |');
  console.log('# |---|---|---:|---:|---|---:|');
  for (const { name, type, m } of results) {
    console.log(`# | ${name} | ${type} | ${m.minStep.toFixed(2)} (${tAt(m.minStepAt)}→${tAt(m.minStepAt + 1)}) | ${m.ends.toFixed(2)} | ` +
      `${monoText(m.monotonic)} | ${m.minGrey.toFixed(2)} (${tAt(m.minGreyAt)}) |`);
  }
}

const watchdog = setTimeout(() => {
  ok(false, `finished within ${DEADLINE_MS / 1000} s`);
  console.log(`1..${tally().n}`);
  process.exit(1);
}, DEADLINE_MS);

main().catch((e) => {
  ok(false, 'the measurement ran to the end', e.stack || e.message);
}).finally(() => {
  clearTimeout(watchdog);
  console.log(`1..${tally().n}`);
  console.log(`# cvd: ${tally().n - tally().failures} passed, ${tally().failures} failed`);
  process.exitCode = tally().failures ? 1 : 0;
});
