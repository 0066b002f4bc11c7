// A small line of recent values (the peer list's live transfer rate): an inline SVG scaled to its
// own largest value, with the latest value as its accessible name.
export function Sparkline(props: { values: readonly number[]; label: string; width?: number; height?: number }) {
  const w = props.width ?? 64;
  const h = props.height ?? 18;
  const vs = props.values.length > 1 ? props.values : [props.values[0] ?? 0, props.values[0] ?? 0];
  const max = Math.max(...vs, 1);
  const step = w / Math.max(vs.length - 1, 1);
  const points = vs.map((v, i) => `${(i * step).toFixed(1)},${(h - 1 - (v / max) * (h - 2)).toFixed(1)}`).join(' ');
  return (
    <svg class="sparkline" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={props.label}>
      <polyline points={points} fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}
