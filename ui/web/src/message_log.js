// Every acknowledgement and refusal, newest first.
import { el } from './dom.js';

export class MessageLog {
  constructor(list) { this.list = list; }

  add(ok, text) {
    const stamp = new Date().toLocaleTimeString();
    const item = el('li', { class: ok ? 'ok' : 'refused', 'data-ok': ok ? 'true' : 'false' },
      el('time', {}, stamp), ' ', text);
    this.list.prepend(item);
    while (this.list.children.length > 200) this.list.lastChild.remove();
  }
}
