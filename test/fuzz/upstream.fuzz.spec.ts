import { createHmac } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { FAR_END, FAST_VOICE_ENV, voiceLine } from '../support/calls.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';
import { eventually, startReceiver } from '../support/webhook-receiver.js';

/**
 * The upstream side of the fuzz (docs/input-rules.md#what-upstream-servers-answer): a webhook receiver and a voice
 * webhook that answer hostile things (NUL bytes, lone surrogates, invalid UTF-8, huge and slow bodies, invalid
 * JSON, odd status lines and headers), and carrier and chat-platform callbacks that carry them, while another
 * account's deliveries are timed. Asserts: no 5xx, every hostile delivery recorded (none stuck without an attempt),
 * every call ended, no work isolated, the reactors still answering, and every delivery of the other account
 * arriving. Prints the other account's delivery times.
 *
 * `npm test` answers 40 hostile answers; `FUZZ_UPSTREAM_RUNS=400 npx mocha test/fuzz/upstream.fuzz.spec.ts` more.
 */
const RUNS = Number(process.env.FUZZ_UPSTREAM_RUNS ?? 40);
const SEED = process.env.FUZZ_SEED === undefined ? 4242 : Number(process.env.FUZZ_SEED);
const APP_SECRET = 'fuzz-chat-app-secret';

type Hostile =
  | { kind: 'nul'; status: number }
  | { kind: 'surrogate-escape'; status: number }
  | { kind: 'cesu-surrogate'; status: number }
  | { kind: 'invalid-utf8'; status: number; bytes: number[] }
  | { kind: 'huge'; status: number; megabytes: number }
  | { kind: 'slow'; status: number }
  | { kind: 'invalid-json' }
  | { kind: 'ndjson-nul' }
  | { kind: 'odd-status-line' }
  | { kind: 'odd-headers' }
  | { kind: 'deep-json' }
  | { kind: 'close-mid-body' };

const status = fc.constantFrom(200, 201, 400, 429, 500, 503);
const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  fc.record({ kind: fc.constant('nul' as const), status }),
  fc.record({ kind: fc.constant('surrogate-escape' as const), status }),
  fc.record({ kind: fc.constant('cesu-surrogate' as const), status }),
  fc.record({
    kind: fc.constant('invalid-utf8' as const),
    status,
    bytes: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 40 }),
  }),
  fc.record({ kind: fc.constant('huge' as const), status, megabytes: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('slow' as const), status }),
  fc.record({ kind: fc.constant('invalid-json' as const) }),
  fc.record({ kind: fc.constant('ndjson-nul' as const) }),
  fc.record({ kind: fc.constant('odd-status-line' as const) }),
  fc.record({ kind: fc.constant('odd-headers' as const) }),
  fc.record({ kind: fc.constant('deep-json' as const) }),
  fc.record({ kind: fc.constant('close-mid-body' as const) }),
);

/** A raw HTTP peer: reads one request, writes the bytes of a hostile answer, closes. */
async function hostilePeer(answers: readonly Hostile[]): Promise<{ url: string; served: () => number; close: () => Promise<void> }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'))?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      socket.off('data', onData);
      void answer(socket, answers[n++ % answers.length]!);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    served: () => n,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const head = (status: number, type: string, extra = '') => `HTTP/1.1 ${status} X\r\ncontent-type: ${type}\r\nconnection: close\r\n${extra}`;
const send = (socket: Socket, status: number, type: string, body: Buffer, extra = '') => {
  socket.end(Buffer.concat([Buffer.from(`${head(status, type, extra)}content-length: ${body.length}\r\n\r\n`, 'latin1'), body]));
};

async function answer(socket: Socket, h: Hostile): Promise<void> {
  switch (h.kind) {
    case 'nul':
      return send(socket, h.status, 'application/json', Buffer.from('{"text":"a\u0000b"}\u0000tail', 'utf8'));
    case 'surrogate-escape':
      return send(socket, h.status, 'application/json', Buffer.from('{"text":"\\ud800 lone","\\udfff":"\\u0000"}', 'utf8'));
    case 'cesu-surrogate':
      return send(socket, h.status, 'text/plain', Buffer.from([0x6f, 0x6b, 0xed, 0xa0, 0x80, 0x21]));
    case 'invalid-utf8':
      return send(socket, h.status, 'text/plain; charset=utf-8', Buffer.from(h.bytes));
    case 'huge': {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      socket.write(`${head(h.status, 'text/plain')}content-length: ${h.megabytes * 1024 * 1024}\r\n\r\n`, 'latin1');
      for (let i = 0; i < h.megabytes * 16 && !socket.destroyed; i++) {
        if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
      }
      socket.end();
      return;
    }
    case 'slow': {
      socket.write(`${head(h.status, 'application/json')}transfer-encoding: chunked\r\n\r\n`, 'latin1');
      // one byte every 300 ms: longer than any deadline of the platform before it ends
      for (let i = 0; i < 40 && !socket.destroyed; i++) {
        socket.write('1\r\n \r\n');
        await new Promise((r) => setTimeout(r, 300));
      }
      socket.end('0\r\n\r\n');
      return;
    }
    case 'invalid-json':
      return send(socket, 200, 'application/json', Buffer.from('{"text": "unterminated', 'utf8'));
    case 'ndjson-nul':
      return send(socket, 200, 'application/x-ndjson', Buffer.from('{"text":"one\\u0000"}\n{"text":"\\ud83d"}\n{not json}\n', 'utf8'));
    case 'odd-status-line':
      socket.end(
        Buffer.concat([
          Buffer.from('HTTP/1.1 200 '),
          Buffer.from([0xff, 0xfe, 0x80]),
          Buffer.from('\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok'),
        ]),
      );
      return;
    case 'odd-headers':
      return send(
        socket,
        503,
        'application/json',
        Buffer.from('{"text":"retry"}'),
        `retry-after: ${'9'.repeat(30)}\r\nx-odd: ${'\u00ff'.repeat(200)}\r\ncontent-type: text/html\r\nset-cookie: a=b\r\n`,
      );
    case 'deep-json':
      return send(socket, 200, 'application/json', Buffer.from(`${'{"a":'.repeat(500)}1${'}'.repeat(500)}`));
    case 'close-mid-body':
      socket.write(`${head(200, 'application/json')}content-length: 1000\r\n\r\n{"text":"cut`, 'latin1');
      socket.destroy();
      return;
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

describe('fuzz: hostile upstream answers and callbacks, with another account timed', function () {
  this.timeout(240_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp({ ...FAST_VOICE_ENV, WEBHOOK_DELIVERY_TIMEOUT_SECONDS: '2', CHATAPP_APP_SECRET: APP_SECRET });
  });
  after(() => app?.close());

  it('answers no 5xx, records every hostile answer storably, ends every call, and delivers every other-account delivery', async () => {
    const answers = fc.sample(hostile, { numRuns: RUNS, seed: SEED });
    const peer = await hostilePeer(answers);
    // the neighbour's receiver notes when each delivery arrives
    const arrivedAt = new Map<string, number>();
    const healthy = await startReceiver((r) => {
      const data = (JSON.parse(r.body) as { data?: { agentId?: string; id?: string } }).data;
      const id = data?.agentId ?? data?.id;
      if (id && !arrivedAt.has(id)) arrivedAt.set(id, Date.now());
      return { status: 200, body: 'ok' };
    });
    const statuses: { what: string; status: number }[] = [];
    const noted = <T extends { status: number }>(what: string, r: T) => {
      statuses.push({ what, status: r.status });
      return r;
    };
    try {
      // the hostile account: every event to the hostile peer, and an agent whose voice turns go to it too
      // a silent agent (every turn's answer is hostile) ends its calls at the shortest silence allowed
      const h = await voiceLine(app, { greeting: '', maxSilenceMs: 10_000 }, 'Hostile upstream');
      noted('master webhook', await app.call('POST', '/v1/webhooks', { key: h.key, body: { url: peer.url, events: ['*'] } }));
      noted(
        'voice webhook',
        await app.call('POST', `/v1/agents/${h.agentId}/webhook`, { key: h.key, body: { url: peer.url, timeout: 5 } }),
      );
      // the other account: a healthy receiver, timed
      const o = await app.newAccount('Timed neighbour');
      noted(
        'neighbour webhook',
        await app.call('POST', '/v1/webhooks', { key: o.apiKey, body: { url: healthy.url, events: ['agent.created'] } }),
      );

      const sentAt = new Map<string, number>();
      let running = true;
      const neighbour = (async () => {
        for (let i = 0; running; i++) {
          const r = noted('neighbour agent', await app.call('POST', '/v1/agents', { key: o.apiKey, body: { name: `timed ${i}` } }));
          if (r.status === 200) sentAt.set(r.body.id, Date.now());
          await new Promise((res) => setTimeout(res, 150));
        }
      })();

      const hostileWork = async () => {
        const calls: string[] = [];
        for (let i = 0; i < Math.max(2, Math.ceil(RUNS / 10)); i++) {
          const c = noted(
            'call',
            await app.call('POST', '/v1/calls', { key: h.key, body: { agentId: h.agentId, toNumber: FAR_END.talker } }),
          );
          if (c.status === 200) calls.push(c.body.id);
        }
        for (let i = 0; i < Math.ceil(RUNS / 2); i++) {
          noted('hostile agent', await app.call('POST', '/v1/agents', { key: h.key, body: { name: `hostile ${i}` } }));
          if (i % 5 === 0) noted('test send', await app.call('POST', '/v1/webhooks/test', { key: h.key }));
        }
        // carrier callbacks carrying hostile text: the sandbox carrier's inbound report
        const inbound = (body: unknown) =>
          app.call('POST', '/sandbox/inbound', {
            key: ADMIN_TOKEN,
            body: typeof body === 'string' ? body : JSON.stringify(body),
            headers: { 'content-type': 'application/json' },
          });
        for (const text of ['a\u0000b', '\ud800', 'ok \ud83d\ude00', '\u202e\ufeff', 'x'.repeat(5000)])
          noted('carrier callback', await inbound({ from: '+14155550123', to: h.phoneNumber, body: text }));
        noted('carrier callback', await inbound('{"from": "+14155550123", "to": '));
        noted('carrier callback', await inbound(`{"from":"+14155550123","to":"${h.phoneNumber}","body":"\\u0000"}`));
        // chat-platform callbacks, signed, carrying the same
        for (const text of ['a\u0000b', '\\ud800', 'fine']) {
          const raw = `{"entry":[{"changes":[{"field":"messages","value":{"messages":[{"from":"14155550123","id":"wamid.${text.length}","timestamp":"1700000000","type":"text","text":{"body":"${text}"}}]}}]}]}`;
          const sig = `sha256=${createHmac('sha256', APP_SECRET).update(raw).digest('hex')}`;
          noted(
            'chat callback',
            await app.call('POST', '/integrations/chatapp/webhook', {
              body: raw.replace('a\u0000b', 'a\\u0000b'),
              headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig },
            }),
          );
        }
        return calls;
      };
      const calls = await hostileWork();
      for (const id of calls)
        await eventually(
          async () => (await app.call('GET', `/v1/calls/${id}`, { key: h.key })).body?.status !== 'in-progress',
          90_000,
          `call ${id} ended`,
        );
      running = false;
      await neighbour;

      // no 5xx anywhere
      const fives = statuses.filter((s) => s.status >= 500);
      expect(fives, JSON.stringify(fives)).to.deep.equal([]);
      // the hostile account's deliveries each have their attempt recorded: none pending with no attempt
      await eventually(
        async () => {
          const r = noted('delivery log', await app.call('GET', '/v1/webhooks/deliveries?limit=100', { key: h.key }));
          if (r.status !== 200) throw new Error(`delivery log: ${r.status} ${JSON.stringify(r.body)}`);
          const items = r.body.items as { attemptCount: number }[];
          return items.length > 0 && items.every((d) => d.attemptCount >= 1);
        },
        60_000,
        'every hostile delivery attempted and recorded',
      );
      // every delivery of the neighbour arrives, and its times are printed
      await eventually(() => [...sentAt.keys()].every((id) => arrivedAt.has(id)), 60_000, "every neighbour's delivery arrives");
      const times = [...sentAt].map(([id, t]) => arrivedAt.get(id)! - t);
      console.log(
        `      upstream fuzz: ${RUNS} hostile answers (${peer.served()} requests served), ${calls.length} calls; neighbour's ${times.length} deliveries: p50 ${pct(times, 50)} ms, p99 ${pct(times, 99)} ms, max ${Math.max(...times)} ms`,
      );
      // no reactor is stuck: test sends of both accounts still answer with their outcome
      expect(noted('final test send', await app.call('POST', '/v1/webhooks/test', { key: o.apiKey })).body.success).to.equal(true);
      expect(noted('final hostile test send', await app.call('POST', '/v1/webhooks/test', { key: h.key })).status).to.equal(200);
      // and nothing had to be isolated: every hostile answer was stored
      const isolated = await app.rt.database.db
        .selectFrom('isolated_work' as never)
        .selectAll()
        .execute();
      expect(isolated).to.deep.equal([]);
    } finally {
      await peer.close();
      await healthy.close();
    }
  });
});
