import { Badge, Problem, Section } from '../components.js';
import { time } from '../format.js';
import { useApi } from '../hooks.js';

type ConversationRow = {
  id: string;
  participant: string;
  phoneNumber?: string;
  messageCount: number;
  lastMessageAt: string;
  lastMessage?: string;
};
type Message = { id: string; body: string; direction: string; status: string | null; receivedAt: string; failureReason: string | null };
type Step = { seq: number; type: string; time: string; status: string; actor: string };
type History = { status: string | null; events: Step[] };

/** Conversations, newest activity first. */
export function ConversationsPage() {
  const list = useApi<{ data: ConversationRow[]; total: number }>('/v1/conversations?limit=100');
  return (
    <Section title="Conversations">
      <Problem error={list.error} />
      <table data-table="conversations">
        <thead>
          <tr>
            <th>With</th>
            <th>Messages</th>
            <th>Last activity</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((c) => (
            <tr key={c.id}>
              <td>
                <a href={`#/conversations/${c.id}`}>{c.participant}</a>
              </td>
              <td>{c.messageCount}</td>
              <td>{time(c.lastMessageAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.data.length === 0 ? <p class="empty">No conversations yet.</p> : null}
    </Section>
  );
}

/** Every status a message went through, from its audit history (GET /v1/messages/{id}/history). */
function Timeline({ messageId }: { messageId: string }) {
  const h = useApi<History>(`/v1/messages/${messageId}/history`);
  if (h.error) return <Problem error={h.error} />;
  // one step per change of status: a receipt that changed nothing is in the history, not on the timeline
  const steps = (h.data?.events ?? []).filter((e, i, all) => i === 0 || e.status !== all[i - 1]!.status);
  return (
    <ol class="timeline" data-timeline={messageId}>
      {steps.map((s) => (
        <li key={s.seq} title={`${s.type} by ${s.actor}`}>
          <Badge status={s.status} /> <time>{time(s.time)}</time>
        </li>
      ))}
    </ol>
  );
}

/** One conversation: its messages, each with its status timeline. */
export function ConversationPage({ id }: { id: string }) {
  const c = useApi<{ id: string; participant: string; messages: Message[] }>(`/v1/conversations/${id}?message_limit=200`, {
    everyMs: 5000,
  });
  return (
    <Section title={`Conversation with ${c.data?.participant ?? '…'}`} actions={<a href="#/conversations">All conversations</a>}>
      <Problem error={c.error} />
      <ul class="messages" data-conversation={id}>
        {(c.data?.messages ?? []).map((m) => (
          <li key={m.id} class={`message ${m.direction}`} data-message={m.id}>
            <div class="bubble">
              <p>{m.body}</p>
              <small>
                {m.direction} · {time(m.receivedAt)} · <Badge status={m.status} />
                {m.failureReason ? <span class="reason"> {m.failureReason}</span> : null}
              </small>
            </div>
            <Timeline key={`${m.id}:${m.status}`} messageId={m.id} />
          </li>
        ))}
      </ul>
    </Section>
  );
}
