// Time-series chart (uPlot, loaded with the first chart so the initial bundle stays small).
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import { fmtBytes, fmtDate, lang as langStore, t, useLang } from '../i18n';

/** Axis ticks in the user's language: times within two days, dates beyond. */
function fmtTick(sec: number, spanSec: number): string {
  const opts: Intl.DateTimeFormatOptions = spanSec > 2 * 86_400 ? { day: 'numeric', month: 'short' } : { hour: '2-digit', minute: '2-digit' };
  return new Intl.DateTimeFormat(langStore.get() === 'de' ? 'de-DE' : 'en-GB', opts).format(sec * 1000);
}

export interface Series {
  label: string;
  values: (number | null)[];
  color: string;
}

/** x: unix seconds. Values formatted as bytes unless `format` is given. */
export function TimeChart(props: { label: string; x: number[]; series: Series[]; height?: number; format?: (v: number) => string }) {
  const el = useRef<HTMLDivElement>(null);
  const lang = useLang();
  useEffect(() => {
    let plot: { destroy(): void; setSize(s: { width: number; height: number }): void } | null = null;
    let ro: ResizeObserver | null = null;
    let gone = false;
    (async () => {
      const [{ default: UPlot }] = await Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]);
      if (gone || !el.current) return;
      const fmt = props.format ?? fmtBytes;
      const width = el.current.clientWidth || 600;
      const span = props.x.length > 1 ? props.x[props.x.length - 1] - props.x[0] : 0;
      plot = new UPlot(
        {
          width,
          height: props.height ?? 220,
          series: [
            { label: t('shell.chartTime'), value: (_u: unknown, v: number) => (v == null ? '–' : fmtDate(v * 1000)) },
            ...props.series.map((s) => ({
              label: s.label,
              stroke: s.color,
              width: 2,
              fill: `${s.color}22`,
              value: (_u: unknown, v: number) => (v == null ? '–' : fmt(v)),
            })),
          ],
          axes: [
            { stroke: 'currentColor', values: (_u: unknown, vals: number[]) => vals.map((v) => fmtTick(v, span)) },
            { stroke: 'currentColor', size: 70, values: (_u: unknown, vals: number[]) => vals.map((v) => fmt(v)) },
          ],
          legend: { show: true },
        },
        [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
        el.current,
      );
      ro = new ResizeObserver(() => {
        if (el.current && plot) plot.setSize({ width: el.current.clientWidth, height: props.height ?? 220 });
      });
      ro.observe(el.current);
    })();
    return () => {
      gone = true;
      ro?.disconnect();
      plot?.destroy();
    };
  }, [props.x, props.series, lang]);
  return <div class="chart" ref={el} role="img" aria-label={props.label} />;
}
