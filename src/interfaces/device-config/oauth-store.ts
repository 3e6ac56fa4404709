import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { isDatabaseError } from '../../stores/database-error.ts';
import type { Database, Row } from '../../stores/database.ts';

/** A client application as stored: the secret only as a hash. */
export type ClientAppRecord = {
  partition: string;
  name: string;
  appName: string;
  authType: 'secret';
  clientId: string;
  scopes?: string;
  grantPassword: 'enabled' | 'disabled';
  grantCode: 'enabled' | 'disabled';
  grantToken: 'enabled' | 'disabled';
  generateRefreshToken: 'true' | 'false';
  accessTokenLifetime: number;
  authCodeLifetime: number;
  refreshTokenLifetime: number;
  refreshTokenUsageLimit: number;
  generation: number;
};

export type NewClientApp = Omit<ClientAppRecord, 'generation'> & { clientSecret: string };

export type ObjectRef = { partition: string; name: string; generation: number };

export type BindOutcome = { ok: true; binding: ObjectRef } | { ok: false; error: 'profile-not-found' | 'app-not-found' | 'already-bound' };

/** The device's OAuth objects (the part of interface F that client registration calls). */
export interface DeviceOauthStore {
  /** `exists` when the partition already has an application of that name. */
  createClientApp(app: NewClientApp): Promise<{ ok: true; app: ClientAppRecord } | { ok: false; error: 'exists' }>;
  /** Also removes the application from every OAuth profile; false when there was none. */
  deleteClientApp(partition: string, name: string): Promise<boolean>;
  getClientApp(partition: string, name: string): Promise<ClientAppRecord | undefined>;
  listClientApps(): Promise<ClientAppRecord[]>;
  /** Whether `secret` is the application's client secret. */
  checkClientSecret(partition: string, name: string, secret: string): Promise<boolean>;
  /** Binds the application `appName` of the profile's partition to the OAuth profile. */
  bindClientApp(partition: string, oauthProfile: string, appName: string): Promise<BindOutcome>;
  /** Names of the applications bound to an OAuth profile. */
  listBoundClientApps(partition: string, oauthProfile: string): Promise<string[]>;
  /** Re-applies an access policy: its generation goes up by one; undefined when there is no such profile. */
  applyAccessPolicy(partition: string, name: string): Promise<ObjectRef | undefined>;
  getAccessProfile(partition: string, name: string): Promise<ObjectRef | undefined>;
}

/**
 * Client secrets are 256 random bits made by the device, so a plain SHA-256 keeps them as safe as
 * scrypt would (nothing to guess) without its ~55 ms per registration.
 */
export const hashClientSecret = (secret: string) => `sha256:${createHash('sha256').update(secret, 'utf8').digest('hex')}`;

const APP_COLUMNS =
  'partition, name, app_name, auth_type, client_id, scopes, grant_password, grant_code, grant_token, generate_refresh_token, access_token_lifetime, auth_code_lifetime, refresh_token_lifetime, refresh_token_usage_limit, generation';

function toClientApp(row: Row): ClientAppRecord {
  return {
    partition: String(row.partition),
    name: String(row.name),
    appName: String(row.app_name),
    authType: 'secret',
    clientId: String(row.client_id),
    ...(row.scopes === null ? {} : { scopes: String(row.scopes) }),
    grantPassword: row.grant_password as ClientAppRecord['grantPassword'],
    grantCode: row.grant_code as ClientAppRecord['grantCode'],
    grantToken: row.grant_token as ClientAppRecord['grantToken'],
    generateRefreshToken: row.generate_refresh_token as ClientAppRecord['generateRefreshToken'],
    accessTokenLifetime: Number(row.access_token_lifetime),
    authCodeLifetime: Number(row.auth_code_lifetime),
    refreshTokenLifetime: Number(row.refresh_token_lifetime),
    refreshTokenUsageLimit: Number(row.refresh_token_usage_limit),
    generation: Number(row.generation),
  };
}

const toRef = (row: Row): ObjectRef => ({ partition: String(row.partition), name: String(row.name), generation: Number(row.generation) });

/** The DeviceOauthStore on the SQL port (the same statements on SQLite and PostgreSQL). */
export function createSqlDeviceOauthStore(db: Database, options: { clock: Clock }): DeviceOauthStore {
  const getClientApp = async (partition: string, name: string) => {
    const [row] = await db.query(`SELECT ${APP_COLUMNS} FROM device_oauth_client_apps WHERE partition = $1 AND name = $2`, [
      partition,
      name,
    ]);
    return row ? toClientApp(row) : undefined;
  };
  const getAccessProfile = async (partition: string, name: string) => {
    const [row] = await db.query('SELECT partition, name, generation FROM device_access_profiles WHERE partition = $1 AND name = $2', [
      partition,
      name,
    ]);
    return row ? toRef(row) : undefined;
  };

  return {
    async createClientApp(app) {
      const record: ClientAppRecord = { ...app, generation: 1 };
      try {
        await db.execute(
          `INSERT INTO device_oauth_client_apps (${APP_COLUMNS}, client_secret_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
          [
            record.partition,
            record.name,
            record.appName,
            record.authType,
            record.clientId,
            record.scopes ?? null,
            record.grantPassword,
            record.grantCode,
            record.grantToken,
            record.generateRefreshToken,
            record.accessTokenLifetime,
            record.authCodeLifetime,
            record.refreshTokenLifetime,
            record.refreshTokenUsageLimit,
            record.generation,
            hashClientSecret(app.clientSecret),
            options.clock.now().toISOString(),
          ],
        );
      } catch (error) {
        if (isDatabaseError(error, 'unique-violation')) return { ok: false, error: 'exists' };
        throw error;
      }
      return { ok: true, app: record };
    },
    async deleteClientApp(partition, name) {
      return db.transaction(async (tx) => {
        await tx.execute('DELETE FROM device_oauth_profile_client_apps WHERE profile_partition = $1 AND app_name = $2', [partition, name]);
        const { rowCount } = await tx.execute('DELETE FROM device_oauth_client_apps WHERE partition = $1 AND name = $2', [partition, name]);
        return rowCount > 0;
      });
    },
    getClientApp,
    async listClientApps() {
      return (await db.query(`SELECT ${APP_COLUMNS} FROM device_oauth_client_apps ORDER BY partition, name`)).map(toClientApp);
    },
    async checkClientSecret(partition, name, secret) {
      const [row] = await db.query<{ client_secret_hash: string }>(
        'SELECT client_secret_hash FROM device_oauth_client_apps WHERE partition = $1 AND name = $2',
        [partition, name],
      );
      return row !== undefined && row.client_secret_hash === hashClientSecret(secret);
    },
    async bindClientApp(partition, oauthProfile, appName) {
      return db.transaction(async (tx): Promise<BindOutcome> => {
        const [profile] = await tx.query('SELECT 1 AS found FROM device_oauth_profiles WHERE partition = $1 AND name = $2', [
          partition,
          oauthProfile,
        ]);
        if (!profile) return { ok: false, error: 'profile-not-found' };
        const [app] = await tx.query('SELECT 1 AS found FROM device_oauth_client_apps WHERE partition = $1 AND name = $2', [
          partition,
          appName,
        ]);
        if (!app) return { ok: false, error: 'app-not-found' };
        const [bound] = await tx.query(
          'SELECT 1 AS found FROM device_oauth_profile_client_apps WHERE profile_partition = $1 AND profile_name = $2 AND app_name = $3',
          [partition, oauthProfile, appName],
        );
        if (bound) return { ok: false, error: 'already-bound' };
        await tx.execute(
          'INSERT INTO device_oauth_profile_client_apps (profile_partition, profile_name, app_name, generation) VALUES ($1, $2, $3, 1)',
          [partition, oauthProfile, appName],
        );
        await tx.execute('UPDATE device_oauth_profiles SET generation = generation + 1 WHERE partition = $1 AND name = $2', [
          partition,
          oauthProfile,
        ]);
        return { ok: true, binding: { partition, name: appName, generation: 1 } };
      });
    },
    async listBoundClientApps(partition, oauthProfile) {
      const rows = await db.query(
        'SELECT app_name FROM device_oauth_profile_client_apps WHERE profile_partition = $1 AND profile_name = $2 ORDER BY app_name',
        [partition, oauthProfile],
      );
      return rows.map((r) => String(r.app_name));
    },
    async applyAccessPolicy(partition, name) {
      return db.transaction(async (tx) => {
        const { rowCount } = await tx.execute(
          'UPDATE device_access_profiles SET generation = generation + 1 WHERE partition = $1 AND name = $2',
          [partition, name],
        );
        if (rowCount === 0) return undefined;
        const [row] = await tx.query('SELECT partition, name, generation FROM device_access_profiles WHERE partition = $1 AND name = $2', [
          partition,
          name,
        ]);
        return toRef(row!);
      });
    },
    getAccessProfile,
  };
}
