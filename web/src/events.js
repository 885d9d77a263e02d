// Events: the recent inbox events (by type), and the quarantined ones (events the intake could
// not apply), whose endpoint is newer than some servers.
import { get } from './api.js';
import { h, clear, put, table, errorBox, when, unavailable } from './ui.js';

const kinds = ['accepted_invitation', 'message', 'disconnection', 'other'];

function rows(list) {
  return list.map((e) => h('tr', {},
    h('td', { text: `#${e.event_id}` }), h('td', { text: when(e.received_at) }), h('td', { text: e.type || e.kind || '' }),
    h('td', { class: 'mono', text: e.account_id || '' }), h('td', { class: 'wrap', text: e.profile_url || '' }),
    h('td', {}, h('details', {}, h('summary', { text: e.reason || 'payload' }), h('pre', { text: JSON.stringify(e.payload, null, 2) })))));
}

// A quarantined event: verified but unreadable, kept raw (GET /v1/events/quarantine).
function decoded(b64) {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(b64 || ''), (c) => c.charCodeAt(0)));
  } catch {
    return b64 || '';
  }
}

function quarantineRows(list) {
  return list.map((e) => h('tr', {},
    h('td', { text: `#${e.quarantine_id ?? e.event_id ?? ''}` }), h('td', { text: when(e.received_at) }),
    h('td', { text: e.channel || e.type || '' }), h('td', { class: 'mono', text: e.account_id || '' }),
    h('td', { class: 'wrap', text: e.reason || '' }),
    h('td', {}, h('details', {}, h('summary', { text: e.body_bytes !== undefined ? `${e.body_bytes} bytes` : 'body' }),
      h('pre', { text: e.body_base64 !== undefined ? decoded(e.body_base64) : JSON.stringify(e.payload ?? e.body ?? null, null, 2) })))));
}

export function render(main) {
  const type = h('select', { id: 'event-type', 'aria-label': 'Type' }, h('option', { value: '', text: 'all types' }), kinds.map((k) => h('option', { value: k, text: k })));
  const list = h('div', { id: 'events' });
  const quarantine = h('div', { id: 'quarantine' });
  main.append(h('h2', { text: 'Events' }), h('div', { class: 'narrow' }, type), list, h('h3', { text: 'Quarantined' }), quarantine);
  async function load() {
    try {
      const r = await get(`/v1/events?limit=200${type.value ? `&type=${type.value}` : ''}`);
      put(list, r.events.length ? table(['Event', 'Received', 'Type', 'Account', 'Profile', 'Payload'], rows(r.events))
        : h('p', { class: 'muted', text: 'No events.' }));
    } catch (e) {
      put(list, errorBox(e));
    }
  }
  async function loadQuarantine() {
    try {
      const r = await get('/v1/events/quarantine');
      const items = r.quarantined || r.events || r.items || [];
      put(quarantine, items.length ? table(['Quarantined', 'Received', 'Channel', 'Account', 'Why', 'Body'], quarantineRows(items), { id: 'quarantine-table' })
        : h('p', { class: 'muted', text: 'None quarantined.' }));
    } catch (e) {
      put(quarantine, e.missingEndpoint ? unavailable('GET /v1/events/quarantine') : errorBox(e));
    }
  }
  type.addEventListener('change', load);
  load();
  loadQuarantine();
  const timer = setInterval(load, 5000);
  return () => clearInterval(timer);
}
