// The dashboard server's JSON endpoints (coordinator/dashboard/dashboard_api.h) and live updates.
// T: what the endpoint sends, mostly a message of the wire (module 'rung-wire', generated from
// proto/rung.proto at build time).
import type { SweepUpdate } from 'rung-wire';
// A failed answer throws an Error with the server's message and `status`, the HTTP status (409: the
// coordinator's FAILED_PRECONDITION).
export async function getJson<T = any>(path: string): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin' });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw Object.assign(new Error(body.error || `HTTP ${response.status}`), { status: response.status });
  return body;
}

// A control request: X-Rung-Control proves to the server that it comes from this page (another
// site's page cannot add the header without a CORS preflight, which the server never grants).
export async function postJson<T = unknown>(path: string): Promise<T> {
  const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'X-Rung-Control': '1' } });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// The points of a metric as they land (coordinator/dashboard/sweep_events.cc, event "metrics"): each
// [trial_id, step, tokens, flops, wall_time, value] (value null for NaN); resync: some were missed.
export interface MetricsEvent {
  metric: string;
  arrivals: [number, number, number, number, number, number | null][];
  resync: boolean;
}

// Follows a sweep's updates (server-sent events: trial states, and the points of `metric` as they
// land); returns the function that stops following.
export function followSweep(sweepId: number, metric: string, onUpdate: (update: SweepUpdate) => void,
                            onMetrics: (metrics: MetricsEvent) => void, onEnd: () => void): () => void {
  const source = new EventSource(`/api/sweeps/${sweepId}/events?metric=${encodeURIComponent(metric)}`);
  source.addEventListener('update', (event) => onUpdate(JSON.parse((event as MessageEvent).data)));
  source.addEventListener('metrics', (event) => onMetrics(JSON.parse((event as MessageEvent).data)));
  source.addEventListener('end', () => { source.close(); onEnd(); });
  return () => source.close();
}

// proto3 JSON writes int64 as strings.
export const num = (value: any): number => (value === null || value === undefined || value === '' ? NaN : Number(value));
