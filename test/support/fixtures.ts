import { randomUUID } from 'node:crypto';
import type { ClockPort } from '../../application/ports/clock.port.js';
import type { EventMetadata, NewEvent } from '../../application/ports/event-store.port.js';

/** A clock that only moves when told to. */
export class TestClock implements ClockPort {
  constructor(private t = new Date('2026-01-01T00:00:00.000Z')) {}
  now(): Date {
    return new Date(this.t);
  }
  advance(ms: number): void {
    this.t = new Date(this.t.getTime() + ms);
  }
  set(iso: string): void {
    this.t = new Date(iso);
  }
}

export const meta = (accountId = 'acc_test'): EventMetadata => ({
  accountId,
  correlationId: randomUUID(),
  causationId: null,
  requestId: null,
  actor: 'test',
});

export const ev = (type: string, data: Record<string, unknown> = {}, id = randomUUID()): NewEvent => ({ id, type, data, metadata: meta() });

/** Read models that are always caught up: for application tests that answer from no read model. */
export const noReadModels = {
  waitFor: async () => undefined,
  waitForRow: <T>(find: () => Promise<T | null>) => find(),
};

/** mulberry32: a small seeded generator of numbers in [0, 1), so a failing random case can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
