// An MPI job: its nodes, then its symptoms and faults as they arrive.
import { openStream } from './api.js';
import { el, clear } from './dom.js';

export class JobView {
  constructor(root, log) {
    this.root = root;
    this.log = log;
    this.stream = null;
  }

  open(job, jobId) {
    this.close();
    this.root.hidden = false;
    const nodes = this.root.querySelector('#job-nodes');
    const symptoms = this.root.querySelector('#symptom-list');
    const faults = this.root.querySelector('#fault-list');
    [nodes, symptoms, faults].forEach(clear);
    this.root.querySelector('#job-title').textContent = `job ${jobId}`;
    for (const node of (job && job.nodes) || []) {
      nodes.append(el('li', {}, `${node.node} (${node.endpoint}) ranks ${(node.ranks || []).join(', ')}`));
    }
    const line = (data) => Object.entries(data)
      .filter(([, v]) => v !== '' && v !== 0 && !(Array.isArray(v) && !v.length))
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`).join(' ');
    this.stream = openStream(`/api/jobs/${encodeURIComponent(jobId)}/faults`, {
      symptom: (data) => symptoms.prepend(el('li', { 'data-test': 'symptom' }, line(data))),
      fault: (data) => faults.prepend(el('li', { 'data-test': 'fault' }, line(data))),
      error: (data) => this.log.add(false, `job ${jobId}: ${data.message}`),
    }, (reason) => this.log.add(false, `job ${jobId}: ${reason}`));
  }

  close() {
    if (this.stream) this.stream.close();
    this.stream = null;
    this.root.hidden = true;
  }
}
