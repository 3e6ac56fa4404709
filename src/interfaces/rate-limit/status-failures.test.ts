import t from 'tap';
import { startTestSystem } from '../../app/test-system.ts';
import { createLogger } from '../../lib/logger.ts';
import { renderGatewayError } from './error-shape.ts';
import { createRateLimitHandlers } from './handlers.ts';

// The status call's failures, end to end on the gateway role (response checking on: each answer is
// also checked against specs/rate-limit.yaml), with a limiter whose counter store cannot be read.

t.test('GET /rate_limit_status with the counter store unavailable: the spec 500 in the gateway shape', async (t) => {
  const handlers = createRateLimitHandlers({
    status: async () => ({ kind: 'unavailable', reason: 'the redis counter store is unavailable' }),
    logger: createLogger({ level: 'silent' }),
  });
  const { system } = await startTestSystem(t, { handlers: { 'rate-limit': handlers } });
  const unavailable = await fetch(`${system.url('gateway')}/rate_limit_status`, { headers: { authorization: 'Bearer some-token' } });
  t.equal(unavailable.status, 500);
  t.same(
    await unavailable.json(),
    { error: 'Internal Server Error', 'error-message': 'rate-limit counter store unavailable' },
    "the spec's storeUnavailable example, the store's name left to the log",
  );
});

t.test('a malformed Bearer header: the handler refuses invalidRequest with the RFC 6750 challenge', async (t) => {
  // On the gateway role the counting stage answers this before routing (it reads every Authorization
  // field); the handler refuses the same way wherever the role app is used without that stage.
  const { getRateLimitStatus } = createRateLimitHandlers({
    status: async () => t.fail('a malformed header is never looked up') as never,
    logger: createLogger({ level: 'silent' }),
  });
  const request = { headers: { authorization: 'Bearer some-token extra' }, requestId: 'r1' };
  const outcome = await getRateLimitStatus(request as Parameters<typeof getRateLimitStatus>[0]);
  const message =
    'The Authorization header names Bearer but is not "Bearer <token>" (RFC 6750: one token of letters, digits and -._~+/, optionally ending in =).';
  t.same(outcome, { error: { code: 'invalidRequest', message }, headers: { 'www-authenticate': 'Bearer error="invalid_request"' } });
  if (!('error' in outcome)) return;
  t.same(renderGatewayError(outcome.error, { headers: {} }), { status: 400, body: { error: 'invalid request', 'error-message': message } });
});
