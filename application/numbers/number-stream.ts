import { phoneNumberDecider, type PhoneNumberCommand, type PhoneNumberEvent, type PhoneNumberState } from '../../domain/phone-number/phone-number.decider.js';
import { streams } from '../../domain/shared/streams.js';
import type { EventMetadata, EventStorePort, RecordedEvent } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import { handleCommand, loadAggregate } from '../shared/handle-command.js';

/** Load, decide and append on one number's stream (STYLE.md R6), plus reading it back. */
export class NumberStream {
  constructor(private readonly store: EventStorePort, private readonly ids: IdsPort) {}

  run(cmd: PhoneNumberCommand, metadata: EventMetadata) {
    return handleCommand({ store: this.store, ids: this.ids }, phoneNumberDecider, streams.phoneNumber(cmd.data.numberId), cmd, metadata);
  }

  async load(numberId: string): Promise<{ state: PhoneNumberState; events: RecordedEvent<PhoneNumberEvent>[] }> {
    const { state, events } = await loadAggregate(this.store, phoneNumberDecider, streams.phoneNumber(numberId));
    return { state, events: events as RecordedEvent<PhoneNumberEvent>[] };
  }

  /**
   * Polls the stream until `done` holds (the process manager moves provisioning and release along in the
   * background). Waits by sleeping, not by reading a clock, so it also ends under a stopped test clock.
   */
  async until(numberId: string, done: (s: PhoneNumberState, events: RecordedEvent<PhoneNumberEvent>[]) => boolean, timeoutMs: number) {
    let waited = 0;
    let pause = 5;
    for (;;) {
      const r = await this.load(numberId);
      if (done(r.state, r.events)) return { ...r, timedOut: false };
      if (waited >= timeoutMs) return { ...r, timedOut: true };
      await new Promise((resolve) => setTimeout(resolve, pause));
      waited += pause;
      pause = Math.min(pause * 2, 25);
    }
  }
}

/** The carrier idempotency key of a provisioning attempt: a retried attempt never buys a second number. */
export const carrierKey = (s: { numberId: string; attempt: number }) => `${s.numberId}:${s.attempt}`;
