import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { accountStream } from '../../domain/account/account.decider.js';
import { MAX_AMOUNT_MICROS, MAX_BALANCE_MICROS } from '../../domain/account/money.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/http.js';

/** Input PostgreSQL cannot store, or the server cannot read, is refused at the edge in the error shape (docs/input-rules.md). */
describe('hostile input at the edge', () => {
  let app: TestApp;
  let key: string;
  let accountId: string;
  before(async () => {
    app = await startTestApp();
    ({ apiKey: key, accountId } = await app.newAccount('Acme'));
  });
  after(() => app.close());

  /**
   * Runs `send` and checks that no event was recorded for the account and the agent list is unchanged. (Not the
   * log's head: on EventStoreDB the log is shared by the whole run, and other apps' workers may append to it.)
   */
  const nothingWritten = async <T>(send: () => Promise<T>): Promise<T> => {
    const head = await app.rt.store.headCheckpoint();
    const agents = await app.call('GET', '/v1/agents', { key });
    const r = await send();
    const since = await app.rt.store.readAll({ after: head, maxCount: 100_000 });
    expect(since.filter((e) => e.metadata.accountId === accountId).map((e) => e.type)).to.deep.equal([]);
    expect((await app.call('GET', '/v1/agents', { key })).body).to.deep.equal(agents.body);
    return r;
  };
  const raw = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${app.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body } : {}),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any, requestId: res.headers.get('x-request-id') }));

  const expectValidation = (r: { status: number; body: any }, loc: (string | number)[]) => {
    expect(r.status).to.equal(422);
    expect(r.body.error.code).to.equal('VALIDATION_ERROR');
    expect(r.body.request_id).to.be.a('string').and.not.equal('');
    expect(r.body.detail.map((d: { loc: unknown }) => d.loc)).to.deep.include(loc);
  };
  const expectBadRequest = (r: { status: number; body: any; requestId?: string | null }) => {
    expect(r.status).to.equal(400);
    expect(r.body.error).to.include({ code: 'BAD_REQUEST', type: 'invalid_request_error' });
    expect(r.body.error.details).to.be.an('array');
    expect(r.body.request_id).to.be.a('string').and.equal(r.requestId);
  };

  it('refuses \\u0000 in a JSON string with 422 naming the field', async () => {
    const r = await nothingWritten(() => raw('POST', '/v1/agents', '{"name":"a\\u0000b"}'));
    expectValidation(r, ['body', 'name']);
    expect(r.body.error.details[0]).to.include({ field: 'name', type: 'string_nul_character' });
  });

  it('refuses \\u0000 deep inside a free-form JSON value and in an object key', async () => {
    const r = await nothingWritten(() =>
      raw(
        'POST',
        '/v1/agents',
        '{"name":"ok","tools":[{"name":"t","description":"d","url":"https://example.com","parameters":{"a\\u0000":1}}]}',
      ),
    );
    expectValidation(r, ['body', 'tools', 0, 'parameters', 'a\u0000']);
  });

  it('refuses %00 in a path id with 422 naming the parameter', async () => {
    const r = await nothingWritten(() => raw('GET', '/v1/agents/agt_%00x'));
    expectValidation(r, ['path', 'agent_id']);
    const d = await nothingWritten(() => raw('DELETE', '/v1/agents/agt_%00x'));
    expectValidation(d, ['path', 'agent_id']);
  });

  it('refuses %00 in a query value with 422 naming the parameter', async () => {
    const r = await nothingWritten(() =>
      raw('GET', '/sandbox/outbox?email=a%00b%40example.com', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` }),
    );
    expectValidation(r, ['query', 'email']);
    const ledger = await nothingWritten(() => raw('GET', '/v1/billing/ledger?limit=1%00'));
    expectValidation(ledger, ['query', 'limit']);
  });

  it('refuses a lone surrogate in a JSON string with 422 naming the field', async () => {
    const r = await nothingWritten(() => raw('POST', '/v1/agents', '{"name":"x","description":"\\ud800\\udfff\\ud800"}'));
    expectValidation(r, ['body', 'description']);
    expect(r.body.error.details[0]).to.include({ field: 'description', type: 'string_unicode' });
  });

  it('accepts a well-formed surrogate pair (an emoji) and stores it', async () => {
    const r = await raw('POST', '/v1/agents', '{"name":"\\ud83d\\ude00 bot"}');
    expect(r.status).to.equal(200);
    expect(r.body.name).to.equal('\u{1F600} bot');
    await raw('DELETE', `/v1/agents/${r.body.id}`);
  });

  it('refuses free-form JSON nested deeper than the limit', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const r = await nothingWritten(() =>
      raw('POST', '/v1/agents', `{"name":"x","tools":[{"name":"t","description":"d","url":"https://example.com","parameters":${deep}}]}`),
    );
    expect(r.status).to.equal(422);
    expect(r.body.error.details[0].type).to.equal('too_deep');
  });

  it('answers malformed percent-encoding in a path with 400 in the envelope', async () => {
    expectBadRequest(await nothingWritten(() => raw('GET', '/v1/agents/%E0%A4%A')));
    expectBadRequest(await nothingWritten(() => raw('PATCH', '/v1/agents/%E0%A4%A', '{"name":"x"}')));
  });

  it('answers Content-Encoding: gzip on a body that is not gzip with 400 in the envelope', async () => {
    expectBadRequest(await nothingWritten(() => raw('POST', '/v1/agents', '{"name":"x"}', { 'content-encoding': 'gzip' })));
    expectBadRequest(await nothingWritten(() => raw('POST', '/v1/agents', '{"name":"x"}', { 'content-encoding': 'deflate' })));
    expectBadRequest(
      await nothingWritten(() => raw('POST', '/v1/agents', gzipSync('{"name":"x"}').subarray(0, 12), { 'content-encoding': 'gzip' })),
    );
  });

  it('still reads a real gzip body, and keeps a 4xx for an unsupported encoding', async () => {
    const ok = await raw('POST', '/v1/agents', gzipSync('{"name":"zipped"}'), { 'content-encoding': 'gzip' });
    expect(ok.status).to.equal(200);
    expect(ok.body.name).to.equal('zipped');
    await raw('DELETE', `/v1/agents/${ok.body.id}`);
    const r = await nothingWritten(() => raw('POST', '/v1/agents', '{"name":"x"}', { 'content-encoding': 'x-unknown' }));
    expect(r.status).to.be.within(400, 499);
    expect(r.body.error.code).to.be.a('string');
    expect(r.body.request_id).to.be.a('string');
  });

  describe('money', () => {
    const credit = (amountMicros: number, id = accountId) =>
      app.call('POST', `/admin/accounts/${id}/credit`, { key: ADMIN_TOKEN, body: { amountMicros } });
    const balance = async () => (await app.call('GET', '/v1/usage', { key })).body.balance.micros as number;

    it('refuses a credit over the single-credit maximum before writing, naming amountMicros', async () => {
      const before = await balance();
      const r = await nothingWritten(() => credit(Number.MAX_SAFE_INTEGER));
      expectValidation(r, ['body', 'amountMicros']);
      expect(r.body.error.details[0].message).to.match(/at most/);
      expect(await balance()).to.equal(before);
    });

    it('credits up to the maximum balance exactly, then refuses the next micro-dollar before writing', async () => {
      // history: an earlier credit that left the balance 5 micro-dollars under the maximum (1000 top-ups by API would be slow)
      const stream = accountStream(accountId);
      const past = await app.rt.store.readStream(stream);
      await app.rt.store.appendToStream(
        stream,
        [
          {
            id: randomUUID(),
            type: 'AccountCredited',
            data: {
              accountId,
              amountMicros: MAX_AMOUNT_MICROS,
              balanceMicros: MAX_BALANCE_MICROS - 5,
              reason: 'fixture',
              creditedAt: new Date().toISOString(),
            },
            metadata: { accountId, correlationId: 'fixture', causationId: null, requestId: null, actor: 'admin' },
          },
        ],
        { expectedRevision: past.at(-1)!.streamRevision },
      );
      const top = await credit(5);
      expect(top.status).to.equal(200);
      expect(top.body.balanceMicros).to.equal(MAX_BALANCE_MICROS);
      const over = await nothingWritten(() => credit(1));
      expectValidation(over, ['body', 'amountMicros']);
      expect(over.body.error.message).to.match(/maximum balance/);
      const usage = await app.call('GET', '/v1/usage', { key });
      expect(usage.status).to.equal(200);
      expect(usage.body.balance.micros).to.equal(MAX_BALANCE_MICROS);
      const ledger = await app.call('GET', '/v1/billing/ledger', { key });
      expect(ledger.status).to.equal(200);
      expect(ledger.body.data.map((e: { balanceMicros: number }) => e.balanceMicros)).to.include(MAX_BALANCE_MICROS);
    });
  });
});
