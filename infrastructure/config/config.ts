import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

/** All configuration, parsed once from the environment. The README's configuration table mirrors this. */
export const ConfigSchema = z.object({
  PORT: int(8080, 0, 65535),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().min(1).optional(),
  DATABASE_POOL_SIZE: int(10, 1, 200),
  /** on a server: statements prepared once per connection (docs/event-store.md#prepared-statements); false behind a pooler that keeps none */
  DATABASE_PREPARED_STATEMENTS: bool.default(true),
  /** embedded only: PGlite on a worker thread of its own, off the thread that serves HTTP and calls (docs/event-store.md#pglite-on-its-own-thread) */
  PGLITE_THREAD: bool.default(true),
  /** embedded only: how often the embedded database's tables are looked at for analysis and vacuum (docs/event-store.md#embedded-maintenance); 0: never */
  PGLITE_MAINTENANCE_INTERVAL_MS: int(10_000, 0, 3_600_000),
  EVENTSTORE_URL: z.string().min(1).optional(),
  /** operator token of /admin and /sandbox; generated into DATA_DIR/admin-token on the embedded start (docs/security.md) */
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters').optional(),
  /** server secret that keys sign-up code hashes and encrypts webhook secrets; default: DATA_DIR/secrets.key */
  SECRETS_KEY: z.string().min(32, 'SECRETS_KEY must be at least 32 characters').optional(),
  /** express `trust proxy`: off by default; `true`, a hop count, or a comma-separated list of addresses/subnets */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v): boolean | number | string => {
      const t = v.trim().toLowerCase();
      return t === 'false' || t === '0' || t === '' ? false : t === 'true' ? true : /^\d+$/.test(t) ? Number(t) : v.trim();
    }),
  /** failed API-key authentications allowed per client address per THROTTLE_WINDOW_SECONDS before 429 */
  AUTH_FAILURES_PER_CLIENT: int(20, 1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** the level of the one log line per request; unset: debug in sandbox mode, info in live mode (docs/operations.md#logs) */
  ACCESS_LOG_LEVEL: z.enum(['info', 'debug']).optional(),
  /** api: serve HTTP; worker: run projectors, reactors and workers; voice: serve HTTP and SIP; all: everything (the default) */
  ROLE: z.enum(['all', 'api', 'worker', 'voice']).default('all'),
  /** how long a write waits for the read models before answering 503 */
  READ_MODEL_TIMEOUT_MS: int(5000, 1, 120_000),
  EVENT_POLL_INTERVAL_MS: int(1000, 5, 60_000),
  /** unset: 4 ms embedded (PGlite), 0 on a server (docs/event-store.md#batch-linger) */
  EVENT_BATCH_LINGER_MS: z.coerce.number().int().min(0).max(1000).optional(),
  EVENT_APPEND_CONCURRENCY: int(4, 1, 64),
  /** aggregates whose state the command path keeps in memory (docs/event-store.md#the-aggregate-cache); 0: none */
  AGGREGATE_CACHE_SIZE: int(10_000, 0, 1_000_000),
  /** how long the analytics projectors gather events before reading them (docs/event-store.md#lagging-projectors) */
  PROJECTION_LAG_MS: int(100, 0, 10_000),
  /** endpoint throttle: requests per key (or client address) per window */
  THROTTLE_MAX_REQUESTS: int(600, 1),
  THROTTLE_WINDOW_SECONDS: int(60, 1, 3600),
  /**
   * sandbox: every upstream (carrier, voice engine, language model, e-mail) is its sandbox adapter, driven by
   * the sandbox control API; live: the real adapters, configured by their own variables.
   */
  PROVIDER_MODE: z.enum(['sandbox', 'live']).default('sandbox'),
  /**
   * the carrier of numbers, lookups and texts, by the name a carrier adapter contributes (docs/adding-a-channel.md);
   * unset: the sandbox kit's in sandbox mode, none in live mode
   */
  CARRIER: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/)
    .optional(),
  /** phone numbers: how long POST /v1/numbers and DELETE /v1/numbers/{id} wait for the carrier steps before 503 */
  NUMBER_PROVISIONING_TIMEOUT_MS: int(30_000, 100, 600_000),
  /** how long a number lookup result is reused (and not charged again) per account; 0 disables the cache */
  NUMBER_LOOKUP_CACHE_TTL_SECONDS: int(7 * 86_400, 0, 365 * 86_400),
  /** how often the renewal job looks for numbers whose month has ended (the Clock decides what is due) */
  NUMBER_RENEWAL_INTERVAL_MS: int(60_000, 10, 86_400_000),
  /** lease of a projector or reactor held by one worker process; another takes over this long after a crash */
  REACTOR_LEASE_TTL_MS: int(15_000, 1000, 600_000),
  REACTOR_PARTITIONS: int(4, 1, 64),
  /** a reactor stores its checkpoint at most this often (docs/event-store.md#reactors-and-leases); 0: after every batch */
  REACTOR_CHECKPOINT_EVERY_MS: int(1000, 0, 60_000),
  /** sandbox carrier: a released number goes back on sale after this quarantine */
  SANDBOX_CARRIER_QUARANTINE_SECONDS: int(86_400, 0, 365 * 86_400),
  /** sandbox: a US A2P 10DLC registration is approved this long (on the Clock) after it was submitted */
  SANDBOX_REGISTRATION_APPROVAL_SECONDS: int(30, 0, 365 * 86_400),
  /** sandbox SMS carrier (docs/sandbox.md#messaging-the-sandbox-sms-carrier): receipt delays on the Clock, per-number rate, reporting */
  SANDBOX_SMS_SENT_DELAY_MS: int(1000, 0, 3_600_000),
  SANDBOX_SMS_DELIVERY_DELAY_MS: int(3000, 0, 86_400_000),
  SANDBOX_SMS_LATE_DELIVERY_DELAY_MS: int(3_600_000, 0, 7 * 86_400_000),
  SANDBOX_SMS_RATE_PER_MINUTE: int(600, 1, 1_000_000),
  SANDBOX_SMS_POLL_INTERVAL_MS: int(250, 5, 60_000),
  SANDBOX_SMS_RECEIPT_LEASE_MS: int(30_000, 1000, 3_600_000),
  /**
   * the chat-application channel (docs/chatapp.md#the-platform): `sandbox` (the simulated platform; the default in
   * sandbox mode) or `cloud` (the real cloud API at CHATAPP_API_BASE_URL; the default in live mode)
   */
  CHATAPP_PROVIDER: z.enum(['sandbox', 'cloud']).optional(),
  /** the cloud API's root, version included; required for `cloud` */
  CHATAPP_API_BASE_URL: z.string().url().optional(),
  /** the product name the cloud API expects in `messaging_product`; required for `cloud` */
  CHATAPP_MESSAGING_PRODUCT: z.string().min(1).max(64).optional(),
  /** the platform app's secret: the platform signs its webhook callbacks with it (X-Hub-Signature-256) */
  CHATAPP_APP_SECRET: z.string().min(8).optional(),
  /** what the platform must echo when it subscribes the webhook callback (GET /integrations/chatapp/webhook) */
  CHATAPP_VERIFY_TOKEN: z.string().min(8).optional(),
  /** how long connecting and binding wait for the platform's answer before answering `pending` (the work goes on) */
  CHATAPP_SETUP_TIMEOUT_MS: int(15_000, 100, 120_000),
  /** one request to the cloud API: no answer within this long is an unknown outcome (tried again) */
  CHATAPP_REQUEST_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** Twilio (CARRIER=twilio, docs/carriers.md#twilio): the account, and the key that signs its callbacks */
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'an account SID: AC and 32 hexadecimal digits')
    .optional(),
  TWILIO_AUTH_TOKEN: z.string().min(16).max(128).optional(),
  /** an API key for the REST calls instead of the auth token (both or neither); callbacks stay signed with the auth token */
  TWILIO_API_KEY_SID: z
    .string()
    .regex(/^SK[0-9a-fA-F]{32}$/, 'an API key SID: SK and 32 hexadecimal digits')
    .optional(),
  TWILIO_API_KEY_SECRET: z.string().min(16).max(128).optional(),
  /** the Elastic SIP trunk a number's calls join (docs/carriers.md#voice); unset: voice is left as it is */
  TWILIO_SIP_TRUNK_SID: z
    .string()
    .regex(/^TK[0-9a-fA-F]{32}$/, 'a trunk SID: TK and 32 hexadecimal digits')
    .optional(),
  /** the A2P 10DLC campaign's Messaging Service every number bought joins (docs/carriers.md#going-live-step-by-step) */
  TWILIO_MESSAGING_SERVICE_SID: z
    .string()
    .regex(/^MG[0-9a-fA-F]{32}$/, 'a Messaging Service SID: MG and 32 hexadecimal digits')
    .optional(),
  /** Twilio's API hosts; overridable so that tests point them at the contract mock */
  TWILIO_API_BASE_URL: z.string().url().default('https://api.twilio.com'),
  TWILIO_LOOKUPS_BASE_URL: z.string().url().default('https://lookups.twilio.com'),
  TWILIO_TRUNKING_BASE_URL: z.string().url().default('https://trunking.twilio.com'),
  TWILIO_MESSAGING_BASE_URL: z.string().url().default('https://messaging.twilio.com'),
  /** one request to Twilio: no answer within this long is an unknown outcome */
  TWILIO_REQUEST_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** sandbox chat platform: a template is reviewed this long (Clock time) after its submission */
  SANDBOX_CHATAPP_TEMPLATE_REVIEW_SECONDS: int(5, 0, 30 * 86_400),
  /** sandbox chat platform: each status of a sent message (sent, delivered, read) comes this long after the one before */
  SANDBOX_CHATAPP_STATUS_DELAY_MS: int(1000, 0, 3_600_000),
  SANDBOX_CHATAPP_POLL_INTERVAL_MS: int(250, 5, 60_000),
  SANDBOX_CHATAPP_REPORT_LEASE_MS: int(30_000, 1000, 3_600_000),
  /**
   * the rich-messaging channel's provider (docs/rich-messaging.md#the-provider): `sandbox` (the simulated provider; the
   * default in sandbox mode) or `none` (the channel is off: no number is on it; the default in live mode)
   */
  RICH_PROVIDER: z.enum(['sandbox', 'none']).optional(),
  /** how long a capability check answers later questions about the same number (docs/rich-messaging.md#capabilities) */
  RICH_CAPABILITY_CACHE_SECONDS: int(60, 0, 86_400),
  /** how long a request waits for the provider (a check, a contact card, a background) before answering 502 */
  RICH_PROVIDER_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** what POST /v1/location/refresh answers as `pollAfterSeconds` */
  RICH_LOCATION_POLL_AFTER_SECONDS: int(20, 1, 3600),
  /** fetching an avatar or a chat background: no complete answer within this long refuses the image */
  RICH_MEDIA_FETCH_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** sandbox rich provider: a message is reported delivered this long (Clock time) after it was given */
  SANDBOX_RICH_DELIVERY_DELAY_MS: int(500, 0, 3_600_000),
  /** sandbox rich provider: and read this long after it was delivered */
  SANDBOX_RICH_READ_DELAY_SECONDS: int(5, 0, 86_400),
  SANDBOX_RICH_POLL_INTERVAL_MS: int(250, 5, 60_000),
  SANDBOX_RICH_REPORT_LEASE_MS: int(30_000, 1000, 3_600_000),
  /** sandbox clock: how often a process re-reads the offset another process may have advanced; 0 reads it at start only */
  SANDBOX_CLOCK_REFRESH_MS: int(1000, 0, 60_000),
  /** real e-mail (sign-up codes) through SMTP; without it, e-mail goes to the sandbox outbox */
  SMTP_URL: z.string().min(1).optional(),
  MAIL_FROM: z.string().min(3).default('Agent platform <no-reply@localhost>'),
  /** sign-up requests allowed per e-mail address and per client address per hour */
  SIGNUP_MAX_PER_EMAIL_PER_HOUR: int(3, 1),
  SIGNUP_MAX_PER_CLIENT_PER_HOUR: int(10, 1),
  /** webhooks: allow private, link-local and metadata destinations (sandbox mode allows loopback only without it) */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  /** delivery deadline of events other than voice turns (voice turns use the webhook's own `timeout`) */
  WEBHOOK_DELIVERY_TIMEOUT_SECONDS: int(15, 1, 120),
  /** how long a claimed attempt is kept from other workers; longer than any deadline (120 s) */
  WEBHOOK_LEASE_SECONDS: int(150, 130, 3600),
  /** attempts sent at once by this process's delivery worker; 0 runs no delivery worker here */
  WEBHOOK_CONCURRENCY: int(64, 0, 1000),
  /** how often the delivery worker looks for due attempts appended by other processes */
  WEBHOOK_POLL_INTERVAL_MS: int(1000, 5, 60_000),
  /** texts: each number's send rate (token bucket: messages a second, and the burst allowed) */
  MESSAGE_SEND_RATE_PER_SECOND: int(10, 1, 10_000),
  MESSAGE_SEND_BURST: int(20, 1, 100_000),
  /** the 10DLC registration page named in the failure reason of unregistered US sends (default: PUBLIC_URL + /docs) */
  REGISTER_URL: z.string().url().optional(),
  /** voice calls (docs/calls.md#limits): live outbound calls per account, and per sub-account unless the parent sets its own */
  CALL_MAX_CONCURRENT_PER_ACCOUNT: int(10, 1, 100_000),
  /** live calls (either direction) on one phone number */
  CALL_MAX_CONCURRENT_PER_NUMBER: int(4, 1, 10_000),
  /** open transcript streams per API key in one process (docs/limits.md) */
  TRANSCRIPT_STREAMS_PER_KEY: int(20, 1, 10_000),
  /** a call is ended (`max_duration`) after this long */
  CALL_MAX_DURATION_SECONDS: int(3600, 10, 86_400),
  /** an outbound call that is not answered within this long fails `no_answer` */
  CALL_RING_TIMEOUT_SECONDS: int(45, 1, 600),
  /** how often the sweeper looks for calls past their limits or held by a process that is gone */
  CALL_SWEEP_INTERVAL_MS: int(5000, 50, 600_000),
  /** a live call whose host stopped reporting for this long is ended (`lost`) by another process's sweeper */
  CALL_HOST_LEASE_MS: int(30_000, 500, 3_600_000),
  /** how often a process holding the lines looks for outbound calls placed by an API process, to dial them (docs/calls.md#how-a-call-ends) */
  CALL_DIAL_POLL_MS: int(200, 20, 60_000),
  /** how long a signed recording URL stays valid */
  RECORDING_URL_TTL_SECONDS: int(3600, 10, 7 * 86_400),
  /** the sandbox voice engine (docs/sandbox.md#voice): how fast simulated speech is spoken, both ends */
  SANDBOX_VOICE_WORDS_PER_MINUTE: int(165, 10, 1_000_000),
  /** how long a sandbox outbound call rings before its far end answers */
  SANDBOX_VOICE_RING_MS: int(1500, 0, 600_000),
  /** the simulated far end's pause before it answers the agent */
  SANDBOX_VOICE_REPLY_PAUSE_MS: int(400, 0, 600_000),
  /** hosted mode's language model: `sandbox` (offline, deterministic) or an OpenAI-compatible chat-completions API */
  LLM_PROVIDER: z.enum(['sandbox', 'openai']).default('sandbox'),
  LLM_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  LLM_API_KEY: z.string().min(1).optional(),
  /** one model per tier */
  LLM_MODEL_TURBO: z.string().min(1).default('gpt-4o-mini'),
  LLM_MODEL_BALANCED: z.string().min(1).default('gpt-4o'),
  LLM_MODEL_MAX: z.string().min(1).default('gpt-4.1'),
  /** no first token within this long: the turn is silent and records why */
  LLM_TIMEOUT_MS: int(10_000, 100, 120_000),
  /** speech synthesis for recordings and web calls: Debian's espeak-ng (offline) or an OpenAI-compatible speech API */
  TTS_PROVIDER: z.enum(['espeak', 'openai', 'tone']).default('espeak'),
  ESPEAK_PATH: z.string().min(1).default('espeak-ng'),
  TTS_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  TTS_API_KEY: z.string().min(1).optional(),
  TTS_MODEL: z.string().min(1).default('gpt-4o-mini-tts'),
  /** speech recognition for web calls: Debian's pocketsphinx (offline) or an OpenAI-compatible transcription API */
  STT_PROVIDER: z.enum(['pocketsphinx', 'openai', 'instant']).default('pocketsphinx'),
  POCKETSPHINX_PATH: z.string().min(1).default('pocketsphinx_continuous'),
  POCKETSPHINX_MODEL_DIR: z.string().min(1).default('/usr/share/pocketsphinx/model/en-us'),
  STT_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  STT_API_KEY: z.string().min(1).optional(),
  STT_MODEL: z.string().min(1).default('gpt-4o-mini-transcribe'),
  /** web calls: the silence after speech that ends a caller's utterance (docs/calls.md#speech-and-turns) */
  WEB_CALL_END_SILENCE_MS: int(700, 100, 5000),
  /** the SIP voice engine of live mode (docs/sip.md): where it listens, what it tells the far end, its RTP ports, its carriers */
  SIP_PUBLIC_ADDRESS: z.union([z.ipv4(), z.ipv6()]).optional(),
  SIP_ADDRESS: z.union([z.ipv4(), z.ipv6()]).default('0.0.0.0'),
  SIP_PORT: int(5060, 1, 65535),
  SIP_TRANSPORTS: z
    .string()
    .default('udp,tcp')
    .transform((v) => v.split(',').map((t) => t.trim().toLowerCase()))
    .pipe(z.array(z.enum(['udp', 'tcp'])).min(1)),
  RTP_PORT_MIN: int(10_000, 1024, 65534),
  RTP_PORT_MAX: int(20_000, 1025, 65535),
  SIP_CARRIERS: z.string().min(2).optional(),
  SIP_CARRIERS_FILE: z.string().min(1).optional(),
  SIP_RING_MS: int(0, 0, 60_000),
  SIP_END_SILENCE_MS: int(700, 100, 5000),
  /** an origination URI of a SIP trunk that sends no response within this is passed over (docs/sip.md#sip-trunks) */
  SIP_TRUNK_RESPOND_MS: int(5000, 100, 120_000),
  /** an origination URI that responded and does not answer within this is cancelled and passed over */
  SIP_TRUNK_ANSWER_MS: int(30_000, 500, 300_000),
  /** create a development account on first start of an empty embedded store */
  DEV_ACCOUNT: bool.optional(),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0, 600_000),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Where the platform is reached from outside: PUBLIC_URL, else the address it serves on this machine. */
export const publicUrl = (cfg: Pick<Config, 'PUBLIC_URL' | 'PORT'>): string => cfg.PUBLIC_URL ?? `http://localhost:${cfg.PORT}`;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const r = ConfigSchema.safeParse(clean);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`invalid configuration:\n${lines}`);
  }
  const carrierProblem = carrierSettingsProblem(r.data);
  if (carrierProblem) throw new Error(`invalid configuration:\n  ${carrierProblem}`);
  if (r.data.CHATAPP_PROVIDER === 'cloud' && (!r.data.CHATAPP_API_BASE_URL || !r.data.CHATAPP_MESSAGING_PRODUCT))
    throw new Error('invalid configuration:\n  CHATAPP_PROVIDER=cloud needs CHATAPP_API_BASE_URL and CHATAPP_MESSAGING_PRODUCT');
  if (r.data.RTP_PORT_MAX - r.data.RTP_PORT_MIN < 2)
    throw new Error('invalid configuration:\n  RTP_PORT_MAX must be at least RTP_PORT_MIN + 2');
  const sipSettings = ['SIP_CARRIERS', 'SIP_CARRIERS_FILE', 'SIP_PORT', 'SIP_ADDRESS', 'RTP_PORT_MIN', 'RTP_PORT_MAX'].filter(
    (k) => clean[k] !== undefined,
  );
  // a live start that means to take SIP calls and lacks what the far end needs to reach it refuses (docs/sip.md)
  if (r.data.PROVIDER_MODE === 'live' && sipSettings.length > 0 && !r.data.SIP_PUBLIC_ADDRESS)
    throw new Error(
      `invalid configuration:\n  SIP_PUBLIC_ADDRESS is required with ${sipSettings.join(', ')} in live mode: the address carriers reach this process at (SDP, Contact)`,
    );
  return r.data;
}

/**
 * What a live carrier lacks to start (docs/carriers.md#twilio), naming the variable; null when nothing is missing.
 * Twilio signs its callbacks with the account's auth token, so the token is needed even when an API key makes the
 * REST calls; its callbacks reach this platform at PUBLIC_URL.
 */
function carrierSettingsProblem(c: Config): string | null {
  if (c.CARRIER !== 'twilio') return null;
  if (c.PROVIDER_MODE !== 'live') return 'CARRIER=twilio needs PROVIDER_MODE=live (the sandbox never spends money at a carrier)';
  const missing = [
    !c.TWILIO_ACCOUNT_SID && 'TWILIO_ACCOUNT_SID',
    !c.TWILIO_AUTH_TOKEN && 'TWILIO_AUTH_TOKEN',
    !c.PUBLIC_URL && 'PUBLIC_URL',
    c.TWILIO_API_KEY_SID && !c.TWILIO_API_KEY_SECRET && 'TWILIO_API_KEY_SECRET',
    !c.TWILIO_API_KEY_SID && c.TWILIO_API_KEY_SECRET && 'TWILIO_API_KEY_SID',
  ].filter((v): v is string => typeof v === 'string');
  return missing.length ? `CARRIER=twilio needs ${missing.join(', ')}` : null;
}

/** The 10DLC registration page named in the reasons of unregistered US texts (REGISTER_URL, else the API docs' tag). */
export const registerUrlOf = (c: Config): string => c.REGISTER_URL ?? `${publicUrl(c)}/docs#tag/registration`;

/** Whether this configuration runs the SIP voice engine: live mode with SIP_PUBLIC_ADDRESS (docs/sip.md#configuration). */
export const sipConfigured = (cfg: Config): boolean => cfg.PROVIDER_MODE === 'live' && cfg.SIP_PUBLIC_ADDRESS !== undefined;

/** Whether this process holds calls' lines: its role is `all` or `voice` (docs/operations.md#roles). */
export const holdsLines = (cfg: Config): boolean => cfg.ROLE === 'all' || cfg.ROLE === 'voice';

/**
 * Whether this process places calls on the line itself: one that holds the lines, or any process whose voice engine
 * is in every process (the sandbox's; the unconfigured engine of live mode, which refuses at once). With the SIP
 * engine an `api` process leaves its calls to a voice process's dialler (docs/calls.md#how-a-call-ends).
 */
export const placesCalls = (cfg: Config): boolean => !sipConfigured(cfg) || holdsLines(cfg);
