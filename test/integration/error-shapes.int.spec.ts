import { expect } from 'chai';
import type { Response } from 'express';
import type { ErrorCode } from '../../domain/shared/errors.js';
import { capabilities } from '../../infrastructure/capabilities/index.js';
import { PLATFORM_ERRORS, sendError, useErrorTable } from '../../infrastructure/http/errors.js';
import { startTestApp, type TestApp } from '../support/http.js';

/** The error bodies public clients read (docs/compatibility.md#error-bodies), for every code the server has. */
describe('error bodies', () => {
  const table: Record<string, { status: number; shape: string }> = Object.assign(
    {},
    PLATFORM_ERRORS,
    ...capabilities.map((m) => ('errors' in m ? m.errors : {})),
  );

  /** What sendError writes, caught by a stand-in for express's response. */
  const answer = (code: ErrorCode, fieldErrors?: { field: string; message: string; type: string }[]) => {
    const out: { status: number; body: Record<string, unknown>; headers: Record<string, string> } = { status: 0, body: {}, headers: {} };
    const res = {
      locals: { requestId: 'req_1' },
      status(s: number) {
        out.status = s;
        return this;
      },
      json(b: Record<string, unknown>) {
        out.body = b;
        return this;
      },
    } as unknown as Response;
    sendError(res, code, 'Something about this request is refused', fieldErrors);
    return out;
  };

  before(() => useErrorTable(table as never));

  it('covers every code of every capability', () => {
    expect(Object.keys(table).length).to.be.greaterThan(60);
  });

  it('gives every 422 the public list of {loc, msg, type}, with the reason when no field is at fault', () => {
    const unprocessable = Object.entries(table).filter(([, h]) => h.status === 422);
    expect(unprocessable.map(([c]) => c)).to.include.members(['VALIDATION_ERROR', 'INBOUND_ONLY']);
    for (const [code] of unprocessable) {
      const { status, body } = answer(code as ErrorCode);
      expect(status, code).to.equal(422);
      const detail = body.detail as { loc: unknown[]; msg: string; type: string }[];
      expect(detail, code).to.be.an('array').with.length(1);
      expect(detail[0]!.loc, code).to.deep.equal(['body']);
      expect(detail[0]!.msg, code).to.match(/^Something about this request is refused\./);
      expect(detail[0]!.type, code).to.equal(code.toLowerCase());
      const withField = answer(code as ErrorCode, [{ field: 'avatarUrl', message: 'is not allowed', type: 'value_error' }]).body;
      expect(withField.detail, code).to.deep.equal([{ loc: ['body', 'avatarUrl'], msg: 'is not allowed', type: 'value_error' }]);
    }
  });

  it('gives every other error a top-level detail string: the message, in the envelope and in the plain shape', () => {
    for (const [code, http] of Object.entries(table).filter(([, h]) => h.status !== 422)) {
      const { status, body } = answer(code as ErrorCode);
      expect(status, code).to.equal(http.status);
      expect(body.detail, code)
        .to.be.a('string')
        .and.match(/^Something about this request is refused\./);
      expect(body.request_id, code).to.equal('req_1');
      if (http.shape === 'envelope') {
        const error = body.error as { message: string; code: string };
        expect(error.code, code).to.equal(code);
        expect(error.message, code).to.equal(body.detail);
      } else expect(body, code).to.not.have.property('error');
    }
  });

  describe('over HTTP', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp();
    });
    after(() => app.close());

    it('answers a known path asked with a method it lacks with 405 and the methods it has', async () => {
      const { apiKey } = await app.newAccount('Methods');
      const r = await app.call('DELETE', '/v1/calls/call_123', { key: apiKey });
      expect(r.status).to.equal(405);
      expect(r.headers.get('allow')).to.equal('GET, HEAD');
      expect(r.body.error.code).to.equal('METHOD_NOT_ALLOWED');
      expect(r.body.detail).to.match(/DELETE is not a method of \/v1\/calls\/call_123: it answers GET, HEAD/);
      const agents = await app.call('PUT', '/v1/agents', { key: apiKey, body: {} });
      expect(agents.status).to.equal(405);
      expect(agents.headers.get('allow')).to.equal('GET, HEAD, POST');
      expect((await app.call('GET', '/v1/no-such-thing', { key: apiKey })).status).to.equal(404);
    });

    it('answers a business 422 with the reason in the detail list', async () => {
      const { apiKey } = await app.newAccount('Rich');
      const agent = (await app.call('POST', '/v1/agents', { key: apiKey, body: { name: 'A' } })).body;
      const number = (await app.call('POST', '/v1/numbers', { key: apiKey, body: { country: 'CA', agentId: agent.id } })).body;
      const r = await app.call('PUT', `/v1/numbers/${number.id}/contact-card`, { key: apiKey, body: { firstName: 'Ada' } });
      expect(r.status).to.equal(422);
      expect(r.body.error.code).to.equal('RICH_CHANNEL_UNAVAILABLE');
      expect(r.body.detail).to.have.length(1);
      expect(r.body.detail[0].msg).to.equal(r.body.error.message);
      expect(r.body.detail[0].type).to.equal('rich_channel_unavailable');
    });
  });
});
