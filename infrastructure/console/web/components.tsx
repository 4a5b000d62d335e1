import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { tone } from './format.js';

export const COLORS = { messages: '#2563eb', calls: '#16a34a', webhooks: '#d97706', failed: '#dc2626', pending: '#7c3aed' } as const;

/** `1 call`, `2 calls`. */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export function Badge({ status }: { status: string | null | undefined }) {
  return <span class={`badge ${tone(status)}`}>{status ?? '–'}</span>;
}

export function Problem({ error }: { error: string | null }) {
  return error ? (
    <p class="problem" role="alert">
      {error}
    </p>
  ) : null;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section>
      <header class="section-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export type ChartSeries = { label: string; color: string };

/**
 * A uPlot chart. `x` is either times (Unix seconds: a time axis) or the indexes of `labels` (categories, drawn as
 * bars side by side). The chart is redrawn when the data change and destroyed with the component.
 */
export function Chart(p: {
  name: string;
  title: string;
  x: number[];
  series: ChartSeries[];
  values: number[][];
  labels?: string[];
  xLabel?: string;
  height?: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  const key = JSON.stringify([p.x, p.values, p.labels]);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const categorical = p.labels !== undefined;
    const labels = p.labels ?? [];
    const bars = uPlot.paths.bars;
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth || 640),
      height: p.height ?? 220,
      legend: { show: true },
      scales: {
        x: categorical ? { time: false, range: [-0.5, Math.max(0.5, labels.length - 0.5)] } : { time: true },
        // counts and durations: the axis starts at zero
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: categorical
        ? [{ splits: () => labels.map((_l, i) => i), values: (_u, splits) => splits.map((i) => labels[i] ?? '') }, {}]
        : [{}, {}],
      series: [
        categorical ? { label: p.xLabel ?? '', value: (_u, v) => (v === null ? '–' : (labels[v] ?? '')) } : { label: p.xLabel ?? 'Time' },
        ...p.series.map((s, i) => ({
          label: s.label,
          stroke: s.color,
          fill: categorical ? s.color : `${s.color}22`,
          width: 2,
          ...(categorical && bars
            ? {
                paths: bars({ size: [0.8 / p.series.length, 60], align: p.series.length === 1 ? 0 : i === 0 ? -1 : 1 }),
                points: { show: false },
              }
            : {}),
        })),
      ],
    };
    const plot = new uPlot(opts, [p.x, ...p.values], el);
    return () => plot.destroy();
  }, [key]);
  return (
    <figure class="chart" data-chart={p.name}>
      <figcaption>{p.title}</figcaption>
      <div ref={host} />
    </figure>
  );
}
