/** Entry of the web UI: each page's HTML names itself (`data-page`), and this starts its script. */
import { api } from './http';
import { startInbox } from './inbox';
import { startLogin } from './login';
import { startRun } from './run';
import { startRuns } from './runs';

const { page, user, run, next } = document.body.dataset;

document.getElementById('logout')?.addEventListener('click', () => {
  void api('POST', '/logout').finally(() => location.assign('/login'));
});

if (page === 'inbox') startInbox(user);
else if (page === 'runs') startRuns();
else if (page === 'run' && run) startRun(run);
else if (page === 'login') startLogin(next ?? '/');
