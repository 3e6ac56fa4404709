import { createClient } from '../../generated/device-config/client/index.ts';
import * as device from '../../generated/device-config/sdk.gen.ts';
import type { Clock } from '../lib/clock.ts';
import type { Cancel, Timers } from '../lib/timers.ts';

/** A generated-SDK call's result: the parsed answer, the error body, the response (absent when nothing answered). */
export type SdkResult = { data?: unknown; error?: unknown; response?: Response };
export type SdkClient = ReturnType<typeof createClient>;

/**
 * Why the session could not get a token: `cause`, the login's (or exchange's) own result when one was sent
 * (the device's answer, or why nothing answered), else `failure` in words. Never a credential.
 */
export type SessionFailure = { failure: string; cause?: SdkResult };

export type ManagementSessionOptions = {
  /** The management interface (a function: a role of this process is known only once it listens). */
  baseUrl: () => string;
  username: string;
  /** Undefined: no call can be made (`passwordMissing` says why). */
  password: string | undefined;
  /** The failure reported while no password is known. */
  passwordMissing: string;
  clock: Clock;
  /** Each login or exchange's time limit. */
  timeoutMs: number;
  /** The login provider (the device's `tmos`). */
  provider?: string;
  /**
   * Keeps the session alive while nothing calls: a refresh token the device rotates is renewed when half its
   * life has passed, so an idle session never falls back to the password. Absent: renewed only by calls.
   */
  keepAlive?: { timers: Timers; stop: AbortSignal };
};

export type ManagementSession = {
  /**
   * One call with the session's token in `X-Vendor-Auth-Token`: logs in or renews first when needed, and
   * once more after a 401 (the token was revoked or the device restarted). `signal` limits each attempt.
   */
  call(
    send: (client: SdkClient, signal: AbortSignal) => Promise<SdkResult>,
    signal: () => AbortSignal,
  ): Promise<SdkResult | SessionFailure>;
  /**
   * Gets a token now unless one is held (or waits for the renewal under way): a start logs in before anyone
   * else's failed logins can block it. `cancel` ends the login early (the process is stopping).
   */
  warm(cancel?: AbortSignal): Promise<SessionFailure | undefined>;
};

type Held = { value: string; expiresMs: number };

/** An access token is renewed this long before it expires, so no call goes out with one about to lapse. */
const ACCESS_MARGIN_MS = 60_000;
/**
 * A device that does not rotate refresh tokens (the real one answers an exchange with `token` alone): while its
 * refresh token has less than this left, the password login is tried again (the old refresh token still serves).
 */
const REFRESH_RENEW_MS = 3_600_000;
/** The shortest wait between two keep-alive exchanges (one that got no answer is tried again after it). */
const KEEP_ALIVE_MIN_MS = 60_000;

/**
 * A client's session with a device's management REST (designed, after the real device): it logs in once with
 * the password (`POST /mgmt/shared/authn/login`), sends the token with every call, and renews it with the
 * refresh token (`POST /mgmt/shared/authn/exchange`), which checks no password. The device rotates refresh
 * tokens (each exchange answers the next one with a full lifetime), so after the first login the password is
 * sent again only when the device refuses the refresh token (it forgot it, or saw it used twice) or an exchange
 * got no answer: failed logins of someone else from the same address (the device's backoff is per user name
 * and address) cannot stop the calls, and the backoff keeps all its protection against that someone. With
 * `keepAlive`, an idle session exchanges before its refresh token runs out. Concurrent calls share one login
 * or exchange. (A device that does not rotate: the password once per refresh-token lifetime, 10 h.)
 *
 * @example
 * const session = createManagementSession({ baseUrl: () => 'http://127.0.0.1:8100', username: 'admin', password, passwordMissing: 'no password', clock, timeoutMs: 10_000 });
 * const result = await session.call((client, signal) => device.createOauthClientApp({ client, body, signal }), () => AbortSignal.timeout(10_000));
 */
export function createManagementSession(options: ManagementSessionOptions): ManagementSession {
  const { clock, timeoutMs, keepAlive } = options;
  const provider = options.provider ?? 'tmos';
  let access: Held | undefined;
  let refresh: Held | undefined;
  let pending: Promise<string | SessionFailure> | undefined;
  let cancelKeepAlive: Cancel | undefined;
  // Whether the device rotates refresh tokens, as its last exchange showed (assumed until one answers without).
  let rotates = true;

  const live = (held: Held | undefined, marginMs: number): held is Held => held !== undefined && held.expiresMs - marginMs > clock.nowMs();
  const heldFor = (token: { token?: unknown; timeout?: unknown } | undefined, fallbackSeconds: number): Held | undefined =>
    typeof token?.token === 'string' && token.token !== ''
      ? { value: token.token, expiresMs: clock.nowMs() + (typeof token.timeout === 'number' ? token.timeout : fallbackSeconds) * 1000 }
      : undefined;

  /** Each login or exchange ends at the time limit, or when `cancel` aborts. */
  const limit = (cancel: AbortSignal | undefined) =>
    cancel ? AbortSignal.any([AbortSignal.timeout(timeoutMs), cancel]) : AbortSignal.timeout(timeoutMs);

  /** Shared by concurrent callers: one login or exchange at a time. */
  const shared = (work: () => Promise<string | SessionFailure>) => (pending ??= work().finally(() => (pending = undefined)));

  /** The next keep-alive exchange, when half of what is left of the refresh token has passed (at least a minute). */
  function scheduleKeepAlive() {
    cancelKeepAlive?.();
    cancelKeepAlive = undefined;
    const held = refresh;
    if (!keepAlive || keepAlive.stop.aborted || !rotates || !live(held, 0)) return;
    const delayMs = Math.max(KEEP_ALIVE_MIN_MS, (held.expiresMs - clock.nowMs()) / 2);
    cancelKeepAlive = keepAlive.timers.after(
      delayMs,
      () => void (refresh === held && !pending ? shared(() => exchange(held, keepAlive.stop)) : undefined),
      { background: true },
    );
  }
  keepAlive?.stop.addEventListener('abort', () => cancelKeepAlive?.(), { once: true });

  async function login(cancel: AbortSignal | undefined): Promise<string | SessionFailure> {
    if (options.password === undefined) return { failure: options.passwordMissing };
    const client = createClient({ baseUrl: options.baseUrl() });
    const result = await settle(() =>
      device.loginDeviceUser({
        client,
        body: { username: options.username, password: options.password!, loginProviderName: provider },
        signal: limit(cancel),
      }),
    );
    const answer = result.data as
      | { token?: { token?: unknown; timeout?: unknown }; refreshToken?: { token?: unknown; timeout?: unknown } }
      | undefined;
    const token = result.response?.ok ? heldFor(answer?.token, 1200) : undefined;
    if (!token)
      return {
        failure: result.response?.ok ? 'the management login answered without a token' : 'the management login failed',
        cause: result,
      };
    access = token;
    refresh = heldFor(answer?.refreshToken, 36_000);
    scheduleKeepAlive();
    return token.value;
  }

  /** Renews the access token; takes the refresh token's successor when the device rotates it. */
  async function exchange(held: Held, cancel: AbortSignal | undefined): Promise<string | SessionFailure> {
    const client = createClient({ baseUrl: options.baseUrl() });
    const result = await settle(() =>
      device.exchangeDeviceRefreshToken({ client, body: { refreshToken: { token: held.value } }, signal: limit(cancel) }),
    );
    const answer = result.data as
      | { token?: { token?: unknown; timeout?: unknown }; refreshToken?: { token?: unknown; timeout?: unknown } }
      | undefined;
    const token = result.response?.ok ? heldFor(answer?.token, 1200) : undefined;
    if (token) {
      access = token;
      const next = heldFor(answer?.refreshToken, 36_000);
      rotates = next !== undefined;
      if (refresh === held && next) refresh = next;
      scheduleKeepAlive();
      return token.value;
    }
    // Refused (unknown, expired, used twice, or no exchange on this device): log in instead. No answer: the
    // device is away (or rotated the token and the answer was lost: then its next use is refused).
    if (result.response && refresh === held) refresh = undefined;
    else scheduleKeepAlive();
    return { failure: 'the management token could not be renewed', cause: result };
  }

  /** A token good for the next call: the one held, a renewed one, or a fresh login's; shared by concurrent callers. */
  function token(cancel?: AbortSignal): Promise<string | SessionFailure> {
    if (live(access, ACCESS_MARGIN_MS)) return Promise.resolve(access.value);
    return shared(async () => {
      const held = refresh;
      if (!live(held, 0)) return login(cancel);
      const renewed = await exchange(held, cancel);
      // Refused (the device forgot it, or saw it used twice): log in. Not answered: report that.
      if (typeof renewed !== 'string') return refresh === held ? renewed : login(cancel);
      // Not rotated (a device that keeps its refresh tokens) and running out: the password again while it still serves.
      if (refresh !== held || live(held, REFRESH_RENEW_MS)) return renewed;
      const fresh = await login(cancel);
      return typeof fresh === 'string' ? fresh : renewed;
    });
  }

  return {
    async call(send, signal) {
      for (let attempt = 1; ; attempt++) {
        const value = await token();
        if (typeof value !== 'string') return value;
        const client = createClient({ baseUrl: options.baseUrl(), headers: { 'X-Vendor-Auth-Token': value } });
        const result = await settle(() => send(client, signal()));
        if (result.response?.status !== 401 || attempt === 2) return result;
        if (access?.value === value) access = undefined; // revoked or expired early: renew once
      }
    },
    async warm(cancel) {
      // A renewal under way (the keep-alive's) is waited for: its outcome is the session's.
      const value = await (pending ?? token(cancel));
      return typeof value === 'string' ? undefined : value;
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
