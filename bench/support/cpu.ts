import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Linux's clock ticks per second, the unit of /proc's CPU times. */
const CLK_TCK = 100;

/** user + system CPU of one /proc/<pid>/stat, in ms, and its command. */
function statOf(pid: string): { command: string; ms: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const f = stat.slice(close + 2).split(' ');
    return { command: stat.slice(stat.indexOf('(') + 1, close), ms: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK };
  } catch {
    return null; // gone meanwhile, or no /proc
  }
}

/** CPU of the PostgreSQL server's processes on this machine so far, in ms (0 when none is visible: embedded, or elsewhere). */
export function postgresCpuMs(): number {
  let ms = 0;
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const s = statOf(pid);
    if (s?.command === 'postgres') ms += s.ms;
  }
  return ms;
}

/** CPU of one process of this machine so far (a worker the bench spawned), in ms; 0 once it is gone. */
export function processCpuMs(pid: number): number {
  return statOf(String(pid))?.ms ?? 0;
}

/**
 * The CPU of this process's main thread (the event loop) so far, in ms, from /proc (Linux; its thread id is the
 * process id); null where there is no /proc. Unlike the event loop's busy share, time the thread waited for a core
 * is not in it.
 */
export function mainThreadCpuMs(): number | null {
  return statOf(`${process.pid}/task/${process.pid}`)?.ms ?? null;
}

/**
 * The scheduler's account of this process's main thread so far, in ms (Linux's /proc/<pid>/task/<tid>/schedstat, in
 * ns): `onCore`, the time it ran, and `waiting`, the time it was ready to run and waited for a core (other threads had
 * every core). The event loop's busy share counts both; null where the kernel keeps no such account.
 */
export function mainThreadSchedMs(): { onCore: number; waiting: number } | null {
  try {
    const [run, wait] = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { onCore: run! / 1e6, waiting: wait! / 1e6 } : null;
  } catch {
    return null;
  }
}

/** This process's CPU so far (every thread: the event loop, PGlite's, the collector's), in ms. */
export function ownCpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

/** What the CPU meters read at one moment; `postgres` null: not counted, or no PostgreSQL process on this machine. */
export type CpuReading = Readonly<{ own: number; workers: number; postgres: number | null }>;

/**
 * The meters now: this process, the given worker processes, and PostgreSQL's processes on this machine when the
 * target is a server (`postgres`; not for an embedded target, beside which a server may run idle).
 */
export function cpuNow(o: { postgres: boolean; workerPids?: readonly number[] }): CpuReading {
  const postgres = o.postgres ? postgresCpuMs() : 0;
  return {
    own: ownCpuMs(),
    workers: (o.workerPids ?? []).reduce((n, pid) => n + processCpuMs(pid), 0),
    postgres: postgres > 0 ? postgres : null,
  };
}

/** CPU per operation in ms: this process, the worker processes, PostgreSQL's (null: not on this machine), all. */
export type CpuCost = Readonly<{
  own: number;
  workers: number;
  postgres: number | null;
  total: number;
  /** operations per second all of this machine's `cores` allow at `total` */
  ceiling: number;
  cores: number;
}>;

/** How a cost reads in a bench's notes. */
export function cpuText(c: CpuCost): string {
  const parts = [`this process ${c.own.toFixed(2)}`];
  if (c.workers > 0) parts.push(`workers ${c.workers.toFixed(2)}`);
  if (c.postgres !== null) parts.push(`PostgreSQL ${c.postgres.toFixed(2)}`);
  return `${c.total.toFixed(2)} ms (${parts.join(' + ')})`;
}

/**
 * CPU per operation between two readings, and the rate this machine's cores would allow at that cost if nothing
 * else ran (docs/testing.md#what-the-cpu-allows): a throughput goal above it cannot be met on this machine without
 * making each operation cheaper. PostgreSQL's share is null where its processes are not on this machine.
 */
export function cpuPerOperation(from: CpuReading, to: CpuReading, operations: number): CpuCost {
  const per = (a: number, b: number) => (operations > 0 ? (b - a) / operations : Number.NaN);
  const own = per(from.own, to.own);
  const workers = per(from.workers, to.workers);
  const postgres = from.postgres !== null && to.postgres !== null ? per(from.postgres, to.postgres) : null;
  const total = own + workers + (postgres ?? 0);
  const cores = availableParallelism();
  return { own, workers, postgres, total, ceiling: total > 0 ? (cores * 1000) / total : Number.NaN, cores };
}
