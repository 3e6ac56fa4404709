import type * as F from '../../../generated/device-config/types.gen.ts';
import type { TokenService } from '../../accounts/auth-tokens.ts';
import type { BasicAuthenticator } from '../../accounts/basic-auth.ts';
import { createTokenLogin } from '../../accounts/token-login.ts';
import { refuse, type TypedHandler } from '../../server/handler-types.ts';

/** The device's token login (designed after the real device); one answer serves every failure. */
export function createAuthHandlers(deps: { tokens: TokenService; checkPassword: BasicAuthenticator }) {
  const tokenLogin = createTokenLogin(deps);
  const refused = () => refuse('unauthorized', 'Authentication failed.');

  const loginDeviceUser: TypedHandler<F.LoginDeviceUserData, F.LoginDeviceUserResponses, F.LoginDeviceUserErrors> = async ({
    body,
    remoteAddress,
  }) => {
    const answer = await tokenLogin.login(body.username, body.password, body.loginProviderName ?? 'tmos', remoteAddress ?? '');
    return answer ? { status: 200, body: answer } : refused();
  };

  const exchangeDeviceRefreshToken: TypedHandler<
    F.ExchangeDeviceRefreshTokenData,
    F.ExchangeDeviceRefreshTokenResponses,
    F.ExchangeDeviceRefreshTokenErrors
  > = async ({ body, remoteAddress }) => {
    const answer = await tokenLogin.exchange(body.refreshToken.token, remoteAddress ?? '', 'tmos');
    return answer ? { status: 200, body: answer } : refused();
  };

  return { loginDeviceUser, exchangeDeviceRefreshToken };
}
