import { type IncomingMessage, STATUS_CODES } from 'node:http';
import { isWritable, type WireAnswer } from '../lib/answer-writer.ts';
import type { RuleSession, RunOutcome } from './irules/types.ts';
import type { ProxyAnswer, ReverseProxy } from './proxy.ts';
import type { RequestFailure } from './service-events.ts';
import { type RouteRules, clipped, headerList, rawHeaders, ruleAnswer, ruleConnection } from './service-rules.ts';

/** How a request ends without the member's answer passed on: an answer of the device's own, or its connection cut by a rule. */
export type Ending = { status: number; failure?: RequestFailure; member?: string } & ({ answer: WireAnswer } | { cut: 'reject' | 'drop' });

/** Where a request goes: its method, target and fields (as a rule left them), and the proxy of the pool. */
export type Forward = { method: string; url: string; rawHeaders: readonly string[]; proxy: ReverseProxy };

/** Logs a rule's failure (service-events.ts ruleFailed), for the event it ran in. */
export type ReportFailure = (event: string, rule: string, message: string) => void;

/** The client's answer when a rule failed (the log says which and why; the answer never does). */
const RULE_FAILED = 'A rule of this service failed; the device logged it.';

/** The data plane's own answer (no member, or none answered): `{"code":status,"message":...}` as JSON. */
export function jsonError(status: number, message: string): WireAnswer {
  const payload = JSON.stringify({ code: status, message });
  return { status, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }, body: payload };
}

/** How the request ends after a rule's outcome other than `continue` (undefined for `continue`); an error is reported. */
export function ruleEnding(outcome: RunOutcome, event: string, report: ReportFailure, member?: string): Ending | undefined {
  const at = member ? { member } : {};
  switch (outcome.kind) {
    case 'continue':
      return undefined;
    case 'respond': {
      const answer = ruleAnswer(outcome);
      if (answer) return { status: outcome.status, answer, ...at };
      const error = { kind: 'error' as const, rule: '', message: 'HTTP::respond gave a status or a field that cannot be written' };
      return ruleEnding(error, event, report, member);
    }
    case 'reject':
    case 'drop':
      return { status: 0, failure: outcome.kind === 'reject' ? 'rule_reject' : 'rule_drop', cut: outcome.kind, ...at };
    case 'error':
      report(event, outcome.rule, clipped(outcome.message));
      return { status: 500, failure: 'rule_error', answer: jsonError(500, RULE_FAILED), ...at };
  }
}

/**
 * HTTP_REQUEST: the rules see (and may change) the request before it goes to a member. Either where it
 * goes now (the changed request, the proxy of the pool a rule picked) or how it ends.
 */
export function requestStep(
  rules: RouteRules,
  session: RuleSession,
  req: IncomingMessage,
  forward: Forward,
  report: ReportFailure,
): { forward: Forward } | { ending: Ending } {
  const request = { method: forward.method, uri: forward.url, version: req.httpVersion, headers: headerList(req.rawHeaders) };
  const outcome = session.run('HTTP_REQUEST', { connection: ruleConnection(req.socket), request }, rules.budget);
  if (outcome.kind !== 'continue') return { ending: ruleEnding(outcome, 'HTTP_REQUEST', report)! };
  const proxy = outcome.pool === undefined ? forward.proxy : rules.proxyFor(outcome.pool);
  if (!proxy) {
    const error = { kind: 'error' as const, rule: '', message: `pool ${clipped(outcome.pool!, 64)} is not a pool of this tenant` };
    return { ending: ruleEnding(error, 'HTTP_REQUEST', report)! };
  }
  return { forward: { method: request.method, url: request.uri, rawHeaders: rawHeaders(request.headers), proxy } };
}

/**
 * HTTP_RESPONSE: the rules see (and may change) the member's head before it is written to the client.
 * Changes `answer`'s status and fields in place; how the request ends instead (its body cut) when a rule
 * answers, rejects, drops or fails.
 */
export function responseStep(
  rules: RouteRules,
  session: RuleSession,
  req: IncomingMessage,
  answer: Extract<ProxyAnswer, { kind: 'answer' }>,
  report: ReportFailure,
): Ending | undefined {
  const response = { status: answer.status, headers: headerList(answer.headers) };
  const outcome = session.run('HTTP_RESPONSE', { connection: ruleConnection(req.socket), response }, rules.budget);
  let ending = ruleEnding(outcome, 'HTTP_RESPONSE', report, answer.member);
  if (!ending) {
    const fields = rawHeaders(response.headers);
    if (isWritable(fields)) {
      if (response.status !== answer.status) [answer.status, answer.statusText] = [response.status, STATUS_CODES[response.status] ?? ''];
      answer.headers = fields;
      return undefined;
    }
    const error = { kind: 'error' as const, rule: '', message: 'a rule set a header field that cannot be written' };
    ending = ruleEnding(error, 'HTTP_RESPONSE', report, answer.member);
  }
  answer.body.destroy();
  return ending;
}
