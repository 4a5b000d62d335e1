import { type CapabilityCheckEvent, capabilityCheckDecider, capabilityCheckStream } from '../../domain/rich/capability-check.decider.js';
import { type ContactCardEvent, contactCardDecider, contactCardStream } from '../../domain/rich/contact-card.decider.js';
import { imageTypeOf, MAX_IMAGE_BYTES } from '../../domain/rich/image-type.js';
import { type LocationRefreshEvent, locationRefreshDecider, locationRefreshStream } from '../../domain/rich/location-refresh.decider.js';
import {
  type RichConversationEvent,
  richConversationDecider,
  richConversationStream,
} from '../../domain/rich/rich-conversation.decider.js';
import type { StoredImage } from '../../domain/rich/stored-image.js';
import type { RecordedEvent } from '../ports/event-store.port.js';
import type { IdsPort } from '../ports/ids.port.js';
import type { LoggerPort } from '../ports/logger.port.js';
import type { RequestContext } from '../shared/context.js';
import type { CommandExecutor } from '../shared/execute.js';
import { ProcessManager } from '../shared/process-manager.js';
import {
  type ImageFetcherPort,
  ImageRefused,
  type MediaStorePort,
  RichProviderError,
  type RichProviderPort,
} from './rich-provider.port.js';

type Handled =
  | Extract<CapabilityCheckEvent, { type: 'ContactCapabilityCheckRequested' }>
  | Extract<ContactCardEvent, { type: 'ContactCardChangeRequested' | 'ContactCardDeleted' }>
  | Extract<RichConversationEvent, { type: 'ChatBackgroundRequested' | 'ChatBackgroundRemoved' | 'TypingIndicatorRequested' }>
  | Extract<LocationRefreshEvent, { type: 'LocationRefreshRequested' }>;

/**
 * Everything else the rich channel asks of the provider (docs/rich-messaging.md): capability checks, contact cards
 * (with their avatar fetched once and kept), chat backgrounds (fetched, checked by content, handed over), typing
 * indicators and location refreshes. Each process is driven to its end in one go from the event that starts it,
 * reading its stream for where it is, and each outcome is recorded on that stream: a request that waits reads it there.
 * A provider refusal is an outcome; any other error is an unknown one, tried again when the event is handled again.
 */
export class RichProviderProcess extends ProcessManager<Handled> {
  readonly name = 'rich_provider';
  readonly handles = [
    'ContactCapabilityCheckRequested',
    'ContactCardChangeRequested',
    'ContactCardDeleted',
    'ChatBackgroundRequested',
    'ChatBackgroundRemoved',
    'TypingIndicatorRequested',
    'LocationRefreshRequested',
  ] as const;

  constructor(
    private readonly exec: CommandExecutor,
    private readonly ids: IdsPort,
    private readonly provider: RichProviderPort,
    private readonly fetcher: ImageFetcherPort,
    private readonly media: MediaStorePort,
    private readonly log: LoggerPort,
  ) {
    super();
  }

  protected instanceOf(e: RecordedEvent<Handled>): string {
    switch (e.type) {
      case 'ContactCapabilityCheckRequested':
        return capabilityCheckStream(e.data.checkId);
      case 'ContactCardChangeRequested':
      case 'ContactCardDeleted':
        return contactCardStream(e.data.numberId);
      case 'LocationRefreshRequested':
        return locationRefreshStream(e.data.refreshId);
      default:
        return richConversationStream(e.data.conversationId);
    }
  }

  protected async react(e: RecordedEvent<Handled>, ctx: RequestContext): Promise<void> {
    switch (e.type) {
      case 'ContactCapabilityCheckRequested':
        return this.check(e, ctx);
      case 'ContactCardChangeRequested':
        return this.cardChange(e, ctx);
      case 'ContactCardDeleted':
        return this.publishCard(e.data.numberId, e.data.linePhoneNumber, ctx);
      case 'ChatBackgroundRequested':
        return this.background(e, ctx);
      case 'ChatBackgroundRemoved':
        return this.clearBackground(e, ctx);
      case 'TypingIndicatorRequested':
        return this.typing(e, ctx);
      case 'LocationRefreshRequested':
        return this.locations(e, ctx);
    }
  }

  private async check(e: RecordedEvent<Extract<Handled, { type: 'ContactCapabilityCheckRequested' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = capabilityCheckStream(d.checkId);
    if ((await this.exec.state(capabilityCheckDecider, stream)).state.status !== 'requested') return;
    try {
      const r = await this.provider.checkCapabilities({ line: d.linePhoneNumber, phoneNumber: d.phoneNumber });
      await this.exec.execute(capabilityCheckDecider, stream, { type: 'RecordCapabilities', data: { checkId: d.checkId, ...r } }, ctx);
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      await this.exec.execute(
        capabilityCheckDecider,
        stream,
        { type: 'RecordCapabilityCheckFailure', data: { checkId: d.checkId, reason: err.reason } },
        ctx,
      );
    }
  }

  /** Fetches an image once, checks it by its bytes, and keeps it; a refusal is the reason, in the caller's words. */
  private async fetchImage(accountId: string, url: string): Promise<StoredImage | { refused: string }> {
    let data: Uint8Array;
    try {
      data = await this.fetcher.fetch(url, { maxBytes: MAX_IMAGE_BYTES });
    } catch (err) {
      if (err instanceof ImageRefused) return { refused: err.reason };
      throw err;
    }
    const contentType = imageTypeOf(data);
    if (!contentType) return { refused: 'the file is not a JPEG, PNG, GIF, WebP or HEIC image (checked by its content)' };
    const { mediaId, sha256 } = await this.media.put(accountId, data, contentType);
    return { mediaId, contentType, bytes: data.length, sha256 };
  }

  private async cardChange(e: RecordedEvent<Extract<Handled, { type: 'ContactCardChangeRequested' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = contactCardStream(d.numberId);
    const { state } = await this.exec.state(contactCardDecider, stream);
    if (state.pending?.changeId === d.changeId) {
      const avatar = d.avatarUrl === null ? null : await this.fetchImage(d.accountId, d.avatarUrl);
      if (avatar && 'refused' in avatar)
        return void (await this.exec.execute(
          contactCardDecider,
          stream,
          { type: 'RejectCardAvatar', data: { numberId: d.numberId, changeId: d.changeId, reason: avatar.refused } },
          ctx,
        ));
      await this.exec.execute(
        contactCardDecider,
        stream,
        { type: 'ApplyCardChange', data: { numberId: d.numberId, changeId: d.changeId, avatar } },
        ctx,
      );
    }
    await this.publishCard(d.numberId, d.linePhoneNumber, ctx);
  }

  /** Gives the provider the card as it is now (its version), unless it has it already. */
  private async publishCard(numberId: string, line: string, ctx: RequestContext) {
    const stream = contactCardStream(numberId);
    const { state } = await this.exec.state(contactCardDecider, stream);
    if (state.version <= state.publishedVersion) return;
    const card = state.card;
    const avatar = card?.avatar ? await this.media.get(card.avatar.mediaId) : null;
    try {
      await this.provider.publishContactCard({ line, version: state.version, card: card ? { ...card.names, avatar } : null });
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      // the card stays as set here; the provider shows the one it had until the next change
      return void this.log.warn({ err, numberId }, 'rich provider refused a contact card');
    }
    await this.exec.execute(contactCardDecider, stream, { type: 'RecordCardPublished', data: { numberId, version: state.version } }, ctx);
  }

  private async background(e: RecordedEvent<Extract<Handled, { type: 'ChatBackgroundRequested' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = richConversationStream(d.conversationId);
    const ref = { conversationId: d.conversationId, changeId: d.changeId };
    let { state } = await this.exec.state(richConversationDecider, stream);
    if (state.pending?.changeId !== d.changeId) return;
    if (!state.pending.fetched) {
      const image = await this.fetchImage(d.accountId, d.imageUrl);
      if ('refused' in image)
        return void (await this.exec.execute(
          richConversationDecider,
          stream,
          { type: 'RejectBackground', data: { ...ref, reason: image.refused } },
          ctx,
        ));
      state = (
        await this.exec.execute(
          richConversationDecider,
          stream,
          { type: 'RecordBackgroundImage', data: { ...ref, image, backgroundId: this.ids.derived('bg', d.conversationId, image.sha256) } },
          ctx,
        )
      ).state;
      if (state.pending?.changeId !== d.changeId) return; // the same image as before: kept
    }
    const { events } = await this.exec.load(richConversationDecider, stream);
    const fetched = events.findLast((x) => x.type === 'ChatBackgroundImageFetched' && x.data.changeId === d.changeId);
    const image = fetched?.type === 'ChatBackgroundImageFetched' ? await this.media.get(fetched.data.image.mediaId) : null;
    if (!image)
      return void (await this.exec.execute(
        richConversationDecider,
        stream,
        { type: 'RecordBackgroundFailure', data: { ...ref, reason: 'the fetched image is no longer stored' } },
        ctx,
      ));
    try {
      await this.provider.setBackground({ idempotencyKey: d.changeId, line: d.linePhoneNumber, participant: d.participant, image });
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      return void (await this.exec.execute(
        richConversationDecider,
        stream,
        { type: 'RecordBackgroundFailure', data: { ...ref, reason: err.reason } },
        ctx,
      ));
    }
    await this.exec.execute(richConversationDecider, stream, { type: 'RecordBackgroundApplied', data: ref }, ctx);
  }

  private async clearBackground(e: RecordedEvent<Extract<Handled, { type: 'ChatBackgroundRemoved' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = richConversationStream(d.conversationId);
    const { state } = await this.exec.state(richConversationDecider, stream);
    if (state.background !== null || state.version !== d.version || state.clearedVersion >= d.version) return;
    try {
      await this.provider.clearBackground({ line: d.linePhoneNumber, participant: d.participant, version: d.version });
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      return void this.log.warn({ err, conversationId: d.conversationId }, 'rich provider refused to clear a background');
    }
    await this.exec.execute(
      richConversationDecider,
      stream,
      { type: 'RecordBackgroundCleared', data: { conversationId: d.conversationId, version: d.version } },
      ctx,
    );
  }

  private async typing(e: RecordedEvent<Extract<Handled, { type: 'TypingIndicatorRequested' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = richConversationStream(d.conversationId);
    if ((await this.exec.state(richConversationDecider, stream)).state.settled.includes(d.typingId)) return;
    try {
      await this.provider.typing({ from: d.linePhoneNumber, to: d.participant });
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      // best effort: an indicator the provider drops is not tried again
      this.log.warn({ err, conversationId: d.conversationId }, 'rich provider dropped a typing indicator');
    }
    await this.exec.execute(
      richConversationDecider,
      stream,
      { type: 'RecordTypingSent', data: { conversationId: d.conversationId, typingId: d.typingId } },
      ctx,
    );
  }

  private async locations(e: RecordedEvent<Extract<Handled, { type: 'LocationRefreshRequested' }>>, ctx: RequestContext) {
    const d = e.data;
    const stream = locationRefreshStream(d.refreshId);
    if ((await this.exec.state(locationRefreshDecider, stream)).state.status !== 'requested') return;
    const byLine = new Map(d.lines.map((l) => [l.phoneNumber, l.numberId]));
    try {
      const found = await this.provider.locations({ lines: d.lines.map((l) => l.phoneNumber) });
      const locations = found
        .filter((l) => byLine.has(l.line))
        .map((l) => ({
          phoneNumber: l.phoneNumber,
          numberId: byLine.get(l.line)!,
          sharing: l.sharing,
          latitude: l.sharing ? l.latitude : null,
          longitude: l.sharing ? l.longitude : null,
          fixAt: l.fixAt,
        }));
      await this.exec.execute(
        locationRefreshDecider,
        stream,
        { type: 'RecordLocations', data: { refreshId: d.refreshId, locations } },
        ctx,
      );
    } catch (err) {
      if (!(err instanceof RichProviderError)) throw err;
      await this.exec.execute(
        locationRefreshDecider,
        stream,
        { type: 'RecordLocationRefreshFailure', data: { refreshId: d.refreshId, reason: err.reason } },
        ctx,
      );
    }
  }
}
