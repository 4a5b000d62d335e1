import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { Badge, Chart, COLORS, Problem, Section } from '../components.js';
import { ms, time } from '../format.js';
import { useApi } from '../hooks.js';

type Attempt = {
  attempt: number;
  status: string;
  httpStatus: number | null;
  errorMessage: string | null;
  responseTimeMs: number;
  attemptedAt: string;
};
type Delivery = {
  id: string;
  eventType: string | null;
  status: 'pending' | 'success' | 'failed';
  httpStatus: number | null;
  errorMessage: string | null;
  attemptCount: number;
  lastAttemptAt: string | null;
  nextRetryAt: string | null;
  createdAt: string;
  test: boolean;
  attempts: Attempt[];
};
type Notice = {
  id: string;
  kind: string;
  url: string | null;
  message: string;
  email: { status: string; to: string | null } | null;
  at: string;
};
type Log = { items: Delivery[]; total: number; notices: Notice[] };
type Stats = { byHour: { hour: string; success: number; failed: number; pending: number }[] };
type Webhook = { id: string; url: string; status: string } | null;

/** The delivery log: notices, a chart of deliveries and failures, every delivery with its attempts, "Send again". */
export function WebhooksPage() {
  const [sent, setSent] = useState<Record<string, string>>({});
  const log = useApi<Log>('/v1/webhooks/deliveries?limit=100', { everyMs: 3000 });
  const stats = useApi<Stats>('/v1/webhooks/deliveries/stats?hours=168', { everyMs: 5000 });
  const hook = useApi<Webhook>('/v1/webhooks', { everyMs: 5000 });
  const sendAgain = async (id: string) => {
    setSent((s) => ({ ...s, [id]: 'sending…' }));
    try {
      await api(`/v1/webhooks/deliveries/${id}/retry`, { method: 'POST' });
      setSent((s) => ({ ...s, [id]: 'sent again' }));
    } catch (e) {
      setSent((s) => ({ ...s, [id]: e instanceof ApiError ? e.message : String(e) }));
    }
    log.reload();
  };
  // the statistics come per hour (GET /v1/webhooks/deliveries/stats); the chart sums them per UTC day
  const days: { day: string; success: number; failed: number }[] = [];
  for (const h of stats.data?.byHour ?? []) {
    const day = h.hour.slice(0, 10);
    const last = days.at(-1);
    if (last?.day === day) {
      last.success += h.success;
      last.failed += h.failed;
    } else days.push({ day, success: h.success, failed: h.failed });
  }
  return (
    <>
      <Section title="Webhook">
        <Problem error={hook.error} />
        {hook.data ? (
          <p data-webhook-status>
            <span class="mono">{hook.data.url}</span> <Badge status={hook.data.status} />
          </p>
        ) : (
          <p class="empty">No master webhook is configured.</p>
        )}
        <ul class="notices" data-notices>
          {(log.data?.notices ?? []).map((n) => (
            <li key={n.id} class={`notice ${n.kind}`}>
              <Badge status={n.kind} /> {n.message} <time>{time(n.at)}</time>
              {n.email ? <small> · e-mail: {n.email.status === 'sent' ? `sent to ${n.email.to}` : n.email.status}</small> : null}
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Deliveries and failures, last 7 days">
        <Problem error={stats.error} />
        {days.length > 0 ? (
          <Chart
            name="deliveries"
            title="Deliveries per day, by their latest outcome (test sends left out)"
            xLabel="Day"
            x={days.map((_d, i) => i)}
            labels={days.map((d) => d.day.slice(5))}
            series={[
              { label: 'delivered', color: COLORS.calls },
              { label: 'failed', color: COLORS.failed },
            ]}
            values={[days.map((d) => d.success), days.map((d) => d.failed)]}
          />
        ) : null}
      </Section>
      <Section title={`Delivery log (${log.data?.total ?? 0})`}>
        <Problem error={log.error} />
        <table data-table="deliveries">
          <thead>
            <tr>
              <th>Delivery</th>
              <th>Event</th>
              <th>Status</th>
              <th>Attempts</th>
              <th>Last attempt</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(log.data?.items ?? []).map((d) => (
              <tr key={d.id} data-delivery={d.id}>
                <td>
                  <details>
                    <summary class="mono">{d.id}</summary>
                    <table class="attempts">
                      <tbody>
                        {d.attempts.map((a) => (
                          <tr key={a.attempt}>
                            <td>#{a.attempt}</td>
                            <td>
                              <Badge status={a.status} />
                            </td>
                            <td>{a.httpStatus ?? '–'}</td>
                            <td>{a.errorMessage ?? ''}</td>
                            <td>{ms(a.responseTimeMs)}</td>
                            <td>{time(a.attemptedAt)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </details>
                </td>
                <td>
                  {d.eventType} {d.test ? <span class="tag">test</span> : null}
                </td>
                <td class="status">
                  <Badge status={d.status} />
                </td>
                <td class="attempt-count">{d.attemptCount}</td>
                <td>
                  {time(d.lastAttemptAt)} {d.httpStatus ? `(${d.httpStatus})` : ''}
                </td>
                <td>
                  <button type="button" disabled={d.status === 'pending'} onClick={() => sendAgain(d.id)}>
                    Send again
                  </button>
                  {sent[d.id] ? <small class="sent"> {sent[d.id]}</small> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
