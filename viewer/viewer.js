/* recorder viewer, part 4 of 4: the page (UI and startup). Draws the recorded graph embedded in
 * this page (see viewer/FORMAT.md).
 *
 * Pipeline per change of the expanded calls:
 *   computeVisible (FORMAT.md's algorithm, O(nodes + edges))               model.js
 *   -> buildLevels (the top level and one level per cluster, edges lifted to each level)
 *   -> signatures (a level's content: item sizes, child levels, edges)
 *   -> layout of the levels not in the cache, bottom-up, in a Web Worker    layout.js
 *      (dagre or O(n): layout_worker.js)
 *   -> compose (absolute geometry, top-down) -> draw on one canvas on the next frame: canvas.js
 *
 * This part holds the viewer's one mutable state object (`state`, made by start) and what the
 * user does with it: expand and collapse, the tooltip, search, the toolbar, pointer and keys,
 * and the test API (window.recorderViewer, once the first picture is drawn).
 */
(function (RV) {
  'use strict';

  const model = RV.model;
  const {KIND_NAMES, MODULE, fmtInt, clamp} = model;
  const {MIN_SCALE, MAX_SCALE, READABLE} = RV.canvas;
  const DIRECTIONS = ['TB', 'LR', 'BT', 'RL'];
  const REVEAL_CAP = 200; // search expands the ancestors of at most this many matches

  const $ = (id) => document.getElementById(id);
  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  /** The viewer's mutable state: every part reads and writes this one object. */
  const state = {
    model: null, // the model (model.buildModel); model.doc.direction is the layout's direction:
    // the document's, until the user switches (model.signatures keys the layouts by it)
    expanded: null, // Uint8Array over recorded node ids: the open calls
    picture: null, // the composed picture: visible graph + levels + geometry (canvas.compose)
    view: {s: 1, tx: 0, ty: 0}, // world -> screen: scale, then translation
    canvas: null,
    ctx: null,
    measureCtx: null, // a canvas context that measures text
    dpr: 1,
    W: 0, // the canvas in CSS pixels
    H: 0,
    sizes: {w: null, h: null, texts: new Map()}, // box sizes per recorded node; text widths
    frame: {dirty: false, requested: false, text: null}, // a frame is to be drawn / is requested;
    // the text the last one drew (canvas.js: node labels, their sizes on screen)
    jobs: RV.layout.createJobs(), // the layout jobs and their cache (layout.js)
    stats: {layoutMs: 0, drawMs: 0, visible: 0, levelsLaidOut: 0, modes: {}},
    pinned: false, // the tooltip stays (a click showed it)
    matches: [], // the last search's matches (recorded node ids)
    queue: Promise.resolve(), // the test API's calls, one after the other
  };

  let canvas = null; // the parts, made by start
  let layout = null;

  const update = (options) => layout.update(options);

  /** Shows the update `p` that layout.js laid out (before it counts as composed). */
  function show(p) {
    const first = !state.picture;
    state.picture = canvas.compose(p.vg, p.lv);
    if (!state.pinned) hideTooltip();
    state.stats.layoutMs = performance.now() - p.t0;
    state.stats.visible = p.vg.vis.length;
    applyHighlights();
    if (first) canvas.overview();
    else if (p.anchor) canvas.keepAnchor(p.anchor);
    if (p.after) p.after();
    updateSummary();
    canvas.markDirty();
  }

  // ---------------------------------------------------------------- expand / collapse

  function toggle(id, open) {
    state.expanded[id] = open ? 1 : 0;
    $('rv-depth').value = 'custom';
    return update({anchor: canvas.anchorOf(id)});
  }

  function collapseTo(d) {
    model.openToDepth(state.model, state.expanded, d);
    $('rv-depth').value = d === Infinity ? 'all' : String(d);
    return update({after: canvas.overview});
  }

  /** Lays the current picture out again in direction dir (TB, LR, BT, RL), opening it anew. */
  function setDirection(dir) {
    if (!DIRECTIONS.includes(dir)) throw new Error('unknown direction: ' + JSON.stringify(dir));
    state.model.doc.direction = dir;
    $('rv-dir').value = dir;
    return update({after: canvas.overview});
  }

  function checkedCalls(path) {
    const M = state.model;
    const calls = model.callsOfPath(M, path);
    if (!calls.length) throw new Error('unknown module path: ' + JSON.stringify(path));
    if (!calls.some((i) => M.expandable[i])) throw new Error('module ' + JSON.stringify(path) + ' is a leaf');
    return calls;
  }

  // ---------------------------------------------------------------- tooltip

  function showTooltip(i, sx, sy) {
    const tip = $('rv-tooltip');
    const lines = model.tooltipLines(state.model, i);
    tip.replaceChildren();
    lines.forEach((line, k) => {
      const div = document.createElement('div');
      div.className = k === 0 ? 'rv-tip-title' : 'rv-tip-row';
      div.textContent = line;
      tip.appendChild(div);
    });
    tip.setAttribute('data-node-id', String(i));
    tip.hidden = false;
    const {W, H} = state;
    const x = sx + 16 + tip.offsetWidth > W ? Math.max(0, sx - 16 - tip.offsetWidth) : sx + 16;
    const y = sy + 16 + tip.offsetHeight > H ? Math.max(0, H - tip.offsetHeight - 4) : sy + 16;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
    return lines;
  }

  function hideTooltip() {
    state.pinned = false;
    $('rv-tooltip').hidden = true;
  }

  /** The recorded node a hit stands for: a visible node, or a cluster's call. */
  const hitId = (hit) => {
    const G = state.picture;
    return hit.node >= 0 ? G.vg.vis[hit.node] : hit.level > 0 ? G.lv.call[hit.level] : -1;
  };

  // ---------------------------------------------------------------- search

  function applyHighlights() {
    const G = state.picture;
    if (!G) return;
    G.hlNode.fill(0);
    G.hlCluster.fill(0);
    for (const i of state.matches) {
      const v = G.vg.rep[i];
      const L = G.vg.drawn[i] ? -1 : G.lv.levelOf.get(i);
      if (L > 0) G.hlCluster[L] = 1;
      else if (v >= 0) G.hlNode[v] = 1;
    }
  }

  /** Highlights the matches, expands their ancestors and zooms to them; resolves to paths. */
  function runSearch(text) {
    const M = state.model;
    const matches = state.matches = model.matchesOf(M, text);
    const count = matches.length;
    $('rv-search-count').textContent = text.trim()
      ? count + (count === 1 ? ' match' : ' matches') + (count > REVEAL_CAP ? ' (first ' + REVEAL_CAP + ' revealed)' : '')
      : '';
    matches.slice(0, REVEAL_CAP).forEach((i) => model.expandAncestors(M, state.expanded, i));
    const paths = model.searchPaths(M, matches);
    const after = () => {
      if (!count) return;
      const G = state.picture;
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -Infinity;
      let y1 = -Infinity;
      let first = null;
      for (const i of state.matches.slice(0, REVEAL_CAP)) { // the newest search's, as it runs
        const v = G.vg.rep[i];
        const r = canvas.worldRect(G, i) || (v >= 0 ? canvas.worldRect(G, G.vg.vis[v]) : null);
        if (!r) continue;
        first = first || r;
        x0 = Math.min(x0, r.x);
        y0 = Math.min(y0, r.y);
        x1 = Math.max(x1, r.x + r.w);
        y1 = Math.max(y1, r.y + r.h);
      }
      // All of them when that stays readable, else readable around the first.
      if (x1 >= x0) canvas.fitTo({x: x0, y: y0, w: x1 - x0, h: y1 - y0}, 1.5, READABLE, first);
    };
    return update({after}).then(() => paths);
  }

  function clearSearch() {
    $('rv-search').value = '';
    $('rv-search-count').textContent = '';
    state.matches = [];
    applyHighlights();
    canvas.markDirty();
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
    const M = state.model;
    const d = M.doc;
    $('rv-summary').textContent = String(d.model || d.graph_name || 'model') + ' \u00b7 ' +
      fmtInt(d.total_params) + ' params \u00b7 ' + fmtInt(state.stats.visible) + ' of ' + fmtInt(M.n) + ' nodes visible';
  }

  function showNotices() {
    const d = state.model.doc;
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
    const M = state.model;
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
    $('rv-fit').addEventListener('click', () => state.picture && canvas.overview());
    const dir = $('rv-dir');
    dir.value = M.doc.direction;
    dir.addEventListener('change', () => setDirection(dir.value));
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
    const view = state.view;
    const el = state.canvas;
    let drag = null;
    el.addEventListener('pointerdown', (ev) => {
      drag = {x: ev.clientX, y: ev.clientY, tx: view.tx, ty: view.ty, moved: false};
      el.setPointerCapture(ev.pointerId);
    });
    el.addEventListener('pointermove', (ev) => {
      if (drag) {
        const dx = ev.clientX - drag.x;
        const dy = ev.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        if (!drag.moved) return;
        view.tx = drag.tx + dx;
        view.ty = drag.ty + dy;
        if (!state.pinned) hideTooltip();
        canvas.markDirty();
        return;
      }
      if (state.pinned || !state.picture) return;
      const id = hitId(canvas.hitClient(ev.clientX, ev.clientY));
      const r = el.getBoundingClientRect();
      if (id >= 0) showTooltip(id, ev.clientX - r.left, ev.clientY - r.top);
      else hideTooltip();
    });
    el.addEventListener('pointerup', (ev) => {
      const d = drag;
      drag = null;
      if (d && !d.moved) click(ev.clientX, ev.clientY);
    });
    el.addEventListener('pointerleave', () => {
      if (!state.pinned && !drag) hideTooltip();
    });
    el.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const r = el.getBoundingClientRect();
      const delta = ev.deltaY * (ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? state.H : 1);
      canvas.zoomAt(ev.clientX - r.left, ev.clientY - r.top, Math.exp(-clamp(delta, -300, 300) * 0.002));
    }, {passive: false});
    window.addEventListener('keydown', onKey);
    window.addEventListener('resize', canvas.resize); // also catches devicePixelRatio changes
    if (window.ResizeObserver) new ResizeObserver(canvas.resize).observe($('rv-stage')); // the toolbar may wrap
  }

  function click(clientX, clientY) {
    const G = state.picture;
    if (!G) return;
    const hit = canvas.hitClient(clientX, clientY);
    if (hit.node >= 0) {
      const i = G.vg.vis[hit.node];
      if (state.model.expandable[i]) {
        hideTooltip();
        toggle(i, true);
        return;
      }
      const r = state.canvas.getBoundingClientRect();
      showTooltip(i, clientX - r.left, clientY - r.top);
      state.pinned = true;
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
    const {W, H} = state;
    const keys = {
      ArrowLeft: () => canvas.panBy(step, 0), ArrowRight: () => canvas.panBy(-step, 0),
      ArrowUp: () => canvas.panBy(0, step), ArrowDown: () => canvas.panBy(0, -step),
      '+': () => canvas.zoomAt(W / 2, H / 2, 1.25), '=': () => canvas.zoomAt(W / 2, H / 2, 1.25),
      '-': () => canvas.zoomAt(W / 2, H / 2, 0.8), _: () => canvas.zoomAt(W / 2, H / 2, 0.8),
      0: () => state.picture && canvas.overview(), '/': () => $('rv-search').focus(),
      Escape: () => (hideTooltip(), clearSearch()),
    };
    const action = keys[ev.key];
    if (!action) return;
    ev.preventDefault();
    action();
  }

  // ---------------------------------------------------------------- test API

  /** Runs `fn` after every earlier call; resolves after its layout and drawing are done. */
  function serial(fn) {
    const run = state.queue.then(fn).then(async (value) => {
      await layout.settled();
      return value;
    });
    state.queue = run.catch(() => {});
    return run;
  }

  const twoFrames = () => nextFrame().then(nextFrame);

  function makeApi() {
    const M = state.model;
    const view = state.view;
    const G = () => state.picture;
    return {
      visibleNodes: () => serial(() => Array.from(G().vg.vis, (i) => ({
        id: i, kind: KIND_NAMES[M.kind[i]], label: M.label[i], path: M.kind[i] === MODULE ? M.pathOf(i) : '',
        within: M.parent[i] >= 0 ? M.pathOf(M.parent[i]) : null, // the path of the call it was recorded in
      }))),
      visibleEdges: () => serial(() => Array.from(G().vg.from, (s, e) => ({from: G().vg.vis[s], to: G().vg.vis[G().vg.to[e]]}))),
      clusters: () => serial(() => G().vg.clusters.map((c) => {
        const a = G().vg.around[c];
        return {id: c, path: M.pathOf(c), parent: a >= 0 ? a : -1};
      })),
      expand: (path) => serial(() => {
        const calls = checkedCalls(path);
        calls.forEach((i) => {
          if (M.expandable[i]) state.expanded[i] = 1;
          model.expandAncestors(M, state.expanded, i);
        });
        $('rv-depth').value = 'custom';
        return update({});
      }).then(() => undefined),
      collapse: (path) => serial(() => {
        checkedCalls(path).forEach((i) => (state.expanded[i] = 0));
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
        const find = () => Array.from(G().vg.vis).find((i) => M.kind[i] === MODULE && M.pathOf(i) === String(path)) ??
          G().vg.clusters.find((c) => M.pathOf(c) === String(path));
        if (find() === undefined) { // not in view: reveal its first call
          const calls = model.callsOfPath(M, path);
          if (!calls.length) throw new Error('unknown module path: ' + JSON.stringify(path));
          model.expandAncestors(M, state.expanded, calls[0]);
          await update({});
        }
        const id = find();
        const r = canvas.worldRect(G(), id);
        state.pinned = false;
        return showTooltip(id, (r.x + r.w) * view.s + view.tx, r.y * view.s + view.ty);
      }),
      nodeAt: (x, y) => serial(() => {
        const hit = canvas.hitClient(x, y);
        return hit.node >= 0 ? G().vg.vis[hit.node] : -1;
      }),
      nodeRect: (id) => serial(() => {
        const v = Number.isInteger(id) && id >= 0 && id < M.n ? G().vg.rep[id] : -1;
        return v >= 0 && G().vg.vis[v] === id ? canvas.clientRect(v) : null;
      }),
      stats: () => serial(() => Object.assign({}, state.stats, {modes: Object.assign({}, state.stats.modes)})),
      panBy: (dx, dy) => serial(() => {
        canvas.panBy(Number(dx) || 0, Number(dy) || 0);
        return twoFrames();
      }),
      zoomTo: (scale) => serial(() => {
        canvas.zoomAt(state.W / 2, state.H / 2, clamp(Number(scale) || 1, MIN_SCALE, MAX_SCALE) / view.s);
        return twoFrames();
      }),
      /** What "Fit" does (the readable opening view). */
      fit: () => serial(() => {
        canvas.overview();
        return twoFrames();
      }),
      /** The whole picture in view, however small (for the benchmarks' pan frames). */
      fitAll: () => serial(() => {
        canvas.fitTo(canvas.bounds(G()), 1.2);
        return twoFrames();
      }),
      /** The view: world -> CSS px of the stage (scale s, then translation), the stage's size. */
      view: () => serial(() => ({s: view.s, tx: view.tx, ty: view.ty, W: state.W, H: state.H, direction: M.doc.direction})),
      direction: () => serial(() => M.doc.direction),
      setDirection: (dir) => serial(() => setDirection(String(dir))).then(() => undefined),
      /** The visible nodes' boxes in world (layout) coordinates: {id, x, y, w, h}. */
      layoutBoxes: () => serial(() => Array.from(G().vg.vis, (i, v) => ({
        id: i, x: G().nx[v], y: G().ny[v], w: canvas.nodeW(G(), v), h: canvas.nodeH(G(), v),
      }))),
      /** Each visible edge's route in world coordinates: {from, to, pts: [x0, y0, x1, y1, ...]}. */
      edgeRoutes: () => serial(() => Array.from(G().vg.from, (s, e) => ({
        from: G().vg.vis[s], to: G().vg.vis[G().vg.to[e]],
        pts: Array.from(G().epts.subarray(2 * G().estart[e], 2 * G().estart[e + 1])),
      }))),
      /**
       * The text the last frame drew, on screen: {labels: node labels drawn (nodes at least
       * partly in the viewport), sizes: their font sizes and the shape lines' in CSS px (font px
       * times the view's scale), titles: the cluster titles' sizes}.
       */
      drawnLabelSizes: () => serial(() => twoFrames()).then(() => serial(() => {
        const t = state.frame.text || {labels: 0, sizes: new Set(), titles: new Set()};
        return {labels: t.labels, sizes: [...t.sizes].sort((a, b) => a - b), titles: [...t.titles].sort((a, b) => a - b)};
      })),
    };
  }

  // ---------------------------------------------------------------- start

  function start() {
    try {
      const el = $('recorder-data');
      if (!el) throw new Error('the page has no element #recorder-data');
      state.model = model.buildModel(JSON.parse(el.textContent));
      if (typeof dagre === 'undefined') throw new Error('the layout library (dagre) is missing');
    } catch (err) {
      showError('Cannot show the graph: ' + (err && err.message ? err.message : String(err)));
      return;
    }
    const M = state.model;
    state.canvas = $('rv-canvas');
    const ctx = state.ctx = state.canvas.getContext('2d');
    if (!ctx.roundRect) ctx.roundRect = (x, y, w, h) => ctx.rect(x, y, w, h);
    state.measureCtx = document.createElement('canvas').getContext('2d');
    state.expanded = new Uint8Array(M.n);
    canvas = RV.canvas.createCanvas(state, {drawn: () => layout.drawn()});
    layout = RV.layout.createLayout(state, {
      measure: canvas.measure, show, redraw: canvas.markDirty, error: showError,
    });
    model.openToDepth(M, state.expanded, M.doc.depth == null ? Infinity : Number(M.doc.depth));
    layout.start();
    setupToolbar();
    showNotices();
    setupInput();
    canvas.resize();
    update({}).then(() => {
      if (!state.picture) return; // the first layout failed (the error is shown)
      window.recorderViewer = makeApi();
      document.body.dataset.ready = '1';
    }, (err) => showError('Cannot show the graph: ' + err.message));
  }

  try {
    start();
  } catch (err) {
    showError('The viewer failed: ' + (err && err.message ? err.message : String(err)));
  }
})(RecorderViewer);
