// One campaign: state and its actions, the funnel (now and over time while the page is open),
// the steps with how many leads are in each, the variants, and the leads table (filter by state,
// search, pages by cursor); a lead opens its own page (why it waits, its timeline, actions).
import { get, post } from './api.js';
import { h, clear, put, num, pct, badge, table, errorBox, stat, when, unavailable } from './ui.js';
import { lineChart } from './chart.js';

const stages = ['found', 'skipped', 'checked', 'invited', 'accepted', 'messaged', 'replied', 'failed', 'live', 'credits'];
const leadStates = ['live', 'ready', 'calling', 'waiting', 'done', 'replied', 'failed', 'cancelled'];
const scanPages = 5; // leads read for the step and variant counts: up to 5 pages of 1000

function actions(c, onChange) {
  const out = h('div', { class: 'actions' });
  const act = async (verb) => {
    if (verb === 'cancel' && !window.confirm(`Cancel campaign ${c.name}? Its live leads stop for good.`)) return;
    try {
      await post(`/v1/campaigns/${encodeURIComponent(c.name)}/${verb}`);
      onChange();
    } catch (e) {
      out.after(errorBox(e));
    }
  };
  out.append(
    h('button', { id: 'pause', class: 'secondary', disabled: c.state !== 'active', onclick: () => act('pause'), text: 'Pause' }),
    h('button', { id: 'resume', disabled: c.state !== 'paused', onclick: () => act('resume'), text: 'Resume' }),
    h('button', { id: 'cancel', class: 'contrast outline', disabled: c.state !== 'active' && c.state !== 'paused', onclick: () => act('cancel'), text: 'Cancel' }));
  return out;
}

// Counts a campaign's leads by step and by variant over at most `pages` pages of 1000.
export async function scanLeads(name, pages = scanPages) {
  const steps = new Map();
  const variants = new Map();
  let cursor = null;
  let seen = 0;
  for (let page = 0; page < pages; page++) {
    const q = new URLSearchParams({ limit: '1000' });
    if (cursor) q.set('cursor', cursor);
    const r = await get(`/v1/campaigns/${encodeURIComponent(name)}/leads?${q}`);
    for (const l of r.items) {
      seen++;
      const s = steps.get(l.step) || { live: 0, finished: 0 };
      if (['done', 'replied', 'failed', 'cancelled'].includes(l.state)) s.finished++; else s.live++;
      steps.set(l.step, s);
      if (l.variant) {
        const v = variants.get(l.variant) || { leads: 0, replied: 0, failed: 0 };
        v.leads++;
        if (l.state === 'replied') v.replied++;
        if (l.state === 'failed') v.failed++;
        variants.set(l.variant, v);
      }
    }
    cursor = r.next_cursor;
    if (!cursor) return { steps, variants, seen, complete: true };
  }
  return { steps, variants, seen, complete: false };
}

function leadsSection(name) {
  const section = h('section', { id: 'leads' });
  const state = h('select', { id: 'lead-state', 'aria-label': 'State' },
    h('option', { value: '', text: 'all states' }), leadStates.map((s) => h('option', { value: s, text: s })));
  const search = h('input', { id: 'lead-search', type: 'search', placeholder: 'Search this page (profile, account, step, why, fields)', 'aria-label': 'Search' });
  const size = 25;
  const cursors = [null]; // the cursor of each page seen, for "previous"
  let page = 0;
  let items = [];
  let next = null;
  const body = h('div');
  const prev = h('button', { class: 'secondary outline', text: '← Previous' });
  const nextBtn = h('button', { class: 'secondary outline', text: 'Next →' });
  const where = h('small', { class: 'muted' });

  function draw() {
    const needle = search.value.trim().toLowerCase();
    const shown = needle ? items.filter((l) => JSON.stringify([l.profile_url, l.account_id, l.step, l.waiting, l.reason, l.fields, l.state, l.variant]).toLowerCase().includes(needle)) : items;
    put(body, table(['Lead', 'Profile', 'State', 'Step', 'Variant', 'Account', 'Why / next run', 'Updated'],
      shown.map((l) => h('tr', {},
        h('td', {}, h('a', { href: `/ui/campaigns/${encodeURIComponent(name)}/leads/${l.lead_id}`, 'data-link': true, text: `#${l.lead_id}` })),
        h('td', { class: 'wrap', text: l.profile_url }),
        h('td', {}, badge(l.state), l.parked ? h('small', { class: 'muted block', text: 'parked' }) : null),
        h('td', { text: l.step }),
        h('td', { text: l.variant || '—' }),
        h('td', { class: 'mono', text: l.account_id }),
        // `waiting` is the server's sentence (a calling lead's kind of call, a paused campaign, a
        // disconnected sender outrank the stored reason); the reason alone would miss them.
        h('td', { class: 'wrap' }, h('span', { class: 'block', text: l.waiting || l.reason }), l.next_run_at ? h('small', { class: 'muted', text: when(l.next_run_at) }) : null),
        h('td', { text: when(l.updated_at) }))), { id: 'leads-table' }));
    if (shown.length === 0) body.append(h('p', { class: 'muted', text: needle ? 'No lead on this page matches.' : 'No leads.' }));
    prev.disabled = page === 0;
    nextBtn.disabled = !next;
    where.textContent = `page ${page + 1}, ${items.length} leads${needle ? `, ${shown.length} matching` : ''}`;
  }
  async function load() {
    const q = new URLSearchParams({ limit: String(size) });
    if (state.value) q.set('state', state.value);
    if (cursors[page]) q.set('cursor', cursors[page]);
    try {
      const r = await get(`/v1/campaigns/${encodeURIComponent(name)}/leads?${q}`);
      items = r.items;
      next = r.next_cursor;
      draw();
    } catch (e) {
      put(body, errorBox(e));
    }
  }
  // Bulk actions on every lead in the chosen state (POST .../leads:bulk): leads in a call and
  // finished ones are refused by the server and counted by why.
  const bulkOut = h('div', { id: 'bulk-result' });
  async function bulk(action) {
    if (!state.value) {
      put(bulkOut, h('p', { class: 'muted', text: 'Choose a state first: bulk actions work on the leads in one state.' }));
      return;
    }
    if (!window.confirm(`${action} every ${state.value} lead of ${name}?`)) return;
    try {
      const r = await post(`/v1/campaigns/${encodeURIComponent(name)}/leads:bulk`, { action, state: state.value });
      put(bulkOut, h('p', { text: `${action}: ${r.matched} matched, ${r.changed_count} changed, ${r.refused_count} refused` +
        (r.already_count > 0 ? `, ${r.already_count} stopped already` : '') +
        (r.not_known_connected > 0 ? `, ${r.not_known_connected} moved to a message step with no acceptance seen (only connections can be messaged)` : '') +
        Object.entries(r.refused_by_why).map(([why, n]) => ` · ${n}: ${why}`).join('') }));
      load();
    } catch (e) {
      put(bulkOut, errorBox(e));
    }
  }
  const bulkButtons = h('div', { class: 'actions' },
    h('button', { id: 'bulk-stop', class: 'secondary outline', onclick: () => bulk('stop'), text: 'Stop all in this state' }),
    h('button', { id: 'bulk-retry', class: 'secondary outline', onclick: () => bulk('retry'), text: 'Retry all in this state' }));
  state.addEventListener('change', () => { cursors.length = 1; page = 0; load(); });
  search.addEventListener('input', draw);
  prev.addEventListener('click', () => { if (page > 0) { page--; load(); } });
  nextBtn.addEventListener('click', () => { if (next) { cursors[page + 1] = next; page++; load(); } });
  section.refresh = load;
  section.append(h('h3', { text: 'Leads' }), h('div', { class: 'grid filters' }, state, search), bulkButtons, bulkOut, body,
    h('div', { class: 'pager' }, prev, where, nextBtn));
  load();
  return section;
}

export function render(main, [name]) {
  const head = h('div');
  const funnel = h('div', { class: 'stats', id: 'funnel' });
  const chartBox = h('div', { class: 'chart', id: 'funnel-chart' });
  const stepsBox = h('div', { id: 'steps' });
  const variantsBox = h('div', { id: 'variants' });
  const daysBox = h('div', { id: 'days' });
  const leads = leadsSection(name);
  main.append(
    h('nav', { 'aria-label': 'breadcrumb' }, h('ul', {}, h('li', {}, h('a', { href: '/ui/campaigns', 'data-link': true, text: 'Campaigns' })), h('li', { text: name }))),
    head,
    h('section', {}, h('h3', { text: 'Funnel' }), funnel,
      h('h4', { text: 'Over time' }), h('p', { class: 'muted', text: 'Sampled every 2 seconds while this page is open; steps, variants and leads every 6 seconds.' }), chartBox),
    h('div', { class: 'grid' },
      h('section', {}, h('h3', { text: 'Steps' }), stepsBox),
      h('section', {}, h('h3', { text: 'Variants' }), variantsBox, h('h3', { text: 'By day' }), daysBox)),
    leads);
  const chart = lineChart(chartBox, ['invited', 'accepted', 'messaged', 'replied']);
  let stopped = false;
  let version = null;
  let definition = null;
  let tick = 0;

  // Replies per variant and the funnel per day from the report endpoint; a server without it
  // gets the leads' split per variant only (a lead's state misses replies after its last step).
  async function refreshReport(scan, note) {
    let report = null;
    try {
      report = await get(`/v1/campaigns/${encodeURIComponent(name)}/report`);
    } catch (e) {
      if (!e.missingEndpoint) throw e;
    }
    if (report) {
      // The funnel counts a reply as it comes; a variant, once the message it answers is known to
      // have been sent (a send whose answer was lost is checked first): the two differ meanwhile.
      put(variantsBox, report.variants.length === 0 ? h('p', { class: 'muted', text: 'No lead has been messaged yet.' })
        : h('div', {}, table(['Variant', 'Messaged', 'Replied', 'Reply rate'], report.variants.map((v) => h('tr', { dataset: { variant: v.variant } },
          h('td', { text: v.variant }), h('td', { text: num(v.messaged) }), h('td', { text: num(v.replied) }),
          h('td', { text: pct(v.replied, v.messaged) })))),
        h('small', { class: 'muted', text: 'Replies to messages known to have been sent; a reply to a message whose send is still being checked counts in the funnel first.' })));
      put(daysBox, report.days.length === 0 ? h('p', { class: 'muted', text: 'Nothing yet.' })
        : table(['Day (UTC)', 'Invited', 'Accepted', 'Messaged', 'Replied'], report.days.slice().reverse().map((d) => h('tr', {},
          h('td', { text: d.day }), h('td', { text: num(d.invited) }), h('td', { text: num(d.accepted) }),
          h('td', { text: num(d.messaged) }), h('td', { text: num(d.replied) })))));
      return;
    }
    const vs = [...scan.variants.entries()].sort();
    put(variantsBox, vs.length === 0 ? h('p', { class: 'muted', text: 'No lead has reached a step with variants yet.' })
      : table(['Variant', 'Leads', 'Failed'], vs.map(([v, s]) => h('tr', { dataset: { variant: v } },
        h('td', { text: v }), h('td', { text: num(s.leads) }), h('td', { text: num(s.failed) })))),
    h('small', { class: 'muted', text: note }), unavailable('GET /v1/campaigns/{name}/report (replies per variant)'));
    put(daysBox, unavailable('GET /v1/campaigns/{name}/report (the funnel per day)'));
  }

  async function refreshSteps() {
    try {
      const scan = await scanLeads(name);
      const note = scan.complete ? `${num(scan.seen)} leads` : `counted over the first ${num(scan.seen)} leads`;
      const defined = definition ? definition.steps || [] : [];
      const ids = [...defined.map((s) => s.id), ...[...scan.steps.keys()].filter((k) => !defined.some((s) => s.id === k))];
      put(stepsBox, table(['Step', 'Kind', 'Live here', 'Ended here'], ids.map((id) => {
        const s = scan.steps.get(id) || { live: 0, finished: 0 };
        const d = defined.find((x) => x.id === id);
        // A finished lead has no step: its row is the end of the graph.
        return h('tr', { dataset: { step: id } }, h('td', { text: id || '(finished)' }), h('td', { text: d ? d.kind : '—' }),
          h('td', { text: num(s.live) }), h('td', { text: num(s.finished) }));
      })), h('small', { class: 'muted', text: note }));
      await refreshReport(scan, note);
    } catch (e) {
      put(stepsBox, errorBox(e));
    }
  }

  async function refresh() {
    try {
      const c = await get(`/v1/campaigns/${encodeURIComponent(name)}`);
      if (stopped) return;
      if (c.version !== version) {
        version = c.version;
        definition = (await get(`/v1/campaigns/${encodeURIComponent(name)}/versions/${c.version}`)).definition;
      }
      put(head, 
        h('hgroup', {}, h('h2', { id: 'campaign-name', text: c.name }),
          h('p', {}, badge(c.state), h('span', { id: 'campaign-state', class: 'muted', text: ` ${c.state}` }),
            c.pause_reason ? h('span', { class: 'muted', text: ` — ${c.pause_reason}` }) : null,
            h('span', { class: 'muted', text: ` · version ${c.version} · ${num(c.enrollments)} leads, ${num(c.live)} live` }))),
        actions(c, refresh));
      const f = c.funnel;
      put(funnel, ...stages.map((s) => stat(s, num(f[s]), { dataset: { stage: s } })),
        stat('accept rate', pct(f.accepted, f.invited)), stat('reply rate', pct(f.replied, f.messaged)));
      chart.push(Date.now() / 1000, [f.invited, f.accepted, f.messaged, f.replied]);
      // The step counts read every lead: every third refresh only, with the table's page.
      if (tick++ % 3 === 0) {
        refreshSteps();
        if (tick > 1 && !leads.contains(document.activeElement)) leads.refresh();
      }
    } catch (e) {
      if (!stopped) put(head, errorBox(e));
    }
  }
  refresh();
  const timer = setInterval(refresh, 2000);
  return () => {
    stopped = true;
    clearInterval(timer);
    chart.destroy();
  };
}
