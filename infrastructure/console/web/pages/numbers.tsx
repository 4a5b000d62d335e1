import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { Badge, Problem, Section } from '../components.js';
import { time } from '../format.js';
import { useApi } from '../hooks.js';

type NumberRow = { id: string; phoneNumber: string; country: string; status: string; agentId: string | null; createdAt: string };
type Agent = { id: string; name: string; voiceMode?: string; createdAt: string; numbers?: { id: string }[] };
type Connection = { id: string; businessName: string | null; status: string };
type ChatNumber = { id: string; phoneNumber: string; agentId: string | null; status: string; dualChannel: boolean; createdAt: string };

/** The chat-app numbers of every connection (docs/chatapp.md#numbers). */
function useChatNumbers(connections: Connection[] | undefined): {
  data: (ChatNumber & { connection: Connection })[];
  error: string | null;
} {
  const [data, setData] = useState<(ChatNumber & { connection: Connection })[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!connections) return;
    let live = true;
    Promise.all(
      connections.map(async (connection) =>
        (await api<{ data: ChatNumber[] }>(`/integrations/chatapp/${connection.id}/numbers?limit=100`)).data.map((n) => ({
          ...n,
          connection,
        })),
      ),
    )
      .then((all) => live && setData(all.flat()))
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [connections]);
  return { data, error };
}

/** The account's numbers and agents. */
export function NumbersPage() {
  const numbers = useApi<{ data: NumberRow[] }>('/v1/numbers?limit=100');
  const agents = useApi<{ data: Agent[] }>('/v1/agents?limit=100');
  const connections = useApi<{ data: Connection[] }>('/integrations/chatapp/connections?limit=100');
  const chat = useChatNumbers(connections.data?.data);
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
      {chat.data.length > 0 || chat.error || connections.error ? (
        <Section title="Chat-app numbers">
          <Problem error={connections.error ?? chat.error} />
          <table data-table="chatapp-numbers">
            <thead>
              <tr>
                <th>Number</th>
                <th>Business account</th>
                <th>Status</th>
                <th>Agent</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {chat.data.map((n) => (
                <tr key={n.id}>
                  <td>
                    {n.phoneNumber} {n.dualChannel ? <span class="tag">also SMS</span> : null}
                  </td>
                  <td>{n.connection.businessName ?? n.connection.id}</td>
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
      ) : null}
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
