import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeRequest = Readonly<{ method: string; path: string; query: URLSearchParams; authorization: string | undefined; body: any }>;

/**
 * A local HTTP server that answers as the chat platform's cloud API does, for what a mock of its published API
 * description cannot show (docs/testing.md#contract-mocks): its refusals with their codes, one id per message, pages
 * that follow each other. One business account with three numbers over two pages, numbers to register (with their
 * six-digit pin, as the description requires), templates to submit, messages to send. A token starting with `invalid`
 * is refused (190); a send to 447700900100 is refused (100); `failNext(n)` answers the next n requests 500. Every
 * request is recorded. Its shapes are the description's (test/contracts/chatapp/).
 */
export async function startFakeChatPlatform(o: { businessAccountId?: string; apiVersion?: string } = {}) {
  const ba = o.businessAccountId ?? '210000000000001';
  const version = o.apiVersion ?? 'v23.0';
  const numbers = [
    { id: '310000000000011', display_phone_number: '+44 7700 900501', verified_name: 'Cloud Coffee' },
    { id: '310000000000012', display_phone_number: '447700900502', verified_name: 'Cloud Coffee Support' },
    { id: '310000000000013', display_phone_number: '+1 204-555-0100', verified_name: 'Cloud Dual' },
  ];
  const requests: FakeRequest[] = [];
  let failures = 0;
  let seq = 0;
  const error = (status: number, code: number, message: string) => ({
    status,
    body: { error: { message, type: 'OAuthException', code, fbtrace_id: 'Af' } },
  });

  const answer = (r: FakeRequest): { status: number; body: unknown } => {
    if (failures > 0) {
      failures -= 1;
      return { status: 500, body: { error: { message: 'An unknown error occurred', code: 1 } } };
    }
    const token = r.authorization?.replace(/^Bearer /, '') ?? '';
    if (!token || token.startsWith('invalid')) return error(401, 190, 'Error validating access token: Session has expired.');
    const [, v, id, edge] = r.path.split('/');
    if (v !== version) return error(400, 2500, 'Unknown path components');
    if (r.method === 'GET' && id === ba && !edge) return { status: 200, body: { id: ba, name: 'Cloud Coffee Ltd' } };
    if (r.method === 'GET' && id === ba && edge === 'phone_numbers') {
      const after = r.query.get('after');
      return after === 'page2'
        ? { status: 200, body: { data: numbers.slice(2), paging: { cursors: { before: 'page2', after: 'end' } } } }
        : {
            status: 200,
            body: {
              data: numbers.slice(0, 2),
              paging: { cursors: { before: 'start', after: 'page2' }, next: `https://fake/${version}/${ba}/phone_numbers?after=page2` },
            },
          };
    }
    if (r.method === 'POST' && edge === 'register') {
      if (!numbers.some((n) => n.id === id)) return error(400, 100, `Unsupported post request. Object with ID '${id}' does not exist`);
      if (!/^\d{6}$/.test(String(r.body?.pin ?? ''))) return error(400, 100, '(#100) The parameter pin is required.');
      return { status: 200, body: { success: true } };
    }
    if (r.method === 'POST' && id === ba && edge === 'message_templates')
      return { status: 200, body: { id: `5${++seq}`, status: 'PENDING', category: r.body?.category } };
    if (r.method === 'POST' && edge === 'messages') {
      if (r.body?.to === '447700900100') return error(400, 100, '(#100) Invalid parameter');
      return {
        status: 200,
        body: {
          messaging_product: r.body?.messaging_product,
          contacts: [{ input: r.body?.to, wa_id: r.body?.to }],
          messages: [{ id: `wamid.FAKE${++seq}` }],
        },
      };
    }
    return error(400, 100, `Unsupported ${r.method.toLowerCase()} request. Object with ID '${id}' does not exist`);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        authorization: req.headers.authorization,
        body: text ? JSON.parse(text) : null,
      };
      requests.push(r);
      const a = answer(r);
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${version}`;
  return {
    baseUrl,
    businessAccountId: ba,
    numbers: numbers.map((n) => ({ phoneNumberId: n.id, verifiedName: n.verified_name })),
    requests,
    failNext: (n: number) => {
      failures = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
