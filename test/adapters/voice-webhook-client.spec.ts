import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { type VoiceTurnRequest, VoiceWebhookError } from '../../application/calls/voice-webhook.port.js';
import { HttpVoiceWebhookClient } from '../../infrastructure/calls/voice-webhook-client.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => unknown;

const secret = 'whsec_voice-secret';
const timestamp = 1_772_359_200; // 2026-03-01T10:00:00Z
const turnBody = JSON.stringify({ event: 'call.turn', call: { call_id: 'call_1' }, transcript: [{ role: 'user', content: 'héllo ☃' }] });

/** Resolves with what the promise rejected with, failing the test if it settled otherwise or not within `ms`. */
async function failure(p: Promise<unknown>, ms = 3000): Promise<VoiceWebhookError> {
  const outcome = await Promise.race([
    p.then(
      () => ({ settled: 'resolved' as const }),
      (err: unknown) => ({ settled: 'rejected' as const, err }),
    ),
    delay(ms).then(() => ({ settled: 'pending' as const })),
  ]);
  if (outcome.settled !== 'rejected') return expect.fail(`expected a VoiceWebhookError, the promise ${outcome.settled}`);
  expect(outcome.err).to.be.instanceOf(VoiceWebhookError);
  return outcome.err as VoiceWebhookError;
}

/** The next value of an iterator, or 'stalled' if none came within `ms`. */
const nextWithin = <T>(it: AsyncIterator<T>, ms: number) => Promise.race([it.next(), delay(ms).then(() => 'stalled' as const)]);

async function all(objects: AsyncIterable<unknown>) {
  const out: unknown[] = [];
  for await (const o of objects) out.push(o);
  return out;
}

describe('HttpVoiceWebhookClient against a loopback server', () => {
  let server: Server;
  let port = 0;
  let handler: Handler;
  let connections: Socket[] = [];
  let client: HttpVoiceWebhookClient;
  let ac: AbortController;

  const turn = (o: Partial<VoiceTurnRequest> = {}): VoiceTurnRequest => ({
    url: `http://127.0.0.1:${port}/voice?agent=a1`,
    secret,
    webhookId: 'whv_1',
    timestamp,
    body: turnBody,
    firstByteTimeoutMs: 3000,
    signal: ac.signal,
    ...o,
  });
  /** The first server-side socket opened from now on, and when it closes. */
  const nextConnection = () =>
    new Promise<{ closed: Promise<void> }>((resolve) =>
      server.once('connection', (s: Socket) => resolve({ closed: new Promise<void>((r) => s.once('close', () => r())) })),
    );

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void handler(req, res, Buffer.concat(chunks)));
    });
    server.on('connection', (s: Socket) => connections.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  beforeEach(() => {
    client = new HttpVoiceWebhookClient('public-or-loopback');
    ac = new AbortController();
    connections = [];
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"ok"}');
  });

  afterEach(() => {
    ac.abort();
    client.close();
    server.closeAllConnections();
  });

  after(() => new Promise<void>((r) => server.close(() => r())));

  it('POSTs the exact body, signed with the secret over `${timestamp}.${body}`', async () => {
    const seen: { method: string | undefined; url: string | undefined; headers: IncomingHttpHeaders; body: Buffer }[] = [];
    handler = (req, res, body) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"Hi"}');
    };
    const r = await client.post(turn());
    expect(await all(r.objects)).to.deep.equal([{ text: 'Hi' }]);

    expect(seen).to.have.length(1);
    const s = seen[0]!;
    expect(s.method).to.equal('POST');
    expect(s.url).to.equal('/voice?agent=a1');
    expect(s.body.toString('utf8')).to.equal(turnBody); // every byte arrived (content-length counts bytes, not characters)
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(s.body).digest('hex');
    expect(s.headers['x-webhook-signature']).to.equal(`sha256=${expected}`);
    expect(s.headers['x-webhook-timestamp']).to.equal(String(timestamp));
    expect(s.headers['x-webhook-id']).to.equal('whv_1');
    expect(s.headers['content-type']).to.equal('application/json');
    expect(s.headers.accept).to.include('application/x-ndjson');
    // and it does not verify under another secret
    expect(s.headers['x-webhook-signature']).to.not.equal(
      `sha256=${createHmac('sha256', 'whsec_other').update(`${timestamp}.`).update(s.body).digest('hex')}`,
    );
  });

  it('reads a plain JSON answer as one object, even when it spans lines and chunks', async () => {
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.write('{\n  "text": "Your table is booked.",\n');
      await delay(20);
      res.end('  "action": "end_call"\n}\n');
    };
    const r = await client.post(turn());
    expect(r.httpStatus).to.equal(200);
    expect(r.streaming).to.equal(false);
    expect(await all(r.objects)).to.deep.equal([{ text: 'Your table is booked.', action: 'end_call' }]);
  });

  it('yields nothing for an empty answer (a silent turn)', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    const r = await client.post(turn());
    expect(r.httpStatus).to.equal(204);
    expect(await all(r.objects)).to.deep.equal([]);
  });

  it('yields each NDJSON line as it arrives, before the server has finished the answer', async () => {
    const log: string[] = [];
    let release: () => void = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"text":"One moment.","interim":true}\n');
      log.push('server: first line');
      // if the client waited for the whole body, nobody would release the server: it goes on by itself
      // after a while, and the order below shows that the client read nothing before the end
      await Promise.race([released, delay(2000)]);
      log.push('server: last line');
      res.end('{"text":"Found it."}\n');
    };
    const r = await client.post(turn());
    expect(r.streaming).to.equal(true);
    const objects: unknown[] = [];
    for await (const o of r.objects) {
      objects.push(o);
      if (objects.length === 1) {
        log.push('client: first object');
        release();
      }
    }
    expect(objects).to.deep.equal([{ text: 'One moment.', interim: true }, { text: 'Found it.' }]);
    expect(log).to.deep.equal(['server: first line', 'client: first object', 'server: last line']);
  });

  it('reassembles NDJSON lines split across chunks, skips blank lines and reads a last line without a newline', async () => {
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"text":"Hel');
      await delay(20);
      res.write('lo."}\n\n  \r\n{"digits":"1"}\n{"te');
      await delay(20);
      res.end('xt":"Bye.","action":"end_call"}');
    };
    const r = await client.post(turn());
    expect(await all(r.objects)).to.deep.equal([{ text: 'Hello.' }, { digits: '1' }, { text: 'Bye.', action: 'end_call' }]);
  });

  it('counts the first-byte timeout only until the headers arrive', async () => {
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.flushHeaders();
      await delay(750); // well past the first-byte timeout
      res.end('{"text":"Slow, but answering."}\n');
    };
    const r = await client.post(turn({ firstByteTimeoutMs: 300 }));
    expect(await all(r.objects)).to.deep.equal([{ text: 'Slow, but answering.' }]);
  });

  it('gives up with kind `timeout` when nothing comes back in time, and aborts the request', async () => {
    let requests = 0;
    handler = () => {
      requests++; // and never answers
    };
    const connection = nextConnection();
    const started = performance.now();
    const e = await failure(client.post(turn({ firstByteTimeoutMs: 300 })));
    const elapsed = performance.now() - started;
    expect(e.kind).to.equal('timeout');
    expect(e.httpStatus).to.equal(null);
    expect(elapsed).to.be.at.least(290);
    expect(requests).to.equal(1);
    // the keep-alive socket would stay open for the answer; an aborted request closes it
    const closed = await Promise.race([(await connection).closed.then(() => 'closed'), delay(2000).then(() => 'open')]);
    expect(closed).to.equal('closed');
  });

  it('fails with kind `http` and the status on a non-2xx answer', async () => {
    handler = (_req, res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"text":"this is not spoken"}');
    const e = await failure(client.post(turn()));
    expect(e.kind).to.equal('http');
    expect(e.httpStatus).to.equal(500);
    expect(e.message).to.include('500');

    handler = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
    const redirect = await failure(client.post(turn()));
    expect(redirect.kind).to.equal('http');
    expect(redirect.httpStatus).to.equal(302);
  });

  it('fails with kind `malformed` on a line that is not JSON, after the lines before it', async () => {
    handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"text":"Fine."}\nnot json\n{"text":"never"}\n');
    const r = await client.post(turn());
    const it = r.objects[Symbol.asyncIterator]();
    expect(await it.next()).to.deep.equal({ value: { text: 'Fine.' }, done: false });
    const e = await failure(it.next());
    expect(e.kind).to.equal('malformed');
    expect(e.message).to.include('not json');
  });

  it('fails with kind `malformed` on a plain answer that is not JSON or is too large', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Hello there');
    expect((await failure(all((await client.post(turn())).objects))).kind).to.equal('malformed');

    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: 'a'.repeat(70_000) }));
    expect((await failure(all((await client.post(turn())).objects))).kind).to.equal('malformed');
  });

  it('ends the iteration when the turn is abandoned mid-stream, and closes the connection', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"text":"Let me think about that,","interim":true}\n'); // and keeps the answer open
    };
    const connection = nextConnection();
    const r = await client.post(turn());
    const it = r.objects[Symbol.asyncIterator]();
    expect(await nextWithin(it, 2000)).to.deep.equal({ value: { text: 'Let me think about that,', interim: true }, done: false });
    ac.abort();
    const after = await nextWithin(it, 2000).catch((err: unknown) => err);
    expect(after).to.not.equal('stalled');
    if (after instanceof Error) {
      expect(after).to.be.instanceOf(VoiceWebhookError);
      expect((after as VoiceWebhookError).kind).to.equal('network');
    } else expect(after).to.deep.equal({ value: undefined, done: true });
    const closed = await Promise.race([(await connection).closed.then(() => 'closed'), delay(2000).then(() => 'open')]);
    expect(closed).to.equal('closed');
  });

  it('gives up at once when the turn is abandoned before the answer', async () => {
    let arrived: () => void = () => {};
    const request = new Promise<void>((r) => {
      arrived = r;
    });
    handler = () => arrived(); // and never answers
    const started = performance.now();
    const p = client.post(turn({ firstByteTimeoutMs: 5000 }));
    await request;
    ac.abort();
    const e = await failure(p, 2000);
    expect(e.kind).to.equal('network');
    expect(performance.now() - started).to.be.below(2500);
  });

  it('sends nothing for a turn abandoned before it was posted', async () => {
    ac.abort();
    const e = await failure(client.post(turn({ firstByteTimeoutMs: 300 })));
    expect(e.kind).to.equal('network');
    await delay(50);
    expect(connections).to.have.length(0);
  });

  it('refuses destinations the policy does not allow, with kind `not_allowed`, without connecting', async () => {
    const publicOnly = new HttpVoiceWebhookClient('public');
    try {
      for (const url of [`http://127.0.0.1:${port}/voice`, `http://[::ffff:127.0.0.1]:${port}/voice`, `http://localhost:${port}/voice`]) {
        const e = await failure(publicOnly.post(turn({ url })));
        expect(e.kind, url).to.equal('not_allowed');
      }
    } finally {
      publicOnly.close();
    }
    for (const url of ['http://10.0.0.7/voice', 'http://169.254.169.254/latest/meta-data', 'ftp://127.0.0.1/voice', 'not a url']) {
      const e = await failure(client.post(turn({ url })));
      expect(e.kind, url).to.equal('not_allowed');
    }
    await delay(50);
    expect(connections).to.have.length(0);
  });
});
