// The login form: posts the admin token as JSON; the server answers with an HttpOnly session
// cookie, then the app opens (at the page asked for before the redirect, if it is one of ours).
const form = document.getElementById('login-form');
const errorBox = document.getElementById('login-error');

function nextPage() {
  const next = new URLSearchParams(location.search).get('next') || '';
  // Only our own paths: never "//host" or another origin.
  return /^\/ui\/[^/\\]/.test(next) || next === '/ui/' ? next : '/ui/';
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  errorBox.hidden = true;
  const button = document.getElementById('login-submit');
  button.setAttribute('aria-busy', 'true');
  try {
    const res = await fetch('/ui/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: document.getElementById('token').value }),
      credentials: 'same-origin',
    });
    if (res.ok) {
      location.assign(nextPage());
      return;
    }
    let message = `login failed (HTTP ${res.status})`;
    try {
      message = (await res.json()).error.message;
    } catch { /* not JSON: keep the status line */ }
    errorBox.textContent = message === 'wrong token' ? 'Wrong token.' : message;
    errorBox.hidden = false;
  } catch (e) {
    errorBox.textContent = `The server did not answer: ${e.message}`;
    errorBox.hidden = false;
  } finally {
    button.removeAttribute('aria-busy');
  }
});
