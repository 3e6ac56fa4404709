import type { Result } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Timers } from '../../lib/timers.ts';
import * as device from '../../../generated/device-config/sdk.gen.ts';
import type { OauthClientAppInput } from '../../../generated/device-config/types.gen.ts';
import type { AdminCredentials } from '../../accounts/admin-bootstrap.ts';
import { createManagementSession, type SdkClient, type SdkResult, type SessionFailure } from '../../accounts/management-session.ts';

/** A management call's outcome: its value, or the device's message (never request details). */
export type ManagementResult<T> = Result<T, string>;

export type CreatedClientApp = { partition: string; name: string; clientId: string; clientSecret: string };

/** The device's management calls of the registration flow (seed D steps 3 to 5, and the undo). */
export interface DeviceManagement {
  createClientApp(app: OauthClientAppInput): Promise<ManagementResult<CreatedClientApp>>;
  bindClientApp(partition: string, oauthProfile: string, name: string): Promise<ManagementResult<void>>;
  applyAccessPolicy(partition: string, policyName: string): Promise<ManagementResult<void>>;
  deleteClientApp(partition: string, name: string): Promise<ManagementResult<void>>;
}

export type DeviceManagementOptions = {
  /** The management interface; a function because the device role's address is known only once it listens. */
  baseUrl: () => string;
  /** The administrative account; without its password no call can be made. */
  credentials: AdminCredentials;
  /** Times the management token's lifetime (the device's tokens expire). */
  clock: Clock;
  /** Each call's time limit (default 10 s). */
  timeoutMs?: number;
  /** Renews the session while no registration comes (management-session.ts), until `stop`. */
  keepAlive?: { timers: Timers; stop: AbortSignal };
};

/** The registration flow's management calls, and a login ahead of the first one (at the gateway's start). */
export type DeviceManagementClient = DeviceManagement & {
  /** Logs in now unless a token is held (`cancel`: the process is stopping); the failure's message when it could not. */
  warm(cancel?: AbortSignal): Promise<ManagementResult<void>>;
};

/**
 * The management calls over real HTTP through the generated device-config SDK, on one management session
 * (src/accounts/management-session.ts): the administrative account logs in once, its token goes with every
 * call and is renewed with the refresh token (which the device rotates), so the password is sent once, not with each call. (Sent with each
 * call, basic authentication made registration hostage to the device's login backoff: five failed admin
 * logins by anyone from the gateway's address refused the gateway's own calls.) Failures are values whose
 * message is the device's own `message`, or a plain sentence when the device cannot be reached; never a
 * header or credential.
 */
export function createDeviceManagementClient(options: DeviceManagementOptions): DeviceManagementClient {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const session = createManagementSession({
    baseUrl: options.baseUrl,
    username: options.credentials.username,
    password: options.credentials.password,
    passwordMissing: 'the management credentials are not configured on the gateway',
    clock: options.clock,
    timeoutMs,
    ...(options.keepAlive ? { keepAlive: options.keepAlive } : {}),
  });
  const failed = (failure: SessionFailure): { ok: false; error: string } => ({
    ok: false,
    error: failure.cause ? failureMessage(failure.cause, timeoutMs) : failure.failure,
  });

  async function call(send: (client: SdkClient, signal: AbortSignal) => Promise<SdkResult>): Promise<ManagementResult<unknown>> {
    const result = await session.call(send, () => AbortSignal.timeout(timeoutMs));
    if ('failure' in result) return failed(result);
    if (result.response?.ok) return { ok: true, value: result.data };
    return { ok: false, error: failureMessage(result, timeoutMs) };
  }

  return {
    async warm(cancel) {
      const failure = await session.warm(cancel);
      return failure ? failed(failure) : { ok: true, value: undefined };
    },
    async createClientApp(body) {
      const result = await call((client, signal) => device.createOauthClientApp({ client, body, signal }));
      if (!result.ok) return result;
      const app = result.value as Partial<CreatedClientApp> | undefined;
      if (typeof app?.clientId !== 'string' || typeof app.clientSecret !== 'string') {
        return { ok: false, error: 'the management interface answered without clientId and clientSecret' };
      }
      return {
        ok: true,
        value: {
          partition: app.partition ?? 'Common',
          name: app.name ?? body.name,
          clientId: app.clientId,
          clientSecret: app.clientSecret,
        },
      };
    },
    async bindClientApp(partition, oauthProfile, name) {
      const result = await call((client, signal) =>
        device.bindOauthClientApp({ client, path: { partition, oauthProfile }, body: { name }, signal }),
      );
      return result.ok ? { ok: true, value: undefined } : result;
    },
    async applyAccessPolicy(partition, policyName) {
      const result = await call((client, signal) =>
        device.applyAccessPolicy({ client, path: { partition, policyName }, body: { generationAction: 'increment' }, signal }),
      );
      return result.ok ? { ok: true, value: undefined } : result;
    },
    async deleteClientApp(partition, appName) {
      const result = await call((client, signal) => device.deleteOauthClientApp({ client, path: { partition, appName }, signal }));
      return result.ok ? { ok: true, value: undefined } : result;
    },
  };
}

/** The device's `message` when it answered; otherwise why it could not (no address, no credential). */
function failureMessage({ error, response }: SdkResult, timeoutMs: number): string {
  if (response) {
    const message = (error as { message?: unknown } | undefined)?.message;
    return typeof message === 'string' && message !== '' ? message : `the management interface answered HTTP ${response.status}`;
  }
  const failure = error as { name?: string; cause?: { code?: unknown; name?: string } } | undefined;
  if (failure?.name === 'TimeoutError' || failure?.cause?.name === 'TimeoutError') {
    return `the management interface did not answer within ${timeoutMs / 1000} s`;
  }
  const code = typeof failure?.cause?.code === 'string' ? ` (${failure.cause.code})` : '';
  return `the management interface could not be reached${code}`;
}
