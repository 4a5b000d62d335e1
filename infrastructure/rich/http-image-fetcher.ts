import { type ImageFetcherPort, ImageRefused } from '../../application/rich/rich-provider.port.js';
import { type Destinations, WebhookUrlPolicy } from '../http-client/address-policy.js';
import { discard, HttpClient, HttpClientError, readBody } from '../http-client/client.js';

/**
 * Fetches an image a caller names (an avatar, a chat background) once, through the one outbound client with the guard
 * webhooks have (docs/rich-messaging.md#images, docs/security.md): http or https only; no loopback, private,
 * link-local or other internal address, checked on the URL as written and again on the address really connected to
 * (so a name that resolves elsewhere at fetch time cannot reach the internal network); no redirects; at most
 * `maxBytes`, stopped as soon as more arrive; no complete answer within the timeout is a refusal.
 */
export class HttpImageFetcher implements ImageFetcherPort {
  private readonly policy: WebhookUrlPolicy;
  private readonly client: HttpClient;

  constructor(private readonly o: { destinations: Destinations; timeoutMs: number }) {
    this.policy = new WebhookUrlPolicy(o.destinations);
    this.client = new HttpClient({ destinations: o.destinations, maxSockets: 16 });
  }

  async fetch(raw: string, o: { maxBytes: number }): Promise<Uint8Array> {
    const refused = await this.policy.check(raw);
    if (refused) throw new ImageRefused(`the URL is not allowed: ${refused}`);
    try {
      const answer = await this.client.request({
        method: 'GET',
        url: raw,
        headers: { accept: 'image/*' },
        timeouts: { head: this.o.timeoutMs, total: this.o.timeoutMs },
      });
      const status = answer.status;
      const refuse = (reason: string) => {
        discard(answer);
        return new ImageRefused(reason);
      };
      if (status >= 300 && status < 400) throw refuse(`the URL answered a redirect (${status}); give the image's own URL`);
      if (status !== 200) throw refuse(`the URL answered ${status}`);
      const declared = Number(answer.headers['content-length']);
      if (Number.isFinite(declared) && declared > o.maxBytes) throw refuse(`the image is larger than ${o.maxBytes} bytes`);
      return await readBody(answer, { maxBytes: o.maxBytes, over: 'refuse' });
    } catch (err) {
      if (err instanceof ImageRefused) throw err;
      if (!(err instanceof HttpClientError)) throw new ImageRefused(`the image could not be fetched: ${String(err)}`);
      switch (err.kind) {
        case 'not_allowed':
        case 'invalid_url':
          throw new ImageRefused(`the URL is not allowed: ${err.message}`);
        case 'too_large':
          throw new ImageRefused(`the image is larger than ${o.maxBytes} bytes`);
        case 'timeout':
          throw new ImageRefused(`no complete answer within ${this.o.timeoutMs} ms`);
        default:
          throw new ImageRefused(`the image could not be fetched: ${err.message}`);
      }
    }
  }
}
