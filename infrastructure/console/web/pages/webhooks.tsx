import { useEffect, useState } from 'preact/hooks';
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
  webhookId: string | null;
  agentId: string | null;
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
type Agent = { id: string; name: string };
type AgentWebhook = { agent: Agent; webhook: NonNullable<Webhook> };

/** Every agent's own webhook (`GET /v1/agents/{id}/webhook`, null when it has none), asked again every `everyMs`. */
function useAgentWebhooks(agents: Agent[] | undefined, everyMs: number): { data: AgentWebhook[]; error: string | null } {
  const [data, setData] = useState<AgentWebhook[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  useEffect(() => {
    if (!agents) return;
    let live = true;
    Promise.all(agents.map(async (agent) => ({ agent, webhook: await api<Webhook>(`/v1/agents/${agent.id}/webhook`) })))
      .then((all) => {
        if (!live) return;
        setData(all.filter((w): w is AgentWebhook => w.webhook !== null));
        setError(null);
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [agents, tick]);
  return { data, error };
}

/** The delivery log: notices, a chart of deliveries and failures, every delivery with its attempts, "Send again". */
export function WebhooksPage() {
  const [sent, setSent] = useState<Record<string, string>>({});
  const log = useApi<Log>('/v1/webhooks/deliveries?limit=100', { everyMs: 3000 });
  const stats = useApi<Stats>('/v1/webhooks/deliveries/stats?hours=168', { everyMs: 5000 });
  const hook = useApi<Webhook>('/v1/webhooks', { everyMs: 5000 });
  const agents = useApi<{ data: Agent[] }>('/v1/agents?limit=100', { everyMs: 30000 });
  const agentHooks = useAgentWebhooks(agents.data?.data, 15000);
  const agentName = (id: string | null) => (id ? (agents.data?.data.find((a) => a.id === id)?.name ?? id) : null);
  // which webhook a delivery went to: the master webhook, or an agent's own
  const target = (d: Delivery) => {
    const own = agentHooks.data.find((w) => w.webhook.id === d.webhookId);
    if (own) return `${own.agent.name}'s webhook`;
    if (hook.data && hook.data.id === d.webhookId) return 'master webhook';
    return d.webhookId ?? '–';
  };
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
      <Section title="Webhooks">
        <Problem error={hook.error ?? agentHooks.error} />
        {hook.data ? (
          <p data-webhook-status>
            Master: <span class="mono">{hook.data.url}</span> <Badge status={hook.data.status} />
          </p>
        ) : (
          <p class="empty">No master webhook is configured.</p>
        )}
        {agentHooks.data.length > 0 ? (
          <table data-table="agent-webhooks">
            <thead>
              <tr>
                <th>Agent</th>
                <th>URL</th>
                <th>Status</th>
              </tr>
            </thead>
            <tbody>
              {agentHooks.data.map((w) => (
                <tr key={w.webhook.id} data-agent-webhook={w.webhook.id}>
                  <td>{w.agent.name}</td>
                  <td class="mono">{w.webhook.url}</td>
                  <td>
                    <Badge status={w.webhook.status} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
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
              <th>Webhook</th>
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
                <td class="webhook" title={agentName(d.agentId) ?? undefined}>
                  {target(d)}
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
