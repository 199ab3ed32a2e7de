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
 *      result = {sig, w, h, x, y, pts, start, mode}: item centres, edge k's points are
 *      pts[2*start[k] .. 2*start[k+1]) as x, y pairs, all relative to the level's top left.
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
        start: new Int32Array(1), mode: 'empty'};
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

  /**
   * Places rows of items along the rank direction. Edges are straight exit-to-entry lines;
   * one that skips rows bends around the right of the block (a middle point).
   */
  function placeRows(rows, level, job) {
    const n = level.w.length;
    const rowOf = new Int32Array(n);
    rows.forEach((row, r) => {
      for (const i of row) rowOf[i] = r;
    });
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
    const toXY = (along, cross) => {
      const t = flip ? length - along : along;
      return across ? [t, cross] : [cross, t];
    };
    const x = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) [x[i], y[i]] = toXY(a[i], c[i]);
    const m = level.edges.length / 2;
    const pts = [];
    const start = new Int32Array(m + 1);
    let bulge = 0;
    for (let k = 0; k < m; k++) {
      const u = level.edges[2 * k];
      const v = level.edges[2 * k + 1];
      pts.push(...side(x[u], y[u], level.w[u], level.h[u], dir, 1));
      if (Math.abs(rowOf[v] - rowOf[u]) > 1) {
        const out = 24 + 10 * (k % 4);
        bulge = Math.max(bulge, out);
        pts.push(...toXY((a[u] + a[v]) / 2, widest + out));
      }
      pts.push(...side(x[v], y[v], level.w[v], level.h[v], dir, -1));
      start[k + 1] = pts.length / 2;
    }
    const breadth = widest + bulge;
    return {
      w: across ? length : breadth, h: across ? breadth : length, x, y, pts: Float64Array.from(pts), start,
    };
  }

  /** The middle of a box's exit side (sign 1) or entry side (sign -1) for direction dir. */
  function side(x, y, w, h, dir, sign) {
    switch (dir) {
      case 'BT': return [x, y - sign * h / 2];
      case 'LR': return [x + sign * w / 2, y];
      case 'RL': return [x - sign * w / 2, y];
      default: return [x, y + sign * h / 2];
    }
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
    let minX = Infinity;
    let minY = Infinity;
    let maxX = -Infinity;
    let maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      const node = g.node(String(i));
      x[i] = node.x;
      y[i] = node.y;
      minX = Math.min(minX, x[i] - level.w[i] / 2);
      maxX = Math.max(maxX, x[i] + level.w[i] / 2);
      minY = Math.min(minY, y[i] - level.h[i] / 2);
      maxY = Math.max(maxY, y[i] + level.h[i] / 2);
    }
    const start = new Int32Array(m + 1);
    const lists = [];
    for (let k = 0; k < m; k++) {
      const e = g.edge(String(level.edges[2 * k]), String(level.edges[2 * k + 1]));
      const points = (e && e.points) || [];
      lists.push(points);
      start[k + 1] = start[k] + points.length;
      for (const p of points) {
        minX = Math.min(minX, p.x);
        maxX = Math.max(maxX, p.x);
        minY = Math.min(minY, p.y);
        maxY = Math.max(maxY, p.y);
      }
    }
    const pts = new Float64Array(2 * start[m]);
    let o = 0;
    for (const points of lists) {
      for (const p of points) {
        pts[o++] = p.x - minX;
        pts[o++] = p.y - minY;
      }
    }
    for (let i = 0; i < n; i++) {
      x[i] -= minX;
      y[i] -= minY;
    }
    return {w: maxX - minX, h: maxY - minY, x, y, pts, start, mode: 'dagre'};
  }
})();
