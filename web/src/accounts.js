// Accounts: status, quotas used and left today and this week (the effective quotas, i.e. with
// the account's own overrides and ramp-up as the server computes them), cooldowns, the next
// pacing slot, and the events health (the webhook registered for the account).
import { get } from './api.js';
import { h, clear, put, num, badge, table, errorBox, when } from './ui.js';

const future = (iso) => iso && new Date(iso).getTime() > Date.now();

function quotaCell(used, limit, left) {
  if (limit === null || limit === undefined) return h('td', { text: `${num(used)} (no cap)` });
  return h('td', {}, h('progress', { value: used, max: Math.max(1, limit) }), h('small', { text: `${num(used)} / ${num(limit)}, ${num(left)} left` }));
}

// Events health from /readyz (checks.events: "ok", or degraded with the accounts whose events
// went quiet while invitations are pending); older servers do not report it.
function eventsHealth(ready, accountId) {
  const ev = ready && ready.checks ? ready.checks.events : undefined;
  if (ev === undefined) return 'not reported';
  if (ev === 'ok') return 'ok';
  if (typeof ev === 'string') return ev;
  const quiet = (ev.quiet_accounts || []).find((q) => q.account_id === accountId);
  return quiet ? `quiet since ${when(quiet.last_event_at)} (${quiet.pending_invitations} invitations pending)` : 'ok';
}

function account(a, ready) {
  const l = a.limits || { actions: [] };
  return h('article', { class: 'account', dataset: { account: a.account_id } },
    h('header', {},
      h('strong', { text: a.label || a.display_name || a.account_id }), ' ',
      badge(a.connected ? 'connected' : 'disconnected'), ' ',
      h('small', { class: 'muted', text: `${a.account_id} · ${a.platform} · API status ${a.api_status || '—'}` })),
    h('div', { class: 'stats' },
      h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: num(a.live_enrollments) }), h('span', { class: 'stat-label', text: 'live leads' })),
      h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: num(a.parked_enrollments) }), h('span', { class: 'stat-label', text: 'parked' })),
      h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: a.webhook_id ? 'registered' : 'none' }), h('span', { class: 'stat-label', text: 'events webhook' })),
      h('div', { class: 'stat', dataset: { health: a.account_id } }, h('span', { class: 'stat-value', text: eventsHealth(ready, a.account_id) }), h('span', { class: 'stat-label', text: 'events health' })),
      h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: future(l.key_cooldown_until) ? when(l.key_cooldown_until) : 'none' }), h('span', { class: 'stat-label', text: 'API key cooldown' }))),
    a.limits_error ? h('p', { class: 'error', text: `quotas unknown: ${a.limits_error}` }) : null,
    table([`Action`, `Today (${l.time_zone || 'UTC'})`, 'This week', 'Cooldown until', 'Next pacing slot'], (l.actions || []).map((q) => h('tr', {},
      h('td', { text: q.action }),
      quotaCell(q.used_today, q.limit_today, q.left_today),
      quotaCell(q.used_week, q.limit_week, q.left_week),
      h('td', { text: future(q.cooldown_until) ? when(q.cooldown_until) : '—' }),
      h('td', { text: future(q.pace_until) ? when(q.pace_until) : 'now' })))),
    Object.keys(a.quota_overrides || {}).length ? h('small', { class: 'muted', text: `own quota overrides: ${JSON.stringify(a.quota_overrides)}` }) : null);
}

export function render(main) {
  const body = h('div', { id: 'accounts' });
  main.append(h('hgroup', {}, h('h2', { text: 'Accounts' }), h('p', { class: 'muted', text: 'Quotas from the Redis buckets; refreshed every 5 seconds.' })), body);
  let stopped = false;
  // /readyz probes the API too: read once when the page opens, not on every refresh.
  const ready = fetch('/readyz', { credentials: 'same-origin' }).then((res) => res.json()).catch(() => null);
  async function refresh() {
    try {
      const [r, health] = await Promise.all([get('/v1/accounts'), ready]);
      if (stopped) return;
      put(body, ...(r.accounts.length ? r.accounts.map((a) => account(a, health)) : [h('p', { text: 'No accounts connected.' })]));
    } catch (e) {
      if (!stopped) put(body, errorBox(e));
    }
  }
  refresh();
  const timer = setInterval(refresh, 5000);
  return () => { stopped = true; clearInterval(timer); };
}
