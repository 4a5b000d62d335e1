import { expect } from 'chai';
import { type Claimed, type ClaimOptions, type ReportClaims, ReportWorker } from '../../infrastructure/sandbox/shared/reports.js';
import { TestClock } from '../support/fixtures.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

type Row = { due_at: string; attempts: number };
type Report = { receiptId: string; message: string };

/** A timeline of `reports` due now, claimed `limit` at a time, remembering what was marked reported or failed. */
function timelineOf(reports: readonly Report[]) {
  const waiting = [...reports];
  const marked: string[][] = [];
  const failed: string[] = [];
  const timeline: ReportClaims<Row, Report> = {
    anyDue: async () => waiting.length > 0,
    claim: async (o: ClaimOptions): Promise<Claimed<Report>[]> =>
      waiting.splice(0, o.limit).map((report) => ({ report, key: [report.receiptId], attempts: 0 })),
    reportedAll: async (cs: readonly Claimed<Report>[]) => {
      marked.push(cs.map((c) => c.report.receiptId));
    },
    failed: async (c: Claimed<Report>) => {
      failed.push(c.report.receiptId);
    },
  };
  return { timeline, marked, failed };
}

/**
 * The sandbox's report worker (docs/sandbox.md#sms-receipts): the reports of one claim are made at once, as a
 * carrier's callbacks arrive side by side (a claim holds at most one report of a subject, so none overtakes another
 * of its subject), and the ones the platform took are marked reported together.
 */
describe('sandbox report worker: a claim made at once', () => {
  it('makes every report of a claim before any of them is answered, and marks those taken in one statement a claim', async () => {
    const reports = Array.from({ length: 7 }, (_, i) => ({ receiptId: `rc_${i}`, message: `sm_${i}` }));
    const { timeline, marked, failed } = timelineOf(reports);
    let inFlight = 0;
    const atOnce: number[] = [];
    const worker = new ReportWorker(
      'test_reports',
      timeline,
      async () => {
        inFlight += 1;
        atOnce.push(inFlight);
        // answered on a later turn of the event loop, so that reports made one after another never overlap
        await new Promise((r) => setImmediate(r));
        inFlight -= 1;
      },
      new TestClock(),
      silent,
      { pollIntervalMs: 1000, leaseMs: 30_000, batchSize: 4 },
    );
    expect(await worker.runOnce()).to.equal(7);
    // two claims (4 and 3): within each, every report was made before the first was answered
    expect(Math.max(...atOnce)).to.equal(4);
    expect(marked).to.deep.equal([
      ['rc_0', 'rc_1', 'rc_2', 'rc_3'],
      ['rc_4', 'rc_5', 'rc_6'],
    ]);
    expect(failed).to.deep.equal([]);
  });

  it('marks only the reports taken: one the platform refused is made again later, and the others of its claim are not held back', async () => {
    const reports = Array.from({ length: 3 }, (_, i) => ({ receiptId: `rc_${i}`, message: `sm_${i}` }));
    const { timeline, marked, failed } = timelineOf(reports);
    const worker = new ReportWorker(
      'test_reports',
      timeline,
      async (r: Report) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (r.receiptId === 'rc_1') throw new Error('not bound yet');
      },
      new TestClock(),
      silent,
      { pollIntervalMs: 1000, leaseMs: 30_000, batchSize: 50 },
    );
    expect(await worker.runOnce()).to.equal(2);
    expect(marked).to.deep.equal([['rc_0', 'rc_2']]);
    expect(failed).to.deep.equal(['rc_1']);
  });
});
