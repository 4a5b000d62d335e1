import { assertNever, type Command, type Decider, type Event } from '../shared/types.js';

/**
 * One refresh of the locations contacts share with an account's rich lines, `rich_location_refresh-<refreshId>`
 * (docs/rich-messaging.md#location): requested for the lines, then what the provider reported (every contact who
 * shares, or stopped sharing, with one of them) or a failure.
 */
export const locationRefreshStream = (refreshId: string) => `rich_location_refresh-${refreshId}`;

export type RichLineRef = Readonly<{ numberId: string; phoneNumber: string }>;
export type SharedLocation = Readonly<{
  /** the contact's number */
  phoneNumber: string;
  /** the rich line the contact shares with */
  numberId: string;
  sharing: boolean;
  latitude: number | null;
  longitude: number | null;
  /** when the provider's position was taken (null when not sharing) */
  fixAt: string | null;
}>;

type Ref = { refreshId: string };
export type LocationRefreshCommand =
  | Command<'RequestLocationRefresh', Ref & { lines: readonly RichLineRef[] }>
  | Command<'RecordLocations', Ref & { locations: readonly SharedLocation[] }>
  | Command<'RecordLocationRefreshFailure', Ref & { reason: string }>;

export type LocationRefreshEvent =
  | Event<'LocationRefreshRequested', Ref & { accountId: string; lines: readonly RichLineRef[]; requestedAt: string }>
  | Event<'ContactLocationsReported', Ref & { accountId: string; locations: readonly SharedLocation[]; reportedAt: string }>
  | Event<'LocationRefreshFailed', Ref & { reason: string; failedAt: string }>;

export type LocationRefreshState = { status: 'none' } | { status: 'requested' | 'reported' | 'failed'; lines: readonly RichLineRef[] };

export const locationRefreshDecider: Decider<LocationRefreshCommand, LocationRefreshEvent, LocationRefreshState> = {
  initialState: () => ({ status: 'none' }),
  decide: (cmd, s) => {
    const now = cmd.metadata.now;
    switch (cmd.type) {
      case 'RequestLocationRefresh':
        if (s.status !== 'none') return [];
        return [{ type: 'LocationRefreshRequested', data: { ...cmd.data, accountId: cmd.metadata.accountId, requestedAt: now } }];
      case 'RecordLocations':
        if (s.status !== 'requested') return [];
        return [{ type: 'ContactLocationsReported', data: { ...cmd.data, accountId: cmd.metadata.accountId, reportedAt: now } }];
      case 'RecordLocationRefreshFailure':
        if (s.status !== 'requested') return [];
        return [{ type: 'LocationRefreshFailed', data: { ...cmd.data, failedAt: now } }];
      default:
        return assertNever(cmd);
    }
  },
  evolve: (s, e) => {
    switch (e.type) {
      case 'LocationRefreshRequested':
        return { status: 'requested', lines: e.data.lines };
      case 'ContactLocationsReported':
        return s.status === 'none' ? s : { ...s, status: 'reported' };
      case 'LocationRefreshFailed':
        return s.status === 'none' ? s : { ...s, status: 'failed' };
      default:
        return assertNever(e);
    }
  },
};
