// The page's entry point (bundled by esbuild into /app.js and /app.css):
// the picker, the session or job the URL's hash names, and the node.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { getJson, openStream } from './api.js';
import { MessageLog } from './message_log.js';
import { Picker } from './picker.js';
import { SessionView } from './session_view.js';
import { JobView } from './job_view.js';
import { Controls } from './controls.js';
import { NodeView } from './node_view.js';

const log = new MessageLog(document.getElementById('message-log'));
const picker = new Picker(document.getElementById('session-list'), document.getElementById('job-list'), log);
const sessionView = new SessionView(log);
const jobView = new JobView(document.getElementById('job'), log);
const nodeView = new NodeView(document.getElementById('node'));
new Controls(document.getElementById('controls'), log, {
  session: () => sessionView.id,
  selected: () => sessionView.selected,
  onStatus: (status) => { sessionView.statusBar.showStatus(status); sessionView.onStatus(status); },
});

async function showWho() {
  try {
    const who = await getJson('/api/whoami');
    const line = document.getElementById('whoami');
    line.textContent = `${who.user} (uid ${who.uid}${who.admin ? ', admin' : ''}) on ${who.node}`;
    line.dataset.uid = who.uid;
  } catch (error) {
    log.add(false, `whoami: ${error.message}`);
  }
}

// #session=ID or #job=ID: the choice survives a reload and can be shared
// with the same user (the server decides what the token's user may see).
async function follow() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const session = hash.get('session'), job = hash.get('job');
  if (session !== null) {
    const id = Number(session);
    if (!Number.isSafeInteger(id) || id < 0) { log.add(false, `not a session id: ${session}`); return; }
    jobView.close();
    document.getElementById('session').hidden = false;
    if (!picker.sessions.length) await picker.refresh();
    const known = picker.session(id);
    nodeView.setPid(known ? known.pid : null);
    sessionView.open(id, known);
  } else if (job !== null) {
    sessionView.close();
    document.getElementById('session').hidden = true;
    if (!picker.jobs.length) await picker.refresh();
    jobView.open(picker.job(job), job);
  }
  picker.render();
}

window.addEventListener('hashchange', follow);
showWho();
picker.refresh().then(follow);
setInterval(() => picker.refresh(), 3000);
openStream('/api/node', {
  telemetry: (sample) => nodeView.onTelemetry(sample),
  apps: (apps) => nodeView.onApps(apps),
}, (reason) => log.add(false, `node: ${reason}`));
