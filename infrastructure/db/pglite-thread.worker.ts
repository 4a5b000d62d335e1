/**
 * The thread that owns the embedded database (docs/event-store.md#pglite-on-its-own-thread). It opens PGlite as
 * `openDatabase` would in the process's own thread, then runs each statement's wire-protocol message it is sent, in
 * the order sent, and answers PGlite's raw answer (the process's thread builds the rows).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openPglite, runMessage } from './pglite-run.js';
import { type ArrayType, movable, type ThreadError, type ThreadReply, type ThreadRequest, type ThreadStart } from './pglite-thread.js';

const port = parentPort;
if (!port) throw new Error('pglite-thread.worker runs as a worker thread');
const start = workerData as ThreadStart;

/** An error's message and own fields (a PostgreSQL error's code, detail, constraint…) that a structured clone carries. */
function fieldsOf(err: unknown): ThreadError {
  const e = err instanceof Error ? err : new Error(String(err));
  const fields: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(e)) if (typeof v === 'string' || typeof v === 'number') fields[k] = v;
  return { message: e.message, name: e.name, fields };
}

// every request waits for PGlite to be open; the first (0) says when it is, or why it could not be
const opened = openPglite(start.dataDir ? { dataDir: start.dataDir } : start.image ? { image: start.image } : {});
const answer = (id: number, work: () => Promise<Omit<ThreadReply & { ok: true }, 'id' | 'ok'>>) =>
  work().then(
    (r) => port.postMessage({ id, ok: true, ...r } satisfies ThreadReply, movable(r.raw)),
    (err: unknown) => port.postMessage({ id, ok: false, error: fieldsOf(err) } satisfies ThreadReply),
  );

answer(0, async () => {
  const client = await opened;
  if (start.freeLeases) await client.exec(start.freeLeases);
  // the array types PGlite made parsers for when it opened, for the process's thread to make the same
  const arrays = await client.query<ArrayType>(`
    select b.oid, b.typarray from pg_catalog.pg_type a left join pg_catalog.pg_type b on b.oid = a.typelem
    where a.typcategory = 'A' group by b.oid, b.typarray order by b.oid`);
  return { arrays: arrays.rows };
});

port.on('message', (m: ThreadRequest) => {
  switch (m.op) {
    case 'run':
      answer(m.id, async () => ({ raw: await runMessage(await opened, m.message ?? new Uint8Array(0)) }));
      break;
    case 'dump':
      answer(m.id, async () => ({ blob: await (await opened).dumpDataDir('none') }));
      break;
    case 'close':
      answer(m.id, async () => {
        await (await opened).close();
        return {};
      });
      break;
  }
});
