// Inbox: replies by campaign and account with the conversation, answering a reply, marking it
// "not interested" (the person goes on the do-not-contact list), and the do-not-contact list.
// A reply is answered through POST /v1/inbox/{id}/reply: serve sends it once, within the
// account's quotas and the campaign's budget; the page polls GET /v1/manual-replies/{id} until
// it is sent (or says why not). Both endpoints (/v1/inbox, /v1/dnc) are newer than some servers:
// a 404 "no such path" shows that plainly instead of an error.
import { get, post, call } from './api.js';
import { h, clear, put, table, errorBox, when, unavailable, badge } from './ui.js';

const finalStates = new Set(['sent', 'failed', 'refused']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function manualLine(m) {
  return h('li', { class: 'manual', dataset: { manualReply: m.id } }, badge(m.state), ' ',
    h('span', { text: m.text }), m.reason ? h('small', { class: 'muted block', text: m.reason }) : null);
}

// When a message was written, as the API gave it, when the inbox says it was stored late
// (written_late: the catch-up sweep found it after a gap in intake); empty otherwise.
function writtenBefore(m) {
  return m.written_late && m.written_at ? `written ${when(m.written_at)}` : '';
}

// One reply: a summary line; opened, its conversation, our manual replies and the two actions.
function replyItem(r, onDnc) {
  const body = h('div', { class: 'reply-body' }, h('p', { class: 'muted', text: 'Loading the conversation…' }));
  const status = h('div', { class: 'reply-status', role: 'status' });
  const text = h('textarea', { class: 'reply-text', rows: 3, placeholder: 'Your answer', 'aria-label': 'Your answer', maxlength: 8000 });
  const send = h('button', { type: 'submit', class: 'reply-send', text: 'Send reply' });
  const notInterested = h('button', { type: 'button', class: 'secondary outline not-interested', text: 'Not interested' });
  const form = h('form', { class: 'reply-form' }, text, h('div', { class: 'actions' }, send, notInterested), status);
  const details = h('details', { class: 'reply', dataset: { reply: r.id } },
    h('summary', {}, h('strong', { text: r.profile_url || r.sender_name || `reply ${r.id}` }), ' ',
      r.mark ? badge('not interested') : null, r.last_reply_state ? badge(`answer ${r.last_reply_state}`) : null, ' ',
      h('small', { class: 'muted', text: [r.campaign, r.account_id, when(r.received_at), writtenBefore(r)].filter(Boolean).join(' · ') }),
      h('span', { class: 'block', text: `“${r.text || ''}”` })),
    body, form);
  async function load() {
    try {
      const d = await get(`/v1/inbox/${r.id}`);
      const messages = d.conversation || [];
      put(body,
        messages.length ? h('ol', { class: 'conversation' }, messages.map((m) => h('li', { class: m.direction === 'in' ? 'in' : 'out' },
          h('small', { class: 'muted block', text: [when(m.at), writtenBefore(m), m.step === 'manual_reply' ? 'manual reply' : ''].filter(Boolean).join(' · ') }),
          h('span', { text: m.text || '' })))) : h('p', { class: 'muted', text: r.text || 'No messages.' }),
        (d.manual_replies || []).length ? h('ul', { class: 'manual-replies' }, d.manual_replies.map(manualLine)) : null);
      if (!d.reply.campaign) {
        put(status, h('small', { class: 'muted', text: 'From no campaign lead: the inbox answers campaign conversations only.' }));
        send.disabled = true;
      }
    } catch (e) {
      put(body, errorBox(e));
    }
  }
  details.addEventListener('toggle', () => { if (details.open) load(); });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = text.value;
    if (!answer.trim()) {
      put(status, h('p', { class: 'error', text: 'Write an answer first.' }));
      return;
    }
    send.disabled = true;
    try {
      let res = await post(`/v1/inbox/${r.id}/reply`, { text: answer });
      let m = res.manual_reply;
      put(status, badge(m.state), ` ${res.duplicate ? 'the same answer was asked for before' : 'queued: serve sends it'}`);
      for (let i = 0; i < 60 && !finalStates.has(m.state); i += 1) {
        await sleep(500);
        m = (await get(`/v1/manual-replies/${m.id}`)).manual_reply;
        put(status, badge(m.state), m.reason ? ` ${m.reason}` : '');
      }
      put(status, badge(m.state), ` ${m.state === 'sent' ? 'sent' : m.reason || 'not sent yet: serve sends it when it can'}`);
      if (m.state === 'sent') text.value = '';
      load();
    } catch (err) {
      put(status, errorBox(err));
    } finally {
      send.disabled = false;
    }
  });
  notInterested.addEventListener('click', async () => {
    if (!window.confirm(`Mark this reply "not interested"? ${r.profile_url || 'The person'} goes on the do-not-contact list and their live leads stop.`)) return;
    try {
      const res = await post(`/v1/inbox/${r.id}/mark`, { mark: 'not_interested' });
      put(status, h('p', { class: 'marked', text: `${res.added ? 'Added to' : 'Already on'} the do-not-contact list; ${res.stopped_leads} live leads stopped.` }));
      onDnc();
    } catch (err) {
      put(status, errorBox(err));
    }
  });
  return details;
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
      const items = r.replies || [];
      put(inbox, items.length ? h('div', {}, items.map((x) => replyItem(x, loadDnc))) : h('p', { class: 'muted', text: 'No replies.' }));
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
        (r.in_flight_leads ? `, ${r.in_flight_leads} in a call stopped by their worker` : '') +
        (r.live_leads_without_company ? `. ${r.live_leads_without_company} live leads have no company field (leads from a search carry none): a company entry cannot match them` : '') }));
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
