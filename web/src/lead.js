// One lead: why it waits (the server's sentence), its fields, its timeline of step calls and the
// inbox events seen for it, and the lead actions (stop, retry, skip to a step, move to another
// sender), which this server may not have.
import { get, post } from './api.js';
import { h, clear, put, badge, table, errorBox, when, num, unavailable } from './ui.js';

export function render(main, [name, id]) {
  const base = `/v1/campaigns/${encodeURIComponent(name)}/leads/${id}`;
  const box = h('div');
  const actionsOut = h('div', { id: 'lead-action-result' });
  main.append(
    h('nav', { 'aria-label': 'breadcrumb' }, h('ul', {},
      h('li', {}, h('a', { href: '/ui/campaigns', 'data-link': true, text: 'Campaigns' })),
      h('li', {}, h('a', { href: `/ui/campaigns/${encodeURIComponent(name)}`, 'data-link': true, text: name })),
      h('li', { text: `lead #${id}` }))),
    box);
  async function act(verb, body) {
    clear(actionsOut);
    try {
      const r = await post(`${base}/${verb}`, body);
      load();
      if (r && r.not_known_connected > 0) {
        actionsOut.append(h('p', { id: 'lead-note', class: 'muted', text: 'Moved to a message step with no acceptance seen: the platform lets only connections be messaged, so the message is refused unless the person is connected to the sender already.' }));
      }
    } catch (e) {
      actionsOut.append(e.missingEndpoint ? unavailable(`POST ${base.replace(/\/\d+$/, '/{id}')}/${verb}`) : errorBox(e));
    }
  }
  const callKinds = {
    in_flight: 'in flight', checking: 'checking whether it took effect', to_check: 'uncertain: to be checked',
    outcome_lost: 'outcome lost (its worker stopped)',
  };
  async function load() {
    try {
      const l = await get(base);
      put(box, 
        h('hgroup', {}, h('h2', { text: `Lead #${l.lead_id}` }), h('p', {}, badge(l.state), ' ', h('span', { class: 'wrap', text: l.profile_url }))),
        h('article', { id: 'why-waiting' }, h('strong', { text: 'Why: ' }), h('span', { text: l.waiting })),
        h('div', { class: 'actions' },
          h('button', { id: 'lead-stop', class: 'secondary', onclick: () => act('stop'), text: 'Stop this lead' }),
          h('button', { id: 'lead-retry', class: 'secondary outline', onclick: () => act('retry'), text: 'Retry' })),
        // skip --to STEP and move --account ACCOUNT (the server refuses a lead in a call, with why)
        h('form', { id: 'lead-skip', class: 'grid', onsubmit: (e) => { e.preventDefault(); act('skip', { to: e.target.elements.to.value.trim() }); } },
          h('input', { name: 'to', placeholder: 'step id', 'aria-label': 'Step to move to', required: true }),
          h('button', { type: 'submit', class: 'secondary outline', text: 'Skip to step' })),
        h('form', { id: 'lead-move', class: 'grid', onsubmit: (e) => { e.preventDefault(); act('move', { account: e.target.elements.account.value.trim() }); } },
          h('input', { name: 'account', placeholder: 'account id or label', 'aria-label': 'New sender', required: true }),
          h('button', { type: 'submit', class: 'secondary outline', text: 'Move to account' })),
        actionsOut,
        h('div', { class: 'grid' },
          h('section', {}, h('h3', { text: 'Where' }), h('table', { class: 'kv' }, h('tbody', {}, [
            ['Step', l.step || '—'], ['Variant', l.variant || '—'], ['Account', l.account_id], ['Failed tries at step', num(l.attempt)],
            // A calling lead's stored reason is its last wait's, from before the call: its call's
            // kind is said instead (the sentence above says it in full).
            l.state === 'calling' ? ['Call', callKinds[l.call] || l.call || '—'] : ['Reason', l.reason || '—'],
            ['Next run', when(l.next_run_at)], ['Updated', when(l.updated_at)],
            ['Finished', when(l.finished_at)], ['Definition version', num(l.version)],
          ].map(([k, v]) => h('tr', {}, h('th', { scope: 'row', text: k }), h('td', { class: 'wrap', text: v })))))),
          h('section', {}, h('h3', { text: 'Fields' }), h('pre', { text: JSON.stringify(l.fields, null, 2) }))),
        h('h3', { text: 'Timeline' }),
        l.timeline.length === 0 ? h('p', { class: 'muted', text: 'No step call yet.' })
          : table(['Started', 'Step', 'Call', 'Attempt', 'Variant', 'Outcome', 'Error', 'Credits', 'Finished'], l.timeline.map((a) => h('tr', {},
            h('td', { text: when(a.started_at) }), h('td', { text: a.step }), h('td', { text: a.call + (a.reconcile ? ' (reconcile)' : '') }),
            h('td', { text: a.attempt }), h('td', { text: a.variant || '—' }), h('td', {}, badge(a.outcome === 'in_flight' && l.call === 'outcome_lost' ? 'outcome lost' : a.outcome || 'in flight')),
            h('td', { class: 'wrap', text: a.error || '' }), h('td', { text: num(a.credits) }), h('td', { text: when(a.finished_at) }))), { id: 'timeline' }),
        h('h3', { text: 'Inbox events' }),
        l.events.length === 0 ? h('p', { class: 'muted', text: 'None.' })
          : table(['Received', 'Kind', 'Event'], l.events.map((e) => h('tr', {},
            h('td', { text: when(e.received_at) }), h('td', { text: e.kind }), h('td', { text: `#${e.event_id}` })))));
    } catch (e) {
      put(box, errorBox(e));
    }
  }
  load();
}
