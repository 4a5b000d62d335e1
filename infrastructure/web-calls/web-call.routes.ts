import { readFileSync } from 'node:fs';
import type { Response } from 'express';
import type { Api } from '../http/api.js';
import { sendError } from '../http/errors.js';
import { projectPath } from '../project-root.js';
import { WEB_CALL_SOCKET_PATH } from './web-call-gateway.js';

/** The browser side, as files in `public/` beside this one (docs/calls.md#the-browser-sdk), read once on first request. */
const FILES = {
  sdk: { file: 'web-call.js', type: 'text/javascript; charset=utf-8' },
  worklet: { file: 'web-call-worklet.js', type: 'text/javascript; charset=utf-8' },
  page: { file: 'web-call.html', type: 'text/html; charset=utf-8' },
  pageScript: { file: 'web-call-demo.js', type: 'text/javascript; charset=utf-8' },
} as const;

const cache = new Map<string, Buffer>();
const read = (file: string) => {
  let body = cache.get(file);
  if (!body) {
    body = readFileSync(projectPath('infrastructure', 'web-calls', 'public', file));
    cache.set(file, body);
  }
  return body;
};

/**
 * The demo page's policy: its own scripts only (no inline script, no eval), its own API and socket, nothing
 * framed. It handles an API key, so nothing else may run in it.
 */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function serve(res: Response, f: (typeof FILES)[keyof typeof FILES], o: { crossOrigin?: boolean; policy?: string } = {}): void {
  res.setHeader('Content-Type', f.type);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // another site's page may import the SDK (a module script, and its worklet, are fetched with CORS)
  if (o.crossOrigin) res.setHeader('Access-Control-Allow-Origin', '*');
  if (o.policy) {
    res.setHeader('Content-Security-Policy', o.policy);
    res.setHeader('Referrer-Policy', 'no-referrer');
  }
  res.send(read(f.file));
}

/**
 * The browser SDK (`/sdk/web-call.js` and its audio worklet), the demo page (`/web-call`), and a plain GET of the
 * socket's path, which answers 426: it takes WebSocket connections only. These are files, not API operations:
 * they are not in the OpenAPI document.
 */
export function webCallRoutes(api: Api): void {
  const r = api.router;
  r.get('/sdk/web-call.js', (_req, res) => serve(res, FILES.sdk, { crossOrigin: true }));
  r.get('/sdk/web-call-worklet.js', (_req, res) => serve(res, FILES.worklet, { crossOrigin: true }));
  r.get(['/web-call', '/web-call/'], (_req, res) => serve(res, FILES.page, { policy: PAGE_POLICY }));
  r.get('/web-call/demo.js', (_req, res) => serve(res, FILES.pageScript));
  r.get(WEB_CALL_SOCKET_PATH, (_req, res) => {
    res.setHeader('Upgrade', 'websocket');
    sendError(res, 'WEBSOCKET_REQUIRED', `${WEB_CALL_SOCKET_PATH} takes WebSocket connections only`);
  });
}
