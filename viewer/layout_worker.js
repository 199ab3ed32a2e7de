/* recorder viewer: the layout worker.
 *
 * Runs in a Web Worker created from a Blob (dagre's source, then this file), or, when workers
 * are unavailable, on the main thread with a stand-in `self`. It lays out "levels": the
 * direct items of one cluster (or of the top level) with the edges lifted to them. It keeps
 * no state between jobs; the main thread caches results by level signature.
 *
 * In:  {type: 'layout', job, dir, nodesep, ranksep, edgesep, pad, titleH,
 *       levels: [{sig, w: Float64Array, h: Float64Array, child: Int32Array, minW: Float64Array,
 *                 edges: Int32Array}]}   (children before parents; child[i] >= 0 names a level
 *                                          of this job whose laid-out size is item i's size)
 * Out: {type: 'progress', job, done, total, result} after each level,
 *      {type: 'done', job} at the end, {type: 'error', job, message} on failure.
 *      result = {sig, w, h, x, y, pts, start, bands, rank, mode}: item centres, edge k's points
 *      are pts[2*start[k] .. 2*start[k+1]) as x, y pairs, all relative to the level's top left.
 *
 * Bands and routes. Along the flow (y for TB/BT, x for LR/RL, counted in the flow's sense:
 * f = y, -y, x or -x) the items of a layered layout sit in disjoint bands, one per rank
 * (bands: [start0, end0, start1, ...] in f, ascending; rank[i]: item i's band), with free
 * channels between them. Every edge is routed so that it never crosses an item's box: straight
 * in its source's column to the end of the source's band, across channels, straight through a
 * band only in a column no item of that band covers (dagre's dummy nodes), and straight in its
 * target's column from the channel before the target's band. A route is always
 *   [exit, end of the source's band, ...middle..., lead-in, start of the target's band, entry]
 * (the first two points in the source's column, the last three in the target's: canvas.js
 * moves them to the column an edge from inside a cluster arrives in). Edges dagre has no dummy
 * nodes for (the O(n) placements) go straight when their ends are in consecutive bands, else
 * along a corridor beside the level's items.
 */
/* global dagre */
(function () {
  'use strict';

  const HUGE_LEVEL = 2500; // above this, never call dagre
  const BIG_LEVEL = 800; // above this, dagre ranks by longest path
  const DEEP_LEVEL = 700; // dagre recurses once per rank: longer paths overflow a worker's stack
  const ROW_WRAP = 40; // rows of the O(n) placement wrap after this many items
  const YIELD_MS = 25; // give the event loop a turn this often (a newer job may be waiting)

  let pending = null; // the newest job not started yet
  let running = false;

  self.onmessage = (ev) => {
    const msg = ev.data;
    if (!msg || msg.type !== 'layout') return;
    pending = msg; // a job still running sees this at its next yield and stops
    if (!running) run();
  };

  async function run() {
    running = true;
    while (pending) {
      const job = pending;
      pending = null;
      try {
        await runJob(job);
      } catch (err) {
        self.postMessage({type: 'error', job: job.job, message: String(err && err.message || err)});
      }
    }
    running = false;
  }

  const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());
  const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

  async function runJob(job) {
    const laidOut = new Map(); // sig -> result of this job
    const total = job.levels.length;
    let lastYield = now();
    for (let k = 0; k < total; k++) {
      if (pending) return; // superseded by a newer job
      const level = job.levels[k];
      resolveChildSizes(level, laidOut, job);
      const result = layoutLevel(level, job);
      laidOut.set(level.sig, result);
      self.postMessage({type: 'progress', job: job.job, done: k + 1, total, result});
      if (now() - lastYield > YIELD_MS) {
        await pause();
        lastYield = now();
      }
    }
    self.postMessage({type: 'done', job: job.job});
  }

  /** A cluster item is its content's size plus padding and a title bar. */
  function resolveChildSizes(level, laidOut, job) {
    for (let i = 0; i < level.child.length; i++) {
      const sig = level.child[i];
      if (sig < 0) continue;
      const inner = laidOut.get(sig);
      if (!inner) throw new Error('level ' + sig + ' was not laid out before its parent');
      level.w[i] = Math.max(inner.w, level.minW[i]) + 2 * job.pad;
      level.h[i] = inner.h + job.titleH + 2 * job.pad;
    }
  }

  function layoutLevel(level, job) {
    const n = level.w.length;
    const t0 = now();
    let result;
    if (n === 0) {
      result = {w: 0, h: 0, x: new Float64Array(0), y: new Float64Array(0), pts: new Float64Array(0),
        start: new Int32Array(1), bands: new Float64Array(0), rank: new Int32Array(0), mode: 'empty'};
    } else if (n > HUGE_LEVEL) {
      result = rowsLayout(level, job);
    } else if (isChain(n, level.edges)) {
      result = chainLayout(level, job);
    } else {
      const rank = longestPathRanks(n, level.edges);
      let deepest = 0;
      for (let i = 0; i < n; i++) deepest = Math.max(deepest, rank[i]);
      try {
        if (deepest >= DEEP_LEVEL) throw new Error('too deep for dagre');
        result = dagreLayout(level, job, n > BIG_LEVEL ? 'longest-path' : 'network-simplex');
      } catch (err) {
        result = rowsLayout(level, job, rank); // also when dagre's recursion overflows the stack
      }
    }
    result.sig = level.sig;
    result.ms = now() - t0;
    return result;
  }

  /** True when the items form one path: every in/out degree <= 1, n - 1 edges, connected. */
  function isChain(n, edges) {
    const m = edges.length / 2;
    if (m !== n - 1) return false;
    const next = new Int32Array(n).fill(-1);
    const indeg = new Uint8Array(n);
    for (let k = 0; k < m; k++) {
      const a = edges[2 * k];
      const b = edges[2 * k + 1];
      if (next[a] >= 0 || indeg[b] > 0) return false;
      next[a] = b;
      indeg[b] = 1;
    }
    let start = -1;
    for (let i = 0; i < n; i++) {
      if (indeg[i] === 0) {
        if (start >= 0) return false;
        start = i;
      }
    }
    let seen = 0;
    for (let i = start; i >= 0 && seen <= n; i = next[i]) seen++;
    return seen === n;
  }

  /** Chains are stacked along the rank direction in path order. */
  function chainLayout(level, job) {
    const n = level.w.length;
    const edges = level.edges;
    const next = new Int32Array(n).fill(-1);
    const indeg = new Uint8Array(n);
    for (let k = 0; k < edges.length; k += 2) {
      next[edges[k]] = edges[k + 1];
      indeg[edges[k + 1]] = 1;
    }
    let start = 0;
    while (start < n && indeg[start]) start++;
    const rows = [];
    for (let i = start; i >= 0 && rows.length < n; i = next[i]) rows.push([i]);
    const result = placeRows(rows, level, job);
    result.mode = 'chain';
    return result;
  }

  /** Huge or deep levels: one row per longest-path rank, rows wrapped. O(n + e). */
  function rowsLayout(level, job, ranks) {
    const n = level.w.length;
    const rank = ranks || longestPathRanks(n, level.edges);
    let maxRank = 0;
    for (let i = 0; i < n; i++) if (rank[i] > maxRank) maxRank = rank[i];
    const byRank = Array.from({length: maxRank + 1}, () => []);
    for (let i = 0; i < n; i++) byRank[rank[i]].push(i);
    const rows = [];
    for (const items of byRank) {
      for (let k = 0; k < items.length; k += ROW_WRAP) rows.push(items.slice(k, k + ROW_WRAP));
    }
    const result = placeRows(rows, level, job);
    result.mode = 'rows';
    return result;
  }

  /**
   * Longest-path ranks over a topological order (Kahn's algorithm; a cycle is broken by
   * taking the first unplaced item, its edges from unplaced items are ignored). O(n + e).
   */
  function longestPathRanks(n, edges) {
    const m = edges.length / 2;
    const first = new Int32Array(n + 1);
    for (let k = 0; k < m; k++) first[edges[2 * k] + 1]++;
    for (let i = 0; i < n; i++) first[i + 1] += first[i];
    const outs = new Int32Array(m);
    const fill = first.slice(0, n);
    const indeg = new Int32Array(n);
    for (let k = 0; k < m; k++) {
      outs[fill[edges[2 * k]]++] = edges[2 * k + 1];
      indeg[edges[2 * k + 1]]++;
    }
    const rank = new Int32Array(n);
    const placed = new Uint8Array(n);
    const queue = new Int32Array(n + n);
    let head = 0;
    let tail = 0;
    for (let i = 0; i < n; i++) if (indeg[i] === 0) queue[tail++] = i;
    let done = 0;
    let nextFree = 0;
    while (done < n) {
      if (head === tail) {
        while (placed[nextFree]) nextFree++;
        queue[tail++] = nextFree; // break a cycle
      }
      const u = queue[head++];
      if (placed[u]) continue;
      placed[u] = 1;
      done++;
      for (let k = first[u]; k < first[u + 1]; k++) {
        const v = outs[k];
        if (placed[v]) continue;
        if (rank[u] + 1 > rank[v]) rank[v] = rank[u] + 1;
        if (--indeg[v] === 0 && tail < queue.length) queue[tail++] = v;
      }
    }
    return rank;
  }

  /** Places rows of items along the rank direction (one band per row); edges are routed. */
  function placeRows(rows, level, job) {
    const n = level.w.length;
    const dir = job.dir;
    const across = dir === 'LR' || dir === 'RL';
    const alongSize = across ? level.w : level.h;
    const crossSize = across ? level.h : level.w;
    const a = new Float64Array(n); // centre along the rank direction
    const c = new Float64Array(n); // centre across it
    const rowLength = rows.map((row) => {
      let len = 0;
      for (const i of row) len += crossSize[i];
      return len + job.nodesep * (row.length - 1);
    });
    let widest = 0;
    for (const len of rowLength) widest = Math.max(widest, len);
    let pos = 0;
    rows.forEach((row, r) => {
      let thick = 0;
      for (const i of row) thick = Math.max(thick, alongSize[i]);
      let at = (widest - rowLength[r]) / 2;
      for (const i of row) {
        a[i] = pos + thick / 2;
        c[i] = at + crossSize[i] / 2;
        at += crossSize[i] + job.nodesep;
      }
      pos += thick + job.ranksep;
    });
    const length = Math.max(0, pos - job.ranksep);
    const flip = dir === 'BT' || dir === 'RL';
    const x = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t = flip ? length - a[i] : a[i];
      if (across) x[i] = t, y[i] = c[i];
      else x[i] = c[i], y[i] = t;
    }
    return finish(level, job, x, y, null);
  }

  /** The flow's frame for direction dir: along x (LR, RL) or y; fwd -1 when it runs backwards. */
  function frameOf(dir) {
    return {across: dir === 'LR' || dir === 'RL', fwd: dir === 'BT' || dir === 'RL' ? -1 : 1};
  }

  /** Bands of items (see the header): {bands, rank}. Items whose centres agree share a band. */
  function bandsOf(level, x, y, fr) {
    const n = level.w.length;
    const fc = new Float64Array(n);
    const half = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      fc[i] = fr.fwd * (fr.across ? x[i] : y[i]);
      half[i] = (fr.across ? level.w[i] : level.h[i]) / 2;
    }
    const order = Array.from({length: n}, (_, i) => i).sort((p, q) => fc[p] - fc[q] || p - q);
    const rank = new Int32Array(n);
    const out = [];
    let last = -Infinity;
    for (const i of order) {
      const b = out.length / 2 - 1;
      if (b >= 0 && (Math.abs(fc[i] - last) < 0.5 || fc[i] - half[i] < out[2 * b + 1])) { // same band, or overlapping
        out[2 * b] = Math.min(out[2 * b], fc[i] - half[i]);
        out[2 * b + 1] = Math.max(out[2 * b + 1], fc[i] + half[i]);
      } else {
        out.push(fc[i] - half[i], fc[i] + half[i]);
        last = fc[i];
      }
      rank[i] = out.length / 2 - 1;
    }
    return {bands: Float64Array.from(out), rank};
  }

  /** The band holding flow coordinate f, or -1 (binary search). */
  function bandAt(bands, f) {
    let lo = 0;
    let hi = bands.length / 2 - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (f < bands[2 * mid] - 0.5) hi = mid - 1;
      else if (f > bands[2 * mid + 1] + 0.5) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /**
   * Routes the level's edges (see the header; middle(k): dagre's points of edge k between its
   * ends, or null), then moves everything so that the level's top left is (0, 0).
   */
  function finish(level, job, x, y, middle) {
    const n = level.w.length;
    const fr = frameOf(job.dir);
    const {bands, rank} = bandsOf(level, x, y, fr);
    const nb = bands.length / 2;
    const crossOf = (i) => (fr.across ? y[i] : x[i]);
    const fOf = (i) => fr.fwd * (fr.across ? x[i] : y[i]);
    const halfOf = (i) => (fr.across ? level.w[i] : level.h[i]) / 2;
    let maxCross = -Infinity;
    for (let i = 0; i < n; i++) maxCross = Math.max(maxCross, crossOf(i) + (fr.across ? level.h[i] : level.w[i]) / 2);
    const gapAfter = (r) => (r + 1 < nb ? (bands[2 * r + 1] + bands[2 * r + 2]) / 2 : bands[2 * r + 1] + job.ranksep / 2);
    const gapBefore = (r) => (r > 0 ? (bands[2 * r - 1] + bands[2 * r]) / 2 : bands[0] - job.ranksep / 2);
    const pts = [];
    const push = (cross, f) => {
      const along = fr.fwd * f;
      if (fr.across) pts.push(along, cross);
      else pts.push(cross, along);
    };
    const m = level.edges.length / 2;
    const start = new Int32Array(m + 1);
    for (let k = 0; k < m; k++) {
      const u = level.edges[2 * k];
      const v = level.edges[2 * k + 1];
      const ru = rank[u];
      const rv = rank[v];
      const cu = crossOf(u);
      const cv = crossOf(v);
      push(cu, fOf(u) + halfOf(u));
      push(cu, bands[2 * ru + 1]);
      const mid = rv > ru ? middle && middle(k) : null;
      if (mid) {
        for (let p = 0; p < mid.length; p++) {
          const c = fr.across ? mid[p].y : mid[p].x;
          const f = fr.fwd * (fr.across ? mid[p].x : mid[p].y);
          const b = bandAt(bands, f);
          if (b >= 0) push(c, bands[2 * b]), push(c, bands[2 * b + 1]); // through a band in a free column
          else push(c, f);
        }
      } else if (rv !== ru + 1) { // along a corridor beside the items
        const corridor = maxCross + job.nodesep / 2 + 6 * (k % 4);
        push(corridor, gapAfter(ru));
        push(corridor, gapBefore(rv));
      }
      const before = rv > 0 ? bands[2 * rv] - bands[2 * rv - 1] : job.ranksep;
      push(cv, bands[2 * rv] - Math.min(8, before / 3));
      push(cv, bands[2 * rv]);
      push(cv, fOf(v) - halfOf(v));
      start[k + 1] = pts.length / 2;
    }
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      minX = Math.min(minX, x[i] - level.w[i] / 2);
      maxX = Math.max(maxX, x[i] + level.w[i] / 2);
      minY = Math.min(minY, y[i] - level.h[i] / 2);
      maxY = Math.max(maxY, y[i] + level.h[i] / 2);
    }
    for (let p = 0; p < pts.length; p += 2) {
      minX = Math.min(minX, pts[p]);
      maxX = Math.max(maxX, pts[p]);
      minY = Math.min(minY, pts[p + 1]);
      maxY = Math.max(maxY, pts[p + 1]);
    }
    for (let i = 0; i < n; i++) x[i] -= minX, y[i] -= minY;
    for (let p = 0; p < pts.length; p += 2) pts[p] -= minX, pts[p + 1] -= minY;
    const shift = fr.fwd * (fr.across ? minX : minY);
    for (let b = 0; b < bands.length; b++) bands[b] -= shift;
    return {w: maxX - minX, h: maxY - minY, x, y, pts: Float64Array.from(pts), start, bands, rank};
  }

  function dagreLayout(level, job, ranker) {
    const n = level.w.length;
    const g = new dagre.graphlib.Graph();
    g.setGraph({
      rankdir: job.dir, nodesep: job.nodesep, ranksep: job.ranksep, edgesep: job.edgesep,
      ranker, marginx: 0, marginy: 0,
    });
    g.setDefaultEdgeLabel(() => ({}));
    for (let i = 0; i < n; i++) g.setNode(String(i), {width: level.w[i], height: level.h[i]});
    const m = level.edges.length / 2;
    for (let k = 0; k < m; k++) g.setEdge(String(level.edges[2 * k]), String(level.edges[2 * k + 1]));
    dagre.layout(g);

    const x = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const node = g.node(String(i));
      x[i] = node.x;
      y[i] = node.y;
    }
    const middle = (k) => { // dagre's points without the two on the ends' boxes
      const e = g.edge(String(level.edges[2 * k]), String(level.edges[2 * k + 1]));
      const points = (e && e.points) || [];
      return points.length >= 2 ? points.slice(1, -1) : null;
    };
    const result = finish(level, job, x, y, middle);
    result.mode = 'dagre';
    return result;
  }
})();
