import type { Migration } from '../../stores/database.ts';

/**
 * Version 311: whether a deployment task was queued (`?async=true`): the records of queued tasks are kept
 * apart from the others (declaration-store.ts pruneTasks). Tasks in progress are queued ones.
 *
 * Version 302: the active lease of a device pair (device-lease.ts): one row, nobody holding it.
 *
 * Version 301: the configuration REST's script objects, the system database variables (only the
 * values set; unset ones are at their default), the deployed tenants as saved (`persist: true`), the
 * declaration's header and history, and the deployment task records.
 *
 * The device's OAuth objects that client registration (D) calls (versions 300-399): client
 * applications (the client secret only as a hash), their bindings to OAuth profiles, and access
 * profiles with the generation that goes up each time a policy is applied. Seeded with the OAuth
 * profile and access policy the registration settings name by default.
 */
export const DEVICE_CONFIG_MIGRATIONS: readonly Migration[] = [
  {
    version: 300,
    name: 'device OAuth client applications, OAuth profiles, bindings and access profiles',
    up: `CREATE TABLE device_oauth_client_apps (
  partition TEXT NOT NULL,
  name TEXT NOT NULL,
  app_name TEXT NOT NULL,
  auth_type TEXT NOT NULL,
  client_id TEXT NOT NULL UNIQUE,
  client_secret_hash TEXT NOT NULL,
  scopes TEXT,
  grant_password TEXT NOT NULL,
  grant_code TEXT NOT NULL,
  grant_token TEXT NOT NULL,
  generate_refresh_token TEXT NOT NULL,
  access_token_lifetime INTEGER NOT NULL,
  auth_code_lifetime INTEGER NOT NULL,
  refresh_token_lifetime INTEGER NOT NULL,
  refresh_token_usage_limit INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (partition, name)
);
CREATE TABLE device_oauth_profiles (
  partition TEXT NOT NULL,
  name TEXT NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (partition, name)
);
CREATE TABLE device_oauth_profile_client_apps (
  profile_partition TEXT NOT NULL,
  profile_name TEXT NOT NULL,
  app_name TEXT NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (profile_partition, profile_name, app_name)
);
CREATE TABLE device_access_profiles (
  partition TEXT NOT NULL,
  name TEXT NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (partition, name)
);
INSERT INTO device_oauth_profiles (partition, name, generation) VALUES ('Common', 'oauth_server', 1);
INSERT INTO device_access_profiles (partition, name, generation) VALUES ('Common', 'oauth_access_policy', 1);`,
  },
  {
    version: 301,
    name: 'device script objects, system database variables, deployed tenants and deployment tasks',
    up: `CREATE TABLE device_rules (
  partition TEXT NOT NULL,
  name TEXT NOT NULL,
  api_anonymous TEXT NOT NULL,
  generation INTEGER NOT NULL,
  PRIMARY KEY (partition, name)
);
CREATE TABLE device_db_variables (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  generation INTEGER NOT NULL
);
CREATE TABLE device_tenants (
  name TEXT PRIMARY KEY,
  declaration TEXT NOT NULL,
  saved_at_ms BIGINT NOT NULL
);
CREATE TABLE device_declaration_header (
  id TEXT PRIMARY KEY,
  header TEXT NOT NULL
);
CREATE TABLE device_declaration_history (
  id TEXT PRIMARY KEY,
  saved_at_ms BIGINT NOT NULL,
  declaration TEXT NOT NULL
);
CREATE TABLE device_deploy_tasks (
  id TEXT PRIMARY KEY,
  created_order BIGINT NOT NULL,
  state TEXT NOT NULL,
  request TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX device_deploy_tasks_order ON device_deploy_tasks (created_order);`,
  },
  {
    version: 310,
    name: 'declarative deployment settings',
    up: `CREATE TABLE device_appsvcs_settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);`,
  },
  {
    version: 311,
    name: 'queued deployment task records kept apart',
    up: `ALTER TABLE device_deploy_tasks ADD COLUMN queued INTEGER NOT NULL DEFAULT 0;
UPDATE device_deploy_tasks SET queued = 1 WHERE state = 'in progress';`,
  },
  {
    version: 302,
    name: 'device active lease',
    up: `CREATE TABLE device_active_lease (
  id TEXT PRIMARY KEY,
  holder TEXT,
  url TEXT,
  generation BIGINT NOT NULL,
  expires_ms BIGINT NOT NULL
);
INSERT INTO device_active_lease (id, holder, url, generation, expires_ms) VALUES ('device', NULL, NULL, 0, 0);`,
  },
];
