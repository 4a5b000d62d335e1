/** The parts of kirm's `sip` package (sip.js) the SIP engine uses (docs/sip.md#how-it-is-built). */
declare module 'sip' {
  export type SipUri = {
    schema?: string;
    user?: string;
    password?: string;
    host: string;
    port?: number;
    params: Record<string, string | null | undefined>;
    headers?: Record<string, string>;
  };
  export type NameAddr = { name?: string; uri: string | SipUri; params: Record<string, string | null | undefined> };
  export type Via = { version?: string; protocol: string; host: string; port?: number; params: Record<string, string | null | undefined> };
  export type Headers = {
    via: Via[];
    to: NameAddr;
    from: NameAddr;
    'call-id': string;
    cseq: { seq: number; method: string };
    contact?: NameAddr[] | '*';
    route?: NameAddr[];
    'record-route'?: NameAddr[];
    'content-type'?: string;
    'content-length'?: number;
    'refer-to'?: NameAddr;
    'www-authenticate'?: Record<string, string>[];
    'proxy-authenticate'?: Record<string, string>[];
    authorization?: Record<string, string>[];
    'proxy-authorization'?: Record<string, string>[];
    [name: string]: unknown;
  };
  export type SipRequest = { method: string; uri: string; version?: string; headers: Headers; content?: string };
  export type SipResponse = { status: number; reason: string; version?: string; headers: Headers; content?: string };
  export type SipMessage = SipRequest | SipResponse;
  export type Remote = { protocol: string; address: string; port: number; local?: { address: string; port: number } };
  export type Flow = { protocol: string; address: string; port: number; local: { address: string; port: number } };
  export type Stack = {
    send(m: SipMessage, onResponse?: (rs: SipResponse) => void): void;
    /** a URI on the stack's own address that names `flow`: a request routed through it goes straight to the flow */
    encodeFlowUri(flow: Flow): SipUri;
    destroy(): void;
    hostname(): string;
  };
  export type StackOptions = {
    address?: string;
    port?: number;
    publicAddress?: string;
    hostname?: string;
    udp?: boolean;
    tcp?: boolean;
    maxBytesHeaders?: number;
    maxContentLength?: number;
    logger?: {
      send?: (m: SipMessage, target: unknown) => void;
      recv?: (m: SipMessage, remote: Remote) => void;
      error?: (e: unknown) => void;
    };
  };
  export function create(options: StackOptions, onRequest: (rq: SipRequest, remote: Remote) => void): Stack;
  export function makeResponse(
    rq: SipRequest,
    status: number,
    reason?: string,
    extension?: { headers?: Record<string, unknown>; content?: string | undefined },
  ): SipResponse;
  export function parseUri(s: string | SipUri): SipUri;
  export function stringifyUri(u: string | SipUri): string;
  export function parse(s: string | Buffer): SipMessage | undefined;
  export function stringify(m: SipMessage): string;
  export function generateBranch(): string;
  const sip: {
    create: typeof create;
    makeResponse: typeof makeResponse;
    parseUri: typeof parseUri;
    stringifyUri: typeof stringifyUri;
    parse: typeof parse;
    stringify: typeof stringify;
    generateBranch: typeof generateBranch;
  };
  export default sip;
}

declare module 'sip/digest.js' {
  import type { SipRequest, SipResponse } from 'sip';
  export type DigestContext = Record<string, unknown>;
  export function signRequest(
    ctx: DigestContext | null,
    rq: SipRequest,
    rs: SipResponse,
    creds: { user: string; password: string },
  ): DigestContext | null;
  export function challenge(ctx: DigestContext, rs: SipResponse): SipResponse;
  export function authenticateRequest(ctx: DigestContext, rq: SipRequest, creds: { user: string; password: string }): boolean;
  const digest: { signRequest: typeof signRequest; challenge: typeof challenge; authenticateRequest: typeof authenticateRequest };
  export default digest;
}

declare module 'sip/proxy.js' {
  import type { Remote, SipMessage, SipRequest, SipResponse, StackOptions } from 'sip';
  export function start(options: StackOptions, route: (rq: SipRequest, remote: Remote) => void): void;
  export function send(m: SipMessage, callback?: (rs: SipResponse, remote: Remote) => void): void;
  export function stop(): void;
  const proxy: { start: typeof start; send: typeof send; stop: typeof stop };
  export default proxy;
}
