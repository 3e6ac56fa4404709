import type * as B from '../../../generated/topology/types.gen.ts';
import type { TokenService } from '../../accounts/auth-tokens.ts';
import type { BasicAuthenticator } from '../../accounts/basic-auth.ts';
import { createTokenLogin } from '../../accounts/token-login.ts';
import { refuse, type TypedHandler } from '../../server/handler-types.ts';

/**
 * The management system's token login (seed Authentication B; answers after the real product). A
 * failure is one answer for every cause and, unlike the real product, carries no `originalRequestBody`:
 * an answer never repeats the request.
 */
export function createTopologyAuthHandlers(deps: { tokens: TokenService; checkPassword: BasicAuthenticator }) {
  const tokenLogin = createTokenLogin(deps);
  // One answer for every cause: the error shape adds the client's address (`referer`).
  const refused = () => refuse('unauthorized', 'Authentication failed.');

  const loginManagementUser: TypedHandler<B.LoginManagementUserData, B.LoginManagementUserResponses, B.LoginManagementUserErrors> = async ({
    body,
    remoteAddress,
  }) => {
    const answer = await tokenLogin.login(body.username, body.password, body.loginProviderName, remoteAddress ?? '');
    return answer ? { status: 200, body: answer } : refused();
  };

  const exchangeRefreshToken: TypedHandler<
    B.ExchangeRefreshTokenData,
    B.ExchangeRefreshTokenResponses,
    B.ExchangeRefreshTokenErrors
  > = async ({ body, remoteAddress }) => {
    const answer = await tokenLogin.exchange(body.refreshToken.token, remoteAddress ?? '', 'local');
    return answer ? { status: 200, body: answer } : refused();
  };

  return { loginManagementUser, exchangeRefreshToken };
}
