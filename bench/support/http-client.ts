import { Agent, request } from 'node:http';

/* The benches' HTTP client (keep-alive, loopback only). */

export type Reply = { status: number; body: any };
export type Call = (method: string, path: string, o?: { key?: string; body?: unknown }) => Promise<Reply>;

/**
 * Requests on keep-alive connections. Each scenario starts on new connections (`fresh`): a connection left idle
 * between scenarios is closed by the server's keep-alive timeout, and a request written on it just as it closes
 * fails with ECONNRESET without having reached the server. Such a request is sent again (at most 3 times), and
 * counted.
 */
export function client(base: string): { call: Call; fresh: () => void; close: () => void; resets: () => number } {
  let agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const url = new URL(base);
  let resets = 0;
  const attempt = (method: string, path: string, o: Parameters<Call>[2] & {}, left: number): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text ? JSON.parse(text) : null;
            } catch {
              /* not JSON */
            }
            resolve({ status: res.statusCode ?? 0, body });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (left > 0 && req.reusedSocket && err.code === 'ECONNRESET') {
          resets++;
          resolve(attempt(method, path, o, left - 1));
        } else reject(err);
      });
      req.end(payload);
    });
  return {
    call: (method, path, o = {}) => attempt(method, path, o, 3),
    fresh: () => {
      agent.destroy();
      agent = new Agent({ keepAlive: true, maxSockets: 256 });
    },
    close: () => agent.destroy(),
    resets: () => resets,
  };
}
