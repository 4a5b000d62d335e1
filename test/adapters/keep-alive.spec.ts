import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { expect } from 'chai';
import { HttpVoiceWebhookClient } from '../../infrastructure/calls/voice-webhook-client.js';
import { HttpWebhookSender } from '../../infrastructure/webhooks/http-sender.js';

/**
 * A server that closes a kept-alive connection as idle just as the client writes its next request on it: the
 * race that every keep-alive client meets (docs/webhooks.md#connections). The request on the closed socket was
 * never answered, so the clients send it again on a new connection; any other failure is reported as it is.
 */
describe('keep-alive clients and a server that closes idle connections', () => {
  let server: Server;
  let url = '';
  /** requests answered, by connection: the first request of a connection is answered, a later one resets it */
  let answered: number[] = [];
  let resetLater = true;
  before(async () => {
    let next = 0;
    const ids = new WeakMap<Socket, { id: number; served: number }>();
    server = createServer((req, res) => {
      const s = ids.get(req.socket) ?? { id: next++, served: 0 };
      ids.set(req.socket, s);
      req.resume();
      req.on('end', () => {
        if (s.served > 0 && resetLater) {
          req.socket.resetAndDestroy(); // closed while the request was on its way: never read, never answered
          return;
        }
        s.served++;
        answered.push(s.id);
        // no Keep-Alive hint: the client cannot know when the server gives up on an idle connection
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' }).end('{"text":"ok"}');
      });
    });
    server.keepAliveTimeout = 0;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => {
    answered = [];
    resetLater = true;
  });

  it('the webhook sender sends a request again on a new connection when its kept-alive one was closed', async () => {
    const sender = new HttpWebhookSender({ destinations: 'any' });
    try {
      const send = () => sender.send({ url, secret: 's', webhookId: 'wh_1', timestamp: 1, body: '{}', deadlineMs: 3000 });
      expect(await send()).to.include({ ok: true, httpStatus: 200 });
      expect(await send()).to.include({ ok: true, httpStatus: 200 });
      expect(answered).to.have.length(2);
      expect(answered[1]).to.not.equal(answered[0]); // the second on a new connection
    } finally {
      sender.close();
    }
  });

  it('the voice webhook client does the same for a voice turn', async () => {
    const client = new HttpVoiceWebhookClient('any');
    const ac = new AbortController();
    try {
      const turn = async () => {
        const r = await client.post({
          url,
          secret: 's',
          webhookId: 'wh_1',
          timestamp: 1,
          body: '{}',
          firstByteTimeoutMs: 3000,
          signal: ac.signal,
        });
        const out: unknown[] = [];
        for await (const o of r.objects) out.push(o);
        return out;
      };
      expect(await turn()).to.deep.equal([{ text: 'ok' }]);
      expect(await turn()).to.deep.equal([{ text: 'ok' }]);
      expect(answered).to.have.length(2);
      expect(answered[1]).to.not.equal(answered[0]);
    } finally {
      client.close();
    }
  });

  it('reports a reset of a new connection as a failure, without sending again', async () => {
    const sender = new HttpWebhookSender({ destinations: 'any' });
    const other = createServer((req) => req.socket.resetAndDestroy());
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const r = await sender.send({
        url: `http://127.0.0.1:${(other.address() as AddressInfo).port}/`,
        secret: 's',
        webhookId: 'wh_1',
        timestamp: 1,
        body: '{}',
        deadlineMs: 3000,
      });
      expect(r.ok).to.equal(false);
      expect((r as { errorMessage: string }).errorMessage).to.match(/^ECONNRESET/);
    } finally {
      sender.close();
      other.closeAllConnections();
      await new Promise<void>((r) => other.close(() => r()));
    }
  });
});
