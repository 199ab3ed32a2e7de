/* recorder viewer, part 1 of 4: the pure model (see viewer/FORMAT.md).
 *
 * No DOM, no canvas, no state of its own: functions of the data document and of the set of
 * expanded calls, so that Node runs them as the page does (tests/viewer/model_test.mjs against
 * the C++ visible graph).
 *   buildModel: parses and checks the data document into typed arrays (the model `m`);
 *   labelLines, subText, tooltipLines, matchesOf, searchPaths: the texts of a node;
 *   openToDepth, expandAncestors, callsOfPath: sets of expanded calls;
 *   computeVisible: the visible graph (FORMAT.md's algorithm, O(nodes + edges));
 *   buildLevels: the top level and one level per cluster, edges lifted to each level;
 *   signatures: a level's content (item sizes, child levels, edges), given a way to measure.
 *
 * The page joins model.js, layout.js, canvas.js and viewer.js, in this order, into one script
 * element (scripts/gen_viewer_assets.py, include/recorder/render/html.hpp); each part adds
 * itself to the one global object `RecorderViewer` (this one as `RecorderViewer.model`). Under
 * Node, `require('viewer/model.js')` returns `RecorderViewer.model`.
 */
var RecorderViewer = typeof RecorderViewer === 'object' && RecorderViewer ? RecorderViewer : {};

(function (RV) {
  'use strict';

  const KIND_NAMES = ['input', 'output', 'tensor', 'constant', 'parameter', 'function', 'module'];
  const FUNCTION = 5;
  const MODULE = 6;

  const fmtInt = (v) => String(Math.round(Number(v) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

  // ---------------------------------------------------------------- data model

  const toId = (v, n) => (Number.isInteger(v) && v >= 0 && v < n ? v : -1);

  /** The model of data document `doc` (FORMAT.md); throws, saying why, on a malformed one. */
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

  // ---------------------------------------------------------------- texts

  const labelLines = (m, i) => m.lines[i] || (m.lines[i] = m.label[i].split('\n'));
  const subText = (m, i) => (m.subs[i] !== undefined ? m.subs[i] : (m.subs[i] = makeSubText(m, i)));
  const tensorText = (m, t) => (t >= 0 && t < m.n && m.kind[t] <= 4 ? m.rows[t][5] + ' ' + m.rows[t][6] : '?');
  const ids = (m, v) => (Array.isArray(v) ? v.filter((t) => Number.isInteger(t) && t >= 0 && t < m.n) : []);

  /** The small second line of a box: a tensor's shape, or an op's output shapes. */
  function makeSubText(m, i) {
    const k = m.kind[i];
    if (k <= 4) return String(m.rows[i][5] == null ? '' : m.rows[i][5]);
    if (!m.doc.hide_inner_tensors) return '';
    const outs = ids(m, m.rows[i][7]);
    const seen = new Map();
    for (const t of outs) {
      const s = String(m.rows[t][5]);
      seen.set(s, (seen.get(s) || 0) + 1);
    }
    const parts = [];
    seen.forEach((count, s) => parts.push(count > 1 ? count + ' x ' + s : s));
    const text = parts.join(', ');
    return text.length > 48 ? text.slice(0, 47) + '\u2026' : text;
  }

  function tensorRows(m, rows, label, list) {
    const t = ids(m, list);
    t.slice(0, 8).forEach((x) => rows.push(label + ': ' + tensorText(m, x)));
    if (t.length > 8) rows.push('\u2026 ' + (t.length - 8) + ' more');
  }

  /** The tooltip's lines for recorded node i (plain strings, shown as text only). */
  function tooltipLines(m, i) {
    const r = m.rows[i];
    const k = m.kind[i];
    const rows = [labelLines(m, i).join(' ')];
    if (k === MODULE) {
      const mod = m.modules[m.module[i]];
      const calls = m.callsOf[m.module[i]].length;
      rows.push('path: ' + (m.pathOf(i) || '(root)'), 'class: ' + mod.class, 'depth-index: ' + r[5]);
      if (calls > 1) rows.push('call: ' + (Number(r[9]) + 1) + ' of ' + calls);
      tensorRows(m, rows, 'input', r[6]);
      tensorRows(m, rows, 'output', r[7]);
      rows.push('params: ' + fmtInt(mod.params) + ' (trainable ' + fmtInt(mod.trainable) + ')');
      for (const a of Array.isArray(mod.attrs) ? mod.attrs : []) rows.push(a[0] + ': ' + a[1]);
      if (r[8] === true) rows.push('failed: the call did not complete');
    } else if (k === FUNCTION) {
      rows.push('op: ' + r[4], 'in-place: ' + (r[5] ? 'yes' : 'no'));
      if (m.parent[i] >= 0) rows.push('in: ' + (m.pathOf(m.parent[i]) || '(root)'));
      tensorRows(m, rows, 'input', r[6]);
      tensorRows(m, rows, 'output', r[7]);
    } else {
      rows.push('kind: ' + KIND_NAMES[k], 'shape: ' + r[5], 'dtype: ' + r[6]);
    }
    const facts = m.doc.stats && m.doc.stats[String(i)];
    for (const f of Array.isArray(facts) ? facts : []) rows.push(f[0] + ': ' + f[1]);
    return rows.map(String);
  }

  /** The module calls whose path, name or class, and the functions whose op, contain `text`. */
  function matchesOf(m, text) {
    const q = text.trim().toLowerCase();
    const out = [];
    if (!q) return out;
    const has = (v) => v != null && String(v).toLowerCase().includes(q);
    for (let i = 0; i < m.n; i++) {
      if (m.kind[i] === MODULE) {
        const mod = m.modules[m.module[i]];
        if (has(mod.path) || has(mod.name) || has(mod.class)) out.push(i);
      } else if (m.kind[i] === FUNCTION && has(m.rows[i][4])) {
        out.push(i);
      }
    }
    return out;
  }

  /** What the search reports for `matches`: module paths, and `path:op` of functions, each once. */
  function searchPaths(m, matches) {
    const paths = [];
    const seen = new Set();
    for (const i of matches) {
      const p = m.kind[i] === MODULE ? m.pathOf(i) : (m.parent[i] >= 0 ? m.pathOf(m.parent[i]) : '') + ':' + m.rows[i][4];
      if (!seen.has(p)) seen.add(p), paths.push(p);
    }
    return paths;
  }

  // ---------------------------------------------------------------- expanded calls

  /** Sets `open` (over recorded node ids) to the expandable calls of depth < d. */
  function openToDepth(m, open, d) {
    for (let i = 0; i < m.n; i++) open[i] = m.expandable[i] && m.depth[i] < d ? 1 : 0;
    return open;
  }

  /** Marks every expandable call around recorded node i in `open`. */
  function expandAncestors(m, open, i) {
    for (let p = m.parent[i], steps = 0; p >= 0 && steps <= m.n; p = m.parent[p], steps++) {
      if (m.expandable[p]) open[p] = 1;
    }
  }

  /** The calls of the module(s) at `path`, in recording order. */
  function callsOfPath(m, path) {
    const out = [];
    m.modules.forEach((mod, k) => {
      if (mod && String(mod.path) === String(path)) out.push(...m.callsOf[k]);
    });
    return out;
  }

  // ---------------------------------------------------------------- visible graph

  /** out[i] = step(i, p, out[p]) down the parent tree, whatever the id order (memoised). */
  function overParents(m, step) {
    const {n, parent} = m;
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
  function reachedFromInputs(m) {
    const {n, kind, producer} = m;
    const E = m.edges;
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
      if (kind[i] === MODULE) for (const t of ids(m, m.rows[i][6])) steps.push(t, i);
    }
    for (let k = 0; k < steps.length; k += 2) start[steps[k] + 1]++;
    const stack = [];
    let inputs = 0;
    for (let i = 0; i < n; i++) {
      if (kind[i] === 0) reached[i] = 1, stack.push(i), inputs++;
      else if (kind[i] === FUNCTION && !fed[i]) reached[i] = 2, stack.push(i);
    }
    if (!inputs || (!m.doc.hide_unreached && !m.doc.hide_inner_tensors)) return reached.fill(1);
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

  /**
   * FORMAT.md "The visible graph", for the calls marked in `open` (over recorded node ids):
   * {vis: the visible nodes' recorded ids, rep, drawn, around, clusters: the clusters' calls,
   * from/to: the visible edges as visible indices}.
   */
  function computeVisible(m, open) {
    const {n, kind, leaf, producer, depth} = m;
    const hide = !!m.doc.hide_inner_tensors;
    const reach = m.reached || (m.reached = reachedFromInputs(m));
    // Shown ops: all of them, or (hide_unreached) those an input reaches.
    const shown = (i) => !m.doc.hide_unreached || reach[i] === 1;
    const folds = (i) => kind[i] === MODULE && (leaf[i] === 1 || open[i] === 0);
    const folding = overParents(m, (i, p, fp) => (fp >= 0 ? fp : folds(i) ? i : -1));
    const isOp = (i) => i >= 0 && (kind[i] === FUNCTION || kind[i] === MODULE);
    const opDrawn = (i) => (kind[i] === FUNCTION ? folding[i] < 0 : folding[i] === i);
    const drawn = new Uint8Array(n);
    let nv = 0;
    for (let i = 0; i < n; i++) {
      const k = kind[i];
      let d;
      if (k <= 1) d = true;
      else if (k >= FUNCTION) d = opDrawn(i) && shown(i);
      else if (k === 2) {
        const p = producer[i];
        d = !hide && (isOp(p) ? opDrawn(p) && shown(p) : folding[i] < 0);
      }
      else d = !hide && folding[i] < 0;
      if (d) drawn[i] = 1, nv++;
    }
    // Drawn ops no input reaches read only constants and parameters: those are drawn too.
    if (hide && !m.doc.hide_unreached) {
      const E = m.edges;
      for (let k = 0; k < E.length; k += 2) {
        const a = E[k];
        const b = E[k + 1];
        if (a < 0 || b < 0 || a >= n || b >= n || drawn[a] || !drawn[b] || reach[b] !== 0) continue;
        if ((kind[a] === 3 || kind[a] === 4) && isOp(b) && folding[a] < 0) drawn[a] = 1, nv++;
      }
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
    const E = m.edges;
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
    const around = overParents(m, (i, p, ap) => (p < 0 ? -1 : cand(p) ? p : ap));
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

  // ---------------------------------------------------------------- signatures

  /**
   * Layouts are cached by content: a level's signature is the direction, its items (node
   * sizes; child clusters by their own signature and title width) and its lifted edges. So
   * when one call is expanded or collapsed, only that call's level and its ancestors' levels
   * (whose child box changed size) get new signatures and are laid out again; every other
   * level hits the cache, and identical levels (the layers of a transformer) share one layout.
   *
   * `measure` sizes the boxes: measure.ensure(i) sets measure.w[i] and measure.h[i] for
   * recorded node i, measure.title(call) is the width of a cluster's title bar. `ids` maps a
   * signature's text to its small id (kept across updates). Sets lv.sig and lv.titleW.
   */
  function signatures(m, vg, lv, measure, ids) {
    const sig = new Int32Array(lv.count);
    const titleW = new Float64Array(lv.count);
    const {w, h} = measure;
    for (const L of lv.order) {
      const parts = [m.doc.direction];
      for (const code of lv.items[L]) {
        if (code >= 0) {
          const i = vg.vis[code];
          measure.ensure(i);
          parts.push(w[i] + 'x' + h[i]);
        } else {
          const c = -1 - code;
          titleW[c] = measure.title(lv.call[c]);
          parts.push('c' + sig[c] + ':' + titleW[c]);
        }
      }
      parts.push('|' + lv.edges[L].join(','));
      const text = parts.join(' ');
      let id = ids.get(text);
      if (id === undefined) ids.set(text, id = ids.size);
      sig[L] = id;
    }
    lv.sig = sig;
    lv.titleW = titleW;
  }

  RV.model = {
    KIND_NAMES, FUNCTION, MODULE, fmtInt, clamp,
    buildModel, labelLines, subText, tooltipLines, matchesOf, searchPaths,
    openToDepth, expandAncestors, callsOfPath,
    reachedFromInputs, computeVisible, buildLevels, signatures,
  };
})(RecorderViewer);

if (typeof module !== 'undefined' && module.exports) module.exports = RecorderViewer.model;
