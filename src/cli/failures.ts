// The failures of `portolan start` a person can cause or fix, each turned into one line naming the setting,
// file or port and what to do; anything else is a bug and keeps its stack trace.
import { ConfigError } from '../lib/config.ts';
import { StaleContractError } from '../server/compiled-contract.ts';
import { StartError } from '../app/port-check.ts';
import { DatabaseError } from '../stores/database-error.ts';
import { DatabaseUrlError, describeDatabaseUrl } from '../stores/database-url.ts';

/** What the PostgreSQL server's SQLSTATE (or the socket's code) means for the person starting Portolan. */
const POSTGRES_HINTS: Record<string, string> = {
  ECONNREFUSED: 'nothing answers at that address: is PostgreSQL running, and on that host and port?',
  ENOTFOUND: 'the host name does not resolve: check the host in PORTOLAN_DATABASE.',
  ETIMEDOUT: 'the server did not answer in time: check the host and port, and any firewall between.',
  '28000': 'the server refuses this user: check the user in PORTOLAN_DATABASE (and pg_hba.conf).',
  '28P01': 'the password is wrong: check the password in PORTOLAN_DATABASE.',
  '3D000': 'that database does not exist: create it (createdb <name>) or name another one in PORTOLAN_DATABASE.',
  '42501': 'the user may not create the schema: grant it the rights, or use an owner of the database.',
};

/**
 * One line for a failure a person can fix, or undefined for anything else.
 *
 * @example
 * explainStartFailure(new StartError('The gateway role cannot listen ...')) // 'The gateway role cannot listen ...'
 */
export function explainStartFailure(error: unknown, databaseUrl: string): string | undefined {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof StaleContractError || error instanceof StartError) return error.message;
  if (error instanceof DatabaseUrlError) return `PORTOLAN_DATABASE: ${error.message}`;
  if (error instanceof DatabaseError) {
    const where = `PORTOLAN_DATABASE=${describeDatabaseUrl(databaseUrl)}`;
    const hint =
      (error.engineCode && POSTGRES_HINTS[error.engineCode]) ??
      (error.engine === 'sqlite' ? 'check that the folder of the file exists and is writable.' : 'check the connection string.');
    return `Cannot open the database (${where}): ${firstLine(error.message)}; ${hint}`;
  }
  return undefined;
}

const firstLine = (text: string) => text.split('\n')[0]!.replace(/\.$/, '');
