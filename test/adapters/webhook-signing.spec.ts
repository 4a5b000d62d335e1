import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { isDisallowedAddress, WebhookUrlPolicy } from '../../infrastructure/http-client/address-policy.js';
import { signature, webhookHeaders } from '../../infrastructure/http-client/signing.js';
import { HttpWebhookSender } from '../../infrastructure/webhooks/http-sender.js';
import { verifyWebhookSignature } from '../../infrastructure/webhooks/verify.js';

/** A loopback HTTP server that answers 200 and counts the requests that reached it. */
async function countingReceiver() {
  const receiver = {
    hits: 0,
    server: createServer((_q, s) => {
      receiver.hits++;
      s.end('ok');
    }),
    port: 0,
  };
  await new Promise<void>((r) => receiver.server.listen(0, '127.0.0.1', r));
  receiver.port = (receiver.server.address() as AddressInfo).port;
  return receiver;
}

describe('webhook signing and verification', () => {
  const secret = 'whsec_test-secret';
  const body = JSON.stringify({ event: 'agent.message', data: { message: 'héllo ☃' } });
  const ts = 1_767_225_600; // 2026-01-01T00:00:00Z
  const headers = webhookHeaders({ secret, webhookId: 'whd_1', timestamp: ts, body: Buffer.from(body) });

  it('signs `${timestamp}.${rawBody}` with HMAC-SHA256 as sha256=<lowercase hex>', () => {
    const independent = createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
    expect(headers['x-webhook-signature']).to.equal(`sha256=${independent}`);
    expect(signature(secret, ts, body)).to.equal(`sha256=${independent}`);
    expect(headers['x-webhook-timestamp']).to.equal(String(ts));
    expect(headers['x-webhook-id']).to.equal('whd_1');
  });

  it('accepts a genuine delivery (string or bytes, node headers or fetch Headers)', () => {
    expect(verifyWebhookSignature(secret, headers, body, 300, ts)).to.equal(true);
    expect(verifyWebhookSignature(secret, headers, Buffer.from(body), 300, ts + 299)).to.equal(true);
    expect(verifyWebhookSignature(secret, new Headers(headers), body, 300, ts - 300)).to.equal(true);
    expect(
      verifyWebhookSignature(
        secret,
        { 'X-Webhook-Timestamp': String(ts), 'X-Webhook-Signature': headers['x-webhook-signature'] },
        body,
        300,
        ts,
      ),
    ).to.equal(true);
  });

  it('rejects a changed body, another secret, a stale or future timestamp, a missing header', () => {
    expect(verifyWebhookSignature(secret, headers, `${body} `, 300, ts)).to.equal(false);
    expect(verifyWebhookSignature('whsec_other', headers, body, 300, ts)).to.equal(false);
    expect(verifyWebhookSignature(secret, headers, body, 300, ts + 301)).to.equal(false);
    expect(verifyWebhookSignature(secret, headers, body, 300, ts - 301)).to.equal(false);
    expect(verifyWebhookSignature(secret, { ...headers, 'x-webhook-timestamp': String(ts + 1) }, body, 300, ts)).to.equal(false);
    expect(verifyWebhookSignature(secret, { 'x-webhook-timestamp': String(ts) }, body, 300, ts)).to.equal(false);
    expect(verifyWebhookSignature(secret, { ...headers, 'x-webhook-signature': 'sha256=00' }, body, 300, ts)).to.equal(false);
  });

  it('uses the default 300 s tolerance against the real clock', () => {
    const now = Math.floor(Date.now() / 1000);
    const h = webhookHeaders({ secret, webhookId: 'x', timestamp: now, body: Buffer.from(body) });
    expect(verifyWebhookSignature(secret, h, body)).to.equal(true);
  });
});

describe('webhook address policy', () => {
  for (const ip of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '224.0.0.1',
  ]) {
    it(`refuses ${ip}`, () => expect(isDisallowedAddress(ip)).to.equal(true));
  }
  for (const ip of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    it(`allows ${ip}`, () => expect(isDisallowedAddress(ip)).to.equal(false));
  }

  it('checks the scheme always, and names that resolve to private addresses outside sandbox', async () => {
    const live = new WebhookUrlPolicy('public', async (h) => (h === 'internal.example.com' ? ['10.0.0.7'] : ['93.184.215.14']));
    expect(await live.check('https://hooks.example.com/in')).to.equal(null);
    expect(await live.check('https://internal.example.com/in')).to.match(/10\.0\.0\.7/);
    expect(await live.check('http://localhost:3000/in')).to.match(/not a public host/);
    expect(await live.check('ftp://hooks.example.com/in')).to.match(/http or https/);
    const sandbox = new WebhookUrlPolicy('public-or-loopback');
    expect(await sandbox.check('http://127.0.0.1:3000/in')).to.equal(null);
    expect(await sandbox.check('file:///etc/passwd')).to.match(/http or https/);
  });

  it('refuses, at send time, a host name that resolves to a loopback address', async () => {
    const receiver = await countingReceiver();
    const { server, port } = receiver;
    const strict = new HttpWebhookSender({ destinations: 'public' });
    const open = new HttpWebhookSender({ destinations: 'any' });
    try {
      const req = { secret: 's', webhookId: 'w', timestamp: 1, body: '{}', deadlineMs: 2000 };
      const byName = await strict.send({ ...req, url: `http://localhost:${port}/` });
      expect(byName.ok).to.equal(false);
      expect(byName.ok === false && byName.errorMessage).to.match(/loopback, private or link-local/);
      const byIp = await strict.send({ ...req, url: `http://127.0.0.1:${port}/` });
      expect(byIp.ok).to.equal(false);
      expect(receiver.hits).to.equal(0);
      expect((await open.send({ ...req, url: `http://localhost:${port}/` })).ok).to.equal(true);
      expect(receiver.hits).to.equal(1);
    } finally {
      strict.close();
      open.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('normalises the host before the check: case and the trailing dot of a fully qualified name', async () => {
    const live = new WebhookUrlPolicy('public', async () => ['93.184.215.14']);
    for (const url of [
      'http://LOCALHOST.:3000/x',
      'http://localhost..:3000/x',
      'http://Api.LocalHost./x',
      'http://127.0.0.1./x',
      'http://0x7f.1/x',
      'http://[::1]/x',
      'http://INTRANET./x',
    ]) {
      expect(await live.check(url), url).to.be.a('string');
    }
    expect(await live.check('https://HOOKS.Example.COM./in')).to.equal(null);
  });

  it('allows loopback receivers in sandbox mode and nothing else internal', async () => {
    const sandbox = new WebhookUrlPolicy('public-or-loopback', async (h) =>
      h === 'internal.example.com' ? ['10.0.0.7'] : ['93.184.215.14'],
    );
    for (const url of [
      'http://127.0.0.1:3000/in',
      'http://localhost:3000/in',
      'http://LOCALHOST.:3000/in',
      'http://[::1]:3000/in',
      'https://hooks.example.com/in',
    ]) {
      expect(await sandbox.check(url), url).to.equal(null);
    }
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://[fe80::1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'https://internal.example.com/in',
    ]) {
      expect(await sandbox.check(url), url).to.match(/private or link-local/);
    }
    const any = new WebhookUrlPolicy('any');
    expect(await any.check('http://169.254.169.254/latest/meta-data/')).to.equal(null);
  });

  it('refuses, at send time in sandbox mode, private addresses but delivers to loopback', async () => {
    const receiver = await countingReceiver();
    const { server, port } = receiver;
    const sandbox = new HttpWebhookSender({ destinations: 'public-or-loopback' });
    const live = new HttpWebhookSender({ destinations: 'public' });
    try {
      const req = { secret: 's', webhookId: 'w', timestamp: 1, body: '{}', deadlineMs: 2000 };
      const meta = await sandbox.send({ ...req, url: 'http://169.254.169.254/latest/meta-data/' });
      expect(meta.ok === false && meta.errorMessage).to.match(/sandbox mode allows loopback only/);
      expect((await sandbox.send({ ...req, url: `http://localhost:${port}/` })).ok).to.equal(true);
      // refused by the address guard, or not resolved at all where the resolver knows no `localhost.`
      expect((await live.send({ ...req, url: `http://LOCALHOST.:${port}/x` })).ok).to.equal(false);
      expect(receiver.hits).to.equal(1);
    } finally {
      sandbox.close();
      live.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
