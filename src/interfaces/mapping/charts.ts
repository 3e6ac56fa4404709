import type { Chart, ChartInput } from '../../../generated/mapping/types.gen.ts';

/** A chart as stored: the input as sent, `risk_level: Unknown` included, with its id. */
export type ChartRecord = ChartInput & { id: string };

/**
 * The Chart the API returns for a stored chart. The seed's Chart allows only Low, Medium and High, so
 * a chart created with `Unknown` is returned without `risk_level` (specs/mapping.yaml, Chart): the
 * stored record keeps `Unknown`, the view never invents a level.
 */
export function toChart(record: ChartRecord): Chart {
  const { id: _id, risk_level, ...rest } = record;
  return risk_level === undefined || risk_level === 'Unknown' ? rest : { ...rest, risk_level };
}
