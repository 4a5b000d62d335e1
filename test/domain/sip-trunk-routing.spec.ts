import { expect } from 'chai';
import { afterBridgeFailure, callerRefusal, describeBridgeFailure, orderOriginationUris } from '../../domain/sip-trunk/routing.js';
import { seededRandom } from '../support/fixtures.js';

describe('orderOriginationUris (docs/calls.md#sip-trunks)', () => {
  const uri = (sipUri: string, priority: number, weight = 10) => ({ sipUri, priority, weight });
  /** answers the given numbers in turn */
  const draws = (...xs: number[]) => {
    let i = 0;
    return () => {
      const x = xs[i++];
      if (x === undefined) throw new Error('more draws than expected');
      return x;
    };
  };

  it('tries the lowest priority first, whatever the order listed', () => {
    const order = orderOriginationUris([uri('sip:c@x', 30), uri('sip:a@x', 0), uri('sip:b@x', 20), uri('sip:d@x', 65535)], () => 0.5);
    expect(order).to.deep.equal(['sip:a@x', 'sip:b@x', 'sip:c@x', 'sip:d@x']);
  });

  it('answers nothing for no URIs', () => {
    expect(orderOriginationUris([], () => 0.5)).to.deep.equal([]);
  });

  it('within one priority, picks by weight: the draw falls in a URI’s share of the total', () => {
    // weights 1 and 3 (total 4): a draw below 1/4 picks the first, above it the second
    const uris = [uri('sip:light@x', 10, 1), uri('sip:heavy@x', 10, 3)];
    expect(orderOriginationUris(uris, draws(0.2, 0))).to.deep.equal(['sip:light@x', 'sip:heavy@x']);
    expect(orderOriginationUris(uris, draws(0.3, 0))).to.deep.equal(['sip:heavy@x', 'sip:light@x']);
    expect(orderOriginationUris(uris, draws(0.999, 0))).to.deep.equal(['sip:heavy@x', 'sip:light@x']);
  });

  it('orders each priority on its own: a heavy weight never jumps a lower priority', () => {
    const uris = [uri('sip:later-heavy@x', 20, 1000), uri('sip:first@x', 10, 1), uri('sip:later-light@x', 20, 1)];
    expect(orderOriginationUris(uris, draws(0.99, 0.5, 0))).to.deep.equal(['sip:first@x', 'sip:later-heavy@x', 'sip:later-light@x']);
  });

  it('puts a zero-weight URI after the weighted ones of its priority, and keeps the listed order when all are zero', () => {
    for (const x of [0, 0.25, 0.5, 0.999]) {
      const order = orderOriginationUris([uri('sip:zero@x', 10, 0), uri('sip:one@x', 10, 5), uri('sip:two@x', 10, 5)], () => x);
      expect(order.at(-1), `draw ${x}`).to.equal('sip:zero@x');
    }
    expect(orderOriginationUris([uri('sip:a@x', 10, 0), uri('sip:b@x', 10, 0)], () => 0.7)).to.deep.equal(['sip:a@x', 'sip:b@x']);
  });

  it('over 1,000 decisions with a seeded random, puts each URI first within a few percent of its share of the weights, and lists every URI once', () => {
    const random = seededRandom(7);
    const uris = [uri('sip:a@x', 5, 1), uri('sip:b@x', 5, 3), uri('sip:c@x', 5, 6), uri('sip:last@x', 9, 50)];
    const first: Record<string, number> = {};
    const runs = 1000;
    for (let i = 0; i < runs; i++) {
      const order = orderOriginationUris(uris, random);
      expect([...order].sort()).to.deep.equal(['sip:a@x', 'sip:b@x', 'sip:c@x', 'sip:last@x']);
      expect(order[3]).to.equal('sip:last@x');
      first[order[0]!] = (first[order[0]!] ?? 0) + 1;
    }
    // shares 10%, 30%, 60%, each within 3 points (the seed fixes the counts; the bounds say what they mean)
    expect((first['sip:a@x'] ?? 0) / runs).to.be.within(0.07, 0.13);
    expect((first['sip:b@x'] ?? 0) / runs).to.be.within(0.27, 0.33);
    expect((first['sip:c@x'] ?? 0) / runs).to.be.within(0.57, 0.63);
  });

  it('the second place of a priority follows the weights of those left (three URIs, 1,000 decisions)', () => {
    const random = seededRandom(11);
    const uris = [uri('sip:a@x', 1, 2), uri('sip:b@x', 1, 2), uri('sip:c@x', 1, 6)];
    let secondAfterC = 0;
    let bSecondAfterC = 0;
    for (let i = 0; i < 1000; i++) {
      const order = orderOriginationUris(uris, random);
      if (order[0] !== 'sip:c@x') continue;
      secondAfterC++;
      if (order[1] === 'sip:b@x') bSecondAfterC++;
    }
    // with c first, a and b share what is left equally
    expect(bSecondAfterC / secondAfterC).to.be.within(0.44, 0.56);
  });
});

describe('afterBridgeFailure (docs/calls.md#sip-trunks)', () => {
  const response = (status: number) => ({ kind: 'response' as const, status, reason: '' });

  it('tries the next URI on a 5xx, a 408 or 480, a timeout and an unreachable URI', () => {
    for (const status of [500, 502, 503, 504, 599, 408, 480]) expect(afterBridgeFailure(response(status)), String(status)).to.equal('next');
    expect(afterBridgeFailure({ kind: 'timeout', afterMs: 5000 })).to.equal('next');
    expect(afterBridgeFailure({ kind: 'unreachable', detail: 'connection refused' })).to.equal('next');
  });

  it('ends the call as busy on 486 and 600: the customer is busy, another URI would be too', () => {
    expect(afterBridgeFailure(response(486))).to.equal('busy');
    expect(afterBridgeFailure(response(600))).to.equal('busy');
  });

  it('stops on any other refusal: the customer side answered no', () => {
    for (const status of [403, 404, 484, 488, 603]) expect(afterBridgeFailure(response(status)), String(status)).to.equal('stop');
  });

  it('says each failure as the call record shows it', () => {
    expect(describeBridgeFailure({ kind: 'response', status: 503, reason: 'Service Unavailable' })).to.equal('SIP 503 Service Unavailable');
    expect(describeBridgeFailure({ kind: 'timeout', afterMs: 4000 })).to.equal('no answer within 4000 ms');
  });
});

describe('callerRefusal: what a caller no URI took hears (docs/calls.md#sip-trunks)', () => {
  const response = (status: number) => ({ kind: 'response' as const, status, reason: '' });
  it('a busy last URI is the caller’s busy', () => {
    expect(callerRefusal(response(486)).status).to.equal(486);
    expect(callerRefusal(response(600)).status).to.equal(486);
  });
  it('a server failure or an unreachable URI is 503', () => {
    for (const f of [response(500), response(503), { kind: 'unreachable' as const, detail: 'TLS' }])
      expect(callerRefusal(f).status).to.equal(503);
  });
  it('a timeout, a 408/480 or another refusal is 480, and so is a trunk with no URI at all', () => {
    for (const f of [response(408), response(480), response(404), response(403), { kind: 'timeout' as const, afterMs: 5000 }, null])
      expect(callerRefusal(f).status, JSON.stringify(f)).to.equal(480);
  });
});
