/* recorder viewer, part 2 of 4: the layout jobs.
 *
 * update() recomputes the picture for the expanded calls: the visible graph, its levels and
 * their signatures (model.js), then sends the levels whose signature is not in the cache, in
 * one job, to the layout worker (viewer/layout_worker.js, a Web Worker made from dagre's and
 * its sources; on this thread when workers are unavailable), shows the progress of slow jobs,
 * and hands the finished job to the page (hooks.show: canvas.js composes it). A newer update
 * supersedes an older one; a stuck job is killed when a newer one arrives. Its state is
 * `state.jobs` (viewer.js makes the state).
 *
 * Also the box geometry the worker and canvas.js share: the padding inside a cluster and the
 * height of its title bar.
 */
(function (RV) {
  'use strict';

  const model = RV.model;
  const PAD = 12; // inside a cluster box
  const TITLE_H = 22; // a cluster's title bar
  const SLOW_JOB_MS = 300; // show progress for layout jobs slower than this
  const STUCK_JOB_MS = 2000; // a job older than this is killed when a newer one arrives

  const $ = (id) => document.getElementById(id);
  const boxW = (inner, minW) => Math.max(inner.w, minW) + 2 * PAD;
  const boxH = (inner) => inner.h + TITLE_H + 2 * PAD;

  /** The jobs' part of the viewer's state. */
  const createJobs = () => ({
    worker: null,
    busySince: 0, // when the worker's current job started (0: idle)
    job: 0, // the newest job posted
    updateSeq: 0,
    pending: null, // the newest update waiting for its layout
    composedSeq: 0,
    waiters: [], // {seq, resolve}: resolved once an update >= seq is drawn
    cache: new Map(), // signature id -> level layout (from the worker)
    sigIds: new Map(), // signature text -> small id
  });

  /**
   * The layout jobs over `state` (state.jobs: createJobs()). hooks: measure (the box sizes,
   * model.signatures' `measure`), show(p) (compose and show the laid-out update p), redraw(),
   * error(text).
   */
  function createLayout(state, hooks) {
    const jobs = state.jobs;
    const stats = state.stats;

    function createWorker() {
      const dagreSrc = $('recorder-dagre') ? $('recorder-dagre').textContent : '';
      const src = $('recorder-worker') ? $('recorder-worker').textContent : '';
      try {
        const url = URL.createObjectURL(new Blob([dagreSrc, '\n', src], {type: 'text/javascript'}));
        const w = new Worker(url);
        w.onmessage = onWorkerMessage;
        w.onerror = (ev) => { // the worker could not start: lay out on this thread instead
          ev.preventDefault();
          jobs.worker = inlineWorker(src);
          if (jobs.pending) postJob(jobs.pending);
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

    /** Recomputes the picture for `state.expanded`; resolves once it is drawn. */
    function update(options) {
      const seq = ++jobs.updateSeq;
      const done = new Promise((resolve) => jobs.waiters.push({seq, resolve}));
      const t0 = performance.now();
      const vg = model.computeVisible(state.model, state.expanded);
      const lv = model.buildLevels(vg);
      model.signatures(state.model, vg, lv, hooks.measure, jobs.sigIds);
      const pending = jobs.pending = Object.assign({seq, vg, lv, t0, need: []}, options);
      const inJob = new Set();
      for (const L of lv.order) {
        const s = lv.sig[L];
        if (!jobs.cache.has(s) && !inJob.has(s)) inJob.add(s), pending.need.push(L);
      }
      stats.levelsLaidOut = pending.need.length;
      stats.modes = {};
      if (pending.need.length) postJob(pending);
      else finish(pending);
      return done;
    }

    function postJob(p) {
      const {vg, lv} = p;
      const {w, h} = hooks.measure;
      const levels = p.need.map((L) => {
        const items = lv.items[L];
        const n = items.length;
        const level = {
          sig: lv.sig[L], w: new Float64Array(n), h: new Float64Array(n),
          child: new Int32Array(n).fill(-1), minW: new Float64Array(n), edges: Int32Array.from(lv.edges[L]),
        };
        items.forEach((code, j) => {
          if (code >= 0) {
            level.w[j] = w[vg.vis[code]];
            level.h[j] = h[vg.vis[code]];
            return;
          }
          const c = -1 - code;
          const inner = jobs.cache.get(lv.sig[c]);
          level.minW[j] = lv.titleW[c];
          if (inner) level.w[j] = boxW(inner, lv.titleW[c]), level.h[j] = boxH(inner);
          else level.child[j] = lv.sig[c];
        });
        return level;
      });
      const now = performance.now();
      if (jobs.busySince && now - jobs.busySince > STUCK_JOB_MS) {
        jobs.worker.terminate(); // a stuck job (huge dagre level) must not delay the newer one
        jobs.worker = createWorker();
        jobs.busySince = 0;
      }
      if (!jobs.busySince) jobs.busySince = now;
      jobs.job = p.seq;
      const transfer = [];
      for (const l of levels) transfer.push(l.w.buffer, l.h.buffer, l.child.buffer, l.minW.buffer, l.edges.buffer);
      jobs.worker.postMessage({
        type: 'layout', job: p.seq, dir: state.model.doc.direction, nodesep: 20, ranksep: 40, edgesep: 10,
        pad: PAD, titleH: TITLE_H, levels,
      }, transfer);
      setTimeout(() => {
        if (jobs.pending === p) showProgress(0, levels.length);
      }, SLOW_JOB_MS);
    }

    function onWorkerMessage(ev) {
      const msg = ev.data || {};
      const pending = jobs.pending;
      if (msg.type === 'progress') {
        jobs.cache.set(msg.result.sig, msg.result); // valid whatever job asked for it
        if (pending && msg.job === pending.seq) stats.modes[msg.result.mode] = (stats.modes[msg.result.mode] || 0) + 1;
        if (pending && msg.job === pending.seq && !$('rv-progress').hidden) showProgress(msg.done, msg.total);
      } else if (msg.type === 'done' || msg.type === 'error') {
        if (msg.job === jobs.job) jobs.busySince = 0;
        if (msg.type === 'error') hooks.error('Layout failed: ' + msg.message);
        if (pending && msg.job === pending.seq) finish(pending);
      }
    }

    function showProgress(done, total) {
      $('rv-progress').hidden = false;
      $('rv-progress-fill').style.width = (total ? (100 * done) / total : 0) + '%';
      $('rv-progress-text').textContent = 'Laying out the graph\u2026 ' + done + ' / ' + total + ' levels';
    }

    function finish(p) {
      if (jobs.pending !== p) return; // superseded
      jobs.pending = null;
      $('rv-progress').hidden = true;
      if (p.lv.order.some((L) => !jobs.cache.has(p.lv.sig[L]))) { // the job failed: keep the old picture
        jobs.composedSeq = p.seq;
        hooks.redraw();
        return;
      }
      hooks.show(p);
      jobs.composedSeq = p.seq;
    }

    /** After a frame was drawn: resolves the updates it shows. */
    function drawn() {
      const waiters = jobs.waiters;
      for (let k = waiters.length - 1; k >= 0; k--) {
        if (waiters[k].seq <= jobs.composedSeq) waiters.splice(k, 1)[0].resolve();
      }
    }

    /** Resolves once the newest update has been drawn. */
    function settled() {
      if (!jobs.pending && !state.frame.dirty && jobs.composedSeq === jobs.updateSeq) return Promise.resolve();
      return new Promise((resolve) => jobs.waiters.push({seq: jobs.updateSeq, resolve}));
    }

    return {
      start() {
        jobs.worker = createWorker();
      },
      update, drawn, settled,
    };
  }

  RV.layout = {PAD, TITLE_H, boxW, boxH, createJobs, createLayout};
})(RecorderViewer);
