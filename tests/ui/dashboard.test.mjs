// The dashboard (/ui/ of `orchestrator serve`) in a real headless Chromium (Debian's, driven by
// the pinned playwright-core from web/node_modules; nothing is downloaded). The harness is the
// demo's (deploy/demo.sh): real Postgres and Redis (deploy/dev-services.sh's DATABASE_URL and
// REDIS_URL, a database of its own), the outreach-sandbox, `orchestrator migrate`, two accounts,
// a campaign of 120 leads applied, `serve` with an admin token, and a worker started once the
// browser watches the campaign's funnel, so the test sees the numbers move.
//
//   node --test tests/ui/dashboard.test.mjs      (env: ORCH_BUILD_DIR, DATABASE_URL, REDIS_URL)
//
// Screenshots go to $ORCH_BUILD_DIR/ui-screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const build = process.env.ORCH_BUILD_DIR || path.join(repo, 'build');
const shots = path.join(build, 'ui-screenshots');
const chromiumPath = process.env.ORCH_CHROMIUM || '/usr/bin/chromium';
const token = 'ui-test-admin-token-0123456789';
const campaign = 'ui-demo';
const leads = 120;

const missing = [];
if (!process.env.DATABASE_URL) missing.push('DATABASE_URL (start deploy/dev-services.sh)');
if (!process.env.REDIS_URL) missing.push('REDIS_URL (start deploy/dev-services.sh)');
if (!fs.existsSync(chromiumPath)) missing.push(`${chromiumPath} (Debian's chromium: run deploy/install-deps.sh)`);
for (const bin of ['orchestrator', 'outreach-sandbox']) {
  if (!fs.existsSync(path.join(build, 'bin', bin))) missing.push(`${build}/bin/${bin} (build it first)`);
}
const skip = missing.length > 0 && !process.env.ORCH_REQUIRE_SERVICES ? `missing: ${missing.join(', ')}` : false;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'orch-ui-'));
const children = [];
let env = {};
let dbName = '';
let adminUrl = '';
let browser = null;
let worker = null;
let controlPort = 0;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function orch(args) {
  return execFileSync(path.join(build, 'bin', 'orchestrator'), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function background(bin, args, log) {
  const out = fs.openSync(path.join(work, log), 'w');
  const child = spawn(bin, args, { env, stdio: ['ignore', out, out] });
  children.push(child);
  return child;
}

const logOf = (name) => {
  try {
    return fs.readFileSync(path.join(work, name), 'utf8').slice(-4000);
  } catch {
    return '';
  }
};

function psql(url, sql) {
  return execFileSync('psql', [url, '-tAc', sql], { encoding: 'utf8' }).trim();
}

async function waitFor(what, fn, timeoutMs = 20000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

// The admin API with the bearer token, as the CLI calls it (the check beside the browser's view).
async function api(method, p) {
  const res = await fetch(`${adminUrl}${p}`, { method, headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

before(async () => {
  if (skip) return;
  assert.deepEqual(missing, [], `the UI test cannot run: ${missing.join(', ')}`);
  fs.mkdirSync(shots, { recursive: true });
  // A database of its own on the shared server.
  dbName = `orch_ui_${process.pid}`;
  psql(process.env.DATABASE_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  psql(process.env.DATABASE_URL, `CREATE DATABASE ${dbName}`);
  const u = new URL(process.env.DATABASE_URL);
  u.pathname = `/${dbName}`;

  // The sandbox: every invitation accepted after 0.3-2 s, a third of the messages answered.
  const ready = path.join(work, 'ready.json');
  background(path.join(build, 'bin', 'outreach-sandbox'), ['--listen', '127.0.0.1:0', '--control-listen', '127.0.0.1:0',
    '--ready-file', ready, '--api-key', 'ui-key:1000000', '--seed', '11', '--accept-probability', '1',
    '--accept-delay-ms-min', '300', '--accept-delay-ms-max', '2000', '--reply-probability', '0.35',
    '--reply-delay-ms-min', '300', '--reply-delay-ms-max', '2000'], 'sandbox.log');
  const sandbox = await waitFor('the sandbox', () => fs.existsSync(ready) && fs.statSync(ready).size > 0 && JSON.parse(fs.readFileSync(ready, 'utf8')));
  controlPort = sandbox.control_port;

  const adminPort = await freePort();
  const hookPort = await freePort();
  adminUrl = `http://127.0.0.1:${adminPort}`;
  env = {
    ...process.env,
    DATABASE_URL: u.toString(),
    OUTREACH_API_URL: `http://127.0.0.1:${sandbox.port}`,
    OUTREACH_API_KEY: 'ui-key',
    ORCH_ADMIN_TOKEN: token,
    // serve keeps the webhooks' signing secrets encrypted with it (32 characters or more).
    ORCH_SECRET_KEY: 'ui-test-secret-key-0123456789abcdef',
    ORCH_LOG_LEVEL: 'info',
    ORCH_RAMP_UP: 'false',
    ORCH_PACING: 'false',
    // Slow enough (5 API calls a second) that the funnel moves for a while under the browser's eyes.
    ORCH_KEY_REQUESTS_PER_MINUTE: '300',
    ORCH_KEY_BURST: '5',
  };
  for (const q of ['INVITE', 'SEND', 'VISIT', 'WITHDRAW', 'SEARCH']) {
    env[`ORCH_${q}_PER_DAY`] = '-1';
    env[`ORCH_${q}_PER_WEEK`] = '-1';
  }
  orch(['migrate']);
  for (const i of [1, 2]) {
    orch(['accounts', 'connect', '--login-token', `ui-token-${i}`, '--country', 'FR', '--label', `sender-${i}`]);
  }
  const file = path.join(work, 'campaign.yaml');
  fs.writeFileSync(file, `name: ${campaign}
accounts: [sender-1, sender-2]
audience:
  search:
    title: Engineer
  total_results: ${leads}
schedule:
  time_zone: UTC
  days: [mon, tue, wed, thu, fri, sat, sun]
  hours: "00:00-24:00"
budget_credits: 50000
stop_on_reply: true
steps:
  - id: check
    kind: check_invitation
    on_accepted: message
    on_pending: wait
    on_no_invitation: invite
  - id: invite
    kind: invite
    note: "Hi {{first_name}}, let's connect."
  - id: wait
    kind: wait_accepted
    timeout: 1h
    next: message
    on_timeout: end
  - id: message
    kind: send
    variants:
      - name: A
        message_text: "Thanks for connecting, {{first_name}}!"
      - name: B
        message_text: "Great to be connected, {{first_name}}."
`);
  orch(['campaign', 'apply', file]);
  background(path.join(build, 'bin', 'orchestrator'), ['serve', '--admin-listen', `127.0.0.1:${adminPort}`,
    '--webhook-listen', `127.0.0.1:${hookPort}`, '--webhook-public-url', `http://127.0.0.1:${hookPort}/webhooks`], 'serve.log');
  await waitFor('the admin listener', async () => (await fetch(`${adminUrl}/healthz`)).ok)
    .catch((e) => { throw new Error(`${e.message}; serve log: ${logOf('serve.log')}`); });

  const require = createRequire(path.join(repo, 'web', 'package.json'));
  const { chromium } = require('playwright-core');
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  if (browser) await browser.close();
  for (const c of children.reverse()) {
    if (c.exitCode === null) c.kill('SIGTERM');
  }
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  if (dbName) {
    try {
      psql(process.env.DATABASE_URL, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } catch { /* the services may be gone already */ }
  }
  fs.rmSync(work, { recursive: true, force: true });
});

test('without a session: pages redirect to the login, the API answers 401, every answer has the CSP', { skip }, async () => {
  for (const p of ['/ui/', '/ui/campaigns', `/ui/campaigns/${campaign}`, '/ui/accounts', '/ui/budget', '/ui/events', '/ui/inbox']) {
    const res = await fetch(`${adminUrl}${p}`, { redirect: 'manual' });
    assert.equal(res.status, 302, p);
    assert.equal(res.headers.get('location'), `/ui/login?next=${encodeURIComponent(p).replace(/%2F/g, '/')}`, p);
  }
  const app = await fetch(`${adminUrl}/ui/assets/app.js`);
  assert.equal(app.status, 401, 'the app itself needs a session');
  for (const p of ['/ui/login', '/ui/assets/login.js', '/ui/assets/style.css', '/ui/assets/vendor/pico.min.css']) {
    const res = await fetch(`${adminUrl}${p}`);
    assert.equal(res.status, 200, `${p} is public`);
  }
  const login = await fetch(`${adminUrl}/ui/login`);
  const csp = login.headers.get('content-security-policy');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(login.headers.get('x-content-type-options'), 'nosniff');
  const html = await login.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the login page');
  const noAuth = await fetch(`${adminUrl}/v1/campaigns`);
  assert.equal(noAuth.status, 401);
  assert.match(noAuth.headers.get('content-security-policy'), /default-src 'self'/);
  // The bearer token of the CLI and scripts keeps working beside the sessions.
  const list = await api('GET', '/v1/campaigns');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.campaigns.map((c) => c.name), [campaign]);
});

test('login, the funnel moving, pause and resume, CSRF, the other pages, logout', { skip, timeout: 240000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  try {
    await browserSteps(context, page);
  } catch (e) {
    // What the page showed when it failed, beside the log of serve.
    await page.screenshot({ path: path.join(shots, 'failure.png'), fullPage: true }).catch(() => {});
    throw new Error(`${e.message}\n(screenshot: ${path.join(shots, 'failure.png')}; serve log: ${logOf('serve.log')})`);
  } finally {
    await context.close();
  }
});

async function browserSteps(context, page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // A refused fetch (401 for the wrong token, 404 for endpoints this server lacks, 409 for a lead
    // action on a lead in a call) is logged by Chromium as "Failed to load resource"; anything
    // else, a CSP violation above all, is not.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 40[1349]/.test(m.text())) {
      problems.push(`console: ${m.text()}`);
    }
  });

  // A page asked for without a session lands on the login form, and comes back after it.
  await page.goto(`${adminUrl}/ui/campaigns`);
  assert.match(page.url(), /\/ui\/login\?next=\/ui\/campaigns$/);
  await page.fill('#token', 'not-the-admin-token-0000');
  await page.click('#login-submit');
  await page.waitForSelector('#login-error:not([hidden])');
  assert.equal(await page.textContent('#login-error'), 'Wrong token.');
  assert.match(page.url(), /\/ui\/login/);
  assert.equal((await context.cookies()).length, 0, 'no cookie for a wrong token');
  await page.screenshot({ path: path.join(shots, '01-login-wrong-token.png') });

  await page.fill('#token', token);
  await page.click('#login-submit');
  await page.waitForURL(`${adminUrl}/ui/campaigns`);
  const cookies = await context.cookies();
  assert.equal(cookies.length, 1);
  assert.equal(cookies[0].name, 'orch_ui_session');
  assert.equal(cookies[0].httpOnly, true);
  assert.equal(cookies[0].sameSite, 'Strict');
  assert.equal(cookies[0].path, '/');
  assert.match(cookies[0].value, /^[0-9a-f]{64}$/);
  assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is out of the scripts\' reach');

  // The campaigns page lists the campaign.
  const row = page.locator(`#campaigns-table tr[data-campaign="${campaign}"]`);
  await row.waitFor();
  assert.match(await row.textContent(), /ui-demo/);
  assert.match(await row.textContent(), /active/);
  await page.screenshot({ path: path.join(shots, '02-campaigns.png'), fullPage: true });

  // One campaign: the funnel before the worker runs, then moving once it does.
  await row.locator('a').click();
  await page.waitForURL(`${adminUrl}/ui/campaigns/${campaign}`);
  const stage = (s) => page.locator(`#funnel [data-stage="${s}"] .stat-value`);
  await stage('invited').waitFor();
  const number = async (s) => Number((await stage(s).textContent()).replace(/,/g, ''));
  assert.equal(await number('found'), leads);
  const invitedBefore = await number('invited');
  assert.equal(invitedBefore, 0, 'no worker has run yet');
  worker = background(path.join(build, 'bin', 'orchestrator'), ['worker'], 'worker.log');
  const seen = [invitedBefore];
  await waitFor('the funnel on the page to move', async () => {
    const n = await number('invited');
    if (n !== seen[seen.length - 1]) seen.push(n);
    return seen.length >= 3;
  }, 60000, 250).catch((e) => { throw new Error(`${e.message}; seen ${seen}; worker log: ${logOf('worker.log')}`); });
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `invited only grows: ${seen}`);
  await waitFor('the accepted count to move', async () => (await number('accepted')) > 0, 60000, 250);
  await page.waitForSelector('#steps table');
  // Replies per variant and the funnel by day, from GET /v1/campaigns/{name}/report.
  await page.waitForSelector('#variants tr[data-variant]', { timeout: 30000 });
  const report = await api('GET', `/v1/campaigns/${campaign}/report`);
  assert.equal(report.status, 200);
  for (const v of report.body.variants) {
    assert.ok(['A', 'B'].includes(v.variant), v.variant);
    assert.ok(v.replied <= v.messaged, JSON.stringify(v));
  }
  assert.ok(report.body.days.length >= 1);
  assert.match(report.body.days[0].day, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(report.body.days.reduce((n, d) => n + d.invited, 0) > 0);
  const shown = await page.locator('#variants tr[data-variant]').evaluateAll((rows) => rows.map((r) => r.dataset.variant));
  assert.ok(shown.every((v) => ['A', 'B'].includes(v)), `variants on the page: ${shown}`);
  await page.waitForSelector('#days table');
  assert.equal((await api('GET', '/v1/campaigns/no-such-campaign/report')).status, 404);
  await page.waitForSelector('#leads-table tbody tr');
  await sleep(2500); // a few more samples on the chart
  await page.screenshot({ path: path.join(shots, '03-campaign-running.png'), fullPage: true });

  // Pause, then resume: the page's state and the API's agree.
  await page.click('#pause');
  const stateIs = (want) => page.waitForFunction((w) => document.querySelector('#campaign-state')?.textContent.trim() === w, want);
  await stateIs('paused');
  assert.equal((await api('GET', `/v1/campaigns/${campaign}`)).body.state, 'paused');
  assert.equal(await page.isDisabled('#pause'), true);
  await page.screenshot({ path: path.join(shots, '04-campaign-paused.png'), fullPage: true });
  // The lead list says why each lead is where it is as the server's `waiting` does: a paused
  // campaign outranks a live lead's stored reason, and a finished lead says so.
  await page.reload();
  await page.waitForSelector('#leads-table tbody tr');
  const whys = await page.locator('#leads-table tbody tr').evaluateAll((rows) => rows.map((r) => ({
    state: r.querySelector('.badge')?.textContent, why: r.cells[6]?.querySelector('span')?.textContent || '' })));
  assert.ok(whys.length > 0);
  for (const { state, why } of whys) {
    if (['ready', 'calling', 'waiting'].includes(state)) assert.equal(why, 'paused by an operator', JSON.stringify(whys));
    else assert.match(why, /^finished: |^stopped/, JSON.stringify(whys));
  }
  // A lead whose worker died mid-call (its lease ended, its attempt still in flight): its page
  // names the call's kind, not its stale last wait, and the attempt's outcome as lost. Made by
  // hand while the campaign is paused (no worker claims it), then put back as it was.
  const [enrollment, leadId, status, owner, until] = psql(env.DATABASE_URL,
    "SELECT enrollment_id || '|' || lead_id || '|' || status || '|' || COALESCE(lease_owner, '') || '|' || "
    + "COALESCE(lease_expires_at::text, '') FROM enrollments WHERE status IN ('waiting', 'done') "
    + "AND COALESCE(lease_expires_at, '-infinity') < now() ORDER BY enrollment_id LIMIT 1").split('|');
  assert.ok(enrollment, 'a waiting or finished lead to borrow');
  const attempt = psql(env.DATABASE_URL, `WITH u AS (UPDATE enrollments SET status = 'calling', lease_owner = 'w-gone', `
    + `lease_expires_at = now() - interval '1 minute' WHERE enrollment_id = ${enrollment}) `
    + `INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) VALUES (${enrollment}, 'invite', 'invite', 1, 'w-gone') `
    + 'RETURNING attempt_id').split('\n')[0]; // psql adds the command tag
  try {
    await page.goto(`${adminUrl}/ui/campaigns/${campaign}/leads/${leadId}`);
    await page.waitForSelector('#timeline');
    assert.match(await page.textContent('#why-waiting'), /worker w-gone's lease ended at .* before the call's outcome was written/);
    const rows = await page.locator('table.kv tr').evaluateAll((trs) => trs.map((tr) => [tr.cells[0]?.textContent, tr.cells[1]?.textContent]));
    assert.deepEqual(rows.find(([k]) => k === 'Call'), ['Call', 'outcome lost (its worker stopped)'], JSON.stringify(rows));
    assert.equal(rows.find(([k]) => k === 'Reason'), undefined, JSON.stringify(rows));
    const outcomes = await page.locator('#timeline tbody tr').evaluateAll((trs) => trs.map((tr) => tr.cells[5]?.textContent));
    assert.equal(outcomes.at(-1), 'outcome lost', JSON.stringify(outcomes));
  } finally {
    psql(env.DATABASE_URL, `WITH d AS (DELETE FROM step_attempts WHERE attempt_id = ${attempt}) `
      + `UPDATE enrollments SET status = '${status}', lease_owner = NULLIF('${owner}', ''), `
      + `lease_expires_at = NULLIF('${until}', '')::timestamptz WHERE enrollment_id = ${enrollment}`);
  }
  await page.goto(`${adminUrl}/ui/campaigns/${campaign}`);
  await stateIs('paused');
  await page.click('#resume');
  await stateIs('active');
  assert.equal((await api('GET', `/v1/campaigns/${campaign}`)).body.state, 'active');

  // A change with the session cookie but without (or with a wrong) CSRF header is refused.
  const forged = await page.evaluate(async (name) => {
    const out = [];
    for (const headers of [{}, { 'X-CSRF-Token': 'f'.repeat(64) }]) {
      const r = await fetch(`/v1/campaigns/${name}/pause`, { method: 'POST', headers, credentials: 'same-origin' });
      out.push({ status: r.status, body: await r.json() });
    }
    return out;
  }, campaign);
  for (const r of forged) {
    assert.equal(r.status, 403);
    assert.match(r.body.error.message, /X-CSRF-Token/);
  }
  assert.equal((await api('GET', `/v1/campaigns/${campaign}`)).body.state, 'active', 'the refused pause changed nothing');
  // Reads with the cookie alone are fine; the same cookie from outside the browser, without the
  // header, cannot change anything either.
  const cookie = `orch_ui_session=${cookies[0].value}`;
  assert.equal((await fetch(`${adminUrl}/v1/campaigns`, { headers: { cookie } })).status, 200);
  assert.equal((await fetch(`${adminUrl}/v1/campaigns/${campaign}/cancel`, { method: 'POST', headers: { cookie } })).status, 403);
  assert.equal((await api('GET', `/v1/campaigns/${campaign}`)).body.state, 'active');

  // A lead: why it waits and its timeline; its actions say plainly when the server lacks them.
  await page.locator('#leads-table tbody tr a').first().click();
  await page.waitForSelector('#why-waiting');
  assert.notEqual((await page.textContent('#why-waiting')).replace('Why:', '').trim(), '');
  // Stop: the lead ends ("stopped by an operator"), or the server refuses with why (409: its call
  // is in flight, or it has finished already).
  await page.click('#lead-stop');
  await page.waitForFunction(() => /stopped by an operator/.test(document.querySelector('#why-waiting')?.textContent || '')
    || document.querySelector('#lead-action-result :is(.unavailable, .error)'));
  const leadAction = await page.textContent('#lead-action-result');
  if (leadAction.trim()) assert.match(leadAction, /calling the API|has finished/);
  await page.screenshot({ path: path.join(shots, '05-lead.png'), fullPage: true });

  // The other pages render their data (or say an endpoint is missing), with no error shown.
  await page.click('[data-nav="accounts"]');
  await page.waitForSelector('#accounts article.account');
  assert.equal(await page.locator('#accounts article.account').count(), 2);
  await page.waitForFunction(() => document.querySelector('#accounts [data-health] .stat-value')?.textContent !== '');
  assert.match(await page.locator('#accounts [data-health] .stat-value').first().textContent(), /^(ok|not reported|quiet since)/);
  await page.screenshot({ path: path.join(shots, '06-accounts.png'), fullPage: true });
  await page.click('[data-nav="budget"]');
  await page.waitForSelector('#budgets table');
  assert.match(await page.textContent('#budgets'), /ui-demo/);
  await page.waitForSelector('#spend-chart .uplot');
  await page.screenshot({ path: path.join(shots, '07-budget.png'), fullPage: true });
  await page.click('[data-nav="events"]');
  await page.waitForSelector('#events table');
  await page.waitForSelector('#quarantine > *');
  await page.screenshot({ path: path.join(shots, '08-events.png'), fullPage: true });
  // A lead's reply reaches the inbox (the sandbox answers a third of the messages).
  const replied = await waitFor('a campaign reply in the inbox',
    async () => (await api('GET', '/v1/inbox')).body.replies.find((r) => r.campaign === campaign), 90000, 500);
  // A reply the catch-up sweep stored late (here: stored two hours after it was written) says
  // when it was written beside when it was stored; one stored as it came says nothing more.
  psql(env.DATABASE_URL, `UPDATE events SET received_at = received_at + interval '2 hours' WHERE event_id = ${replied.id}`);
  const late = (await api('GET', `/v1/inbox/${replied.id}`)).body.reply;
  assert.ok(late.written_at, 'the reply gives when it was written');
  await page.click('[data-nav="inbox"]');
  await page.waitForSelector('#inbox > *');
  await page.waitForSelector('#dnc > *');
  const summary = await page.textContent(`#inbox details[data-reply="${replied.id}"] summary`);
  assert.ok(summary.includes(`written ${late.written_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`), summary);
  const others = await page.$$eval('#inbox details summary', (l) => l.map((e) => e.textContent));
  for (const other of others.filter((t) => t !== summary)) assert.ok(!other.includes('written'), other);
  // The do-not-contact form adds a company; the list shows it, and the API has it.
  await page.fill('#dnc-value', 'Initech');
  await page.fill('#dnc-reason', 'asked by phone');
  await page.click('#dnc-add button[type=submit]');
  await page.waitForSelector('#dnc table td:text("Initech")');
  assert.match(await page.textContent('#dnc-result'), /1 added/);
  const listed = (await api('GET', '/v1/dnc')).body.entries;
  assert.deepEqual(listed.map((d) => [d.kind, d.company, d.reason]), [['company', 'Initech', 'asked by phone']]);
  // Answer a reply from the inbox: its conversation opens, the answer is queued, serve sends it
  // (the status turns "sent"), and the sandbox received it exactly once.
  const item = `#inbox details[data-reply="${replied.id}"]`;
  await page.click(`${item} summary`);
  await page.waitForSelector(`${item} .conversation li.in`);
  const answer = `Thanks ${replied.id}, let us talk on Tuesday.`;
  await page.fill(`${item} .reply-text`, answer);
  await page.click(`${item} .reply-send`);
  await page.waitForFunction((sel) => /\bsent\b/.test(document.querySelector(sel)?.textContent || ''), `${item} .reply-status`, { timeout: 30000 });
  await page.waitForSelector(`${item} .conversation li.out:has-text("${answer}")`);
  const answered = (await api('GET', `/v1/inbox/${replied.id}`)).body;
  assert.deepEqual(answered.manual_replies.map((m) => [m.text, m.state, m.requested_by]), [[answer, 'sent', 'admin-api']]);
  const effects = await (await fetch(`http://127.0.0.1:${controlPort}/control/side-effects`)).json();
  assert.equal(effects.messages.filter((m) => m.text === answer).length, 1, 'the answer was sent exactly once');
  // Sending the same answer again is the same reply: nothing more is sent.
  await page.fill(`${item} .reply-text`, answer);
  await page.click(`${item} .reply-send`);
  await page.waitForFunction((sel) => /asked for before|sent/.test(document.querySelector(sel)?.textContent || ''), `${item} .reply-status`);
  await sleep(1000);
  const again = await (await fetch(`http://127.0.0.1:${controlPort}/control/side-effects`)).json();
  assert.equal(again.messages.filter((m) => m.text === answer).length, 1, 'a repeated answer is not sent twice');
  await page.screenshot({ path: path.join(shots, '09-inbox.png'), fullPage: true });
  // "Not interested": the person goes on the do-not-contact list.
  page.once('dialog', (d) => d.accept());
  await page.click(`${item} .not-interested`);
  await page.waitForSelector(`${item} .reply-status .marked`);
  const dncNow = (await api('GET', '/v1/dnc')).body.entries;
  assert.ok(dncNow.some((d) => d.kind === 'profile' && d.profile_url === replied.profile_url), JSON.stringify(dncNow));
  for (const id of ['#inbox', '#dnc']) {
    assert.equal(await page.locator(`${id} .error`).count(), 0, `${id}: ${await page.textContent(id)}`);
  }

  // Back on the Campaigns page, the running campaign shows its progress and rates per variant.
  await page.click('[data-nav="campaigns"]');
  await page.waitForSelector(`#campaigns-table tr[data-campaign="${campaign}"] [data-variant]`);
  assert.match(await page.textContent(`#campaigns-table tr[data-campaign="${campaign}"]`), /[AB]: \d+\/\d+ replied/);
  await page.screenshot({ path: path.join(shots, '10-campaigns-running.png'), fullPage: true });

  // Logging out ends the session on the server too.
  await page.click('#logout');
  await page.waitForURL(/\/ui\/login$/);
  assert.equal((await fetch(`${adminUrl}/v1/campaigns`, { headers: { cookie } })).status, 401);
  await page.goto(`${adminUrl}/ui/accounts`);
  assert.match(page.url(), /\/ui\/login\?next=\/ui\/accounts$/);

  assert.deepEqual(problems, [], 'no script error or CSP violation in the pages');
}

test('login hardening: JSON only, same origin only', { skip }, async () => {
  const form = await fetch(`${adminUrl}/ui/login`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
  assert.equal(form.status, 415, 'a cross-site HTML form cannot log a browser in');
  const other = await fetch(`${adminUrl}/ui/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://evil.example' }, body: JSON.stringify({ token }),
  });
  assert.equal(other.status, 403);
  assert.equal(other.headers.get('set-cookie'), null);
  const bad = await fetch(`${adminUrl}/ui/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"token": 5}' });
  assert.equal(bad.status, 400);
  const ok = await fetch(`${adminUrl}/ui/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) });
  assert.equal(ok.status, 200);
  assert.match(ok.headers.get('set-cookie'), /^orch_ui_session=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=\//);
  assert.match((await ok.json()).csrf, /^[0-9a-f]{64}$/);
});
