/*
 * lab.js — the attnd lab: edit a JSON request for any POST route, send it,
 * and see the answer, the attention weights as heatmaps (keys on x, queries
 * on y, one panel per batch example and head, a colour bar), and problems
 * next to the field their RFC 6901 pointer names; plus Nadaraya–Watson
 * regression on the textbook's dataset (d2l 11.2): the data, the true
 * curve, average pooling, the Gaussian kernel at w = 1 and with w fitted,
 * the weights over the test grid, and the fit's loss per epoch.
 * Plain browser JavaScript, no libraries; every request goes to the attnd
 * that served the page, with "Authorization: Bearer" when a token is set.
 */
(function () {
  'use strict';

  var SVGNS = 'http://www.w3.org/2000/svg';
  var CLIENT_MAX_SIDE = 128; /* cells per panel axis drawn in the page */

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
  /* One-line JSON cut after `limit` characters. */
  function compact(v, limit) {
    var s = oneLine(v);
    return s.length > limit ? s.slice(0, limit) + ' …' : s;
  }
  /* Pretty JSON of a parsed value, for the editor and the response. */
  function pretty(v) { return prettyText(JSON.stringify(v)); }

  /* ------------------------------------------------------------------ */
  /* Colours: matplotlib's "Reds" (d2l's show_heatmaps), as attnd draws   */
  /* ------------------------------------------------------------------ */
  var REDS = [[0xff, 0xf5, 0xf0], [0xfe, 0xe0, 0xd2], [0xfc, 0xbb, 0xa1],
    [0xfc, 0x92, 0x72], [0xfb, 0x6a, 0x4a], [0xef, 0x3b, 0x2c],
    [0xcb, 0x18, 0x1d], [0xa5, 0x0f, 0x15], [0x67, 0x00, 0x0d]];
  function colour(t) {
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    var pos = t * 8, i = Math.min(7, Math.floor(pos)), f = pos - i, hex = '#';
    for (var c = 0; c < 3; c++) {
      var v = Math.floor(REDS[i][c] + f * (REDS[i + 1][c] - REDS[i][c]) + 0.5);
      hex += (v < 16 ? '0' : '') + v.toString(16);
    }
    return hex;
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
    if (shape.length === 2) return [{ label: '', m: w }];
    if (shape.length === 3) {
      return w.map(function (m, i) { return { label: (heads ? 'head ' : 'example ') + i, m: m }; });
    }
    if (shape.length === 4) {
      w.forEach(function (ex, b) {
        ex.forEach(function (m, hd) { panels.push({ label: 'example ' + b + ', head ' + hd, m: m }); });
      });
      return panels;
    }
    return null;
  }

  /* Block-average an (Nq, Nk) matrix down to at most side × side. */
  function downsample(m, side) {
    var Nq = m.length, Nk = m[0].length, R = Math.min(Nq, side), C = Math.min(Nk, side);
    if (R === Nq && C === Nk) return { m: m, sampled: false };
    var out = [];
    for (var r = 0; r < R; r++) {
      var q0 = Math.floor(r * Nq / R), q1 = Math.floor((r + 1) * Nq / R), row = [];
      for (var c = 0; c < C; c++) {
        var k0 = Math.floor(c * Nk / C), k1 = Math.floor((c + 1) * Nk / C), sum = 0;
        for (var q = q0; q < q1; q++) for (var k = k0; k < k1; k++) sum += m[q][k];
        row.push(sum / ((q1 - q0) * (k1 - k0)));
      }
      out.push(row);
    }
    return { m: out, sampled: true };
  }

  /* An SVG heatmap of panels [{label, m: (Nq, Nk)}] with one colour scale
   * from 0 to the largest weight. opts: title, xLabel, yLabel, perRow, grid
 * (the longer grid side, 400 user units by default), onHover(text). */
  function heatmap(panels, opts) {
    opts = opts || {};
    var Nq = panels[0].m.length, Nk = panels[0].m[0].length;
    var vmax = 0;
    panels.forEach(function (p) {
      p.m.forEach(function (row) { row.forEach(function (v) { if (v > vmax) vmax = v; }); });
    });
    if (!(vmax > 0)) vmax = 1;
    var R = Math.min(Nq, CLIENT_MAX_SIDE), C = Math.min(Nk, CLIENT_MAX_SIDE);
    var cell = Math.min(40, (opts.grid || 400) / Math.max(R, C));
    var gw = cell * C, gh = cell * R, left = 74, top = 30, bottom = 58;
    var pw = left + Math.max(gw, 120) + 24, ph = top + Math.max(gh, 84) + bottom;
    var perRow = opts.perRow || Math.min(panels.length, 4);
    var rows = Math.ceil(panels.length / perRow);
    var barH = Math.max(gh, 160);
    var width = perRow * pw + 120, height = Math.max(rows * ph, top + barH + bottom) + 8;
    var root = svg('svg', { viewBox: '0 0 ' + r2(width) + ' ' + r2(height), width: r2(width), height: r2(height), role: 'img', class: 'weights-heatmap' });
    root.appendChild(svg('title', null, (opts.title || 'Attention weights') + ': ' + panels.length + ' panel' + (panels.length === 1 ? '' : 's') + ' of ' + Nq + ' × ' + Nk));
    var defs = svg('defs'), grad = svg('linearGradient', { id: 'lab-scale-' + (++heatmap.count), x1: 0, y1: 1, x2: 0, y2: 0 });
    for (var i = 0; i <= 8; i++) grad.appendChild(svg('stop', { offset: i / 8, 'stop-color': colour(i / 8) }));
    defs.appendChild(grad);
    root.appendChild(defs);

    panels.forEach(function (p, pi) {
      var d = downsample(p.m, CLIENT_MAX_SIDE), m = d.m;
      var g = svg('g', { class: 'panel', transform: 'translate(' + r2((pi % perRow) * pw) + ',' + r2(Math.floor(pi / perRow) * ph) + ')' });
      g.appendChild(svg('title', null, (p.label || 'weights') + ': ' + Nq + ' × ' + Nk +
        (d.sampled ? ', block-averaged to ' + m.length + ' × ' + m[0].length + ' cells' : '')));
      if (p.label || d.sampled) {
        g.appendChild(svg('text', { x: left, y: 20, 'font-size': 17, 'font-weight': 'bold' },
          (p.label || '') + (d.sampled ? (p.label ? ' ' : '') + '(block-averaged)' : '')));
      }
      var cells = svg('g', { class: 'cells', 'shape-rendering': 'crispEdges', transform: 'translate(' + left + ',' + top + ')' });
      m.forEach(function (row, r) {
        row.forEach(function (v, c) {
          cells.appendChild(svg('rect', {
            class: 'cell', x: r2(c * cell), y: r2(r * cell), width: r2(cell), height: r2(cell),
            fill: colour(v / vmax), 'data-panel': pi, 'data-q': r, 'data-k': c, 'data-v': v
          }));
        });
      });
      g.appendChild(cells);
      if (!d.sampled && cell >= 30 && Nq * Nk <= 256) {
        var vals = svg('g', { 'font-size': 13, 'text-anchor': 'middle', 'pointer-events': 'none' });
        m.forEach(function (row, r) {
          row.forEach(function (v, c) {
            vals.appendChild(svg('text', { x: r2(left + (c + 0.5) * cell), y: r2(top + (r + 0.5) * cell + 4.5), fill: v / vmax > 0.5 ? '#ffffff' : '#000000' }, v.toFixed(2)));
          });
        });
        g.appendChild(vals);
      }
      g.appendChild(svg('rect', { x: left, y: top, width: r2(gw), height: r2(gh), fill: 'none', stroke: '#000', 'stroke-width': 1 }));
      var ticks = svg('g', { 'font-size': 14 });
      var step = tickIndexStep(Nk);
      for (var k = 0; k < Nk; k += step) {
        var x = left + (k + 0.5) * gw / Nk;
        ticks.appendChild(svg('line', { x1: r2(x), y1: top + gh, x2: r2(x), y2: top + gh + 5, stroke: '#000' }));
        ticks.appendChild(svg('text', { x: r2(x), y: r2(top + gh + 20), 'text-anchor': 'middle' }, k));
      }
      step = tickIndexStep(Nq);
      for (var q = 0; q < Nq; q += step) {
        var y = top + (q + 0.5) * gh / Nq;
        ticks.appendChild(svg('line', { x1: left - 5, y1: r2(y), x2: left, y2: r2(y), stroke: '#000' }));
        ticks.appendChild(svg('text', { x: left - 8, y: r2(y + 5), 'text-anchor': 'end' }, q));
      }
      g.appendChild(ticks);
      g.appendChild(svg('text', { class: 'axis-title', x: r2(left + Math.max(gw, 120) / 2), y: r2(top + gh + 44), 'font-size': 17, 'text-anchor': 'middle' }, opts.xLabel || 'Keys'));
      g.appendChild(svg('text', { class: 'axis-title', x: 0, y: 0, 'font-size': 17, 'text-anchor': 'middle', transform: 'translate(20,' + r2(top + Math.max(gh, 84) / 2) + ') rotate(-90)' }, opts.yLabel || 'Queries'));
      root.appendChild(g);
    });

    /* colour bar */
    var bx = perRow * pw + 6, by = top;
    var bar = svg('g', { class: 'colorbar' });
    bar.appendChild(svg('rect', { x: bx, y: by, width: 22, height: r2(barH), fill: 'url(#' + grad.getAttribute('id') + ')', stroke: '#000' }));
    var vstep = tickStep(vmax);
    for (var t = 0; t * vstep <= vmax * (1 + 1e-9); t++) {
      var ty = by + barH - barH * t * vstep / vmax;
      bar.appendChild(svg('line', { x1: bx + 22, y1: r2(ty), x2: bx + 27, y2: r2(ty), stroke: '#000' }));
      bar.appendChild(svg('text', { x: bx + 30, y: r2(ty + 5), 'font-size': 14 }, label(t * vstep)));
    }
    bar.appendChild(svg('text', { x: 0, y: 0, 'font-size': 17, 'text-anchor': 'middle', transform: 'translate(' + (bx + 100) + ',' + r2(by + barH / 2) + ') rotate(-90)' }, 'weight'));
    root.appendChild(bar);

    if (opts.onHover) {
      root.addEventListener('mouseover', function (ev) {
        var c = ev.target;
        if (!c.classList || !c.classList.contains('cell')) return;
        var p = panels[+c.getAttribute('data-panel')];
        opts.onHover((p.label ? p.label + ' · ' : '') + 'query ' + c.getAttribute('data-q') +
          ' · key ' + c.getAttribute('data-k') + ' : ' + c.getAttribute('data-v'));
      });
    }
    return root;
  }
  heatmap.count = 0;
  function tickIndexStep(n) {
    var steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];
    for (var i = 0; i < steps.length; i++) if (Math.ceil(n / steps[i]) <= 10) return steps[i];
    return Math.ceil(n / 10);
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
    },
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
      path: '/attention/additive', name: "d2l toy: additive, num_hiddens 8",
      body: {
        queries: fill([2, 1, 20], function (i) { return wiggle(i[0] * 20 + i[2] + 7); }),
        keys: toyKeys, values: toyValues, valid_lens: [2, 6], num_hiddens: 8, seed: 0
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
      path: '/attention/multihead', name: 'Multi-head: 2 heads, valid_lens [3, 2]',
      body: {
        queries: fill([2, 4, 4], function (i) { return wiggle(i[0] * 16 + i[1] * 4 + i[2] + 11); }),
        keys: fill([2, 6, 4], function (i) { return wiggle(i[0] * 24 + i[1] * 4 + i[2] + 51); }),
        num_heads: 2, num_hiddens: 8, seed: 0, valid_lens: [3, 2]
      }
    }
  ];
  var KNOWN_ROUTES = ['/attention/dot', '/attention/additive', '/attention/multihead', '/softmax/masked', '/regression/nw'];
  var HEAD_ROUTES = { '/attention/multihead': true };

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
      backdrop.innerHTML = escapeHtml(text) + '\n ';
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

  var routes = KNOWN_ROUTES.slice();
  var available = null; /* POST paths the server lists, once known */

  function fillEndpoints() {
    var sel = $('endpoint'), keep = sel.value;
    clear(sel);
    routes.forEach(function (p) { sel.appendChild(el('option', { value: p }, p)); });
    sel.value = routes.indexOf(keep) >= 0 ? keep : routes[routes.length - 1] === '/regression/nw' ? '/regression/nw' : routes[0];
  }
  function examplesFor(path) { return EXAMPLES.filter(function (e) { return e.path === path; }); }
  function fillExamples() {
    var sel = $('example'), list = examplesFor($('endpoint').value);
    clear(sel);
    list.forEach(function (e, i) { sel.appendChild(el('option', { value: i }, e.name)); });
    if (!list.length) sel.appendChild(el('option', { value: -1 }, '(none: write your own)'));
    loadExample();
  }
  function loadExample() {
    var list = examplesFor($('endpoint').value), i = +$('example').value;
    editor.value = list[i] ? pretty(list[i].body) : '{\n  \n}';
    clearMark();
  }

  function setStatus(node, ok, text) {
    node.className = node.className.replace(/\b(ok|bad)\b/g, '').trim() + ' ' + (ok ? 'ok' : 'bad');
    node.textContent = text;
  }
  function describe(r) {
    var parts = [r.status + ' ' + (r.statusText || '')];
    var m = /dur=([0-9.]+)/.exec(r.timing || '');
    if (m) parts.push('compute ' + m[1] + ' ms');
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

  function showHeatmap(path, weights) {
    var box = clear($('heatmap'));
    if (!weights) return;
    var panels = panelsOf(weights, HEAD_ROUTES[path]);
    if (!panels || !panels.length || !panels[0].m.length) return;
    box.appendChild(heatmap(panels, {
      title: path + ' weights', perRow: HEAD_ROUTES[path] && shapeOf(nested(weights)).length === 4 ? shapeOf(nested(weights))[1] : undefined,
      onHover: function (t) { $('readout').textContent = t; }
    }));
    $('readout').textContent = 'Hover a cell for its weight. Darker = more attention.';
  }

  var busy = false;
  function send(accept) {
    if (busy) return;
    var path = $('endpoint').value, body = editor.value;
    busy = true;
    $('send').disabled = $('send-svg').disabled = true;
    clearMark();
    $('problem').hidden = true;
    setStatus($('status'), true, 'Sending…');
    call('POST', path, body, accept).then(function (r) {
      $('status').setAttribute('data-status', r.status);
      setStatus($('status'), r.status < 300, path + ' — ' + describe(r));
      if (r.blob) {
        var url = URL.createObjectURL(r.blob);
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
      showSummary(path, r.json);
      showHeatmap(path, r.json.weights);
    }).catch(function (e) {
      setStatus($('status'), false, 'The request failed: ' + e.message);
    }).then(function () {
      busy = false;
      $('send').disabled = $('send-svg').disabled = false;
    });
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
        gaussian: Object.assign({ w: 1 }, base),
        fitted: Object.assign({ w: 1, fit: { epochs: epochs, lr: lr, data: 'train_loo' } }, base)
      };
      var keys = Object.keys(bodies);
      return Promise.all(keys.map(function (k) { return call('POST', '/regression/nw', JSON.stringify(bodies[k])); })).then(function (rs) {
        var fits = {};
        rs.forEach(function (x, i) {
          if (x.status !== 200 || !x.json) throw x;
          fits[keys[i]] = x.json;
        });
        nwState = { data: d, fits: fits };
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
  /* Wiring                                                              */
  /* ------------------------------------------------------------------ */

  var nwStarted = false;
  function showTab(name) {
    ['request', 'nw'].forEach(function (t) {
      $('tab-' + t).hidden = t !== name;
      $('tab-btn-' + t).setAttribute('aria-selected', String(t === name));
    });
    if (name === 'nw' && !nwStarted) {
      nwStarted = true;
      runNw();
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
    editor.addEventListener('input', function () { if (mark) clearMark(); else renderBackdrop(); });
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
    $('tab-btn-request').addEventListener('click', function () { history.replaceState(null, '', '#request'); showTab('request'); });
    $('tab-btn-nw').addEventListener('click', function () { history.replaceState(null, '', '#nw'); showTab('nw'); });
    $('nw-form').addEventListener('submit', function (ev) { ev.preventDefault(); runNw(); });
    document.querySelectorAll('input[name="nw-heat"]').forEach(function (r) { r.addEventListener('change', drawNwHeat); });

    fillEndpoints();
    $('endpoint').value = '/regression/nw';
    fillExamples();
    showTab(location.hash === '#nw' ? 'nw' : 'request');

    /* The routes this server has, from its OpenAPI document. */
    call('GET', '/openapi.json').then(function (r) {
      if (!r.json || !r.json.paths) return;
      available = Object.keys(r.json.paths).filter(function (p) { return r.json.paths[p].post && p.indexOf('{') < 0; });
      if (!available.length) return;
      var keep = $('endpoint').value, ex = $('example').value;
      routes = KNOWN_ROUTES.filter(function (p) { return available.indexOf(p) >= 0; })
        .concat(available.filter(function (p) { return KNOWN_ROUTES.indexOf(p) < 0; }));
      fillEndpoints();
      if (keep !== $('endpoint').value) fillExamples(); else $('example').value = ex;
      document.body.setAttribute('data-routes', routes.join(' '));
    }).catch(function () { /* keep the built-in list */ }).then(function () {
      document.body.setAttribute('data-ready', '1');
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
