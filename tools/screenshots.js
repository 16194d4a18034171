// Takes docs/viewing.md's speedscope and trace-viewer screenshots in
// headless Chromium. Run by tools/screenshots.sh, which installs
// puppeteer-core and speedscope from npm into a scratch directory (NODE_PATH)
// and makes the profiles; not part of the build or the tests.
//
//   node screenshots.js DIR OUT_SPEEDSCOPE.png OUT_TRACE.png
//
// DIR holds json.pb.gz, df.json and speedscope/ (speedscope's static build).
// The clicks below are positions in Chromium 156's DevTools and speedscope
// 1.25's layout: look at the pictures after a new version of either.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [dir, outSpeedscope, outTrace] = process.argv.slice(2);
if (!outTrace) {
  console.error('usage: node screenshots.js DIR OUT_SPEEDSCOPE.png OUT_TRACE.png');
  process.exit(2);
}
const W = 1200, H = 700;
const sleep = ms => new Promise(r => setTimeout(r, ms));
const types = {'.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
               '.json': 'application/json', '.wasm': 'application/wasm'};

// DIR over HTTP on a free port; CORS open because DevTools (served by
// Chromium's own debugging port) fetches the trace from this origin.
function serve(root) {
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404); res.end(); return;
    }
    res.writeHead(200, {'Content-Type': types[path.extname(file)] || 'application/octet-stream',
                        'Access-Control-Allow-Origin': '*'});
    fs.createReadStream(file).pipe(res);
  });
  return new Promise(r => server.listen(0, '127.0.0.1', () => r(server)));
}

async function speedscope(browser, base) {
  const p = await browser.newPage();
  await p.setViewport({width: W, height: H});
  await p.goto(`${base}/speedscope/index.html#profileURL=${base}/json.pb.gz&title=json.pb.gz`,
               {waitUntil: 'networkidle0'});
  await sleep(1500);
  await p.keyboard.press('2');            // the "Left Heavy" view
  await sleep(1000);
  await p.mouse.move(190, 250);           // hover the widest frame for its tooltip
  await sleep(300);
  await p.mouse.move(200, 193, {steps: 5});
  await sleep(1000);
  await p.screenshot({path: outSpeedscope, clip: {x: 0, y: 0, width: W, height: 340},
                         captureBeyondViewport: false});  // the rest is empty; a resize would hide the tooltip
  await p.close();
}

// Chromium's DevTools Performance panel, served by the browser's debugging
// port, loads a trace-event JSON with ?loadTimelineFromURL=.
async function devtoolsTrace(browser, base) {
  const port = new URL(browser.wsEndpoint()).port;
  const p = await browser.newPage();
  await p.setViewport({width: W, height: H});
  await p.setBypassCSP(true);             // its connect-src allows only itself
  await p.goto(`http://127.0.0.1:${port}/devtools/trace_app.html?loadTimelineFromURL=${base}/df.json`);
  await sleep(6000);
  await p.keyboard.press('Escape');       // the first-run shortcuts dialog (opens the drawer)
  await sleep(500);
  await p.keyboard.press('Escape');       // and the drawer
  await sleep(500);
  await p.mouse.click(16, 39);            // hide the annotations sidebar
  await sleep(800);
  await p.mouse.click(9, 129);            // expand the process track
  await sleep(800);
  await p.mouse.click(19, 146);           // and its "collector" thread
  await sleep(800);
  await p.mouse.move(900, 501);           // drag the details pane up
  await p.mouse.down();
  await p.mouse.move(900, 350, {steps: 5});
  await p.mouse.move(900, 200, {steps: 5});
  await p.mouse.up();
  await sleep(500);
  await p.mouse.click(600, 60);           // focus the timeline, then find the first full GC:
  await p.keyboard.down('Control');       // the search selects it and dims the other slices
  await p.keyboard.press('f');
  await p.keyboard.up('Control');
  await sleep(500);
  await p.keyboard.type('full GC');
  await p.keyboard.press('Enter');
  await p.mouse.move(1100, 600);
  await sleep(800);
  await p.screenshot({path: outTrace});
  await p.close();
}

(async () => {
  const server = await serve(path.resolve(dir));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],   // a debugging port, not a pipe: DevTools is served there
  });
  try {
    await speedscope(browser, base);
    await devtoolsTrace(browser, base);
  } finally {
    await browser.close();
    server.close();
  }
})().catch(e => { console.error('screenshots.js:', e.message); process.exit(1); });
