import { expect } from 'chai';
import type { AccountEvent, accountEventTypes } from '../../domain/account/account.decider.js';
import type { AgentEvent, agentEventTypes } from '../../domain/agent/agent.decider.js';
import type { CallEvent, callEventTypes } from '../../domain/call/call.decider.js';
import type { ChatappNumberEvent, chatappNumberEventTypes } from '../../domain/chatapp/chatapp-number.decider.js';
import type { ConnectionEvent, connectionEventTypes } from '../../domain/chatapp/connection.decider.js';
import type { TemplateEvent, templateEventTypes } from '../../domain/chatapp/template.decider.js';
import type { ContactEvent, contactEventTypes } from '../../domain/contact/contact.decider.js';
import type { ConsentEvent, consentEventTypes } from '../../domain/conversation/consent.decider.js';
import type { ConversationEvent, conversationEventTypes } from '../../domain/conversation/conversation.decider.js';
import type { MessageEvent, messageEventTypes } from '../../domain/message/message.decider.js';
import type { PhoneNumberEvent, phoneNumberEventTypes } from '../../domain/phone-number/phone-number.decider.js';
import type { RecordingAddOnEvent, recordingAddOnEventTypes } from '../../domain/recording-addon/recording-addon.decider.js';
import type { RegistrationEvent, registrationEventTypes } from '../../domain/registration/registration.decider.js';
import type { RichLineEvent, richLineEventTypes } from '../../domain/rich/rich-line.decider.js';
import type { SignUpEvent, signUpEventTypes } from '../../domain/signup/signup.decider.js';
import type { SipTrunkEvent, sipTrunkEventTypes } from '../../domain/sip-trunk/sip-trunk.decider.js';
import type { WebhookEvent, webhookEventTypes } from '../../domain/webhook/webhook.decider.js';
import type { WebhookDeliveryEvent, webhookDeliveryEventTypes } from '../../domain/webhook/webhook-delivery.decider.js';
import { allProjectors } from '../../infrastructure/capabilities/index.js';
import { defineProjector } from '../../projections/shared/projector.js';

/** true only when A and B are the same set of string literals */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// Compile time: each domain's list of event types is exactly its union's types (so the runtime checks below
// compare the handled types with the whole union, not with a hand-kept list).
const listsAreUnions: [
  Same<(typeof accountEventTypes)[number], AccountEvent['type']>,
  Same<(typeof agentEventTypes)[number], AgentEvent['type']>,
  Same<(typeof phoneNumberEventTypes)[number], PhoneNumberEvent['type']>,
  Same<(typeof signUpEventTypes)[number], SignUpEvent['type']>,
  Same<(typeof sipTrunkEventTypes)[number], SipTrunkEvent['type']>,
  Same<(typeof webhookEventTypes)[number], WebhookEvent['type']>,
  Same<(typeof webhookDeliveryEventTypes)[number], WebhookDeliveryEvent['type']>,
  Same<(typeof registrationEventTypes)[number], RegistrationEvent['type']>,
  Same<(typeof contactEventTypes)[number], ContactEvent['type']>,
  Same<(typeof conversationEventTypes)[number], ConversationEvent['type']>,
  Same<(typeof messageEventTypes)[number], MessageEvent['type']>,
  Same<(typeof consentEventTypes)[number], ConsentEvent['type']>,
  Same<(typeof callEventTypes)[number], CallEvent['type']>,
  Same<(typeof recordingAddOnEventTypes)[number], RecordingAddOnEvent['type']>,
  Same<(typeof connectionEventTypes)[number], ConnectionEvent['type']>,
  Same<(typeof chatappNumberEventTypes)[number], ChatappNumberEvent['type']>,
  Same<(typeof templateEventTypes)[number], TemplateEvent['type']>,
  Same<(typeof richLineEventTypes)[number], RichLineEvent['type']>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];

const noop = async () => undefined;

describe('typed projector definitions', () => {
  it('lists every event type of its union in each domain (checked at compile time above)', () => {
    expect(listsAreUnions.every(Boolean)).to.equal(true);
  });

  it('gives every projector the capabilities contribute a versioned name of its own, some events, and tables no other projector writes', () => {
    // what each projector handles is its event union, whole: `defineProjector` refuses at compile time a definition that
    // misses a member (below), so the projectors are iterated here as the capability list contributes them
    const owner = new Map<string, string>();
    for (const p of allProjectors) {
      expect(p.name, p.name).to.match(/^[a-z][a-z0-9_]*_v\d+$/);
      expect(p.handles.size, p.name).to.be.greaterThan(0);
      for (const t of p.tables) {
        expect(owner.get(t), `${t} is written by ${owner.get(t)} and ${p.name}`).to.equal(undefined);
        owner.set(t, p.name);
      }
    }
    expect(new Set(allProjectors.map((p) => p.name)).size).to.equal(allProjectors.length);
  });

  it('refuses at compile time a definition that misses an event, adds a foreign one, or misreads one', () => {
    const complete = defineProjector<AgentEvent>({
      name: 'complete',
      tables: [],
      on: { AgentCreated: noop, AgentUpdated: noop, AgentVoiceModeSwitched: noop, AgentDeleted: noop },
    });
    expect([...complete.handles]).to.have.length(4);

    defineProjector<AgentEvent>({
      name: 'missing',
      tables: [],
      // @ts-expect-error AgentDeleted has no handler: an event added to the union cannot be forgotten
      on: { AgentCreated: noop, AgentUpdated: noop, AgentVoiceModeSwitched: noop },
    });
    defineProjector<Extract<AgentEvent, { type: 'AgentCreated' }>>({
      name: 'foreign',
      tables: [],
      // @ts-expect-error AgentDeleted is not in the union this projector names
      on: { AgentCreated: noop, AgentDeleted: noop },
    });
    defineProjector<Extract<AgentEvent, { type: 'AgentCreated' }>>({
      name: 'misread',
      tables: [],
      on: {
        AgentCreated: async (_db, e) => {
          // @ts-expect-error the handler receives AgentCreated, which has no `changes`
          void e.data.changes;
        },
      },
    });
  });

  it('calls the handler of the event type only, and ignores other types', async () => {
    const seen: string[] = [];
    const p = defineProjector<AgentEvent>({
      name: 'dispatch',
      tables: [],
      on: {
        AgentCreated: async (_db, e) => {
          seen.push(`created ${e.data.config.name}`);
        },
        AgentUpdated: noop,
        AgentVoiceModeSwitched: noop,
        AgentDeleted: async (_db, e) => {
          seen.push(`deleted ${e.data.name}`);
        },
      },
    });
    const base = {
      id: 'e',
      metadata: {} as never,
      streamName: 'agent-a',
      streamRevision: 0n,
      globalPosition: 0n,
      checkpoint: '0/0',
      createdAt: '',
    };
    await p.apply(null as never, { ...base, type: 'AgentDeleted', data: { agentId: 'a', accountId: 'c', name: 'Ann', deletedAt: '' } });
    await p.apply(null as never, { ...base, type: 'SomethingElse', data: {} });
    expect(seen).to.deep.equal(['deleted Ann']);
  });
});
