import type { LegListener } from '../../../application/calls/voice-engine.port.js';

/**
 * One leg's listener calls, in order and one at a time (the port's rule): each call is queued and delivered
 * after the engine method that caused it has returned, as a provider's callbacks would be; a call made while
 * the listener runs waits for it to return. Nothing is delivered after `ended` or `failed`.
 */
export class LegEvents {
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
