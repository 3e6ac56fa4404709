import type { TaskRow } from './declaration-store.ts';

/** Most lines `logs/deployments.log` keeps (the newest), and the longest line. */
export const DEPLOYMENT_LOG_LINES = 2000;
const MAX_LINE = 1024;

type Result = {
  code?: unknown;
  message?: unknown;
  response?: unknown;
  tenant?: unknown;
  lineCount?: unknown;
  runTime?: unknown;
  warnings?: unknown;
};

/**
 * When a task was submitted: the declarative service numbers tasks `nowMs * 1000 + n`
 * (declarative-service.ts `nextOrder`), so the milliseconds are the order's thousands.
 */
export const submittedAtMs = (task: Pick<TaskRow, 'order'>) => Math.floor(task.order / 1000);

/** One line of text: control characters (a newline would forge a line) become spaces. */
const oneLine = (value: unknown) => String(value).replace(/[\u0000-\u001f\u007f]/g, ' ');

/**
 * The device's deployment log as a snapshot carries it: one syslog-style line per tenant result and
 * per warning of each task the device still keeps, oldest first, the newest `DEPLOYMENT_LOG_LINES`.
 * Failed tenants are at level `err` (what the diagnostics engine counts as error lines).
 *
 * @example deploymentLogLines(tasks, 'device-1')
 * // ['2026-11-02T09:20:17.000Z device-1 info appsvcs: task 5b1...: tenant Web: 200 success, 12 lines, 35 ms', ...]
 */
export function deploymentLogLines(tasksNewestFirst: readonly TaskRow[], hostname: string): { lines: string[]; dropped: number } {
  const lines: string[] = [];
  for (const task of [...tasksNewestFirst].reverse()) {
    const at = new Date(submittedAtMs(task)).toISOString();
    const record = task.record as { results?: unknown } | undefined;
    const results = Array.isArray(record?.results) ? (record.results as Result[]) : [];
    const line = (level: string, text: string) =>
      lines.push(`${at} ${hostname} ${level} appsvcs: task ${oneLine(task.id)}: ${oneLine(text)}`.slice(0, MAX_LINE));
    if (task.state === 'in progress') {
      line('info', 'in progress');
      continue;
    }
    for (const result of results) {
      const code = Number(result.code);
      const tenant = result.tenant === undefined ? '' : `tenant ${result.tenant}: `;
      const details = [
        ...(result.response === undefined ? [] : [`: ${result.response}`]),
        ...(typeof result.lineCount === 'number' ? [`, ${result.lineCount} lines`] : []),
        ...(typeof result.runTime === 'number' ? [`, ${result.runTime} ms`] : []),
      ];
      line(code >= 300 ? 'err' : 'info', `${tenant}${code} ${result.message}${details.join('')}`);
      for (const warning of Array.isArray(result.warnings) ? result.warnings : []) line('warning', `${tenant}${warning}`);
    }
  }
  const dropped = Math.max(0, lines.length - DEPLOYMENT_LOG_LINES);
  return { lines: lines.slice(dropped), dropped };
}
