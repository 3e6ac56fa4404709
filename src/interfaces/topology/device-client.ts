import { createClient } from '../../../generated/device-config/client/index.ts';
import * as device from '../../../generated/device-config/sdk.gen.ts';
import type { DeployResponse } from '../../../generated/device-config/types.gen.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Timers } from '../../lib/timers.ts';
import type { ManagedDevice } from './device-inventory.ts';

/**
 * A device call's outcome: done, or the device's own message (or why it could not be reached), with
 * what is known of its effect: the tenants the device answered it did deploy (or remove) although
 * others failed, and whether the rest may have taken effect. `unchanged`: the request never reached
 * the device, or the device answered that it did not apply it. `unknown`: the answer was lost (a
 * time-out, a connection cut after sending), so the device may have applied any part of it.
 */
export type DeviceOutcome = { ok: true } | { ok: false; message: string; confirmed: readonly string[]; others: 'unchanged' | 'unknown' };

export interface DeviceClient {
  /** Deploys these tenants (selective update: the device's other tenants stay). */
  deployTenants(
    target: ManagedDevice,
    tenants: Readonly<Record<string, unknown>>,
    declarationId: string,
    signal?: AbortSignal,
  ): Promise<DeviceOutcome>;
  /** Removes these tenants; one the device does not have is `no change`, not a failure. */
  removeTenants(target: ManagedDevice, tenants: readonly string[], signal?: AbortSignal): Promise<DeviceOutcome>;
}

export type DeviceClientOptions = {
  clock: Clock;
  timers: Timers;
  /** Each call's time limit. */
  timeoutMs: number;
  /** How long to keep trying while the device answers 503 (another configuration operation runs). */
  busyRetryMs?: number;
  /** The declaration schema version sent. */
  schemaVersion?: string;
};

/** Tries while the device is busy, whatever the clock says. */
const MAX_BUSY_TRIES = 20;

type SdkResult = { data?: unknown; error?: unknown; response?: Response };
type Token = { value: string; expiresMs: number };

/**
 * The management system's calls to its devices, over real HTTP through the generated device-config
 * SDK: token login first (`POST /mgmt/shared/authn/login`, provider `tmos`), then the declarative
 * deployment with `X-Vendor-Auth-Token`. A token is kept per device and user until shortly before it
 * expires, and logged in again once when the device answers 401. A device busy with another
 * configuration operation (503) is asked again with growing pauses, up to `busyRetryMs`.
 */
export function createDeviceClient(options: DeviceClientOptions): DeviceClient {
  const { clock, timers, timeoutMs } = options;
  const busyRetryMs = options.busyRetryMs ?? 60_000;
  const tokens = new Map<string, Token>();
  const keyOf = (target: ManagedDevice) => `${target.url}\u0000${target.username}`;
  /** Each call ends at its time limit, or earlier when the caller's signal aborts (the process is stopping). */
  const limit = (signal: AbortSignal | undefined) =>
    signal ? AbortSignal.any([AbortSignal.timeout(timeoutMs), signal]) : AbortSignal.timeout(timeoutMs);
  const sleep = (ms: number) => new Promise<void>((resolve) => timers.after(ms, resolve, { background: true }));

  async function login(
    target: ManagedDevice,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; token: string } | { ok: false; message: string }> {
    const cached = tokens.get(keyOf(target));
    if (cached && cached.expiresMs - 60_000 > clock.nowMs()) return { ok: true, token: cached.value };
    if (target.password === undefined) {
      return {
        ok: false,
        message: 'no password is known for it: set PORTOLAN_ADMIN_PASSWORD or give credentials in PORTOLAN_CENTRAL_DEVICES',
      };
    }
    const client = createClient({ baseUrl: target.url });
    const result = await settle(() =>
      device.loginDeviceUser({
        client,
        body: { username: target.username, password: target.password!, loginProviderName: 'tmos' },
        signal: limit(signal),
      }),
    );
    if (!result.response?.ok) return { ok: false, message: `the login failed: ${failureMessage(result, timeoutMs)}` };
    const token = (result.data as { token?: { token?: unknown; timeout?: unknown } } | undefined)?.token;
    if (typeof token?.token !== 'string') return { ok: false, message: 'the login answered without a token' };
    const timeoutSeconds = typeof token.timeout === 'number' ? token.timeout : 1200;
    tokens.set(keyOf(target), { value: token.token, expiresMs: clock.nowMs() + timeoutSeconds * 1000 });
    return { ok: true, token: token.token };
  }

  /** One call with a token; again after a fresh login on 401; again after a pause while the device is busy. */
  async function call(
    target: ManagedDevice,
    signal: AbortSignal | undefined,
    send: (client: ReturnType<typeof createClient>, signal: AbortSignal) => Promise<SdkResult>,
  ): Promise<SdkResult | { failure: string }> {
    const deadline = clock.nowMs() + busyRetryMs;
    let pause = 250;
    let relogged = false;
    for (let tries = 1; ; tries++) {
      const token = await login(target, signal);
      if (!token.ok) return { failure: token.message };
      const client = createClient({ baseUrl: target.url, headers: { 'X-Vendor-Auth-Token': token.token } });
      const result = await settle(() => send(client, limit(signal)));
      const status = result.response?.status;
      if (status === 401 && !relogged) {
        tokens.delete(keyOf(target));
        relogged = true;
        continue;
      }
      if (status === 503 && tries < MAX_BUSY_TRIES && clock.nowMs() + pause <= deadline && !signal?.aborted) {
        await sleep(pause);
        pause = Math.min(pause * 2, 5_000);
        continue;
      }
      return result;
    }
  }

  return {
    async deployTenants(target, tenants, declarationId, signal) {
      const body = {
        class: 'ADC',
        schemaVersion: options.schemaVersion ?? '3.50.0',
        id: declarationId,
        updateMode: 'selective',
        ...tenants,
      };
      const result = await call(target, signal, (client, limited) =>
        device.deployDeclaration({ client, body: body as never, signal: limited }),
      );
      return outcomeOf(result, timeoutMs);
    },
    async removeTenants(target, names, signal) {
      if (names.length === 0) return { ok: true };
      const result = await call(target, signal, (client, limited) =>
        device.deleteTenantDeclaration({ client, path: { tenants: names.join(',') }, signal: limited }),
      );
      return outcomeOf(result, timeoutMs);
    },
  };
}

/** The SDK throws for a refused connection or a timeout; both become a result without a response. */
async function settle(send: () => Promise<SdkResult>): Promise<SdkResult> {
  try {
    return await send();
  } catch (error) {
    return { error };
  }
}

/** Connection failures that happen before a byte of the request is sent: the device cannot have acted on it. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
]);

/**
 * Done only when the device answered 200 and every tenant's result is 200 (`success` or `no change`);
 * otherwise why not, and what of it is known to have happened (see DeviceOutcome).
 */
function outcomeOf(result: SdkResult | { failure: string }, timeoutMs: number): DeviceOutcome {
  // No token: the call itself was never sent.
  if ('failure' in result) return { ok: false, message: result.failure, confirmed: [], others: 'unchanged' };
  const answer = (result.data ?? result.error) as Partial<DeployResponse> | undefined;
  const results = Array.isArray(answer?.results) ? answer.results : undefined;
  const failed = results?.filter((r) => r.code !== 200) ?? [];
  const status = result.response?.status;
  if (status === 200 && failed.length === 0) return { ok: true };
  if (results && failed.length > 0) {
    // Per tenant: the device applied the ones it answered 200 for and none of the others.
    const confirmed = results.filter((r) => r.code === 200 && typeof r.tenant === 'string').map((r) => r.tenant!);
    return {
      ok: false,
      message: `the device refused ${failed
        .map((r) => `${r.tenant ?? '?'} (${r.response ?? r.message})`)
        .slice(0, 5)
        .join('; ')}`,
      confirmed,
      others: 'unchanged',
    };
  }
  return {
    ok: false,
    message: failureMessage(result, timeoutMs),
    confirmed: [],
    others: status !== undefined ? answeredOthers(status) : lostOthers(result.error),
  };
}

/** An answer without per-tenant results: a refusal (4xx, 503 busy) applied nothing; another 5xx may have come mid-way. */
const answeredOthers = (status: number): 'unchanged' | 'unknown' => (status < 500 || status === 503 ? 'unchanged' : 'unknown');

/** No answer: unchanged only when the connection failed before sending (a time-out or a cut may come after the device acted). */
function lostOthers(error: unknown): 'unchanged' | 'unknown' {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' && NOT_SENT.has(cause.code) ? 'unchanged' : 'unknown';
}

/** The device's own `message`, or a plain sentence when it could not be reached (never a header or credential). */
function failureMessage({ error, response }: SdkResult, timeoutMs: number): string {
  if (response) {
    const body = error as { message?: unknown; errors?: unknown } | undefined;
    const errors = Array.isArray(body?.errors) ? ` (${body.errors.slice(0, 3).join('; ')})` : '';
    return typeof body?.message === 'string' && body.message !== '' ? `${body.message}${errors}` : `it answered HTTP ${response.status}`;
  }
  const failure = error as { name?: string; cause?: { code?: unknown; name?: string } } | undefined;
  if (failure?.name === 'TimeoutError' || failure?.cause?.name === 'TimeoutError')
    return `the device did not answer within ${timeoutMs / 1000} seconds`;
  const code = typeof failure?.cause?.code === 'string' ? ` (${failure.cause.code})` : '';
  return `the device could not be reached${code}`;
}
