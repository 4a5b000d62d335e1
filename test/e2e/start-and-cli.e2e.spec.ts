import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startArgs } from '../../infrastructure/start-args.js';
import { startServerProcess } from '../support/server-process.js';

/**
 * The README's path, for real: `npm start` on an empty data directory (embedded PGlite), the development key
 * it prints, an API call over HTTP, a graceful SIGTERM, a restart that prints no second key, and the CLI's
 * audit history and rebuild on the same data. Runs in embedded mode only (its subject is that mode).
 */
describe('npm start and the CLI, end to end (embedded)', function () {
  this.timeout(90_000);
  const embedded = !process.env.DATABASE_URL && !process.env.EVENTSTORE_URL;
  let dataDir: string;
  before(function () {
    if (!embedded) this.skip();
    dataDir = mkdtempSync(join(tmpdir(), 'avp-e2e-'));
  });
  after(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // no ADMIN_TOKEN and no SECRETS_KEY: the embedded start makes its own
  const env = () => ({
    ...process.env,
    ADMIN_TOKEN: '',
    SECRETS_KEY: '',
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  });

  const start = async () => {
    const r = await startServerProcess(env());
    await new Promise((res) => setTimeout(res, 100));
    return r;
  };

  const stop = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      child.removeAllListeners('exit');
      child.on('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });

  const cli = (...args: string[]) => spawnSync(process.execPath, [...startArgs('cli'), ...args], { env: env(), encoding: 'utf8' });

  let agentId = '';

  it('prints the URL, the docs URL and a development key once, and serves the API with it', async () => {
    const { child, out, base } = await start();
    try {
      expect(out).to.match(/API docs: http:\/\/\S+\/docs/);
      const demo = /Web call demo: (http:\/\/\S+\/web-call)/.exec(out)?.[1];
      expect(demo, 'the web call demo URL is printed').to.be.a('string');
      const demoPage = await fetch(demo!);
      expect(demoPage.status).to.equal(200);
      expect(demoPage.headers.get('content-type')).to.match(/^text\/html/);
      // the console is built by the server itself on the first request (docs/console.md)
      const consoleUrl = /Console: (http:\/\/\S+\/console)/.exec(out)?.[1];
      expect(consoleUrl).to.be.a('string');
      const page = await fetch(consoleUrl as string);
      expect(page.status).to.equal(200);
      const html = await page.text();
      const script = /src="(\/console\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
      expect(script, html).to.be.a('string');
      const js = await fetch(new URL(script as string, consoleUrl));
      expect(js.headers.get('content-type')).to.match(/javascript/);
      expect((await js.text()).length).to.be.greaterThan(10_000);
      const adminToken = /Admin token \(for \/admin and \/sandbox, kept in (\S+)\): (adm_\S+)/.exec(out);
      expect(adminToken?.[1]).to.equal(join(dataDir, 'admin-token'));
      expect(adminToken?.[2]).to.equal(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim());
      const key = /API key \(shown once, save it\): (avp_\S+)/.exec(out)?.[1];
      expect(key).to.be.a('string');
      const res = await fetch(`${base}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'E2E' }),
      });
      expect(res.status).to.equal(200);
      agentId = ((await res.json()) as { id: string }).id;
    } finally {
      expect(await stop(child), 'graceful exit code').to.equal(0);
    }
    const again = await start();
    try {
      expect(again.out).to.not.contain('API key');
      expect((await fetch(`${again.base}/healthz`)).status).to.equal(200);
    } finally {
      await stop(again.child);
    }
  });

  it('generates an admin token on first start, keeps it owner-only in the data directory, and needs it for /admin and /sandbox', async () => {
    const file = join(dataDir, 'admin-token');
    const token = readFileSync(file, 'utf8').trim();
    expect(token).to.match(/^adm_\S{40,}$/);
    expect(statSync(file).mode & 0o777).to.equal(0o600);
    expect(statSync(join(dataDir, 'secrets.key')).mode & 0o777).to.equal(0o600);
    const { child, out, base } = await start();
    try {
      expect(out, 'a later start names the file, not the token').to.contain(`Admin token (for /admin and /sandbox): in ${file}`);
      expect(out).to.not.contain(token);
      const auth = { authorization: `Bearer ${token}` };
      expect((await fetch(`${base}/sandbox/faults`)).status, 'loopback without the token').to.equal(401);
      expect((await fetch(`${base}/sandbox/faults`, { headers: auth })).status).to.equal(200);
      expect(
        (await fetch(`${base}/admin/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' }))
          .status,
      ).to.equal(401);
      const made = await fetch(`${base}/admin/accounts`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Operator' }),
      });
      expect(made.status).to.equal(200);
    } finally {
      await stop(child);
    }
  });

  it('prints the audit history of a stream, in order', () => {
    const r = cli('history', `agent-${agentId}`, '--json');
    expect(r.status, r.stderr).to.equal(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { revision: string; type: string });
    expect(lines.map((l) => [l.revision, l.type])).to.deep.equal([['0', 'AgentCreated']]);
  });

  it('replays a projector as it was at an instant into a scratch schema, with progress', () => {
    const now = cli('replay', 'agents', '--until', new Date(Date.now() + 60_000).toISOString());
    expect(now.status, now.stderr).to.equal(0);
    expect(JSON.parse(now.stdout)).to.deep.include({ projector: 'agents_v1', schema: 'replay_agents_v1', rows: { agents: 1 } });
    expect(now.stderr).to.match(/agents_v1 until .* 100%/);
    const before = cli('replay', 'agents', '--until', '2000-01-01T00:00:00Z');
    expect(JSON.parse(before.stdout)).to.deep.include({ rows: { agents: 0 }, events: 0 });
    expect(cli('replay', 'agents', '--until', 'yesterday').status).to.not.equal(0);
  });

  it('creates an account from the CLI and rebuilds a projector to equal tables', () => {
    const made = cli('accounts', 'create', '--name', 'From CLI');
    expect(made.status, made.stderr).to.equal(0);
    expect(JSON.parse(made.stdout)).to.have.keys(['accountId', 'apiKey']);
    const rebuilt = cli('rebuild', 'accounts');
    expect(rebuilt.status, rebuilt.stderr).to.equal(0);
    expect(JSON.parse(rebuilt.stdout)).to.include({ projector: 'accounts_v1', equal: true, swapped: true });
    expect(rebuilt.stderr).to.match(/accounts_v1 \[.*\] 100%/);
  });

  it('lists isolated work (none on a healthy installation) and refuses a bad limit', () => {
    const listed = cli('isolated', '--limit', '5');
    expect(listed.status, listed.stderr).to.equal(0);
    expect(JSON.parse(listed.stdout)).to.deep.equal([]);
    expect(cli('isolated', '--limit', '0').status).to.equal(2);
  });
});
