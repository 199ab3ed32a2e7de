// Speed of the HTML viewer in headless Chromium (software rendering), on the synthetic
// transformer pages the viewer_pages test writes (build/viewer-pages/synthetic_*.html):
//
//   node benchmarks/viewer_bench.mjs [build/viewer-pages] [repetitions]
//
// For each page: file size per recorded node; first paint (navigation to the first layout
// drawn, at the page's opening depth); expanding one module (`layers.7`, 6 children at depth 2);
// a pan frame with everything visible in view (median of 15 frames: the viewer's own draw time
// and the wall time of a frame). Numbers are medians over the repetitions. Not a test: nothing
// is asserted; README and the issue notes quote its output.
import { createRequire } from 'node:module';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const pagesDir = process.argv[2] || join(root, 'build/viewer-pages');
const reps = Number(process.argv[3] || 3);
const require = createRequire(join(root, 'tests/viewer/package.json'));
const { chromium } = require('playwright-core');

const browser = await chromium.launch({
  executablePath: process.env.RECORDER_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage'],
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const api = (page, method, ...args) =>
  page.evaluate(([m, a]) => window.recorderViewer[m](...a), [method, args]);

async function measure(name) {
  const file = join(pagesDir, `${name}.html`);
  const expect = JSON.parse(readFileSync(join(pagesDir, `${name}.expect.json`), 'utf8'));
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // The moment the viewer marks itself ready, in the page's own clock (from navigation start).
  await page.addInitScript(() => {
    new MutationObserver(() => {
      if (document.body && document.body.dataset.ready === '1' && !window.__readyAt)
        window.__readyAt = performance.now();
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
  const firstPaint = await page.evaluate(() => window.__readyAt);
  const visible = (await api(page, 'visibleNodes')).length;
  let t0 = Date.now();
  await api(page, 'expand', 'layers.7');
  const expandMs = Date.now() - t0;
  await api(page, 'collapse', 'layers.7');
  // Pan frames with the whole visible graph in view (fit all, not the readable view `0` gives).
  await api(page, 'fitAll');
  await api(page, 'panBy', 0, 0);
  const draws = [];
  const walls = [];
  for (let i = 0; i < 15; i++) {
    t0 = performance.now();
    await api(page, 'panBy', i % 2 ? 3 : -3, 0);
    walls.push(performance.now() - t0);
    draws.push((await api(page, 'stats')).drawMs);
  }
  await page.close();
  return {
    nodes: expect.nodes, bytes: statSync(file).size, visible, openDepth: expect.open_depth,
    firstPaint, expandMs, drawMs: median(draws), frameMs: median(walls),
  };
}

console.log('page, recorded nodes, bytes/node, opening depth, visible, first paint ms, ' +
            'expand ms, pan draw ms, pan frame ms');
for (const name of ['synthetic_1k', 'synthetic_10k', 'synthetic_50k', 'synthetic_pan10k']) {
  const runs = [];
  for (let r = 0; r < reps; r++) runs.push(await measure(name));
  const m = (k) => median(runs.map((x) => x[k]));
  const x = runs[0];
  console.log(`${name}, ${x.nodes}, ${(x.bytes / x.nodes).toFixed(0)}, ${x.openDepth}, ${x.visible}, ` +
              `${m('firstPaint').toFixed(0)}, ${m('expandMs').toFixed(0)}, ` +
              `${m('drawMs').toFixed(1)}, ${m('frameMs').toFixed(1)}`);
}
await browser.close();
