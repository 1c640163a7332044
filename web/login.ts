/** The login page: the token goes in a JSON body, the server answers with an HttpOnly cookie. */
import { appRoot, h } from './dom';
import { ApiError, api } from './http';

/** Starts the login page; `next` is the page to return to (a same-site path). */
export function startLogin(next: string): void {
  const root = appRoot();
  const input = h('input', {
    id: 'token',
    type: 'password',
    required: true,
    autocomplete: 'current-password',
  });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const form = h(
    'form',
    { class: 'picker' },
    h('label', { for: 'token' }, 'API token'),
    input,
    h('button', { type: 'submit' }, 'Log in'),
    problem,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      try {
        await api('POST', '/login', { token: input.value }, { loginOn401: false });
        location.assign(next.startsWith('/') && !next.startsWith('//') ? next : '/');
      } catch (err) {
        problem.textContent =
          err instanceof ApiError && err.status === 401 ? 'Wrong token.' : (err as Error).message;
        problem.hidden = false;
        input.focus();
      }
    })();
  });
  root.append(form);
  input.focus();
}
