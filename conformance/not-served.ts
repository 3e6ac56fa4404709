// Operations a target does not serve. One URL given for every role (no role map, no config file): the
// operations of a role that is not there are answered 404 by whatever is at that URL. They are reported
// as "not served by this target", naming their role, and never as failures.
import type { OperationResult } from './model.ts';

/**
 * Marks the operations of every role the target does not serve, and returns those roles. A role is not
 * served when it was sent to the one URL (`defaultUrl`: no URL was named for it), and every operation of
 * it that got an answer answered 404 to every request, at least one of them a 404 its operation does not
 * declare, while some other role at that URL answered otherwise (a URL that answers 404 to everything
 * serves nothing: its 404s stay failures). Its other operations (skipped: no credentials, read-only) are then not served either. Marked
 * operations become `skipped` with `notServed` and a reason; their probes are kept.
 *
 * @example
 * const roles = markNotServed(result.operations, { defaultUrl: 'http://127.0.0.1:8080', namedRoles: new Set() });
 * // ['device', 'central', 'diagnostics', 'login'] against the gateway alone
 */
export function markNotServed(
  operations: OperationResult[],
  options: { defaultUrl: string | undefined; namedRoles: ReadonlySet<string> },
): string[] {
  const roles: string[] = [];
  if (options.defaultUrl === undefined) return roles;
  const atDefault = operations.filter((o) => o.url === options.defaultUrl && !options.namedRoles.has(o.role) && !o.notServed);
  const candidates: [string, OperationResult[]][] = [];
  let served = false;
  for (const [role, results] of Map.groupBy(atDefault, (o) => o.role)) {
    const answered = results.filter((o) => o.probes.some((p) => p.status !== undefined));
    if (answered.length === 0) continue;
    const only404 = answered.every((o) => o.probes.every((p) => p.status === undefined || p.status === 404));
    const undeclared = answered.some((o) => o.probes.some((p) => p.status === 404 && p.violations.some((v) => v.check === 'status')));
    if (only404 && undeclared) candidates.push([role, results]);
    else served = true;
  }
  // A URL where no role answers anything but 404 (a wrong base path, a default site, a broken router) serves
  // nothing: its 404s stay failures, never a pass with every operation "not served".
  if (!served) return roles;
  for (const [role, results] of candidates) {
    roles.push(role);
    for (const o of results) notServed(o, role, `every request to the ${role} role's operations at ${options.defaultUrl} was answered 404`);
  }
  return roles;
}

/** Marks one operation as not served by this target: the role that serves it, and why. */
export function notServed(o: OperationResult, role: string, why: string): void {
  o.outcome = 'skipped';
  o.notServed = { role, why };
  o.reason = `not served by this target: the ${role} role serves it (${why})`;
  delete o.hint;
}
