import { expect } from 'chai';
import { classify, FAILURE_REASONS, type FailureCategory, failureReasonOf, failureText } from '../../domain/message/failure-reasons.js';

/** The delivery-failure reasons as docs/message-failures.md lists them, by category (carrier and URL as placeholders). */
const LISTED: Record<FailureCategory, string[]> = {
  recipient: [
    'The recipient has opted out of messages from this number.',
    "The recipient's number isn't valid or is disabled.",
    "The recipient's number is inactive or invalid.",
    "The recipient's number has been deactivated.",
    "The recipient's number is unknown or no longer exists.",
    "The recipient's number isn't a valid mobile number.",
    "The recipient's number is a landline or can't receive SMS.",
    "The recipient's number blocks incoming messages.",
    "The recipient's number can't receive messages.",
    "The recipient's number isn't assigned to a carrier yet.",
    "Premium-rate numbers can't receive messages.",
  ],
  transient: [
    'A temporary error occurred. Retry shortly.',
    'A carrier error occurred while submitting the message. Retry shortly.',
    "The carrier didn't acknowledge the message. Retry shortly.",
    "The recipient's phone is off or unreachable.",
    "The recipient's phone is unreachable or turned off.",
    "The recipient's number could not be reached.",
    "The recipient's carrier could not be reached.",
    'The message queue for this number overflowed. Retry shortly.',
  ],
  wait: [
    "{carrier}'s daily volume limit for your registered brand was reached.",
    'This number reached its daily sending limit. Sending resumes tomorrow.',
    'Messages from this number were rate-limited by {carrier}. Retry shortly.',
    'Messages from this number were rate-limited by the carrier. Retry shortly.',
  ],
  configuration: [
    'This number is not registered for US A2P 10DLC messaging. Register at {register_url} to send US SMS.',
    "This number isn't registered for US 10DLC messaging. Register at {register_url} to send US SMS.",
    "There's a 10DLC registration issue at the carrier. Contact support.",
    'The messaging campaign is inactive for this destination.',
    "Messaging to this destination country isn't enabled.",
    "This toll-free number isn't verified for messaging yet. Contact support.",
    "This toll-free number isn't enabled for messaging. Contact support.",
    "This number isn't enabled for messaging. Contact support.",
    "The sending number isn't routable to the carrier. Contact support.",
    'The sending account is suspended. Contact support.',
    'This number was blocked for policy violations. Contact support.',
    'The message price exceeded the configured maximum. Contact support.',
  ],
  spam: [
    'The message was blocked by spam filtering.',
    'The message was flagged as spam by the carrier.',
    'The message was blocked by carrier spam filtering.',
    'The message was filtered by the carrier.',
    'The message was blocked by the carrier.',
  ],
  content: [
    'The message was too long or invalid for the carrier.',
    "The message content type isn't supported.",
    'The message expired before it could be sent.',
    'The message expired after delivery retries.',
    "The message couldn't be routed after multiple attempts.",
    "The recipient's number couldn't be routed to a carrier.",
    "Texting this destination isn't supported.",
    "The recipient's carrier or handset doesn't support this message.",
    'The carrier rejected the message.',
    'The carrier could not deliver this message.',
    'The carrier failed to deliver the message.',
    'The carrier reported an unknown delivery error.',
    "The message couldn't be sent due to an account or formatting issue. Contact support.",
  ],
};

describe('message failure reasons', () => {
  it('lists every documented reason once, with its exact text and category, in order', () => {
    const byCategory: Record<string, string[]> = {};
    for (const f of FAILURE_REASONS) byCategory[f.category] = [...(byCategory[f.category] ?? []), f.text];
    expect(byCategory).to.deep.equal(LISTED);
  });

  it('gives each reason its own stable error code', () => {
    const codes = FAILURE_REASONS.map((f) => f.errorCode);
    expect(new Set(codes).size).to.equal(codes.length);
    for (const c of codes) expect(c).to.match(/^[A-Z0-9_]+$/);
    expect(classify("The recipient's number is a landline or can't receive SMS.").errorCode).to.equal('RECIPIENT_LANDLINE');
    expect(classify('The recipient has opted out of messages from this number.').errorCode).to.equal('RECIPIENT_OPTED_OUT');
  });

  it('derives retryable from the category: transient and wait only', () => {
    for (const f of FAILURE_REASONS) expect(f.retryable, f.text).to.equal(f.category === 'transient' || f.category === 'wait');
    expect(classify('A temporary error occurred. Retry shortly.')).to.include({ category: 'transient', retryable: true });
    expect(classify('The message was filtered by the carrier.')).to.include({ category: 'spam', retryable: false });
  });

  it('tells daily limits from rate limits', () => {
    expect(failureReasonOf('NUMBER_DAILY_LIMIT').wait).to.equal('daily');
    expect(failureReasonOf('BRAND_DAILY_LIMIT').wait).to.equal('daily');
    expect(failureReasonOf('RATE_LIMITED').wait).to.equal('rate');
    expect(failureReasonOf('TEMPORARY_ERROR').wait).to.equal(null);
  });

  it('classifies every reason from its own text', () => {
    for (const f of FAILURE_REASONS) {
      const text = failureText(f.errorCode, { carrier: 'T-Mobile', registerUrl: 'https://example.test/v1/register' });
      expect(classify(text), text).to.equal(f);
    }
  });

  it('fills in the carrier and the registration page, and recognises any filled-in text', () => {
    const daily = failureText('BRAND_DAILY_LIMIT', { carrier: 'AT&T' });
    expect(daily).to.equal("AT&T's daily volume limit for your registered brand was reached.");
    expect(classify("Sandbox Wireless's daily volume limit for your registered brand was reached.").errorCode).to.equal(
      'BRAND_DAILY_LIMIT',
    );
    expect(classify('Messages from this number were rate-limited by T-Mobile. Retry shortly.').errorCode).to.equal(
      'RATE_LIMITED_BY_NAMED_CARRIER',
    );
    expect(classify('Messages from this number were rate-limited by the carrier. Retry shortly.').errorCode).to.equal('RATE_LIMITED');
    const reg = failureText('A2P_10DLC_UNREGISTERED', { registerUrl: 'https://agents.example/v1/register' });
    expect(reg).to.equal(
      'This number is not registered for US A2P 10DLC messaging. Register at https://agents.example/v1/register to send US SMS.',
    );
    expect(classify(reg).errorCode).to.equal('A2P_10DLC_UNREGISTERED');
    expect(() => failureText('BRAND_DAILY_LIMIT')).to.throw(/carrier/);
    expect(() => failureText('US_10DLC_UNREGISTERED', { registerUrl: ' ' })).to.throw(/registerUrl/);
  });

  it('does not mistake a longer or altered text for a reason', () => {
    expect(classify('The carrier rejected the message. Please try again.').category).to.equal('unknown');
    expect(classify('the carrier rejected the message.').category).to.equal('unknown');
    expect(classify("'s daily volume limit for your registered brand was reached.").category).to.equal('unknown');
  });

  it('tolerates curly apostrophes and stray spaces', () => {
    expect(classify('  The recipient\u2019s number   has been deactivated. ').errorCode).to.equal('RECIPIENT_DEACTIVATED');
  });

  it('treats an unknown, empty or missing reason as unknown and not retryable', () => {
    for (const r of ['Something odd happened.', '', null, undefined])
      expect(classify(r)).to.deep.equal({ errorCode: null, category: 'unknown', retryable: false });
  });
});
