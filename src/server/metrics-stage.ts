import type { Logger } from '../lib/logger.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { Stage, StageResponse } from './stages.ts';

/**
 * `GET /metrics` on every role: the process's Prometheus metrics. Observability, not part of any
 * interface's contract: the adapter runs this stage before the role's own, and a scrape is neither
 * counted in the request metrics nor logged (a monitor asks every few seconds).
 */
export function metricsStage(metrics: Metrics, logger: Logger): Stage {
  const scrape = async (requestId: string): Promise<StageResponse> => {
    try {
      return { status: 200, contentType: metrics.contentType, body: await metrics.render(), aside: 'silent' };
    } catch (error) {
      logger.error({ err: error, requestId }, 'metrics could not be rendered');
      return { status: 500, aside: 'silent' };
    }
  };
  // Every other request passes on synchronously (no promise, no turn of the microtask queue).
  return (request) => (request.method === 'GET' && request.url === '/metrics' ? scrape(request.requestId) : undefined);
}
