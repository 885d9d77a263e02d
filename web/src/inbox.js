// Inbox: replies by campaign and account with the conversation, and the do-not-contact list.
// Both endpoints (/v1/inbox, /v1/dnc) are newer than some servers: a 404 "no such path" shows
// that plainly instead of an error.
import { get } from './api.js';
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
  async function loadDnc() {
    try {
      const r = await get('/v1/dnc');
      const items = r.entries || r.items || r.dnc || [];
      put(dnc, items.length ? table(['Profile', 'Reason', 'Since'], items.map((d) => h('tr', {},
        h('td', { class: 'wrap', text: d.profile_url || d.value || '' }), h('td', { text: d.reason || '' }), h('td', { text: when(d.created_at) }))))
        : h('p', { class: 'muted', text: 'The list is empty.' }));
    } catch (e) {
      put(dnc, e.missingEndpoint ? unavailable('GET /v1/dnc') : errorBox(e));
    }
  }
  filters.addEventListener('change', loadInbox);
  loadInbox();
  loadDnc();
}
