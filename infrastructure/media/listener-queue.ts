import type { LegListener } from '../../application/calls/voice-engine.port.js';

/**
 * A leg's listener calls, in order and one at a time (the port's rule): each call is queued and delivered after the
 * leg method that caused it has returned, as a provider's callbacks would be (a session calling the leg is never
 * re-entered); a call made while the listener runs waits for it to return. Nothing is delivered after the last call
 * (`ended` or `failed`). Web-call, SIP and sandbox legs share it (docs/calls.md#the-media-pipeline).
 */
export class ListenerQueue {
  private readonly queue: ((l: LegListener) => void)[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly listener: LegListener,
    private readonly onError: (err: unknown) => void,
  ) {}

  send(call: (l: LegListener) => void): void {
    if (this.closed) return;
    this.queue.push(call);
    this.draining ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        for (let next = this.queue.shift(); next; next = this.queue.shift()) {
          try {
            next(this.listener);
          } catch (err) {
            this.onError(err);
          }
        }
        this.draining = null;
        resolve();
      }),
    );
  }

  /** Sends the last call: nothing follows it. */
  last(call: (l: LegListener) => void): void {
    this.send(call);
    this.closed = true;
  }

  /** Resolves once every call queued so far has been delivered. */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }
}
