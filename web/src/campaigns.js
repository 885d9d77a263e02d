// Campaigns: each campaign's state, progress, funnel, rates (overall and per message variant),
// spend against budget and an ETA.
// The ETA is measured here: the finished leads' rate over what this page has seen (up to ten
// minutes of samples), as the API keeps no history of its own.
import { get } from './api.js';
import { h, clear, put, num, pct, badge, progress, table, errorBox, duration } from './ui.js';
import { scanLeads } from './campaign.js';

const samples = new Map(); // campaign -> [{t, finished}]
const variantRates = new Map(); // campaign -> {at, rows}: read every 30 seconds

// Per variant {variant, messaged, replied}: the report endpoint's, or on a server without it the
// leads' split alone (a lead's state cannot tell a reply that came after its last step).
async function variants(name) {
  const cached = variantRates.get(name);
  if (cached && Date.now() - cached.at < 30000) return cached.rows;
  let rows;
  try {
    rows = (await get(`/v1/campaigns/${encodeURIComponent(name)}/report`)).variants;
  } catch (e) {
    if (!e.missingEndpoint) throw e;
    const scan = await scanLeads(name, 1);
    rows = [...scan.variants.entries()].map(([variant, s]) => ({ variant, messaged: s.leads, replied: null }));
  }
  variantRates.set(name, { at: Date.now(), rows });
  return rows;
}

function variantLines(rows) {
  return (rows || []).map((v) => h('small', { class: 'block', dataset: { variant: v.variant },
    text: v.replied === null ? `${v.variant}: ${num(v.messaged)} leads`
      : `${v.variant}: ${num(v.replied)}/${num(v.messaged)} replied (${pct(v.replied, v.messaged)})` }));
}

export function eta(name, finished, live, now = Date.now()) {
  const list = samples.get(name) || [];
  list.push({ t: now, finished });
  while (list.length > 2 && now - list[0].t > 10 * 60 * 1000) list.shift();
  samples.set(name, list);
  if (live === 0) return 'done';
  if (list.length < 2) return 'measuring…';
  const first = list[0];
  const rate = (finished - first.finished) / ((now - first.t) / 1000);
  if (rate <= 0) return 'no progress seen yet';
  return duration(live / rate);
}

function row(c, detail, money, scan) {
  const f = detail.funnel || {};
  const finished = c.enrollments - c.live;
  const budget = money && money.budget;
  return h('tr', { dataset: { campaign: c.name } },
    h('td', {}, h('a', { href: `/ui/campaigns/${encodeURIComponent(c.name)}`, 'data-link': true, text: c.name })),
    h('td', {}, badge(c.state), c.pause_reason ? h('small', { class: 'muted block', text: c.pause_reason }) : null),
    h('td', {}, progress(finished, c.enrollments, `${num(finished)} / ${num(c.enrollments)}`)),
    h('td', { class: 'funnel-cell' },
      h('span', { dataset: { stage: 'invited' }, text: num(f.invited) }), ' → ',
      h('span', { dataset: { stage: 'accepted' }, text: num(f.accepted) }), ' → ',
      h('span', { dataset: { stage: 'messaged' }, text: num(f.messaged) }), ' → ',
      h('span', { dataset: { stage: 'replied' }, text: num(f.replied) })),
    h('td', {}, h('small', { class: 'block', text: `accept ${pct(f.accepted, f.invited)}` }),
      h('small', { class: 'block', text: `reply ${pct(f.replied, f.messaged)}` }), variantLines(scan)),
    h('td', {}, money ? progress(money.spent + money.reserved, budget || 1,
      `${num(money.spent)}${money.reserved ? ` (+${num(money.reserved)} held)` : ''} / ${num(budget)}`) : '—'),
    h('td', { text: c.state === 'active' || c.state === 'paused' ? eta(c.name, finished, c.live) : '—' }));
}

export function render(main) {
  variantRates.clear(); // fresh on each visit, then every 30 seconds
  const body = h('div');
  main.append(h('hgroup', {}, h('h2', { text: 'Campaigns' }), h('p', { class: 'muted', text: 'Refreshed every 3 seconds.' })), body);
  let stopped = false;
  async function refresh() {
    try {
      const [list, money] = await Promise.all([get('/v1/campaigns'), get('/v1/budget')]);
      const details = await Promise.all(list.campaigns.map((c) => get(`/v1/campaigns/${encodeURIComponent(c.name)}`)));
      const scans = await Promise.all(list.campaigns.map((c) => variants(c.name).catch(() => null)));
      const byName = new Map(money.campaigns.map((b) => [b.campaign, b]));
      if (stopped) return;
      clear(body);
      if (list.campaigns.length === 0) {
        body.append(h('p', { text: 'No campaigns yet: apply one with `orchestrator campaign apply FILE`.' }));
        return;
      }
      body.append(table(['Campaign', 'State', 'Progress (finished / leads)', 'Invited → accepted → messaged → replied', 'Rates (per variant: replied / messaged)', 'Credits spent / budget', 'ETA'],
        list.campaigns.map((c, i) => row(c, details[i], byName.get(c.name), scans[i])), { id: 'campaigns-table' }));
    } catch (e) {
      if (!stopped) put(body, errorBox(e));
    }
  }
  refresh();
  const timer = setInterval(refresh, 3000);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
