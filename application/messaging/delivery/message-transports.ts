import type { MessageTransport } from './transport.port.js';

/** The transports of every channel, in the order the capability modules list them (docs/messaging.md#delivery-one-pipeline). */
export class MessageTransports {
  constructor(readonly all: readonly MessageTransport[]) {
    const channels = all.map((t) => t.channel);
    if (new Set(channels).size !== channels.length) throw new Error(`two message transports share a channel: ${channels.join(', ')}`);
    const carried = all.flatMap((t) => t.carries);
    if (new Set(carried).size !== carried.length)
      throw new Error(`two message transports carry one message channel: ${carried.join(', ')}`);
  }

  /** The transport whose provider reports under `channel`. */
  of(channel: string): MessageTransport | undefined {
    return this.all.find((t) => t.channel === channel);
  }

  /** The transport that delivers messages of this `channel` (an `mms` message goes by the texts' transport). */
  carrying(messageChannel: string): MessageTransport | undefined {
    return this.all.find((t) => t.carries.includes(messageChannel));
  }
}
