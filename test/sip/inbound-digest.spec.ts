import { expect } from 'chai';
import type { SipRequest, SipResponse } from 'sip';
import digest from 'sip/digest.js';
import type { Carrier } from '../../infrastructure/sip/carriers.js';
import { InboundDigest, NONCE_TTL_MS } from '../../infrastructure/sip/inbound-digest.js';
import { DEFAULT_NUMBER_FORMAT } from '../../infrastructure/sip/number-format.js';

/**
 * Digest authentication of carriers without fixed addresses (docs/sip.md#carriers), checked against the `sip`
 * package's own client side (`sip/digest` signRequest), as a carrier's equipment would answer the challenge.
 */
describe('SIP inbound digest authentication', () => {
  const pbx: Carrier = {
    id: 'pbx',
    name: 'PBX',
    inbound: { addresses: [], username: 'pbx-user', password: 'pbx-secret' },
    outbound: null,
    numberFormat: DEFAULT_NUMBER_FORMAT,
  };
  let now = 1_800_000_000_000;
  const auth = new InboundDigest('203.0.113.5', () => now, Buffer.alloc(32, 7));

  const invite = (): SipRequest => ({
    method: 'INVITE',
    uri: 'sip:+14155550100@203.0.113.5',
    headers: {
      via: [],
      to: { uri: 'sip:+14155550100@203.0.113.5', params: {} },
      from: { uri: 'sip:caller@pbx.example', params: { tag: 'a' } },
      'call-id': 'c1',
      cseq: { seq: 1, method: 'INVITE' },
    },
    content: 'v=0',
  });
  /** the 401 the engine sends, and the INVITE a client sends again, signed with `password` */
  const answered = (password: string, stale = false) => {
    const challenge: SipResponse = {
      status: 401,
      reason: 'Unauthorized',
      headers: { ...invite().headers, 'www-authenticate': [auth.challenge(stale)] },
    };
    const rq = invite();
    digest.signRequest(null, rq, challenge, { user: 'pbx-user', password });
    return rq;
  };

  it('challenges a request without credentials', () => {
    expect(auth.verify(invite(), [pbx])).to.deep.equal({ challenge: true, stale: false });
  });

  it("takes the carrier's own credentials, signed by the sip package's client", () => {
    expect(auth.verify(answered('pbx-secret'), [pbx])).to.deep.equal({ carrier: pbx });
  });

  it('refuses a wrong password, an unknown user, and a nonce the engine did not make', () => {
    expect(auth.verify(answered('guess'), [pbx])).to.have.property('refused');
    expect(auth.verify(answered('pbx-secret'), [{ ...pbx, inbound: { ...pbx.inbound, username: 'other' } }])).to.have.property('refused');
    const forged = answered('pbx-secret');
    const a = forged.headers.authorization![0]!;
    a.nonce = `"${String(Date.now().toString(36))}.AAAAAAAAAAAAAAAAAAAAAA"`;
    expect(auth.verify(forged, [pbx])).to.have.property('refused');
    const otherKey = new InboundDigest('203.0.113.5', () => now, Buffer.alloc(32, 8));
    expect(otherKey.verify(answered('pbx-secret'), [pbx])).to.have.property('refused');
  });

  it('challenges again, as stale, an answer to a nonce older than its lifetime', () => {
    const rq = answered('pbx-secret');
    now += NONCE_TTL_MS + 1;
    expect(auth.verify(rq, [pbx])).to.deep.equal({ challenge: true, stale: true });
    expect(auth.challenge(true)).to.include({ stale: 'true' });
  });

  it('ignores credentials for another realm', () => {
    const rq = answered('pbx-secret');
    rq.headers.authorization![0]!.realm = '"elsewhere"';
    expect(auth.verify(rq, [pbx])).to.deep.equal({ challenge: true, stale: false });
  });
});
