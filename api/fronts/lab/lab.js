/*
 * lab.js — the attnd lab: edit a JSON request for any POST route, send it,
 * and see the answer, the attention weights as heatmaps (keys on x, queries
 * on y, one panel per batch example and head, a colour bar), and problems
 * next to the field their RFC 6901 pointer names; plus Nadaraya–Watson
 * regression on the textbook's dataset (d2l 11.2): the data, the true
 * curve, average pooling, the Gaussian kernel at w = 1 and with w fitted,
 * the weights over the test grid, and the fit's loss per epoch.
 * The routes, and what the page offers each (the controls, heads as
 * rows), come from that attnd's OpenAPI document (GET /openapi.json) at
 * load, from the fields each route takes; no route is listed here but in
 * the examples' own.
 * Plain browser JavaScript, no libraries; every request goes to the attnd
 * that served the page, with "Authorization: Bearer" when a token is set.
 */
(function () {
  'use strict';

  var SVGNS = 'http://www.w3.org/2000/svg';

  function $(id) { return document.getElementById(id); }

  /* Element builders: el('div', {class: 'x'}, child, 'text', ...). */
  function build(make, tag, attrs, kids) {
    var e = make(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, String(attrs[k]));
      });
    }
    kids.forEach(function add(k) {
      if (k === undefined || k === null || k === false) return;
      if (Array.isArray(k)) { k.forEach(add); return; }
      e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
    });
    return e;
  }
  function el(tag, attrs) {
    return build(function (t) { return document.createElement(t); }, tag, attrs,
      Array.prototype.slice.call(arguments, 2));
  }
  function svg(tag, attrs) {
    return build(function (t) { return document.createElementNS(SVGNS, t); }, tag, attrs,
      Array.prototype.slice.call(arguments, 2));
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function r2(x) { return Math.round(x * 100) / 100; }

  /* ------------------------------------------------------------------ */
  /* Numbers and tensors                                                 */
  /* ------------------------------------------------------------------ */

  /* Numbers print as the server prints them (ECMAScript's toString). */
  function num(x) { return x === null ? 'null' : String(x); }

  /* {"shape", "data"} (the flat form) → nested arrays; others unchanged. */
  function nested(t) {
    if (!t || Array.isArray(t) || !Array.isArray(t.shape) || !Array.isArray(t.data)) return t;
    var shape = t.shape, data = t.data, pos = 0;
    if (shape.length === 0) return data[0];
    function take(axis) {
      var out = [];
      for (var i = 0; i < shape[axis]; i++) out.push(axis === shape.length - 1 ? data[pos++] : take(axis + 1));
      return out;
    }
    return take(0);
  }
  function shapeOf(a) {
    var s = [];
    while (Array.isArray(a)) { s.push(a.length); a = a[0]; }
    return s;
  }
  function isTensor(v) {
    return Array.isArray(v) || (v && typeof v === 'object' && Array.isArray(v.shape) && Array.isArray(v.data));
  }
  /* One-line JSON of a parsed value, ", " between items. */
  function oneLine(v) {
    if (Array.isArray(v)) return '[' + v.map(oneLine).join(', ') + ']';
    if (v && typeof v === 'object') {
      return '{' + Object.keys(v).map(function (k) { return JSON.stringify(k) + ': ' + oneLine(v[k]); }).join(', ') + '}';
    }
    return JSON.stringify(v);
  }
  /* One-line JSON cut after `limit` characters (stops walking a large
   * tensor once the limit is passed). */
  function compact(v, limit) {
    var out = '', stop = false;
    function put(t) { out += t; if (out.length > limit) stop = true; }
    function walk(x) {
      if (stop) return;
      if (Array.isArray(x)) {
        put('[');
        for (var i = 0; i < x.length && !stop; i++) { if (i) put(', '); walk(x[i]); }
        put(']');
      } else if (x && typeof x === 'object') {
        put('{');
        Object.keys(x).forEach(function (k, i) { if (stop) return; put((i ? ', ' : '') + JSON.stringify(k) + ': '); walk(x[k]); });
        put('}');
      } else put(JSON.stringify(x));
    }
    walk(v);
    return out.length > limit ? out.slice(0, limit) + ' …' : out;
  }
  /* Pretty JSON of a parsed value, for the editor and the response. */
  function pretty(v) { return prettyText(JSON.stringify(v)); }

  /* ------------------------------------------------------------------ */
  /* Colours: the palettes of api/fronts/palette.c, the same anchors:    */
  /* reds (matplotlib's "Reds", d2l's show_heatmaps; the default),       */
  /* viridis (matplotlib's, colour-blind safe) and rdbu (ColorBrewer's   */
  /* diverging RdBu, centred at 0, for signed values such as scores).    */
  /* ------------------------------------------------------------------ */
  var PALETTES = {
    reds: [[0xff, 0xf5, 0xf0], [0xfe, 0xe0, 0xd2], [0xfc, 0xbb, 0xa1],
      [0xfc, 0x92, 0x72], [0xfb, 0x6a, 0x4a], [0xef, 0x3b, 0x2c],
      [0xcb, 0x18, 0x1d], [0xa5, 0x0f, 0x15], [0x67, 0x00, 0x0d]],
    viridis: [[0x44, 0x01, 0x54], [0x47, 0x0d, 0x60], [0x48, 0x18, 0x6a], [0x48, 0x23, 0x74],
      [0x47, 0x2d, 0x7b], [0x45, 0x37, 0x81], [0x42, 0x40, 0x86], [0x3e, 0x49, 0x89],
      [0x3b, 0x52, 0x8b], [0x37, 0x5b, 0x8d], [0x33, 0x63, 0x8d], [0x2f, 0x6b, 0x8e],
      [0x2c, 0x72, 0x8e], [0x29, 0x7a, 0x8e], [0x26, 0x82, 0x8e], [0x23, 0x89, 0x8e],
      [0x21, 0x91, 0x8c], [0x1f, 0x97, 0x8b], [0x1f, 0x9f, 0x88], [0x21, 0xa6, 0x85],
      [0x27, 0xad, 0x81], [0x31, 0xb5, 0x7b], [0x3d, 0xbc, 0x74], [0x4c, 0xc2, 0x6c],
      [0x5c, 0xc8, 0x63], [0x6e, 0xce, 0x58], [0x81, 0xd3, 0x4d], [0x95, 0xd8, 0x40],
      [0xaa, 0xdc, 0x32], [0xc0, 0xdf, 0x25], [0xd5, 0xe2, 0x1a], [0xea, 0xe5, 0x1a],
      [0xfd, 0xe7, 0x25]],
    rdbu: [[0x05, 0x30, 0x61], [0x21, 0x66, 0xac], [0x43, 0x93, 0xc3], [0x92, 0xc5, 0xde],
      [0xd1, 0xe5, 0xf0], [0xf7, 0xf7, 0xf7], [0xfd, 0xdb, 0xc7], [0xf4, 0xa5, 0x82],
      [0xd6, 0x60, 0x4d], [0xb2, 0x18, 0x2b], [0x67, 0x00, 0x1f]]
  };
  var MASKED_FILL = '#bdbdbd'; /* a masked score (null, −∞) */
  var palette = 'reds'; /* the weights' palette, from the header's picker */
  var stretchColours = false; /* stretch the weights' scale to their largest */
  var exactDigits = false; /* readouts: every digit, not 4 significant */

  function rgbAt(name, t) {
    var a = PALETTES[name] || PALETTES.reds, last = a.length - 1;
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    var pos = t * last, i = Math.min(last - 1, Math.floor(pos)), f = pos - i, out = [0, 0, 0];
    for (var c = 0; c < 3; c++) out[c] = Math.floor(a[i][c] + f * (a[i + 1][c] - a[i][c]) + 0.5);
    return out;
  }
  function hex(rgb) {
    return '#' + rgb.map(function (v) { return (v < 16 ? '0' : '') + v.toString(16); }).join('');
  }
  function colour(t, name) { return hex(rgbAt(name || 'reds', t)); }
  /* 256 colours of a palette as bytes, for canvases. */
  var luts = {};
  function lut(name) {
    if (luts[name]) return luts[name];
    var out = new Uint8ClampedArray(256 * 3);
    for (var i = 0; i < 256; i++) {
      var c = rgbAt(name, i / 255);
      out[3 * i] = c[0]; out[3 * i + 1] = c[1]; out[3 * i + 2] = c[2];
    }
    return (luts[name] = out);
  }
  /* Round tick step (1, 2, 2.5 or 5 × 10^k) for 3 to 6 ticks over [0, max]. */
  function tickStep(max) {
    var mult = [1, 2, 2.5, 5], p = Math.pow(10, Math.floor(Math.log10(max / 5)));
    for (;; p *= 10) {
      for (var i = 0; i < 4; i++) if (max / (mult[i] * p) < 5.5) return mult[i] * p;
    }
  }
  function niceTicks(lo, hi, count) {
    var span = hi - lo, raw = span / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * p; }).filter(function (s) { return s >= raw; })[0];
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
    return out;
  }
  function label(v) { return String(Number(v.toPrecision(6))); }

  /* ------------------------------------------------------------------ */
  /* Heatmaps                                                            */
  /* ------------------------------------------------------------------ */

  /* Panels from a weights tensor: (Nq, Nk); (B, Nq, Nk), or (H, Nq, Nk)
   * for unbatched multi-head weights; (B, H, Nq, Nk). */
  function panelsOf(weights, heads) {
    var w = nested(weights), shape = shapeOf(w), panels = [];
    if (shape.length === 2) return [{ label: '', m: w, b: 0, h: 0 }];
    if (shape.length === 3) {
      return w.map(function (m, i) { return { label: (heads ? 'head ' : 'example ') + i, m: m, b: heads ? 0 : i, h: heads ? i : 0 }; });
    }
    if (shape.length === 4) {
      w.forEach(function (ex, b) {
        ex.forEach(function (m, hd) { panels.push({ label: 'example ' + b + ', head ' + hd, m: m, b: b, h: hd }); });
      });
      return panels;
    }
    return null;
  }

  /* The keys a request hides from each query (docs/attention.md): causal,
   * valid_lens (per example, or per example and query), a boolean
   * attn_mask (true = hidden; (Nq, Nk), (B, Nq, Nk) or per head
   * (B·H, Nq, Nk)) and key_padding_mask. Returns null when it hides none,
   * else hiddenIn(b, h) → hidden(q, k), so that a masked weight (exactly
   * 0) is drawn as masked, not as a small one. */
  function hiddenOf(body, H) {
    if (!body || typeof body !== 'object') return null;
    var causal = body.causal === true, lens = nested(body.valid_lens);
    var am = nested(body.attn_mask), kpm = nested(body.key_padding_mask);
    if (!causal && lens == null && !Array.isArray(am) && !Array.isArray(kpm)) return null;
    var amRank = Array.isArray(am) ? shapeOf(am).length : 0;
    return function (b, h) {
      var m = amRank === 2 ? am : amRank === 3 ? am[H > 1 && am.length % H === 0 && am.length > 1 ? b * H + h : b] || am[0] : null;
      var l = typeof lens === 'number' ? lens : Array.isArray(lens) ? lens[b] : null;
      var pad = Array.isArray(kpm) ? (Array.isArray(kpm[0]) ? kpm[b] : kpm) : null;
      return function (q, k) {
        if (causal && k > q) return true;
        var lq = Array.isArray(l) ? l[q] : l;
        if (typeof lq === 'number' && k >= lq) return true;
        if (m && m[q] && (m[q][k] === true || m[q][k] === null)) return true;
        return !!(pad && pad[k] === true);
      };
    };
  }

  /* Block-average an (Nq, Nk) matrix down to at most side × side (null
   * entries, masked scores, count as missing). */
  function downsample(m, side) {
    var Nq = m.length, Nk = m[0].length, R = Math.min(Nq, side), C = Math.min(Nk, side);
    if (R === Nq && C === Nk) return { m: m, sampled: false };
    var out = [];
    for (var r = 0; r < R; r++) {
      var q0 = Math.floor(r * Nq / R), q1 = Math.floor((r + 1) * Nq / R), row = [];
      for (var c = 0; c < C; c++) {
        var k0 = Math.floor(c * Nk / C), k1 = Math.floor((c + 1) * Nk / C), sum = 0, n = 0;
        for (var q = q0; q < q1; q++) for (var k = k0; k < k1; k++) if (m[q][k] !== null) { sum += m[q][k]; n++; }
        row.push(n ? sum / n : null);
      }
      out.push(row);
    }
    return { m: out, sampled: true };
  }

  var SVG_MAX_CELLS = 4096;   /* per panel: one <rect> each; more → a canvas */
  var SVG_MAX_TOTAL = 16384;  /* <rect>s in all panels together; more → canvases */
  var DRAW_MAX_CELLS = 1 << 20; /* the most a figure draws (attnd's pictures too) */
  var CANVAS_MAX_SIDE = 1024; /* cells per canvas axis; longer → block means */

  /* Tick indices over n entries: every `step`-th, step from 1, 2, 5, 10, …
   * so that at most `most` ticks show. */
  function tickIndexStep(n, most) {
    most = most || 10;
    var steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    for (var i = 0; i < steps.length; i++) if (Math.ceil(n / steps[i]) <= most) return steps[i];
    return Math.ceil(n / most);
  }
  function shortLabel(s) { s = String(s); return s.length > 10 ? s.slice(0, 9) + '…' : s; }

  /* A heatmap of panels [{label, m: (Nq, Nk), hidden(q, k)}] with one
   * colour scale. opts: title, xLabel, yLabel, perRow, grid (the longer
   * grid side, 400 user units by default; in presenter mode the screen's),
   * width (the pixels the figure may take: below 560 the colour bar goes
   * under the panels), palette (a PALETTES name; default the page's),
   * signed (values may be negative: the diverging palette, centred at 0),
   * labels {queries, keys} (token labels for the ticks), valueName (the
   * colour bar's title), onHover(text, cell), onClick({panel, q, k, v}).
   *
   * Weights are drawn on the fixed scale 0 … 1 (a flat row is pale, not
   * dark), unless the page's "stretch" box is ticked; a map of more than
   * SVG_MAX_CELLS cells whose 99th percentile is below 0.5 clips its scale
   * there, and says so, so that the structure of a 512-token causal map
   * shows. A panel's hidden(q, k) cells (masked: causal, valid_lens,
   * attn_mask), and null values (−∞ scores), are hatched grey in every
   * view. Panels of up to SVG_MAX_CELLS cells draw one <rect class="cell">
   * each; larger ones one canvas image per panel (image-rendering:
   * pixelated), hovered and clicked by position. The figure is focusable:
   * the arrow keys move a cursor over the cells (its description goes to
   * onHover) and Enter clicks it. It carries alt text and, for screen
   * readers, a table of the values of each panel up to SVG_MAX_CELLS
   * cells. Returns a <div class="heatmap-figure"> holding the <svg>; its
   * data-render-ms says how long the drawing took. */
  function heatmap(panels, opts) {
    opts = opts || {};
    var t0 = performance.now();
    var Nq = panels[0].m.length, Nk = panels[0].m[0].length, total = panels.length * Nq * Nk;
    if (total > DRAW_MAX_CELLS) {
      return el('div', { class: 'heatmap-figure too-large', role: 'note' },
        (opts.title || 'Attention weights') + ': ' + panels.length + ' panels of ' + Nq + ' × ' + Nk + ' = ' + total +
        ' cells, more than the ' + DRAW_MAX_CELLS + ' a picture draws. The numbers are in the answer.');
    }
    var pal = opts.signed ? 'rdbu' : (opts.palette || palette);
    var centred = opts.signed || pal === 'rdbu';
    var canvasMode = Nq * Nk > SVG_MAX_CELLS || total > SVG_MAX_TOTAL;
    var lo = 0, hi = 0, values = [];
    panels.forEach(function (p) {
      p.m.forEach(function (row) {
        row.forEach(function (v) {
          if (v === null) return;
          if (v > hi) hi = v;
          if (v < lo) lo = v;
          if (canvasMode) values.push(v);
        });
      });
    });
    var scaleNote = '';
    if (opts.signed) {
      hi = Math.max(hi, -lo); lo = -hi;
      if (!(hi > 0)) { hi = 1; lo = -1; }
    } else if (stretchColours) {
      if (centred) { hi = Math.max(hi, -lo); lo = -hi; } else lo = 0;
      if (!(hi > lo)) { hi = 1; lo = centred ? -1 : 0; }
      scaleNote = 'stretched to the largest, ' + label(hi);
    } else {
      lo = centred ? -1 : 0; hi = 1;
      if (canvasMode && values.length) {
        /* the 99th percentile of an even sample of at most 2^14 values */
        var every = Math.max(1, Math.floor(values.length / 16384)), sample = [];
        for (var si = 0; si < values.length; si += every) sample.push(values[si]);
        sample.sort(function (a, b) { return a - b; });
        var p99 = sample[Math.floor(0.99 * (sample.length - 1))];
        if (p99 > 0 && p99 < 0.5) { hi = p99; if (centred) lo = -hi; scaleNote = 'clipped at ' + label(hi) + ', the 99th percentile'; }
      }
    }
    var pos = function (v) { return (v - lo) / (hi - lo); };
    var side = canvasMode ? CANVAS_MAX_SIDE : Infinity;
    var R = Math.min(Nq, side), C = Math.min(Nk, side);
    var presenter = document.body.classList.contains('presenter');
    var avail = opts.width || 0, narrow = avail > 0 && avail < 560;
    var labels = opts.labels || {};
    var qLabels = Array.isArray(labels.queries) && labels.queries.length === Nq ? labels.queries : null;
    var kLabels = Array.isArray(labels.keys) && labels.keys.length === Nk ? labels.keys : null;
    var longest = function (a) { return a ? Math.max.apply(null, a.map(function (s) { return shortLabel(s).length; })) : 0; };
    var tickFont = presenter ? 20 : 14, titleFont = presenter ? 22 : 17;
    var left = Math.max(narrow ? 52 : 74, 40 + tickFont * 0.6 * longest(qLabels)), top = 30;
    var bottom = Math.max(58, 44 + tickFont * 0.6 * longest(kLabels));
    var perRow = opts.perRow || Math.min(panels.length, narrow ? 1 : 4);
    var gridSide = opts.grid || 400;
    if (presenter && avail) {
      gridSide = Math.max(gridSide, Math.min((avail - 160) / perRow - left - 24, window.innerHeight - 260));
    }
    if (narrow) gridSide = Math.max(120, Math.min(gridSide, (avail - left - 12) / perRow));
    var cell = Math.min(presenter ? 120 : 40, gridSide / Math.max(R, C));
    var gw = cell * C, gh = cell * R;
    var pw = left + Math.max(gw, 120) + (narrow ? 8 : 24), ph = top + Math.max(gh, 84) + bottom;
    var rows = Math.ceil(panels.length / perRow);
    var barH = Math.max(gh, 160), barSpace = narrow ? 0 : 120 + (scaleNote ? 24 : 0);
    var width = perRow * pw + barSpace;
    var height = narrow ? rows * ph + 96 : Math.max(rows * ph, top + barH + bottom) + 8;
    var anyHidden = false;
    var title = (opts.title || 'Attention weights') + ': ' + panels.length + ' panel' + (panels.length === 1 ? '' : 's') + ' of ' + Nq + ' × ' + Nk;
    var root = svg('svg', {
      viewBox: '0 0 ' + r2(width) + ' ' + r2(height), width: r2(width), height: r2(height), role: 'img',
      class: 'weights-heatmap', 'data-mode': canvasMode ? 'canvas' : 'svg', 'data-palette': pal,
      'data-scale': label(lo) + ' ' + label(hi), tabindex: 0
    });
    var id = ++heatmap.count;
    root.appendChild(svg('title', null, title));
    var defs = svg('defs'), grad = svg('linearGradient', narrow ? { id: 'lab-scale-' + id, x1: 0, y1: 0, x2: 1, y2: 0 } : { id: 'lab-scale-' + id, x1: 0, y1: 1, x2: 0, y2: 0 });
    var stops = pal === 'reds' ? 8 : 16;
    for (var i = 0; i <= stops; i++) grad.appendChild(svg('stop', { offset: r2(i / stops), 'stop-color': colour(i / stops, pal) }));
    defs.appendChild(grad);
    defs.appendChild(maskedPattern('lab-masked-' + id, Math.max(6, Math.min(12, cell / 3))));
    root.appendChild(defs);
    var shown = []; /* per panel: the matrix drawn (block means when sampled) */
    var rects = [], texts = []; /* per panel, row-major: what refresh() updates */

    panels.forEach(function (p, pi) {
      var d = downsample(p.m, side), m = d.m, hidden = d.sampled ? null : p.hidden;
      shown.push(d);
      var g = svg('g', { class: 'panel', 'data-panel': pi, transform: 'translate(' + r2((pi % perRow) * pw) + ',' + r2(Math.floor(pi / perRow) * ph) + ')' });
      g.appendChild(svg('title', null, (p.label || 'weights') + ': ' + Nq + ' × ' + Nk +
        (d.sampled ? ', block-averaged to ' + m.length + ' × ' + m[0].length + ' cells' : '')));
      if (p.label || d.sampled) {
        g.appendChild(svg('text', { class: 'panel-label', x: left, y: 20, 'font-size': titleFont, 'font-weight': 'bold' },
          (p.label || '') + (d.sampled ? (p.label ? ' ' : '') + '(block-averaged)' : '')));
      }
      var isHidden = function (r, c) { return m[r][c] === null || (hidden ? hidden(r, c) : false); };
      if (canvasMode) {
        var cv = document.createElement('canvas');
        cv.width = m[0].length;
        cv.height = m.length;
        var ctx = cv.getContext('2d'), img = ctx.createImageData(cv.width, cv.height), px = img.data, tab = lut(pal);
        var at = 0;
        for (var r = 0; r < m.length; r++) {
          var row = m[r];
          for (var c = 0; c < row.length; c++, at += 4) {
            var v = row[c];
            if (isHidden(r, c)) {
              anyHidden = true;
              px[at] = px[at + 1] = px[at + 2] = (r + c) % 4 === 0 ? 0x6e : 0xbd;
            } else {
              var t = pos(v), k = t <= 0 ? 0 : t >= 1 ? 255 : Math.round(t * 255);
              px[at] = tab[3 * k]; px[at + 1] = tab[3 * k + 1]; px[at + 2] = tab[3 * k + 2];
            }
            px[at + 3] = 255;
          }
        }
        ctx.putImageData(img, 0, 0);
        g.appendChild(svg('image', {
          class: 'cells-image', x: left, y: top, width: r2(gw), height: r2(gh), preserveAspectRatio: 'none',
          style: 'image-rendering: pixelated', href: cv.toDataURL('image/png'), 'data-panel': pi
        }));
      } else {
        var cells = svg('g', { class: 'cells', 'shape-rendering': 'crispEdges', transform: 'translate(' + left + ',' + top + ')' });
        var mine = (rects[pi] = []);
        m.forEach(function (row, r) {
          row.forEach(function (v, c) {
            var off = isHidden(r, c);
            if (off) anyHidden = true;
            mine.push(svg('rect', {
              class: 'cell' + (off ? ' masked' : ''), x: r2(c * cell), y: r2(r * cell), width: r2(cell), height: r2(cell),
              fill: off ? 'url(#lab-masked-' + id + ')' : colour(pos(v), pal), 'data-panel': pi, 'data-q': r, 'data-k': c, 'data-v': v === null ? 'null' : v
            }));
            cells.appendChild(mine[mine.length - 1]);
          });
        });
        g.appendChild(cells);
        var cellFont = presenter ? Math.max(18, Math.min(28, cell * 0.34)) : 13;
        if (cell >= cellFont * 2.8 && Nq * Nk <= 256) {
          var vals = svg('g', { class: 'values', 'font-size': r2(cellFont), 'text-anchor': 'middle', 'pointer-events': 'none' });
          var myTexts = (texts[pi] = []);
          m.forEach(function (row, r) {
            row.forEach(function (v, c) {
              var off = isHidden(r, c);
              myTexts.push(vals.appendChild(svg('text', { x: r2(left + (c + 0.5) * cell), y: r2(top + (r + 0.5) * cell + cellFont * 0.35), fill: off ? '#000000' : inkOn(rgbAt(pal, pos(v))) },
                cellText(v, off))));
            });
          });
          g.appendChild(vals);
        }
      }
      g.appendChild(svg('rect', { x: left, y: top, width: r2(gw), height: r2(gh), fill: 'none', stroke: '#000', 'stroke-width': 1, 'pointer-events': 'none' }));
      var ticks = svg('g', { class: 'ticks', 'font-size': tickFont });
      var step = tickIndexStep(Nk, kLabels ? Math.max(10, Math.floor(gw / (tickFont + 1))) : 10);
      for (var k = 0; k < Nk; k += step) {
        var x = left + (k + 0.5) * gw / Nk;
        ticks.appendChild(svg('line', { x1: r2(x), y1: top + gh, x2: r2(x), y2: top + gh + 5, stroke: '#000' }));
        if (kLabels) {
          ticks.appendChild(svg('text', { class: 'tick-label', x: 0, y: 0, 'text-anchor': 'end', transform: 'translate(' + r2(x + 5) + ',' + r2(top + gh + 9) + ') rotate(-90)' },
            svg('title', null, String(kLabels[k])), shortLabel(kLabels[k])));
        } else {
          ticks.appendChild(svg('text', { x: r2(x), y: r2(top + gh + 20), 'text-anchor': 'middle' }, k));
        }
      }
      step = tickIndexStep(Nq, qLabels ? Math.max(10, Math.floor(gh / (tickFont + 1))) : 10);
      for (var q = 0; q < Nq; q += step) {
        var y = top + (q + 0.5) * gh / Nq;
        ticks.appendChild(svg('line', { x1: left - 5, y1: r2(y), x2: left, y2: r2(y), stroke: '#000' }));
        ticks.appendChild(svg('text', { class: qLabels ? 'tick-label' : null, x: left - 8, y: r2(y + 5), 'text-anchor': 'end' },
          qLabels ? [svg('title', null, String(qLabels[q])), shortLabel(qLabels[q])] : q));
      }
      g.appendChild(ticks);
      g.appendChild(svg('text', { class: 'axis-title', x: r2(left + Math.max(gw, 120) / 2), y: r2(top + gh + bottom - 14), 'font-size': titleFont, 'text-anchor': 'middle' }, opts.xLabel || 'Keys'));
      g.appendChild(svg('text', { class: 'axis-title', x: 0, y: 0, 'font-size': titleFont, 'text-anchor': 'middle', transform: 'translate(20,' + r2(top + Math.max(gh, 84) / 2) + ') rotate(-90)' }, opts.yLabel || 'Queries'));
      root.appendChild(g);
    });

    /* the colour bar: right of the panels, or under them when narrow */
    var bar = svg('g', { class: 'colorbar', 'font-size': tickFont });
    var barTitle = (opts.valueName || 'weight') + (scaleNote ? ' (' + scaleNote + ')' : '');
    var ticksV = lo === 0 ? (function () { var s = tickStep(hi), out = []; for (var t = 0; t * s <= hi * (1 + 1e-9); t++) out.push(t * s); return out; })() : niceTicks(lo, hi, 5);
    if (narrow) {
      var bx0 = left, by0 = rows * ph + 4, bw = Math.max(gw, 200);
      bar.appendChild(svg('rect', { x: bx0, y: by0, width: r2(bw), height: 16, fill: 'url(#' + grad.getAttribute('id') + ')', stroke: '#000' }));
      ticksV.forEach(function (tv) {
        var tx = bx0 + bw * pos(tv);
        bar.appendChild(svg('line', { x1: r2(tx), y1: by0 + 16, x2: r2(tx), y2: by0 + 21, stroke: '#000' }));
        bar.appendChild(svg('text', { x: r2(tx), y: by0 + 36, 'text-anchor': 'middle' }, label(tv)));
      });
      bar.appendChild(svg('text', { x: bx0, y: by0 + 58 }, barTitle));
      if (anyHidden) {
        bar.appendChild(svg('rect', { x: bx0, y: by0 + 66, width: 18, height: 18, fill: 'url(#lab-masked-' + id + ')', stroke: '#000' }));
        bar.appendChild(svg('text', { x: bx0 + 26, y: by0 + 81 }, 'masked: weight 0'));
      }
    } else {
      var bx = perRow * pw + 6, by = top;
      bar.appendChild(svg('rect', { x: bx, y: by, width: 22, height: r2(barH), fill: 'url(#' + grad.getAttribute('id') + ')', stroke: '#000' }));
      ticksV.forEach(function (tv) {
        var ty = by + barH - barH * pos(tv);
        bar.appendChild(svg('line', { x1: bx + 22, y1: r2(ty), x2: bx + 27, y2: r2(ty), stroke: '#000' }));
        bar.appendChild(svg('text', { x: bx + 30, y: r2(ty + 5) }, label(tv)));
      });
      bar.appendChild(svg('text', { x: 0, y: 0, 'font-size': titleFont, 'text-anchor': 'middle', transform: 'translate(' + (bx + 100) + ',' + r2(by + barH / 2) + ') rotate(-90)' },
        opts.valueName || 'weight'));
      if (scaleNote) {
        bar.appendChild(svg('text', { x: 0, y: 0, 'text-anchor': 'middle', transform: 'translate(' + (bx + 124) + ',' + r2(by + barH / 2) + ') rotate(-90)' }, '(' + scaleNote + ')'));
      }
      if (anyHidden) {
        bar.appendChild(svg('rect', { x: bx, y: r2(by + barH + 12), width: 22, height: 22, fill: 'url(#lab-masked-' + id + ')', stroke: '#000' }));
        bar.appendChild(svg('text', { x: bx + 30, y: r2(by + barH + 28) }, 'masked'));
      }
    }
    root.appendChild(bar);
    var cursor = svg('rect', { class: 'cursor', fill: 'none', stroke: '#0b4fa8', 'stroke-width': 3, 'pointer-events': 'none', visibility: 'hidden' });
    root.appendChild(cursor);
    var alt = title + '. ' + legendText(pal, centred, opts.valueName) + (scaleNote ? ' Colour scale ' + scaleNote + '.' : '') +
      (anyHidden ? ' Hatched grey cells are masked (weight 0).' : '') + ' Arrow keys move over the cells.';
    root.setAttribute('aria-label', alt);

    /* the cell under the pointer: a <rect>'s attributes, or a canvas
     * image's position */
    function cellOf(pi, qi, ki) {
      var s = shown[pi];
      if (!s.sampled) return { panel: pi, q: qi, k: ki, v: panels[pi].m[qi][ki], masked: panels[pi].hidden ? panels[pi].hidden(qi, ki) : panels[pi].m[qi][ki] === null };
      var rr = Math.floor(qi * s.m.length / Nq), cc = Math.floor(ki * s.m[0].length / Nk);
      return { panel: pi, q: qi, k: ki, v: s.m[rr][cc], sampled: true };
    }
    function cellAt(ev) {
      var c = ev.target;
      if (!c.classList) return null;
      if (c.classList.contains('cell')) return cellOf(+c.getAttribute('data-panel'), +c.getAttribute('data-q'), +c.getAttribute('data-k'));
      if (c.classList.contains('cells-image')) {
        var b = c.getBoundingClientRect(), pj = +c.getAttribute('data-panel');
        var qq = Math.min(Nq - 1, Math.max(0, Math.floor((ev.clientY - b.top) / b.height * Nq)));
        var kk = Math.min(Nk - 1, Math.max(0, Math.floor((ev.clientX - b.left) / b.width * Nk)));
        return cellOf(pj, qq, kk);
      }
      return null;
    }
    function describeCell(h) {
      var p = panels[h.panel];
      return (p.label ? p.label + ' · ' : '') + 'query ' + h.q + (qLabels ? ' “' + qLabels[h.q] + '”' : '') +
        ' · key ' + h.k + (kLabels ? ' “' + kLabels[h.k] + '”' : '') + ' : ' + (h.sampled ? 'block mean ' : '') + shownNumber(h.v) +
        (h.masked ? ' (masked)' : '');
    }
    if (opts.onHover) {
      root.addEventListener(canvasMode ? 'mousemove' : 'mouseover', function (ev) {
        var h = cellAt(ev);
        if (h) opts.onHover(describeCell(h), h);
      });
    }
    if (opts.onClick) {
      root.addEventListener('click', function (ev) {
        var h = cellAt(ev);
        if (h) opts.onClick(h);
      });
    }
    /* the keyboard's cursor: arrows move it, Enter clicks its cell */
    var at = opts.cursor && opts.cursor.panel < panels.length && opts.cursor.q < Nq && opts.cursor.k < Nk
      ? { panel: opts.cursor.panel, q: opts.cursor.q, k: opts.cursor.k } : { panel: 0, q: 0, k: 0 };
    function moveCursor() {
      var px0 = (at.panel % perRow) * pw + left, py0 = Math.floor(at.panel / perRow) * ph + top;
      cursor.setAttribute('x', r2(px0 + at.k * gw / Nk - 1.5));
      cursor.setAttribute('y', r2(py0 + at.q * gh / Nq - 1.5));
      cursor.setAttribute('width', r2(Math.max(gw / Nk, 4) + 3));
      cursor.setAttribute('height', r2(Math.max(gh / Nq, 4) + 3));
      cursor.setAttribute('visibility', 'visible');
      root.setAttribute('data-cursor', at.panel + ' ' + at.q + ' ' + at.k);
      var h = cellOf(at.panel, at.q, at.k);
      if (opts.onHover) opts.onHover(describeCell(h), h);
    }
    root.addEventListener('focus', moveCursor);
    root.addEventListener('blur', function () { cursor.setAttribute('visibility', 'hidden'); });
    root.addEventListener('keydown', function (ev) {
      var big = ev.shiftKey ? Math.max(1, Math.round(Math.max(Nq, Nk) / 8)) : 1;
      if (ev.key === 'ArrowRight') at.k = Math.min(Nk - 1, at.k + big);
      else if (ev.key === 'ArrowLeft') at.k = Math.max(0, at.k - big);
      else if (ev.key === 'ArrowDown') at.q = Math.min(Nq - 1, at.q + big);
      else if (ev.key === 'ArrowUp') at.q = Math.max(0, at.q - big);
      else if (ev.key === 'PageDown') at.panel = Math.min(panels.length - 1, at.panel + 1);
      else if (ev.key === 'PageUp') at.panel = Math.max(0, at.panel - 1);
      else if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        if (opts.onClick) opts.onClick(cellOf(at.panel, at.q, at.k));
        return;
      } else return;
      ev.preventDefault();
      moveCursor();
    });
    var table = valuesTable(panels, title, qLabels, kLabels, canvasMode);
    var fig = el('div', { class: 'heatmap-figure' }, root, table);
    /* new values of the same shape, masks and scale (a slider moving):
     * the cells change colour and text in place, nothing is rebuilt */
    if (!canvasMode && !scaleNote && !opts.signed) {
      fig.refresh = function (fresh) {
        var t1 = performance.now(), tds = table.querySelectorAll('td');
        fresh.forEach(function (p, pi) {
          panels[pi].m = p.m;
          var at = 0;
          p.m.forEach(function (row, r) {
            row.forEach(function (v, c) {
              var off = v === null || (panels[pi].hidden ? panels[pi].hidden(r, c) : false), rect = rects[pi][at];
              rect.setAttribute('fill', off ? 'url(#lab-masked-' + id + ')' : colour(pos(v), pal));
              rect.setAttribute('data-v', v === null ? 'null' : v);
              if (texts[pi]) {
                texts[pi][at].textContent = cellText(v, off);
                texts[pi][at].setAttribute('fill', off ? '#000000' : inkOn(rgbAt(pal, pos(v))));
              }
              at++;
            });
          });
        });
        var k = 0;
        fresh.forEach(function (p, pi) {
          p.m.forEach(function (row, r) { row.forEach(function (v, c) { if (tds[k]) tds[k].textContent = panels[pi].hidden && panels[pi].hidden(r, c) ? 'masked' : shownNumber(v); k++; }); });
        });
        fig.setAttribute('data-render-ms', (performance.now() - t1).toFixed(1));
      };
    }
    fig.setAttribute('data-render-ms', (performance.now() - t0).toFixed(1));
    root.setAttribute('data-render-ms', fig.getAttribute('data-render-ms'));
    return fig;
  }
  heatmap.count = 0;

  /* A cell's number: two decimals (whole numbers from 100), 0 when
   * masked, −∞ for a masked score. */
  function cellText(v, off) {
    return v === null ? '−∞' : off ? '0' : Math.abs(v) >= 100 ? label(Math.round(v)) : v.toFixed(2);
  }
  /* Grey hatching: a masked cell, the same in every view. */
  function maskedPattern(id, size) {
    return svg('pattern', { id: id, width: r2(size), height: r2(size), patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      svg('rect', { width: r2(size), height: r2(size), fill: MASKED_FILL }),
      svg('line', { x1: 0, y1: 0, x2: 0, y2: r2(size), stroke: '#555555', 'stroke-width': r2(size / 3) }));
  }
  /* What the colours mean, for the palette in use. */
  function legendText(pal, centred, what) {
    what = what || 'weight';
    if (centred) return 'Colour: blue is negative, white 0, red positive (the diverging RdBu palette).';
    if (pal === 'viridis') return 'Colour: dark purple is a small ' + what + ', yellow a large one (viridis).';
    return 'Colour: white is a small ' + what + ', dark red a large one (Reds).';
  }
  /* The text colour with the higher WCAG 2 contrast on a fill: black or
   * white; the better of the two is at least 4.58:1 on any colour. */
  function inkOn(rgb) {
    var lin = rgb.map(function (c) { c /= 255; return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); });
    var L = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
    return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000000' : '#ffffff';
  }
  /* A number as the readouts show it: 4 significant digits, or every
   * digit attnd printed when "exact" is ticked. */
  function shownNumber(x) {
    if (x === null) return '−∞';
    if (exactDigits || typeof x !== 'number') return num(x);
    return String(Number(x.toPrecision(4)));
  }
  /* The values as tables, for screen readers (visually hidden). */
  function valuesTable(panels, title, qLabels, kLabels, tooMany) {
    var box = el('div', { class: 'sr-only' });
    panels.forEach(function (p) {
      var Nq = p.m.length, Nk = p.m[0].length;
      if (tooMany) {
        box.appendChild(el('p', null, (p.label || title) + ': ' + Nq + ' × ' + Nk + ' values, too many for a table; the answer\'s JSON has them all.'));
        return;
      }
      var t = el('table', null, el('caption', null, (p.label ? p.label + ', ' : '') + title));
      var head = el('tr', null, el('th', { scope: 'col' }, 'query \\ key'));
      for (var k = 0; k < Nk; k++) head.appendChild(el('th', { scope: 'col' }, kLabels ? kLabels[k] : 'key ' + k));
      t.appendChild(head);
      p.m.forEach(function (row, q) {
        var tr = el('tr', null, el('th', { scope: 'row' }, qLabels ? qLabels[q] : 'query ' + q));
        row.forEach(function (v, k) { tr.appendChild(el('td', null, p.hidden && p.hidden(q, k) ? 'masked' : shownNumber(v))); });
        t.appendChild(tr);
      });
      box.appendChild(t);
    });
    return box;
  }

  /* ------------------------------------------------------------------ */
  /* Talking to attnd                                                    */
  /* ------------------------------------------------------------------ */

  function authHeaders(h) {
    var token = $('token').value.trim();
    if (token) h.Authorization = 'Bearer ' + token;
    return h;
  }

  /* One request; resolves to {status, statusText, ctype, json, text, blob,
   * ms, timing, id}; rejects only when the network fails. */
  function call(method, path, body, accept) {
    var headers = authHeaders({});
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    headers.Accept = accept || 'application/json';
    var t0 = performance.now();
    return fetch(path, { method: method, headers: headers, body: body, cache: 'no-store' }).then(function (res) {
      var ctype = res.headers.get('Content-Type') || '';
      var meta = {
        status: res.status, statusText: res.statusText, ctype: ctype, json: null, text: null, blob: null,
        timing: res.headers.get('Server-Timing'), id: res.headers.get('X-Request-Id')
      };
      var done = function () { meta.ms = performance.now() - t0; return meta; };
      if (ctype.indexOf('image/svg+xml') === 0) {
        return res.blob().then(function (b) { meta.blob = b; return done(); });
      }
      return res.text().then(function (t) {
        meta.text = t;
        try { meta.json = JSON.parse(t); } catch (e) { meta.json = null; }
        return done();
      });
    });
  }

  /* ------------------------------------------------------------------ */
  /* Examples                                                            */
  /* ------------------------------------------------------------------ */

  function fill(shape, f, prefix) {
    prefix = prefix || [];
    if (shape.length === 0) return f(prefix);
    var out = [];
    for (var i = 0; i < shape[0]; i++) out.push(fill(shape.slice(1), f, prefix.concat([i])));
    return out;
  }
  /* Deterministic "random-looking" numbers with two decimals. */
  function wiggle(seed) { return Math.round(Math.sin(seed * 12.9898 + 78.233) * 43758.5453 % 1 * 100) / 100; }
  function eye(n, scale) { return fill([n, n], function (ij) { return ij[0] === ij[1] ? scale : 0; }); }

  var toyKeys = fill([2, 10, 2], function () { return 1; });
  var toyValues = fill([2, 10, 4], function (i) { return i[1] * 4 + i[2]; });
  var EXAMPLES = [
    {
      path: '/attention/dot', name: "d2l toy: keys ones, valid_lens [2, 6]",
      body: { queries: [[[0.5, -1]], [[2, 0.25]]], keys: toyKeys, values: toyValues, valid_lens: [2, 6] }
    },
    {
      path: '/attention/dot', name: 'Identity (seed §3): Q = K = 30·I, scale 1',
      body: { queries: eye(10, 30), keys: eye(10, 30), values: eye(10, 1), scale: 1 }
    },
    {
      path: '/attention/dot', name: 'Causal self-attention, 6 tokens',
      body: (function () {
        var x = fill([6, 4], function (i) { return wiggle(i[0] * 4 + i[1] + 1); });
        return { queries: x, keys: x, values: x, causal: true };
      })()
    },
    {
      path: '/attention/dot', name: 'Token labels: “the cat sat on the mat”',
      body: (function () {
        var words = ['the', 'cat', 'sat', 'on', 'the', 'mat'];
        var x = words.map(function (w, i) { return fill([4], function (c) { return wiggle((w === 'the' ? 0 : i + 1) * 4 + c[0] + 5); }); });
        return { queries: x, keys: x, values: x, labels: { queries: words, keys: words } };
      })()
    },
    {
      path: '/attention/dot', name: 'Large: self-attention over 512 tokens (canvas)',
      body: (function () {
        var x = fill([512, 8], function (i) { return Math.round(Math.sin(i[0] * 0.05 * (i[1] + 1) + i[1]) * 100) / 100; });
        return { queries: x, keys: x, values: x, causal: true };
      })()
    },
    {
      path: '/attention/additive', name: "d2l toy: additive, num_hiddens 8",
      body: {
        queries: fill([2, 1, 20], function (i) { return wiggle(i[0] * 20 + i[2] + 7); }),
        keys: toyKeys, values: toyValues, valid_lens: [2, 6], num_hiddens: 8, seed: 0
      }
    },
    {
      path: '/attention/multihead', name: 'Multi-head: 2 heads, valid_lens [3, 2]',
      body: {
        queries: fill([2, 4, 4], function (i) { return wiggle(i[0] * 16 + i[1] * 4 + i[2] + 11); }),
        keys: fill([2, 6, 4], function (i) { return wiggle(i[0] * 24 + i[1] * 4 + i[2] + 51); }),
        num_heads: 2, num_hiddens: 8, seed: 0, valid_lens: [3, 2]
      }
    },
    {
      path: '/softmax/masked', name: 'Identity (seed §3): diagonal scores 1000',
      body: { scores: eye(10, 1000) }
    },
    {
      path: '/softmax/masked', name: 'Causal mask over 6 × 6 scores',
      body: { scores: fill([6, 6], function (i) { return wiggle(i[0] * 6 + i[1] + 3); }), causal: true }
    },
    {
      path: '/regression/nw', name: 'NW worked example (seed)',
      body: { x_train: [1, 2, 4], y_train: [0, 3, 1], x_query: [2.5], w: 0.5, y_query: [3] }
    },
    {
      path: '/regression/nw', name: 'NW: one gradient step on w',
      body: { x_train: [1, 2, 4], y_train: [0, 3, 1], x_query: [2.5], w: 0.5, y_query: [3], fit: { epochs: 1, lr: 0.1, data: 'query' } }
    },
    {
      path: '/regression/nw', name: 'NW: average pooling (constant kernel)',
      body: { x_train: [1, 2, 4], y_train: [0, 3, 1], x_query: [0, 1, 2, 3, 4, 5], kernel: 'constant' }
    }
  ];
  /* The routes the lab has examples for, in the order of their first
   * example: the endpoint list until the server's own is read, and its
   * head after that. */
  function exampleRoutes() {
    return EXAMPLES.reduce(function (list, e) {
      if (list.indexOf(e.path) < 0) list.push(e.path);
      return list;
    }, []);
  }

  /* The fields each POST route takes (path → {field: true}), read from the
   * server's OpenAPI document at load (readRoutes); what the page offers a
   * route follows from them, so that no route is listed here. */
  var routeFields = Object.create(null);
  function takes(path, fields) {
    var f = routeFields[path];
    return !!f && fields.every(function (n) { return f[n] === true; });
  }
  /* A route whose weights have a heads axis after the batch (B, H, Nq, Nk):
   * one that splits its queries into num_heads heads. */
  function splitsHeads(path) { return takes(path, ['queries', 'num_heads']); }

  /* ------------------------------------------------------------------ */
  /* The editor: locating an RFC 6901 pointer in the request text        */
  /* ------------------------------------------------------------------ */

  /* Parse JSON text keeping each value's [start, end) offsets; objects
   * keep their members (the last duplicate wins, as attnd reads them).
   * Returns null when the text is not JSON. */
  function parseSpans(text) {
    var i = 0;
    function ws() { while (i < text.length && ' \t\r\n'.indexOf(text[i]) >= 0) i++; }
    function str() {
      var s = i;
      if (text[i] !== '"') throw new Error('string');
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (i >= text.length) throw new Error('unterminated');
      i++;
      return JSON.parse(text.slice(s, i));
    }
    function value() {
      ws();
      var start = i, c = text[i], node;
      if (c === '{') {
        i++;
        node = { start: start, members: {}, list: [] };
        ws();
        if (text[i] === '}') { i++; node.end = i; return node; }
        for (;;) {
          ws();
          var ks = i, key = str(), ke = i;
          ws();
          if (text[i] !== ':') throw new Error(':');
          i++;
          var v = value();
          v.keyStart = ks;
          node.members['$' + key] = v;
          node.list.push({ keyStart: ks, keyEnd: ke, value: v });
          ws();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === '}') { i++; break; }
          throw new Error('object');
        }
        node.end = i;
        return node;
      }
      if (c === '[') {
        i++;
        node = { start: start, items: [] };
        ws();
        if (text[i] === ']') { i++; node.end = i; return node; }
        for (;;) {
          node.items.push(value());
          ws();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === ']') { i++; break; }
          throw new Error('array');
        }
        node.end = i;
        return node;
      }
      if (c === '"') { str(); return { start: start, end: i }; }
      while (i < text.length && ',]}: \t\r\n'.indexOf(text[i]) < 0) i++;
      if (i === start) throw new Error('value');
      return { start: start, end: i };
    }
    try {
      var root = value();
      ws();
      return i === text.length ? root : null;
    } catch (e) {
      return null;
    }
  }

  /* The span a pointer names: {start, end, missing} — missing is the
   * first token not found (then the span is its parent's). */
  function locate(text, pointer) {
    var root = parseSpans(text);
    if (!root) return null;
    if (pointer === '') return { start: root.start, end: root.end, missing: null };
    var tokens = pointer.split('/').slice(1).map(function (t) { return t.replace(/~1/g, '/').replace(/~0/g, '~'); });
    var node = root;
    for (var t = 0; t < tokens.length; t++) {
      var next = null;
      if (node.members && Object.prototype.hasOwnProperty.call(node.members, '$' + tokens[t])) next = node.members['$' + tokens[t]];
      else if (node.items && /^(0|[1-9][0-9]*)$/.test(tokens[t])) next = node.items[+tokens[t]] || null;
      if (!next) return { start: node.start, end: node.end, missing: tokens[t], parentEnd: node.end };
      node = next;
    }
    return { start: node.keyStart !== undefined ? node.keyStart : node.start, end: node.end, missing: null };
  }

  /* Re-indent JSON text: containers that fit in 72 columns stay on one
   * line (tensors read row by row); numbers, strings and keys keep their
   * exact text (no rounding through doubles, duplicates kept). null when
   * the text is not JSON. */
  function prettyText(text) {
    var root = parseSpans(text);
    if (!root) return null;
    function key(m) { return text.slice(m.keyStart, m.keyEnd); }
    function one(n) {
      if (n.items) return '[' + n.items.map(one).join(', ') + ']';
      if (n.list) return '{' + n.list.map(function (m) { return key(m) + ': ' + one(m.value); }).join(', ') + '}';
      return text.slice(n.start, n.end);
    }
    function multi(n, indent) {
      var flat = one(n), inner = indent + '  ';
      if ((!n.items && !n.list) || flat.length + indent.length <= 72) return flat;
      if (n.items) {
        return '[\n' + n.items.map(function (c) { return inner + multi(c, inner); }).join(',\n') + '\n' + indent + ']';
      }
      return '{\n' + n.list.map(function (m) { return inner + key(m) + ': ' + multi(m.value, inner); }).join(',\n') + '\n' + indent + '}';
    }
    return multi(root, '');
  }

  var LINE_H = 22, PAD = 10;
  var editor, backdrop, fieldError;
  var mark = null; /* {start, end, line, html} while a problem is shown */

  function escapeHtml(s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function lineOf(text, offset) { return text.slice(0, offset).split('\n').length - 1; }

  function renderBackdrop() {
    var text = editor.value;
    if (!mark) {
      /* nothing to mark: the backdrop is transparent, so it holds no
       * copy of the text (a copy per key press of a 4 MB body took
       * seconds) */
      backdrop.textContent = '';
    } else {
      backdrop.innerHTML = escapeHtml(text.slice(0, mark.start)) + '<mark>' +
        escapeHtml(text.slice(mark.start, mark.end) || ' ') + '</mark>' + escapeHtml(text.slice(mark.end)) + '\n ';
    }
    syncScroll();
  }
  function syncScroll() {
    backdrop.scrollTop = editor.scrollTop;
    backdrop.scrollLeft = editor.scrollLeft;
    if (mark) {
      var top = PAD + (mark.line + 1) * LINE_H - editor.scrollTop + 2;
      var maxTop = editor.clientHeight - fieldError.offsetHeight - 4;
      if (top > maxTop) top = PAD + mark.line * LINE_H - editor.scrollTop - fieldError.offsetHeight - 2;
      fieldError.style.top = Math.max(2, top) + 'px';
    }
  }
  function clearMark() {
    mark = null;
    fieldError.hidden = true;
    fieldError.removeAttribute('data-pointer');
    renderBackdrop();
  }

  /* Show a problem next to the field it points at. */
  function markProblem(problem) {
    var text = editor.value, span = null;
    if (typeof problem.pointer === 'string') span = locate(text, problem.pointer);
    if (!span && problem.code === 'invalid_json') {
      var m = /byte (\d+)\)/.exec(problem.detail || '');
      if (m) {
        var at = Math.min(text.length, +m[1]);
        span = { start: Math.max(0, at - 1), end: Math.min(text.length, at + 1), missing: null };
      }
    }
    if (!span) { clearMark(); return false; }
    var anchor = span.missing ? Math.max(span.start, span.end - 1) : span.start;
    var end = span.missing ? span.end : span.end;
    mark = { start: span.missing ? anchor : span.start, end: end, line: lineOf(text, span.missing ? anchor : span.start) };
    clear(fieldError);
    fieldError.appendChild(el('code', null, problem.pointer !== undefined ? (problem.pointer || '(the body)') : 'syntax'));
    fieldError.appendChild(document.createTextNode(' ' + (span.missing ? '(add it here) ' : '') + (problem.detail || problem.title)));
    fieldError.setAttribute('data-pointer', problem.pointer === undefined ? '' : problem.pointer);
    fieldError.hidden = false;
    var wanted = PAD + mark.line * LINE_H - editor.clientHeight / 3;
    editor.scrollTop = Math.max(0, wanted);
    renderBackdrop();
    return true;
  }

  /* ------------------------------------------------------------------ */
  /* The request tab                                                     */
  /* ------------------------------------------------------------------ */

  var routes = exampleRoutes();
  var available = null; /* POST paths the server lists, once known */

  /* available and routeFields from the OpenAPI document's paths: its POST
   * routes without a template ({model}), and the properties of each one's
   * JSON request body. */
  function readRoutes(paths) {
    available = Object.keys(paths).filter(function (p) { return paths[p].post && p.indexOf('{') < 0; });
    available.forEach(function (p) {
      var body = paths[p].post.requestBody, json = body && body.content && body.content['application/json'];
      var props = json && json.schema && json.schema.properties, f = Object.create(null);
      Object.keys(props || {}).forEach(function (n) { f[n] = true; });
      routeFields[p] = f;
    });
  }

  function fillEndpoints() {
    var sel = $('endpoint'), keep = sel.value;
    clear(sel);
    routes.forEach(function (p) { sel.appendChild(el('option', { value: p }, p)); });
    sel.value = routes.indexOf(keep) >= 0 ? keep : routes[routes.length - 1] === '/regression/nw' ? '/regression/nw' : routes[0];
  }
  function examplesFor(path) { return EXAMPLES.filter(function (e) { return e.path === path; }); }
  function fillExamplesOnly() {
    var sel = $('example'), list = examplesFor($('endpoint').value);
    clear(sel);
    list.forEach(function (e, i) { sel.appendChild(el('option', { value: i }, e.name)); });
    if (!list.length) sel.appendChild(el('option', { value: -1 }, '(none: write your own)'));
  }
  function fillExamples() {
    fillExamplesOnly();
    loadExample();
  }
  function loadExample() {
    var list = examplesFor($('endpoint').value), i = +$('example').value;
    if (i === -2) return; /* a chapter card's request: already in the editor */
    editor.value = list[i] ? pretty(list[i].body) : '{\n  \n}';
    clearMark();
    syncControls();
  }

  function setStatus(node, ok, text) {
    node.className = node.className.replace(/\b(ok|bad)\b/g, '').trim() + ' ' + (ok ? 'ok' : 'bad');
    node.textContent = text;
  }
  function describe(r) {
    var parts = [r.status + ' ' + (r.statusText || '')];
    var m = /dur=([0-9.]+)/.exec(r.timing || '');
    if (m) parts.push(Number(m[1]) === 0 ? 'compute 0 ms: an identical request\'s kept answer' : 'compute ' + m[1] + ' ms');
    parts.push('round trip ' + r.ms.toFixed(1) + ' ms');
    if (r.id) parts.push('id ' + r.id);
    return parts.join(' · ');
  }

  function showProblem(p) {
    var box = $('problem');
    clear(box);
    box.appendChild(el('div', null, el('b', null, (p.status || '') + ' ' + (p.title || 'Error')), p.code ? ' — ' + p.code : ''));
    if (p.pointer !== undefined) box.appendChild(el('div', null, 'at ', el('code', { class: 'pointer' }, p.pointer || '(the body)')));
    box.appendChild(el('div', { class: 'detail' }, p.detail || ''));
    if (p.expected || p.got) {
      box.appendChild(el('div', null, 'expected ', el('code', null, JSON.stringify(p.expected)), ', got ', el('code', null, JSON.stringify(p.got))));
    }
    box.hidden = false;
    markProblem(p);
    if (p.code === 'unauthorized') flagInput($('token'), p.detail || 'this route needs a token');
  }

  /* Outline an input whose value a problem names; cleared on its next edit. */
  function flagInput(input, why) {
    input.classList.add('invalid');
    input.setAttribute('aria-invalid', 'true');
    input.title = why;
    input.addEventListener('input', function unflag() {
      input.classList.remove('invalid');
      input.removeAttribute('aria-invalid');
      input.title = '';
      input.removeEventListener('input', unflag);
    });
  }

  /* The numbers of an answer, one row per field; tensors with their shape. */
  function showSummary(path, j) {
    var box = clear($('summary')), dl = el('dl');
    Object.keys(j).forEach(function (k) {
      var v = j[k];
      if (k === 'history' && Array.isArray(v)) {
        dl.appendChild(el('dt', null, k));
        dl.appendChild(el('dd', { 'data-field': k }, v.map(function (e) { return 'epoch ' + e.epoch + ': w ' + num(e.w) + ', loss ' + num(e.loss); }).join('; ')));
        return;
      }
      var shown = nested(v);
      dl.appendChild(el('dt', null, k));
      if (isTensor(v)) {
        dl.appendChild(el('dd', { 'data-field': k }, compact(shown, 150), ' ', el('span', { class: 'shape' }, '(' + shapeOf(shown).join(', ') + ')')));
      } else if (typeof v === 'number') {
        dl.appendChild(el('dd', { 'data-field': k }, num(v)));
      } else {
        dl.appendChild(el('dd', { 'data-field': k }, compact(v, 260)));
      }
    });
    box.appendChild(dl);
  }

  /* The token labels a request body gives ({queries, keys}), or null. */
  function labelsOf(body) {
    return body && body.labels && typeof body.labels === 'object' ? body.labels : null;
  }

  var lastAnswer = null; /* {path, json, labels, body} of the last 200, for redraws */
  function showHeatmap(path, weights, labels, body) {
    /* a keyboard user on the old map stays on the same cell of the new */
    var old = $('heatmap').querySelector('svg'), focused = old && document.activeElement === old;
    var oldFig = $('heatmap').querySelector('.heatmap-figure');
    var cursor = old && old.getAttribute('data-cursor') ? old.getAttribute('data-cursor').split(' ').map(Number) : null;
    var box = $('heatmap');
    var heads = splitsHeads(path), panels = weights && panelsOf(weights, heads);
    if (!panels || !panels.length || !panels[0].m.length) { clear(box); return; }
    var t0 = performance.now();
    var shape = shapeOf(nested(weights));
    var hid = hiddenOf(body, heads ? shape[shape.length - 3] : 1);
    panels.forEach(function (p) { p.hidden = hid ? hid(p.b, p.h) : null; });
    /* what a redraw in place must share with the figure drawn */
    var sig = JSON.stringify([path, shape, labels, palette, stretchColours, exactDigits, document.body.classList.contains('presenter'),
      box.clientWidth, body && [body.causal, body.valid_lens, body.attn_mask, body.key_padding_mask], $('ctl-mask').checked]);
    if (oldFig && oldFig.refresh && oldFig.sig === sig) {
      oldFig.refresh(panels);
      box.setAttribute('data-render-ms', (performance.now() - t0).toFixed(1));
      return;
    }
    clear(box);
    var mask = editableMask(path, editorBody());
    var root = heatmap(panels, {
      title: path + ' weights', perRow: heads && shape.length === 4 ? shape[1] : undefined,
      labels: labels, width: box.clientWidth,
      cursor: cursor ? { panel: cursor[0], q: cursor[1], k: cursor[2] } : null,
      onHover: function (t) { $('readout').textContent = t; },
      onClick: function (h) {
        $('readout').textContent = 'query ' + h.q + ' · key ' + h.k + ' : ' + num(h.v) + ' (every digit attnd printed)';
        if ($('ctl-mask').checked && hasControls(path)) toggleMask(h.q, h.k);
      }
    });
    /* the keys attn_mask hides: dashed outlines (their weights are 0) */
    if (mask) {
      root.querySelectorAll('rect.cell').forEach(function (c) {
        var q = +c.getAttribute('data-q'), k = +c.getAttribute('data-k');
        if (mask[q] && mask[q][k] === true) c.classList.add('mask-true');
      });
    }
    box.classList.toggle('mask-edit', !!mask);
    root.sig = sig;
    box.appendChild(root);
    if (focused) root.querySelector('svg').focus();
    /* drawn and laid out: the figure the browser test reports */
    box.setAttribute('data-render-ms', (performance.now() - t0).toFixed(1));
    $('readout').textContent = 'Hover a cell, or focus the map and use the arrow keys, for its weight; click or Enter for every digit. ' +
      legendText(palette === 'rdbu' ? 'rdbu' : palette, palette === 'rdbu');
  }

  var busy = false, pending = false, sendTimer = null, lastSendAt = 0;
  var edits = 0; /* the controls' changes so far: an answer to an older body is stale */
  var SEND_GAP_MS = 100, CONFIRM_MS = 250;
  /* A send soon: at most one every SEND_GAP_MS while a control moves,
   * and one request in flight (send() queues the latest), so that a
   * dragged slider repaints as it moves without flooding the server. */
  function scheduleSend() {
    if (sendTimer) return;
    var wait = Math.max(0, lastSendAt + SEND_GAP_MS - performance.now());
    sendTimer = setTimeout(function () { sendTimer = null; send(); }, wait);
  }
  function paletteQuery(path) { return palette === 'reds' ? path : path + '?palette=' + palette; }
  function send(accept) {
    if (busy) { if (!accept) pending = true; return Promise.resolve(); }
    lastSendAt = performance.now();
    var sentAt = edits;
    var path = $('endpoint').value, body = editor.value;
    var parsedBody = null;
    try { parsedBody = JSON.parse(body); } catch (e) { parsedBody = null; }
    busy = true;
    $('send').disabled = $('send-svg').disabled = true;
    clearMark();
    $('problem').hidden = true;
    setStatus($('status'), true, 'Sending…');
    return call('POST', accept === 'image/svg+xml' ? paletteQuery(path) : path, body, accept).then(function (r) {
      $('status').setAttribute('data-status', r.status);
      setStatus($('status'), r.status < 300, path + ' — ' + describe(r));
      if (r.blob) {
        var url = URL.createObjectURL(r.blob);
        /* one picture held at a time */
        if ($('server-svg-img').src.indexOf('blob:') === 0) URL.revokeObjectURL($('server-svg-img').src);
        $('server-svg-img').src = url;
        $('server-svg-link').href = url;
        $('server-svg').hidden = false;
        return;
      }
      $('response').textContent = r.text && r.text.length > 200000 ? r.text.slice(0, 200000) + '\n…' : (prettyText(r.text || '') || r.text);
      if (r.status >= 300 || !r.json) {
        clear($('summary'));
        clear($('heatmap'));
        $('readout').textContent = '';
        showProblem(r.json || { status: r.status, title: r.statusText, detail: r.text });
        return;
      }
      if (accept !== 'image/svg+xml') $('server-svg').hidden = true;
      /* a newer request is queued, or a control moved since (the page
       * drew its own newer weights): this answer is already stale */
      if (pending || sentAt !== edits) return;
      showSummary(path, r.json);
      lastAnswer = { path: path, json: r.json, labels: labelsOf(parsedBody), body: parsedBody };
      showHeatmap(path, r.json.weights, lastAnswer.labels, parsedBody);
      $('heatmap').setAttribute('data-drawn', 'attnd');
    }).catch(function (e) {
      setStatus($('status'), false, 'The request failed: ' + e.message);
    }).then(function () {
      busy = false;
      $('send').disabled = $('send-svg').disabled = false;
      if (pending) { pending = false; send(); }
    });
  }

  /* ------------------------------------------------------------------ */
  /* The request tab's controls: scale (dot), causal, valid_lens         */
  /* ------------------------------------------------------------------ */

  /* The controls serve a route that takes the fields they edit (causal,
   * valid_lens, attn_mask) and whose sizes bodyDims reads: from queries
   * and keys, or from scores. */
  function hasControls(path) {
    return takes(path, ['causal', 'valid_lens', 'attn_mask']) &&
      (takes(path, ['queries']) || takes(path, ['scores']) || takes(path, ['x']));
  }

  /* The shape of a tensor field as sent: nested arrays or {shape, data}. */
  function fieldShape(v) {
    if (v && !Array.isArray(v) && Array.isArray(v.shape)) return v.shape.slice();
    return Array.isArray(v) ? shapeOf(v) : null;
  }
  /* What the controls need of a body: d (the queries' last axis), Nk,
   * whether it is batched and B. */
  function bodyDims(path, b) {
    var main = fieldShape(b.scores || b.x || b.queries);
    var keys = b.scores || b.x ? main : fieldShape(b.keys) || main;
    if (!main || !keys || main.length < 2) return null;
    var wq = fieldShape(b.W_Q);
    return {
      d: b.x ? (typeof b.d_k === 'number' ? b.d_k : wq ? wq[1] : main[main.length - 1]) : main[main.length - 1],
      Nq: main[main.length - 2], Nk: keys[keys.length - (b.scores ? 1 : 2)],
      batched: main.length >= 3, B: main.length >= 3 ? main[0] : 1
    };
  }
  function editorBody() {
    try { var b = JSON.parse(editor.value); return b && typeof b === 'object' && !Array.isArray(b) ? b : null; } catch (e) { return null; }
  }
  function setEditorBody(b) {
    editor.value = pretty(b);
    clearMark();
  }
  function fmt4(x) { return String(Number(x.toPrecision(4))); }

  /* The controls from the editor's JSON (after an example or an edit). */
  function syncControls() {
    var path = $('endpoint').value, b = editorBody(), dims = b && bodyDims(path, b);
    $('controls').hidden = !hasControls(path) || !dims;
    if ($('controls').hidden) return;
    var scaled = takes(path, ['scale']);
    $('ctl-scale-row').hidden = $('ctl-scale-hint').hidden = !scaled;
    var heads = takes(path, ['num_heads']) && typeof b.num_heads === 'number';
    $('ctl-heads-row').hidden = !heads;
    if (heads) {
      var hidden = typeof b.num_hiddens === 'number' ? b.num_hiddens : (fieldShape(b.W_q) || [b.num_heads])[0], sel = $('ctl-heads');
      clear(sel);
      for (var hN = 1; hN <= hidden; hN++) if (hidden % hN === 0) sel.appendChild(el('option', { value: hN }, String(hN)));
      sel.value = String(b.num_heads);
      $('ctl-heads-out').textContent = b.num_heads + ' head' + (b.num_heads === 1 ? '' : 's') + ' of ' + hidden / b.num_heads + ' feature' + (hidden / b.num_heads === 1 ? '' : 's') + ' each (num_hiddens ' + hidden + ')';
    }
    if (scaled) {
      var rootD = Math.sqrt(dims.d), scale = typeof b.scale === 'number' && b.scale > 0 ? b.scale : 1 / rootD;
      var s = Math.log2(1 / scale / rootD);
      $('ctl-tau').value = String(Math.max(-3, Math.min(3, s)));
      showScale(b.scale, dims.d);
    }
    $('ctl-causal').checked = !!b.causal && b.causal !== 'none';
    var hasMask = b.attn_mask !== undefined && b.attn_mask !== null, mask = editableMask(path, b);
    $('ctl-mask').checked = hasMask;
    $('ctl-mask-out').textContent = !hasMask ? 'off' : mask
      ? mask.reduce(function (a, row) { return a + row.filter(function (x) { return x === true; }).length; }, 0) + ' of ' + dims.Nq + ' × ' + dims.Nk +
        ' entries true (hidden); click a cell of the heatmap to toggle it'
      : 'not a boolean (Nq, Nk) mask: edit it in the JSON';
    var lens = b.valid_lens, has = lens !== undefined && lens !== null;
    $('ctl-lens').checked = has;
    $('ctl-lens-n').disabled = !has;
    $('ctl-lens-n').max = String(dims.Nk);
    if (has) {
      var first = Array.isArray(lens) ? (Array.isArray(lens[0]) ? lens[0][0] : lens[0]) : lens;
      if (typeof first === 'number') $('ctl-lens-n').value = String(first);
      $('ctl-lens-out').textContent = 'valid_lens ' + JSON.stringify(lens) + ' of ' + dims.Nk + ' keys';
    } else {
      $('ctl-lens-out').textContent = 'all ' + dims.Nk + ' keys';
    }
  }
  function showScale(scale, d) {
    var rootD = Math.sqrt(d), given = typeof scale === 'number';
    var sc = given ? scale : 1 / rootD;
    $('ctl-scale-out').textContent = 'τ = ' + fmt4(1 / sc) + ', so scale = 1/τ = ' + fmt4(sc) +
      (given ? ' (attnd\'s default would be τ = √d = √' + d + ' = ' + fmt4(rootD) + ', scale 1/√d = ' + fmt4(1 / rootD) + ')'
        : ' (attnd\'s default: τ = √d = √' + d + ')');
    $('ctl-tau').setAttribute('aria-valuetext', 'τ = ' + fmt4(1 / sc) + ', scale ' + fmt4(sc));
  }

  /* The request's attn_mask when the page can toggle its cells: booleans
   * (Nq, Nk), the same for every example and head (docs/attention.md);
   * else null. */
  function editableMask(path, b) {
    var dims = b && hasControls(path) && bodyDims(path, b), m = b && b.attn_mask;
    if (!dims || !Array.isArray(m) || m.length !== dims.Nq) return null;
    return m.every(function (row) {
      return Array.isArray(row) && row.length === dims.Nk && row.every(function (x) { return typeof x === 'boolean'; });
    }) ? m : null;
  }
  /* A click on cell (q, k) of the weights: hide key k from query q, or
   * show it again, and send. */
  function toggleMask(q, k) {
    var path = $('endpoint').value, b = editorBody(), m = editableMask(path, b);
    if (!m) return;
    m[q][k] = !m[q][k];
    setEditorBody(b);
    syncControls();
    scheduleSend();
  }

  /* A control moved: edit the JSON, then send (debounced). */
  function controlChanged(which) {
    var path = $('endpoint').value, b = editorBody(), dims = b && bodyDims(path, b);
    if (!dims) return;
    edits++;
    if (which === 'tau') {
      /* τ = √d is attnd's own default: leave scale out rather than send
       * 1/√d rounded; elsewhere the exact double 1/τ */
      var steps = +$('ctl-tau').value, tau = Math.sqrt(dims.d) * Math.pow(2, steps);
      if (steps === 0) delete b.scale; else b.scale = 1 / tau;
    } else if (which === 'heads') {
      b.num_heads = +$('ctl-heads').value;
    } else if (which === 'scale-reset') {
      delete b.scale;
    } else if (which === 'causal') {
      if ($('ctl-causal').checked) b.causal = true; else delete b.causal;
    } else if (which === 'mask') {
      if (!$('ctl-mask').checked) delete b.attn_mask;
      else if (b.attn_mask === undefined) {
        b.attn_mask = Array.apply(null, Array(dims.Nq)).map(function () {
          return Array.apply(null, Array(dims.Nk)).map(function () { return false; });
        });
      }
    } else if (which === 'lens' || which === 'lens-n') {
      if ($('ctl-lens').checked) {
        var n = Math.min(dims.Nk, Math.max(1, +$('ctl-lens-n').value || dims.Nk));
        if (which === 'lens' && b.valid_lens === undefined) n = Math.max(1, Math.ceil(dims.Nk / 2));
        $('ctl-lens-n').value = String(n);
        b.valid_lens = dims.batched ? Array.apply(null, Array(dims.B)).map(function () { return n; }) : n;
      } else delete b.valid_lens;
    }
    setEditorBody(b);
    syncControls();
    /* drawn here: attnd confirms once the control rests; else attnd
     * draws, as often as SEND_GAP_MS allows */
    if (path === '/attention/dot' && drawHere(path, b)) {
      clearTimeout(sendTimer);
      sendTimer = setTimeout(function () { sendTimer = null; send(); }, CONFIRM_MS);
    } else scheduleSend();
  }

  /* The weights of a dot-product request computed in the page, drawn at
   * the next frame while a control moves (moves between two frames are
   * drawn once, the last); attnd's answer, asked for when the control
   * rests, replaces them. softmax(Q Kᵀ · scale) with the request's masks
   * (d2l 11.3.3); requests in the flat form, or with a float attn_mask,
   * wait for attnd. Returns whether the page draws. */
  var hereNext = null, hereFrame = 0;
  function drawHere(path, b) {
    var Q = nested(b.queries), K = nested(b.keys);
    if (!Array.isArray(Q) || !Array.isArray(K) || (b.attn_mask && !editableMask(path, b))) return false;
    hereNext = { path: path, b: b, Q: Q, K: K };
    if (!hereFrame) hereFrame = requestAnimationFrame(function () { hereFrame = 0; computeHere(hereNext); });
    return true;
  }
  function computeHere(job) {
    var b = job.b, Q = job.Q, K = job.K;
    var batched = shapeOf(Q).length === 3, Qs = batched ? Q : [Q], Ks = batched ? K : [K];
    var d = Qs[0][0].length, scale = typeof b.scale === 'number' ? b.scale : 1 / Math.sqrt(d);
    var hid = hiddenOf(b, 1), out = [];
    for (var e = 0; e < Qs.length; e++) {
      var hidden = hid ? hid(e, 0) : null, W = [];
      for (var i = 0; i < Qs[e].length; i++) {
        var q = Qs[e][i], row = new Array(Ks[e].length), mx = -Infinity, sum = 0;
        for (var j = 0; j < Ks[e].length; j++) {
          if (hidden && hidden(i, j)) { row[j] = null; continue; }
          var k = Ks[e][j], s = 0;
          for (var c = 0; c < d; c++) s += q[c] * k[c];
          row[j] = s * scale;
          if (row[j] > mx) mx = row[j];
        }
        for (j = 0; j < row.length; j++) if (row[j] !== null) { row[j] = Math.exp(row[j] - mx); sum += row[j]; }
        for (j = 0; j < row.length; j++) row[j] = row[j] === null || !(sum > 0) ? 0 : row[j] / sum;
        W.push(row);
      }
      out.push(W);
    }
    showHeatmap(job.path, batched ? out : out[0], labelsOf(b), b);
    $('heatmap').setAttribute('data-drawn', 'here');
    setStatus($('status'), true, job.path + ' — computed in the page; attnd\'s answer follows when the control rests');
  }

  /* ------------------------------------------------------------------ */
  /* The Nadaraya–Watson tab                                             */
  /* ------------------------------------------------------------------ */

  var SERIES = {
    truth: { name: 'true f(x)', colour: '#000000', dash: null, width: 3 },
    constant: { name: 'average', colour: '#e69f00', dash: '10 6', width: 3 },
    gaussian: { name: 'w = 1', colour: '#009e73', dash: '3 5', width: 3.5 },
    fitted: { name: 'fitted w', colour: '#0072b2', dash: null, width: 3.5 }
  };
  var nwState = null;
  /* The form input behind each field a problem may point at. */
  var NW_INPUTS = { '/n_train': 'nw-n', '/noise': 'nw-noise', '/seed': 'nw-seed', '/fit/epochs': 'nw-epochs', '/fit/lr': 'nw-lr' };

  function linePath(xs, ys, sx, sy) {
    return xs.map(function (x, i) { return (i ? 'L' : 'M') + r2(sx(x)) + ' ' + r2(sy(ys[i])); }).join(' ');
  }

  /* A line chart frame: returns {root, sx, sy, plot} for the domain. */
  function chart(width, height, x0, x1, y0, y1, xLabel, yLabel, xTicks, right) {
    var m = { l: 66, r: right || 14, t: 12, b: 54 };
    var root = svg('svg', { viewBox: '0 0 ' + width + ' ' + height, width: width, height: height, role: 'img' });
    var sx = function (x) { return m.l + (x - x0) / (x1 - x0) * (width - m.l - m.r); };
    var sy = function (y) { return height - m.b - (y - y0) / (y1 - y0) * (height - m.t - m.b); };
    var axes = svg('g', { 'font-size': 19, class: 'axes' });
    axes.appendChild(svg('rect', { x: m.l, y: m.t, width: width - m.l - m.r, height: height - m.t - m.b, fill: '#ffffff', stroke: '#000000' }));
    (xTicks || niceTicks(x0, x1, 6)).forEach(function (t) {
      axes.appendChild(svg('line', { x1: r2(sx(t)), y1: height - m.b, x2: r2(sx(t)), y2: height - m.b + 6, stroke: '#000' }));
      axes.appendChild(svg('text', { x: r2(sx(t)), y: height - m.b + 25, 'text-anchor': 'middle' }, label(t)));
    });
    niceTicks(y0, y1, 5).forEach(function (t) {
      if (t < y0 || t > y1) return;
      axes.appendChild(svg('line', { x1: m.l, y1: r2(sy(t)), x2: width - m.r, y2: r2(sy(t)), stroke: '#e3e5e8' }));
      axes.appendChild(svg('text', { x: m.l - 8, y: r2(sy(t) + 6), 'text-anchor': 'end' }, label(t)));
    });
    axes.appendChild(svg('text', { x: r2((m.l + width - m.r) / 2), y: height - 6, 'text-anchor': 'middle', 'font-size': 20 }, xLabel));
    axes.appendChild(svg('text', { x: 0, y: 0, 'text-anchor': 'middle', 'font-size': 20, transform: 'translate(18,' + r2((m.t + height - m.b) / 2) + ') rotate(-90)' }, yLabel));
    root.appendChild(axes);
    return { root: root, sx: sx, sy: sy, m: m, width: width, height: height };
  }

  function drawNwPlot(d, fits) {
    var ys = d.y_train.concat(d.y_truth);
    Object.keys(fits).forEach(function (k) { ys = ys.concat(fits[k].predictions); });
    var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys), pad = (hi - lo) * 0.06;
    var c = chart(820, 420, 0, 5, lo - pad, hi + pad, 'x', 'y', [0, 1, 2, 3, 4, 5], 215);
    var curves = svg('g', { class: 'curves', fill: 'none', 'stroke-linejoin': 'round' });
    function curve(key, ysOf) {
      var s = SERIES[key];
      curves.appendChild(svg('path', { class: 'curve ' + key, d: linePath(d.x_test, ysOf, c.sx, c.sy), stroke: s.colour, 'stroke-width': s.width, 'stroke-dasharray': s.dash }));
    }
    curve('truth', d.y_truth);
    ['constant', 'gaussian', 'fitted'].forEach(function (k) { if (fits[k]) curve(k, fits[k].predictions); });
    c.root.appendChild(curves);
    var pts = svg('g', { class: 'train-points' });
    d.x_train.forEach(function (x, i) {
      pts.appendChild(svg('circle', { class: 'train-point', 'data-x': x, 'data-y': d.y_train[i], cx: r2(c.sx(x)), cy: r2(c.sy(d.y_train[i])), r: 4.5, fill: '#ffffff', stroke: '#d55e00', 'stroke-width': 2.2 }));
    });
    c.root.appendChild(pts);
    /* legend, right of the plot */
    var lg = svg('g', { class: 'legend', 'font-size': 19 }), lx = c.width - 196, ly = 28;
    lg.appendChild(svg('circle', { cx: lx + 14, cy: ly, r: 4.5, fill: '#ffffff', stroke: '#d55e00', 'stroke-width': 2.2 }));
    lg.appendChild(svg('text', { x: lx + 38, y: ly + 6 }, 'training data'));
    ['truth', 'constant', 'gaussian', 'fitted'].forEach(function (k, i) {
      var s = SERIES[k], y = ly + 30 * (i + 1);
      lg.appendChild(svg('line', { x1: lx, y1: y, x2: lx + 28, y2: y, stroke: s.colour, 'stroke-width': s.width, 'stroke-dasharray': s.dash }));
      lg.appendChild(svg('text', { x: lx + 38, y: y + 6 }, s.name + (k === 'fitted' && fits.fitted ? ' = ' + Number(fits.fitted.w).toFixed(2) : '')));
    });
    c.root.appendChild(lg);
    c.root.setAttribute('aria-label', 'Nadaraya–Watson regression: ' + d.x_train.length + ' training points, the true curve f(x) = 2 sin x + x^0.8 and the predictions of ' +
      ['constant', 'gaussian', 'fitted'].filter(function (k) { return fits[k]; }).map(function (k) { return SERIES[k].name + ' (test loss ' + shownNumber(fits[k].loss) + ')'; }).join(', '));
    clear($('nw-plot')).appendChild(c.root);
  }

  function drawNwHeat() {
    if (!nwState) return;
    var pick = document.querySelector('input[name="nw-heat"]:checked').value, f = nwState.fits[pick];
    var box = clear($('nw-heat'));
    if (!f) return;
    box.appendChild(heatmap([{ label: SERIES[pick].name, m: f.weights }], {
      title: 'Nadaraya–Watson weights', xLabel: 'Keys: training x (sorted)', yLabel: 'Queries: test x', grid: 300,
      onHover: function (t) { $('nw-status').textContent = t; }
    }));
  }

  function drawNwLoss(history) {
    var E = history.length, losses = history.map(function (h) { return h.loss; });
    var lo = Math.min.apply(null, losses), hi = Math.max.apply(null, losses), pad = (hi - lo) * 0.15 || Math.abs(hi) * 0.05 || 1;
    var xt = niceTicks(1, Math.max(E, 2), Math.min(E, 6)).filter(function (t) { return t >= 1 && t <= E && t === Math.round(t); });
    var c = chart(820, 200, 0.7, E + 0.3, lo - pad, hi + pad, 'epoch', 'loss', xt, 215);
    c.root.appendChild(svg('path', { class: 'loss-line', d: linePath(history.map(function (h) { return h.epoch; }), losses, c.sx, c.sy), fill: 'none', stroke: '#0072b2', 'stroke-width': 3 }));
    var pts = svg('g', { class: 'loss-points' });
    history.forEach(function (h) {
      pts.appendChild(svg('circle', { class: 'loss-point', cx: r2(c.sx(h.epoch)), cy: r2(c.sy(h.loss)), r: 5, fill: '#0072b2' },
        svg('title', null, 'epoch ' + h.epoch + ': w ' + num(h.w) + ', loss ' + num(h.loss))));
    });
    c.root.appendChild(pts);
    c.root.setAttribute('aria-label', 'The fit\'s training loss per epoch: ' + history.map(function (h) { return 'epoch ' + h.epoch + ' ' + shownNumber(h.loss); }).join(', '));
    clear($('nw-loss')).appendChild(c.root);
  }

  function drawNwNumbers(fits, epochs, lr) {
    var table = el('table', null, el('tr', null, el('th', null, 'model'), el('th', null, 'w'), el('th', null, 'test loss')));
    ['constant', 'gaussian', 'fitted'].forEach(function (k) {
      var f = fits[k];
      table.appendChild(el('tr', { 'data-model': k },
        el('td', null, el('span', { class: 'swatch', style: 'border-color:' + SERIES[k].colour }), SERIES[k].name),
        el('td', { class: 'num', 'data-field': 'w' }, k === 'constant' ? '—' : num(f.w)),
        el('td', { class: 'num', 'data-field': 'loss' }, num(f.loss))));
    });
    var box = clear($('nw-numbers'));
    box.appendChild(el('div', { style: 'font-weight:bold;margin-bottom:4px' }, 'Test loss ½Σ(ŷ − f(x))² over the ' + nwState.data.x_test.length + ' test points'));
    box.appendChild(table);
    box.appendChild(el('p', { style: 'margin:6px 0 0' }, 'w fitted from 1 by ' + epochs + ' gradient step' + (epochs === 1 ? '' : 's') +
      ' (lr ' + lr + ') on the leave-one-out training loss, as d2l 11.2 trains it.'));
  }

  /* The Gaussian kernel's w from its slider (note 1 section 8: larger w,
   * narrower attention and a more flexible curve). */
  function nwW() { return Number((+$('nw-w').value).toFixed(1)); }
  var nwTimer = null, nwBusy = false, nwPending = false;
  /* The slider moved: the Gaussian curve, its weights and its test loss
   * again for the new w (one request per pause). */
  function nwSlide() {
    $('nw-w-out').textContent = 'w = ' + nwW();
    clearTimeout(nwTimer);
    nwTimer = setTimeout(nwRefit, 150);
  }
  function nwRefit() {
    if (!nwState) return;
    if (nwBusy) { nwPending = true; return; }
    nwBusy = true;
    var w = nwW();
    call('POST', '/regression/nw', JSON.stringify(Object.assign({ w: w }, nwState.base))).then(function (r) {
      if (r.status !== 200 || !r.json) throw r;
      nwState.fits.gaussian = r.json;
      SERIES.gaussian.name = 'w = ' + w;
      document.querySelector('input[name="nw-heat"][value="gaussian"]').parentNode.lastChild.textContent = ' w = ' + w;
      document.querySelector('input[name="nw-heat"][value="gaussian"]').checked = true;
      drawNwPlot(nwState.data, nwState.fits);
      drawNwHeat();
      drawNwNumbers(nwState.fits, nwState.epochs, nwState.lr);
      $('nw-plot').setAttribute('data-w', String(w));
      setStatus($('nw-status'), true, 'Gaussian kernel at w = ' + w);
    }).catch(function (r) {
      setStatus($('nw-status'), false, r && r.json ? r.json.status + ' ' + (r.json.detail || '') : 'failed');
    }).then(function () {
      nwBusy = false;
      if (nwPending) { nwPending = false; nwRefit(); }
    });
  }

  function runNw() {
    var n = +$('nw-n').value, noise = +$('nw-noise').value, seed = $('nw-seed').value.trim() || '0';
    var epochs = +$('nw-epochs').value, lr = +$('nw-lr').value, status = $('nw-status');
    $('nw-run').disabled = true;
    $('nw-problem').hidden = true;
    $('nw-problem').removeAttribute('data-input');
    setStatus(status, true, 'Generating…');
    var q = '?n_train=' + encodeURIComponent(n) + '&noise=' + encodeURIComponent(noise) + '&seed=' + encodeURIComponent(seed);
    return call('GET', '/regression/nw/dataset' + q).then(function (r) {
      if (r.status !== 200 || !r.json) throw r;
      var d = r.json;
      var base = { x_train: d.x_train, y_train: d.y_train, x_query: d.x_test, y_query: d.y_truth };
      var bodies = {
        constant: Object.assign({ kernel: 'constant' }, base),
        gaussian: Object.assign({ w: nwW() }, base),
        fitted: Object.assign({ w: 1, fit: { epochs: epochs, lr: lr, data: 'train_loo' } }, base)
      };
      var keys = Object.keys(bodies);
      return Promise.all(keys.map(function (k) { return call('POST', '/regression/nw', JSON.stringify(bodies[k])); })).then(function (rs) {
        var fits = {};
        rs.forEach(function (x, i) {
          if (x.status !== 200 || !x.json) throw x;
          fits[keys[i]] = x.json;
        });
        nwState = { data: d, fits: fits, base: base, epochs: epochs, lr: lr };
        SERIES.gaussian.name = 'w = ' + nwW();
        document.querySelector('input[name="nw-heat"][value="gaussian"]').parentNode.lastChild.textContent = ' w = ' + nwW();
        drawNwPlot(d, fits);
        drawNwHeat();
        drawNwLoss(fits.fitted.history);
        drawNwNumbers(fits, epochs, lr);
        setStatus(status, true, 'fitted w ' + Number(fits.fitted.w).toFixed(4));
      });
    }).catch(function (r) {
      var p = r && r.json ? r.json : null;
      setStatus(status, false, p ? p.status + ' ' + (p.title || '') : 'failed: ' + (r && r.message ? r.message : r && r.status));
      if (!p) return;
      /* the problem next to the input its pointer names */
      var box = clear($('nw-problem')), input = p.code === 'unauthorized' ? $('token') : $(NW_INPUTS[p.pointer]);
      box.appendChild(el('b', null, p.code || ''));
      if (p.pointer) box.appendChild(el('span', null, ' at ', el('code', null, p.pointer)));
      box.appendChild(el('div', { class: 'detail' }, p.detail || ''));
      box.hidden = false;
      if (input) {
        flagInput(input, p.detail || '');
        box.setAttribute('data-input', input.id);
      }
    }).then(function () { $('nw-run').disabled = false; });
  }

  /* ------------------------------------------------------------------ */
  /* The flow tab: note 2's self-attention figure (section 4.5) from the */
  /* trace, one connected diagram per route                              */
  /* ------------------------------------------------------------------ */

  /* Each route's diagram: nodes at (col, row) of a grid, and the edges
   * between them. A node's tensor comes from the request (`request`), the
   * drawn parameters (`param`: the request's, else the answer's
   * `params`) or the trace (`trace`); `perHead` nodes show the chosen
   * head; `op` says how a cell came about (explainCell). Formulas: note 2
   * sections 4.5 and 4.6, d2l 11.3 (dot, additive), 11.5 (multi-head),
   * 11.2 (Nadaraya–Watson); the members as docs/trace.md lists them. */
  var FLOWS = {
    '/attention/self': {
      nodes: [
        { id: 'X', key: 'x', src: 'request', col: 0, row: 1, what: 'the input, one row per token' },
        { id: 'W_Q', src: 'param', col: 1, row: 0, what: 'weights (d_model, d_k)' },
        { id: 'W_K', src: 'param', col: 1, row: 1, what: 'weights (d_model, d_k)' },
        { id: 'W_V', src: 'param', col: 1, row: 2, what: 'weights (d_model, d_k)' },
        { id: 'Q', src: 'trace', col: 2, row: 0, what: 'X · W_Q', op: { matmul: ['X', 'W_Q'] } },
        { id: 'K', src: 'trace', col: 2, row: 1, what: 'X · W_K', op: { matmul: ['X', 'W_K'] } },
        { id: 'V', src: 'trace', col: 2, row: 2, what: 'X · W_V', op: { matmul: ['X', 'W_V'] } },
        { id: 'QK', title: 'QKᵀ', src: 'trace', col: 3, row: 0, what: 'Q · Kᵀ', scores: true, op: { matmul: ['Q', 'K', 'T'] } },
        { id: 'scaled', src: 'trace', col: 4, row: 0, what: '÷ √d_k', scores: true, op: { scale: 'QK' } },
        { id: 'masked', src: 'trace', col: 5, row: 0, what: 'mask: −∞', scores: true, op: { mask: 'scaled' } },
        { id: 'weights', src: 'trace', col: 6, row: 0, what: 'softmax per row', scores: true, weights: true, op: { softmax: 'masked' } },
        { id: 'output', key: 'weighted_values', src: 'trace', col: 7, row: 1, what: 'weights · V', op: { matmul: ['weights', 'V'] } }
      ],
      edges: [['X', 'W_Q'], ['X', 'W_K'], ['X', 'W_V'], ['W_Q', 'Q'], ['W_K', 'K'], ['W_V', 'V'], ['Q', 'QK'], ['K', 'QK'],
        ['QK', 'scaled'], ['scaled', 'masked'], ['masked', 'weights'], ['weights', 'output'], ['V', 'output']]
    },
    '/attention/dot': {
      nodes: [
        { id: 'Q', key: 'queries', src: 'request', col: 0, row: 0, what: 'queries' },
        { id: 'K', key: 'keys', src: 'request', col: 0, row: 1, what: 'keys' },
        { id: 'V', key: 'values', src: 'request', col: 0, row: 2, what: 'values' },
        { id: 'QK', title: 'QKᵀ', src: 'trace', col: 1, row: 0, what: 'Q · Kᵀ', scores: true, op: { matmul: ['Q', 'K', 'T'] } },
        { id: 'scaled', src: 'trace', col: 2, row: 0, what: '× scale (÷ √d)', scores: true, op: { scale: 'QK' } },
        { id: 'masked', src: 'trace', col: 3, row: 0, what: 'mask: −∞', scores: true, op: { mask: 'scaled' } },
        { id: 'weights', src: 'trace', col: 4, row: 0, what: 'softmax per row', scores: true, weights: true, op: { softmax: 'masked' } },
        { id: 'output', key: 'weighted_values', src: 'trace', col: 5, row: 1, what: 'weights · V', op: { matmul: ['weights', 'V'] } }
      ],
      edges: [['Q', 'QK'], ['K', 'QK'], ['QK', 'scaled'], ['scaled', 'masked'], ['masked', 'weights'], ['weights', 'output'], ['V', 'output']]
    },
    '/attention/multihead': {
      nodes: [
        { id: 'queries', src: 'request', col: 0, row: 0, what: 'queries' },
        { id: 'keys', src: 'request', col: 0, row: 1, what: 'keys (queries when left out)', fallback: 'queries' },
        { id: 'values', src: 'request', col: 0, row: 2, what: 'values (keys when left out)', fallback: 'keys' },
        { id: 'W_q', src: 'param', col: 1, row: 0, what: 'Linear weight (h, dq)' },
        { id: 'W_k', src: 'param', col: 1, row: 1, what: 'Linear weight (h, dk)' },
        { id: 'W_v', src: 'param', col: 1, row: 2, what: 'Linear weight (h, dv)' },
        { id: 'Q', src: 'trace', col: 2, row: 0, what: 'queries · W_qᵀ + b_q', op: { matmul: ['queries', 'W_q', 'T'], bias: 'b_q' } },
        { id: 'K', src: 'trace', col: 2, row: 1, what: 'keys · W_kᵀ + b_k', op: { matmul: ['keys', 'W_k', 'T'], bias: 'b_k' } },
        { id: 'V', src: 'trace', col: 2, row: 2, what: 'values · W_vᵀ + b_v', op: { matmul: ['values', 'W_v', 'T'], bias: 'b_v' } },
        { id: 'Q_heads', title: 'Q, head', src: 'trace', perHead: true, col: 3, row: 0, what: 'the head\'s columns of Q', op: { split: 'Q' } },
        { id: 'K_heads', title: 'K, head', src: 'trace', perHead: true, col: 3, row: 1, what: 'the head\'s columns of K', op: { split: 'K' } },
        { id: 'V_heads', title: 'V, head', src: 'trace', perHead: true, col: 3, row: 2, what: 'the head\'s columns of V', op: { split: 'V' } },
        { id: 'QK', title: 'QKᵀ', src: 'trace', perHead: true, col: 4, row: 0, what: 'per head', scores: true, op: { matmul: ['Q_heads', 'K_heads', 'T'] } },
        { id: 'scaled', src: 'trace', perHead: true, col: 5, row: 0, what: '÷ √(h/H)', scores: true, op: { scale: 'QK' } },
        { id: 'masked', src: 'trace', perHead: true, col: 6, row: 0, what: 'mask: −∞', scores: true, op: { mask: 'scaled' } },
        { id: 'weights', src: 'trace', perHead: true, col: 7, row: 0, what: 'softmax per row', scores: true, weights: true, op: { softmax: 'masked' } },
        { id: 'weighted_values', title: 'weights · V', src: 'trace', perHead: true, col: 8, row: 1, what: 'per head', op: { matmul: ['weights', 'V_heads'] } },
        { id: 'concat', src: 'trace', col: 9, row: 1, what: 'the heads side by side', op: { concat: 'weighted_values' } },
        { id: 'W_o', src: 'param', col: 10, row: 2, what: 'Linear weight (d_out, h)' },
        { id: 'output', src: 'trace', col: 11, row: 1, what: 'concat · W_oᵀ + b_o', op: { matmul: ['concat', 'W_o', 'T'], bias: 'b_o' } }
      ],
      edges: [['queries', 'W_q'], ['keys', 'W_k'], ['values', 'W_v'], ['W_q', 'Q'], ['W_k', 'K'], ['W_v', 'V'],
        ['Q', 'Q_heads'], ['K', 'K_heads'], ['V', 'V_heads'], ['Q_heads', 'QK'], ['K_heads', 'QK'], ['QK', 'scaled'],
        ['scaled', 'masked'], ['masked', 'weights'], ['weights', 'weighted_values'], ['V_heads', 'weighted_values'],
        ['weighted_values', 'concat'], ['concat', 'output'], ['W_o', 'output']]
    },
    '/attention/additive': {
      nodes: [
        { id: 'queries', src: 'request', col: 0, row: 0, what: 'queries' },
        { id: 'keys', src: 'request', col: 0, row: 1, what: 'keys' },
        { id: 'values', src: 'request', col: 0, row: 2, what: 'values' },
        { id: 'W_q', src: 'param', col: 1, row: 0, what: '(h, dq)' },
        { id: 'W_k', src: 'param', col: 1, row: 1, what: '(h, dk)' },
        { id: 'Q', src: 'trace', col: 2, row: 0, what: 'queries · W_qᵀ', op: { matmul: ['queries', 'W_q', 'T'] } },
        { id: 'K', src: 'trace', col: 2, row: 1, what: 'keys · W_kᵀ', op: { matmul: ['keys', 'W_k', 'T'] } },
        { id: 'w_v', src: 'param', col: 3, row: 1, what: '(h)' },
        { id: 'scores', src: 'trace', col: 4, row: 0, what: 'w_vᵀ tanh(Q_i + K_j)', scores: true, op: { additive: ['Q', 'K', 'w_v'] } },
        { id: 'masked', src: 'trace', col: 5, row: 0, what: 'mask: −∞', scores: true, op: { mask: 'scores' } },
        { id: 'weights', src: 'trace', col: 6, row: 0, what: 'softmax per row', scores: true, weights: true, op: { softmax: 'masked' } },
        { id: 'output', key: 'weighted_values', src: 'trace', col: 7, row: 1, what: 'weights · values', op: { matmul: ['weights', 'values'] } }
      ],
      edges: [['queries', 'W_q'], ['keys', 'W_k'], ['W_q', 'Q'], ['W_k', 'K'], ['Q', 'scores'], ['K', 'scores'], ['w_v', 'scores'],
        ['scores', 'masked'], ['masked', 'weights'], ['weights', 'output'], ['values', 'output']]
    },
    '/regression/nw': {
      nodes: [
        { id: 'x_query', src: 'request', col: 0, row: 0, what: 'the queries', column: true },
        { id: 'x_train', src: 'request', col: 0, row: 1, what: 'the keys', row1: true },
        { id: 'distances', src: 'trace', col: 1, row: 0, what: 'x_query − x_train', op: { diff: ['x_query', 'x_train'] } },
        { id: 'scores', src: 'trace', col: 2, row: 0, what: 'the kernel', scores: true },
        { id: 'weights', src: 'trace', col: 3, row: 0, what: 'normalised per row', scores: true, weights: true, op: { normalise: 'scores' } },
        { id: 'y_train', src: 'request', col: 3, row: 1, what: 'the values', column: true },
        { id: 'predictions', src: 'trace', col: 4, row: 0, what: 'weights · y_train', column: true, op: { matmul: ['weights', 'y_train'] } }
      ],
      edges: [['x_query', 'distances'], ['x_train', 'distances'], ['distances', 'scores'], ['scores', 'weights'],
        ['weights', 'predictions'], ['y_train', 'predictions']]
    }
  };
  FLOWS['/attention/self'].example = {
    x: [[1.8, 0.4, 1.0, 2.2, 1.9, -1.0, 1.0, -0.2], [-0.1, 0.4, 0.1, 1.5, 0.8, 0.1, 0.4, 0.3],
      [1.5, -0.2, 0.3, -0.9, -2.6, 0.7, 0.9, -0.7], [2.3, -1.5, 0.0, -0.2, 1.5, 1.5, 0.2, 0.4]],
    d_k: 4, seed: 42
  };
  var flowState = null;
  var FLOW_MAX_CELLS = 65536, FLOW_MAX_SIDE = 256; /* attnd's figure's limits (flow_svg.h) */

  function flowNode(id) { return flowState && flowState.spec.nodes.filter(function (n) { return n.id === id; })[0]; }

  /* A node's matrix for the chosen example and head: rank 2, a vector
   * drawn as a column (or a row), null when absent. */
  function flowMatrix(id) {
    var f = flowState, n = flowNode(id);
    if (!n) return null;
    var key = n.key || n.id, t;
    if (n.src === 'request') t = f.body[key];
    else if (n.src === 'param') t = f.body[key] !== undefined ? f.body[key] : f.answer.params && f.answer.params[key];
    else t = f.trace[key];
    if ((t === undefined || t === null) && n.fallback) return flowMatrix(n.fallback);
    if (t === undefined || t === null) return null;
    var m = nested(t), rank = shapeOf(m).length;
    if (n.src !== 'param' && f.batched && rank >= 2 && (rank > 2 || !n.column) && Array.isArray(m[0])) m = m[f.b];
    if (n.perHead && Array.isArray(m)) m = m[f.h];
    if (!Array.isArray(m)) m = [[m]];
    else if (!Array.isArray(m[0])) m = n.row1 ? [m] : m.map(function (v) { return [v]; });
    return shapeOf(m).length === 2 ? m : null;
  }

  /* Trace the request: the editor's, or note 2 section 4.6's. A route the
   * flow cannot draw, or a body that is not JSON, is said so. */
  function flowRun(which) {
    var path, body;
    if (which === 'notes') { path = '/attention/self'; body = FLOWS[path].example; }
    else { path = $('endpoint').value; body = editorBody(); }
    var status = $('flow-status');
    $('flow-problem').hidden = true;
    clear($('flow-explain')).textContent = 'Click a cell of the figure to see how it came about.';
    if (!FLOWS[path] || !body) {
      flowProblem({
        title: 'Nothing to draw', detail: !FLOWS[path]
          ? 'The Flow tab draws requests to ' + Object.keys(FLOWS).join(', ') + '; the editor holds one to ' + path + '. Press "The notes\' example" for note 2 section 4.6\'s self-attention.'
          : 'The editor\'s request is not a JSON object yet: see the Request tab.'
      });
      return Promise.resolve();
    }
    /* the figure's limits, attnd's own (flow_svg.h): asked before the
     * trace, whose JSON grows as the square of the tokens */
    var tooLong = Object.keys(body).filter(function (k) {
      var sh = isTensor(body[k]) ? fieldShape(body[k]) : null;
      return sh && sh.slice(-2).some(function (n) { return n > FLOW_MAX_SIDE; });
    });
    if (typeof body.num_hiddens === 'number' && body.num_hiddens > FLOW_MAX_SIDE) tooLong.push('num_hiddens');
    if (tooLong.length) {
      flowProblem({
        title: 'Too large to draw', detail: tooLong.join(', ') + ' ' + (tooLong.length === 1 ? 'has' : 'have') + ' more than ' + FLOW_MAX_SIDE +
          ' entries along an axis; the figure draws at most ' + FLOW_MAX_SIDE + ' along a side of any tensor. Trace fewer tokens, or send it from the Request tab.'
      });
      return Promise.resolve();
    }
    body = Object.assign({}, body, { trace: true });
    setStatus(status, true, 'Tracing ' + path + '…');
    return call('POST', path, JSON.stringify(body)).then(function (r) {
      if (r.status !== 200 || !r.json) throw r;
      if (!r.json.trace || typeof r.json.trace !== 'object') {
        throw { json: { status: 200, title: 'No trace', detail: 'this attnd answered without a "trace" member: it does not trace ' + path + ' yet' } };
      }
      var main = path === '/attention/self' ? 'x' : path === '/regression/nw' ? null : 'queries';
      var batched = !!main && (fieldShape(body[main]) || []).length >= 3;
      flowState = { path: path, spec: FLOWS[path], body: body, answer: r.json, trace: r.json.trace, batched: batched, b: 0, h: 0 };
      var B = batched ? fieldShape(body[main])[0] : 1;
      fillSelect($('flow-example'), B, 'example ');
      $('flow-example-label').hidden = B < 2;
      var H = path === '/attention/multihead' ? body.num_heads : 1;
      fillSelect($('flow-head'), H, 'head ');
      $('flow-head-label').hidden = H < 2;
      drawFlow();
      setStatus(status, true, path + ': ' + Object.keys(r.json.trace).join(' → '));
    }).catch(function (r) {
      flowProblem(r && r.json ? r.json : { title: 'failed', detail: r && r.message });
    });
  }
  function flowProblem(p) {
    setStatus($('flow-status'), false, (p.status || '') + ' ' + (p.title || ''));
    var box = clear($('flow-problem'));
    box.appendChild(el('b', null, p.code || p.title || ''));
    if (p.pointer !== undefined) box.appendChild(el('span', null, ' at ', el('code', null, p.pointer || '(the body)')));
    box.appendChild(el('div', { class: 'detail' }, p.detail || ''));
    box.hidden = false;
  }
  function fillSelect(sel, n, prefix) {
    clear(sel);
    for (var i = 0; i < n; i++) sel.appendChild(el('option', { value: i }, prefix + i));
  }

  /* The diagram: one SVG, self-contained (every colour an attribute), so
   * that the download is the picture shown. Each node is a group of
   * cells (<rect class="cell" data-node data-i data-j>, its exact value
   * in a <title>), a caption (name, shape, formula) and edges between the
   * nodes; a node is a stop of the Tab key, and the arrow keys move over
   * its cells. */
  function drawFlow() {
    if (!flowState) return;
    var f = flowState, spec = f.spec, box = clear($('flow'));
    var mats = {}, maxDim = 1, cells = 0;
    spec.nodes.forEach(function (n) {
      var m = flowMatrix(n.id);
      if (m) { mats[n.id] = m; maxDim = Math.max(maxDim, m.length, m[0].length); cells += m.length * m[0].length; }
    });
    if (cells > FLOW_MAX_CELLS || maxDim > FLOW_MAX_SIDE) {
      flowProblem({ title: 'Too large to draw', detail: 'the figure would draw ' + cells + ' cells, ' + maxDim + ' along a side; it draws at most ' + FLOW_MAX_CELLS + ', ' + FLOW_MAX_SIDE + ' along a side (as attnd\'s own figure)' });
      return;
    }
    var c = Math.max(6, Math.min(30, 30 * 10 / Math.max(10, maxDim))), capH = 46, gapX = 54, gapY = 26, pad = 12;
    var ncol = 0, nrow = 0;
    spec.nodes.forEach(function (n) { ncol = Math.max(ncol, n.col + 1); nrow = Math.max(nrow, n.row + 1); });
    var colW = [], rowH = [];
    for (var i = 0; i < ncol; i++) colW.push(0);
    for (i = 0; i < nrow; i++) rowH.push(0);
    spec.nodes.forEach(function (n) {
      var m = mats[n.id];
      if (!m) return;
      colW[n.col] = Math.max(colW[n.col], m[0].length * c, 64, captionWidth(n, m));
      rowH[n.row] = Math.max(rowH[n.row], m.length * c + capH);
    });
    var colX = [], rowY = [], x = pad, y = pad;
    colW.forEach(function (w) { colX.push(x); x += w + gapX; });
    rowH.forEach(function (h) { rowY.push(y); y += h + gapY; });
    var W = x - gapX + pad, Hh = y - gapY + pad;
    /* a weight is masked where its score is: null (−∞) in `masked` */
    var maskedScores = mats.masked;
    var hiddenHere = maskedScores ? function (i, j) { return maskedScores[i] && maskedScores[i][j] === null; } : null;
    var root = svg('svg', { xmlns: SVGNS, viewBox: '0 0 ' + r2(W) + ' ' + r2(Hh), width: r2(W), height: r2(Hh), class: 'flow-figure', role: 'group', 'aria-label': 'Flow of ' + f.path + ': ' + spec.nodes.map(function (n) { return n.title || n.id; }).join(', '), 'font-family': 'DejaVu Sans, Arial, sans-serif' });
    root.appendChild(svg('title', null, 'The flow of ' + f.path + ' (note 2 section 4.5), from attnd\'s trace'));
    var defs = svg('defs');
    defs.appendChild(svg('marker', { id: 'flow-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#444444' })));
    defs.appendChild(maskedPattern('flow-masked', 8));
    root.appendChild(defs);
    var place = {};
    spec.nodes.forEach(function (n) {
      var m = mats[n.id];
      if (!m) return;
      var w = m[0].length * c, h = m.length * c;
      var nx = colX[n.col] + (colW[n.col] - w) / 2, ny = rowY[n.row] + capH + (rowH[n.row] - capH - h) / 2;
      place[n.id] = { x: nx, y: ny, w: w, h: h };
    });
    var edges = svg('g', { class: 'edges', fill: 'none', stroke: '#444444', 'stroke-width': 2 });
    spec.edges.forEach(function (e) {
      var a = place[e[0]], b = place[e[1]];
      if (!a || !b) return;
      var x1 = a.x + a.w + 3, y1 = a.y + a.h / 2, x2 = b.x - 4, y2 = b.y + b.h / 2, xm = Math.max(x1 + 10, x2 - 18);
      var d = Math.abs(y1 - y2) < 1 ? 'M' + r2(x1) + ' ' + r2(y1) + ' H' + r2(x2)
        : 'M' + r2(x1) + ' ' + r2(y1) + ' H' + r2(xm) + ' V' + r2(y2) + ' H' + r2(x2);
      edges.appendChild(svg('path', { d: d, 'marker-end': 'url(#flow-arrow)', 'data-from': e[0], 'data-to': e[1] }, svg('title', null, e[0] + ' → ' + e[1])));
    });
    root.appendChild(edges);
    spec.nodes.forEach(function (n) {
      var m = mats[n.id], p = place[n.id];
      if (!m) return;
      var lo = 0, hi = 0;
      m.forEach(function (row) { row.forEach(function (v) { if (v !== null) { if (v > hi) hi = v; if (v < lo) lo = v; } }); });
      var amp = Math.max(hi, -lo) || 1;
      var pal = n.weights ? palette : 'rdbu';
      var fillOf = function (v, i, j) {
        if (v === null || (n.weights && hiddenHere && hiddenHere(i, j))) return 'url(#flow-masked)';
        if (n.weights) return colour(stretchColours ? v / (hi || 1) : v, pal === 'rdbu' ? 'rdbu' : pal);
        return colour(0.5 + v / amp / 2, 'rdbu');
      };
      if (n.weights && pal === 'rdbu') fillOf = function (v, i, j) {
        return v === null || (hiddenHere && hiddenHere(i, j)) ? 'url(#flow-masked)' : colour(0.5 + v / 2, 'rdbu');
      };
      var shapeText = '(' + shapeOf(m).join(', ') + ')';
      var g = svg('g', { class: 'node', 'data-node': n.id, tabindex: 0, role: 'img', 'aria-label': (n.title || n.id) + ' ' + shapeText + ': ' + n.what + '. Arrow keys move over its cells, Enter explains one.' });
      g.appendChild(svg('text', { x: r2(p.x + p.w / 2), y: r2(p.y - capH + 18), 'text-anchor': 'middle', 'font-size': 16, 'font-weight': 'bold', fill: '#000000' },
        (n.title || n.id) + (n.perHead && f.body.num_heads > 1 ? ' ' + f.h : '') + ' ', svg('tspan', { 'font-weight': 'normal', 'font-size': 13 }, shapeText)));
      g.appendChild(svg('text', { x: r2(p.x + p.w / 2), y: r2(p.y - capH + 36), 'text-anchor': 'middle', 'font-size': 13, fill: '#333333' }, n.what));
      var cells = svg('g', { class: 'cells', 'shape-rendering': 'crispEdges' });
      var numbers = c >= 28 ? svg('g', { 'font-size': 10, 'text-anchor': 'middle', 'pointer-events': 'none' }) : null;
      m.forEach(function (row, i) {
        row.forEach(function (v, j) {
          var fill = fillOf(v, i, j);
          cells.appendChild(svg('rect', { class: 'cell', x: r2(p.x + j * c), y: r2(p.y + i * c), width: r2(c), height: r2(c), fill: fill, 'data-node': n.id, 'data-i': i, 'data-j': j, 'data-v': v === null ? 'null' : v },
            svg('title', null, (n.title || n.id) + '[' + i + '][' + j + '] = ' + num(v))));
          if (numbers) {
            var ink = fill.indexOf('url(') === 0 ? '#000000' : inkOn(hexRgb(fill));
            numbers.appendChild(svg('text', { x: r2(p.x + (j + 0.5) * c), y: r2(p.y + (i + 0.5) * c + 3.5), fill: ink }, v === null ? '−∞' : v.toFixed(2)));
          }
        });
      });
      g.appendChild(cells);
      if (numbers) g.appendChild(numbers);
      g.appendChild(svg('rect', { x: r2(p.x), y: r2(p.y), width: r2(p.w), height: r2(p.h), fill: 'none', stroke: '#000000', 'stroke-width': 1, 'pointer-events': 'none' }));
      var cursor = { i: 0, j: 0 };
      g.addEventListener('keydown', function (ev) {
        if (ev.key === 'ArrowRight') cursor.j = Math.min(m[0].length - 1, cursor.j + 1);
        else if (ev.key === 'ArrowLeft') cursor.j = Math.max(0, cursor.j - 1);
        else if (ev.key === 'ArrowDown') cursor.i = Math.min(m.length - 1, cursor.i + 1);
        else if (ev.key === 'ArrowUp') cursor.i = Math.max(0, cursor.i - 1);
        else if (ev.key !== 'Enter' && ev.key !== ' ') return;
        ev.preventDefault();
        explainCell(n.id, cursor.i, cursor.j);
      });
      g.addEventListener('focus', function () { flowMark(n.id, cursor.i, cursor.j, []); });
      root.appendChild(g);
    });
    root.addEventListener('click', function (ev) {
      var t = ev.target;
      if (t.classList && t.classList.contains('cell')) explainCell(t.getAttribute('data-node'), +t.getAttribute('data-i'), +t.getAttribute('data-j'));
    });
    root.addEventListener('mouseover', function (ev) {
      var t = ev.target;
      if (t.classList && t.classList.contains('cell')) $('flow-status').textContent = t.getAttribute('data-node') + '[' + t.getAttribute('data-i') + '][' + t.getAttribute('data-j') + '] = ' + shownNumber(Number(t.getAttribute('data-v')));
    });
    box.appendChild(root);
    /* the download: the same SVG, with its XML declaration */
    var link = $('flow-svg');
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob(['<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(root)], { type: 'image/svg+xml' }));
    link.download = f.path.replace(/^\//, '').replace(/\//g, '-') + '-flow.svg';
    link.hidden = false;
  }
  /* The width a node's caption needs: its name (bold, 16 units; a head's
   * number after it), shape and formula (13 units), counted in code
   * points as flow_svg.c counts them. */
  function captionWidth(n, m) {
    var chars = function (t) { return Array.from(t).length; };
    var shape = '(' + m.length + ', ' + m[0].length + ')';
    return Math.max(9.6 * (chars(n.title || n.id) + (n.perHead ? 3 : 1)) + 7.8 * chars(shape), 7.8 * chars(n.what)) + 8;
  }
  function hexRgb(h) { return [1, 3, 5].map(function (i) { return parseInt(h.slice(i, i + 2), 16); }); }

  /* Outline the clicked cell and its operands: [{node, row} | {node, col}
   * | {node, i, j}]. */
  function flowMark(id, i, j, operands) {
    var root = $('flow');
    root.querySelectorAll('.cell.operand, .cell.target').forEach(function (r) { r.classList.remove('operand', 'target'); });
    var hit = function (o, r) {
      var ri = +r.getAttribute('data-i'), rj = +r.getAttribute('data-j');
      return (o.row === undefined || o.row === ri) && (o.col === undefined || o.col === rj) && (o.i === undefined || (o.i === ri && o.j === rj));
    };
    operands.forEach(function (o) {
      root.querySelectorAll('.cell[data-node="' + o.node + '"]').forEach(function (r) { if (hit(o, r)) r.classList.add('operand'); });
    });
    var me = root.querySelector('.cell[data-node="' + id + '"][data-i="' + i + '"][data-j="' + j + '"]');
    if (me) me.classList.add('target');
  }

  /* n as the page prints a term: 4 significant digits. */
  function n4(x) { return x === null ? '−∞' : String(Number(x.toPrecision(4))); }
  function paren(x) { return x < 0 ? '(' + n4(x) + ')' : n4(x); }

  /* How cell (i, j) of node `id` came about, with the numbers, recomputed
   * here from the trace's own operands; its operands outlined. */
  function explainCell(id, i, j) {
    var f = flowState, n = flowNode(id), M = flowMatrix(id), op = n.op || {};
    var box = clear($('flow-explain')), lines = [], operands = [], computed = null;
    var value = M && M[i] ? M[i][j] : null;
    var get = function (name) { return flowMatrix(name); };
    var nameOf = function (name) { var k = flowNode(name); return k ? k.title || k.id : name; };
    if (op.matmul) {
      var A = get(op.matmul[0]), B = get(op.matmul[1]), T = op.matmul[2] === 'T';
      var bias = op.bias && f.body[op.bias] ? nested(f.body[op.bias]) : null;
      var terms = [], sum = 0;
      A[i].forEach(function (a, c) { var b = T ? B[j][c] : B[c][j]; terms.push(paren(a) + '×' + paren(b)); sum += a * b; });
      if (bias) { sum += bias[j]; terms.push(paren(bias[j])); }
      computed = sum;
      var An = nameOf(op.matmul[0]), Bn = nameOf(op.matmul[1]);
      lines.push(nameOf(id) + '[' + i + '][' + j + '] = row ' + i + ' of ' + An + ' · column ' + j + ' of ' + Bn + (T ? 'ᵀ (row ' + j + ' of ' + Bn + ')' : '') + (bias ? ' + ' + op.bias + '[' + j + ']' : ''));
      lines.push('= Σ_c ' + An + '[' + i + '][c]·' + Bn + (T ? '[' + j + '][c]' : '[c][' + j + ']') + (bias ? ' + ' + op.bias + '[' + j + ']' : ''));
      lines.push('= ' + terms.join(' + ') + ' = ' + n4(computed));
      operands.push({ node: op.matmul[0], row: i }, T ? { node: op.matmul[1], row: j } : { node: op.matmul[1], col: j });
    } else if (op.scale) {
      var S0 = get(op.scale), scale = typeof f.answer.scale === 'number' ? f.answer.scale : S0[i][j] ? value / S0[i][j] : 1;
      computed = S0[i][j] * scale;
      lines.push(nameOf(id) + '[' + i + '][' + j + '] = ' + nameOf(op.scale) + '[' + i + '][' + j + '] × scale = ' + paren(S0[i][j]) + ' × ' + n4(scale) + ' = ' + n4(computed));
      var dk = get(f.path === '/attention/multihead' ? 'Q_heads' : 'Q')[0].length;
      lines.push('1/√d_k = 1/√' + dk + ' = ' + n4(1 / Math.sqrt(dk)) + (Math.abs(scale - 1 / Math.sqrt(dk)) > 1e-12 ? '; this request set the scale ' + n4(scale) + ' (τ = ' + n4(1 / scale) + ')' : ', attnd\'s default'));
      operands.push({ node: op.scale, i: i, j: j });
    } else if (op.mask) {
      var S = get(op.mask);
      computed = value;
      lines.push(value === null ? nameOf(id) + '[' + i + '][' + j + '] = −∞: key ' + j + ' is hidden from query ' + i + ' (causal, valid_lens or attn_mask), so its weight is exactly 0'
        : value === S[i][j] ? nameOf(id) + '[' + i + '][' + j + '] = ' + nameOf(op.mask) + '[' + i + '][' + j + '] = ' + n4(value) + ' (key ' + j + ' is visible to query ' + i + ')'
          : nameOf(id) + '[' + i + '][' + j + '] = ' + nameOf(op.mask) + '[' + i + '][' + j + '] + the float attn_mask\'s entry = ' + paren(S[i][j]) + ' + ' + paren(value - S[i][j]) + ' = ' + n4(value));
      operands.push({ node: op.mask, i: i, j: j });
    } else if (op.softmax) {
      var row = get(op.softmax)[i], live = row.filter(function (x) { return x !== null; });
      var mx = Math.max.apply(null, live), exps = row.map(function (x) { return x === null ? 0 : Math.exp(x - mx); });
      var tot = exps.reduce(function (a, b) { return a + b; }, 0);
      computed = exps[j] / tot;
      lines.push(id + '[' + i + '][' + j + '] = softmax of row ' + i + ' of ' + nameOf(op.softmax) + ': exp(m[' + i + '][' + j + '] − max) / Σ_k exp(m[' + i + '][k] − max)');
      lines.push('row ' + i + ' = [' + row.map(n4).join(', ') + '], max = ' + n4(mx));
      lines.push('= exp(' + n4(row[j]) + ' − ' + n4(mx) + ') / (' + exps.map(n4).join(' + ') + ') = ' + n4(exps[j]) + ' / ' + n4(tot) + ' = ' + n4(computed));
      operands.push({ node: op.softmax, row: i });
    } else if (op.normalise) {
      var sr = get(op.normalise)[i], total = sr.reduce(function (a, b) { return a + b; }, 0);
      lines.push('weights[' + i + '][' + j + '] = scores[' + i + '][' + j + '] / Σ_k scores[' + i + '][k], after the kernel (a Gaussian: a softmax of −((x_query − x_train)·w)²/2)');
      computed = value;
      lines.push('row ' + i + ' of scores = [' + sr.map(n4).join(', ') + '] (sum ' + n4(total) + ')');
      operands.push({ node: op.normalise, row: i });
    } else if (op.split) {
      var full = get(op.split), dh = M[0].length;
      computed = full[i][f.h * dh + j];
      lines.push(id + '[' + i + '][' + j + '] of head ' + f.h + ' = ' + op.split + '[' + i + '][' + f.h + '·' + dh + ' + ' + j + '] = ' + n4(computed) + ' (d2l\'s transpose_qkv: head t takes features t·h/H … (t+1)·h/H − 1)');
      operands.push({ node: op.split, i: i, j: f.h * dh + j });
    } else if (op.concat) {
      var per = nested(f.trace.weighted_values), headsOf = f.batched ? per[f.b] : per, dhv = headsOf[0][0].length;
      var t = Math.floor(j / dhv);
      computed = headsOf[t][i][j % dhv];
      lines.push('concat[' + i + '][' + j + '] = head ' + t + '\'s weights · V, row ' + i + ', column ' + (j % dhv) + ' = ' + n4(computed) + (t !== f.h ? ' (pick head ' + t + ' to see it drawn)' : ''));
      if (t === f.h) operands.push({ node: op.concat, i: i, j: j % dhv });
    } else if (op.additive) {
      var Qa = get(op.additive[0]), Ka = get(op.additive[1]), wv = get(op.additive[2]).map(function (r) { return r[0]; });
      var tt = wv.map(function (w, cc) { return n4(w) + '·tanh(' + n4(Qa[i][cc]) + ' + ' + n4(Ka[j][cc]) + ')'; });
      computed = wv.reduce(function (a, w, cc) { return a + w * Math.tanh(Qa[i][cc] + Ka[j][cc]); }, 0);
      lines.push('scores[' + i + '][' + j + '] = Σ_c w_v[c]·tanh(Q[' + i + '][c] + K[' + j + '][c]) (d2l 11.3.3)');
      lines.push('= ' + tt.join(' + ') + ' = ' + n4(computed));
      operands.push({ node: op.additive[0], row: i }, { node: op.additive[1], row: j }, { node: op.additive[2] });
    } else if (op.diff) {
      var xq = get(op.diff[0]), xt = get(op.diff[1]);
      computed = xq[i][0] - xt[0][j];
      lines.push('distances[' + i + '][' + j + '] = x_query[' + i + '] − x_train[' + j + '] = ' + paren(xq[i][0]) + ' − ' + paren(xt[0][j]) + ' = ' + n4(computed));
      operands.push({ node: op.diff[0], row: i }, { node: op.diff[1], col: j });
    } else {
      lines.push(nameOf(id) + ' ' + (n.src === 'request' ? 'comes with the request' : n.src === 'param' ? 'is a parameter: the request\'s, or drawn from its seed (params)' : 'is ' + n.what) + '. Click a cell of a computed step to see its arithmetic.');
    }
    box.setAttribute('data-step', id);
    box.setAttribute('data-q', i);
    box.setAttribute('data-k', j);
    box.setAttribute('data-value', value === null ? 'null' : value);
    box.setAttribute('data-computed', computed === null ? 'null' : computed);
    box.appendChild(el('div', { class: 'explain-head' }, el('b', null, nameOf(id) + '[' + i + '][' + j + '] = ' + shownNumber(value)),
      computed !== null && value !== null ? ' (recomputed here: ' + n4(computed) + ')' : ''));
    lines.forEach(function (l) { box.appendChild(el('div', { class: 'explain-line mono' }, l)); });
    flowMark(id, i, j, operands);
  }

  /* ------------------------------------------------------------------ */
  /* The Transformer tab: weights per layer and head                     */
  /* ------------------------------------------------------------------ */

  /* A token's row of d numbers (two decimals), the same for the same
   * token: the source is a table of embeddings, as in d2l. */
  function embed(token, d) {
    var h = 0;
    for (var i = 0; i < token.length; i++) h = (h * 31 + token.charCodeAt(i)) % 100003;
    var row = [];
    for (var c = 0; c < d; c++) row.push(wiggle(h + c * 7 + 1));
    return row;
  }
  var tfState = null;
  function tfTokens(id) { return $(id).value.trim().split(/\s+/).filter(Boolean); }
  /* Run the chosen block (docs/transformer.md): the encoder's src, or the
   * decoder's tgt and memory, one embed() row per token; d_model is the
   * rows' length (the route checks it against src's last axis). */
  function tfRun() {
    var decoder = $('tf-block').value === 'decoder';
    var tokens = tfTokens('tf-tokens'), memory = decoder ? tfTokens('tf-memory') : null;
    var E = +$('tf-d-model').value, rows = function (ts) { return ts.map(function (t) { return embed(t, E); }); };
    /* what the page would build and draw, asked before it builds it */
    var T = tokens.length, S = decoder ? memory.length : T;
    var drawn = (+$('tf-layers').value) * (+$('tf-heads').value) * T * (T + (decoder ? S : 0));
    if (!(E * Math.max(T, S) <= (1 << 20)) || !(drawn <= DRAW_MAX_CELLS)) {
      $('tf-problem').hidden = false;
      clear($('tf-problem')).appendChild(el('b', null, 'Too large for the page'));
      $('tf-problem').appendChild(el('div', { class: 'detail' }, !(E * Math.max(T, S) <= (1 << 20))
        ? 'd_model ' + E + ' × ' + Math.max(T, S) + ' tokens is more than the page builds (' + (1 << 20) + ' numbers).'
        : 'the weights would be ' + drawn + ' cells (layers × heads × tokens²), more than the ' + DRAW_MAX_CELLS + ' a picture draws.'));
      return Promise.resolve();
    }
    var body = decoder ? { tgt: rows(tokens), memory: rows(memory) } : { src: rows(tokens) };
    Object.assign(body, {
      seed: +$('tf-seed').value, d_model: E, num_heads: +$('tf-heads').value,
      dim_feedforward: +$('tf-ff').value, num_layers: +$('tf-layers').value
    });
    /* the decoder's self-attention is causal unless told otherwise */
    if ($('tf-causal').checked) body.causal = true; else if (decoder) body.causal = false;
    if ($('tf-pe').checked) body.positional_encoding = true;
    var status = $('tf-status'), path = decoder ? '/transformer/decoder' : '/transformer/encoder';
    $('tf-problem').hidden = true;
    setStatus(status, true, 'Running…');
    return call('POST', path, JSON.stringify(body)).then(function (r) {
      if (r.status !== 200 || !r.json || !(decoder ? r.json.self_weights && r.json.cross_weights : r.json.weights)) throw r;
      tfState = { decoder: decoder, tokens: tokens, memory: memory, answer: r.json, causal: body.causal === true };
      drawTransformer();
      setStatus(status, true, path + ' — ' + describe(r));
    }).catch(function (r) {
      var p = r && r.json ? r.json : { title: 'failed', detail: r && r.message };
      setStatus(status, false, (p.status || '') + ' ' + (p.title || ''));
      var box = clear($('tf-problem'));
      box.appendChild(el('b', null, p.code || p.title || ''));
      if (p.pointer !== undefined) box.appendChild(el('span', null, ' at ', el('code', null, p.pointer || '(the body)')));
      box.appendChild(el('div', { class: 'detail' }, p.detail || ''));
      box.hidden = false;
    });
  }
  /* One layer × head grid of weights (L, H, Nq, Nk), or (L, B, H, Nq, Nk)
   * of which example 0 is drawn. */
  function tfGrid(weights, title, qLabels, kLabels, side, causal) {
    var w = nested(weights);
    if (shapeOf(w).length === 5) w = w.map(function (layer) { return layer[0]; });
    var panels = [];
    w.forEach(function (layer, l) {
      layer.forEach(function (m, h) { panels.push({ label: 'layer ' + l + ', head ' + h, m: m, hidden: causal ? function (q, k) { return k > q; } : null }); });
    });
    if (!panels.length) return null;
    var fig = el('figure', { class: 'tf-block', 'data-block': title, 'data-layers': w.length, 'data-heads': w[0].length },
      el('figcaption', null, el('b', null, title)));
    fig.appendChild(heatmap(panels, {
      title: title + ' weights', perRow: w[0].length, grid: side,
      labels: { queries: qLabels, keys: kLabels },
      onHover: function (t) { $('tf-readout').textContent = title + ' · ' + t; }
    }));
    return fig;
  }
  function drawTransformer() {
    if (!tfState) return;
    var t = tfState, a = t.answer, box = clear($('tf-grid'));
    /* the decoder's two grids side by side: smaller panels */
    var figs = t.decoder ? [tfGrid(a.self_weights, 'Decoder self-attention', t.tokens, t.tokens, 140, t.causal),
      tfGrid(a.cross_weights, 'Decoder cross-attention', t.tokens, t.memory, 140)]
      : [tfGrid(a.weights, 'Encoder self-attention', t.tokens, t.tokens, 220, t.causal)];
    figs.forEach(function (f) { if (f) box.appendChild(f); });
  }
  function tfBlockChanged() {
    var decoder = $('tf-block').value === 'decoder';
    $('tf-memory-label').hidden = !decoder;
    $('tf-causal').checked = decoder; /* each block's default */
  }

  /* ------------------------------------------------------------------ */
  /* The chapter: one card per topic, in d2l's order (chapter "Attention */
  /* Mechanisms") and the two notes'                                     */
  /* ------------------------------------------------------------------ */

  /* Put a request in the editor, open the Request tab and send it; the
   * card's line of what to notice goes above the answer. */
  function openRequest(path, body, lesson) {
    var sel = $('endpoint');
    if (!Array.prototype.some.call(sel.options, function (o) { return o.value === path; })) sel.appendChild(el('option', { value: path }, path));
    sel.value = path;
    fillExamplesOnly();
    var ex = $('example');
    ex.insertBefore(el('option', { value: -2 }, 'Chapter card: ' + lesson.title), ex.firstChild);
    ex.value = '-2';
    setEditorBody(JSON.parse(JSON.stringify(body)));
    syncControls();
    showLesson(lesson);
    showTab('request');
    return send();
  }
  function showLesson(lesson) {
    var box = clear($('lesson'));
    box.hidden = !lesson;
    if (!lesson) return;
    box.appendChild(el('span', null, el('b', null, lesson.title + '.'), lesson.notice));
    /* the keyboard and the screen reader go on from the card's line, and
     * a phone sees it */
    box.focus({ preventScroll: true });
    box.scrollIntoView({ block: 'start' });
  }

  var causalTokens = (function () {
    var words = ['the', 'cat', 'sat', 'on', 'the', 'mat'];
    var x = words.map(function (w, i) { return fill([4], function (c) { return wiggle((w === 'the' ? 0 : i + 1) * 4 + c[0] + 5); }); });
    return { queries: x, keys: x, values: x, causal: true, labels: { queries: words, keys: words } };
  })();
  /* 16 tokens of equal length 2.12 at different angles: a token's best
   * match is itself (score 4.5), its neighbours' 2.9 */
  var tempBody = (function () {
    var x = fill([16, 4], function (i) {
      var a = 2 * Math.PI * i[0] / 16 * (i[1] < 2 ? 1 : 3);
      return Math.round((i[1] % 2 ? Math.sin(a) : Math.cos(a)) * 150) / 100;
    });
    return { queries: x, keys: x, values: x };
  })();
  var maskScores = [[[0.91, 0.12, 0.55, 0.33], [0.27, 0.64, 0.08, 0.71]], [[0.45, 0.88, 0.19, 0.6], [0.02, 0.37, 0.93, 0.5]]];

  var CHAPTER = [
    {
      id: 'qkv', title: 'Queries, keys and values', where: 'd2l 11.1 · note 1 §1, §3',
      notice: 'Q = K = 30·I with scale 1: each query matches only its own key, so the weights are eye(10), a dark diagonal on white.',
      steps: [{ label: 'Open', run: function (c) { return openRequest('/attention/dot', { queries: eye(10, 30), keys: eye(10, 30), values: eye(10, 1), scale: 1 }, c); } }]
    },
    {
      id: 'nw', title: 'Attention pooling: Nadaraya–Watson', where: 'd2l 11.2 · note 1 §4–10',
      notice: 'Average pooling ignores x and draws a flat line; the Gaussian kernel follows the data; the learned w narrows the kernel. Drag w and watch the weights.',
      steps: [{ label: 'Open', run: function (c) { showLesson(c); nwStarted = true; showTab('nw'); return runNw(); } }]
    },
    {
      id: 'mask-example', title: 'Masked softmax: valid_lens per example', where: 'd2l 11.3.2 · note 1 §14',
      notice: 'valid_lens [2, 3]: example 0 keeps 2 keys and example 1 keeps 3; the rest are masked (hatched), their weight exactly 0, and each row still sums to 1.',
      steps: [{ label: 'Open', run: function (c) { return openRequest('/softmax/masked', { scores: maskScores, valid_lens: [2, 3] }, c); } }]
    },
    {
      id: 'mask-query', title: 'Masked softmax: valid_lens per query', where: 'd2l 11.3.2 · note 1 §14',
      notice: 'valid_lens [[1, 3], [2, 4]]: each query of each example has its own length, so the first row of example 0 puts all its weight on key 0.',
      steps: [{ label: 'Open', run: function (c) { return openRequest('/softmax/masked', { scores: maskScores, valid_lens: [[1, 3], [2, 4]] }, c); } }]
    },
    {
      id: 'dot-additive', title: 'Dot-product against additive attention', where: 'd2l 11.3.3–11.3.4 · note 1 §15–19',
      notice: 'd2l\'s toy: all keys equal, so both scorings spread the weight evenly over the valid keys and give the same outputs, [[2, 3, 4, 5]] and [[10, 11, 12, 13]] up to the last bit of rounding.',
      steps: [
        { label: 'Dot product', run: function (c) { return openRequest('/attention/dot', EXAMPLES[0].body, c); } },
        { label: 'Additive', run: function (c) { return openRequest('/attention/additive', EXAMPLES[5].body, c); } }
      ]
    },
    {
      id: 'temperature', title: 'The scale as a temperature', where: 'd2l 11.3.3 · note 2 §4.3–4.4',
      notice: 'Drag τ: a larger τ divides the scores by more and flattens each row towards uniform (pale); a smaller τ sharpens it towards one key, each token\'s own (a dark diagonal).',
      steps: [{ label: 'Open', run: function (c) { return openRequest('/attention/dot', tempBody, c).then(function () { $('ctl-tau').focus(); }); } }]
    },
    {
      id: 'causal', title: 'Causal masks', where: 'd2l 11.7',
      notice: 'Each token sees itself and the tokens before it: the upper triangle is masked, so "cat" cannot look at "sat".',
      steps: [{ label: 'Open', run: function (c) { return openRequest('/attention/dot', causalTokens, c); } }]
    },
    {
      id: 'self', title: 'Self-attention, as note 2 writes it', where: 'd2l 11.6.1 · note 2 §4.5–4.6',
      notice: 'x (4 × 8), d_k 4, np.random.seed(42): W_Q, W_K and W_V turn the same x into Q, K and V. Click a cell to see its arithmetic.',
      steps: [{ label: 'Open', run: function (c) { showLesson(c); flowStarted = true; showTab('flow'); return flowRun('notes'); } }]
    },
    {
      id: 'multihead', title: 'Multi-head attention', where: 'd2l 11.5 · note 2 §4.7',
      notice: 'The same 6 tokens split into heads: change num_heads and each head attends in its own way, one panel per head.',
      steps: [{
        label: 'Open', run: function (c) {
          return openRequest('/attention/multihead', { queries: causalTokens.queries.map(function (r) { return r.concat(r.map(function (v) { return -v; })); }), num_heads: 2, num_hiddens: 8, seed: 0, labels: causalTokens.labels }, c);
        }
      }]
    },
    {
      id: 'positional', title: 'Positional encoding', where: 'd2l 11.6.3',
      notice: 'Each row is a position; columns come in pairs, a sine and a cosine of one frequency, and each pair is slower than the one before: columns 6 and 7, then 8 and 9, as d2l draws them.',
      steps: [{ label: 'Open', run: function (c) { showLesson(c); peStarted = true; showTab('pe'); return runPe(); } }]
    },
    {
      id: 'transformer', title: 'The Transformer encoder and decoder', where: 'd2l 11.7',
      notice: 'Layers in rows, heads in columns. The decoder masks its own future (causal) and attends to the memory through cross-attention.',
      steps: [
        { label: 'Encoder', run: function (c) { showLesson(c); $('tf-block').value = 'encoder'; tfBlockChanged(); tfStarted = true; showTab('transformer'); return tfRun(); } },
        { label: 'Decoder', run: function (c) { showLesson(c); $('tf-block').value = 'decoder'; tfBlockChanged(); tfStarted = true; showTab('transformer'); return tfRun(); } }
      ]
    }
  ];

  function drawChapter() {
    var list = clear($('cards'));
    CHAPTER.forEach(function (c, i) {
      var steps = el('div', { class: 'steps' });
      c.steps.forEach(function (s) {
        var b = el('button', { type: 'button', class: 'primary', 'data-card': c.id, 'aria-label': s.label + ': ' + c.title }, s.label);
        b.addEventListener('click', function () { s.run(c); });
        steps.appendChild(b);
      });
      list.appendChild(el('li', { class: 'card chapter-card', 'data-card': c.id },
        el('h2', null, (i + 1) + '. ' + c.title), el('p', { class: 'where' }, c.where), el('p', { class: 'notice' }, c.notice), steps));
    });
  }

  /* ------------------------------------------------------------------ */
  /* Positional encoding: GET /encoding/positional (d2l 11.6.3)          */
  /* ------------------------------------------------------------------ */

  var peState = null, peStarted = false;
  var PE_COLOURS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9'];
  function runPe() {
    var N = +$('pe-steps').value, D = +$('pe-d').value, status = $('pe-status');
    $('pe-problem').hidden = true;
    setStatus(status, true, 'Asking…');
    return call('GET', '/encoding/positional?num_steps=' + encodeURIComponent($('pe-steps').value) + '&d=' + encodeURIComponent($('pe-d').value)).then(function (r) {
      if (r.status !== 200 || !r.json || !r.json.P) throw r;
      peState = { P: nested(r.json.P), N: N, D: D };
      drawPe();
      setStatus(status, true, 'GET /encoding/positional — ' + describe(r));
    }).catch(function (r) {
      var p = r && r.json ? r.json : { title: 'failed', detail: r && r.message };
      setStatus(status, false, (p.status || '') + ' ' + (p.title || ''));
      var box = clear($('pe-problem'));
      box.appendChild(el('b', null, p.code || p.title || ''));
      if (p.pointer !== undefined) box.appendChild(el('span', null, ' at ', el('code', null, p.pointer)));
      box.appendChild(el('div', { class: 'detail' }, p.detail || ''));
      box.hidden = false;
    });
  }
  function peColumns(D) {
    return $('pe-cols').value.split(/[\s,]+/).filter(Boolean).map(Number)
      .filter(function (j) { return j === Math.floor(j) && j >= 0 && j < D; }).slice(0, PE_COLOURS.length);
  }
  function drawPe() {
    if (!peState) return;
    var P = peState.P, N = P.length, D = P[0].length, cols = peColumns(D);
    var xs = P.map(function (row, i) { return i; });
    var c = chart(720, 360, 0, Math.max(1, N - 1), -1.1, 1.1, 'position (row of P)', 'P[position, column]', null, 150);
    c.root.setAttribute('aria-label', 'Columns ' + cols.join(', ') + ' of P over ' + N + ' positions: sines and cosines, slower for higher columns');
    var lines = svg('g', { class: 'pe-lines', fill: 'none' });
    var lg = svg('g', { class: 'legend', 'font-size': 18 });
    cols.forEach(function (j, k) {
      lines.appendChild(svg('path', { class: 'pe-col', 'data-col': j, d: linePath(xs, P.map(function (row) { return row[j]; }), c.sx, c.sy), stroke: PE_COLOURS[k], 'stroke-width': 3, 'stroke-dasharray': k % 2 ? '8 5' : null }));
      lg.appendChild(svg('line', { x1: c.width - 130, y1: 30 + 28 * k, x2: c.width - 100, y2: 30 + 28 * k, stroke: PE_COLOURS[k], 'stroke-width': 3, 'stroke-dasharray': k % 2 ? '8 5' : null }));
      lg.appendChild(svg('text', { x: c.width - 92, y: 36 + 28 * k }, 'col ' + j));
    });
    c.root.appendChild(lines);
    c.root.appendChild(lg);
    clear($('pe-curves')).appendChild(c.root);
    var box = clear($('pe-heat'));
    box.appendChild(heatmap([{ label: '', m: P }], {
      title: 'Positional encoding P', signed: true, valueName: 'P', xLabel: 'encoding dimension (column)', yLabel: 'position (row)',
      width: box.clientWidth, onHover: function (t) { $('pe-readout').textContent = t.replace('query', 'position').replace('key', 'column'); }
    }));
  }

  /* ------------------------------------------------------------------ */
  /* Wiring                                                              */
  /* ------------------------------------------------------------------ */

  var nwStarted = false, flowStarted = false, tfStarted = false;
  var TABS = ['chapter', 'request', 'nw', 'flow', 'pe', 'transformer'];
  function showTab(name) {
    TABS.forEach(function (t) {
      $('tab-' + t).hidden = t !== name;
      $('tab-btn-' + t).setAttribute('aria-selected', String(t === name));
    });
    if (name === 'nw' && !nwStarted) {
      nwStarted = true;
      runNw();
    }
    if (name === 'flow' && !flowStarted) {
      flowStarted = true;
      flowRun('notes');
    }
    if (name === 'pe' && !peStarted) {
      peStarted = true;
      runPe();
    }
    if (name === 'transformer' && !tfStarted) {
      tfStarted = true;
      tfRun();
    }
  }

  function init() {
    editor = $('editor');
    backdrop = $('backdrop');
    fieldError = $('field-error');
    try { $('token').value = sessionStorage.getItem('attnd-token') || ''; } catch (e) { /* storage off */ }
    $('token').addEventListener('input', function () {
      try { sessionStorage.setItem('attnd-token', $('token').value); } catch (e) { /* storage off */ }
    });
    var syncTimer = null;
    editor.addEventListener('input', function () {
      if (mark) clearMark(); else renderBackdrop();
      clearTimeout(syncTimer);
      syncTimer = setTimeout(syncControls, 250);
    });
    editor.addEventListener('scroll', syncScroll);
    editor.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); send(); }
    });
    $('endpoint').addEventListener('change', fillExamples);
    $('example').addEventListener('change', loadExample);
    $('send').addEventListener('click', function () { send(); });
    $('send-svg').addEventListener('click', function () { send('image/svg+xml'); });
    $('format').addEventListener('click', function () {
      var text = prettyText(editor.value);
      if (text !== null) {
        editor.value = text;
        clearMark();
        return;
      }
      try { JSON.parse(editor.value); } catch (e) {
        showProblem({ title: 'Not JSON yet', detail: e.message });
      }
    });
    TABS.forEach(function (t) {
      $('tab-btn-' + t).addEventListener('click', function () { history.replaceState(null, '', '#' + t); showLesson(null); showTab(t); });
    });
    function redrawAll() {
      if (lastAnswer) showHeatmap(lastAnswer.path, lastAnswer.json.weights, lastAnswer.labels, lastAnswer.body);
      drawNwHeat();
      drawFlow();
      drawPe();
      drawTransformer();
    }
    $('palette').addEventListener('change', function () {
      palette = $('palette').value;
      try { sessionStorage.setItem('attnd-palette', palette); } catch (e) { /* storage off */ }
      redrawAll();
    });
    $('stretch').addEventListener('change', function () { stretchColours = $('stretch').checked; redrawAll(); });
    $('exact').addEventListener('change', function () { exactDigits = $('exact').checked; redrawAll(); });
    $('presenter').addEventListener('click', function () {
      var on = !document.body.classList.contains('presenter');
      document.body.classList.toggle('presenter', on);
      $('presenter').setAttribute('aria-pressed', String(on));
      redrawAll();
    });
    window.addEventListener('resize', function () {
      clearTimeout(redrawAll.timer);
      redrawAll.timer = setTimeout(redrawAll, 200);
    });
    $('flow-self').addEventListener('click', function () { flowRun('notes'); });
    $('pe-form').addEventListener('submit', function (ev) { ev.preventDefault(); runPe(); });
    $('ctl-heads').addEventListener('change', function () { controlChanged('heads'); });
    $('ctl-tau').addEventListener('input', function () { controlChanged('tau'); });
    $('ctl-scale-reset').addEventListener('click', function () { controlChanged('scale-reset'); });
    $('ctl-causal').addEventListener('change', function () { controlChanged('causal'); });
    $('ctl-lens').addEventListener('change', function () { controlChanged('lens'); });
    $('ctl-mask').addEventListener('change', function () { controlChanged('mask'); });
    $('ctl-lens-n').addEventListener('input', function () { controlChanged('lens-n'); });
    $('nw-w').addEventListener('input', nwSlide);
    $('flow-run').addEventListener('click', function () { flowRun(); });
    $('flow-example').addEventListener('change', function () { flowState.b = +$('flow-example').value; drawFlow(); });
    $('flow-head').addEventListener('change', function () { flowState.h = +$('flow-head').value; drawFlow(); });
    $('tf-form').addEventListener('submit', function (ev) { ev.preventDefault(); tfRun(); });
    $('tf-block').addEventListener('change', tfBlockChanged);
    $('nw-form').addEventListener('submit', function (ev) { ev.preventDefault(); runNw(); });
    document.querySelectorAll('input[name="nw-heat"]').forEach(function (r) { r.addEventListener('change', drawNwHeat); });

    fillEndpoints();
    $('endpoint').value = '/regression/nw';
    fillExamples();
    try { palette = sessionStorage.getItem('attnd-palette') || 'reds'; } catch (e) { palette = 'reds'; }
    if (!PALETTES[palette]) palette = 'reds';
    $('palette').value = palette;
    drawChapter();
    showTab(TABS.indexOf(location.hash.slice(1)) >= 0 ? location.hash.slice(1) : 'chapter');

    /* The routes this server has, and the fields each takes, from its
     * OpenAPI document; asked again a second later, up to three times,
     * while a busy server or a class's rate limit turns it away (503,
     * 429), for without it the page offers no controls. */
    function loadRoutes(tries) {
      return call('GET', '/openapi.json').then(function (r) {
        if ((r.status !== 429 && r.status !== 503) || tries <= 1) return r;
        return new Promise(function (later) { setTimeout(later, 1000); })
          .then(function () { return loadRoutes(tries - 1); });
      });
    }
    loadRoutes(4).then(function (r) {
      if (!r.json || !r.json.paths) return;
      readRoutes(r.json.paths);
      if (!available.length) return;
      var keep = $('endpoint').value, ex = $('example').value, known = exampleRoutes();
      routes = known.filter(function (p) { return available.indexOf(p) >= 0; })
        .concat(available.filter(function (p) { return known.indexOf(p) < 0; }));
      fillEndpoints();
      if (keep !== $('endpoint').value) fillExamples();
      else {
        $('example').value = ex;
        syncControls();
      }
      document.body.setAttribute('data-routes', routes.join(' '));
    }).catch(function () { /* keep the examples' routes */ }).then(function () {
      document.body.setAttribute('data-ready', '1');
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
