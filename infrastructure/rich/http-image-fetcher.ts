import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type ImageFetcherPort, ImageRefused } from '../../application/rich/rich-provider.port.js';
import { addressAllowed, type Destinations, normaliseHost, notAllowedReason, WebhookUrlPolicy } from '../webhooks/address-policy.js';
import { guardedLookup } from '../webhooks/http-sender.js';

/**
 * Fetches an image a caller names (an avatar, a chat background) once, with the guard webhooks have
 * (docs/rich-messaging.md#images, docs/security.md): http or https only; no loopback, private, link-local or other
 * internal address, checked on the URL as written and again on the address really connected to (so a name that
 * resolves elsewhere at fetch time cannot reach the internal network); no redirects; at most `maxBytes`, stopped as
 * soon as more arrive; no complete answer within the timeout is a refusal.
 */
export class HttpImageFetcher implements ImageFetcherPort {
  private readonly policy: WebhookUrlPolicy;

  constructor(private readonly o: { destinations: Destinations; timeoutMs: number }) {
    this.policy = new WebhookUrlPolicy(o.destinations);
  }

  async fetch(raw: string, o: { maxBytes: number }): Promise<Uint8Array> {
    const refused = await this.policy.check(raw);
    if (refused) throw new ImageRefused(`the URL is not allowed: ${refused}`);
    const url = new URL(raw);
    const host = normaliseHost(url.hostname);
    if (isIP(host) && !addressAllowed(this.o.destinations, host))
      throw new ImageRefused(`the URL is not allowed: ${notAllowedReason(host, this.o.destinations)}`);
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise<Uint8Array>((resolve, reject) => {
      const fail = (reason: string) => {
        req.destroy();
        reject(new ImageRefused(reason));
      };
      const req = mod.get(
        url,
        {
          ...(this.o.destinations === 'any' ? {} : { lookup: guardedLookup(this.o.destinations) }),
          timeout: this.o.timeoutMs,
          headers: { accept: 'image/*' },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && status < 400) return fail(`the URL answered a redirect (${status}); give the image's own URL`);
          if (status !== 200) return fail(`the URL answered ${status}`);
          const declared = Number(res.headers['content-length']);
          if (Number.isFinite(declared) && declared > o.maxBytes) return fail(`the image is larger than ${o.maxBytes} bytes`);
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > o.maxBytes) return fail(`the image is larger than ${o.maxBytes} bytes`);
            chunks.push(c);
          });
          res.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
          res.on('error', (err) => fail(`the download failed: ${err.message}`));
        },
      );
      const timer = setTimeout(() => fail(`no complete answer within ${this.o.timeoutMs} ms`), this.o.timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('timeout', () => fail(`no answer within ${this.o.timeoutMs} ms`));
      req.on('error', (err: NodeJS.ErrnoException) =>
        reject(
          new ImageRefused(
            err.code === 'EADDRNOTALLOWED' ? `the URL is not allowed: ${err.message}` : `the image could not be fetched: ${err.message}`,
          ),
        ),
      );
    });
  }
}
