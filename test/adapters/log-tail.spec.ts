import { expect } from 'chai';
import {
  type Checkpoint,
  compareCheckpoints,
  makeCheckpoint,
  type RecordedEvent,
  START,
} from '../../application/ports/event-store.port.js';
import { LogTail } from '../../infrastructure/event-store/log-tail.js';

/**
 * The log tail (docs/event-store.md#the-log-tail) over a log kept in an array, read the way the table is read: the
 * events after a checkpoint, in order. Every reader must get every event after its cursor, in order, from the tail
 * or, when the tail no longer holds them all, from the table (the tail answers null).
 */
describe('the log tail', () => {
  const log: RecordedEvent[] = [];
  const append = (n: number) => {
    for (let i = 0; i < n; i++) {
      const k = log.length + 1;
      log.push({ type: `E${k}`, data: {}, checkpoint: makeCheckpoint(BigInt(k), 0n) } as unknown as RecordedEvent);
    }
  };
  const readTable = async (after: Checkpoint, maxCount: number) =>
    log.filter((e) => compareCheckpoints(e.checkpoint, after) > 0).slice(0, maxCount);
  const head = async () => log.at(-1)?.checkpoint ?? START;
  const types = (es: readonly RecordedEvent[] | null) => es?.map((e) => e.type) ?? null;

  beforeEach(() => {
    log.length = 0;
  });

  it('answers what was appended after the cursor from memory', async () => {
    append(1);
    const tail = new LogTail(readTable, head, 10);
    expect(await tail.read(log[0]!.checkpoint, 100, undefined)).to.deep.equal([]);
    append(3);
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal(['E2', 'E3', 'E4']);
    expect(types(await tail.read(log[1]!.checkpoint, 1, { eventTypes: ['E4'] }))).to.deep.equal(['E4']);
  });

  it('sends a reader before its start to the table', async () => {
    append(2);
    const tail = new LogTail(readTable, head, 10);
    expect(await tail.read(log[0]!.checkpoint, 100, undefined)).to.equal(null);
    expect(await tail.read(START, 100, undefined)).to.equal(null);
  });

  it('sends a reader to the table when the refresh it waited for dropped events after its cursor', async () => {
    append(1);
    const tail = new LogTail(readTable, head, 3);
    expect(await tail.read(log[0]!.checkpoint, 100, undefined)).to.deep.equal([]);
    // a burst: more new events than the tail keeps, while this reader was still at E2
    append(5);
    const cursor = log[1]!.checkpoint; // E2: inside the tail when the read began, dropped by its refresh
    const got = await tail.read(cursor, 100, undefined);
    expect(got).to.equal(null);
    // a reader at the tail's new start still reads from memory
    expect(types(await tail.read(log[2]!.checkpoint, 100, undefined))).to.deep.equal(['E4', 'E5', 'E6']);
  });
});
