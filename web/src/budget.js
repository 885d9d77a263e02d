// Budget: per campaign the budget, spent, held and left, the caps per day and account, the
// spend by day (chart), and the API key's balance with the drift between it and the ledger.
import { get } from './api.js';
import { h, clear, put, num, table, errorBox, progress, badge, when } from './ui.js';
import { lineChart } from './chart.js';

export function render(main) {
  const key = h('div', { id: 'key' });
  const list = h('div', { id: 'budgets' });
  const chartBox = h('div', { class: 'chart', id: 'spend-chart' });
  const pick = h('select', { id: 'spend-campaign', 'aria-label': 'Campaign' });
  main.append(h('h2', { text: 'Budget' }), key, list, h('h3', { text: 'Spend by day' }), h('div', { class: 'narrow' }, pick), chartBox);
  let chart = null;

  async function spend(name) {
    if (!name) return;
    try {
      const r = await get(`/v1/budget?campaign=${encodeURIComponent(name)}`);
      const days = (r.campaigns[0].spend || {}).by_day || [];
      if (chart) chart.destroy();
      clear(chartBox);
      if (days.length === 0) {
        chartBox.append(h('p', { class: 'muted', text: 'Nothing spent yet.' }));
        chart = null;
        return;
      }
      chart = lineChart(chartBox, ['posted credits', 'calls'], { bars: true });
      chart.set(days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000), [days.map((d) => d.posted), days.map((d) => d.calls)]);
    } catch (e) {
      put(chartBox, errorBox(e));
    }
  }

  (async () => {
    try {
      const r = await get('/v1/budget');
      const k = r.key || {};
      put(key, h('div', { class: 'stats' },
        h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: num(k.balance) }), h('span', { class: 'stat-label', text: 'API key balance' })),
        h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: num(r.ledger_spent_total) }), h('span', { class: 'stat-label', text: 'spent (ledger, all campaigns)' })),
        h('div', { class: 'stat', id: 'drift' }, h('span', { class: 'stat-value', text: num(k.drift) }), h('span', { class: 'stat-label', text: 'drift (API vs ledger + monitoring)' })),
        h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: k.polls ? num(k.polls.reads) : '—' }), h('span', { class: 'stat-label', text: `balance reads${k.polls ? `, last ${when(k.polls.last_at)}` : ''}` }))),
      k.error ? h('p', { class: 'error', text: k.error }) : null,
      r.ledger_problems.length ? h('p', { class: 'error', text: `ledger check: ${r.ledger_problems.join('; ')}` }) : null);
      put(list, table(['Campaign', 'State', 'Spent + held / budget', 'Available', 'Today (cap per day)', 'Cap per account', 'Overrun', 'Shortfall'],
        r.campaigns.map((c) => h('tr', {},
          h('td', { text: c.campaign }), h('td', {}, badge(c.state)),
          h('td', {}, progress(c.spent + c.reserved, c.budget || 1, `${num(c.spent)} + ${num(c.reserved)} / ${num(c.budget)}`)),
          h('td', { text: num(c.available) }),
          h('td', { text: c.today ? `${num(c.today.spent + c.today.reserved)} / ${num(c.today.per_day)}` : 'no cap' }),
          h('td', { text: num(c.per_account) }), h('td', { text: num(c.overrun) }), h('td', { text: num(c.shortfall) })))));
      put(pick, r.campaigns.map((c) => h('option', { value: c.campaign, text: c.campaign })));
      pick.addEventListener('change', () => spend(pick.value));
      spend(pick.value);
    } catch (e) {
      put(list, errorBox(e));
    }
  })();
  return () => { if (chart) chart.destroy(); };
}
