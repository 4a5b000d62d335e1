import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type ContractMock, startContractMock } from '../support/prism.js';

type Report = {
  stats: { tests: number; failures: number };
  passes: { fullTitle: string }[];
  failures: { fullTitle: string; err: { message?: string } }[];
};

/**
 * The contract mocks' support (test/support/prism.ts, docs/testing.md#contract-mocks) turns a request the vendor's
 * description refuses into a failed test: a suite that sends one is run by mocha in a process of its own, and fails.
 */
const DOCUMENT = 'test/contracts/chatapp/business-messaging-api_v23.0.yaml';

describe('contract mock: a request the description refuses fails the suite', function () {
  this.timeout(150_000);

  it('fails the test that sent a text without messaging_product (naming the operation and the property), and only that one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'contract-mock-spec-'));
    try {
      const output = join(dir, 'report.json');
      const mocha = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');
      const args = ['--import', 'tsx', mocha, '--no-config', '--no-package', '--timeout', '120000', '--reporter', 'json'];
      const child = spawn(
        process.execPath,
        [...args, '--reporter-option', `output=${output}`, 'test/contract/fixtures/refused-request.fixture.ts'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code, out).to.equal(1); // mocha's exit code: the number of failed tests
      const report = JSON.parse(await readFile(output, 'utf8')) as Report;
      expect(report.stats).to.include({ tests: 2, failures: 1 });
      expect(report.failures.map((f) => f.fullTitle)).to.deep.equal([
        'a suite whose code sends what the description refuses sends a text without messaging_product',
      ]);
      const message = report.failures[0]!.err.message ?? '';
      expect(message).to.include('chat platform API v23.0 refused 1 request(s)');
      expect(message).to.include('POST /v23.0/310000000000011/messages (sendMessage) answered 422');
      expect(message).to.include("request.body: Request body must have required property 'messaging_product'");
      expect(report.passes.map((p) => p.fullTitle)).to.include(
        'a suite whose code sends what the description refuses sends a text with messaging_product',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('contract mock: which operation a request is checked against', function () {
  this.timeout(150_000);
  let mock: ContractMock;
  before(async () => {
    mock = await startContractMock({ name: 'the whole description', document: DOCUMENT });
  });
  after(() => mock.stop());
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${mock.url}${path}`, {
      method,
      headers: { authorization: 'Bearer t', 'user-agent': 'spec/1.0.0', ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }).then(async (res) => ({ status: res.status, text: await res.text() }));

  it('records an accepted request with its operation, and counts it', async () => {
    const text = { messaging_product: 'whatsapp', recipient_type: 'individual', to: '447700900810', type: 'text', text: { body: 'hi' } };
    expect((await call('POST', '/v23.0/310000000000011/messages', text)).status).to.equal(200);
    expect(mock.requests.at(-1)).to.deep.include({ operation: 'sendMessage', status: 200, violations: [] });
    expect(mock.operationsExercised()).to.deep.equal(['sendMessage']);
    expect(mock.operationsInDocument).to.equal(mock.operationsServed().length).and.be.above(100);
  });

  it('refuses a request the description declares as several operations alike, and one it does not declare', async () => {
    await call('GET', '/v23.0/1234567890123456?fields=id,name');
    const ambiguous = mock.requests.at(-1)!;
    expect(ambiguous.operation).to.equal(null);
    expect(ambiguous.violations[0]).to.match(
      /^the document declares GET \/v23\.0\/1234567890123456 as \d+ operations \(.*getWhatsAppBusinessAccountDetails/,
    );
    expect((await call('GET', '/v23.0/1234567890123456/no_such_edge')).status).to.equal(404);
    expect(mock.requests.at(-1)!.violations).to.have.length(1);
    expect(mock.requests.at(-1)!.violations[0]).to.match(/^404 NO_PATH_MATCHED_ERROR: /);
    expect(mock.operationsExercised()).to.deep.equal(['sendMessage']);
  });
});
