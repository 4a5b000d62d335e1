/**
 * One voice turn sent to the developer's webhook and its answer (docs/calls.md#webhook-mode). Unlike other
 * events it is synchronous: the answer is what the agent says, so it is read as it streams and never retried.
 */
export type VoiceTurnRequest = Readonly<{
  url: string;
  /** the plain signing secret */
  secret: string;
  /** `X-Webhook-ID` */
  webhookId: string;
  /** `X-Webhook-Timestamp`, Unix seconds */
  timestamp: number;
  body: string;
  /** no response headers within this long: the turn is silent (the webhook's `timeout`) */
  firstByteTimeoutMs: number;
  signal: AbortSignal;
}>;

export type VoiceTurnResponse = Readonly<{
  httpStatus: number;
  /** `application/x-ndjson`: one object per line as it arrives; otherwise one object for the whole body */
  streaming: boolean;
  /** the answer's JSON values in order (a line that is not JSON throws `VoiceWebhookError`) */
  objects: AsyncIterable<unknown>;
}>;

export interface VoiceWebhookPort {
  /** Resolves when the answer's status and headers arrived; rejects with `VoiceWebhookError`. */
  post(req: VoiceTurnRequest): Promise<VoiceTurnResponse>;
}

export class VoiceWebhookError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'http' | 'network' | 'not_allowed' | 'malformed',
    readonly httpStatus: number | null = null,
  ) {
    super(message);
    this.name = 'VoiceWebhookError';
  }
}
