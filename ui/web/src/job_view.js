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
    // Every field stays in the hover title; the line says what a person
    // reads first: when, what, who is suspected, who saw it, why.
    const fields = (data) => Object.entries(data)
      .filter(([, v]) => v !== '' && v !== 0 && !(Array.isArray(v) && !v.length))
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`).join('\n');
    const kindName = (kind, prefix) => String(kind || '').replace(prefix, '').toLowerCase().replace(/_/g, ' ');
    const when = (ns) => (ns ? new Date(Number(ns) / 1e6).toLocaleTimeString() : '');
    const ranks = (list) => (list && list.length ? ` rank${list.length > 1 ? 's' : ''} ${list.join(', ')}` : '');
    const symptomLine = (d) => `${when(d.timestamp_ns)} ${kindName(d.kind, 'SYMPTOM_KIND_')}` +
      `${d.suspect_node ? ` on ${d.suspect_node}` : ''}${ranks(d.suspect_ranks)}` +
      `${d.reporter_node ? `, seen by ${d.reporter_node}` : ''}${d.detail ? `: ${d.detail}` : ''}`;
    const faultLine = (d) => `${when(d.localised_ns)} ${kindName(d.kind, 'FAULT_KIND_')}` +
      `${d.node ? ` on ${d.node}` : ''}${ranks(d.ranks)}${d.localised_by ? `, localised by ${d.localised_by}` : ''}` +
      `${d.evidence && d.evidence.length ? `: ${[].concat(d.evidence).join('; ')}` : ''}`;
    this.stream = openStream(`/api/jobs/${encodeURIComponent(jobId)}/faults`, {
      symptom: (data) => symptoms.prepend(el('li', { 'data-test': 'symptom', title: fields(data) }, symptomLine(data))),
      fault: (data) => faults.prepend(el('li', { 'data-test': 'fault', title: fields(data) }, faultLine(data))),
      error: (data) => this.log.add(false, `job ${jobId}: ${data.message}`),
    }, (reason) => this.log.add(false, `job ${jobId}: ${reason}`));
  }

  close() {
    if (this.stream) this.stream.close();
    this.stream = null;
    this.root.hidden = true;
  }
}
