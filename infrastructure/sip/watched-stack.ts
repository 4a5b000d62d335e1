import dgram from 'node:dgram';
import net from 'node:net';
import sip, { type Remote, type SipMessage, type SipRequest, type Stack, type StackOptions } from 'sip';

/** Why a message never reached the engine. */
export type DropReason = 'oversized' | 'unparseable' | 'incomplete' | 'unread_connection';

/** the largest UDP datagram handed to the package's parser (a SIP request is well under 2 kB) */
export const MAX_DATAGRAM = 16 * 1024;

/**
 * The `sip` package's stack, with its transports watched (docs/sip.md#bad-input). The package drops a message it
 * cannot parse (or that lacks Via, Call-ID, To, From or CSeq) without a word; this sees each UDP datagram and TCP
 * connection its transports take and reports what never came out as a message: `onDropped` is called with the
 * reason. Nothing is parsed here: a datagram is handed to the package as it is, and counted as delivered when the
 * package's own receive hook (`logger.recv`) sees a message from it. A datagram over MAX_DATAGRAM is dropped before
 * the package parses it.
 *
 * The watch is put in place by wrapping `dgram.createSocket` and `net.createServer` for the moment `sip.create`
 * builds its transports (it calls them synchronously), and taken away at once.
 */
export function createWatchedStack(
  options: StackOptions,
  onRequest: (rq: SipRequest, remote: Remote) => void,
  onDropped: (reason: DropReason, source: { protocol: 'UDP' | 'TCP'; address: string; port: number; bytes: number }) => void,
): Stack {
  let delivered = false;
  const fromStream = new WeakSet<object>();
  const recv = options.logger?.recv;
  const logger = {
    ...options.logger,
    recv: (m: SipMessage, remote: Remote) => {
      delivered = true;
      recv?.(m, remote);
    },
  };
  const createSocket = dgram.createSocket;
  const createServer = net.createServer;
  const watchUdp = (listener: (msg: Buffer, rinfo: dgram.RemoteInfo) => void) => (msg: Buffer, rinfo: dgram.RemoteInfo) => {
    const source = { protocol: 'UDP' as const, address: rinfo.address, port: rinfo.port, bytes: msg.length };
    if (msg.length > MAX_DATAGRAM) {
      onDropped('oversized', source);
      return;
    }
    delivered = false;
    listener(msg, rinfo);
    // a keep-alive (CRLF) is no message, and dropping it is right
    if (delivered || msg.toString('latin1').trim() === '') return;
    onDropped(sip.parse(msg) ? 'incomplete' : 'unparseable', source);
  };
  const watchTcp = (listener: (socket: net.Socket) => void) => (socket: net.Socket) => {
    let bytes = 0;
    socket.on('data', (b: Buffer | string) => {
      bytes += b.length;
    });
    socket.on('close', () => {
      if (bytes > 0 && !fromStream.has(socket))
        onDropped('unread_connection', { protocol: 'TCP', address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0, bytes });
    });
    listener(socket);
  };
  const connections = new Map<string, net.Socket>();
  (dgram as { createSocket: unknown }).createSocket = (
    type: dgram.SocketType,
    listener?: (msg: Buffer, rinfo: dgram.RemoteInfo) => void,
  ) => (listener ? createSocket(type, watchUdp(listener)) : createSocket(type));
  (net as { createServer: unknown }).createServer = (listener?: (socket: net.Socket) => void) =>
    createServer((socket) => {
      connections.set(`${socket.remoteAddress}:${socket.remotePort}`, socket);
      socket.once('close', () => connections.delete(`${socket.remoteAddress}:${socket.remotePort}`));
      if (listener) watchTcp(listener)(socket);
    });
  try {
    return sip.create(
      {
        ...options,
        logger: {
          ...logger,
          recv: (m, remote) => {
            // a message from a TCP connection: the connection was read
            if (remote.protocol.toUpperCase() === 'TCP') {
              const socket = connections.get(`${remote.address}:${remote.port}`);
              if (socket) fromStream.add(socket);
            }
            logger.recv(m, remote);
          },
        },
      },
      onRequest,
    );
  } finally {
    (dgram as { createSocket: unknown }).createSocket = createSocket;
    (net as { createServer: unknown }).createServer = createServer;
  }
}
