import { useState } from 'preact/hooks';
import { Chart, COLORS, count, Problem, Section } from '../components.js';
import { money, ms, pct } from '../format.js';
import { useApi } from '../hooks.js';

type Day = { date: string; messages: number; calls: number; webhooks: number; callSeconds: number; spentMicros: number; lookups: number };
type ByNumber = {
  data: { numberId: string; phoneNumber: string; agentName: string | null; messages: number; calls: number; callSeconds: number }[];
};
type ByAgent = {
  data: { agentId: string | null; agentName: string; messages: number; calls: number; totalSeconds: number; isOrphan: boolean }[];
};
type P = { p50: number | null; p90: number | null; p99: number | null };
type Delivery = {
  data: {
    date: string;
    phoneNumber: string | null;
    sent: number;
    delivered: number;
    failed: number;
    deliveryRate: number | null;
    failuresByCategory: Record<string, number>;
  }[];
};
type Hooks = { data: { webhookId: string; url: string | null; deliveries: number; successRate: number | null; attemptLatencyMs: P }[] };
type Calls = {
  data: {
    agentId: string | null;
    agentName: string;
    placed: number;
    completed: number;
    failed: number;
    outcomes: Record<string, number>;
    turnLatencyMs: { total: P };
  }[];
};

const p = (x: P) => `${ms(x.p50)} / ${ms(x.p90)} / ${ms(x.p99)}`;

/** Usage charts by day, number and agent, and the delivery analytics, all by the one counting rule (docs/analytics.md). */
export function UsagePage() {
  const [days, setDays] = useState(30);
  const [period, setPeriod] = useState<'week' | 'month' | 'year'>('month');
  const daily = useApi<{ data: Day[] }>(`/v1/usage/daily?days=${days}`);
  const byNumber = useApi<ByNumber>('/v1/usage/by-number');
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const byAgent = useApi<ByAgent>(`/v1/usage/by-agent?period=${period}&tz=${encodeURIComponent(tz)}`);
  const delivery = useApi<Delivery>(`/v1/analytics/messages?days=${days}`);
  const hooks = useApi<Hooks>(`/v1/analytics/webhooks?days=${days}`);
  const calls = useApi<Calls>(`/v1/analytics/calls?days=${days}`);
  const d = daily.data?.data ?? [];
  const totals = d.reduce(
    (t, x) => ({
      messages: t.messages + x.messages,
      calls: t.calls + x.calls,
      webhooks: t.webhooks + x.webhooks,
      spent: t.spent + x.spentMicros,
    }),
    {
      messages: 0,
      calls: 0,
      webhooks: 0,
      spent: 0,
    },
  );
  const numbers = byNumber.data?.data ?? [];
  const agents = byAgent.data?.data ?? [];
  return (
    <>
      <Section
        title="Usage by day"
        actions={
          <select value={String(days)} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))} aria-label="days">
            {[7, 30, 90, 365].map((n) => (
              <option key={n} value={String(n)}>
                last {n} days
              </option>
            ))}
          </select>
        }
      >
        <Problem error={daily.error} />
        <p class="totals" data-totals>
          {count(totals.messages, 'message')} · {count(totals.calls, 'call')} ·{' '}
          {count(totals.webhooks, 'webhook delivery', 'webhook deliveries')} · {money(totals.spent)} spent
        </p>
        {d.length > 0 ? (
          <Chart
            name="daily"
            title="Messages, calls and webhook deliveries per day (UTC)"
            x={d.map((x) => Date.parse(`${x.date}T00:00:00Z`) / 1000)}
            series={[
              { label: 'messages', color: COLORS.messages },
              { label: 'calls', color: COLORS.calls },
              { label: 'webhooks', color: COLORS.webhooks },
            ]}
            values={[d.map((x) => x.messages), d.map((x) => x.calls), d.map((x) => x.webhooks)]}
          />
        ) : null}
      </Section>
      <Section title="Usage by number (all time)">
        <Problem error={byNumber.error} />
        {numbers.length > 0 ? (
          <Chart
            name="by-number"
            title="Messages and calls per number"
            xLabel="Number"
            x={numbers.map((_n, i) => i)}
            labels={numbers.map((n) => n.phoneNumber)}
            series={[
              { label: 'messages', color: COLORS.messages },
              { label: 'calls', color: COLORS.calls },
            ]}
            values={[numbers.map((n) => n.messages), numbers.map((n) => n.calls)]}
          />
        ) : null}
        <table data-table="by-number">
          <tbody>
            {numbers.map((n) => (
              <tr key={n.numberId}>
                <td>{n.phoneNumber}</td>
                <td>{n.agentName ?? '–'}</td>
                <td>{count(n.messages, 'message')}</td>
                <td>{count(n.calls, 'call')}</td>
                <td>{n.callSeconds} s</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section
        title={`Usage by agent (this ${period})`}
        actions={
          <select value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as typeof period)} aria-label="period">
            <option value="week">this week</option>
            <option value="month">this month</option>
            <option value="year">this year</option>
          </select>
        }
      >
        <Problem error={byAgent.error} />
        {agents.length > 0 ? (
          <Chart
            name="by-agent"
            title="Messages and calls per agent"
            xLabel="Agent"
            x={agents.map((_a, i) => i)}
            labels={agents.map((a) => a.agentName)}
            series={[
              { label: 'messages', color: COLORS.messages },
              { label: 'calls', color: COLORS.calls },
            ]}
            values={[agents.map((a) => a.messages), agents.map((a) => a.calls)]}
          />
        ) : null}
        <table data-table="by-agent">
          <tbody>
            {agents.map((a) => (
              <tr key={a.agentId ?? 'unassigned'}>
                <td>
                  {a.agentName} {a.isOrphan ? <span class="tag">deleted</span> : null}
                </td>
                <td>{count(a.messages, 'message')}</td>
                <td>{count(a.calls, 'call')}</td>
                <td>{a.totalSeconds} s</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Message delivery">
        <Problem error={delivery.error} />
        <table data-table="message-delivery">
          <thead>
            <tr>
              <th>Day</th>
              <th>Number</th>
              <th>Sent</th>
              <th>Delivered</th>
              <th>Failed</th>
              <th>Rate</th>
              <th>Failures by category</th>
            </tr>
          </thead>
          <tbody>
            {(delivery.data?.data ?? []).map((r) => (
              <tr key={`${r.date}:${r.phoneNumber}`}>
                <td>{r.date}</td>
                <td>{r.phoneNumber}</td>
                <td>{r.sent}</td>
                <td>{r.delivered}</td>
                <td>{r.failed}</td>
                <td>{pct(r.deliveryRate)}</td>
                <td>
                  {Object.entries(r.failuresByCategory)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(', ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Webhook endpoints">
        <table data-table="webhook-endpoints">
          <thead>
            <tr>
              <th>Endpoint</th>
              <th>Deliveries</th>
              <th>Success</th>
              <th>Attempt latency p50 / p90 / p99</th>
            </tr>
          </thead>
          <tbody>
            {(hooks.data?.data ?? []).map((w) => (
              <tr key={w.webhookId}>
                <td class="mono">{w.url ?? w.webhookId}</td>
                <td>{w.deliveries}</td>
                <td>{pct(w.successRate)}</td>
                <td>{p(w.attemptLatencyMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Calls by agent">
        <table data-table="call-agents">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Placed</th>
              <th>Completed</th>
              <th>Failed</th>
              <th>Outcomes</th>
              <th>Turn latency p50 / p90 / p99</th>
            </tr>
          </thead>
          <tbody>
            {(calls.data?.data ?? []).map((c) => (
              <tr key={c.agentId ?? 'unassigned'}>
                <td>{c.agentName}</td>
                <td>{c.placed}</td>
                <td>{c.completed}</td>
                <td>{c.failed}</td>
                <td>
                  {Object.entries(c.outcomes)
                    .map(([k, v]) => `${k} ${v}`)
                    .join(', ')}
                </td>
                <td>{p(c.turnLatencyMs.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
