/**
 * How a call routed to a SIP trunk reaches the trunk's origination URIs (docs/calls.md#sip-trunks): the order in
 * which they are tried, and what a URI's failure means for the next one. Pure rules: the live SIP engine and the
 * sandbox's simulation follow the same ones.
 */

export type WeightedUri = Readonly<{ sipUri: string; priority: number; weight: number }>;

/**
 * The order in which a trunk's origination URIs are tried, as SRV records are (RFC 2782): lowest priority first;
 * within one priority, a weighted random order (a URI's chance to come next is its share of the weights of those
 * left). A zero-weight URI comes after the weighted ones of its priority; when all are zero, they keep the listed
 * order. `random` answers a number in [0, 1).
 */
export function orderOriginationUris(uris: readonly WeightedUri[], random: () => number): string[] {
  const byPriority = new Map<number, WeightedUri[]>();
  for (const u of uris) byPriority.set(u.priority, [...(byPriority.get(u.priority) ?? []), u]);
  const out: string[] = [];
  for (const p of [...byPriority.keys()].sort((a, b) => a - b)) {
    const left = [...byPriority.get(p)!];
    while (left.length > 0) {
      const total = left.reduce((n, u) => n + Math.max(0, u.weight), 0);
      let pick = 0;
      if (total > 0) {
        let r = random() * total;
        pick = left.findIndex((u) => {
          r -= Math.max(0, u.weight);
          return r < 0;
        });
        if (pick < 0) pick = left.length - 1;
      }
      out.push(left[pick]!.sipUri);
      left.splice(pick, 1);
    }
  }
  return out;
}

/**
 * Why an origination URI did not take the call: its final SIP response, no answer within the timeout, or no way to
 * reach it (a connection refused, a transport that is not supported).
 */
export type BridgeFailure =
  | Readonly<{ kind: 'response'; status: number; reason: string }>
  | Readonly<{ kind: 'timeout'; afterMs: number }>
  | Readonly<{ kind: 'unreachable'; detail: string }>;

/**
 * What a URI's failure means for the call (docs/calls.md#sip-trunks): `next` tries the next URI (a 5xx, 408, 480,
 * a timeout, an unreachable URI); `busy` ends the call as busy (486 Busy Here, 600 Busy Everywhere: the customer's
 * side is busy, and another of its URIs would be too); `stop` ends it with no more tries (any other refusal, such
 * as 403, 404 or 603: the customer's side answered, and it said no).
 */
export function afterBridgeFailure(f: BridgeFailure): 'next' | 'busy' | 'stop' {
  if (f.kind !== 'response') return 'next';
  if (f.status === 486 || f.status === 600) return 'busy';
  if (f.status >= 500 && f.status < 600) return 'next';
  if (f.status === 408 || f.status === 480) return 'next';
  return 'stop';
}

/** A failure as the call record says it. */
export function describeBridgeFailure(f: BridgeFailure): string {
  switch (f.kind) {
    case 'response':
      return `SIP ${f.status}${f.reason ? ` ${f.reason}` : ''}`;
    case 'timeout':
      return `no answer within ${f.afterMs} ms`;
    case 'unreachable':
      return `unreachable: ${f.detail}`;
  }
}

/**
 * What a caller whose call a trunk's URIs did not take hears (docs/calls.md#sip-trunks): the caller is answered only
 * when a URI answers, so the call is refused with the class of the last URI's failure. A busy URI is the caller's
 * busy (486); a URI that failed as a server (5xx) or could not be reached is 503; one that did not answer in time,
 * answered 408/480 or refused the call otherwise is 480 (the caller's carrier may try again later). No URI at all
 * (`null`) is 480.
 */
export function callerRefusal(last: BridgeFailure | null): Readonly<{ status: 480 | 486 | 503; reason: string }> {
  if (last?.kind === 'unreachable') return { status: 503, reason: 'Service Unavailable' };
  if (last?.kind === 'response' && afterBridgeFailure(last) === 'busy') return { status: 486, reason: 'Busy Here' };
  if (last?.kind === 'response' && last.status >= 500) return { status: 503, reason: 'Service Unavailable' };
  return { status: 480, reason: 'Temporarily Unavailable' };
}
