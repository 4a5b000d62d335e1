import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import type { CallCommands } from '../../application/calls/call-commands.js';
import type { CallSession } from '../../application/calls/call-session.js';
import type { LoggerPort } from '../../application/ports/logger.port.js';
import { DomainError } from '../../domain/shared/errors.js';
import { WebCallLeg, type WebCallLegDeps } from './web-call-leg.js';

/** Where browsers join their web calls (docs/calls.md#the-socket). */
export const WEB_CALL_SOCKET_PATH = '/v1/calls/web/connect';
/** the largest frame a page may send: a second of audio is 32 kB */
const MAX_FRAME_BYTES = 64 * 1024;

/** Close codes of the socket (docs/calls.md#the-socket): 4xxx mirror the HTTP statuses of the same refusals. */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  internal: 1011,
  badMessage: 4400,
  tokenInvalid: 4401,
  joinTimeout: 4408,
  notLive: 4409,
} as const;

const Join = z.object({ type: z.literal('join'), accessToken: z.string().min(1).max(200) });

/**
 * The WebSocket edge of web calls (docs/calls.md#joining-a-web-call): a browser connects, sends its access token
 * in its first message, and from then on the socket is the call's leg (`WebCallLeg`). The token travels in a
 * message, not the URL, so it is in no access log.
 */
export class WebCallGateway {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  private readonly live = new Map<string, CallSession>();

  constructor(
    private readonly d: Readonly<{
      commands: CallCommands;
      log: LoggerPort;
      leg: WebCallLegDeps;
      /** how long a socket may stay without joining */
      joinTimeoutMs: number;
    }>,
  ) {}

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined); // a reset before the handshake completes is the client's business
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connected(ws));
  }

  /** Ends the calls of this process's sockets (the server is shutting down) and closes the sockets that never joined. */
  async drain(): Promise<void> {
    await Promise.all([...this.live.values()].map((s) => s.hangup('host_lost', 'the server shut down')));
    for (const ws of this.wss.clients) ws.close(CLOSE.goingAway, 'server shutting down');
  }

  async close(): Promise<void> {
    await this.drain();
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private connected(ws: WebSocket): void {
    let leg: WebCallLeg | null = null;
    let joining = false;
    const refuse = (code: number, error: string, message: string) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify({ type: 'error', code: error, message }));
      ws.close(code, error);
    };
    const timer = setTimeout(
      () => refuse(CLOSE.joinTimeout, 'JOIN_TIMEOUT', `no join message within ${this.d.joinTimeoutMs / 1000} s`),
      this.d.joinTimeoutMs,
    );
    ws.on('error', (err) => this.d.log.debug({ err }, 'web call socket error'));
    ws.on('close', () => {
      clearTimeout(timer);
      leg?.onClose();
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      if (leg) {
        leg.onMessage(bytes, isBinary);
        return;
      }
      // before the call is joined only the join counts; audio sent early is dropped
      if (joining || isBinary) return;
      let join: z.infer<typeof Join>;
      try {
        join = Join.parse(JSON.parse(bytes.toString('utf8')));
      } catch {
        refuse(CLOSE.badMessage, 'BAD_MESSAGE', 'the first message must be {"type":"join","accessToken":"…"}');
        return;
      }
      joining = true;
      clearTimeout(timer);
      this.d.commands
        .joinWebCall(join.accessToken, (call, listener) => {
          leg = new WebCallLeg(ws, call, listener, this.d.leg);
          return leg;
        })
        .then(
          (session) => {
            this.live.set(session.callId, session);
            void session.whenEnded.then(() => this.live.delete(session.callId));
          },
          (err: unknown) => {
            if (err instanceof DomainError && err.code === 'WEB_CALL_TOKEN_INVALID') refuse(CLOSE.tokenInvalid, err.code, err.message);
            else if (err instanceof DomainError && err.code === 'CALL_NOT_LIVE') refuse(CLOSE.notLive, err.code, err.message);
            else {
              this.d.log.error({ err }, 'joining a web call failed');
              refuse(CLOSE.internal, 'INTERNAL_ERROR', 'the call could not be joined; try a new web call');
            }
          },
        );
    });
  }
}
