import { randomBytes } from 'node:crypto';
import type { Logger } from '../lib/logger.ts';
import type { AccountStore } from './account-store.ts';

/** The access profile of the administrative account (device, central and diagnostics roles). */
export const ADMIN_PROFILE = 'admin';

/** The administrative credentials this process knows: the password only when it was given or generated. */
export type AdminCredentials = { username: string; password: string | undefined };

export type AdminBootstrapOptions = {
  /** `PORTOLAN_ADMIN_USER` (default `admin`). */
  adminUser: string;
  /** `PORTOLAN_ADMIN_PASSWORD`; empty when unset. */
  adminPassword: string;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Shows a generated password once (stdout in the CLI); never the logger, whose lines are kept. */
  announce: (message: string) => void;
};

/**
 * Makes sure the administrative account exists at start (DESIGN.md "Accounts"):
 * - a configured password is stored (hashed) for the admin user, replacing the stored one;
 * - with no password configured and no such user yet, one is generated, stored hashed and announced
 *   once; this process keeps it in memory for the registration flow's management calls;
 * - with no password configured and the user already there, the stored one is kept, but this process
 *   cannot make the management calls of client registration (they need the plaintext): a warning.
 */
export async function bootstrapAdmin(accounts: AccountStore, options: AdminBootstrapOptions): Promise<AdminCredentials> {
  const username = options.adminUser;
  if (options.adminPassword !== '') {
    const outcome = await accounts.setPassword(ADMIN_PROFILE, username, options.adminPassword);
    options.logger.info({ adminUser: username, outcome }, 'administrative account set from PORTOLAN_ADMIN_PASSWORD');
    return { username, password: options.adminPassword };
  }
  if (await accounts.has(ADMIN_PROFILE, username)) {
    options.logger.warn(
      { adminUser: username },
      'PORTOLAN_ADMIN_PASSWORD is not set: the stored administrative password is kept, but client registration (D) cannot call the management interface until PORTOLAN_ADMIN_PASSWORD is set',
    );
    return { username, password: undefined };
  }
  const password = randomBytes(18).toString('base64url');
  if ((await accounts.add(ADMIN_PROFILE, username, password)) === 'exists') {
    // Another process sharing the store made the account meanwhile: keep its password.
    options.logger.warn(
      { adminUser: username },
      'another process created the administrative account first; set PORTOLAN_ADMIN_PASSWORD for client registration (D)',
    );
    return { username, password: undefined };
  }
  options.announce(
    `Generated the administrative password for user '${username}': ${password}\n` +
      'It is stored hashed and shown only this once; set PORTOLAN_ADMIN_PASSWORD to choose it (client registration needs it after a restart).',
  );
  options.logger.info({ adminUser: username }, 'administrative account created with a generated password (printed once on stdout)');
  return { username, password };
}
