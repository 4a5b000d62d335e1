import type { Failure } from '../message/message.decider.js';

/**
 * The chat platform's error codes that the platform itself names (docs/chatapp.md#error-codes): what each means
 * for the sender, as a failed message shows it. 131047 and 100 are also decided here before a send is accepted
 * (session-window.ts); the others only the platform knows, and it reports them on a message after accepting it.
 */
export const PLATFORM_CODES = {
  131047: {
    meaning: 'the 24-hour window for free-form messages is closed; send an approved template',
    category: 'wait',
    retryable: false,
  },
  131042: {
    meaning: 'the business account has no valid payment method; add one to the business account at the chat platform',
    category: 'configuration',
    retryable: false,
  },
  131026: { meaning: 'the recipient cannot receive messages; do not retry', category: 'recipient', retryable: false },
  131051: { meaning: 'this message type is not supported for the recipient', category: 'content', retryable: false },
  100: { meaning: 'malformed request, usually a template variable shape mismatch', category: 'content', retryable: false },
} as const satisfies Record<number, { meaning: string; category: string; retryable: boolean }>;

export type PlatformCode = keyof typeof PLATFORM_CODES;

/** `Chat platform error <code>: <meaning>`: how every platform code is worded in an error message or a failure reason. */
export const platformCodeText = (code: number, detail?: string | null): string => {
  const known = (PLATFORM_CODES as Record<number, { meaning: string }>)[code];
  const words = detail?.trim().replace(/[.\s]+$/, '') || null;
  return `Chat platform error ${code}: ${known?.meaning ?? words ?? 'the platform refused the message'}${known && words ? ` (${words})` : ''}.`;
};

/** A platform code as the failure of a message: its reason, code, category and retryability. Unknown codes are never retryable. */
export function chatappFailure(code: number, detail?: string | null): Failure {
  const known = (PLATFORM_CODES as Record<number, { category: string; retryable: boolean }>)[code];
  return {
    failureReason: platformCodeText(code, detail),
    errorCode: String(code),
    failureCategory: known?.category ?? 'unknown',
    retryable: known?.retryable ?? false,
  };
}
