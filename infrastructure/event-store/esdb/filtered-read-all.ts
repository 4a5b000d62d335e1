/**
 * A filtered read of `$all`, sent as a raw Streams/Read gRPC call.
 *
 * Client 6.2.1's `readAll` takes no filter, yet reads of `$all` must filter on the server (or they would page
 * through every system event and every other category). So this builds the same Streams/Read request the
 * client's `readAll` sends, with `FilterOptions` set, and runs it through the client's own call machinery (channel
 * choice, reconnection, credentials), which is `protected`: see `callMachinery`. It also decodes the protobuf
 * answer into the adapter's `RawEvent`, so the generated protobuf classes are used nowhere else.
 */
import { convertToCommandError, type EventStoreDBClient, type Position } from '@eventstore/db-client';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { CallOptions, Metadata } from '@grpc/grpc-js';
import type { RawEvent } from './event-mapping.js';
import type { WireFilter } from './filters.js';

export type FilteredReadAll = Readonly<{ from: 'start' | 'end' | Position; backwards: boolean; maxCount: number; filter: WireFilter }>;

/** One Streams/Read of `$all` with a server-side filter (see `callMachinery`). */
export async function readAllFiltered(client: EventStoreDBClient, q: FilteredReadAll): Promise<RawEvent[]> {
  const { ReadReq } = streamsPb;
  const all = new ReadReq.Options.AllOptions();
  if (q.from === 'start') all.setStart(new sharedPb.Empty());
  else if (q.from === 'end') all.setEnd(new sharedPb.Empty());
  else {
    const p = new ReadReq.Options.Position();
    p.setCommitPosition(q.from.commit.toString(10));
    p.setPreparePosition(q.from.prepare.toString(10));
    all.setPosition(p);
  }
  const expr = new ReadReq.Options.FilterOptions.Expression();
  if ('regex' in q.filter) expr.setRegex(q.filter.regex);
  else expr.setPrefixList([...q.filter.prefixes]);
  const filter = new ReadReq.Options.FilterOptions();
  if (q.filter.on === 'stream') filter.setStreamIdentifier(expr);
  else filter.setEventType(expr);
  filter.setCount(new sharedPb.Empty());
  filter.setCheckpointintervalmultiplier(1);
  const uuid = new ReadReq.Options.UUIDOption();
  uuid.setString(new sharedPb.Empty());
  const options = new ReadReq.Options();
  options.setAll(all);
  options.setReadDirection(q.backwards ? ReadReq.Options.ReadDirection.BACKWARDS : ReadReq.Options.ReadDirection.FORWARDS);
  options.setResolveLinks(false);
  options.setCount(String(q.maxCount));
  options.setUuidOption(uuid);
  options.setFilter(filter);
  const req = new ReadReq();
  req.setOptions(options);

  const m = callMachinery(client);
  return m.execute(
    streamsGrpc.StreamsClient,
    'readAll',
    (grpcClient) =>
      new Promise<RawEvent[]>((resolve, reject) => {
        const out: RawEvent[] = [];
        const call = grpcClient.read(req, ...m.callArguments({}, { deadline: Infinity }));
        call.on('data', (res: InstanceType<typeof streamsPb.ReadResp>) => {
          const e = res.getEvent()?.getEvent();
          if (e) out.push(fromWire(e));
        });
        call.on('error', (err: Error) => reject(convertToCommandError(err)));
        call.on('end', () => resolve(out));
      }),
  );
}

/**
 * The client's call machinery: `execute` (picks the channel, reconnects on UNAVAILABLE / NotLeader) and
 * `callArguments` (connection name, credentials, deadline). Both are `protected` members of 6.2.1's `Client`, the
 * same ones its `readAll` uses; `connectionString()` builds a plain `Client`, so no subclass can reach them.
 * The version is pinned in package.json; this fails loudly if an upgrade removes them.
 */
type CallMachinery = {
  execute<T>(
    client: typeof streamsGrpc.StreamsClient,
    debugName: string,
    action: (c: InstanceType<typeof streamsGrpc.StreamsClient>) => Promise<T>,
  ): Promise<T>;
  callArguments(options: Record<string, never>, callOptions?: Partial<CallOptions>): [Metadata, Partial<CallOptions>];
};

function callMachinery(client: EventStoreDBClient): CallMachinery {
  // The type system cannot see `protected` members from outside the class: the cast reaches them, and the check
  // below stands for what the compiler cannot check.
  const m = client as unknown as Partial<CallMachinery>;
  if (typeof m.execute !== 'function' || typeof m.callArguments !== 'function') {
    throw new Error('@eventstore/db-client no longer exposes execute/callArguments; filtered $all reads need another route');
  }
  return m as CallMachinery;
}

const TICKS_PER_MS = 10_000n;

function fromWire(r: InstanceType<typeof streamsPb.ReadResp.ReadEvent.RecordedEvent>): RawEvent {
  const md = r.getMetadataMap();
  const json = md.get('content-type') === 'application/json';
  const custom = r.getCustomMetadata_asU8();
  const created = md.get('created'); // .NET ticks (100 ns) since the Unix epoch
  return {
    id: r.getId()?.getString() ?? '',
    type: md.get('type') ?? '',
    streamName: Buffer.from(r.getStreamIdentifier()?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8'),
    revision: BigInt(r.getStreamRevision()),
    data: json ? parseJson(r.getData_asU8()) : r.getData_asU8(),
    metadata: custom.length ? parseJson(custom) : undefined,
    created: new Date(created ? Number(BigInt(created) / TICKS_PER_MS) : 0),
    commit: BigInt(r.getCommitPosition()),
    prepare: BigInt(r.getPreparePosition()),
  };
}

/** JSON when the bytes parse, else the bytes themselves (another writer's event, labelled JSON but not JSON). */
function parseJson(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return bytes;
  }
}
