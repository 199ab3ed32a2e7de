// Browser tests of the HTML viewer: Debian's chromium, headless, driven by playwright-core.
//
//   node tests/viewer/viewer_e2e.mjs <pages folder> <docs folder>
//
// The pages and what each must show (<name>.expect.json) are written by the viewer_pages test
// (tests/viewer/pages_test.cpp) from the C++ visible graph. Every assertion is exact: node ids,
// edges as (from, to) recorded ids in order, search results, tooltip facts. Screenshots of
// ResNet-18 collapsed and expanded are compared with docs/viewer_resnet18_*.png within a stated
// tolerance (RECORDER_UPDATE_GOLDENS=1 rewrites them). Ends with "N passed, F failed".
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [pagesDir, docsDir] = process.argv.slice(2);
if (!pagesDir || !docsDir) {
  console.error('usage: viewer_e2e.mjs <pages folder> <docs folder>');
  process.exit(2);
}
const here = new URL('.', import.meta.url).pathname;
const require = createRequire(join(here, 'package.json'));
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error('playwright-core is missing: run `npm ci` in tests/viewer (scripts/test.sh does)');
  process.exit(1);
}
const browserPath = process.env.RECORDER_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(browserPath)) {
  console.error(`${browserPath} is missing: install Debian's chromium (scripts/test.sh does)`);
  process.exit(1);
}

let passed = 0;
let failed = 0;
const failures = [];
function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    failures.push(what);
    console.error(`FAIL: ${what}`);
  }
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
function checkPicture(got, want, what) {
  const ids = got.nodes.map((n) => n.id);
  const edges = got.edges.map((e) => [e.from, e.to]);
  check(same(ids, want.nodes), `${what}: nodes ${ids.length} (want ${want.nodes.length})` +
    (same(ids, want.nodes) ? '' : ` got ${JSON.stringify(ids.slice(0, 30))} want ${JSON.stringify(want.nodes.slice(0, 30))}`));
  check(same(edges, want.edges), `${what}: edges ${edges.length} (want ${want.edges.length})` +
    (same(edges, want.edges) ? '' : ` got ${JSON.stringify(edges.slice(0, 20))} want ${JSON.stringify(want.edges.slice(0, 20))}`));
}

const browser = await chromium.launch({
  executablePath: browserPath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage'],
});

/// Opens a page; returns {page, errors, openMs}.
async function open(name, viewport = { width: 1280, height: 800 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  const t0 = Date.now();
  await page.goto(pathToFileURL(join(pagesDir, `${name}.html`)).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  const openMs = Date.now() - t0;
  return { page, errors, openMs };
}
const api = (page, method, ...args) =>
  page.evaluate(([m, a]) => window.recorderViewer[m](...a), [method, args]);
async function picture(page) {
  return { nodes: await api(page, 'visibleNodes'), edges: await api(page, 'visibleEdges') };
}

/// The generic checks of one page against its expect file.
async function checkPage(name) {
  const expect = JSON.parse(readFileSync(join(pagesDir, `${name}.expect.json`), 'utf8'));
  const { page, errors, openMs } = await open(name);
  console.log(`${name}: ${expect.nodes} recorded nodes, opened at depth ${expect.open_depth} ` +
    `with ${expect.open.nodes.length} visible in ${openMs} ms`);
  checkPicture(await picture(page), expect.open, `${name} opening picture`);
  for (const [d, want] of Object.entries(expect.depths)) {
    if (d === 'all') await api(page, 'expandAll');
    else await api(page, 'collapseTo', Number(d));
    checkPicture(await picture(page), want, `${name} at depth ${d}`);
  }
  if (expect.expand.length) {
    if (expect.open_depth === null) await api(page, 'expandAll');
    else await api(page, 'collapseTo', expect.open_depth);
    for (const step of expect.expand) {
      const t0 = Date.now();
      for (const p of step.paths) await api(page, 'expand', p);
      const ms = Date.now() - t0;
      checkPicture(await picture(page), step.picture, `${name} after expanding ${step.paths}`);
      console.log(`${name}: expanding ${JSON.stringify(step.paths)} took ${ms} ms`);
    }
  }
  for (const s of expect.search) {
    if (expect.open_depth !== null) await api(page, 'collapseTo', expect.open_depth);
    const found = [...new Set(await api(page, 'search', s.text))].sort();
    check(same(found, s.found), `${name} search ${JSON.stringify(s.text)}: ${found.length} found ` +
      `(want ${s.found.length})` + (same(found, s.found) ? '' : ` got ${JSON.stringify(found)}`));
    // A match is revealed when drawn as a node or, when another match lies inside it, as the
    // cluster around that one.
    const visiblePaths = new Set((await api(page, 'visibleNodes')).map((n) => n.path));
    for (const c of await api(page, 'clusters')) visiblePaths.add(c.path);
    // The viewer reveals at most the first 200 matches (in recording order) and says so.
    const modules = s.found.filter((p) => !p.includes(':'));
    const revealed = modules.filter((p) => visiblePaths.has(p)).length;
    const want = Math.min(modules.length, 200);
    check(revealed >= want, `${name} search ${JSON.stringify(s.text)} reveals ${revealed} of ` +
      `${modules.length} module matches (want at least ${want})`);
  }
  for (const h of expect.hover) {
    await api(page, 'expand', h.path).catch(() => {});
    const lines = await api(page, 'hover', h.path);
    const text = lines.join('\n');
    for (const c of h.contains) {
      check(text.includes(c), `${name} hover ${h.path} shows ${JSON.stringify(c)}` +
        (text.includes(c) ? '' : `; tooltip: ${JSON.stringify(text)}`));
    }
  }
  check(errors.length === 0, `${name}: no page errors ${errors.length ? JSON.stringify(errors) : ''}`);
  return { page, errors, expect };
}

/// Compares a screenshot with a golden PNG inside the browser (no image library needed): the
/// share of pixels whose channels differ by more than 48 must stay under `tolerance`.
async function compareWithGolden(png, golden, tolerance) {
  if (process.env.RECORDER_UPDATE_GOLDENS === '1' || !existsSync(golden)) {
    if (process.env.RECORDER_UPDATE_GOLDENS !== '1') {
      check(false, `golden ${golden} is missing (RECORDER_UPDATE_GOLDENS=1 writes it)`);
      return;
    }
    writeFileSync(golden, png);
    console.log(`wrote ${golden}`);
    return;
  }
  const page = await browser.newPage();
  const diff = await page.evaluate(async ([a, b]) => {
    const load = (b64) => new Promise((resolve, reject) => {
      const img = new Image();
      img.onload = () => resolve(img);
      img.onerror = reject;
      img.src = `data:image/png;base64,${b64}`;
    });
    const [x, y] = await Promise.all([load(a), load(b)]);
    if (x.width !== y.width || x.height !== y.height) return { size: false };
    const pixels = (img) => {
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      return ctx.getImageData(0, 0, img.width, img.height).data;
    };
    const p = pixels(x), q = pixels(y);
    let differ = 0;
    for (let i = 0; i < p.length; i += 4) {
      if (Math.abs(p[i] - q[i]) > 48 || Math.abs(p[i + 1] - q[i + 1]) > 48 ||
          Math.abs(p[i + 2] - q[i + 2]) > 48) differ++;
    }
    return { size: true, share: differ / (p.length / 4) };
  }, [png.toString('base64'), readFileSync(golden).toString('base64')]);
  await page.close();
  check(diff.size && diff.share <= tolerance, `screenshot matches ${golden} ` +
    `(${diff.size ? (100 * diff.share).toFixed(2) + '% of pixels differ' : 'sizes differ'}, ` +
    `tolerance ${100 * tolerance}%)`);
}

// ResNet-18, templated and TorchScript: pictures, expansion, search, hover.
for (const name of ['resnet18', 'resnet18_script']) {
  const { page, expect } = await checkPage(name);
  // The numbers the issue names, as well as the C++ ones.
  await api(page, 'collapseTo', 1);
  let p = await picture(page);
  check(p.nodes.length === 13 && p.edges.length === 12, `${name} at depth 1: 13/12`);
  await api(page, 'expandAll');
  p = await picture(page);
  check(p.nodes.length === 71 && p.edges.length === 78, `${name} expanded: 71/78`);
  check(expect.search[0].found.length === 9, `${name}: 9 conv1 modules`);
  const err = await page.evaluate(() =>
    window.recorderViewer.expand('layer9.nope').then(() => 'resolved', (e) => e.message));
  check(err.includes('layer9.nope'), `${name}: an unknown path is refused by name (${err})`);
  await page.close();
}

// A hand-written 4-block GPT (tests/script/models.py's Gpt4, written with hide_unreached off):
// readable wherever the view is put by the viewer (opening, "Expand all", a change of
// direction), its input in view on open, edges routed around the boxes, and the causal mask's
// buffer drawn into the attention's first slice.
{
  const name = 'gpt4_script';
  const { page } = await checkPage(name);
  await page.close();
  const opened = await open(name);
  const gpt = opened.page;
  const nodes = await api(gpt, 'visibleNodes');
  const kindOf = new Map(nodes.map((n) => [n.id, n.kind]));
  const input = nodes.find((n) => n.kind === 'input');
  // The view's world rect, and whether a box is (at least partly) in it.
  const inView = (v, b) => b.x + b.w >= -v.tx / v.s && b.y + b.h >= -v.ty / v.s &&
    b.x <= (v.W - v.tx) / v.s && b.y <= (v.H - v.ty) / v.s;
  // Does segment p-q cross the open box b (shrunk by 1 px)? Liang-Barsky clipping.
  const crosses = (px, py, qx, qy, b) => {
    const [x0, y0, x1, y1] = [b.x + 1, b.y + 1, b.x + b.w - 1, b.y + b.h - 1];
    if (x1 <= x0 || y1 <= y0) return false;
    let t0 = 0;
    let t1 = 1;
    const dx = qx - px;
    const dy = qy - py;
    for (const [p, q] of [[-dx, px - x0], [dx, x1 - px], [-dy, py - y0], [dy, y1 - py]]) {
      if (p === 0) { if (q <= 0) return false; continue; }
      const t = q / p;
      if (p < 0) { if (t > t1) return false; if (t > t0) t0 = t; } else { if (t < t0) return false; if (t < t1) t1 = t; }
    }
    return t1 - t0 > 1e-9;
  };
  async function readable(when, { inputInView = false } = {}) {
    const v = await api(gpt, 'view');
    const text = await api(gpt, 'drawnLabelSizes');
    const smallest = Math.min(...text.sizes, ...text.titles);
    check(text.labels > 0 && smallest >= 9, `${name} ${when}: the smallest text drawn is ` +
      `${text.labels ? smallest.toFixed(2) : '(none)'} CSS px (want >= 9, some node label drawn; ` +
      `${text.labels} labels at scale ${v.s.toFixed(3)}, direction ${v.direction})`);
    const boxes = await api(gpt, 'layoutBoxes');
    const boxOf = new Map(boxes.map((b) => [b.id, b]));
    if (inputInView) {
      check(input && inView(v, boxOf.get(input.id)), `${name} ${when}: the input node is in view ` +
        `(${input ? JSON.stringify(boxOf.get(input.id)) : 'no input'}; view ${JSON.stringify(v)})`);
    }
    const routes = await api(gpt, 'edgeRoutes');
    const bad = [];
    for (const r of routes) {
      if (r.pts.length < 4) bad.push(`${r.from}->${r.to} has no route`);
      for (let p = 0; p + 3 < r.pts.length; p += 2) {
        for (const b of boxes) {
          if (b.id === r.from || b.id === r.to) continue;
          if (crosses(r.pts[p], r.pts[p + 1], r.pts[p + 2], r.pts[p + 3], b)) {
            bad.push(`${r.from}->${r.to} segment ${p / 2} crosses node ${b.id}`);
          }
        }
      }
    }
    check(routes.length > 0 && bad.length === 0, `${name} ${when}: no edge crosses a node box ` +
      `(${routes.length} edges; ${bad.length} crossings${bad.length ? ': ' + bad.slice(0, 5).join(', ') : ''})`);
  }
  await readable('on open', { inputInView: true });
  // Point 8: the mask buffer feeds blocks.0.attn's first slice (`self.mask[:, :, :t, :t]`).
  const slice = nodes.find((n) => n.kind === 'function' && n.within === 'blocks.0.attn' &&
    /^(slice|__getitem__)\b/.test(n.label));
  const edges = await api(gpt, 'visibleEdges');
  const fed = slice ? edges.filter((e) => e.to === slice.id).map((e) => kindOf.get(e.from)) : [];
  check(fed.includes('constant'), `${name}: blocks.0.attn's first slice ` +
    `(${slice ? slice.id + ' ' + JSON.stringify(slice.label) : 'not drawn'}) has an edge from a ` +
    `constant (its inputs' kinds: ${JSON.stringify(fed)})`);
  await api(gpt, 'expandAll');
  await readable('after "Expand all"', { inputInView: true });
  check((await api(gpt, 'direction')) === 'TB', `${name}: opens in the document's direction`);
  await api(gpt, 'setDirection', 'LR');
  const lr = await api(gpt, 'view');
  check(lr.direction === 'LR', `${name}: the direction switches to LR (${lr.direction})`);
  await readable('in LR', { inputInView: true });
  await api(gpt, 'setDirection', 'TB');
  await readable('back in TB', { inputInView: true });
  check(opened.errors.length === 0, `${name}: no page errors ${JSON.stringify(opened.errors)}`);
  await gpt.close();
}

// What no input reaches is not drawn (13 of the 17 nodes drawn with everything).
{
  const { page } = await checkPage('unreached');
  const p = await picture(page);
  check(p.nodes.length === 13, `unreached: 13 nodes drawn (${p.nodes.length})`);
  await page.close();
}

// Hostile names render as text and run nothing.
{
  const { page } = await checkPage('hostile');
  const pwned = await page.evaluate(() => window.pwned);
  check(pwned === undefined, `hostile: no injected script ran (window.pwned = ${pwned})`);
  const title = await page.title();
  check(title.startsWith('<img src=x onerror="window.pwned=3">'), `hostile: title is text (${title})`);
  const images = await page.evaluate(() => document.images.length);
  check(images === 0, `hostile: no <img> element was created (${images})`);
  const summary = await page.evaluate(() => document.body.innerText);
  check(summary.includes('Net</script><script>window.pwned=1</script>'),
    'hostile: the model name is shown as text');
  await page.close();
}

// Screenshots for the README, compared with the committed goldens.
{
  const { page } = await open('resnet18');
  await api(page, 'collapseTo', 1);
  await compareWithGolden(await page.screenshot(), join(docsDir, 'viewer_resnet18_collapsed.png'), 0.02);
  await page.close();
  const all = await open('resnet18_all');
  await compareWithGolden(await all.page.screenshot(), join(docsDir, 'viewer_resnet18_expanded.png'), 0.02);
  await all.page.close();
}

// The synthetic traces open at a depth that keeps the first picture small, and expand.
for (const name of ['synthetic_1k', 'synthetic_10k', 'synthetic_50k']) {
  const { page } = await checkPage(name);
  const stats = await api(page, 'stats');
  console.log(`${name}: last update ${JSON.stringify(stats)}`);
  await page.close();
}

await browser.close();
console.log(`${passed} passed, ${failed} failed`);
if (failed) {
  console.error(failures.join('\n'));
  process.exit(1);
}
