import type * as B from '../../../generated/topology/types.gen.ts';
import type { TokenService } from '../../accounts/auth-tokens.ts';
import type { BasicAuthenticator } from '../../accounts/basic-auth.ts';
import { createTokenLogin } from '../../accounts/token-login.ts';
import type { TypedHandler } from '../../server/handler-types.ts';

/**
 * The management system's token login (seed Authentication B; answers after the real product). A
 * failure is one answer for every cause and, unlike the real product, carries no `originalRequestBody`:
 * an answer never repeats the request.
 */
export function createTopologyAuthHandlers(deps: { tokens: TokenService; checkPassword: BasicAuthenticator }) {
  const tokenLogin = createTokenLogin(deps);
  const refused = (address: string | undefined) => ({
    status: 401 as const,
    body: { code: 401, message: 'Authentication failed.', ...(address ? { referer: address } : {}), kind: ':resterrorresponse' as const },
  });

  const loginManagementUser: TypedHandler<
    B.LoginManagementUserData,
    B.LoginManagementUserResponses & B.LoginManagementUserErrors
  > = async ({ body, remoteAddress }) => {
    const answer = await tokenLogin.login(body.username, body.password, body.loginProviderName, remoteAddress ?? '');
    return answer ? { status: 200, body: answer } : refused(remoteAddress);
  };

  const exchangeRefreshToken: TypedHandler<
    B.ExchangeRefreshTokenData,
    B.ExchangeRefreshTokenResponses & B.ExchangeRefreshTokenErrors
  > = async ({ body, remoteAddress }) => {
    const answer = await tokenLogin.exchange(body.refreshToken.token, remoteAddress ?? '', 'local');
    return answer ? { status: 200, body: answer } : refused(remoteAddress);
  };

  return { loginManagementUser, exchangeRefreshToken };
}
