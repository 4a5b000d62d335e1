import sip, { type SipRequest } from 'sip';
import digest from 'sip/digest.js';
import proxy from 'sip/proxy.js';

/**
 * A carrier's outbound gateway for the tests (docs/testing.md#sip-tests), on the `sip` package's own proxy: it
 * demands digest credentials (407) for every new INVITE, then forwards it to the phone at `forwardTo`. One per
 * test process (the package's proxy is a singleton).
 */
export function startDigestGateway(o: { address: string; port: number; user: string; password: string; forwardTo: string }) {
  const challenges = new Map<string, Record<string, unknown>>();
  const seen: { method: string; authorised: boolean; uri: string; from: string; callId: string }[] = [];
  proxy.start({ address: o.address, port: o.port, tcp: false }, (rq: SipRequest) => {
    const callId = rq.headers['call-id'];
    if (rq.method === 'INVITE' && !rq.headers.to.params.tag) {
      const ctx = challenges.get(callId);
      const ok =
        ctx !== undefined &&
        rq.headers['proxy-authorization'] !== undefined &&
        digest.authenticateRequest(ctx, rq, { user: o.user, password: o.password });
      seen.push({ method: rq.method, authorised: ok, uri: sip.stringifyUri(rq.uri), from: sip.stringifyUri(rq.headers.from.uri), callId });
      if (!ok) {
        const fresh: Record<string, unknown> = { realm: 'gateway.test', qop: 'auth' };
        challenges.set(callId, fresh);
        proxy.send(digest.challenge(fresh, sip.makeResponse(rq, 407, 'Proxy Authentication Required')));
        return;
      }
    }
    rq.uri = o.forwardTo;
    proxy.send(rq);
  });
  // the package's proxy stops through the stack it started (`sip.stop`, set by `sip.start`)
  return { seen, stop: () => (sip as unknown as { stop: () => void }).stop() };
}
