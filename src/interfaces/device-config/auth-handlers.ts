import type * as F from '../../../generated/device-config/types.gen.ts';
import type { TokenGrant, TokenService, IssuedToken } from '../../accounts/auth-tokens.ts';
import { basicAuthorization, type BasicAuthenticator } from '../../accounts/basic-auth.ts';
import type { TypedHandler } from '../../server/handler-types.ts';
import { deviceFailure } from './device-errors.ts';

/** The login providers of the device's local accounts (the real device's `tmos`; `local` is the management system's name for it). */
const PROVIDERS = new Set(['tmos', 'local']);

const AUTHENTICATION_FAILED = 'Authentication failed.';

const micros = (ms: number) => ms * 1000;

function tokenState(issued: IssuedToken, username: string, provider: string, address: string): F.AuthToken {
  return {
    token: issued.token,
    name: issued.token,
    userName: username,
    authProviderName: provider,
    user: { link: `https://localhost/mgmt/shared/authz/users/${encodeURIComponent(username)}` },
    groupReferences: [],
    timeout: issued.timeoutSeconds,
    startTime: new Date(issued.startMs).toISOString(),
    address,
    partition: '[All]',
    generation: 1,
    lastUpdateMicros: micros(issued.startMs),
    expirationMicros: micros(issued.expiresMs),
    kind: 'shared:authz:tokens:authtokenitemstate',
    selfLink: `https://localhost/mgmt/shared/authz/tokens/${issued.token}`,
  };
}

function loginResponse(grant: TokenGrant, provider: string): F.LoginResponse {
  return {
    username: grant.username,
    loginReference: { link: `https://localhost/mgmt/cm/system/authn/providers/${provider}/login` },
    loginProviderName: provider,
    token: tokenState(grant.access, grant.username, provider, grant.address),
    refreshToken: { token: grant.refresh.token, timeout: grant.refresh.timeoutSeconds, expirationMicros: micros(grant.refresh.expiresMs) },
    generation: 0,
    lastUpdateMicros: 0,
  };
}

/**
 * The device's token login (designed after the real device): the password is checked like basic
 * authentication (the same accounts and the same backoff per user name and client address), and
 * one answer serves every failure.
 */
export function createAuthHandlers(deps: { tokens: TokenService; checkPassword: BasicAuthenticator }) {
  const refused = () => deviceFailure('unauthorized', AUTHENTICATION_FAILED);

  const loginDeviceUser: TypedHandler<F.LoginDeviceUserData, F.LoginDeviceUserResponses & F.LoginDeviceUserErrors> = async ({ body, remoteAddress }) => {
    const provider = body.loginProviderName ?? 'tmos';
    const address = remoteAddress ?? '';
    if (!PROVIDERS.has(provider)) return refused();
    if (!(await deps.checkPassword(basicAuthorization(body.username, body.password), address))) return refused();
    return { status: 200, body: loginResponse(await deps.tokens.issue(body.username, address), provider) };
  };

  const exchangeDeviceRefreshToken: TypedHandler<F.ExchangeDeviceRefreshTokenData, F.ExchangeDeviceRefreshTokenResponses & F.ExchangeDeviceRefreshTokenErrors> = async ({
    body,
    remoteAddress,
  }) => {
    const exchanged = await deps.tokens.exchange(body.refreshToken.token, remoteAddress ?? '');
    if (!exchanged) return refused();
    return { status: 200, body: { token: tokenState(exchanged.access, exchanged.username, 'tmos', exchanged.address) } };
  };

  return { loginDeviceUser, exchangeDeviceRefreshToken };
}
