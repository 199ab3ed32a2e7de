/* recorder viewer: draws the recorded graph embedded in this page (see viewer/FORMAT.md).
 *
 * Pipeline per change of the expanded calls:
 *   computeVisible (FORMAT.md's algorithm, O(nodes + edges))
 *   -> buildLevels (the top level and one level per cluster, edges lifted to each level)
 *   -> signatures (a level's content: item sizes, child levels, edges)
 *   -> layout of the levels not in the cache, bottom-up, in a Web Worker (dagre or O(n))
 *   -> compose (absolute geometry, top-down) -> draw on one canvas on the next frame.
 */
(function () {
  'use strict';

  const KIND_NAMES = ['input', 'output', 'tensor', 'constant', 'parameter', 'function', 'module'];
  const FUNCTION = 5;
  const MODULE = 6;
  const FONT = '12px sans-serif';
  const SMALL_FONT = '10px sans-serif';
  const TITLE_FONT = 'bold 11px sans-serif';
  const LINE_H = 15; // one label line
  const SMALL_H = 13; // the shape line
  const PAD_X = 8;
  const PAD_Y = 5;
  const MIN_NODE_W = 48;
  const MARK_W = 14; // room for the '+' of a collapsed composite call
  const PAD = 12; // inside a cluster box
  const TITLE_H = 22; // a cluster's title bar
  const LOD_TEXT = 0.35; // below this zoom: boxes without text
  const LOD_SIMPLE = 0.12; // below this zoom: filled rectangles, no arrow heads
  const LOD_SHAPES = 0.6; // the shape line needs this zoom
  const MIN_SCALE = 0.0002;
  const MAX_SCALE = 8;
  const REVEAL_CAP = 200; // search expands the ancestors of at most this many matches
  const SLOW_JOB_MS = 300; // show progress for layout jobs slower than this
  const STUCK_JOB_MS = 2000; // a job older than this is killed when a newer one arrives
  const STYLES = [ // fill, stroke
    ['#ffffc0', '#a89c4a'], // 0 input / output tensor
    ['#fffff0', '#c9c08a'], // 1 inner tensor
    ['#eeeeee', '#a0a0a0'], // 2 constant / parameter
    ['#f0f8ff', '#7d9cc0'], // 3 function
    ['#8fbc8f', '#4f7f4f'], // 4 module call drawn as one box (leaf)
    ['#e3d3f5', '#7b59a8'], // 5 collapsed composite call
  ];

  const $ = (id) => document.getElementById(id);
  const fmtInt = (v) => String(Math.round(Number(v) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  let M = null; // the model (buildModel)
  let expanded = null; // Uint8Array over recorded node ids
  let G = null; // the composed picture: visible graph + levels + geometry
  const view = {s: 1, tx: 0, ty: 0};
  let canvas = null;
  let ctx = null;
  let dpr = 1;
  let W = 0;
  let H = 0;
  const stats = {layoutMs: 0, drawMs: 0, visible: 0, levelsLaidOut: 0, modes: {}};

  // ---------------------------------------------------------------- data model

  function parseData() {
    const el = $('recorder-data');
    if (!el) throw new Error('the page has no element #recorder-data');
    return JSON.parse(el.textContent);
  }

  const toId = (v, n) => (Number.isInteger(v) && v >= 0 && v < n ? v : -1);

  function buildModel(doc) {
    if (!doc || typeof doc !== 'object') throw new Error('the data is not a JSON object');
    if (doc.format !== 1) throw new Error('unsupported format ' + JSON.stringify(doc.format) + ' (expected 1)');
    const rows = doc.nodes;
    const modules = doc.modules;
    if (!Array.isArray(rows) || !Array.isArray(modules)) throw new Error('"nodes" or "modules" is not a list');
    const n = rows.length;
    const m = {
      doc, n, modules, rows,
      kind: new Uint8Array(n), parent: new Int32Array(n), depth: new Int32Array(n),
      producer: new Int32Array(n).fill(-1), module: new Int32Array(n).fill(-1),
      leaf: new Uint8Array(n), expandable: new Uint8Array(n),
      label: new Array(n), lines: new Array(n), subs: new Array(n), callsOf: modules.map(() => []), maxDepth: 0,
    };
    for (let i = 0; i < n; i++) {
      const r = rows[i];
      if (!Array.isArray(r) || r.length < 4 || !Number.isInteger(r[0]) || r[0] < 0 || r[0] > 6) {
        throw new Error('node ' + i + ' is malformed');
      }
      const k = r[0];
      m.kind[i] = k;
      m.parent[i] = toId(r[1], n);
      m.depth[i] = Number(r[2]) | 0;
      m.label[i] = String(r[3] == null ? '' : r[3]);
      if (k <= 4) m.producer[i] = toId(r[4], n);
      if (k !== MODULE) continue;
      const mi = r[4];
      if (!Number.isInteger(mi) || mi < 0 || mi >= modules.length || !modules[mi]) {
        throw new Error('module call ' + i + ' names no module');
      }
      m.module[i] = mi;
      m.callsOf[mi].push(i);
      m.leaf[i] = modules[mi].leaf ? 1 : 0;
      m.expandable[i] = 1 - m.leaf[i];
      if (m.expandable[i]) m.maxDepth = Math.max(m.maxDepth, m.depth[i]);
    }
    const flat = Array.isArray(doc.edges) ? doc.edges : [];
    const edges = [];
    for (let k = 0; k + 1 < flat.length; k += 2) {
      const a = toId(flat[k], n);
      const b = toId(flat[k + 1], n);
      if (a >= 0 && b >= 0) edges.push(a, b);
    }
    m.edges = Int32Array.from(edges);
    doc.direction = ['TB', 'BT', 'LR', 'RL'].includes(doc.direction) ? doc.direction : 'TB';
    m.pathOf = (i) => (m.module[i] >= 0 ? String(m.modules[m.module[i]].path == null ? '' : m.modules[m.module[i]].path) : '');
    return m;
  }

  const labelLines = (i) => M.lines[i] || (M.lines[i] = M.label[i].split('\n'));
  const subText = (i) => (M.subs[i] !== undefined ? M.subs[i] : (M.subs[i] = makeSubText(i)));
  const tensorText = (t) => (t >= 0 && t < M.n && M.kind[t] <= 4 ? M.rows[t][5] + ' ' + M.rows[t][6] : '?');
  const ids = (v) => (Array.isArray(v) ? v.filter((t) => Number.isInteger(t) && t >= 0 && t < M.n) : []);

  /** The small second line of a box: a tensor's shape, or an op's output shapes. */
  function makeSubText(i) {
    const k = M.kind[i];
    if (k <= 4) return String(M.rows[i][5] == null ? '' : M.rows[i][5]);
    if (!M.doc.hide_inner_tensors) return '';
    const outs = ids(M.rows[i][7]);
    const seen = new Map();
    for (const t of outs) {
      const s = String(M.rows[t][5]);
      seen.set(s, (seen.get(s) || 0) + 1);
    }
    const parts = [];
    seen.forEach((count, s) => parts.push(count > 1 ? count + ' x ' + s : s));
    const text = parts.join(', ');
    return text.length > 48 ? text.slice(0, 47) + '\u2026' : text;
  }

  // ---------------------------------------------------------------- visible graph

  /** out[i] = step(i, p, out[p]) down the parent tree, whatever the id order (memoised). */
  function overParents(step) {
    const {n, parent} = M;
    const out = new Int32Array(n);
    const state = new Uint8Array(n); // 0 new, 1 on the current chain, 2 done
    const chain = [];
    for (let i = 0; i < n; i++) {
      for (let cur = i; cur >= 0 && state[cur] === 0; cur = parent[cur]) {
        state[cur] = 1;
        chain.push(cur);
      }
      while (chain.length) {
        const j = chain.pop();
        const p = parent[j];
        const known = p >= 0 && state[p] === 2; // a parent cycle counts as no parent
        out[j] = step(j, known ? p : -1, known ? out[p] : -1);
        state[j] = 2;
      }
    }
    return out;
  }

  /**
   * FORMAT.md "The visible graph", step 0: reached[i] is 1 when a model input reaches node i
   * along the edges, 2 for an op without tensor operands (its tensors are reached, it is not
   * drawn), 0 otherwise. A module call is reached through its inputs and passes the flow on
   * only to the tensors it produced.
   */
  function reachedFromInputs() {
    const {n, kind, producer} = M;
    const E = M.edges;
    const reached = new Uint8Array(n);
    const fed = new Uint8Array(n);
    const start = new Uint32Array(n + 1);
    const valid = (a, b) => a >= 0 && b >= 0 && a < n && b < n;
    const passes = (a, b) =>
      valid(a, b) && (kind[a] !== MODULE || (kind[b] <= 4 && producer[b] === a));
    // The steps: the edges, and each module call's input list (a composite call has no edges).
    const steps = [];
    for (let k = 0; k < E.length; k += 2) {
      const a = E[k];
      const b = E[k + 1];
      if (valid(a, b) && kind[a] <= 4) fed[b] = 1;
      if (passes(a, b)) steps.push(a, b);
    }
    for (let i = 0; i < n; i++) {
      if (kind[i] === MODULE) for (const t of ids(M.rows[i][6])) steps.push(t, i);
    }
    for (let k = 0; k < steps.length; k += 2) start[steps[k] + 1]++;
    const stack = [];
    let inputs = 0;
    for (let i = 0; i < n; i++) {
      if (kind[i] === 0) reached[i] = 1, stack.push(i), inputs++;
      else if (kind[i] === FUNCTION && !fed[i]) reached[i] = 2, stack.push(i);
    }
    if (!M.doc.hide_unreached || !inputs) return reached.fill(1);
    for (let i = 0; i < n; i++) start[i + 1] += start[i];
    const next = new Uint32Array(start[n]);
    const fill = start.slice(0, n);
    for (let k = 0; k < steps.length; k += 2) next[fill[steps[k]]++] = steps[k + 1];
    while (stack.length) {
      const i = stack.pop();
      for (let k = start[i]; k < start[i + 1]; k++) {
        if (!reached[next[k]]) reached[next[k]] = 1, stack.push(next[k]);
      }
    }
    return reached;
  }

  /** FORMAT.md "The visible graph", for the calls marked in `open`. */
  function computeVisible(open) {
    const {n, kind, leaf, producer, depth} = M;
    const hide = !!M.doc.hide_inner_tensors;
    const reached = M.reached || (M.reached = reachedFromInputs());
    const folds = (i) => kind[i] === MODULE && (leaf[i] === 1 || open[i] === 0);
    const folding = overParents((i, p, fp) => (fp >= 0 ? fp : folds(i) ? i : -1));
    const isOp = (i) => i >= 0 && (kind[i] === FUNCTION || kind[i] === MODULE);
    const opDrawn = (i) => (kind[i] === FUNCTION ? folding[i] < 0 : folding[i] === i);
    const drawn = new Uint8Array(n);
    let nv = 0;
    for (let i = 0; i < n; i++) {
      const k = kind[i];
      let d;
      if (k <= 1) d = true;
      else if (k >= FUNCTION) d = opDrawn(i) && reached[i] === 1;
      else if (k === 2) {
        const p = producer[i];
        d = !hide && (isOp(p) ? opDrawn(p) && reached[p] === 1 : folding[i] < 0);
      }
      else d = !hide && folding[i] < 0;
      if (d) drawn[i] = 1, nv++;
    }
    const vis = new Int32Array(nv);
    const rep = new Int32Array(n).fill(-1);
    for (let i = 0, j = 0; i < n; i++) if (drawn[i]) vis[j] = i, rep[i] = j++;
    for (let i = 0; i < n; i++) if (!drawn[i] && isOp(i) && folding[i] >= 0) rep[i] = rep[folding[i]];

    const source = (a) => {
      if (drawn[a] || isOp(a)) return rep[a];
      if (kind[a] !== 2) return -1;
      if (isOp(producer[a])) return rep[producer[a]];
      return folding[a] >= 0 ? rep[folding[a]] : -1;
    };
    const from = [];
    const to = [];
    const seen = new Map();
    const E = M.edges;
    for (let k = 0; k < E.length; k += 2) {
      const s = source(E[k]);
      const b = E[k + 1];
      const t = drawn[b] || isOp(b) ? rep[b] : -1;
      if (s < 0 || t < 0 || s === t) continue;
      const key = s * nv + t;
      if (seen.has(key)) continue;
      seen.set(key, from.length);
      from.push(s);
      to.push(t);
    }

    // Clusters: expanded calls at depth >= 1 not folded, with something drawn inside.
    const cand = (i) => kind[i] === MODULE && depth[i] >= 1 && folding[i] < 0;
    const around = overParents((i, p, ap) => (p < 0 ? -1 : cand(p) ? p : ap));
    const used = new Uint8Array(n);
    for (let j = 0; j < nv; j++) {
      for (let c = around[vis[j]]; c >= 0 && !used[c]; c = around[c]) used[c] = 1;
    }
    const clusters = [];
    for (let i = 0; i < n; i++) if (used[i]) clusters.push(i);
    return {vis, rep, drawn, around, clusters, from: Int32Array.from(from), to: Int32Array.from(to)};
  }

  // ---------------------------------------------------------------- levels

  /**
   * Level 0 is the top level, level k + 1 the cluster vg.clusters[k]. A level's items are its
   * visible nodes (code >= 0: the visible index) and child clusters (code -1 - level), in
   * order of first drawn node. Every visible edge is lifted to the two items of the lowest
   * level containing both ends.
   */
  function buildLevels(vg) {
    const nv = vg.vis.length;
    const nl = vg.clusters.length + 1;
    const levelOf = new Map();
    const call = new Int32Array(nl).fill(-1);
    vg.clusters.forEach((c, k) => {
      levelOf.set(c, k + 1);
      call[k + 1] = c;
    });
    const parent = new Int32Array(nl).fill(-1);
    levelOf.set(-1, 0);
    for (let L = 1; L < nl; L++) {
      const a = vg.around[call[L]];
      parent[L] = a >= 0 ? levelOf.get(a) : 0;
    }
    const depth = new Int32Array(nl).fill(-1);
    depth[0] = 0;
    const depthOf = (L) => {
      const chain = [];
      while (depth[L] < 0 && chain.length <= nl) chain.push(L), L = parent[L];
      let d = Math.max(0, depth[L]);
      while (chain.length) depth[chain.pop()] = ++d;
      return d;
    };
    for (let L = 1; L < nl; L++) depthOf(L);

    const items = Array.from({length: nl}, () => []);
    const nodeLevel = new Int32Array(nv);
    const nodeItem = new Int32Array(nv);
    const levelItem = new Int32Array(nl);
    const placed = new Uint8Array(nl);
    for (let v = 0; v < nv; v++) {
      const a = vg.around[vg.vis[v]];
      let L = a >= 0 ? levelOf.get(a) : 0;
      nodeLevel[v] = L;
      nodeItem[v] = items[L].length;
      items[L].push(v);
      while (L > 0 && !placed[L]) {
        placed[L] = 1;
        const P = parent[L];
        levelItem[L] = items[P].length;
        items[P].push(-1 - L);
        L = P;
      }
    }

    let widest = 1;
    for (const list of items) widest = Math.max(widest, list.length + 1);
    const edges = Array.from({length: nl}, () => []);
    const seen = new Map();
    const ne = vg.from.length;
    const edgeLevel = new Int32Array(ne);
    const edgeIndex = new Int32Array(ne).fill(-1); // lifted edge of a same-level edge
    for (let e = 0; e < ne; e++) {
      let a = nodeLevel[vg.from[e]];
      let b = nodeLevel[vg.to[e]];
      let ia = nodeItem[vg.from[e]];
      let ib = nodeItem[vg.to[e]];
      const direct = a === b;
      while (a !== b) {
        if (depth[a] >= depth[b]) ia = levelItem[a], a = parent[a];
        else ib = levelItem[b], b = parent[b];
      }
      edgeLevel[e] = a;
      if (ia === ib) continue;
      const key = (a * widest + ia) * widest + ib;
      let k = seen.get(key);
      if (k === undefined) {
        k = edges[a].length / 2;
        seen.set(key, k);
        edges[a].push(ia, ib);
      }
      if (direct) edgeIndex[e] = k;
    }
    const order = Array.from({length: nl}, (_, L) => L).sort((x, y) => depth[y] - depth[x] || x - y);
    return {count: nl, call, levelOf, parent, depth, items, edges, nodeLevel, edgeLevel, edgeIndex, order};
  }

  // ---------------------------------------------------------------- sizes and signatures

  let sizeW = null; // per recorded node, 0 until measured
  let sizeH = null;
  const textWidths = new Map();
  let measureCtx = null;

  function textWidth(font, text) {
    const key = font + '\u0000' + text;
    let w = textWidths.get(key);
    if (w === undefined) {
      measureCtx.font = font;
      w = measureCtx.measureText(text).width;
      textWidths.set(key, w);
    }
    return w;
  }

  function ensureSize(i) {
    if (sizeW[i]) return;
    const lines = labelLines(i);
    let w = 0;
    for (const line of lines) w = Math.max(w, textWidth(FONT, line));
    let h = lines.length * LINE_H + 2 * PAD_Y;
    const sub = subText(i);
    if (sub) w = Math.max(w, textWidth(SMALL_FONT, sub)), h += SMALL_H;
    const mark = M.kind[i] === MODULE && M.expandable[i] ? MARK_W : 0;
    sizeW[i] = Math.ceil(Math.max(MIN_NODE_W, w + 2 * PAD_X + mark));
    sizeH[i] = Math.ceil(h);
  }

  const titleText = (call) => labelLines(call).join(' ');
  const titleWidth = (call) => Math.ceil(textWidth(TITLE_FONT, titleText(call)) + 2 * PAD_X + MARK_W);
  const boxW = (inner, minW) => Math.max(inner.w, minW) + 2 * PAD;
  const boxH = (inner) => inner.h + TITLE_H + 2 * PAD;

  const sigIds = new Map(); // signature text -> small id
  const layoutCache = new Map(); // signature id -> level layout (from the worker)

  /**
   * Layouts are cached by content: a level's signature is the direction, its items (node
   * sizes; child clusters by their own signature and title width) and its lifted edges. So
   * when one call is expanded or collapsed, only that call's level and its ancestors' levels
   * (whose child box changed size) get new signatures and are laid out again; every other
   * level hits the cache, and identical levels (the layers of a transformer) share one layout.
   */
  function signatures(vg, lv) {
    const sig = new Int32Array(lv.count);
    const titleW = new Float64Array(lv.count);
    for (const L of lv.order) {
      const parts = [M.doc.direction];
      for (const code of lv.items[L]) {
        if (code >= 0) {
          const i = vg.vis[code];
          ensureSize(i);
          parts.push(sizeW[i] + 'x' + sizeH[i]);
        } else {
          const c = -1 - code;
          titleW[c] = titleWidth(lv.call[c]);
          parts.push('c' + sig[c] + ':' + titleW[c]);
        }
      }
      parts.push('|' + lv.edges[L].join(','));
      const text = parts.join(' ');
      let id = sigIds.get(text);
      if (id === undefined) sigIds.set(text, id = sigIds.size);
      sig[L] = id;
    }
    lv.sig = sig;
    lv.titleW = titleW;
  }

  // ---------------------------------------------------------------- layout jobs

  let worker = null;
  let workerBusySince = 0; // when the worker's current job started (0: idle)
  let workerJob = 0; // the newest job posted
  let updateSeq = 0;
  let pending = null; // the newest update waiting for its layout
  let composedSeq = 0;
  const waiters = []; // {seq, resolve}: resolved once an update >= seq is drawn

  function createWorker() {
    const dagreSrc = $('recorder-dagre') ? $('recorder-dagre').textContent : '';
    const src = $('recorder-worker') ? $('recorder-worker').textContent : '';
    try {
      const url = URL.createObjectURL(new Blob([dagreSrc, '\n', src], {type: 'text/javascript'}));
      const w = new Worker(url);
      w.onmessage = onWorkerMessage;
      w.onerror = (ev) => { // the worker could not start: lay out on this thread instead
        ev.preventDefault();
        worker = inlineWorker(src);
        if (pending) postJob(pending);
      };
      return w;
    } catch (err) {
      return inlineWorker(src);
    }
  }

  /** The worker's code run on this thread (dagre is global here too). */
  function inlineWorker(src) {
    const fake = {postMessage: (msg) => setTimeout(() => onWorkerMessage({data: msg}), 0), onmessage: null};
    new Function('self', src)(fake); // eslint-disable-line no-new-func
    return {postMessage: (msg) => setTimeout(() => fake.onmessage({data: msg}), 0), terminate() {}};
  }

  /** Recomputes the picture for `expanded`; resolves once it is drawn. */
  function update(options) {
    const seq = ++updateSeq;
    const done = new Promise((resolve) => waiters.push({seq, resolve}));
    const t0 = performance.now();
    const vg = computeVisible(expanded);
    const lv = buildLevels(vg);
    signatures(vg, lv);
    pending = Object.assign({seq, vg, lv, t0, need: []}, options);
    const inJob = new Set();
    for (const L of lv.order) {
      const s = lv.sig[L];
      if (!layoutCache.has(s) && !inJob.has(s)) inJob.add(s), pending.need.push(L);
    }
    stats.levelsLaidOut = pending.need.length;
    stats.modes = {};
    if (pending.need.length) postJob(pending);
    else finish(pending);
    return done;
  }

  function postJob(p) {
    const {vg, lv} = p;
    const levels = p.need.map((L) => {
      const items = lv.items[L];
      const n = items.length;
      const level = {
        sig: lv.sig[L], w: new Float64Array(n), h: new Float64Array(n),
        child: new Int32Array(n).fill(-1), minW: new Float64Array(n), edges: Int32Array.from(lv.edges[L]),
      };
      items.forEach((code, j) => {
        if (code >= 0) {
          level.w[j] = sizeW[vg.vis[code]];
          level.h[j] = sizeH[vg.vis[code]];
          return;
        }
        const c = -1 - code;
        const inner = layoutCache.get(lv.sig[c]);
        level.minW[j] = lv.titleW[c];
        if (inner) level.w[j] = boxW(inner, lv.titleW[c]), level.h[j] = boxH(inner);
        else level.child[j] = lv.sig[c];
      });
      return level;
    });
    const now = performance.now();
    if (workerBusySince && now - workerBusySince > STUCK_JOB_MS) {
      worker.terminate(); // a stuck job (huge dagre level) must not delay the newer one
      worker = createWorker();
      workerBusySince = 0;
    }
    if (!workerBusySince) workerBusySince = now;
    workerJob = p.seq;
    const transfer = [];
    for (const l of levels) transfer.push(l.w.buffer, l.h.buffer, l.child.buffer, l.minW.buffer, l.edges.buffer);
    worker.postMessage({
      type: 'layout', job: p.seq, dir: M.doc.direction, nodesep: 20, ranksep: 40, edgesep: 10,
      pad: PAD, titleH: TITLE_H, levels,
    }, transfer);
    setTimeout(() => {
      if (pending === p) showProgress(0, levels.length);
    }, SLOW_JOB_MS);
  }

  function onWorkerMessage(ev) {
    const msg = ev.data || {};
    if (msg.type === 'progress') {
      layoutCache.set(msg.result.sig, msg.result); // valid whatever job asked for it
      if (pending && msg.job === pending.seq) stats.modes[msg.result.mode] = (stats.modes[msg.result.mode] || 0) + 1;
      if (pending && msg.job === pending.seq && !$('rv-progress').hidden) showProgress(msg.done, msg.total);
    } else if (msg.type === 'done' || msg.type === 'error') {
      if (msg.job === workerJob) workerBusySince = 0;
      if (msg.type === 'error') showError('Layout failed: ' + msg.message);
      if (pending && msg.job === pending.seq) finish(pending);
    }
  }

  function showProgress(done, total) {
    $('rv-progress').hidden = false;
    $('rv-progress-fill').style.width = (total ? (100 * done) / total : 0) + '%';
    $('rv-progress-text').textContent = 'Laying out the graph\u2026 ' + done + ' / ' + total + ' levels';
  }

  // ---------------------------------------------------------------- composition

  function finish(p) {
    if (pending !== p) return; // superseded
    pending = null;
    $('rv-progress').hidden = true;
    if (p.lv.order.some((L) => !layoutCache.has(p.lv.sig[L]))) { // the job failed: keep the old picture
      composedSeq = p.seq;
      markDirty();
      return;
    }
    const first = !G;
    G = compose(p.vg, p.lv);
    composedSeq = p.seq;
    if (!pinned) hideTooltip();
    stats.layoutMs = performance.now() - p.t0;
    stats.visible = p.vg.vis.length;
    applyHighlights();
    if (first) overview();
    else if (p.anchor) keepAnchor(p.anchor);
    if (p.after) p.after();
    updateSummary();
    markDirty();
  }

  /** Absolute geometry, composed top-down from the level layouts. */
  function compose(vg, lv) {
    const nv = vg.vis.length;
    const nl = lv.count;
    const [nx, ny] = [new Float64Array(nv), new Float64Array(nv)]; // node boxes' top left
    const [cx, cy, cw, ch] = [0, 0, 0, 0].map(() => new Float64Array(nl)); // cluster boxes
    const [ox, oy] = [new Float64Array(nl), new Float64Array(nl)]; // level content origins
    cw[0] = layoutCache.get(lv.sig[0]).w; // level 0's box is the whole picture
    ch[0] = layoutCache.get(lv.sig[0]).h;
    for (let k = nl - 1; k >= 0; k--) {
      const L = lv.order[k];
      const lay = layoutCache.get(lv.sig[L]);
      lv.items[L].forEach((code, j) => {
        const X = ox[L] + lay.x[j];
        const Y = oy[L] + lay.y[j];
        if (code >= 0) {
          nx[code] = X - sizeW[vg.vis[code]] / 2;
          ny[code] = Y - sizeH[vg.vis[code]] / 2;
          return;
        }
        const c = -1 - code;
        const inner = layoutCache.get(lv.sig[c]);
        cw[c] = boxW(inner, lv.titleW[c]);
        ch[c] = boxH(inner);
        cx[c] = X - cw[c] / 2;
        cy[c] = Y - ch[c] / 2;
        ox[c] = cx[c] + PAD + (cw[c] - 2 * PAD - inner.w) / 2;
        oy[c] = cy[c] + TITLE_H + PAD;
      });
    }
    const style = new Uint8Array(nv);
    for (let v = 0; v < nv; v++) {
      const i = vg.vis[v];
      const k = M.kind[i];
      style[v] = k <= 1 ? 0 : k === 2 ? 1 : k <= 4 ? 2 : k === FUNCTION ? 3 : M.expandable[i] ? 5 : 4;
    }
    const g = {vg, lv, nx, ny, cx, cy, cw, ch, style, hlNode: new Uint8Array(nv), hlCluster: new Uint8Array(nl)};
    edgeGeometry(g, ox, oy);
    buildGrid(g);
    return g;
  }

  const nodeW = (g, v) => sizeW[g.vg.vis[v]];
  const nodeH = (g, v) => sizeH[g.vg.vis[v]];

  /** The middle of node v's exit (sign 1) or entry (sign -1) side. */
  function sidePoint(g, v, sign) {
    const x = g.nx[v] + nodeW(g, v) / 2;
    const y = g.ny[v] + nodeH(g, v) / 2;
    switch (M.doc.direction) {
      case 'BT': return [x, y - (sign * nodeH(g, v)) / 2, 0, -sign];
      case 'LR': return [x + (sign * nodeW(g, v)) / 2, y, sign, 0];
      case 'RL': return [x - (sign * nodeW(g, v)) / 2, y, -sign, 0];
      default: return [x, y + (sign * nodeH(g, v)) / 2, 0, sign];
    }
  }

  /**
   * Edges inside one level follow dagre's points (kind 0: a smoothed polyline); edges between
   * levels are cubic beziers from the source's exit side to the target's entry side (kind 1).
   */
  function edgeGeometry(g, ox, oy) {
    const {vg, lv} = g;
    const ne = vg.from.length;
    const kind = new Uint8Array(ne);
    const start = new Int32Array(ne + 1);
    const pts = [];
    const box = new Float64Array(4 * ne);
    for (let e = 0; e < ne; e++) {
      const L = lv.edgeLevel[e];
      const k = lv.edgeIndex[e];
      const lay = k >= 0 ? layoutCache.get(lv.sig[L]) : null;
      if (lay && lay.start[k + 1] - lay.start[k] >= 2) {
        for (let p = 2 * lay.start[k]; p < 2 * lay.start[k + 1]; p += 2) pts.push(ox[L] + lay.pts[p], oy[L] + lay.pts[p + 1]);
      } else {
        const [x0, y0, dx0, dy0] = sidePoint(g, vg.from[e], 1);
        const [x1, y1, dx1, dy1] = sidePoint(g, vg.to[e], -1);
        const bend = Math.max(30, Math.hypot(x1 - x0, y1 - y0) / 3);
        pts.push(x0, y0, x0 + dx0 * bend, y0 + dy0 * bend, x1 - dx1 * bend, y1 - dy1 * bend, x1, y1);
        kind[e] = 1;
      }
      start[e + 1] = pts.length / 2;
      box.set([Infinity, Infinity, -Infinity, -Infinity], 4 * e); // bounding box, for culling
      for (let p = 2 * start[e]; p < pts.length; p += 2) {
        for (let a = 0; a < 2; a++) {
          box[4 * e + a] = Math.min(box[4 * e + a], pts[p + a]);
          box[4 * e + 2 + a] = Math.max(box[4 * e + 2 + a], pts[p + a]);
        }
      }
    }
    Object.assign(g, {ekind: kind, estart: start, epts: Float64Array.from(pts), ebox: box});
  }

  /** A uniform grid over node rects and cluster title bars, for hit-testing (CSR arrays). */
  function buildGrid(g) {
    const nv = g.vg.vis.length;
    const nl = g.lv.count;
    const cell = Math.max(128, Math.sqrt((g.cw[0] * g.ch[0]) / 65536));
    const cols = Math.max(1, Math.ceil(g.cw[0] / cell) + 1);
    const rows = Math.max(1, Math.ceil(g.ch[0] / cell) + 1);
    const rectOf = (code) => (code >= 0
      ? [g.nx[code], g.ny[code], nodeW(g, code), nodeH(g, code)]
      : [g.cx[-1 - code], g.cy[-1 - code], g.cw[-1 - code], TITLE_H]);
    const span = (code, visit) => {
      const [x, y, w, h] = rectOf(code);
      const c0 = clamp(Math.floor(x / cell), 0, cols - 1);
      const c1 = clamp(Math.floor((x + w) / cell), 0, cols - 1);
      const r0 = clamp(Math.floor(y / cell), 0, rows - 1);
      const r1 = clamp(Math.floor((y + h) / cell), 0, rows - 1);
      for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) visit(r * cols + c);
    };
    const codes = [];
    for (let v = 0; v < nv; v++) codes.push(v);
    for (let L = 1; L < nl; L++) codes.push(-1 - L);
    const start = new Int32Array(cols * rows + 1);
    for (const code of codes) span(code, (k) => start[k + 1]++);
    for (let k = 0; k < cols * rows; k++) start[k + 1] += start[k];
    const fill = start.slice(0, cols * rows);
    const items = new Int32Array(start[cols * rows]);
    for (const code of codes) span(code, (k) => (items[fill[k]++] = code));
    g.grid = {cell, cols, rows, start, items, rectOf};
  }

  /** What is at world point (x, y): {node: visible index or -1, level: cluster level or -1}. */
  function hitWorld(x, y) {
    const hit = {node: -1, level: -1};
    if (!G) return hit;
    const {cell, cols, rows, start, items, rectOf} = G.grid;
    const c = Math.floor(x / cell);
    const r = Math.floor(y / cell);
    if (c < 0 || r < 0 || c >= cols || r >= rows) return hit;
    for (let k = start[r * cols + c]; k < start[r * cols + c + 1]; k++) {
      const code = items[k];
      const [rx, ry, rw, rh] = rectOf(code);
      if (x < rx || y < ry || x > rx + rw || y > ry + rh) continue;
      if (code >= 0) hit.node = code;
      else if (hit.level < 0 || G.lv.depth[-1 - code] > G.lv.depth[hit.level]) hit.level = -1 - code;
    }
    return hit;
  }

  function hitClient(clientX, clientY) {
    const r = canvas.getBoundingClientRect();
    return hitWorld((clientX - r.left - view.tx) / view.s, (clientY - r.top - view.ty) / view.s);
  }

  // ---------------------------------------------------------------- drawing

  let dirty = false;
  let frameRequested = false;

  function markDirty() {
    dirty = true;
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      if (!dirty) return;
      dirty = false;
      draw();
      for (let k = waiters.length - 1; k >= 0; k--) {
        if (waiters[k].seq <= composedSeq) waiters.splice(k, 1)[0].resolve();
      }
    });
  }

  function resize() {
    const stage = $('rv-stage');
    dpr = window.devicePixelRatio || 1;
    W = Math.max(1, stage.clientWidth);
    H = Math.max(1, stage.clientHeight);
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px';
    canvas.style.height = H + 'px';
    markDirty();
  }

  const tint = (d) => 'hsl(215, 45%, ' + Math.max(84, 98 - 3 * d) + '%)';

  function draw() {
    const t0 = performance.now();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, W, H);
    if (!G) return;
    const s = view.s;
    ctx.setTransform(dpr * s, 0, 0, dpr * s, dpr * view.tx, dpr * view.ty);
    const vp = [-view.tx / s, -view.ty / s, (W - view.tx) / s, (H - view.ty) / s];
    const inView = (x0, y0, x1, y1) => x1 >= vp[0] && y1 >= vp[1] && x0 <= vp[2] && y0 <= vp[3];
    const shown = drawClusters(s, inView);
    drawEdges(s, inView);
    drawTitles(s, shown);
    drawNodes(s, inView);
    stats.drawMs = performance.now() - t0;
  }

  /** Cluster boxes, batched per nesting depth (outer ones first: inner ones cover them). */
  function drawClusters(s, inView) {
    const {lv, cx, cy, cw, ch, hlCluster} = G;
    const shown = [];
    for (let k = lv.count - 1; k >= 0; k--) {
      const L = lv.order[k]; // lv.order is deepest first
      if (L > 0 && inView(cx[L], cy[L], cx[L] + cw[L], cy[L] + ch[L])) shown.push(L);
    }
    const simple = s < LOD_SIMPLE;
    const boxes = (list) => {
      ctx.beginPath();
      for (const L of list) {
        if (simple) ctx.rect(cx[L], cy[L], cw[L], ch[L]);
        else ctx.roundRect(cx[L], cy[L], cw[L], ch[L], 6);
      }
    };
    ctx.lineWidth = 1 / s;
    ctx.strokeStyle = '#7f8fa6';
    for (let k = 0; k < shown.length;) {
      const d = lv.depth[shown[k]];
      let end = k;
      while (end < shown.length && lv.depth[shown[end]] === d) end++;
      const same = shown.slice(k, end);
      boxes(same);
      ctx.fillStyle = tint(d);
      ctx.fill();
      ctx.setLineDash(simple ? [] : [6, 4]);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.beginPath(); // title bars
      for (const L of same) ctx.rect(cx[L], cy[L], cw[L], TITLE_H);
      ctx.fillStyle = 'rgba(60, 80, 120, 0.08)';
      ctx.fill();
      k = end;
    }
    const lit = shown.filter((L) => hlCluster[L]);
    if (lit.length) {
      boxes(lit);
      ctx.strokeStyle = '#ff8c00';
      ctx.lineWidth = 3 / s;
      ctx.stroke();
    }
    return shown;
  }

  /** Cluster titles go over the edges that cross the title bars. */
  function drawTitles(s, shown) {
    if (s < LOD_TEXT) return;
    const {lv, cx, cy, cw} = G;
    ctx.font = TITLE_FONT;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#2b3550';
    for (const L of shown) {
      ctx.fillText(titleText(lv.call[L]), cx[L] + PAD_X, cy[L] + TITLE_H / 2, cw[L] - 2 * PAD_X - MARK_W);
      ctx.fillText('\u2212', cx[L] + cw[L] - PAD_X - 8, cy[L] + TITLE_H / 2);
    }
  }

  function drawEdges(s, inView) {
    const {ekind, estart, epts, ebox} = G;
    const ne = ekind.length;
    const simple = s < LOD_SIMPLE;
    const heads = [];
    ctx.beginPath();
    for (let e = 0; e < ne; e++) {
      if (!inView(ebox[4 * e], ebox[4 * e + 1], ebox[4 * e + 2], ebox[4 * e + 3])) continue;
      const a = 2 * estart[e];
      const b = 2 * estart[e + 1];
      ctx.moveTo(epts[a], epts[a + 1]);
      if (ekind[e] === 1) {
        ctx.bezierCurveTo(epts[a + 2], epts[a + 3], epts[a + 4], epts[a + 5], epts[a + 6], epts[a + 7]);
      } else if (simple || b - a <= 4) {
        for (let p = a + 2; p < b; p += 2) ctx.lineTo(epts[p], epts[p + 1]);
      } else {
        for (let p = a + 2; p < b - 2; p += 2) {
          ctx.quadraticCurveTo(epts[p], epts[p + 1], (epts[p] + epts[p + 2]) / 2, (epts[p + 1] + epts[p + 3]) / 2);
        }
        ctx.lineTo(epts[b - 2], epts[b - 1]);
      }
      if (!simple) heads.push(b - 4);
    }
    ctx.strokeStyle = '#8a909c';
    ctx.lineWidth = Math.max(1, 1 / s);
    ctx.stroke();
    if (!heads.length) return;
    const size = Math.max(7, 3.5 / s);
    ctx.beginPath();
    for (const p of heads) {
      const x = epts[p + 2];
      const y = epts[p + 3];
      const d = Math.hypot(x - epts[p], y - epts[p + 1]) || 1;
      const ux = (x - epts[p]) / d;
      const uy = (y - epts[p + 1]) / d;
      ctx.moveTo(x, y);
      ctx.lineTo(x - ux * size - uy * size * 0.45, y - uy * size + ux * size * 0.45);
      ctx.lineTo(x - ux * size + uy * size * 0.45, y - uy * size - ux * size * 0.45);
      ctx.closePath();
    }
    ctx.fillStyle = '#6d7380';
    ctx.fill();
  }

  function drawNodes(s, inView) {
    const {vg, nx, ny, style, hlNode} = G;
    const nv = vg.vis.length;
    const simple = s < LOD_SIMPLE;
    const shown = [];
    for (let v = 0; v < nv; v++) {
      if (inView(nx[v], ny[v], nx[v] + nodeW(G, v), ny[v] + nodeH(G, v))) shown.push(v);
    }
    const dot = 1.5 / s; // far out, a node stays at least a dot on screen
    const rectPath = (v, grow) => {
      const x = nx[v] - grow;
      const y = ny[v] - grow;
      if (simple) ctx.rect(x, y, Math.max(dot, nodeW(G, v) + 2 * grow), Math.max(dot, nodeH(G, v) + 2 * grow));
      else ctx.roundRect(x, y, nodeW(G, v) + 2 * grow, nodeH(G, v) + 2 * grow, 4);
    };
    ctx.lineWidth = 1 / s;
    for (let k = 0; k < STYLES.length; k++) {
      ctx.beginPath();
      for (const v of shown) if (style[v] === k) rectPath(v, 0);
      ctx.fillStyle = STYLES[k][0];
      ctx.fill();
      if (simple) continue;
      ctx.strokeStyle = STYLES[k][1];
      ctx.stroke();
    }
    const special = (test, color, width, grow) => {
      ctx.beginPath();
      let any = false;
      for (const v of shown) if (test(v)) rectPath(v, grow), any = true;
      if (!any) return;
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.stroke();
    };
    special((v) => M.kind[vg.vis[v]] === MODULE && M.rows[vg.vis[v]][8] === true, '#d01010', Math.max(2, 1.5 / s), 0);
    special((v) => hlNode[v], '#ff8c00', 3 / s, 2 / s);
    if (!simple) {
      ctx.beginPath(); // the '+' of collapsed composite calls
      for (const v of shown) {
        if (style[v] !== 5) continue;
        const x = nx[v] + nodeW(G, v) - 9;
        const y = ny[v] + 9;
        ctx.moveTo(x - 4, y);
        ctx.lineTo(x + 4, y);
        ctx.moveTo(x, y - 4);
        ctx.lineTo(x, y + 4);
      }
      ctx.strokeStyle = '#4b2c7a';
      ctx.lineWidth = 1.6;
      ctx.stroke();
    }
    if (s < LOD_TEXT) return;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.font = FONT;
    ctx.fillStyle = '#1d1d24';
    for (const v of shown) {
      const i = vg.vis[v];
      const mid = nx[v] + (nodeW(G, v) - (style[v] === 5 ? MARK_W : 0)) / 2;
      labelLines(i).forEach((line, k) => ctx.fillText(line, mid, ny[v] + PAD_Y + LINE_H * (k + 0.5)));
    }
    if (s < LOD_SHAPES) return;
    ctx.font = SMALL_FONT;
    ctx.fillStyle = '#5a5a66';
    for (const v of shown) {
      const i = vg.vis[v];
      const sub = subText(i);
      if (sub) ctx.fillText(sub, nx[v] + nodeW(G, v) / 2, ny[v] + nodeH(G, v) - PAD_Y - SMALL_H / 2 + 1);
    }
  }

  // ---------------------------------------------------------------- view

  function bounds(g) {
    return {x: 0, y: 0, w: g.cw[0], h: g.ch[0]};
  }

  function fitTo(r, maxScale) {
    const m = 24;
    view.s = clamp(Math.min((W - 2 * m) / Math.max(r.w, 1), (H - 2 * m) / Math.max(r.h, 1), maxScale), MIN_SCALE, MAX_SCALE);
    view.tx = W / 2 - (r.x + r.w / 2) * view.s;
    view.ty = H / 2 - (r.y + r.h / 2) * view.s;
    markDirty();
  }

  /** Fit, unless that makes boxes tiny: then show the start of the graph at zoom 0.8. */
  function overview() {
    const b = bounds(G);
    fitTo(b, 1.2);
    if (view.s >= 0.25) return;
    view.s = 0.8;
    const dir = M.doc.direction;
    view.tx = dir === 'LR' ? 24 : dir === 'RL' ? W - 24 - b.w * view.s : W / 2 - (b.w / 2) * view.s;
    view.ty = dir === 'TB' ? 24 : dir === 'BT' ? H - 24 - b.h * view.s : H / 2 - (b.h / 2) * view.s;
  }

  function zoomAt(sx, sy, factor) {
    const s = clamp(view.s * factor, MIN_SCALE, MAX_SCALE);
    view.tx = sx - ((sx - view.tx) * s) / view.s;
    view.ty = sy - ((sy - view.ty) * s) / view.s;
    view.s = s;
    markDirty();
  }

  /** The world rect of a recorded call or node: its box, or its cluster's box; null if hidden. */
  function worldRect(g, id) {
    const v = g.vg.rep[id];
    if (v >= 0 && g.vg.vis[v] === id) return {x: g.nx[v], y: g.ny[v], w: nodeW(g, v), h: nodeH(g, v)};
    const L = g.lv.levelOf.get(id);
    return L > 0 ? {x: g.cx[L], y: g.cy[L], w: g.cw[L], h: g.ch[L]} : null;
  }

  function anchorOf(id) {
    const r = G && worldRect(G, id);
    return r ? {id, sx: (r.x + r.w / 2) * view.s + view.tx, sy: r.y * view.s + view.ty} : null;
  }

  /** Keeps the top centre of a toggled call where it was on screen. */
  function keepAnchor(a) {
    const r = worldRect(G, a.id);
    if (!r) return;
    view.tx = a.sx - (r.x + r.w / 2) * view.s;
    view.ty = a.sy - r.y * view.s;
  }

  // ---------------------------------------------------------------- expand / collapse

  function expandAncestors(i) {
    for (let p = M.parent[i], steps = 0; p >= 0 && steps <= M.n; p = M.parent[p], steps++) {
      if (M.expandable[p]) expanded[p] = 1;
    }
  }

  function toggle(id, open) {
    expanded[id] = open ? 1 : 0;
    $('rv-depth').value = 'custom';
    return update({anchor: anchorOf(id)});
  }

  function collapseTo(d) {
    for (let i = 0; i < M.n; i++) expanded[i] = M.expandable[i] && M.depth[i] < d ? 1 : 0;
    $('rv-depth').value = d === Infinity ? 'all' : String(d);
    return update({after: overview});
  }

  function callsOfPath(path) {
    const out = [];
    M.modules.forEach((m, k) => {
      if (m && String(m.path) === String(path)) out.push(...M.callsOf[k]);
    });
    return out;
  }

  function checkedCalls(path) {
    const calls = callsOfPath(path);
    if (!calls.length) throw new Error('unknown module path: ' + JSON.stringify(path));
    if (!calls.some((i) => M.expandable[i])) throw new Error('module ' + JSON.stringify(path) + ' is a leaf');
    return calls;
  }

  // ---------------------------------------------------------------- tooltip

  let pinned = false;

  function tensorRows(rows, label, list) {
    const t = ids(list);
    t.slice(0, 8).forEach((x) => rows.push(label + ': ' + tensorText(x)));
    if (t.length > 8) rows.push('\u2026 ' + (t.length - 8) + ' more');
  }

  /** The tooltip's lines for recorded node i (plain strings, shown as text only). */
  function tooltipLines(i) {
    const r = M.rows[i];
    const k = M.kind[i];
    const rows = [labelLines(i).join(' ')];
    if (k === MODULE) {
      const mod = M.modules[M.module[i]];
      const calls = M.callsOf[M.module[i]].length;
      rows.push('path: ' + (M.pathOf(i) || '(root)'), 'class: ' + mod.class, 'depth-index: ' + r[5]);
      if (calls > 1) rows.push('call: ' + (Number(r[9]) + 1) + ' of ' + calls);
      tensorRows(rows, 'input', r[6]);
      tensorRows(rows, 'output', r[7]);
      rows.push('params: ' + fmtInt(mod.params) + ' (trainable ' + fmtInt(mod.trainable) + ')');
      for (const a of Array.isArray(mod.attrs) ? mod.attrs : []) rows.push(a[0] + ': ' + a[1]);
      if (r[8] === true) rows.push('failed: the call did not complete');
    } else if (k === FUNCTION) {
      rows.push('op: ' + r[4], 'in-place: ' + (r[5] ? 'yes' : 'no'));
      if (M.parent[i] >= 0) rows.push('in: ' + (M.pathOf(M.parent[i]) || '(root)'));
      tensorRows(rows, 'input', r[6]);
      tensorRows(rows, 'output', r[7]);
    } else {
      rows.push('kind: ' + KIND_NAMES[k], 'shape: ' + r[5], 'dtype: ' + r[6]);
    }
    const facts = M.doc.stats && M.doc.stats[String(i)];
    for (const f of Array.isArray(facts) ? facts : []) rows.push(f[0] + ': ' + f[1]);
    return rows.map(String);
  }

  function showTooltip(i, sx, sy) {
    const tip = $('rv-tooltip');
    const lines = tooltipLines(i);
    tip.replaceChildren();
    lines.forEach((line, k) => {
      const div = document.createElement('div');
      div.className = k === 0 ? 'rv-tip-title' : 'rv-tip-row';
      div.textContent = line;
      tip.appendChild(div);
    });
    tip.setAttribute('data-node-id', String(i));
    tip.hidden = false;
    const x = sx + 16 + tip.offsetWidth > W ? Math.max(0, sx - 16 - tip.offsetWidth) : sx + 16;
    const y = sy + 16 + tip.offsetHeight > H ? Math.max(0, H - tip.offsetHeight - 4) : sy + 16;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
    return lines;
  }

  function hideTooltip() {
    pinned = false;
    $('rv-tooltip').hidden = true;
  }

  /** The recorded node a hit stands for: a visible node, or a cluster's call. */
  const hitId = (hit) => (hit.node >= 0 ? G.vg.vis[hit.node] : hit.level > 0 ? G.lv.call[hit.level] : -1);

  // ---------------------------------------------------------------- search

  let lastMatches = [];

  function applyHighlights() {
    if (!G) return;
    G.hlNode.fill(0);
    G.hlCluster.fill(0);
    for (const i of lastMatches) {
      const v = G.vg.rep[i];
      const L = G.vg.drawn[i] ? -1 : G.lv.levelOf.get(i);
      if (L > 0) G.hlCluster[L] = 1;
      else if (v >= 0) G.hlNode[v] = 1;
    }
  }

  function matchesOf(text) {
    const q = text.trim().toLowerCase();
    const out = [];
    if (!q) return out;
    const has = (v) => v != null && String(v).toLowerCase().includes(q);
    for (let i = 0; i < M.n; i++) {
      if (M.kind[i] === MODULE) {
        const m = M.modules[M.module[i]];
        if (has(m.path) || has(m.name) || has(m.class)) out.push(i);
      } else if (M.kind[i] === FUNCTION && has(M.rows[i][4])) {
        out.push(i);
      }
    }
    return out;
  }

  /** Highlights the matches, expands their ancestors and zooms to them; resolves to paths. */
  function runSearch(text) {
    lastMatches = matchesOf(text);
    const count = lastMatches.length;
    $('rv-search-count').textContent = text.trim()
      ? count + (count === 1 ? ' match' : ' matches') + (count > REVEAL_CAP ? ' (first ' + REVEAL_CAP + ' revealed)' : '')
      : '';
    lastMatches.slice(0, REVEAL_CAP).forEach(expandAncestors);
    const paths = [];
    const seen = new Set();
    for (const i of lastMatches) {
      const p = M.kind[i] === MODULE ? M.pathOf(i) : (M.parent[i] >= 0 ? M.pathOf(M.parent[i]) : '') + ':' + M.rows[i][4];
      if (!seen.has(p)) seen.add(p), paths.push(p);
    }
    const after = () => {
      if (!count) return;
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -Infinity;
      let y1 = -Infinity;
      for (const i of lastMatches.slice(0, REVEAL_CAP)) {
        const v = G.vg.rep[i];
        const r = worldRect(G, i) || (v >= 0 ? worldRect(G, G.vg.vis[v]) : null);
        if (!r) continue;
        x0 = Math.min(x0, r.x);
        y0 = Math.min(y0, r.y);
        x1 = Math.max(x1, r.x + r.w);
        y1 = Math.max(y1, r.y + r.h);
      }
      if (x1 >= x0) fitTo({x: x0, y: y0, w: x1 - x0, h: y1 - y0}, 1.5);
    };
    return update({after}).then(() => paths);
  }

  function clearSearch() {
    $('rv-search').value = '';
    $('rv-search-count').textContent = '';
    lastMatches = [];
    applyHighlights();
    markDirty();
  }

  // ---------------------------------------------------------------- page chrome

  function showError(text) {
    const box = $('rv-error');
    if (box) {
      box.textContent = text;
      box.hidden = false;
    }
    document.body.dataset.error = '1';
  }

  function updateSummary() {
    const d = M.doc;
    $('rv-summary').textContent = String(d.model || d.graph_name || 'model') + ' \u00b7 ' +
      fmtInt(d.total_params) + ' params \u00b7 ' + fmtInt(stats.visible) + ' of ' + fmtInt(M.n) + ' nodes visible';
  }

  function showNotices() {
    const d = M.doc;
    const notes = [];
    if (d.complete === false) {
      const f = d.failure || {};
      notes.push('Incomplete trace: the forward pass failed' +
        (f.module_path ? ' in ' + f.module_path : '') + (f.module_class ? ' (' + f.module_class + ')' : '') +
        (f.op ? ' at ' + f.op : '') + ': ' + String(f.message == null ? 'unknown error' : f.message));
    }
    if (d.depth != null && d.requested_depth != null && d.depth < d.requested_depth) {
      notes.push('Opened at depth ' + d.depth + ' instead of ' + d.requested_depth + ' to keep the first picture small.');
    } else if (d.depth != null && d.requested_depth === null) {
      notes.push('Opened at depth ' + d.depth + ' to keep the first picture small.');
    }
    const box = $('rv-notice');
    box.replaceChildren();
    notes.forEach((t) => {
      const p = document.createElement('div');
      p.textContent = t;
      box.appendChild(p);
    });
    box.hidden = !notes.length;
  }

  function setupToolbar() {
    const select = $('rv-depth');
    const add = (value, text, hidden) => {
      const o = document.createElement('option');
      o.value = value;
      o.textContent = text;
      o.hidden = !!hidden;
      select.appendChild(o);
    };
    for (let d = 0; d <= M.maxDepth; d++) add(String(d), 'depth ' + d);
    add('all', 'all');
    add('custom', 'custom', true);
    select.value = M.doc.depth == null ? 'all' : String(Math.min(M.doc.depth, M.maxDepth + 1));
    if (!select.value) select.value = 'all';
    select.addEventListener('change', () => {
      if (select.value !== 'custom') collapseTo(select.value === 'all' ? Infinity : Number(select.value));
    });
    $('rv-expand-all').addEventListener('click', () => collapseTo(Infinity));
    $('rv-fit').addEventListener('click', () => G && fitTo(bounds(G), 1.2));
    const search = $('rv-search');
    let timer = 0;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      const text = search.value;
      if (text.trim().length >= 2) timer = setTimeout(() => runSearch(text), 250);
      else if (!text.trim()) clearSearch();
    });
    search.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') clearTimeout(timer), runSearch(search.value);
      else if (ev.key === 'Escape') clearSearch(), hideTooltip(), search.blur();
    });
  }

  // ---------------------------------------------------------------- input

  function setupInput() {
    let drag = null;
    canvas.addEventListener('pointerdown', (ev) => {
      drag = {x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, moved: false};
      canvas.setPointerCapture(ev.pointerId);
    });
    canvas.addEventListener('pointermove', (ev) => {
      if (drag) {
        const dx = ev.clientX - drag.x;
        const dy = ev.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (!drag.moved) return;
        view.tx = drag.tx + dx;
        view.ty = drag.ty + dy;
        if (!pinned) hideTooltip();
        markDirty();
        return;
      }
      if (pinned || !G) return;
      const id = hitId(hitClient(ev.clientX, ev.clientY));
      const r = canvas.getBoundingClientRect();
      if (id >= 0) showTooltip(id, ev.clientX - r.left, ev.clientY - r.top);
      else hideTooltip();
    });
    canvas.addEventListener('pointerup', (ev) => {
      const d = drag;
      drag = null;
      if (d && !d.moved) click(ev.clientX, ev.clientY);
    });
    canvas.addEventListener('pointerleave', () => {
      if (!pinned && !drag) hideTooltip();
    });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      const delta = ev.deltaY * (ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? H : 1);
      zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-clamp(delta, -300, 300) * 0.002));
    }, {passive: false});
    window.addEventListener('keydown', onKey);
    window.addEventListener('resize', resize); // also catches devicePixelRatio changes
    if (window.ResizeObserver) new ResizeObserver(resize).observe($('rv-stage')); // the toolbar may wrap
  }

  function click(clientX, clientY) {
    if (!G) return;
    const hit = hitClient(clientX, clientY);
    if (hit.node >= 0) {
      const i = G.vg.vis[hit.node];
      if (M.expandable[i]) {
        hideTooltip();
        toggle(i, true);
        return;
      }
      const r = canvas.getBoundingClientRect();
      showTooltip(i, clientX - r.left, clientY - r.top);
      pinned = true;
    } else if (hit.level > 0) {
      hideTooltip();
      toggle(G.lv.call[hit.level], false);
    } else {
      hideTooltip();
    }
  }

  function onKey(ev) {
    const tag = ev.target && ev.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const step = 60;
    const keys = {
      ArrowLeft: () => panBy(step, 0), ArrowRight: () => panBy(-step, 0),
      ArrowUp: () => panBy(0, step), ArrowDown: () => panBy(0, -step),
      '+': () => zoomAt(W / 2, H / 2, 1.25), '=': () => zoomAt(W / 2, H / 2, 1.25),
      '-': () => zoomAt(W / 2, H / 2, 0.8), _: () => zoomAt(W / 2, H / 2, 0.8),
      0: () => G && fitTo(bounds(G), 1.2), '/': () => $('rv-search').focus(),
      Escape: () => (hideTooltip(), clearSearch()),
    };
    const action = keys[ev.key];
    if (!action) return;
    ev.preventDefault();
    action();
  }

  function panBy(dx, dy) {
    view.tx += dx;
    view.ty += dy;
    markDirty();
  }

  // ---------------------------------------------------------------- test API

  let queue = Promise.resolve();

  /** Runs `fn` after every earlier call; resolves after its layout and drawing are done. */
  function serial(fn) {
    const run = queue.then(fn).then(async (value) => {
      await settled();
      return value;
    });
    queue = run.catch(() => {});
    return run;
  }

  /** Resolves once the newest update has been drawn. */
  function settled() {
    if (!pending && !dirty && composedSeq === updateSeq) return Promise.resolve();
    return new Promise((resolve) => waiters.push({seq: updateSeq, resolve}));
  }

  const twoFrames = () => nextFrame().then(nextFrame);

  function clientRect(v) {
    const r = canvas.getBoundingClientRect();
    return {
      x: r.left + G.nx[v] * view.s + view.tx, y: r.top + G.ny[v] * view.s + view.ty,
      w: nodeW(G, v) * view.s, h: nodeH(G, v) * view.s,
    };
  }

  const api = {
    visibleNodes: () => serial(() => Array.from(G.vg.vis, (i) => ({
      id: i, kind: KIND_NAMES[M.kind[i]], label: M.label[i], path: M.kind[i] === MODULE ? M.pathOf(i) : '',
    }))),
    visibleEdges: () => serial(() => Array.from(G.vg.from, (s, e) => ({from: G.vg.vis[s], to: G.vg.vis[G.vg.to[e]]}))),
    clusters: () => serial(() => G.vg.clusters.map((c) => {
      const a = G.vg.around[c];
      return {id: c, path: M.pathOf(c), parent: a >= 0 ? a : -1};
    })),
    expand: (path) => serial(() => {
      const calls = checkedCalls(path);
      calls.forEach((i) => {
        if (M.expandable[i]) expanded[i] = 1;
        expandAncestors(i);
      });
      $('rv-depth').value = 'custom';
      return update({});
    }).then(() => undefined),
    collapse: (path) => serial(() => {
      checkedCalls(path).forEach((i) => (expanded[i] = 0));
      $('rv-depth').value = 'custom';
      return update({});
    }).then(() => undefined),
    expandAll: () => serial(() => collapseTo(Infinity)).then(() => undefined),
    collapseTo: (depth) => serial(() => collapseTo(depth == null ? Infinity : Number(depth))).then(() => undefined),
    search: (text) => serial(() => {
      $('rv-search').value = String(text);
      return runSearch(String(text));
    }),
    hover: (path) => serial(async () => {
      const find = () => Array.from(G.vg.vis).find((i) => M.kind[i] === MODULE && M.pathOf(i) === String(path)) ??
        G.vg.clusters.find((c) => M.pathOf(c) === String(path));
      if (find() === undefined) { // not in view: reveal its first call
        const calls = callsOfPath(path);
        if (!calls.length) throw new Error('unknown module path: ' + JSON.stringify(path));
        expandAncestors(calls[0]);
        await update({});
      }
      const id = find();
      const r = worldRect(G, id);
      pinned = false;
      return showTooltip(id, (r.x + r.w) * view.s + view.tx, r.y * view.s + view.ty);
    }),
    nodeAt: (x, y) => serial(() => {
      const hit = hitClient(x, y);
      return hit.node >= 0 ? G.vg.vis[hit.node] : -1;
    }),
    nodeRect: (id) => serial(() => {
      const v = Number.isInteger(id) && id >= 0 && id < M.n ? G.vg.rep[id] : -1;
      return v >= 0 && G.vg.vis[v] === id ? clientRect(v) : null;
    }),
    stats: () => serial(() => Object.assign({}, stats, {modes: Object.assign({}, stats.modes)})),
    panBy: (dx, dy) => serial(() => {
      panBy(Number(dx) || 0, Number(dy) || 0);
      return twoFrames();
    }),
    zoomTo: (scale) => serial(() => {
      zoomAt(W / 2, H / 2, clamp(Number(scale) || 1, MIN_SCALE, MAX_SCALE) / view.s);
      return twoFrames();
    }),
    fit: () => serial(() => {
      fitTo(bounds(G), 1.2);
      return twoFrames();
    }),
  };

  // ---------------------------------------------------------------- start

  function start() {
    try {
      M = buildModel(parseData());
      if (typeof dagre === 'undefined') throw new Error('the layout library (dagre) is missing');
    } catch (err) {
      showError('Cannot show the graph: ' + (err && err.message ? err.message : String(err)));
      return;
    }
    canvas = $('rv-canvas');
    ctx = canvas.getContext('2d');
    if (!ctx.roundRect) ctx.roundRect = (x, y, w, h) => ctx.rect(x, y, w, h);
    measureCtx = document.createElement('canvas').getContext('2d');
    expanded = new Uint8Array(M.n);
    sizeW = new Float32Array(M.n);
    sizeH = new Float32Array(M.n);
    const d = M.doc.depth == null ? Infinity : Number(M.doc.depth);
    for (let i = 0; i < M.n; i++) expanded[i] = M.expandable[i] && M.depth[i] < d ? 1 : 0;
    worker = createWorker();
    setupToolbar();
    showNotices();
    setupInput();
    resize();
    update({}).then(() => {
      if (!G) return; // the first layout failed (the error is shown)
      window.recorderViewer = api;
      document.body.dataset.ready = '1';
    }, (err) => showError('Cannot show the graph: ' + err.message));
  }

  try {
    start();
  } catch (err) {
    showError('The viewer failed: ' + (err && err.message ? err.message : String(err)));
  }
})();
