import client from 'prom-client';
import { metric as once } from '../observability/metrics.js';

/**
 * The SIP engine's `/metrics` (docs/sip.md#observability). Registered once per process (prom-client's registry is
 * global), whatever number of engines a test process starts.
 */
export const sipMetrics = {
  requests: once(
    'sip_requests_total',
    () => new client.Counter({ name: 'sip_requests_total', help: 'SIP requests received, by method', labelNames: ['method'] as const }),
  ),
  responses: once(
    'sip_responses_total',
    () =>
      new client.Counter({
        name: 'sip_responses_total',
        help: 'SIP final responses, by method, status and direction (sent: this engine answered; received: the far end did)',
        labelNames: ['method', 'status', 'direction'] as const,
      }),
  ),
  dropped: once(
    'sip_messages_dropped_total',
    () =>
      new client.Counter({
        name: 'sip_messages_dropped_total',
        help: 'SIP requests dropped unanswered, by reason',
        labelNames: ['reason'] as const,
      }),
  ),
  activeCalls: once(
    'sip_active_calls',
    () => new client.Gauge({ name: 'sip_active_calls', help: 'SIP calls with a dialog in this process' }),
  ),
};

export const rtpMetrics = {
  lost: once(
    'rtp_packets_lost_total',
    () => new client.Counter({ name: 'rtp_packets_lost_total', help: 'RTP packets of callers never received in time' }),
  ),
};
