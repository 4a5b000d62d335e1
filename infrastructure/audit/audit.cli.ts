import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { History } from '../../application/audit/history.js';
import type { RecordedEvent } from '../../application/ports/event-store.port.js';
import { replayProjector } from '../../projections/shared/replay.js';
import type { CliSupport } from '../capabilities/capability.js';
import { PLATFORM } from '../platform/tokens.js';
import { AUDIT } from './tokens.js';

/** A date-time option as an ISO string; exits with a message when it is not one. */
function instant(v: string | undefined, option: string): string | null {
  if (v === undefined) return null;
  const t = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(v) || Number.isNaN(t))
    throw new Error(`${option} must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z`);
  return new Date(t).toISOString();
}

const line = (e: { seq?: number; revision: number | string; time: string; type: string; actor: string; requestId: string | null }) =>
  `#${e.revision}  ${e.time}  ${e.type}  by ${e.actor}${e.requestId ? ` (${e.requestId})` : ''}`;

function printHistory(h: History, json: boolean): void {
  if (json) {
    for (const e of h.events) process.stdout.write(`${JSON.stringify(e)}\n`);
    return;
  }
  for (const e of h.events) {
    const other = e.stream === h.stream ? '' : `  [${e.stream}]`;
    process.stdout.write(`${line(e)}  -> ${e.status}${other}\n    ${JSON.stringify(e.data)}\n`);
  }
  process.stdout.write(`${h.at ? `as of ${h.at}` : 'now'}: ${h.status ?? 'did not exist yet'}\n`);
}

function printRaw(events: readonly RecordedEvent[], json: boolean): void {
  for (const e of events) {
    const row = { revision: e.streamRevision.toString(), type: e.type, at: e.createdAt, id: e.id, metadata: e.metadata, data: e.data };
    process.stdout.write(
      json
        ? `${JSON.stringify(row)}\n`
        : `${line({ revision: row.revision, time: row.at, type: e.type, actor: e.metadata.actor, requestId: e.metadata.requestId })}\n    ${JSON.stringify(e.data)}\n`,
    );
  }
}

/** `npm run cli -- history …` and `replay …` (docs/audit.md). */
export function auditCli(program: Command, cli: CliSupport): void {
  program
    .command('history')
    .description(
      "print a stream's events in order (the audit trail of any aggregate); for a message, call, conversation or webhook delivery also the status after each step",
    )
    .argument('<stream>', 'stream name, e.g. message-msg_…, call-call_…, agent-agt_… or account-acc_…')
    .option('--at <date-time>', 'only the events recorded at or before this instant, and the status then')
    .option('--json', 'one JSON object per line')
    .action(async (stream: string, o: { json?: boolean; at?: string }) => {
      const at = instant(o.at, '--at');
      await cli.withRuntime(
        async (rt) => {
          const store = rt.get(PLATFORM.EventStore);
          const history = rt.get(AUDIT.History);
          const kind = history.ofStream(stream);
          if (kind) {
            const h = await history.forOperator(kind.kind, kind.id, at).catch(() => null);
            if (h) {
              printHistory(h, o.json === true);
              return;
            }
          }
          const events = (await store.readStream(stream)).filter((e) => at === null || Date.parse(e.createdAt) <= Date.parse(at));
          if (events.length === 0) {
            process.stderr.write(`stream ${stream} has no events${at ? ` at or before ${at}` : ''}\n`);
            process.exitCode = 1;
            return;
          }
          printRaw(events, o.json === true);
        },
        { projectors: false },
      );
    });

  program
    .command('replay')
    .description(
      "rebuild a projector's tables as they were at an instant, into a scratch schema (replay_<projector>); the live tables are not touched",
    )
    .argument('<projector>', 'a projector name, as `npm run cli -- projections list` shows them')
    .requiredOption('--until <date-time>', 'apply only the events recorded at or before this instant')
    .action(async (name: string, o: { until: string }) => {
      const until = instant(o.until, '--until') as string;
      await cli.withRuntime(
        async (rt) => {
          const all = rt.get(PLATFORM.Projectors);
          const p = all.find((x) => x.name === name || x.name.replace(/_v\d+$/, '') === name);
          if (!p) {
            process.stderr.write(`unknown projector ${name}; known: ${all.map((x) => x.name).join(', ')}\n`);
            process.exitCode = 2;
            return;
          }
          const bar = new cliProgress.SingleBar(
            {
              format: `${p.name} until ${until} [{bar}] {percentage}% | {value}/{total} events`,
              stream: process.stderr,
              noTTYOutput: true,
              notTTYSchedule: 1000,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(1, 0);
          const report = await replayProjector(rt.get(PLATFORM.ReadDb), rt.get(PLATFORM.EventStore), p, {
            until,
            onProgress: (done, total) => {
              bar.setTotal(Math.max(total, 1));
              bar.update(done);
            },
          });
          bar.stop();
          cli.print(report);
        },
        { projectors: false },
      );
    });
}
