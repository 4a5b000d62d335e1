import type { LegListener } from '../../application/calls/voice-engine.port.js';

/**
 * A leg's listener calls, delivered in order, one at a time, never inside the leg's own methods (a session calling
 * the leg must not be re-entered). Web-call and SIP legs share it (docs/calls.md#the-media-pipeline).
 */
export class ListenerQueue {
  private readonly queue: ((l: LegListener) => void)[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly listener: LegListener,
    private readonly onError: (err: unknown) => void,
  ) {}

  send(call: (l: LegListener) => void): void {
    if (this.closed) return;
    this.queue.push(call);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        try {
          next(this.listener);
        } catch (err) {
          this.onError(err);
        }
      }
    });
  }

  /** the last call: nothing follows it */
  last(call: (l: LegListener) => void): void {
    this.send(call);
    this.closed = true;
  }
}
