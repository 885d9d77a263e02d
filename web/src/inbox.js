// Inbox: replies by campaign and account with the conversation, and the do-not-contact list.
// Both endpoints (/v1/inbox, /v1/dnc) are newer than some servers: a 404 "no such path" shows
// that plainly instead of an error.
import { get, post, call } from './api.js';
import { h, clear, put, table, errorBox, when, unavailable } from './ui.js';

function conversation(c) {
  const messages = c.messages || [];
  return h('details', {},
    h('summary', {}, h('strong', { text: c.profile_url || c.lead || 'conversation' }), ' ',
      h('small', { class: 'muted', text: [c.campaign, c.account_id, when(c.last_at || c.received_at)].filter(Boolean).join(' · ') })),
    messages.length ? h('ol', { class: 'conversation' }, messages.map((m) => h('li', { class: m.direction === 'in' || m.from_lead ? 'in' : 'out' },
      h('small', { class: 'muted block', text: when(m.at || m.sent_at || m.received_at) }), h('span', { text: m.text || '' }))))
      : h('p', { class: 'muted', text: c.text || 'No messages.' }));
}

export function render(main) {
  const filters = h('div', { class: 'grid filters' },
    h('input', { id: 'inbox-campaign', placeholder: 'campaign', 'aria-label': 'Campaign' }),
    h('input', { id: 'inbox-account', placeholder: 'account', 'aria-label': 'Account' }));
  const inbox = h('div', { id: 'inbox' });
  const dnc = h('div', { id: 'dnc' });
  main.append(h('h2', { text: 'Inbox' }), filters, inbox, h('h3', { text: 'Do not contact' }), dnc);
  async function loadInbox() {
    const q = new URLSearchParams();
    const [camp, acct] = filters.querySelectorAll('input');
    if (camp.value.trim()) q.set('campaign', camp.value.trim());
    if (acct.value.trim()) q.set('account', acct.value.trim());
    try {
      const r = await get(`/v1/inbox${q.toString() ? `?${q}` : ''}`);
      const items = r.conversations || r.replies || r.items || [];
      put(inbox, items.length ? h('div', {}, items.map(conversation)) : h('p', { class: 'muted', text: 'No replies.' }));
    } catch (e) {
      put(inbox, e.missingEndpoint ? unavailable('GET /v1/inbox') : errorBox(e));
    }
  }
  // The list with a remove button per entry, and a form to add a profile URL or a company
  // (POST /v1/dnc stops their live leads at once; the answer says how many).
  const dncOut = h('div', { id: 'dnc-result' });
  const dncValue = h('input', { id: 'dnc-value', placeholder: 'profile URL or company name', 'aria-label': 'Profile URL or company' });
  const dncReason = h('input', { id: 'dnc-reason', placeholder: 'reason', 'aria-label': 'Reason' });
  async function addDnc(e) {
    e.preventDefault();
    const v = dncValue.value.trim();
    if (!v) return;
    const entry = /^https?:\/\/|\//.test(v) ? { profile_url: v } : { company: v };
    if (dncReason.value.trim()) entry.reason = dncReason.value.trim();
    try {
      const r = await post('/v1/dnc', entry);
      put(dncOut, h('p', { text: `${r.added.length} added, ${r.duplicates.length} already listed; ${r.stopped_leads} live leads stopped` +
        (r.in_flight_leads ? `, ${r.in_flight_leads} in a call stopped by their worker` : '') }));
      dncValue.value = '';
      dncReason.value = '';
      loadDnc();
    } catch (err) {
      put(dncOut, errorBox(err));
    }
  }
  async function removeDnc(d) {
    if (!window.confirm(`Remove ${d.value} from the do-not-contact list? Leads it stopped stay stopped.`)) return;
    try {
      await call('DELETE', `/v1/dnc/${d.id}`);
      loadDnc();
    } catch (err) {
      put(dncOut, errorBox(err));
    }
  }
  async function loadDnc() {
    try {
      const r = await get('/v1/dnc?limit=1000');
      const items = r.entries || r.items || r.dnc || [];
      put(dnc,
        h('form', { id: 'dnc-add', class: 'grid', onsubmit: addDnc }, dncValue, dncReason, h('button', { type: 'submit', text: 'Add' })),
        dncOut,
        items.length ? table(['Profile / company', 'Reason', 'Added by', 'Since', ''], items.map((d) => h('tr', {},
          h('td', { class: 'wrap', text: d.profile_url || d.company || d.value || '' }), h('td', { text: d.reason || '' }),
          h('td', { text: d.added_by || '' }), h('td', { text: when(d.created_at) }),
          h('td', {}, h('button', { class: 'secondary outline', onclick: () => removeDnc(d), text: 'Remove' })))))
          : h('p', { class: 'muted', text: 'The list is empty.' }));
    } catch (e) {
      put(dnc, e.missingEndpoint ? unavailable('GET /v1/dnc') : errorBox(e));
    }
  }
  filters.addEventListener('change', loadInbox);
  loadInbox();
  loadDnc();
}
