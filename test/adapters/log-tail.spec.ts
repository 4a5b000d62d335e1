import { expect } from 'chai';
import {
  type Checkpoint,
  compareCheckpoints,
  type EventFilter,
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
  const readTable = async (after: Checkpoint, maxCount: number, o: { filter?: EventFilter; upTo?: Checkpoint } = {}) =>
    log
      .filter((e) => compareCheckpoints(e.checkpoint, after) > 0 && (!o.upTo || compareCheckpoints(e.checkpoint, o.upTo) <= 0))
      .filter((e) => !o.filter || ('eventTypes' in o.filter && o.filter.eventTypes.includes(e.type)))
      .slice(0, maxCount);
  const head = async () => log.at(-1)?.checkpoint ?? START;
  const types = (r: { events: readonly RecordedEvent[] } | null) => r?.events.map((e) => e.type) ?? null;
  let tableReads = 0;
  const counted = async (after: Checkpoint, maxCount: number, o?: { filter?: EventFilter; upTo?: Checkpoint }) => {
    tableReads++;
    return readTable(after, maxCount, o);
  };

  beforeEach(() => {
    log.length = 0;
  });

  it('answers what was appended after the cursor from memory', async () => {
    append(1);
    const tail = new LogTail(readTable, head, 10);
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal([]);
    append(3);
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal(['E2', 'E3', 'E4']);
    expect(types(await tail.read(log[1]!.checkpoint, 1, { eventTypes: ['E4'] }))).to.deep.equal(['E4']);
  });

  it('says how far it looked: its end when fewer than asked matched, else the last event answered', async () => {
    append(1);
    const tail = new LogTail(readTable, head, 10);
    await tail.read(log[0]!.checkpoint, 100, undefined);
    append(4);
    const none = await tail.read(log[0]!.checkpoint, 100, { eventTypes: ['E9'] });
    expect(none).to.deep.equal({ events: [], through: log[4]!.checkpoint });
    const some = await tail.read(log[0]!.checkpoint, 100, { eventTypes: ['E3'] });
    expect(types(some)).to.deep.equal(['E3']);
    expect(some?.through).to.equal(log[4]!.checkpoint);
    const capped = await tail.read(log[0]!.checkpoint, 2, undefined);
    expect(capped?.through).to.equal(log[2]!.checkpoint);
  });

  it('as the only writer, reads the table only after an append it heard of, or once the last read is old', async () => {
    let clock = 0;
    tableReads = 0;
    append(1);
    const tail = new LogTail(counted, head, 10, { stalestMs: 1000, now: () => clock, soleWriter: true });
    await tail.read(log[0]!.checkpoint, 100, undefined);
    const first = tableReads;
    append(2);
    // not heard of: nothing read, nothing new answered
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal([]);
    expect(tableReads).to.equal(first);
    tail.heard();
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal(['E2', 'E3']);
    expect(tableReads).to.equal(first + 1);
    await tail.read(log[0]!.checkpoint, 100, undefined);
    expect(tableReads).to.equal(first + 1);
    // a write it did not hear of is found once the last read is older than stalestMs
    append(1);
    clock += 1000;
    expect(types(await tail.read(log[2]!.checkpoint, 100, undefined))).to.deep.equal(['E4']);
  });

  it("as the only writer in one session, takes an append's events handed over when they continue it with no gap, and reads nothing for them", async () => {
    // positions are the log's order in one session: E<k> at position k, in transaction 100 + k
    const at = (k: number) =>
      ({
        type: `E${k}`,
        data: {},
        globalPosition: BigInt(k),
        checkpoint: makeCheckpoint(BigInt(100 + k), BigInt(k)),
      }) as unknown as RecordedEvent;
    const positioned: RecordedEvent[] = [];
    const table = async (after: Checkpoint, maxCount: number) => {
      tableReads++;
      return positioned.filter((e) => compareCheckpoints(e.checkpoint, after) > 0).slice(0, maxCount);
    };
    const write = (...ks: number[]) => {
      const es = ks.map(at);
      positioned.push(...es);
      return es;
    };
    write(1);
    const tail = new LogTail(table, async () => positioned.at(-1)!.checkpoint, 4, { stalestMs: 1000, now: () => 0, soleWriter: true });
    expect(tail.took(write(2)), 'nothing is taken before the tail is opened').to.equal(false);
    expect(types(await tail.read(positioned[1]!.checkpoint, 100, undefined))).to.deep.equal([]);
    tableReads = 0;
    // taken: the notice that follows finds them held, and the readers answer from memory
    expect(tail.took(write(3, 4))).to.equal(true);
    tail.heard(positioned.at(-1)!.checkpoint);
    expect(types(await tail.read(positioned[1]!.checkpoint, 100, undefined))).to.deep.equal(['E3', 'E4']);
    expect(tableReads).to.equal(0);
    // a gap (position 5 used by a transaction that did not commit, or an append the tail was not handed): refused,
    // and the notice makes the next read read the table
    positioned.push(at(6));
    expect(tail.took([at(6)])).to.equal(false);
    tail.heard(at(6).checkpoint);
    expect(types(await tail.read(positioned[2]!.checkpoint, 100, undefined))).to.deep.equal(['E4', 'E6']);
    expect(tableReads).to.equal(1);
    // events that do not follow one another are refused whole
    expect(tail.took([at(7), at(9)])).to.equal(false);
    expect(tail.took([at(6)]), 'what it holds already').to.equal(false);
    // taking past what it keeps drops the oldest: a reader whose cursor was dropped goes to the table
    expect(tail.took(write(7, 8, 9))).to.equal(true);
    expect(types(await tail.read(at(6).checkpoint, 100, undefined))).to.deep.equal(['E7', 'E8', 'E9']);
    expect(await tail.read(at(3).checkpoint, 100, undefined)).to.equal(null);
    expect(tableReads).to.equal(1);
  });

  it("on a server, leaves a subscription's refresh out until a notice, or an event named and not yet held, or the last is old", async () => {
    let clock = 0;
    append(1);
    const tail = new LogTail(counted, head, 10, { stalestMs: 1000, now: () => clock, soleWriter: false });
    await tail.read(log[0]!.checkpoint, 100, undefined, true);
    tableReads = 0;
    append(1);
    // a read that is not a subscription's (read-your-writes across processes) always reads the table
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal(['E2']);
    expect(tableReads).to.equal(1);
    // a subscription's, with nothing heard since: from memory
    append(1);
    expect(types(await tail.read(log[1]!.checkpoint, 100, undefined, true))).to.deep.equal([]);
    expect(tableReads).to.equal(1);
    // a notice naming E4, which is not visible yet (an older transaction is open): read, and read again while it is not held
    tail.heard(makeCheckpoint(4n, 0n));
    expect(types(await tail.read(log[1]!.checkpoint, 100, undefined, true))).to.deep.equal(['E3']);
    expect(types(await tail.read(log[1]!.checkpoint, 100, undefined, true))).to.deep.equal(['E3']);
    expect(tableReads).to.equal(3);
    append(1);
    expect(types(await tail.read(log[2]!.checkpoint, 100, undefined, true))).to.deep.equal(['E4']);
    expect(tableReads).to.equal(4);
    // held now: nothing more is read until the last read is old (a lost notice)
    append(1);
    expect(types(await tail.read(log[3]!.checkpoint, 100, undefined, true))).to.deep.equal([]);
    expect(tableReads).to.equal(4);
    clock += 1000;
    expect(types(await tail.read(log[3]!.checkpoint, 100, undefined, true))).to.deep.equal(['E5']);
    expect(tableReads).to.equal(5);
  });

  it('reads again for a notice heard while the refresh a reader joined was running', async () => {
    append(1);
    let release: () => void = () => undefined;
    let heldNow: () => void = () => undefined;
    const held = new Promise<void>((r) => (heldNow = r));
    let hold = false;
    const slow = async (after: Checkpoint, maxCount: number, o?: { filter?: EventFilter; upTo?: Checkpoint }) => {
      tableReads++;
      const rows = await readTable(after, maxCount, o);
      if (hold) {
        hold = false;
        heldNow();
        await new Promise<void>((r) => (release = r));
      }
      return rows;
    };
    const tail = new LogTail(slow, head, 10, { stalestMs: 1000, now: () => 0, soleWriter: false });
    await tail.read(log[0]!.checkpoint, 100, undefined, true);
    tableReads = 0;
    hold = true;
    tail.heard(makeCheckpoint(1n, 0n));
    const first = tail.read(log[0]!.checkpoint, 100, undefined, true); // starts a refresh, held
    await held;
    append(1);
    tail.heard(log[1]!.checkpoint); // E2 committed after that refresh read the table
    const second = tail.read(log[0]!.checkpoint, 100, undefined, true); // joins it, then reads again
    release();
    expect(types(await first)).to.deep.equal([]);
    expect(types(await second)).to.deep.equal(['E2']);
    expect(tableReads).to.equal(2);
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
    expect(types(await tail.read(log[0]!.checkpoint, 100, undefined))).to.deep.equal([]);
    // a burst: more new events than the tail keeps, while this reader was still at E2
    append(5);
    const cursor = log[1]!.checkpoint; // E2: inside the tail when the read began, dropped by its refresh
    const got = await tail.read(cursor, 100, undefined);
    expect(got).to.equal(null);
    // a reader at the tail's new start still reads from memory
    expect(types(await tail.read(log[2]!.checkpoint, 100, undefined))).to.deep.equal(['E4', 'E5', 'E6']);
  });

  it('moves a reader behind it on to its start once the table holds nothing more of its filter up to there', async () => {
    append(2);
    const tail = new LogTail(counted, head, 3);
    await tail.read(log[1]!.checkpoint, 100, undefined);
    append(6); // E3-E8: the tail keeps E6-E8, its start is E5
    await tail.read(log[1]!.checkpoint, 100, undefined);
    const start = log[4]!.checkpoint;
    const rare = { eventTypes: ['E1', 'E7'] };
    // a reader at E1, whose filter matches nothing up to the start: the table up to there, then the start
    tableReads = 0;
    // (not caught up: the log goes on after the start)
    expect(await tail.behind(log[0]!.checkpoint, 100, rare)).to.deep.equal({ events: [], through: start, behind: true });
    expect(tableReads).to.equal(1);
    // from there the tail answers, from memory
    expect(types(await tail.read(start, 100, rare))).to.deep.equal(['E7']);
    // a reader whose events lie before the start gets them, capped, and moves only as far as the last
    const some = await tail.behind(START, 1, { eventTypes: ['E2', 'E4'] });
    expect(types(some)).to.deep.equal(['E2']);
    expect(some?.through).to.equal(log[1]!.checkpoint);
    expect(await tail.behind(START, 100, { eventTypes: ['E2', 'E4'] })).to.deep.equal({
      events: [log[1]!, log[3]!],
      through: start,
      behind: true,
    });
    // not behind: the tail itself answers
    expect(await tail.behind(start, 100, rare)).to.equal(null);
  });
});
