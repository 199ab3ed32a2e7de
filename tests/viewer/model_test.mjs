// The viewer's pure model (viewer/model.js) under Node, no browser: what the page computes from
// its data document, against the C++ visible graph.
//
//   node tests/viewer/model_test.mjs <cases folder> <viewer folder>
//
// The cases (<name>.data.json: the document a page embeds; <name>.expect.json: what it must
// show; cases.json: their names) are written by the viewer_model_cases test
// (tests/viewer/model_cases_test.cpp). For each case, opened at the document's depth, at every
// depth, and after each step of expanding or collapsing modules by path (as the page's
// expand/collapse do), computeVisible and buildLevels must give exactly the C++ picture: node
// ids, edges (from, to) in order, clusters (call, enclosing call) and how clusters nest (the
// C++ walk_clusters); the lifted edges of every level are checked against a direct computation;
// the search finds what the C++ search finds. Also: model.js runs without DOM or Node globals,
// malformed documents are refused by name, and levels' signatures are shared by identical
// levels and change only along the path of a toggled call. Ends with "N passed, F failed";
// exits 1 on any failure, printing where the pictures differ.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import vm from 'node:vm';

const [casesDir, viewerDir] = process.argv.slice(2);
if (!casesDir || !viewerDir) {
  console.error('usage: model_test.mjs <cases folder> <viewer folder>');
  process.exit(2);
}
const modelPath = resolve(viewerDir, 'model.js');
const model = createRequire(import.meta.url)(modelPath);

let passed = 0;
let failed = 0;
const failures = [];
function check(ok, what, detail = '') {
  if (ok) {
    passed++;
    return true;
  }
  failed++;
  failures.push(what);
  console.error(`FAIL: ${what}${detail ? '\n  ' + detail : ''}`);
  return false;
}
const show = (v) => JSON.stringify(v);

/** Compares two lists exactly; on a difference, says where and shows both sides there. */
function checkList(got, want, what) {
  const n = Math.max(got.length, want.length);
  let k = 0;
  while (k < n && show(got[k]) === show(want[k])) k++;
  if (k === n) return check(true, what);
  const around = (list) => show(list.slice(Math.max(0, k - 3), k + 4));
  return check(false, `${what}: ${got.length} (want ${want.length})`,
    `first difference at index ${k}: got ${show(got[k])}, want ${show(want[k])}\n` +
    `  got  [${Math.max(0, k - 3)}..]: ${around(got)}\n  want [${Math.max(0, k - 3)}..]: ${around(want)}`);
}

// ---------------------------------------------------------------- model.js is pure

{
  const src = readFileSync(modelPath, 'utf8');
  const code = src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const uses = code.match(/\b(document|window|requestAnimationFrame|getContext|Worker|performance|navigator|self|setTimeout)\b/g);
  check(!uses, 'model.js uses no DOM, canvas, worker or timer', uses ? `it uses ${show([...new Set(uses)])}` : '');
  // Runs in a bare context: no DOM, no Node (no require, process, Buffer).
  const sandbox = {module: {exports: {}}};
  vm.runInNewContext(src, sandbox, {filename: modelPath});
  const api = sandbox.module.exports;
  check(typeof api.computeVisible === 'function' && typeof api.buildLevels === 'function' &&
    typeof api.signatures === 'function' && typeof api.buildModel === 'function',
  'model.js exports buildModel, computeVisible, buildLevels, signatures in a bare context');
}

// ---------------------------------------------------------------- malformed documents

{
  const refused = (doc, words) => {
    try {
      model.buildModel(doc);
      return check(false, `buildModel refuses ${show(doc)} (${words})`, 'it did not throw');
    } catch (err) {
      return check(String(err.message).includes(words), `buildModel refuses ${show(doc)}: "${err.message}"`,
        `want a message with ${show(words)}`);
    }
  };
  refused(null, 'not a JSON object');
  refused({format: 2, nodes: [], modules: []}, 'unsupported format 2');
  refused({format: 1, nodes: {}, modules: []}, '"nodes" or "modules" is not a list');
  refused({format: 1, nodes: [[9, -1, 0, 'x']], modules: []}, 'node 0 is malformed');
  refused({format: 1, nodes: [[0, -1, 0]], modules: []}, 'node 0 is malformed');
  refused({format: 1, nodes: [[6, -1, 0, 'M', 3, '1-1', [], [], false, 0]], modules: [{path: ''}]},
    'module call 0 names no module');
  // What is wrong but harmless is mended: an unknown direction, edges to no node.
  const m = model.buildModel({format: 1, direction: 'XY', edges: [0, 1, 0, 7, -1, 1, 1],
    nodes: [[0, -1, 0, 'x', -1, '[1]', 'Float'], [1, -1, 0, 'y', 5, '[1]', 'Float']], modules: []});
  check(m.doc.direction === 'TB', `an unknown direction becomes TB (${m.doc.direction})`);
  checkList(Array.from(m.edges), [0, 1], 'edges to no node are dropped');
  checkList(Array.from(m.producer), [-1, -1], 'a producer that is no node is none');
}

// ---------------------------------------------------------------- pictures

/** The picture the page computes for the calls marked in `open`, as the C++ test writes it. */
function pictureOf(m, open) {
  const vg = model.computeVisible(m, open);
  const lv = model.buildLevels(vg);
  const tokens = [];
  const emit = (L) => {
    for (const code of lv.items[L]) {
      if (code >= 0) {
        tokens.push(String(vg.vis[code]));
        continue;
      }
      const c = -1 - code;
      tokens.push('(' + lv.call[c]);
      emit(c);
      tokens.push(')');
    }
  };
  emit(0);
  return {
    vg, lv,
    nodes: Array.from(vg.vis),
    edges: Array.from(vg.from, (s, e) => [vg.vis[s], vg.vis[vg.to[e]]]),
    clusters: vg.clusters.length,
    cluster_calls: vg.clusters.map((c) => [c, vg.around[c] >= 0 ? vg.around[c] : -1]),
    nest: tokens.join(' '),
  };
}

/**
 * The lifted edges of every level, computed directly: each visible edge goes to the lowest
 * level holding both ends, between the items there that contain them (the node itself or the
 * child cluster around it); a pair once, in first-seen order; none within one item.
 */
function liftedEdges(p) {
  const {vg, lv} = p;
  const chain = (v) => { // [level, item] from the node's own level up to the top
    const out = [];
    let L = lv.nodeLevel[v];
    let item = lv.items[L].indexOf(v);
    for (;;) {
      out.push([L, item]);
      if (L === 0) return out;
      const P = lv.parent[L];
      item = lv.items[P].indexOf(-1 - L);
      L = P;
    }
  };
  const edges = Array.from({length: lv.count}, () => []);
  const seen = new Set();
  for (let e = 0; e < vg.from.length; e++) {
    const a = chain(vg.from[e]);
    const b = chain(vg.to[e]);
    const [L, ia] = a.find(([La]) => b.some(([Lb]) => Lb === La));
    const ib = b.find(([Lb]) => Lb === L)[1];
    if (ia === ib || seen.has(`${L} ${ia} ${ib}`)) continue;
    seen.add(`${L} ${ia} ${ib}`);
    edges[L].push(ia, ib);
  }
  return edges;
}

function checkPicture(got, want, what) {
  checkList(got.nodes, want.nodes, `${what}: nodes`);
  checkList(got.edges, want.edges, `${what}: edges`);
  check(got.clusters === want.clusters, `${what}: ${got.clusters} clusters (want ${want.clusters})`);
  checkList(got.cluster_calls, want.cluster_calls, `${what}: clusters (call, enclosing call)`);
  checkList(got.nest.split(' '), want.nest.split(' '), `${what}: nesting (ids, "(call" ... ")")`);
  const lifted = liftedEdges(got);
  checkList(got.lv.edges.map((list) => show(list)), lifted.map((list) => show(list)),
    `${what}: lifted edges per level`);
}

/** A stand-in for canvas.js's text measuring: sizes from the label's length and line count. */
function fakeMeasure(m) {
  const w = new Float32Array(m.n);
  const h = new Float32Array(m.n);
  return {
    w, h,
    ensure(i) {
      if (w[i]) return;
      const lines = model.labelLines(m, i);
      w[i] = 16 + 7 * Math.max(...lines.map((l) => l.length)) + (model.subText(m, i) ? 3 : 0);
      h[i] = 10 + 15 * lines.length;
    },
    title: (call) => 30 + 7 * model.labelLines(m, call).join(' ').length,
  };
}

const index = join(casesDir, 'cases.json');
if (!existsSync(index)) {
  console.error(`${index} is missing: the viewer_model_cases test writes it`);
  process.exit(1);
}
const names = JSON.parse(readFileSync(index, 'utf8'));
check(Array.isArray(names) && names.length >= 10, `cases.json lists the cases (${names.length})`);

for (const name of names) {
  const read = (suffix) => readFileSync(join(casesDir, `${name}.${suffix}.json`), 'utf8');
  const expect = JSON.parse(read('expect'));
  const m = model.buildModel(JSON.parse(read('data')));
  const measure = fakeMeasure(m);
  const sigIds = new Map();
  check(m.n === expect.recorded, `${name}: ${m.n} recorded nodes (want ${expect.recorded})`);
  check(m.doc.depth === expect.open_depth, `${name}: opens at depth ${m.doc.depth} (want ${expect.open_depth})`);

  // The opening picture, as the page's start.
  const depthOf = (d) => (d == null ? Infinity : Number(d));
  const open = model.openToDepth(m, new Uint8Array(m.n), depthOf(m.doc.depth));
  const first = pictureOf(m, open);
  checkPicture(first, expect.open, `${name} opening picture`);
  model.signatures(m, first.vg, first.lv, measure, sigIds);
  check(first.lv.sig.length === first.lv.count, `${name}: a signature per level`);

  // Every depth, as the depth menu (collapseTo).
  for (const [d, want] of Object.entries(expect.depths)) {
    const at = model.openToDepth(m, new Uint8Array(m.n), d === 'all' ? Infinity : Number(d));
    checkPicture(pictureOf(m, at), want, `${name} at depth ${d}`);
  }

  // Expand and collapse by path, from the opening picture, as the page's expand/collapse.
  let before = first;
  for (const step of expect.steps) {
    for (const path of step.paths) {
      const calls = model.callsOfPath(m, path);
      check(calls.length > 0, `${name}: module ${show(path)} has calls`);
      for (const i of calls) {
        if (step.action === 'collapse') {
          open[i] = 0;
          continue;
        }
        if (m.expandable[i]) open[i] = 1;
        model.expandAncestors(m, open, i);
      }
    }
    const what = `${name} after ${step.action} ${show(step.paths)}`;
    checkList(Array.from(open.keys()).filter((i) => open[i]), step.expanded, `${what}: expanded calls`);
    const after = pictureOf(m, open);
    checkPicture(after, step.picture, what);
    // Only the levels whose content changed get new signatures: the toggled call's and those
    // around it, never more than its depth + 1 (and, expanding, the new levels inside it).
    model.signatures(m, after.vg, after.lv, measure, sigIds);
    const old = new Set(before.lv.sig);
    const fresh = new Set(Array.from(after.lv.sig).filter((s) => !old.has(s)));
    if (step.action === 'collapse' && step.paths.length === 1) {
      const call = model.callsOfPath(m, step.paths[0])[0];
      check(fresh.size <= m.depth[call] + 1, `${what}: ${fresh.size} levels to lay out again ` +
        `(at most ${m.depth[call] + 1})`);
    }
    before = after;
  }

  // Search, as the page's (its paths, each once).
  for (const s of expect.search) {
    const found = [...new Set(model.searchPaths(m, model.matchesOf(m, s.text)))].sort();
    checkList(found, [...s.found].sort(), `${name} search ${show(s.text)}`);
  }
}

// Identical levels share a signature (so a layout): the layers of a transformer, expanded.
{
  const name = 'transformer_all';
  if (check(names.includes(name), `the cases include ${name}`)) {
    const m = model.buildModel(JSON.parse(readFileSync(join(casesDir, `${name}.data.json`), 'utf8')));
    const p = pictureOf(m, model.openToDepth(m, new Uint8Array(m.n), Infinity));
    model.signatures(m, p.vg, p.lv, fakeMeasure(m), new Map());
    const byClass = new Map();
    for (let L = 1; L < p.lv.count; L++) {
      const cls = m.modules[m.module[p.lv.call[L]]].class;
      if (!byClass.has(cls)) byClass.set(cls, new Set());
      byClass.get(cls).add(p.lv.sig[L]);
    }
    for (const cls of ['EncoderLayer', 'Attention', 'MLP']) {
      const sigs = byClass.get(cls) || new Set();
      check(sigs.size === 1, `${name}: the ${cls} levels share one signature (${sigs.size})`);
    }
    check(new Set(p.lv.sig).size === 4, `${name}: 4 distinct levels (${new Set(p.lv.sig).size})`);
  }
}

console.log(`${names.length} cases: ${passed} passed, ${failed} failed`);
if (failed) {
  console.error(failures.slice(0, 50).join('\n'));
  process.exit(1);
}
