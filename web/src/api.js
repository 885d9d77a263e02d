// The admin REST API (api/openapi.yaml) as the dashboard calls it: the session cookie goes along
// by itself; a change also sends the session's CSRF token (from /ui/session) in X-CSRF-Token.
let csrf = null;

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
  // 404 "no such path": the server has no such endpoint (an older or smaller build).
  get missingEndpoint() {
    return this.status === 404 && /^no such path/.test(this.message);
  }
}

function toLogin() {
  location.assign('/ui/login?next=' + encodeURIComponent(location.pathname + location.search));
}

export async function loadSession() {
  const res = await fetch('/ui/session', { credentials: 'same-origin' });
  if (res.status === 401) {
    toLogin();
    throw new ApiError(401, 'not logged in');
  }
  csrf = (await res.json()).csrf;
}

export async function call(method, path, body) {
  const headers = {};
  if (method !== 'GET') {
    headers['X-CSRF-Token'] = csrf;
  }
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) {
    toLogin();
    throw new ApiError(401, 'the session ended: log in again');
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const message = data && data.error && data.error.message ? data.error.message : `HTTP ${res.status}`;
    throw new ApiError(res.status, message, data);
  }
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);

export async function logout() {
  await call('POST', '/ui/logout');
  location.assign('/ui/login');
}
