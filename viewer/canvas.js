/* recorder viewer, part 3 of 4: the canvas.
 *
 * Box sizes (text measured once per node), the composed picture (absolute geometry, top-down
 * from the level layouts of layout.js's cache: boxes, edge routes, a grid for hit-testing),
 * drawing on one canvas on the next frame with culling and level of detail (below some zooms:
 * no shape lines, no text, filled rectangles without arrow heads), and the view (pan, zoom,
 * fit, anchors). Works on the viewer's state (viewer.js makes it): model, picture, view,
 * canvas, ctx, dpr, W, H, sizes, frame, stats.
 *
 * The view opens readable: the whole picture when it fits at a scale where the smallest text
 * drawn is at least MIN_TEXT_PX CSS pixels, else at such a scale with the graph's start (its
 * first input) at the top (TB), left (LR), bottom (BT) or right (RL) of the stage.
 */
(function (RV) {
  'use strict';

  const {MODULE, FUNCTION, labelLines, subText, clamp} = RV.model;
  const {PAD, TITLE_H, boxW, boxH} = RV.layout;
  const FONT_PX = 12;
  const SMALL_PX = 10;
  const TITLE_PX = 11;
  const FONT = FONT_PX + 'px sans-serif';
  const SMALL_FONT = SMALL_PX + 'px sans-serif';
  const TITLE_FONT = 'bold ' + TITLE_PX + 'px sans-serif';
  const LINE_H = 15; // one label line
  const SMALL_H = 13; // the shape line
  const PAD_X = 8;
  const PAD_Y = 5;
  const MIN_NODE_W = 48;
  const MARK_W = 14; // room for the '+' of a collapsed composite call
  const LOD_TEXT = 0.35; // below this zoom: boxes without text
  const LOD_SIMPLE = 0.12; // below this zoom: filled rectangles, no arrow heads
  const MIN_TEXT_PX = 9; // the smallest text the view opens with, in CSS pixels
  const READABLE = MIN_TEXT_PX / SMALL_PX; // the zoom at which every text drawn is that large
  const LOD_SHAPES = READABLE; // the shape line (the smallest text) needs this zoom
  const CORNER = 8; // edges' corners are rounded with this radius
  const MIN_SCALE = 0.0002;
  const MAX_SCALE = 8;
  const STYLES = [ // fill, stroke
    ['#ffffc0', '#a89c4a'], // 0 input / output tensor
    ['#fffff0', '#c9c08a'], // 1 inner tensor
    ['#eeeeee', '#a0a0a0'], // 2 constant / parameter
    ['#f0f8ff', '#7d9cc0'], // 3 function
    ['#8fbc8f', '#4f7f4f'], // 4 module call drawn as one box (leaf)
    ['#e3d3f5', '#7b59a8'], // 5 collapsed composite call
  ];

  const $ = (id) => document.getElementById(id);
  const tint = (d) => 'hsl(215, 45%, ' + Math.max(84, 98 - 3 * d) + '%)';
  /** The flow's frame (as layout_worker.js's): along x (LR, RL) or y; fwd -1 when it runs backwards. */
  const frameOf = (dir) => ({across: dir === 'LR' || dir === 'RL', fwd: dir === 'BT' || dir === 'RL' ? -1 : 1});

  /**
   * The canvas part over `state` (state.model set, state.canvas the page's canvas). hooks:
   * drawn() after each frame drawn.
   */
  function createCanvas(state, hooks) {
    const view = state.view;
    const stats = state.stats;
    const frame = state.frame;
    const M = state.model;
    const cache = state.jobs.cache;

    // ------------------------------------------------------------ sizes

    const sizes = state.sizes; // per recorded node, 0 until measured
    sizes.w = new Float32Array(M.n);
    sizes.h = new Float32Array(M.n);
    const textWidths = sizes.texts;

    function textWidth(font, text) {
      const key = font + '\u0000' + text;
      let w = textWidths.get(key);
      if (w === undefined) {
        state.measureCtx.font = font;
        w = state.measureCtx.measureText(text).width;
        textWidths.set(key, w);
      }
      return w;
    }

    function ensureSize(i) {
      if (sizes.w[i]) return;
      const lines = labelLines(M, i);
      let w = 0;
      for (const line of lines) w = Math.max(w, textWidth(FONT, line));
      let h = lines.length * LINE_H + 2 * PAD_Y;
      const sub = subText(M, i);
      if (sub) w = Math.max(w, textWidth(SMALL_FONT, sub)), h += SMALL_H;
      const mark = M.kind[i] === MODULE && M.expandable[i] ? MARK_W : 0;
      sizes.w[i] = Math.ceil(Math.max(MIN_NODE_W, w + 2 * PAD_X + mark));
      sizes.h[i] = Math.ceil(h);
    }

    const titleText = (call) => labelLines(M, call).join(' ');
    const titleWidth = (call) => Math.ceil(textWidth(TITLE_FONT, titleText(call)) + 2 * PAD_X + MARK_W);
    /** model.signatures' `measure`. */
    const measure = {w: sizes.w, h: sizes.h, ensure: ensureSize, title: titleWidth};

    const nodeW = (g, v) => sizes.w[g.vg.vis[v]];
    const nodeH = (g, v) => sizes.h[g.vg.vis[v]];

    // ------------------------------------------------------------ composition

    /** Absolute geometry, composed top-down from the level layouts. */
    function compose(vg, lv) {
      const nv = vg.vis.length;
      const nl = lv.count;
      const [nx, ny] = [new Float64Array(nv), new Float64Array(nv)]; // node boxes' top left
      const [cx, cy, cw, ch] = [0, 0, 0, 0].map(() => new Float64Array(nl)); // cluster boxes
      const [ox, oy] = [new Float64Array(nl), new Float64Array(nl)]; // level content origins
      cw[0] = cache.get(lv.sig[0]).w; // level 0's box is the whole picture
      ch[0] = cache.get(lv.sig[0]).h;
      for (let k = nl - 1; k >= 0; k--) {
        const L = lv.order[k];
        const lay = cache.get(lv.sig[L]);
        lv.items[L].forEach((code, j) => {
          const X = ox[L] + lay.x[j];
          const Y = oy[L] + lay.y[j];
          if (code >= 0) {
            nx[code] = X - sizes.w[vg.vis[code]] / 2;
            ny[code] = Y - sizes.h[vg.vis[code]] / 2;
            return;
          }
          const c = -1 - code;
          const inner = cache.get(lv.sig[c]);
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

    /**
     * Every edge follows the routes of the level layouts (layout_worker.js): an edge between
     * two items of one level is that level's route; an edge from (or to) a node inside a
     * cluster first leaves it (enters it) on its own: in its column to the end of its band, then
     * straight out through the cluster's exit side when the band is the cluster's last, else
     * across the channel after the band to the corridor beside the cluster's content (its
     * padding) and along it; level by level up to the level that holds both ends, whose route
     * it joins in the column it arrived in. No segment crosses a node's box. Points per edge:
     * epts[2*estart[e] .. 2*estart[e+1]).
     */
    function edgeGeometry(g, ox, oy) {
      const {vg, lv} = g;
      const fr = frameOf(M.doc.direction);
      const ne = vg.from.length;
      const nl = lv.count;
      const nodeItem = new Int32Array(vg.vis.length);
      const levelItem = new Int32Array(nl);
      const lifted = []; // per level: item pair -> its edge index in the level layout
      for (let L = 0; L < nl; L++) {
        lv.items[L].forEach((code, j) => {
          if (code >= 0) nodeItem[code] = j;
          else levelItem[-1 - code] = j;
        });
        const m = new Map();
        const list = lv.edges[L];
        for (let k = 0; k < list.length; k += 2) m.set(list[k] * 1e6 + list[k + 1], k / 2);
        lifted.push(m);
      }
      // Flow coordinates: c across the flow, f along it (in its sense).
      const cOff = (L) => (fr.across ? oy[L] : ox[L]);
      const fOff = (L) => fr.fwd * (fr.across ? ox[L] : oy[L]);
      const fRange = (a0, len) => (fr.fwd > 0 ? [a0, a0 + len] : [-a0 - len, -a0]);
      const nodeF = (v) => fRange(fr.across ? g.nx[v] : g.ny[v], fr.across ? nodeW(g, v) : nodeH(g, v));
      const nodeC = (v) => (fr.across ? g.ny[v] + nodeH(g, v) / 2 : g.nx[v] + nodeW(g, v) / 2);
      const boxF = (L) => fRange(fr.across ? g.cx[L] : g.cy[L], fr.across ? g.cw[L] : g.ch[L]);
      /**
       * The corridor beside cluster L's content nearer to cross position c; the right one when
       * the edge crosses the title bar (TB entries, BT exits): the title is written on the left.
       */
      const corridor = (L, c, side) => {
        const lay = cache.get(lv.sig[L]);
        const lo = cOff(L) - PAD / 2;
        const hi = cOff(L) + (fr.across ? lay.h : lay.w) + PAD / 2;
        if (!fr.across && side === fr.fwd) return hi;
        return c - lo <= hi - c ? lo : hi;
      };
      const pts = [];
      const push = (c, f) => {
        const along = fr.fwd * f;
        const [x, y] = fr.across ? [along, c] : [c, along];
        const n = pts.length;
        if (n >= 2 && Math.abs(pts[n - 2] - x) + Math.abs(pts[n - 1] - y) < 1e-6) return;
        pts.push(x, y);
      };
      const start = new Int32Array(ne + 1);
      const box = new Float64Array(4 * ne);
      for (let e = 0; e < ne; e++) {
        const L = lv.edgeLevel[e];
        // Out of the source's clusters, up to level L.
        const u = vg.from[e];
        let Lu = lv.nodeLevel[u];
        let ju = nodeItem[u];
        let cu = nodeC(u);
        push(cu, nodeF(u)[1]);
        for (let steps = 0; Lu !== L && Lu > 0 && steps < nl; steps++) {
          const lay = cache.get(lv.sig[Lu]);
          const r = lay.rank[ju];
          push(cu, fOff(Lu) + lay.bands[2 * r + 1]);
          if (r < lay.bands.length / 2 - 1) {
            const cc = corridor(Lu, cu, -1);
            push(cc, fOff(Lu) + (lay.bands[2 * r + 1] + lay.bands[2 * r + 2]) / 2);
            cu = cc;
          }
          push(cu, boxF(Lu)[1]);
          ju = levelItem[Lu];
          Lu = lv.parent[Lu];
        }
        // Into the target's clusters, from level L down (built inside out).
        const v = vg.to[e];
        let Lv = lv.nodeLevel[v];
        let jv = nodeItem[v];
        let cv = nodeC(v);
        const tail = [[cv, nodeF(v)[0]]];
        for (let steps = 0; Lv !== L && Lv > 0 && steps < nl; steps++) {
          const lay = cache.get(lv.sig[Lv]);
          const r = lay.rank[jv];
          const bs = fOff(Lv) + lay.bands[2 * r];
          let seg;
          if (r > 0) {
            const before = lay.bands[2 * r] - lay.bands[2 * r - 1];
            const cc = corridor(Lv, cv, 1);
            seg = [[cc, boxF(Lv)[0]], [cc, fOff(Lv) + (lay.bands[2 * r - 1] + lay.bands[2 * r]) / 2],
              [cv, bs - Math.min(8, before / 3)], [cv, bs]];
            cv = cc;
          } else {
            seg = [[cv, boxF(Lv)[0]], [cv, bs]];
          }
          tail.unshift(...seg);
          jv = levelItem[Lv];
          Lv = lv.parent[Lv];
        }
        // Level L's route between the two items, moved to the columns the edge arrives in.
        const k = lifted[L].get(ju * 1e6 + jv);
        const lay = cache.get(lv.sig[L]);
        if (k !== undefined && lay.start[k + 1] - lay.start[k] >= 5) {
          const a = lay.start[k];
          const b = lay.start[k + 1];
          const at = (p) => [fr.across ? oy[L] + lay.pts[2 * p + 1] : ox[L] + lay.pts[2 * p],
            fOff(L) + fr.fwd * (fr.across ? lay.pts[2 * p] : lay.pts[2 * p + 1])];
          push(cu, at(a)[1]);
          push(cu, at(a + 1)[1]);
          for (let p = a + 2; p < b - 3; p++) push(...at(p));
          for (let p = b - 3; p < b; p++) push(cv, at(p)[1]);
        }
        for (const [c, f] of tail) push(c, f);
        start[e + 1] = pts.length / 2;
        box.set([Infinity, Infinity, -Infinity, -Infinity], 4 * e); // bounding box, for culling
        for (let p = 2 * start[e]; p < pts.length; p += 2) {
          for (let q = 0; q < 2; q++) {
            box[4 * e + q] = Math.min(box[4 * e + q], pts[p + q]);
            box[4 * e + 2 + q] = Math.max(box[4 * e + 2 + q], pts[p + q]);
          }
        }
      }
      Object.assign(g, {estart: start, epts: Float64Array.from(pts), ebox: box});
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
      const G = state.picture;
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
      const r = state.canvas.getBoundingClientRect();
      return hitWorld((clientX - r.left - view.tx) / view.s, (clientY - r.top - view.ty) / view.s);
    }

    // ------------------------------------------------------------ drawing

    function markDirty() {
      frame.dirty = true;
      if (frame.requested) return;
      frame.requested = true;
      requestAnimationFrame(() => {
        frame.requested = false;
        if (!frame.dirty) return;
        frame.dirty = false;
        draw();
        hooks.drawn();
      });
    }

    function resize() {
      const stage = $('rv-stage');
      const canvas = state.canvas;
      state.dpr = window.devicePixelRatio || 1;
      state.W = Math.max(1, stage.clientWidth);
      state.H = Math.max(1, stage.clientHeight);
      canvas.width = Math.round(state.W * state.dpr);
      canvas.height = Math.round(state.H * state.dpr);
      canvas.style.width = state.W + 'px';
      canvas.style.height = state.H + 'px';
      markDirty();
    }

    function draw() {
      const t0 = performance.now();
      const {ctx, dpr, W, H} = state;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, W, H);
      frame.text = {labels: 0, sizes: new Set(), titles: new Set()}; // what this frame drew, in CSS px
      if (!state.picture) return;
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
      const ctx = state.ctx;
      const {lv, cx, cy, cw, ch, hlCluster} = state.picture;
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
      const ctx = state.ctx;
      const {lv, cx, cy, cw} = state.picture;
      if (shown.length) frame.text.titles.add(TITLE_PX * s);
      ctx.font = TITLE_FONT;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillStyle = '#2b3550';
      for (const L of shown) {
        ctx.fillText(titleText(lv.call[L]), cx[L] + PAD_X, cy[L] + TITLE_H / 2, cw[L] - 2 * PAD_X - MARK_W);
        ctx.fillText('\u2212', cx[L] + cw[L] - PAD_X - 8, cy[L] + TITLE_H / 2);
      }
    }

    /** Edges: their routes, corners rounded (the curve stays within CORNER of the route). */
    function drawEdges(s, inView) {
      const ctx = state.ctx;
      const {estart, epts, ebox} = state.picture;
      const ne = estart.length - 1;
      const simple = s < LOD_SIMPLE;
      const heads = [];
      const len = (p, q) => Math.hypot(epts[q] - epts[p], epts[q + 1] - epts[p + 1]);
      ctx.beginPath();
      for (let e = 0; e < ne; e++) {
        if (!inView(ebox[4 * e], ebox[4 * e + 1], ebox[4 * e + 2], ebox[4 * e + 3])) continue;
        const a = 2 * estart[e];
        const b = 2 * estart[e + 1];
        if (b - a < 4) continue;
        ctx.moveTo(epts[a], epts[a + 1]);
        for (let p = a + 2; p < b - 2; p += 2) {
          const r = simple ? 0 : Math.min(CORNER, len(p - 2, p) / 2, len(p, p + 2) / 2);
          if (r > 0.5) ctx.arcTo(epts[p], epts[p + 1], epts[p + 2], epts[p + 3], r);
          else ctx.lineTo(epts[p], epts[p + 1]);
        }
        ctx.lineTo(epts[b - 2], epts[b - 1]);
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
      const ctx = state.ctx;
      const G = state.picture;
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
      if (shown.length) frame.text.sizes.add(FONT_PX * s);
      frame.text.labels += shown.length;
      for (const v of shown) {
        const i = vg.vis[v];
        const mid = nx[v] + (nodeW(G, v) - (style[v] === 5 ? MARK_W : 0)) / 2;
        labelLines(M, i).forEach((line, k) => ctx.fillText(line, mid, ny[v] + PAD_Y + LINE_H * (k + 0.5)));
      }
      if (s < LOD_SHAPES) return;
      ctx.font = SMALL_FONT;
      ctx.fillStyle = '#5a5a66';
      for (const v of shown) {
        const i = vg.vis[v];
        const sub = subText(M, i);
        if (sub) frame.text.sizes.add(SMALL_PX * s);
        if (sub) ctx.fillText(sub, nx[v] + nodeW(G, v) / 2, ny[v] + nodeH(G, v) - PAD_Y - SMALL_H / 2 + 1);
      }
    }

    // ------------------------------------------------------------ view

    function bounds(g) {
      return {x: 0, y: 0, w: g.cw[0], h: g.ch[0]};
    }

    /** Fits world rect r, at most maxScale and at least minScale, centred on r or on `focus`. */
    function fitTo(r, maxScale, minScale = MIN_SCALE, focus = r) {
      const m = 24;
      const {W, H} = state;
      view.s = clamp(Math.min((W - 2 * m) / Math.max(r.w, 1), (H - 2 * m) / Math.max(r.h, 1), maxScale), minScale, MAX_SCALE);
      const c = view.s > minScale ? r : focus;
      view.tx = W / 2 - (c.x + c.w / 2) * view.s;
      view.ty = H / 2 - (c.y + c.h / 2) * view.s;
      markDirty();
    }

    /**
     * The opening view, also "Fit" and "Expand all": the whole picture when it fits readable
     * (every text at least MIN_TEXT_PX); else readable, the picture's width (TB, BT; its height
     * for LR, RL) fitted when that zooms no further in than 1, and its start in view: the first
     * input at the top (TB; left for LR, ...), across the flow centred on it.
     */
    function overview() {
      const G = state.picture;
      const b = bounds(G);
      const {W, H} = state;
      const m = 24;
      if (Math.min((W - 2 * m) / Math.max(b.w, 1), (H - 2 * m) / Math.max(b.h, 1), 1.2) >= READABLE) {
        fitTo(b, 1.2);
        return;
      }
      const fr = frameOf(M.doc.direction);
      const [alongLen, crossLen] = fr.across ? [b.w, b.h] : [b.h, b.w];
      const [alongRoom, crossRoom] = fr.across ? [W, H] : [H, W];
      const s = clamp((crossRoom - 2 * m) / Math.max(crossLen, 1), READABLE, 1);
      // The first input in the flow (else the picture's start), as [along0, along1, cross centre].
      let first = null;
      const {vg} = G;
      for (let v = 0; v < vg.vis.length; v++) {
        if (M.kind[vg.vis[v]] !== 0) continue;
        const a0 = fr.across ? G.nx[v] : G.ny[v];
        const a1 = a0 + (fr.across ? nodeW(G, v) : nodeH(G, v));
        const c = fr.across ? G.ny[v] + nodeH(G, v) / 2 : G.nx[v] + nodeW(G, v) / 2;
        if (!first || (fr.fwd > 0 ? a0 < first[0] : a1 > first[1])) first = [a0, a1, c];
      }
      if (!first) first = fr.fwd > 0 ? [0, 0, crossLen / 2] : [alongLen, alongLen, crossLen / 2];
      let tAlong = fr.fwd > 0 ? m : alongRoom - m - alongLen * s; // the start at the stage's edge
      if (fr.fwd > 0 && first[1] * s + tAlong > alongRoom - m) tAlong = m - first[0] * s;
      if (fr.fwd < 0 && first[0] * s + tAlong < m) tAlong = alongRoom - m - first[1] * s;
      let tCross = (crossRoom - crossLen * s) / 2;
      if (crossLen * s > crossRoom - 2 * m) tCross = clamp(crossRoom / 2 - first[2] * s, crossRoom - m - crossLen * s, m);
      view.s = s;
      [view.tx, view.ty] = fr.across ? [tAlong, tCross] : [tCross, tAlong];
      markDirty();
    }

    function zoomAt(sx, sy, factor) {
      const s = clamp(view.s * factor, MIN_SCALE, MAX_SCALE);
      view.tx = sx - ((sx - view.tx) * s) / view.s;
      view.ty = sy - ((sy - view.ty) * s) / view.s;
      view.s = s;
      markDirty();
    }

    function panBy(dx, dy) {
      view.tx += dx;
      view.ty += dy;
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
      const G = state.picture;
      const r = G && worldRect(G, id);
      return r ? {id, sx: (r.x + r.w / 2) * view.s + view.tx, sy: r.y * view.s + view.ty} : null;
    }

    /** Keeps the top centre of a toggled call where it was on screen. */
    function keepAnchor(a) {
      const r = worldRect(state.picture, a.id);
      if (!r) return;
      view.tx = a.sx - (r.x + r.w / 2) * view.s;
      view.ty = a.sy - r.y * view.s;
    }

    /** Visible node v's box on the page, in client pixels. */
    function clientRect(v) {
      const G = state.picture;
      const r = state.canvas.getBoundingClientRect();
      return {
        x: r.left + G.nx[v] * view.s + view.tx, y: r.top + G.ny[v] * view.s + view.ty,
        w: nodeW(G, v) * view.s, h: nodeH(G, v) * view.s,
      };
    }

    return {
      measure, compose, hitClient, markDirty, resize,
      bounds, fitTo, overview, zoomAt, panBy, worldRect, anchorOf, keepAnchor, clientRect, nodeW, nodeH,
    };
  }

  RV.canvas = {MIN_SCALE, MAX_SCALE, READABLE, MIN_TEXT_PX, createCanvas};
})(RecorderViewer);
