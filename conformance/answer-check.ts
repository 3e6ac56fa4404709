import { bodyShape, responseSchema } from './body-shape.ts';
import { headerCaseProblems } from './header-case-check.ts';
import type { HttpResponse } from './http.ts';
import type { Violation } from './model.ts';
import { GATEWAY_RESPONSES, type SpecOperation, type SpecSet } from './spec-set.ts';

/** A documented status seen on the wire: what the coverage matrix is built from. */
export type Observation = { interface: string; operationId: string; status: number };

export type AnswerVerdict = {
  violations: Violation[];
  /** Who declares the status: the operation, the gateway responses, or nobody. */
  declaredBy: 'operation' | 'gateway' | 'none';
  shape: string[];
};

/**
 * Checks one answer against its operation: status, media type, headers and body (every error, each
 * with its JSON pointer), and the case of its header names as on the wire when the client saw them
 * (header-case-check.ts). An answer that came through the gateway may also be one of the rate-limit
 * spec's `x-portolan-gateway-responses` (429 over the limit, 502/503/504 from the pool).
 */
export function checkAnswer(
  specs: SpecSet,
  target: SpecOperation,
  res: HttpResponse,
  viaGateway: boolean,
  observe: (o: Observation) => void,
): AnswerVerdict {
  const observed = { status: res.status, headers: res.headers, body: res.body };
  let owner = target;
  let found = target.spec.checkResponse(target.op, observed);
  let declaredBy: AnswerVerdict['declaredBy'] = found.some((v) => v.check === 'status') ? 'none' : 'operation';
  if (declaredBy === 'none' && viaGateway && specs.gateway) {
    const fromGateway = specs.gateway.spec.checkResponse(specs.gateway.op, observed);
    if (!fromGateway.some((v) => v.check === 'status')) {
      owner = specs.gateway;
      found = fromGateway;
      declaredBy = 'gateway';
    }
  }
  const violations: Violation[] = found.map((v) => ({
    interface: target.spec.name,
    operationId: target.op.operationId,
    check: v.check,
    pointer: v.pointer,
    message: v.message,
  }));
  if (res.jsonError !== undefined) {
    violations.push({
      interface: target.spec.name,
      operationId: target.op.operationId,
      check: 'body',
      pointer: '',
      message: `the body is not valid JSON (${res.jsonError})`,
    });
  }
  if (res.rawHeaderNames) {
    for (const { name, expected } of headerCaseProblems(owner.spec.document, owner.op, res.status, res.rawHeaderNames)) {
      violations.push({
        interface: target.spec.name,
        operationId: target.op.operationId,
        check: 'header',
        pointer: '',
        message: `the header name ${name} is not in its conventional case (${expected}): clients that match names case-sensitively miss it`,
      });
    }
  }
  if (declaredBy === 'operation') observe({ interface: target.spec.name, operationId: target.op.operationId, status: res.status });
  if (declaredBy === 'gateway') observe({ interface: owner.spec.name, operationId: GATEWAY_RESPONSES, status: res.status });
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const shape = bodyShape(owner.spec.document, responseSchema(owner.spec.document, owner.op, res.status, contentType), res.body);
  return { violations, declaredBy, shape };
}

/** The rules every answer to a request meant to succeed must also follow. */
export function serverErrorViolation(target: SpecOperation, status: number): Violation | undefined {
  if (status < 500 || status === 501) return undefined;
  return {
    interface: target.spec.name,
    operationId: target.op.operationId,
    check: 'server-error',
    pointer: '',
    message: `answered ${status}: a server error is never a conforming answer to this request`,
  };
}
