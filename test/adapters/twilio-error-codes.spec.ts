import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { failureOf } from '../../application/messaging/failures.js';
import { type FailureCode, failureReasonOf } from '../../domain/message/failure-reasons.js';
import { TWILIO_ERROR_CODES, twilioFailure, twilioReason } from '../../infrastructure/carriers/twilio/error-codes.js';

const REGISTER_URL = 'https://platform.example.test/docs#tag/registration';

/** The codes the issue names, with the reason each must become (docs/carriers.md#what-each-twilio-error-becomes). */
const REQUIRED: Readonly<Record<number, FailureCode>> = {
  30001: 'QUEUE_OVERFLOW',
  30003: 'HANDSET_UNREACHABLE_OR_OFF',
  30005: 'RECIPIENT_UNKNOWN',
  30006: 'RECIPIENT_LANDLINE',
  30007: 'CARRIER_FILTERED',
  30008: 'CARRIER_UNKNOWN_ERROR',
  30010: 'PRICE_EXCEEDS_MAXIMUM',
  30034: 'US_10DLC_UNREGISTERED',
  21211: 'RECIPIENT_INVALID_OR_DISABLED',
  21408: 'DESTINATION_COUNTRY_DISABLED',
  21610: 'RECIPIENT_OPTED_OUT',
  21612: 'RECIPIENT_UNROUTABLE',
};

/** The rows of the table under a heading of docs/carriers.md, cell by cell. */
function docTable(heading: string): string[][] {
  const doc = readFileSync('docs/carriers.md', 'utf8');
  const from = doc.indexOf(`\n## ${heading}\n`);
  expect(from, `docs/carriers.md has a section "${heading}"`).to.be.greaterThan(-1);
  const rows: string[][] = [];
  for (const line of doc.slice(from).split('\n').slice(2)) {
    if (line.startsWith('## ')) break;
    if (!line.startsWith('|') || line.startsWith('|---')) continue;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows.slice(1);
}

describe("Twilio's error codes as the specification's delivery failures", () => {
  for (const [code, reason] of Object.entries(REQUIRED))
    it(`${code} is "${failureReasonOf(reason).text}" (${failureReasonOf(reason).category})`, () => {
      expect(twilioReason(Number(code))).to.equal(reason);
      const f = twilioFailure(Number(code), { registerUrl: REGISTER_URL });
      expect(f.code).to.equal(code);
      // what the message records: the reason's text, category and retryability, and Twilio's code
      const recorded = failureOf(f.detail, f.code);
      expect(recorded).to.deep.equal({
        failureReason: f.detail,
        errorCode: code,
        failureCategory: failureReasonOf(reason).category,
        retryable: failureReasonOf(reason).retryable,
      });
    });

  it('fills in the registration page of 30034 and the carrier T-Mobile of 30027', () => {
    expect(twilioFailure(30034, { registerUrl: REGISTER_URL }).detail).to.equal(
      `This number isn't registered for US 10DLC messaging. Register at ${REGISTER_URL} to send US SMS.`,
    );
    expect(twilioFailure(30027, { registerUrl: REGISTER_URL }).detail).to.equal(
      "T-Mobile's daily volume limit for your registered brand was reached.",
    );
  });

  it("makes an unknown or missing code the specification's non-retryable default", () => {
    for (const code of [39999, 11200, null]) {
      const f = twilioFailure(code, { registerUrl: REGISTER_URL });
      expect(f.detail).to.equal('The carrier reported an unknown delivery error.');
      expect(failureOf(f.detail, f.code)).to.include({
        failureCategory: 'content',
        retryable: false,
        errorCode: code === null ? 'CARRIER_UNKNOWN_ERROR' : String(code),
      });
    }
  });

  it('is the table of docs/carriers.md, row for row', () => {
    const documented = docTable('What each Twilio error becomes').map((r) => ({ code: Number(r[0]), reason: r[3]!.replace(/`/g, '') }));
    const code = [...TWILIO_ERROR_CODES].map((r) => ({ code: r[0], reason: r[1] as string })).sort((a, b) => a.code - b.code);
    expect(documented).to.deep.equal(code);
    for (const row of docTable('What each Twilio error becomes')) {
      const f = failureReasonOf(row[3]!.replace(/`/g, '') as FailureCode);
      expect([row[4], row[5]], `row ${row[0]}`).to.deep.equal([f.category, f.retryable ? 'yes' : 'no']);
    }
  });
});
