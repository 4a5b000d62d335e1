import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { type CpuCost, cpuNow, cpuPerOperation } from './cpu.js';
import { withScratchDatabase } from './scratch-db.js';

/** Jobs one worker claims at a time. */
const CLAIM = 50;

/** One POST on a keep-alive connection; resolves with the status. */
function post(agent: Agent, url: URL, id: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'x-webhook-id': id },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The floor of webhook delivery on a PostgreSQL server (docs/testing.md#webhooks-npm-run-benchwebhooks): the
 * bare job-queue loop a delivery system needs at least, with none of this platform's work (no events, no read
 * models, no signatures). `jobs` rows are inserted in one statement; each of `workers` loops (its own connection and
 * keep-alive agent) claims up to 50 with `SELECT … FOR UPDATE SKIP LOCKED`, POSTs them at once, and marks them
 * sent with one `UPDATE`, in one transaction, until none is left. Answers jobs per second, and the CPU a job cost
 * this process (its loops and the bench's receiver) and PostgreSQL on this machine while they ran.
 */
export async function jobQueueFloor(
  databaseUrl: string,
  receiverUrl: string,
  jobs: number,
  workers: number,
): Promise<{ perSecond: number; cpu: CpuCost }> {
  return withScratchDatabase(databaseUrl, async (url) => {
    const pool = new pg.Pool({ connectionString: url, max: workers + 1 });
    // the scratch database is dropped (with force) as soon as the pool has ended: a connection whose goodbye the
    // server has not processed yet is then terminated, and the pool's 'error' without a listener ended the bench
    pool.on('error', () => undefined);
    try {
      await pool.query('create table jobs (id bigserial primary key, body text not null, status int, sent_at timestamptz)');
      await pool.query(`insert into jobs (body) select '{"event":"agent.created","n":' || n || '}' from generate_series(1, $1) n`, [jobs]);
      const target = new URL(receiverUrl);
      const cpu = cpuNow({ postgres: true });
      const started = performance.now();
      await Promise.all(
        Array.from({ length: workers }, async () => {
          const agent = new Agent({ keepAlive: true, maxSockets: CLAIM });
          const db = await pool.connect();
          try {
            for (;;) {
              await db.query('begin');
              const claimed = await db.query<{ id: string; body: string }>(
                'select id, body from jobs where sent_at is null order by id limit $1 for update skip locked',
                [CLAIM],
              );
              if (claimed.rows.length === 0) {
                await db.query('commit');
                return;
              }
              const statuses = await Promise.all(claimed.rows.map((j) => post(agent, target, `floor-${j.id}`, j.body)));
              await db.query(
                'update jobs set status = s.status, sent_at = now() from unnest($1::bigint[], $2::int[]) as s(id, status) where jobs.id = s.id',
                [claimed.rows.map((j) => j.id), statuses],
              );
              await db.query('commit');
            }
          } finally {
            db.release();
            agent.destroy();
          }
        }),
      );
      const perSecond = jobs / ((performance.now() - started) / 1000);
      return { perSecond, cpu: cpuPerOperation(cpu, cpuNow({ postgres: true }), jobs) };
    } finally {
      await pool.end();
    }
  });
}
