// Small DOM helpers. Text always goes in as text (never as HTML), so data from the API cannot
// inject markup; handlers are attached as properties, which the CSP allows (no inline scripts).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// Replaces el's children with `children` (arrays flattened; null, undefined and false left out).
export function put(el, ...children) {
  clear(el);
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const num = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US'));
export const pct = (a, b) => (b > 0 ? `${((100 * a) / b).toFixed(1)} %` : '—');

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}

export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86400 * 2) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

export function badge(state) {
  return h('span', { class: `badge state-${String(state).replace(/[^a-z_]/gi, '')}`, text: state });
}

export function progress(value, max, label) {
  return h('div', { class: 'bar', title: label || '' },
    h('progress', { value: Math.max(0, value), max: Math.max(1, max) }),
    h('small', { text: label || pct(value, max) }));
}

// A page section whose endpoint may not exist on this server yet: shows why, not an error.
export function unavailable(endpoint) {
  return h('p', { class: 'unavailable', dataset: { endpoint } },
    'Not available on this server: ', h('code', { text: endpoint }), ' is not implemented by this build.');
}

export function errorBox(e) {
  return h('p', { class: 'error', role: 'alert', text: `Error: ${e.message}` });
}

export function table(headers, rows, attrs = {}) {
  return h('figure', { class: 'table-wrap' },
    h('table', attrs,
      h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col', text: x })))),
      h('tbody', {}, rows)));
}

// A labelled number for summary strips ("Invited 42").
export function stat(label, value, attrs = {}) {
  return h('div', { class: 'stat', ...attrs }, h('span', { class: 'stat-value', text: value }), h('span', { class: 'stat-label', text: label }));
}
