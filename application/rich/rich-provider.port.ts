import type { CardNames } from '../../domain/rich/contact-card.decider.js';
import type { ImageType } from '../../domain/rich/image-type.js';

/**
 * The rich-messaging provider (docs/rich-messaging.md#the-provider): the service that carries messages on the rich
 * channel (`imessage` in the public API) for the numbers it serves. Every call may fail: a `RichProviderError` is an
 * answer (refused, with a reason); any other error is an unknown outcome, tried again by the process manager.
 */
export class RichProviderError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'RichProviderError';
  }
}

export type RichImage = Readonly<{ contentType: ImageType; data: Uint8Array }>;

export type RichLocation = Readonly<{
  /** the rich line the contact shares with */
  line: string;
  phoneNumber: string;
  sharing: boolean;
  latitude: number | null;
  longitude: number | null;
  fixAt: string | null;
}>;

export interface RichProviderPort {
  /** What `phoneNumber` can receive now, asked through one of the account's lines. */
  checkCapabilities(q: { line: string; phoneNumber: string }): Promise<{ imessage: boolean; sms: boolean }>;
  /** Sends one message (text, media, or a carousel of 2-20 images with no body); idempotent by the key. */
  send(m: {
    idempotencyKey: string;
    from: string;
    to: string;
    body: string;
    mediaUrls: readonly string[];
    sendStyle: string | null;
    replyToProviderMessageId: string | null;
  }): Promise<{ providerMessageId: string }>;
  /** A reaction (a tapback or an emoji) to a message; idempotent by the key. */
  react(r: { idempotencyKey: string; from: string; to: string; providerMessageId: string | null; reaction: string }): Promise<void>;
  /** Shows the typing indicator to the participant for a few seconds. */
  typing(t: { from: string; to: string }): Promise<void>;
  /** Replaces the line's contact card (null: removes it); a version older than the one it holds is ignored. */
  publishContactCard(c: { line: string; version: number; card: (CardNames & { avatar: RichImage | null }) | null }): Promise<void>;
  /** Sets or clears the chat background of a conversation; idempotent by the key. */
  setBackground(b: { idempotencyKey: string; line: string; participant: string; image: RichImage }): Promise<void>;
  clearBackground(b: { line: string; participant: string; version: number }): Promise<void>;
  /** Every contact who shares (or shared) a location with one of the lines, as the provider knows it now. */
  locations(q: { lines: readonly string[] }): Promise<RichLocation[]>;
}

/**
 * What the provider reports about its lines (its callbacks): lines it starts or stops serving. Messages to a line and
 * statuses of sent messages go to messaging's `MessagingInboundPort` with channel `imessage`.
 */
export interface RichEventsPort {
  lineActivated(phoneNumber: string): Promise<{ numberId: string } | null>;
  lineDeactivated(phoneNumber: string): Promise<{ numberId: string } | null>;
}

/** Fetches an image a caller names by URL, once (docs/rich-messaging.md#images); refuses with `ImageRefused`. */
export class ImageRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ImageRefused';
  }
}
export interface ImageFetcherPort {
  /** the bytes, at most `maxBytes`; never from a private or internal address */
  fetch(url: string, o: { maxBytes: number }): Promise<Uint8Array>;
}

/** Where fetched images are kept, to be served to the provider. */
export interface MediaStorePort {
  put(accountId: string, data: Uint8Array, contentType: ImageType): Promise<{ mediaId: string; sha256: string }>;
  get(mediaId: string): Promise<RichImage | null>;
}
