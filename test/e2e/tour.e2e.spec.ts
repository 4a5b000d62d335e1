import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startServerProcess } from '../support/server-process.js';
import { findAnswer, outputsByStep, parseBlocks, runScript, scriptOf, serverEnv } from '../support/tour.js';

/**
 * docs/tour.md, top to bottom, as a person types it: the server started with the variables the tour gives, the
 * tour's commands in one shell (its other terminals in the background), and every answer the tour shows checked
 * against what the command printed (docs/testing.md#the-tour). Embedded only: the tour starts an in-memory server.
 */
describe('docs/tour.md, run top to bottom', function () {
  this.timeout(600_000);
  const embedded = !process.env.DATABASE_URL && !process.env.EVENTSTORE_URL;
  const markdown = readFileSync('docs/tour.md', 'utf8');
  const blocks = parseBlocks(markdown);
  let server: ChildProcess | undefined;
  let base = '';
  let work = '';

  before(async function () {
    if (!embedded) this.skip();
    work = mkdtempSync(join(tmpdir(), 'avp-tour-'));
    const env = serverEnv(blocks);
    expect(env.ADMIN_TOKEN, 'the tour starts its server with an admin token').to.be.a('string');
    const started = await startServerProcess({ ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
    server = started.child;
    base = started.base;
  });
  after(() => {
    server?.kill('SIGTERM');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('runs every command and prints every answer the tour shows', async () => {
    const port = new URL(base).port;
    // the tour's server listens on 8080; this one on a free port
    const rewrite = (command: string) => command.replaceAll('localhost:8080', `127.0.0.1:${port}`);
    const { script, steps } = scriptOf(blocks, rewrite, work);
    expect(steps.filter((s) => s.expectations.length > 0).length, 'the tour shows answers').to.be.greaterThan(20);
    const { code, out } = await runScript(script, { ...process.env, KEY: '', TOKEN: '' }, work, 540_000);
    if (process.env.TOUR_OUTPUT) writeFileSync(process.env.TOUR_OUTPUT, out);
    const printed = outputsByStep(out);
    const failures: string[] = [];
    steps.forEach((step, n) => {
      if (step.terminal !== 'main') return;
      for (const answer of step.expectations) {
        const found = findAnswer(answer, printed.get(n) ?? []);
        if (!found.ok) failures.push(`docs/tour.md:${step.line}: ${step.command.split('\n')[0]}\n    ${found.why}`);
      }
    });
    const ran = [...printed.keys()].at(-1) ?? -1;
    const stopped =
      code === 0 ? '' : `the tour stopped (exit ${code}) at docs/tour.md:${steps[ran]?.line}: ${steps[ran]?.command}\n${out.slice(-3000)}`;
    expect([...failures, ...(stopped ? [stopped] : [])].join('\n\n')).to.equal('');
  });
});
