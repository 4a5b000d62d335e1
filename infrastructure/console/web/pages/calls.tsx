import { useEffect, useState } from 'preact/hooks';
import { stream } from '../api.js';
import { Badge, Chart, COLORS, Problem, Section } from '../components.js';
import { ms, time } from '../format.js';
import { useApi } from '../hooks.js';

type CallRow = {
  id: string;
  direction: string;
  status: string;
  fromNumber: string;
  toNumber: string;
  startedAt: string;
  durationSeconds: number | null;
  disconnectionReason: string | null;
};
type Latency = { requestMs: number | null; firstByteMs: number | null; speechStartMs: number | null };
type Turn = {
  seq: number;
  role: 'agent' | 'user';
  content: string;
  source?: string | null;
  silentReason?: string | null;
  latency: Latency | null;
  startedAt: string;
};

/** A turn as the transcript stream sends it (the server's contract); anything else is not shown. */
const isTurn = (d: unknown): d is Turn => {
  const t = d as Partial<Record<keyof Turn, unknown>> | null;
  return (
    typeof t?.seq === 'number' &&
    (t.role === 'agent' || t.role === 'user') &&
    typeof t.content === 'string' &&
    typeof t.startedAt === 'string'
  );
};

/** A web call nobody joined ends `failed` with reason `canceled` (docs/calls.md#web-calls): nothing went wrong. */
const shownStatus = (c: CallRow) => (c.direction === 'web' && c.disconnectionReason === 'canceled' ? 'not joined' : c.status);

/** The account's calls, newest first. */
export function CallsPage() {
  const list = useApi<{ data: CallRow[] }>('/v1/calls?limit=100', { everyMs: 5000 });
  return (
    <Section title="Calls">
      <Problem error={list.error} />
      <table data-table="calls">
        <thead>
          <tr>
            <th>Call</th>
            <th>Direction</th>
            <th>From</th>
            <th>To</th>
            <th>Status</th>
            <th>Started</th>
            <th>Length</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((c) => (
            <tr key={c.id}>
              <td>
                <a href={`#/calls/${c.id}`} class="mono">
                  {c.id}
                </a>
              </td>
              <td>{c.direction}</td>
              <td>{c.fromNumber}</td>
              <td>{c.toNumber}</td>
              <td>
                <Badge status={shownStatus(c)} />
              </td>
              <td>{time(c.startedAt)}</td>
              <td>{c.durationSeconds === null ? '–' : `${c.durationSeconds} s`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

/**
 * One call: its live transcript from the SSE stream (GET /v1/calls/{id}/transcript/stream: the turns so far, then
 * each new one as it is recorded) and the latency split of every agent turn.
 */
export function CallPage({ id }: { id: string }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [status, setStatus] = useState<string>('connecting');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    setTurns([]);
    stream(
      `/v1/calls/${id}/transcript/stream`,
      (event, data) => {
        const d = data as Record<string, unknown>;
        if (event === 'connected') setStatus(String(d.status));
        if (event === 'ended') setStatus(String(d.status));
        if (event === 'turn' && isTurn(data))
          setTurns((all) => [...all.filter((t) => t.seq !== data.seq), data].sort((a, b) => a.seq - b.seq));
      },
      abort.signal,
    ).catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
    return () => abort.abort();
  }, [id]);
  const measured = turns.filter((t) => t.role === 'agent' && t.latency);
  return (
    <>
      <Section title={`Call ${id}`} actions={<a href="#/calls">All calls</a>}>
        <p>
          Status: <Badge status={status} /> {status === 'in-progress' ? <span class="live">live</span> : null}
        </p>
        <Problem error={error} />
        <ol class="transcript" data-transcript={id}>
          {turns.map((t) => (
            <li key={t.seq} class={`turn ${t.role}`} data-seq={t.seq}>
              <strong>{t.role === 'agent' ? 'Agent' : 'Caller'}</strong>{' '}
              <span class="content">{t.content || <em>{t.silentReason ?? '(silent)'}</em>}</span>
              <time>{time(t.startedAt)}</time>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Latency of each agent turn">
        <table data-table="latency">
          <thead>
            <tr>
              <th>Turn</th>
              <th>Speech end → request</th>
              <th>Request → first byte</th>
              <th>First byte → speech</th>
              <th>Total</th>
            </tr>
          </thead>
          <tbody>
            {measured.map((t) => {
              const l = t.latency as Latency;
              return (
                <tr key={t.seq}>
                  <td>{t.seq}</td>
                  <td>{ms(l.requestMs)}</td>
                  <td>{ms(l.firstByteMs)}</td>
                  <td>{ms(l.speechStartMs)}</td>
                  <td>{ms((l.requestMs ?? 0) + (l.firstByteMs ?? 0) + (l.speechStartMs ?? 0))}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {measured.length > 0 ? (
          <Chart
            name="turn-latency"
            title="Latency split per agent turn (ms)"
            xLabel="Turn"
            x={measured.map((_t, i) => i)}
            labels={measured.map((t) => `#${t.seq}`)}
            series={[
              { label: 'request → first byte', color: COLORS.messages },
              { label: 'first byte → speech', color: COLORS.calls },
            ]}
            values={[measured.map((t) => t.latency?.firstByteMs ?? 0), measured.map((t) => t.latency?.speechStartMs ?? 0)]}
          />
        ) : null}
      </Section>
    </>
  );
}
