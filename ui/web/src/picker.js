// The sessions and jobs this user may see, refreshed every few seconds;
// a click puts the choice in the URL's hash (#session=3, #job=J).
import { getJson } from './api.js';
import { el, clear } from './dom.js';

export class Picker {
  constructor(sessionList, jobList, log) {
    this.sessionList = sessionList;
    this.jobList = jobList;
    this.log = log;
    this.sessions = [];
    this.jobs = [];
    this.lastError = '';
  }

  async refresh() {
    try {
      const [{ sessions = [] }, { jobs = [] }] = await Promise.all([getJson('/api/sessions'), getJson('/api/jobs')]);
      this.sessions = sessions;
      this.jobs = jobs;
      this.lastError = '';
    } catch (error) {
      if (error.message !== this.lastError) this.log.add(false, `sessions: ${error.message}`);
      this.lastError = error.message;
    }
    this.render();
  }

  session(id) { return this.sessions.find((s) => s.id === id) || null; }
  job(id) { return this.jobs.find((j) => j.job_id === id) || null; }

  render() {
    const chosen = location.hash;
    clear(this.sessionList);
    this.sessionList.dataset.count = this.sessions.length;
    for (const s of [...this.sessions].sort((a, b) => b.id - a.id)) {
      const item = el('li', { 'data-session-id': s.id, class: `#session=${s.id}` === chosen ? 'chosen' : '' },
        el('a', { href: `#session=${s.id}` }, `${s.id} · ${basename(s.program)}`),
        el('span', { class: s.live ? 'live' : 'recorded' }, s.live ? ' live' : ' recorded'),
        ` · pid ${s.pid} · ${s.tasks} tasks`);
      this.sessionList.append(item);
    }
    if (!this.sessions.length) this.sessionList.append(el('li', { class: 'hint' }, 'no sessions'));
    clear(this.jobList);
    this.jobList.dataset.count = this.jobs.length;
    for (const j of this.jobs) {
      this.jobList.append(el('li', { 'data-job-id': j.job_id, class: `#job=${j.job_id}` === chosen ? 'chosen' : '' },
        el('a', { href: `#job=${encodeURIComponent(j.job_id)}` }, j.job_id), ` · ${j.size || 0} ranks`));
    }
    if (!this.jobs.length) this.jobList.append(el('li', { class: 'hint' }, 'no MPI jobs'));
  }
}

function basename(path) { return String(path || '?').split('/').pop(); }
