// The app shell: loads the session's CSRF token, routes on the path under /ui/ (History API;
// the server answers every page path with this app when the session is valid, else redirects
// to the login), and runs one page at a time (each returns its cleanup: timers stop on leaving).
import { loadSession, logout } from './api.js';
import { clear, h, errorBox } from './ui.js';
import * as campaigns from './campaigns.js';
import * as campaign from './campaign.js';
import * as lead from './lead.js';
import * as accounts from './accounts.js';
import * as inbox from './inbox.js';
import * as budget from './budget.js';
import * as events from './events.js';

const routes = [
  [/^\/ui\/?$/, campaigns, 'campaigns'],
  [/^\/ui\/campaigns\/?$/, campaigns, 'campaigns'],
  [/^\/ui\/campaigns\/([^/]+)\/leads\/(\d+)\/?$/, lead, 'campaigns'],
  [/^\/ui\/campaigns\/([^/]+)\/?$/, campaign, 'campaigns'],
  [/^\/ui\/accounts\/?$/, accounts, 'accounts'],
  [/^\/ui\/inbox\/?$/, inbox, 'inbox'],
  [/^\/ui\/budget\/?$/, budget, 'budget'],
  [/^\/ui\/events\/?$/, events, 'events'],
];

const main = document.getElementById('page');
let cleanup = null;

function route() {
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  clear(main);
  const path = location.pathname;
  for (const [re, page, nav] of routes) {
    const m = path.match(re);
    if (!m) continue;
    for (const a of document.querySelectorAll('[data-nav]')) {
      a.toggleAttribute('aria-current', a.dataset.nav === nav);
    }
    const params = m.slice(1).map(decodeURIComponent);
    try {
      cleanup = page.render(main, params, new URLSearchParams(location.search)) || null;
    } catch (e) {
      main.append(errorBox(e));
    }
    return;
  }
  main.append(h('h2', { text: 'No such page' }), h('p', {}, h('a', { href: '/ui/', 'data-link': true, text: 'Campaigns' })));
}

export function navigate(href) {
  history.pushState(null, '', href);
  route();
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a[data-link]');
  if (!a || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', route);
document.getElementById('logout').addEventListener('click', () => logout());

loadSession().then(route, (e) => main.append(errorBox(e)));
