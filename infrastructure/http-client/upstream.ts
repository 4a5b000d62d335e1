import { StringDecoder } from 'node:string_decoder';
import { storableJson, storableText } from '../../domain/shared/storable-text.js';

/**
 * The edge where upstream answers enter (docs/input-rules.md#what-upstream-servers-answer): every adapter that
 * reads what a webhook receiver, a provider, a language model or a speech service answers reads it through these
 * helpers, so what reaches a fact is bounded and storable whatever the upstream sent. Bytes are decoded as UTF-8
 * (an invalid sequence becomes U+FFFD), NUL and lone surrogates become U+FFFD, and JSON values also lose what is
 * nested too deep.
 */

/** Upstream bytes as storable text, at most `maxChars` characters. */
export const upstreamText = (bytes: Uint8Array, maxChars?: number): string =>
  storableText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), maxChars);

/** A header value or status message of an upstream answer, storable and short. */
export const upstreamHeader = (v: string | readonly string[] | undefined, maxChars = 200): string | null =>
  v === undefined ? null : storableText(Array.isArray(v) ? v.join(', ') : String(v), maxChars);

/** Parses upstream JSON text (throws SyntaxError) and makes the value storable. */
export const upstreamJson = (text: string): unknown => storableJson(JSON.parse(text));

/** An error's message as the platform records it (a provider's error text is upstream input too). */
export const upstreamError = (err: unknown, maxChars = 500): string => {
  const e = err as NodeJS.ErrnoException;
  const message = e instanceof Error ? e.message : String(err);
  return storableText(e?.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : message, maxChars);
};

/** Decodes a body that arrives in chunks: a character split between two chunks is decoded whole. */
export const chunkDecoder = (): { write(c: Buffer): string; end(): string } => {
  const d = new StringDecoder('utf8');
  return { write: (c) => storableText(d.write(c)), end: () => storableText(d.end()) };
};
