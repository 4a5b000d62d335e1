import type { Request, Response } from 'express';
import type { Capability } from '../capabilities/capability.js';
import { buildConsole, type ConsoleBundle, type ConsoleFile } from './bundle.js';

/**
 * What the console page may do (docs/console.md): its own script and styles only, requests to this server only,
 * never framed, no referrer sent anywhere.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/** The site's icon (a 32-pixel PNG), for the console and every other page of this server. */
const FAVICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAcElEQVR42mNgwAHMDRb/pyZmIAZQ21KSHEMvy7E6gt6WYzhiZDtgoCyHO2LIOwAE6O4AfIDmDiAG0MwBpACqO4AcMOoAqjmAEjAaBcPHAQNeDgyKknBQ1AWDojYcbZAMm3bhaLN88HTNBkXndKC65wCv6tTwJgq0dgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * The web console at `/console` (docs/console.md): built once per process, in memory, on the first request, and
 * served as static files by the API process itself. The page needs no key to load; everything it shows comes
 * from the public API with the key the person signs in with.
 */
export const webConsole = {
  name: 'console',
  routes: {
    public: (api) => {
      let bundle: Promise<ConsoleBundle> | null = null;
      const load = () => {
        bundle ??= buildConsole().catch((err: unknown) => {
          bundle = null; // a failed build is tried again on the next request
          throw err;
        });
        return bundle;
      };
      const send = (req: Request, res: Response, f: ConsoleFile, cache: string) => {
        res.set({ ...PAGE_HEADERS, 'content-type': f.type, 'cache-control': cache, etag: f.etag });
        if (req.headers['if-none-match'] === f.etag) {
          res.status(304).end();
          return;
        }
        res.send(f.body);
      };
      api.router.get('/favicon.ico', (_req, res) => {
        res.set({ 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' }).send(FAVICON);
      });
      api.router.get(['/console', '/console/', '/console/index.html'], async (req, res) => {
        const f = (await load()).get('index.html') as ConsoleFile;
        send(req, res, f, 'no-cache');
      });
      api.router.get('/console/:file', async (req, res, next) => {
        const f = (await load()).get(String(req.params.file));
        if (!f) {
          next();
          return;
        }
        // names carry their content hash: a file never changes under its name
        send(req, res, f, 'public, max-age=31536000, immutable');
      });
    },
  },
} as const satisfies Capability;
