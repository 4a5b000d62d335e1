import { Badge, Problem, Section } from '../components.js';
import { time } from '../format.js';
import { useApi } from '../hooks.js';

type NumberRow = { id: string; phoneNumber: string; country: string; status: string; agentId: string | null; createdAt: string };
type Agent = { id: string; name: string; voiceMode?: string; createdAt: string; numbers?: { id: string }[] };

/** The account's numbers and agents. */
export function NumbersPage() {
  const numbers = useApi<{ data: NumberRow[] }>('/v1/numbers?limit=100');
  const agents = useApi<{ data: Agent[] }>('/v1/agents?limit=100');
  const name = (id: string | null) => (id ? (agents.data?.data.find((a) => a.id === id)?.name ?? id) : '–');
  return (
    <>
      <Section title="Phone numbers">
        <Problem error={numbers.error} />
        <table data-table="numbers">
          <thead>
            <tr>
              <th>Number</th>
              <th>Country</th>
              <th>Status</th>
              <th>Agent</th>
              <th>Since</th>
            </tr>
          </thead>
          <tbody>
            {(numbers.data?.data ?? []).map((n) => (
              <tr key={n.id}>
                <td>{n.phoneNumber}</td>
                <td>{n.country}</td>
                <td>
                  <Badge status={n.status} />
                </td>
                <td>{name(n.agentId)}</td>
                <td>{time(n.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Agents">
        <Problem error={agents.error} />
        <table data-table="agents">
          <thead>
            <tr>
              <th>Name</th>
              <th>Id</th>
              <th>Voice mode</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {(agents.data?.data ?? []).map((a) => (
              <tr key={a.id}>
                <td>{a.name}</td>
                <td class="mono">{a.id}</td>
                <td>{a.voiceMode ?? '–'}</td>
                <td>{time(a.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
