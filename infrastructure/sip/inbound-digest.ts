import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SipRequest } from 'sip';
import digest from 'sip/digest.js';
import type { Carrier } from './carriers.js';
import type { TrunkTermination } from './trunk-book.js';

/** how long a nonce the engine gave out is taken (RFC 3261 §22.4 leaves it to the server) */
export const NONCE_TTL_MS = 5 * 60_000;

/** What a request's digest credentials say: whose they are, or why none fits. */
export type DigestVerdict =
  | Readonly<{ carrier: Carrier }>
  /** a PBX sending calls out through SIP trunks (docs/sip.md#calls-from-your-pbx): every trunk the credentials are one of */
  | Readonly<{ trunks: readonly TrunkTermination[] }>
  /** no credentials: the request is to be challenged */
  | Readonly<{ challenge: true; stale: boolean }>
  /** credentials that fit no carrier, or a nonce the engine never gave out */
  | Readonly<{ refused: string }>;

/**
 * Digest authentication of INVITEs from carriers that send calls from no fixed address (docs/sip.md#carriers), and
 * from customers' PBXs sending calls out through their SIP trunks (docs/sip.md#calls-from-your-pbx),
 * RFC 2617 / 3261 §22 with qop=auth. The response is checked by the `sip` package's own digest code
 * (`sip/digest`); this class gives out the nonces: each is the time it was made and an HMAC of it under a key of
 * this process, so a nonce is taken only when this engine made it, less than NONCE_TTL_MS ago (an older one is
 * challenged again as `stale`), with no state kept per challenge.
 */
export class InboundDigest {
  private readonly key: Buffer;

  constructor(
    readonly realm: string,
    private readonly now: () => number = Date.now,
    key?: Buffer,
  ) {
    this.key = key ?? randomBytes(32);
  }

  /** The `WWW-Authenticate` header of a 401, or the `Proxy-Authenticate` header of a 407. */
  challenge(stale = false): Record<string, string> {
    return {
      scheme: 'Digest',
      realm: `"${this.realm}"`,
      nonce: `"${this.nonce()}"`,
      algorithm: 'MD5',
      qop: '"auth"',
      ...(stale ? { stale: 'true' } : {}),
    };
  }

  /**
   * Whose credentials sign `rq` (in `Authorization`, or `Proxy-Authorization` after a 407), among the carriers that
   * authenticate by digest, then the trunks' termination credentials.
   */
  verify(rq: SipRequest, carriers: readonly Carrier[], trunks: readonly TrunkTermination[] = []): DigestVerdict {
    const ours = (list: Record<string, string>[] | undefined) => list?.find((a) => unquote(a.realm) === this.realm);
    const www = ours(rq.headers.authorization);
    const auth = www ?? ours(rq.headers['proxy-authorization']);
    if (!auth) return { challenge: true, stale: false };
    const nonce = unquote(auth.nonce);
    const issued = this.issuedAt(nonce);
    if (issued === null) return { refused: 'a nonce this engine did not give out' };
    if (this.now() - issued > NONCE_TTL_MS) return { challenge: true, stale: true };
    const user = unquote(auth.username);
    // the package counts the request from the client's nonce count: one before the one this request carries
    const nc = Number.parseInt(unquote(auth.nc ?? '00000001'), 16);
    const signs = (password: string) =>
      digest.authenticateRequest({ realm: this.realm, nonce, nc: Number.isFinite(nc) && nc > 0 ? nc - 1 : 0, proxy: !www }, rq, {
        user,
        password,
      });
    const carrier = carriers.find((c) => c.inbound.username === user && c.inbound.password);
    if (carrier) return signs(carrier.inbound.password!) ? { carrier } : { refused: `wrong credentials for ${user}` };
    const named = trunks.filter((t) => t.credentials.some((c) => c.username === user));
    if (named.length === 0) return { refused: `no carrier or SIP trunk has the user name ${JSON.stringify(user.slice(0, 64))}` };
    // two accounts may pick the same user name: the credentials are each trunk's whose password they were signed with
    const signed = named.filter((t) => t.credentials.some((c) => c.username === user && signs(c.password)));
    return signed.length > 0 ? { trunks: signed } : { refused: `wrong credentials for ${user}` };
  }

  private nonce(): string {
    const at = this.now().toString(36);
    return `${at}.${this.mac(at)}`;
  }

  private issuedAt(nonce: string): number | null {
    const [at, mac] = nonce.split('.');
    if (!at || !mac) return null;
    const expected = Buffer.from(this.mac(at));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const t = Number.parseInt(at, 36);
    return Number.isFinite(t) ? t : null;
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url').slice(0, 22);
  }
}

const unquote = (v: unknown): string => String(v ?? '').replace(/^"(.*)"$/, '$1');
