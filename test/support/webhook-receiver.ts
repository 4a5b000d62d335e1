import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Received = Readonly<{ headers: IncomingHttpHeaders; rawBody: Buffer; body: string; path: string }>;
/** How to answer the n-th request (0-based): a status (and body), or never. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export type Receiver = Readonly<{
  url: string;
  received: Received[];
  answer: (fn: (r: Received, n: number) => Answer) => void;
  /** resolves when at least `n` requests have arrived (polls; for background work) */
  waitFor: (n: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}>;

/** A real HTTP receiver on 127.0.0.1, recording every request with its raw body. */
export async function startReceiver(initial: (r: Received, n: number) => Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  let answerFn = initial;
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const r: Received = { headers: req.headers, rawBody, body: rawBody.toString('utf8'), path: req.url ?? '/' };
      const n = received.length;
      received.push(r);
      const a = answerFn(r, n);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(a.status, { 'content-type': 'text/plain', ...(a.headers ?? {}) });
      res.end(a.body ?? '');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    answer: (fn) => {
      answerFn = fn;
    },
    waitFor: async (n, timeoutMs = 10_000) => {
      await eventually(() => received.length >= n, timeoutMs, `${n} requests (got ${received.length})`);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it holds: waiting for background work, never asserting on elapsed time. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}
