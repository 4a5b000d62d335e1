import { DomainError } from '../shared/errors.js';
import { PersistentMap } from '../shared/persistent-map.js';
import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';
import { nextUtcMidnight } from './rules.js';

/** The stream of a number's daily sending counters (UTC day `YYYY-MM-DD`): `<category>-<id>` (docs/event-store.md#aggregates-and-events). */
export const numberDayStream = (numberId: string, day: string) => `number_day-${numberId}:${day}`;

/**
 * A number's daily sending counters, one stream per number and UTC day (`number_day-<numberId>:<YYYY-MM-DD>`),
 * so the daily caps hold under concurrency without one hot stream for every send (docs/messaging.md#caps):
 * only sends that count (starting a conversation, writing to someone who never wrote to the number) touch it.
 * Each participant counts once a day; a count whose send was then refused by its conversation is given back.
 */
type Ref = { numberId: string; day: string };
export type DailyCounterCommand =
  | Command<'CountSend', Ref & { participant: string; newConversation: boolean; limits: { newConversations: number; outbound: number } }>
  | Command<'ReleaseCount', Ref & { participant: string }>;

export type DailyCounterEvent =
  | Event<'DailySendCounted', Ref & { participant: string; newConversation: boolean; countedAt: string }>
  | Event<'DailySendCountReleased', Ref & { participant: string; releasedAt: string }>;

export type DailyCounterState = Readonly<{
  /**
   * participant → whether the count started a conversation; a map that is never copied whole, so that each of a
   * busy day's counts costs the same (docs/event-store.md#states-that-grow)
   */
  counted: PersistentMap<boolean>;
  newConversations: number;
}>;

export const dailyCounterDecider: Decider<DailyCounterCommand, DailyCounterEvent, DailyCounterState> = {
  initialState: () => ({ counted: PersistentMap.empty<boolean>(), newConversations: 0 }),

  decide: (cmd, s) => {
    switch (cmd.type) {
      case 'CountSend': {
        const d = cmd.data;
        if (s.counted.has(d.participant)) return [];
        const clears = `It resets at midnight UTC (${nextUtcMidnight(cmd.metadata.now)}).`;
        if (d.newConversation && s.newConversations >= d.limits.newConversations)
          throw new DomainError(
            'NEW_CONVERSATION_LIMIT_REACHED',
            `This number started its ${d.limits.newConversations} new conversations allowed today. ${clears}`,
          );
        if (s.counted.size >= d.limits.outbound)
          throw new DomainError(
            'OUTBOUND_LIMIT_REACHED',
            `This number messaged the ${d.limits.outbound} contacts who never wrote to it that it may message today. ${clears}`,
          );
        return [
          {
            type: 'DailySendCounted',
            data: {
              numberId: d.numberId,
              day: d.day,
              participant: d.participant,
              newConversation: d.newConversation,
              countedAt: cmd.metadata.now,
            },
          },
        ];
      }
      case 'ReleaseCount': {
        const d = cmd.data;
        if (!s.counted.has(d.participant)) return [];
        return [
          {
            type: 'DailySendCountReleased',
            data: { numberId: d.numberId, day: d.day, participant: d.participant, releasedAt: cmd.metadata.now },
          },
        ];
      }
      default:
        return assertNever(cmd);
    }
  },

  evolve: (s, e) => {
    switch (e.type) {
      case 'DailySendCounted': {
        const counted = s.counted.set(e.data.participant, e.data.newConversation);
        return { counted, newConversations: s.newConversations + (e.data.newConversation ? 1 : 0) };
      }
      case 'DailySendCountReleased': {
        const wasNew = s.counted.get(e.data.participant);
        if (wasNew === undefined) return s;
        return { counted: s.counted.delete(e.data.participant), newConversations: s.newConversations - (wasNew ? 1 : 0) };
      }
      default:
        return assertNever(e);
    }
  },
};
